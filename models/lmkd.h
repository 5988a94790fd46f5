/* lmkd.h - Android's low-memory killer daemon as one wake-up of its PSI
 * handler decides (models/lmkd.c; docs/model.md "lmkd's decision").
 *
 * The model follows lmkd.cpp at AOSP commit 18578a5 (2023-11-27, "add
 * min score option to PRESSURE_AFTER_KILL"), function mp_event_psi: its
 * branch order, each branch's min_score_adj, its property defaults and its
 * integer arithmetic.  Every figure is in pages, lmkd's unit: meminfo's kB
 * divided by the page size in kB, as meminfo_parse does.  Included by
 * models.h; not a header of its own to include. */
#ifndef OOMSIM_MODELS_LMKD_H
#define OOMSIM_MODELS_LMKD_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The version modelled, as `oomsim lmkd --help` and the docs name it. */
#define MDL_LMKD_VERSION "AOSP lmkd commit 18578a5 (2023-11-27)"

/* lmkd's name for why it killed: statslog.h's enum kill_reasons, in its
 * order (lmkd's code is the value minus one); NONE is no kill, and what
 * minfree mode's kills carry (they pass no kill_info). */
typedef enum mdl_lmkd_reason {
    MDL_LMKD_NONE = 0,
    MDL_LMKD_PRESSURE_AFTER_KILL,
    MDL_LMKD_NOT_RESPONDING,
    MDL_LMKD_LOW_SWAP_AND_THRASHING,
    MDL_LMKD_LOW_MEM_AND_SWAP,
    MDL_LMKD_LOW_MEM_AND_THRASHING,
    MDL_LMKD_DIRECT_RECL_AND_THRASHING,
    MDL_LMKD_LOW_MEM_AND_SWAP_UTIL,
    MDL_LMKD_LOW_FILECACHE_AFTER_THRASHING,
    MDL_LMKD_LOW_MEM,
    MDL_LMKD_COUNT
} mdl_lmkd_reason;

#define MDL_LMKD_FIRST_REASON MDL_LMKD_PRESSURE_AFTER_KILL

const char *mdl_lmkd_reason_name(mdl_lmkd_reason r);
/* The reason named s: SIM_OK, or SIM_ENOTFOUND (out untouched). */
int mdl_lmkd_reason_parse(const char *s, mdl_lmkd_reason *out);

/* The oom_score_adj values lmkd's decision names (lmkd.cpp). */
#define MDL_ADJ_PERCEPTIBLE 200
#define MDL_ADJ_PREVIOUS 700
#define MDL_ADJ_MAX 1000

/* The ro.lmk properties the decision and the victim's choice read, by the
 * name after "ro.lmk." (and ro.config.low_ram).  -1 in a field: not set,
 * the default applies (mdl_lmkd_props_resolve). */
typedef struct mdl_lmkd_props {
    int low_ram;                       /* ro.config.low_ram */
    int swap_free_low_percentage;      /* 10 */
    int thrashing_limit;               /* 100; 30 on low-RAM devices */
    int thrashing_limit_decay;         /* 10; 50 on low-RAM devices */
    int thrashing_limit_critical;      /* 3 x thrashing_limit */
    int psi_partial_stall_ms;          /* 70; 200 on low-RAM devices */
    int psi_complete_stall_ms;         /* 700 */
    int swap_util_max;                 /* 100 (off) */
    int64_t filecache_min_kb;          /* 0 */
    int64_t stall_limit_critical;      /* 100 */
    int pressure_after_kill_min_score; /* 0 */
    int kill_timeout_ms;               /* 100 */
    int kill_heaviest_task;            /* false */
} mdl_lmkd_props;

/* One property of the table: its name, where it is, its bounds. */
typedef struct mdl_lmkd_prop {
    const char *name;     /* after "ro.lmk." */
    int is_bool, is_64;
    int64_t min, max;     /* lmkd's clamp, or what a scenario may set */
    unsigned offset;      /* in mdl_lmkd_props */
    const char *help;
} mdl_lmkd_prop;

/* The properties, NULL-named at the end. */
extern const mdl_lmkd_prop mdl_lmkd_prop_table[];
const mdl_lmkd_prop *mdl_lmkd_prop_named(const char *name);
/* Every property not set (-1). */
void mdl_lmkd_props_unset(mdl_lmkd_props *p);
/* Sets one property's value (no bound checked); 64-bit or int by its kind. */
void mdl_lmkd_prop_set(mdl_lmkd_props *p, const mdl_lmkd_prop *prop, int64_t v);
int64_t mdl_lmkd_prop_get(const mdl_lmkd_props *p, const mdl_lmkd_prop *prop);
/* The defaults for what is unset, in lmkd's order (the low-RAM defaults,
 * the critical limit from the limit), then lmkd's clamps. */
