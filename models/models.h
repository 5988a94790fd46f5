/* models.h - the modelled world of oomsim.
 *
 * The vocabulary (categories, stages), distributions, device and candidate
 * profiles, the workload and policies, the memory ledger (the hot path of
 * every replication), the replication of one grid cell (world.c and the files
 * docs/design/architecture.md lists) and the model's rules as pure functions.
 * Nothing in models/ prints or exits; failures are SIM_E* codes with a
 * message in a sim_error.
 */
#ifndef OOMSIM_MODELS_H
#define OOMSIM_MODELS_H

#include <stddef.h>
#include <stdint.h>

#include "sim/sim.h"
#include "traces/traces.h"
#include "models/lmkd.h"
#include "models/xnu.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------- vocabulary */

/* Memory categories (docs/model.md "Memory"). */
typedef enum mdl_category {
    MDL_CAT_JAVA = 0,   /* ART heap */
    MDL_CAT_NATIVE = 1, /* anonymous malloc/mmap */
    MDL_CAT_GPU = 2,    /* driver and delegate buffers, dmabuf */
    MDL_CAT_FILE = 3,   /* clean file-backed pages (mmapped weights) */
    MDL_CAT_COUNT = 4
} mdl_category;

/* Bit of a category in a `counts` mask. */
#define MDL_CAT_BIT(c) (1u << (unsigned)(c))
#define MDL_CAT_ALL ((1u << MDL_CAT_COUNT) - 1u) /* every category */
/* The default `counts`: everything but clean file pages. */
#define MDL_COUNTS_DEFAULT (MDL_CAT_BIT(MDL_CAT_JAVA) | MDL_CAT_BIT(MDL_CAT_NATIVE) | \
                            MDL_CAT_BIT(MDL_CAT_GPU))

/* Lifecycle stages, named as in the trace schema (docs/traces.md). */
typedef enum mdl_stage {
    MDL_STAGE_DOWNLOAD = 0,
    MDL_STAGE_LOAD,
    MDL_STAGE_RUNTIME_PREPARE,
    MDL_STAGE_DELEGATE_PREPARE,
    MDL_STAGE_INFERENCE,
    MDL_STAGE_CACHE,
    MDL_STAGE_RELEASE,
    MDL_STAGE_EXIT,
    /* The app's own memory (not the model's): not trace stages, so the
     * timeline files them under `load` (docs/traces.md). */
    MDL_STAGE_APP_START,   /* the app baseline, at each cold start */
    MDL_STAGE_PAGE,        /* a page's hold, at its enter */
    MDL_STAGE_COUNT,
    MDL_STAGE_NONE = MDL_STAGE_COUNT /* no allocation yet */
} mdl_stage;

/* What holds memory (docs/model.md "Memory"): a model part, a session state, a
 * request (payload, working set, output), the compiled-artefact cache, and
 * a failed delegate's memory that a re-init never released (a leak). */
typedef enum mdl_owner_kind {
    MDL_OWNER_PART = 0,
    MDL_OWNER_SESSION,
    MDL_OWNER_REQUEST,
    MDL_OWNER_CACHE,
    MDL_OWNER_LEAKED,
    MDL_OWNER_APP,        /* the app's baseline and its pages' holds */
    MDL_OWNER_KIND_COUNT
} mdl_owner_kind;

/* Names: "java", "load", "session", ...; "?" for an out-of-range value. */
const char *mdl_category_name(mdl_category c);
const char *mdl_stage_name(mdl_stage s);
const char *mdl_owner_kind_name(mdl_owner_kind k);
/* Parses a name (len bytes, not NUL-terminated) into *out.
 * Returns SIM_OK or SIM_ENOTFOUND (out untouched). */
int mdl_category_parse(const char *s, size_t len, mdl_category *out);
int mdl_stage_parse(const char *s, size_t len, mdl_stage *out);

/* ----------------------------------------------------------- distributions */

/* The distributions of docs/units-and-distributions.md, in the scenario's integer unit
 * (bytes or microseconds).  A lognormal, exponential, uniform or normal
 * sample takes exactly one uniform draw from its stream, whatever the
 * parameters; gamma (GSL's Marsaglia-Tsang method) and empirical (GSL's
 * unbiased integer pick) take a variable number; fixed takes none. */
