/* xnu.h - iOS's memorystatus (jetsam) as XNU decides (models/xnu.c;
 * docs/model.md "memorystatus's decision").
 *
 * The model follows XNU at tag xnu-11417.101.15: the kill causes of
 * bsd/sys/kern_memorystatus.h with their names from kern_memorystatus.c,
 * the bands of kern_memorystatus.h, the fallback thresholds of
 * memorystatus_init, the health check of kern_memorystatus_policy.c
 * (memorystatus_health_check), memorystatus_pick_action and
 * memorystatus_pick_kill_cause, and the phantom cache's thrashing test
 * (osfmk/vm/vm_phantom_cache.c).  Included by models.h. */
#ifndef OOMSIM_MODELS_XNU_H
#define OOMSIM_MODELS_XNU_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define MDL_XNU_VERSION "XNU xnu-11417.101.15"

/* kMemorystatusKilled...: the cause a JetsamEvent names, XNU's values. */
typedef enum mdl_jetsam_cause {
    MDL_JETSAM_NONE = 0,
    MDL_JETSAM_JETTISONED,            /* 1 "jettisoned" */
    MDL_JETSAM_HIGHWATER,             /* 2 "highwater" */
    MDL_JETSAM_VNODE_LIMIT,           /* 3 "vnode-limit" */
    MDL_JETSAM_VM_PAGESHORTAGE,       /* 4 "vm-pageshortage" */
    MDL_JETSAM_PROC_THRASHING,        /* 5 "proc-thrashing" */
    MDL_JETSAM_FC_THRASHING,          /* 6 "fc-thrashing" */
    MDL_JETSAM_PER_PROCESS_LIMIT,     /* 7 "per-process-limit" */
    MDL_JETSAM_DISK_SPACE_SHORTAGE,   /* 8 "disk-space-shortage" */
    MDL_JETSAM_IDLE_EXIT,             /* 9 "idle-exit" */
    MDL_JETSAM_ZONE_MAP_EXHAUSTION,   /* 10 "zone-map-exhaustion" */
    MDL_JETSAM_COMPRESSOR_THRASHING,  /* 11 "vm-compressor-thrashing" */
    MDL_JETSAM_COMPRESSOR_SPACE,      /* 12 "vm-compressor-space-shortage" */
    MDL_JETSAM_LOW_SWAP,              /* 13 "low-swap" */
    MDL_JETSAM_SUSTAINED_PRESSURE,    /* 14 "sustained-memory-pressure" */
    MDL_JETSAM_PAGEOUT_STARVATION,    /* 15 "vm-pageout-starvation" */
    MDL_JETSAM_RESERVED_16,           /* 16 "" (reserved) */
    MDL_JETSAM_LONG_IDLE_EXIT,        /* 17 "long-idle-exit" */
    MDL_JETSAM_COUNT
} mdl_jetsam_cause;

/* XNU's name of the cause ("" for none and the reserved value, "?" past
 * the table). */
const char *mdl_jetsam_cause_name(mdl_jetsam_cause c);
/* The cause named s: SIM_OK, or SIM_ENOTFOUND (out untouched). */
int mdl_jetsam_cause_parse(const char *s, mdl_jetsam_cause *out);

/* Bands (JETSAM_PRIORITY_*), the ones the model places processes in. */
#define MDL_BAND_IDLE 0
#define MDL_BAND_AGING_DAEMONS 10 /* JETSAM_PRIORITY_AGING_BAND1 */
#define MDL_BAND_AGING_APPS 20    /* JETSAM_PRIORITY_AGING_BAND2 */
#define MDL_BAND_BACKGROUND 30
#define MDL_BAND_MAIL 40
#define MDL_BAND_FOREGROUND 100
#define MDL_BAND_MAX 210

/* An app that leaves the foreground ages in band 20 for this long, then
 * sits in the idle band (kern_memorystatus.c, the app aging time). */
#define MDL_XNU_APP_AGING_US ((int64_t)2 * 1000 * 1000)

/* Page size of arm64 iOS (JetsamEvent's pageSize) and the most the
 * pageout daemon's free target can be, VM_PAGE_FREE_TARGET_LIMIT pages on
 * iOS (osfmk/vm/vm_pageout.c). */
#define MDL_XNU_PAGE ((int64_t)16384)
#define MDL_XNU_FREE_TARGET_PAGES 2000

