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

/* ----------------------------------------------------------------- device */

/* A device memory profile (docs/model.md, docs/scenario-loader.md), every value
 * resolved: sizes in bytes, durations in microseconds. */
typedef enum mdl_os { MDL_OS_ANDROID = 0, MDL_OS_IOS = 1 } mdl_os;
typedef enum mdl_kill_rule { MDL_KILL_LMK = 0, MDL_KILL_JETSAM = 1 } mdl_kill_rule;

#define MDL_NAME_MAX 64
#define MDL_MINFREE_MAX 16
#define MDL_DELEGATES_MAX 8
/* iOS: the groups of `others` and the processes they may hold in all */
#define MDL_OTHER_GROUPS_MAX 8
#define MDL_OTHERS_MAX 64
/* One group of other processes beside the app, in one jetsam band. */
typedef struct mdl_other_group {
    int band;
    mdl_dist count;             /* processes, drawn per replication and rounded, */
    int64_t count_add;          /* ... plus this */
    mdl_dist size;              /* each one's anonymous memory, drawn per process */
} mdl_other_group;

/* What a device says about one delegate kind (its `delegates` entry and
 * its `speed` factor): it overrides the candidate's failure and crash
 * probabilities; unavailable, delegate_prepare fails at once. */
typedef struct mdl_device_delegate {
    char name[MDL_NAME_MAX];  /* the candidate's `delegate` it applies to */
    double speed;             /* 0: not given (cpu speed, or gpu for "gpu") */
    int has_override;         /* in `delegates` */
    int available;
    int has_fail, has_crash;
    double fail, crash;
} mdl_device_delegate;

typedef struct mdl_minfree {
    int adj;      /* oom_score_adj of the level */
    int64_t free; /* kill at or above adj when available memory is below this */
} mdl_minfree;

typedef struct mdl_device {
    char name[MDL_NAME_MAX];
    mdl_os os;
    int64_t ram, system;
    mdl_dist cached_apps;       /* other apps' memory at start */
    int64_t cached_app_size;    /* freed by each cached-app kill */
    int has_pressure;
    mdl_dist pressure;          /* time between background pressure spikes */
    mdl_dist pressure_size;
    mdl_kill_rule rule;
    mdl_minfree minfree[MDL_MINFREE_MAX]; /* lmk: increasing adj */
    unsigned nminfree;
    int lmk_psi;                /* lmk: lmkd's PSI mode (watermarks), else minfree levels */
    int64_t wmark_min, wmark_low, wmark_high; /* psi mode: the zone watermarks, summed */
    int has_zram;
    int64_t zram_size;          /* the zram device's capacity (uncompressed bytes) */
    double zram_ratio;          /* compression ratio, > 1 */
    double zram_swappable;      /* minfree mode: share of other apps' memory swapped */
    /* psi mode: the phone's pages (models/pages.c; docs/model.md "The phone's pages") */
    mdl_lmkd_props lmkd;        /* ro.lmk properties, resolved */
    int64_t reclaim_rate;       /* bytes/s kswapd and direct reclaim free */
    int64_t storage_read;       /* bytes/s read back at a refault */
    int64_t page_cache, page_cache_ws; /* other apps' and the system's file cache, its working set */
    int swappiness;             /* vm.swappiness: the anonymous share of reclaim, of 200 */
    int64_t jetsam_limit, jetsam_background_limit; /* jetsam */
    unsigned counts_mask;       /* MDL_CAT_BIT set */
    int64_t java_heap_limit;    /* 0: none */
    sim_time anr_timeout;       /* 0: none */
    sim_time launch_watchdog;   /* 0: none */
    int64_t warning_at;         /* 0: no memory warnings */
    sim_time pss_sample;        /* period of the system's pss/rss samples (exit records) */
    int low_memory_reporting;   /* 0: lmk kills are recorded as SIGNALED, status 9 */
    int no_exit_info;           /* Android 10 or older: a death leaves no exit record */
    double warning_share;       /* warning_at as a share of the limit in force; 0: a size */
    double speed_cpu, speed_gpu; /* durations are divided by these (1: as drawn) */
    mdl_device_delegate delegates[MDL_DELEGATES_MAX]; /* by delegate kind */
    unsigned ndelegates;
    int has_successor;
    mdl_dist successor;         /* the app the user switches to, per background step */
    sim_time previous_ttl;      /* lmk: adj 700 -> 900 after this long; 0: stays at 700 */
    int64_t pageshortage;       /* jetsam: background page-shortage level, bytes; 0: none */
    int64_t entitled_limit;     /* jetsam: both limits with the entitlement; 0: none */
    int background_gpu_deny;    /* iOS: no GPU work in the background */
    /* iOS page model (models/memstat.c; docs/model.md "The iPhone's pages"):
     * on when the device gives `others` */
    int xnu_pages;
    mdl_other_group others[MDL_OTHER_GROUPS_MAX];
    unsigned nothers;
    double compressor_ratio;    /* > 1 */
    int64_t compressor_max;     /* uncompressed bytes the compressor holds at most */
    int64_t xnu_critical, xnu_idle, xnu_soft; /* memorystatus's page levels, bytes */
    int64_t fc_threshold;       /* phantom-cache pages per 250 ms period */
    int64_t *owned[4 + 2 * MDL_OTHER_GROUPS_MAX]; /* empirical values the loader
                                   allocated (scn_device_release frees them) */
} mdl_device;

