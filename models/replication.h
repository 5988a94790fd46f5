/* replication.h - one replication of one cell: a recorded session's costs
 * for a trace-driven run, the cell, the sinks of its times and events, the
 * exit records and the replication's metrics (mdl_rep), a part of
 * models.h's interface kept in its own header.  Included by models.h after
 * the types it uses; include models.h, not this. */
#ifndef OOMSIM_MODELS_REPLICATION_H
#define OOMSIM_MODELS_REPLICATION_H

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
    /* optional (may be NULL): each LLM request that ended, its time to
     * first token (us) and its decode rate (tokens/s; -1 when it decoded
     * nothing), for the exact quantiles (docs/results.md "generation") */
    void (*gen)(void *ctx, sim_time ttft, double tokens_per_s);
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
    MDL_REC_METRICKIT,        /* iOS, no JetsamEvent (a kill in the idle band): MetricKit's
                                 background memory-pressure exit count is all there is */
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
    MDL_TEXT_METRICKIT,       /* iOS: counted in MetricKit's background exits, no report */
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
    uint32_t background_memory_deaths;  /* low_memory or system_reclaim deaths while in the
                                           background (MetricKit's background memory exits) */
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
    uint64_t gen_started;               /* requests that reached a KV region */
    uint64_t kv_lines;                  /* KV lines met (a check where the KV crossed one) */
    int64_t kv_peak;                    /* the KV cache charged at its highest, bytes */
    uint64_t tokens_out;                /* tokens decoded by requests that ended ... */
    sim_time decode_us;                 /* ... in this much decode time */
    uint32_t ttft[MDL_SLOWDOWN_BUCKETS]; /* time to first token by bucket of 10 ms (mdl_ttft_bucket) */
    uint32_t tps[MDL_SLOWDOWN_BUCKETS];  /* decode tokens per second by bucket (mdl_tps_bucket) */
} mdl_rep;

#endif /* OOMSIM_MODELS_REPLICATION_H */