void mdl_lmkd_props_resolve(mdl_lmkd_props *p);

/* /proc/meminfo and /proc/vmstat as one wake-up reads them, in pages. */
typedef struct mdl_lmkd_mem {
    int64_t free, cma_free;            /* MemFree, CmaFree */
    int64_t swap_total, swap_free;     /* SwapTotal, SwapFree */
    int64_t inactive_file;             /* Inactive(file) */
    int64_t active_anon, inactive_anon, shmem;
    int64_t nr_inactive_file, nr_active_file; /* vmstat */
    int64_t refault;                   /* workingset_refault(_file) */
    int64_t pgscan_kswapd, pgscan_direct, pgrefill;
} mdl_lmkd_mem;

typedef enum mdl_psi_level { MDL_PSI_LOW = 0, MDL_PSI_MEDIUM, MDL_PSI_CRITICAL } mdl_psi_level;

/* What woke lmkd, and what it reads besides meminfo and vmstat. */
typedef struct mdl_lmkd_wake {
    int64_t now_ms;
    mdl_psi_level level; /* the PSI monitor's level */
    int event;           /* 1: a PSI event woke it; 0: a poll */
    int has_psi;         /* /proc/pressure/memory read */
    double full_avg10;   /* its "full avg10", percent */
    int64_t wmark_min, wmark_low, wmark_high; /* calc_zone_watermarks's sums, pages */
    int64_t page_kb;     /* the page size in kB */
} mdl_lmkd_wake;

/* mp_event_psi's static variables: what one wake-up leaves the next. */
typedef struct mdl_lmkd_state {
    int64_t init_ws_refault, prev_workingset_refault, base_file_lru;
    int64_t init_pgscan_kswapd, init_pgscan_direct, init_pgrefill;
    int64_t prev_thrash_growth, max_thrashing;
    int64_t thrashing_reset_ms;
    int thrashing_limit;
    int killing, check_filecache;
} mdl_lmkd_state;

/* The state as lmkd holds it after a reset at `at` (the counters of that
 * instant, the thrashing window starting then). */
void mdl_lmkd_state_init(mdl_lmkd_state *s, const mdl_lmkd_props *p, const mdl_lmkd_mem *at,
                         int64_t now_ms);

typedef enum mdl_wmark { MDL_WMARK_MIN = 0, MDL_WMARK_LOW, MDL_WMARK_HIGH, MDL_WMARK_NONE } mdl_wmark;
typedef enum mdl_reclaim { MDL_RECLAIM_NONE = 0, MDL_RECLAIM_KSWAPD, MDL_RECLAIM_DIRECT } mdl_reclaim;

const char *mdl_wmark_name(mdl_wmark w);       /* "min", "low", "high", "none" */
const char *mdl_reclaim_name(mdl_reclaim r);   /* "none", "kswapd", "direct" */

#define MDL_LMKD_DESC_MAX 160

typedef struct mdl_lmkd_decision {
    mdl_wmark wmark;            /* get_lowest_watermark */
    int swap_is_low;
    int64_t free_swap;          /* get_free_swap, pages */
    int64_t swap_low_threshold; /* pages */
    int64_t thrashing;          /* percent, as lmkd computes it */
    mdl_reclaim reclaim;
    int critical_stall;
    int bailed;                 /* no reclaim and no new refault: no_kill before the rest */
    mdl_lmkd_reason reason;
    int min_score_adj;
    int cut_thrashing_limit;    /* a kill cuts the limit (the thrashing branches) */
    char description[MDL_LMKD_DESC_MAX]; /* lmkd's kill_desc, or "no_kill" */
} mdl_lmkd_decision;

/* One wake-up of mp_event_psi: updates *s as lmkd's statics change, fills
 * *out.  A kill it asks for is the caller's to make; mdl_lmkd_killed then
 * records that one was made (pages_freed > 0). */
void mdl_lmkd_decide(mdl_lmkd_state *s, const mdl_lmkd_props *p, const mdl_lmkd_wake *w,
                     const mdl_lmkd_mem *m, mdl_lmkd_decision *out);
void mdl_lmkd_killed(mdl_lmkd_state *s, const mdl_lmkd_props *p, const mdl_lmkd_decision *d);

#ifdef __cplusplus
}
#endif

#endif /* OOMSIM_MODELS_LMKD_H */