/* vm_page_free_reserve (vm_pageout.c) on iOS with the compressor: the
 * reserve is VM_PAGE_FREE_RESERVED_LIMIT + COMPRESSOR_FREE_RESERVED_LIMIT
 * (100 + 28 pages); of the pages free at boot beyond it, the free target is
 * reserved + 15 + free / 100, at most 2000 pages and at least the free
 * minimum (reserved + 10 + free / 200, at most 1500) + 5.  Pages. */
int64_t mdl_xnu_free_target(int64_t free_at_boot);

/* At most one JetsamEvent in this long (JETSAM_SNAPSHOT_TIMEOUT_SECS,
 * bsd/sys/kern_memorystatus.h): a snapshot due sooner waits, open. */
#define MDL_XNU_SNAPSHOT_GAP_US ((int64_t)30 * 1000 * 1000)

/* The phantom cache (vm_phantom_cache.c): 250 ms periods; a period
 * thrashes when pages evicted and pages found are both at the threshold
 * (1000 for SSD-backed files) and found >= evicted / 2; pressure after 4
 * such periods in a row, unless file-backed pages are over half of
 * AVAILABLE_MEMORY. */
#define MDL_XNU_PC_PERIOD_US ((int64_t)250 * 1000)
#define MDL_XNU_PC_THRESHOLD_SSD 1000
#define MDL_XNU_PC_THRESHOLD 500 /* files on other storage (!XNU_TARGET_OS_OSX) */
#define MDL_XNU_PC_PERIODS 4

/* memorystatus_init's fallback thresholds, in pages of `page` bytes, for
 * `ram` bytes of DRAM: critical (5 % of the pages up to 3 GiB, else 4 %),
 * idle and soft (pressure) derived from critical (9/4 and 15/4 of it from
 * 3 to 6 GiB, else 2x and 3x), in XNU's integer arithmetic. */
void mdl_xnu_thresholds(int64_t ram, int64_t page, int64_t *critical, int64_t *idle,
                        int64_t *soft);

/* One period of the phantom cache: 1 when it thrashes (is_thrashing). */
int mdl_xnu_pc_thrashing(int64_t added, int64_t found, int64_t threshold);

/* The phantom cache's history (pc_history: bit 0 the current period) after
 * a look at `now` that reads for `periods` periods (at least 1), each
 * thrashing or not; *start is when the current period began.
 * vm_phantom_cache_check_pressure shifts the history once per call after a
 * period ended, and it is called often (every decompression, the pageout
 * daemon's waits, the compactor): a look shifts once per period gone since
 * *start, each further period of the read once more. */
uint32_t mdl_xnu_pc_history(uint32_t hist, int64_t *start, int64_t now, int64_t periods,
                            int thrash);

/* Pressure: the last MDL_XNU_PC_PERIODS periods all thrashed. */
int mdl_xnu_pc_pressure(uint32_t hist);

/* What memorystatus_health_check reads, and the page levels. */
typedef struct mdl_xnu_input {
    int64_t available;            /* memorystatus_available_pages (pages) */
    int64_t critical, idle, soft; /* the thresholds (pages) */
    int compressor_thrashing;     /* vm_compressor_is_thrashing */
    int compressor_exhausted;     /* vm_compressor_low_on_space, or the
                                     compressor's asynchronous space-shortage flag */
    int fc_thrashing;             /* the phantom cache's pressure */
    uint32_t idle_procs;          /* processes in the idle band */
} mdl_xnu_input;

typedef enum mdl_xnu_action {
    MDL_XNU_NONE = 0,
    MDL_XNU_KILL_IDLE, /* the idle band only (band 0) */
    MDL_XNU_KILL_TOP   /* bands ascending, up to JETSAM_PRIORITY_MAX */
} mdl_xnu_action;

typedef struct mdl_xnu_decision {
    int healthy;
    mdl_xnu_action action;
    mdl_jetsam_cause cause;
    int max_band;   /* the highest band the kill may reach */
    int branch;     /* which branch of pick_action decided (docs/model.md) */
    int fc_thrashing; /* the file cache thrashes for the health check */
} mdl_xnu_decision;

/* memorystatus_pick_action on *in, without the branches the model has no
 * state for (swap, high-water marks, the reaper, aggressive jetsam:
 * docs/model.md says why).  Pure. */
void mdl_xnu_decide(const mdl_xnu_input *in, mdl_xnu_decision *out);

#ifdef __cplusplus
}
#endif

#endif /* OOMSIM_MODELS_XNU_H */