typedef enum mdl_dist_kind {
    MDL_DIST_FIXED = 0,
    MDL_DIST_LOGNORMAL,   /* by median and p95 */
    MDL_DIST_EXPONENTIAL, /* by mean */
    MDL_DIST_UNIFORM,     /* min, max */
    MDL_DIST_NORMAL,      /* mean, sd, truncated at 0 (inverse-CDF, one draw) */
    MDL_DIST_GAMMA,       /* by mean and coefficient of variation */
    MDL_DIST_EMPIRICAL    /* a uniform pick among values */
} mdl_dist_kind;

#define MDL_DIST_EMPIRICAL_MAX 100000 /* values in an empirical distribution */

typedef struct mdl_dist {
    mdl_dist_kind kind;
    double p1, p2;          /* kind-specific, derived by the constructors */
    const int64_t *values;  /* empirical: borrowed, must outlive the dist */
    uint32_t nvalues;
    double p3, p4;          /* gamma of shape >= 1: Marsaglia and Tsang's d and c */
} mdl_dist;

/* Constructors: validate the parameters and fill *d.  Return SIM_OK, or
 * SIM_EINPUT with err saying which parameter is wrong (d untouched). */
int mdl_dist_fixed(mdl_dist *d, int64_t value, sim_error *err);
int mdl_dist_lognormal(mdl_dist *d, double median, double p95, sim_error *err);
int mdl_dist_exponential(mdl_dist *d, double mean, sim_error *err);
int mdl_dist_uniform(mdl_dist *d, double min, double max, sim_error *err);
int mdl_dist_normal(mdl_dist *d, double mean, double sd, sim_error *err);
int mdl_dist_gamma(mdl_dist *d, double mean, double cv, sim_error *err);
int mdl_dist_empirical(mdl_dist *d, const int64_t *values, uint32_t n, sim_error *err);

/* A sample, rounded to the nearest integer and clamped to [0, 2^62]. */
int64_t mdl_dist_sample(const mdl_dist *d, gsl_rng *r);
/* The distribution's mean (before rounding), for estimates and tests. */
double mdl_dist_mean(const mdl_dist *d);
const char *mdl_dist_name(mdl_dist_kind k);

/* ----------------------------------------------------------- exit reasons */

/* Why a modelled process died (docs/model.md "Kill rules"; the keys of
 * deaths.by_reason in docs/results.md). */
typedef enum mdl_exit {
    MDL_EXIT_LOW_MEMORY = 0, /* lmk in the foreground, or jetsam */
    MDL_EXIT_JAVA_CRASH,     /* OutOfMemoryError past java_heap_limit */
    MDL_EXIT_NATIVE_CRASH,   /* a delegate crash */
    MDL_EXIT_ANR,            /* a main-thread stage past anr_timeout */
    MDL_EXIT_SYSTEM_RECLAIM, /* lmk in the background */
    MDL_EXIT_WATCHDOG,       /* iOS launch past launch_watchdog */
    MDL_EXIT_COUNT
} mdl_exit;

const char *mdl_exit_name(mdl_exit x);

#include "models/device.h"

/* -------------------------------------------------------------- candidate */

/* A model candidate (docs/model.md, docs/scenario-loader.md), every value resolved. */
#define MDL_PARTS_MAX 16
#define MDL_TEXT_MAX 64
#define MDL_PACKAGE_MAX 41 /* `app.package`, `app.executable`: up to 40 characters */

/* Memory per category, each a size distribution; `mask` has the
 * categories given (MDL_CAT_BIT). */
typedef struct mdl_amounts {
    mdl_dist cat[MDL_CAT_COUNT];
    unsigned mask;
} mdl_amounts;

typedef enum mdl_load_mode {
    MDL_LOAD_MMAP = 0,  /* the file as resident `file` pages */
    MDL_LOAD_COPY,      /* the file copied into `native` */
    MDL_LOAD_DECOMPRESS /* the file expanded into `native`, plus its transient */
} mdl_load_mode;