/* The device's entry for a candidate's delegate kind (`delegates`), or
 * NULL when it says nothing of it. */
const mdl_device_delegate *mdl_device_delegate_of(const mdl_device *d, const char *kind);

/* The counted bytes above which the kill rules end the app, in the
 * foreground (1) or the background (0): jetsam's limit (in the background
 * the page-shortage level too, with no successor), or, under lmk,
 * ram - system - the minfree of the app's level once every cached app is
 * reclaimed (models/kill_lmk.c); -1 when no lmk level applies. */
int64_t mdl_kill_line(const mdl_device *d, int foreground);
/* The same under lmk's minfree levels for a process at oom_score_adj adj
 * (the model's service process: docs/model.md "Processes"); -1 when no
 * level applies or the device runs lmkd's PSI mode. */
int64_t mdl_lmk_line_at(const mdl_device *d, int adj);
/* Jetsam's per-process limit in the foreground (1) or the background (0),
 * the page-shortage level left out. */
int64_t mdl_device_jetsam_limit(const mdl_device *d, int foreground);

/* The kill rules as a pure function (models/kill_lmk.c, kill_jetsam.c;
 * docs/model.md "Kill rules").  The input is the memory state at a check:
 * after an allocation, a release, a change of foreground, or a pressure
 * spike of `extra` bytes held only for the check. */
typedef struct mdl_kill_input {
    int64_t counted;   /* the app's counted bytes */
    int64_t cached;    /* other apps' cached memory still held */
    int64_t extra;     /* a pressure spike's bytes (lmk only) */
    int foreground;
    int64_t successor; /* the app the user switched to (background only) */
    int aged;          /* lmk: in the background past previous_ttl (adj 900) */
    int64_t hot;       /* lmk: mapped file pages the app reads at every inference (foreground) */
    int job;           /* lmk: in the background with a job running (adj 250, owners) */
    int bound_adj;     /* lmk: the adj of the model's service process, the app's own
                          (from the flags) when 0 (processes) */
} mdl_kill_input;

typedef struct mdl_kill_verdict {
    int dies;              /* the app is killed */
    mdl_exit why;          /* when it dies: low_memory or system_reclaim */
    int64_t room;          /* headroom left after the cached kills (the warning level reads it) */
    uint32_t cached_kills; /* cached apps killed first, one at a time */
    int64_t cached;        /* cached memory left after them */
    int64_t margin;        /* the smallest headroom under the lines in force (negative: over) */
    mdl_lmkd_reason lmkd;  /* when it dies under lmk: lmkd's reason */
} mdl_kill_verdict;

/* Applies the device's kill rule to *in; fills *out.  Thread-safe. */
void mdl_kill_decide(const mdl_device *d, const mdl_kill_input *in, mdl_kill_verdict *out);