/* Empirical value arrays a loader allocated for a profile (freed by the
 * loader's release function). */
typedef struct mdl_owned {
    int64_t **v;
    unsigned n, cap;
} mdl_owned;

/* One preparation stage of a part: its time, what it holds while it runs
 * and what stays afterwards. */
typedef struct mdl_phase {
    mdl_dist time;
    mdl_amounts transient, resident;
    int main_thread; /* runs on the main thread (ANR / watchdog rules) */
} mdl_phase;

#include "models/generation.h"

typedef struct mdl_part {
    char name[MDL_NAME_MAX];
    int64_t file;                 /* bytes on disk */
    mdl_load_mode load_mode;
    mdl_phase load, prepare, delegate_prepare;
    int has_delegate_prepare;     /* given, and the candidate has a delegate */
    double delegate_fail, delegate_crash;
    int file_hot;                 /* mmap load: the weights are read at every inference */
    int64_t hot_bytes;            /* ... these bytes of the file (file, or generation's mapped) */
    mdl_dist inference_time;
    mdl_amounts working_set, output, session;
    int has_generation;           /* an LLM part: `generation` instead of `inference` */
    mdl_generation gen;
} mdl_part;

/* What a compiled cache's key holds (`cache.key`): an artefact built
 * under another runtime or OS version that its key does not name is found
 * valid, and fails to prepare. */
enum { MDL_KEY_DIGEST = 1u, MDL_KEY_RUNTIME = 2u, MDL_KEY_OS = 4u,
       MDL_KEY_ALL = MDL_KEY_DIGEST | MDL_KEY_RUNTIME | MDL_KEY_OS };

typedef struct mdl_candidate {
    char id[MDL_NAME_MAX];
    char digest[MDL_TEXT_MAX];
    char runtime[MDL_TEXT_MAX];
    char delegate[MDL_TEXT_MAX];  /* "none" when there is none */
    char fallback[MDL_TEXT_MAX];  /* "none": a delegate failure fails the load */
    int fallback_overlap;
    int release_on_init_failure;  /* 0: a failed delegate's memory is never released (a leak) */
    int shares_weights;           /* 0: each session state copies its part's prepared memory
                                     (the runtime does not share weights across sessions) */
    int receipt_complete;
    char last_known_good[MDL_NAME_MAX]; /* "" when absent */
    mdl_part parts[MDL_PARTS_MAX];
    unsigned nparts;
    int has_cache;
    int64_t cache_size;
    double cache_hit;
    sim_time cache_miss_time;
    mdl_amounts cache_miss_transient;
    unsigned cache_key;           /* MDL_KEY_* bits: what the cache's key holds */
    mdl_owned owned;              /* empirical values the loader allocated */
} mdl_candidate;

/* The candidate with every memory figure f times c's (scale.c; `run
 * --headroom`): a sample of each is f times the original's from the same
 * draw.  Release with mdl_candidate_scaled_free (not the loader's). */
int mdl_candidate_scaled(const mdl_candidate *c, double f, mdl_candidate *out, sim_error *err);
void mdl_candidate_scaled_free(mdl_candidate *c);
/* What the candidate holds once loaded and running, its means summed: the
 * parts' resident memory, working sets and session states (and a
 * generation part's weights, compute buffer and full KV), bytes. */
double mdl_candidate_memory(const mdl_candidate *c);

#include "models/workload.h"

/* --------------------------------------------------------------- policies */

typedef enum mdl_residency {
    MDL_RES_PRELOAD = 0,      /* every part at cold start, kept */
    MDL_RES_OVERLAP,          /* on_demand_overlap: one part kept; the switch holds both */
    MDL_RES_RELEASE_FIRST,    /* on_demand_release_first */
    MDL_RES_LRU               /* lru:K */
} mdl_residency;

#define MDL_SESSIONS_MAX 1024u
#define MDL_QUEUE_MAX 100000u
#define MDL_QUEUE_UNBOUNDED UINT32_MAX