/* -------------------------------------------------------------- candidate */

/* A model candidate (docs/model.md, docs/scenario-loader.md), every value resolved. */
#define MDL_PARTS_MAX 16
#define MDL_TEXT_MAX 64

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
    double kv_scale;          /* kv_precision: bytes per token over f16's */
    mdl_weights gen_weights;  /* weights: how the CPU's weights are held */
    uint32_t gen_slots;       /* slots */
    sim_time unload_after;    /* an idle generation part is released after this long */
} mdl_policy;

/* ------------------------------------------------------------ replication */

/* A recorded session's measured costs, for a trace-driven run (`oomsim
 * replay`, replay/): what the world takes from the trace instead of its
 * random streams.  Each list is consumed in order and, when a policy needs
 * more occurrences than were recorded, from its start again.  Amounts are
 * by category (MDL_CAT_*). */
typedef struct mdl_replay_stage {
    sim_time time;
    int64_t resident[MDL_CAT_COUNT], transient[MDL_CAT_COUNT]; /* load: the file included */
    int cache_miss;                    /* runtime_prepare: the compiled cache was rebuilt */
    int64_t miss_transient[MDL_CAT_COUNT];
} mdl_replay_stage;

enum { MDL_REPLAY_LOAD = 0, MDL_REPLAY_PREPARE, MDL_REPLAY_DELEGATE, MDL_REPLAY_KINDS };
enum { MDL_OUTCOME_OK = 0, MDL_OUTCOME_FAIL, MDL_OUTCOME_CRASH };

typedef struct mdl_replay_request {
    sim_time time;                     /* arrival */
    uint32_t step;                     /* its requests step (index in workload.steps) */
    uint8_t nneeds, needs[MDL_PARTS_MAX];
    uint8_t known[MDL_PARTS_MAX];      /* need k was executed in the recording */
    int64_t payload[MDL_CAT_COUNT];
    sim_time time_of[MDL_PARTS_MAX];   /* per need: inference time */
    int64_t ws[MDL_PARTS_MAX][MDL_CAT_COUNT]; /* per need: working set + output */
} mdl_replay_request;

typedef struct mdl_replay {
    mdl_replay_stage *stages[MDL_PARTS_MAX][MDL_REPLAY_KINDS];
    uint32_t nstages[MDL_PARTS_MAX][MDL_REPLAY_KINDS];
    uint8_t *outcome[MDL_PARTS_MAX];   /* per delegate_prepare: MDL_OUTCOME_* */
    uint32_t noutcome[MDL_PARTS_MAX];
    int64_t (*session[MDL_PARTS_MAX])[MDL_CAT_COUNT]; /* each session state opened */
    uint32_t nsession[MDL_PARTS_MAX];
    mdl_replay_request *requests;      /* in arrival order */
    uint32_t nrequests;
    sim_time *relaunch;                /* the user's delays before reopening */
    uint32_t nrelaunch;
    sim_time *restart;                 /* the service process's drawn restart delays */
    uint32_t nrestart;
} mdl_replay;

/* One cell of the grid: what a replication runs.  Every pointer is
 * borrowed and must outlive the run. */
typedef struct mdl_cell {
    const mdl_device *device;
    const mdl_candidate *candidate;
    const mdl_candidate *lkg; /* its last_known_good, when the scenario has it; NULL */
    const mdl_replay *replay; /* a trace-driven run: costs from a recording; NULL */
    const mdl_workload *workload;
    mdl_policy policy;
    sim_time horizon;
    uint64_t seed;
} mdl_cell;

/* The device as the cell's policy puts it in force: with the entitlement
 * (policy `entitlement: increased_memory_limit`), a jetsam device's
 * foreground and background limits are raised to its entitled_limit. */
void mdl_device_in_force(const mdl_device *d, const mdl_policy *p, mdl_device *out);
/* mdl_kill_line of the cell's device as its policy puts it in force. */
int64_t mdl_cell_kill_line(const mdl_cell *c, int foreground);
/* The same for the process the model runs in: with `processes` on lmk's
 * minfree levels, the service's line at the adj its binding gives it with
 * the app in front (1) or in the background (0); else mdl_cell_kill_line. */