typedef enum mdl_retry_kind {
    MDL_RETRY_NONE = 0,
    MDL_RETRY_FIXED,          /* delay, max */
    MDL_RETRY_BACKOFF,        /* base * factor^(k-1), capped, with jitter */
    MDL_RETRY_ON_NEW_CONDITION /* only once something changed */
} mdl_retry_kind;

#define MDL_RETRIES_MAX 100u

typedef struct mdl_retry {
    mdl_retry_kind kind;
    uint32_t max;             /* retries per request */
    sim_time delay;           /* FIXED */
    sim_time base, cap;       /* BACKOFF */
    double factor, jitter;    /* BACKOFF: factor >= 1, jitter in [0, 1] */
} mdl_retry;

/* on_warning actions, a bit each (docs/model.md, docs/scenario-loader.md). */
enum {
    MDL_WARN_REJECT_NEW = 1u << 0,
    MDL_WARN_RELEASE_IDLE = 1u << 1,
    MDL_WARN_CLEAR_CACHE = 1u << 2,      /* clear_rebuildable_cache */
    MDL_WARN_REDUCE_CONCURRENCY = 1u << 3
};

/* Recovery strategies (docs/model.md "Recovery"). */
typedef enum mdl_recovery {
    MDL_RECOVERY_NAIVE = 0,   /* relaunch and prewarm the same candidate, unchanged */
    MDL_RECOVERY_SAFE_MODE,
    MDL_RECOVERY_FALLBACK_LKG,
    MDL_RECOVERY_LADDER
} mdl_recovery;
/* "naive", "safe_mode", "fallback_lkg", "ladder". */
const char *mdl_recovery_name(mdl_recovery r);

/* Ladder actions, in order of reversibility. */
typedef enum mdl_action {
    MDL_ACT_REJECT_NEW = 0,
    MDL_ACT_STOP_PREWARM,
    MDL_ACT_REDUCE_CONCURRENCY,
    MDL_ACT_RELEASE_IDLE,
    MDL_ACT_CLEAR_CACHE,      /* clear_rebuildable_cache */
    MDL_ACT_DEGRADE_CPU,
    MDL_ACT_FALLBACK_LKG,
    MDL_ACT_COUNT
} mdl_action;

const char *mdl_action_name(mdl_action a);
/* The action named s: SIM_OK, or SIM_ENOTFOUND (out untouched). */
int mdl_action_parse(const char *s, mdl_action *out);

/* The policy of one cell (docs/model.md, docs/scenario-loader.md), resolved. */
typedef struct mdl_policy {
    uint32_t sessions;        /* concurrent executions, >= 1 */
    uint32_t queue;           /* waiting requests; MDL_QUEUE_UNBOUNDED */
    int queue_drop_oldest;    /* a full queue drops its stalest request, not the new one */
    mdl_residency residency;
    uint32_t lru_k;           /* MDL_RES_LRU: parts kept */
    char prewarm[MDL_PARTS_MAX][MDL_NAME_MAX];
    unsigned nprewarm;
    int copy_runtime;         /* each session copies its part's prepare resident */
    int cancel_on_timeout;    /* a timed-out attempt is cancelled, its memory released */
    mdl_retry retry;
    unsigned on_warning;      /* MDL_WARN_* bits */
    mdl_recovery recovery;
    mdl_action ladder[MDL_ACT_COUNT];
    unsigned nladder;
    uint32_t safe_mode_after; /* same-stage start-up deaths before safe mode, >= 1 */
    sim_time stable_after;    /* alive this long after start-up: a stable run */
    int entitlement;          /* iOS increased_memory_limit: the device's entitled_limit */
    /* generation parts (docs/scenarios.md "Policies"); 0: as the candidate says */
    uint32_t gen_context;     /* context: n_ctx */
    unsigned kv_type;         /* kv_precision: an mdl_kv_type + 1 */
    unsigned flash_attn;      /* flash_attn: an mdl_flash_attn + 1 */
    mdl_weights gen_weights;  /* weights: how the CPU's weights are held */
    uint32_t gen_slots;       /* slots */
    uint32_t gpu_layers;      /* gpu_layers: llama.cpp's n_gpu_layers + 1; 0: the candidate's */
    sim_time unload_after;    /* an idle generation part is released after this long */
} mdl_policy;

#include "models/replication.h"

/* ------------------------------------------------ the rules, as pure functions */

/* The state at a death that its record depends on. */
typedef struct mdl_death {
    mdl_exit why;
    mdl_stage stage;          /* the stage running */
    sim_time time;
    int foreground;
    int64_t counted;          /* the app's counted bytes at the kill */
    int64_t sample_pss_kb, sample_rss_kb; /* Android: the last periodic sample, 0 before one */
    mdl_lmkd_reason lmkd;     /* lmk kills: lmkd's reason */
    int kernel_oom;           /* the kernel's OOM killer killed it */
    mdl_jetsam_cause jetsam;  /* iOS memorystatus kills: the cause (none: per-process-limit
                                 under the plain rule, or not a jetsam kill) */
    int unreported;           /* iOS page model: no JetsamEvent lists the kill (the app in
                                 band 0 or 10, kern.jetsam_idle_snapshot off) */
} mdl_death;

/* The record the death leaves, as the system writes it (models/exitrec.c,
 * docs/model.md "Exit records").  Pure; thread-safe. */
void mdl_exit_record_make(const mdl_device *d, const mdl_death *x, mdl_exit_record *out);
/* Adds r to o's kept records (the first MDL_RECORDS_KEPT) and to its
 * counts by signature. */
void mdl_rep_add_record(mdl_rep *o, const mdl_exit_record *r);
/* Adds sig's count and pss sum to the entry of v[0..*n) with its signature
 * (kind, reason, status, importance, description), appending one when it
 * is new and the table (MDL_RECORD_KINDS_MAX) has room. */
void mdl_record_kinds_add(mdl_record_kind_count *v, unsigned *n,
                          const mdl_record_kind_count *sig);

/* The recovery state: a small record the app persists outside the process
 * and its model loading (docs/model.md "Recovery"), read at every cold start. */
typedef struct mdl_recovery_state {
    mdl_stage failed_stage;          /* of the last death; MDL_STAGE_NONE before one */
    uint32_t same_stage;             /* consecutive start-up deaths at that stage */
    uint32_t consec[MDL_EXIT_COUNT]; /* consecutive failures by class */
    const mdl_candidate *last_stable;
    const mdl_candidate *candidate;  /* the one the next cold start runs */
    int safe_mode;
    unsigned ladder_step;            /* ladder actions in force */
    unsigned acts;                   /* 1 << mdl_action: what the ladder put in force */
} mdl_recovery_state;

/* A fresh state whose cold starts run candidate c. */
void mdl_recovery_init(mdl_recovery_state *s, const mdl_candidate *c);
/* The process running `running` died (in_startup: before its start-up
 * finished): the state learns of it and plans the next start under the
 * policy (lkg: the last known good, or NULL).  Pure over *s. */
void mdl_recovery_on_death(mdl_recovery_state *s, const mdl_policy *pol,
                           const mdl_candidate *running, const mdl_candidate *lkg,
                           int in_startup, mdl_exit why, mdl_stage stage);
/* The process running `running` stayed up stable_after past its start-up. */
void mdl_recovery_on_stable(mdl_recovery_state *s, const mdl_candidate *running);
/* A cold start with `running` in force reads the state: returns 1 when it
 * must switch to s->candidate (which clears the start-up death count at a
 * stage and safe mode: the condition changed), else 0. */
int mdl_recovery_on_start(mdl_recovery_state *s, const mdl_candidate *running);

/* Checks that the cell can run: every part named in needs and prewarm
 * exists in the candidate, the policy fits.  Returns SIM_OK or SIM_EINPUT
 * with err naming the part and the candidate. */
int mdl_cell_check(const mdl_cell *cell, sim_error *err);

/* The engine events a replication of the cell can need, estimated before
 * it runs from its workload, device and policy: an upper-end figure (every
 * attempt retried to the policy's maximum, every launch dying and
 * relaunched at the relaunch mean), to refuse a scenario that would not
 * finish (docs/model.md, "Events per replication"). */