int64_t mdl_cell_model_line(const mdl_cell *c, int foreground);

/* Receives each completed request's wait and latency (us), for the pooled
 * quantiles; called from the replication's own thread. */
typedef struct mdl_times_sink {
    void (*fn)(void *ctx, sim_time wait, sim_time latency);
    void *ctx;
    /* optional (may be NULL): each request the user makes (a first
     * submission, not a retry), at its arrival time */
    void (*arrival)(void *ctx, sim_time t);
} mdl_times_sink;

/* Requests in the system (queued, waiting or running) at once, per
 * replication: beyond it the replication fails with SIM_ELIMIT rather
 * than grow without bound (an unbounded queue that never drains). */
#define MDL_REQUESTS_IN_SYSTEM_MAX 100000u

/* The record a death leaves (docs/model.md "Exit records"): Android's
 * ApplicationExitInfo, or on iOS a JetsamEvent, a crash report, or a
 * watchdog termination. */
typedef enum mdl_record_kind {
    MDL_REC_EXIT_INFO = 0,    /* Android ApplicationExitInfo */
    MDL_REC_JETSAM,           /* iOS JetsamEvent, reason per-process-limit */
    MDL_REC_JETSAM_PAGESHORTAGE, /* iOS JetsamEvent, reason vm-pageshortage */
    MDL_REC_WATCHDOG,         /* iOS watchdog termination (0x8badf00d) */
    MDL_REC_CRASH,            /* iOS EXC_CRASH / EXC_BAD_ACCESS crash report */
    MDL_REC_JETSAM_SYSTEM,    /* iOS JetsamEvent, another system cause (idle-exit,
                                 fc-thrashing, vm-compressor-...: the record's jetsam) */
    MDL_REC_KIND_COUNT
} mdl_record_kind;

/* Android ApplicationExitInfo reason codes used here. */
enum {
    MDL_AEI_SIGNALED = 2,
    MDL_AEI_LOW_MEMORY = 3,
    MDL_AEI_CRASH = 4,
    MDL_AEI_CRASH_NATIVE = 5,
    MDL_AEI_ANR = 6
};

/* The description classes of the records the model writes: plain values,
 * so a replication's metrics hold no pointer and can cross processes (the
 * ranks of an MPI job). */
typedef enum mdl_record_text {
    MDL_TEXT_NONE = 0,
    MDL_TEXT_WATCHDOG,        /* iOS scene-create watchdog */
    MDL_TEXT_IOS_SEGV,        /* iOS EXC_BAD_ACCESS in the delegate */
    MDL_TEXT_JETSAM_PAGESHORTAGE, /* iOS page shortage, idle band (background) */
    MDL_TEXT_JETSAM,          /* iOS over the per-process limit, foreground or background */
    MDL_TEXT_JAVA_OOM,        /* Android crash: OutOfMemoryError */
    MDL_TEXT_NATIVE_ABRT,     /* Android crash_native: SIGABRT in the delegate */
    MDL_TEXT_ANR,             /* Android anr */
    MDL_TEXT_LMKD,            /* Android low memory: lmkd kill */
    MDL_TEXT_SIGNALED,        /* Android signaled 9, no low-memory reporting */
    MDL_TEXT_JETSAM_SYSTEM,   /* iOS JetsamEvent of another system cause (the record's jetsam) */
    MDL_TEXT_ANR_SERVICE,     /* Android anr of a service process: a callback past its timeout */
    MDL_TEXT_COUNT
} mdl_record_text;

/* The description a record of class t carries ("" for MDL_TEXT_NONE). */
const char *mdl_record_text_name(mdl_record_text t);

typedef struct mdl_exit_record {
    mdl_record_kind kind;
    mdl_exit cls;             /* the model's class of the death */
    int reason;               /* ApplicationExitInfo reason (Android), 0 on iOS */
    int status;               /* exit status or signal number */
    int importance;           /* 100 foreground, 400 cached (background) */
    int64_t pss_kb, rss_kb;   /* Android: the last periodic sample, 0 before the first;
                                 iOS: the footprint at the kill */
    sim_time time;            /* timestamp */
    mdl_stage stage;          /* not in the record: the stage running, for the tests */
    mdl_record_text description; /* its description class */
    mdl_lmkd_reason lmkd;     /* Android lmk kills in PSI mode: lmkd's reason */
    int kernel_oom;           /* Android: the kernel's OOM killer, not lmkd */
    mdl_jetsam_cause jetsam;  /* iOS JetsamEvent: XNU's cause (per-process-limit, ...) */
} mdl_exit_record;

const char *mdl_record_kind_name(mdl_record_kind k);
const char *mdl_aei_reason_name(int reason);

/* Records kept verbatim per replication; the later ones are counted by
 * kind (mdl_rep.record_kinds), never dropped from the figures. */
#define MDL_RECORDS_KEPT 16
/* A distinct record signature and how many deaths left it. */
typedef struct mdl_record_kind_count {
    mdl_record_kind kind;
    int reason, status, importance;
    mdl_record_text description;
    uint32_t count;
    int64_t pss_kb_sum;
    mdl_lmkd_reason lmkd;
    mdl_jetsam_cause jetsam;
} mdl_record_kind_count;
#define MDL_RECORD_KINDS_MAX 24

#define MDL_SLOWDOWN_BUCKETS 128
/* The bucket of a slowdown ratio (>= 1), and a bucket's geometric middle. */
unsigned mdl_slowdown_bucket(double ratio);
double mdl_slowdown_middle(unsigned bucket);
#define MDL_COUNTED_BUCKETS MDL_SLOWDOWN_BUCKETS
/* The bucket of a counted size in bytes (1 MiB and up), and its middle in bytes. */
unsigned mdl_counted_bucket(int64_t bytes);
double mdl_counted_middle(unsigned bucket);