#define MDL_EVENTS_MAX 100000000.0 /* per replication */
typedef struct mdl_estimate {
    double arrivals;    /* requests arriving over the horizon */
    double per_request; /* events a request can cause, its retries included */
    double launches;    /* process launches: 1, or up to horizon / relaunch mean */
    double per_launch;  /* start-up events of a launch */
    double samples;     /* the system's pss samples (Android) */
    double pressure;    /* other apps' pressure spikes */
    double steps;       /* path steps */
    double pages;       /* the page model's looks and lmkd's polls (Android, PSI mode) */
    double total;
} mdl_estimate;
void mdl_events_estimate(const mdl_cell *cell, mdl_estimate *out);

/* Runs replication `rep` of the cell to its horizon and fills *out.
 * `alloc` serves the world (a per-replication arena is intended);
 * `times`, when not NULL, receives every completed request's wait and
 * latency as it completes.  Streams come from
 * (cell->seed, rep, purpose), never from the cell, so cells differing
 * only in policy see the same arrivals and draws first.  Returns SIM_OK,
 * or SIM_ENOMEM / SIM_EINTERNAL (an invariant of the ledger broke) with
 * err set; *out then holds nothing to free.  Thread-safe for distinct
 * outs. */
int mdl_run_replication(const mdl_cell *cell, uint64_t rep, const sim_alloc *alloc,
                        const mdl_times_sink *times, mdl_rep *out, sim_error *err);

/* Receives the replication's event timeline (docs/traces.md), in time
 * order: stage begin and end (inference with its session slot), memory
 * by category and the queue and session counts on every event, the
 * periodic samples, deaths with their exit records, recovery actions at
 * cold starts.  fn returns SIM_OK, or an error that stops the run. */
/* A JetsamEvent as memorystatus posts it (the iOS page model; docs/model.md
 * "JetsamEvent reports"): the pages when its snapshot was made, and every
 * process then with its band and pages, the ones killed since with their
 * cause and their pages at the kill. */
typedef struct mdl_jetsam_proc {
    int band;
    uint32_t pid;                 /* the app 1000 + its life; the successor 3000 + its life;
                                   * the others 2000 + k */
    int64_t resident, compressed; /* bytes: in RAM (file pages of the app included), compressed */
    int64_t lifetime_max;         /* the most it held (the app: its counted peak) */
    int64_t footprint;            /* phys_footprint, the report's rpages: anonymous in RAM and
                                   * compressed, no clean file page; never over lifetime_max */
    int app, successor;           /* the app; the app the user switched to */
    mdl_jetsam_cause killed;      /* killed since the snapshot, with this cause; NONE: listed */
} mdl_jetsam_proc;
/* the others, the app and the successor, and room for lives begun after
 * the snapshot was made (beyond it, as in XNU's full buffer, a kill is
 * not listed) */
#define MDL_JETSAM_PROCS (MDL_OTHERS_MAX + 8)
typedef struct mdl_jetsam_event {
    sim_time time;                /* posted */
    mdl_jetsam_cause cause;       /* the first kill's */
    int64_t free, file, anonymous, wired, compressor, compressed; /* bytes; compressor: the
                                     pool in RAM, compressed: what it holds */
    mdl_jetsam_proc procs[MDL_JETSAM_PROCS];
    unsigned nprocs;
} mdl_jetsam_event;

typedef struct mdl_trace_sink {
    int (*fn)(void *ctx, const trc_event *e, sim_error *err);
    void *ctx;
    /* optional (may be NULL): each JetsamEvent of the iOS page model */
    int (*jetsam)(void *ctx, const mdl_jetsam_event *ev, sim_error *err);
} mdl_trace_sink;

/* mdl_run_replication with the timeline sent to `trace` (may be NULL). */
int mdl_run_replication_traced(const mdl_cell *cell, uint64_t rep, const sim_alloc *alloc,
                               const mdl_times_sink *times, const mdl_trace_sink *trace,
                               mdl_rep *out, sim_error *err);

/* The memory ledger (models/ledger.c) */
#include "models/ledger.h"

#ifdef __cplusplus
}
#endif

#endif /* OOMSIM_MODELS_H */