/* What one replication measured (docs/results.md, per replication). */
typedef struct mdl_rep {
    int64_t peak;                       /* peak.app_bytes */
    mdl_stage peak_stage;               /* MDL_STAGE_NONE: nothing allocated */
    int64_t stage_peak[MDL_STAGE_COUNT]; /* -1: stage never allocated */
    uint32_t deaths[MDL_EXIT_COUNT];
    uint32_t deaths_total;
    int boot_loop;                      /* two consecutive start-up deaths */
    mdl_exit first_death;               /* valid when deaths_total > 0 */
    mdl_stage first_death_stage;
    sim_time first_death_time;
    int64_t first_death_counted;        /* counted memory at that death */
    int first_death_foreground;         /* the app was in the foreground then */
    int64_t first_death_hot;            /* mapped weights read at every inference, resident then */
    /* The margin: the smallest headroom under the kill line at any kill
     * check (mdl_kill_line for the app's state, less the counted bytes and
     * any pressure spike); negative once the app crossed it.  INT64_MAX
     * when nothing was ever checked (or no lmk level applies). */
    int64_t min_margin;
    uint64_t arrived, completed, rejected, lost, failed;
    uint64_t timed_out, retried, duplicates; /* duplicates: duplicate_working_sets */
    uint64_t switches;                  /* on-demand part loads (not start-up) */
    int64_t switch_peak;                /* counted peak while one ran; -1: none */
    uint32_t candidate_switches;        /* relaunches onto the last known good */
    uint32_t safe_mode_starts;          /* cold starts in safe mode */
    uint32_t delegate_failures;         /* delegate_prepare failures (unavailable included) */
    uint32_t deaths_by_lmkd[MDL_LMKD_COUNT]; /* lmk deaths by lmkd's reason */
    uint32_t deaths_by_jetsam[MDL_JETSAM_COUNT]; /* iOS page model: the app's deaths by cause */
    uint32_t jetsam_kills[MDL_JETSAM_COUNT];     /* ... memorystatus's kills of any process */
    uint32_t visible_memory_deaths;     /* low_memory deaths while in the foreground */
    mdl_exit_record records[MDL_RECORDS_KEPT]; /* the first deaths' records */
    unsigned nrecords;
    mdl_record_kind_count record_kinds[MDL_RECORD_KINDS_MAX];
    unsigned nrecord_kinds;
    uint64_t deaths_unrecorded;   /* deaths on a phone that keeps no exit record */
    uint64_t warnings, cached_kills, pressure_spikes;
    /* Android in PSI mode: the phone's pages (models/pages.c) */
    uint64_t successor_kills, lmkd_kills_of_others, kernel_oom_kills, lmkd_wakeups;
    /* owners (docs/model.md "Owners"): how long parts stayed resident after
     * a page that needed them left, us; sessions an owner never released */
    sim_time held_after_leave_us;
    uint64_t leaked_sessions;
    /* processes (docs/model.md "Processes"), when the model runs in a
     * service process: its deaths (within deaths_total), the requests that
     * failed because it was down, its time alive (alive_us is then the main
     * process's, accepting_us the service's, alive and accepting) */
    uint32_t svc_deaths;
    uint64_t svc_failed;
    sim_time svc_alive_us;
    uint32_t lmkd_decided[MDL_LMKD_COUNT]; /* lmkd's wake-ups by the reason decided */
    int64_t thrashing_max;              /* lmkd's thrashing percent, the highest seen */
    int64_t swap_used_max;              /* zram's use, uncompressed bytes */
    int64_t min_free;                   /* the lowest free pages less low; INT64_MAX: none */
    int64_t refault_bytes;              /* the app's weights read back */
    sim_time psi_some_us;               /* memory stall of some task */
    uint64_t page_events;               /* kswapd's looks and lmkd's polls fired */
    /* inference time over its time without refaults and stalls, by
     * bucket: k holds ratios in [2^(k/8), 2^((k+1)/8)) (mdl_slowdown_bucket) */
    uint32_t slowdown[MDL_SLOWDOWN_BUCKETS];
    /* the app's counted bytes at its lmkd deaths, by bucket: k holds
     * [2^(k/8), 2^((k+1)/8)) MiB (mdl_counted_bucket) */
    uint32_t lmkd_counted[MDL_COUNTED_BUCKETS];
    sim_time alive_us;                  /* time alive within the horizon */
    sim_time accepting_us;              /* alive and accepting inference */
    double queue_area;                  /* integral of waiting requests, request x us */
    double wait_sum, latency_sum;       /* over completed requests, us */
    uint32_t leaks;                     /* owners still holding after teardown */
    uint64_t events;                    /* engine events fired */
    int64_t file_peak;                  /* the app's mapped file pages at their highest */
    /* generation parts (docs/results.md "generation") */
    uint64_t gen_requests;              /* requests decoded to their end */
    uint64_t context_overflow;          /* requests cut to their KV region, or refused */
    uint64_t kv_lines;                  /* KV lines met (a check where the KV crossed one) */
    int64_t kv_peak;                    /* the KV cache charged at its highest, bytes */
    uint64_t tokens_out;                /* tokens decoded by requests that ended ... */
    sim_time decode_us;                 /* ... in this much decode time */
    uint32_t ttft[MDL_SLOWDOWN_BUCKETS]; /* time to first token by bucket of 10 ms (mdl_ttft_bucket) */
    uint32_t tps[MDL_SLOWDOWN_BUCKETS];  /* decode tokens per second by bucket (mdl_tps_bucket) */
} mdl_rep;

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
/* A JetsamEvent as memorystatus writes it at the app's death (the iOS
 * page model): the pages, and every process with its band and pages, the
 * ones killed in the same pass with their cause. */
typedef struct mdl_jetsam_proc {
    int band;
    int64_t resident, compressed; /* bytes: in RAM (file pages of the app included), compressed */
    int64_t lifetime_max;         /* the most it held (the app: its counted peak) */
    int app, successor;           /* the app; the app the user switched to */
    mdl_jetsam_cause killed;      /* killed in this pass, with this cause; NONE: listed */
} mdl_jetsam_proc;
#define MDL_JETSAM_PROCS (MDL_OTHERS_MAX + 2)
typedef struct mdl_jetsam_event {
    sim_time time;
    mdl_jetsam_cause cause;       /* the app's */
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
