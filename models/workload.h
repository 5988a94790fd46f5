/* workload.h - the user's path, its requests and the owners of the
 * model's sessions (docs/scenarios.md "Workload" and "Owners"), a part of
 * models.h's interface kept in its own header.  Included by models.h after
 * the types it uses; include models.h, not this. */
#ifndef OOMSIM_MODELS_WORKLOAD_H
#define OOMSIM_MODELS_WORKLOAD_H

/* --------------------------------------------------------------- workload */

/* One requests step (docs/model.md, docs/scenario-loader.md). */
typedef struct mdl_requests {
    int poisson;              /* 1: `rate` (exponential gaps); 0: `every` or `after_answer` */
    int closed;               /* 1: `after_answer`: each after the previous one's end */
    mdl_dist think;           /* closed: the user's time from an answer's end to the next */
    double mean_gap_us;       /* poisson; closed: the think time's mean (estimates) */
    sim_time every;           /* fixed interval */
    sim_time duration;        /* `for`; with `count` and `every`: count x every */
    uint64_t count;           /* 0: the step lasts `duration` */
    char needs[MDL_PARTS_MAX][MDL_NAME_MAX]; /* part names, in order */
    unsigned nneeds;          /* 0: every part of the candidate, in listed order */
    mdl_amounts payload;      /* held from arrival until the request leaves */
    uint32_t holder;          /* its owner: an index in workload.holders, MDL_NO_HOLDER none */
} mdl_requests;

/* Who holds sessions of the model (a scenario's `owners`, docs/scenarios.md
 * "Owners"): a page while the user is on it, a background task while it
 * runs, a service while its process lives.  Each holds `sessions` session
 * states of each part it needs; a part stays loaded while any owner holds
 * one.  (The ledger's mdl_owner is who holds memory: another thing.) */
typedef enum mdl_holder_kind {
    MDL_HOLDER_PAGE = 0,
    MDL_HOLDER_TASK,
    MDL_HOLDER_SERVICE
} mdl_holder_kind;

#define MDL_HOLDERS_MAX 32u
#define MDL_HOLDER_SESSIONS_MAX 64u
#define MDL_NO_HOLDER UINT32_MAX

typedef struct mdl_holder {
    char name[MDL_NAME_MAX];
    mdl_holder_kind kind;
    uint32_t page;            /* PAGE: the page's index in workload.pages */
    char page_name[MDL_NAME_MAX]; /* PAGE: as the file names it */
    mdl_dist every;           /* TASK: from one run's end (or the start) to the next run */
    sim_time runs;            /* TASK: how long a run lasts */
    uint32_t sessions;        /* session states of each part it needs */
    char needs[MDL_PARTS_MAX][MDL_NAME_MAX]; /* part names, in order */
    unsigned nneeds;          /* 0: every part of the candidate */
    int releases;             /* 0: it never closes its sessions (the leak) */
} mdl_holder;

/* A process of the app besides its main one (a scenario's `processes`,
 * docs/scenarios.md "Processes"): a service bound by the main process, in
 * which the model runs; its clients (pages, tasks) hold their sessions
 * there.  One such process is modelled; the loader reads up to
 * MDL_PROCS_MAX to refuse a cycle of bindings by name. */
#define MDL_PROCS_MAX 8u
typedef struct mdl_process {
    char name[MDL_NAME_MAX];  /* its exit records name it PACKAGE:name */
    mdl_dist restart;         /* the client is bound again this long after the service died */
    int waive_priority;       /* BIND_WAIVE_PRIORITY: the binding lends it no importance */
    int important;            /* BIND_IMPORTANT: it takes its client's adj, foreground too */
    int has_baseline;
    mdl_amounts baseline;     /* `app.processes.NAME.baseline`, drawn at each of its starts */
} mdl_process;

typedef enum mdl_step_kind {
    MDL_STEP_COLD_START = 0,
    MDL_STEP_ENTER,
    MDL_STEP_LEAVE,
    MDL_STEP_REQUESTS,
    MDL_STEP_BACKGROUND,
    MDL_STEP_UPDATE
} mdl_step_kind;
/* What an update step replaces (mdl_step.index). */
enum { MDL_UPDATE_OS = 0, MDL_UPDATE_RUNTIME };

/* One step of the user path, `repeat` blocks already unrolled. */
typedef struct mdl_step {
    mdl_step_kind kind;
    uint32_t index;    /* ENTER/LEAVE: page index; REQUESTS: index in requests[];
                          UPDATE: MDL_UPDATE_* */
    sim_time duration; /* BACKGROUND */
    uint32_t hold;     /* ENTER: index in workload.holds, or MDL_NO_HOLD */
} mdl_step;

/* What a plan must meet to be shippable (a scenario's `target`): the upper
 * end of a cell's 95 % interval of the share of replications with a death
 * below `deaths`, its request latency p95 at most `latency_p95`, and at
 * least the share `completed` of its requests completed.  An
 * unset criterion is not checked; `set` is 0 when the scenario has none. */
typedef struct mdl_target {
    int set;
    int has_deaths;
    double deaths;        /* a share, in (0, 1] */
    sim_time latency_p95; /* 0: not checked */
    int has_completed;
    double completed;     /* the least share of the requests made that complete, in (0, 1] */
    /* an LLM's requests (docs/scenarios.md "target") */
    sim_time ttft;        /* the most time to first token at quantile ttft_q; 0: not checked */
    int ttft_q;           /* 0: p50, 1: p95 */
    double tokens_per_s;  /* the least decode rate at quantile tps_q; 0: not checked */
    int tps_q;            /* 0: p50, 1: p5 */
    int has_overflow;
    double overflow;      /* the most share of the LLM requests the context may cut, in [0, 1] */
} mdl_target;

/* What the fleet observed of a device (a scenario's `field` entries,
 * docs/field.md): the share of users (device-days) with at least one
 * memory death while the app was visible, over `users`, and how many
 * sessions such a user has a day.  A device is named, or every device of
 * the plan with `ram` bytes (a RAM bucket). */
typedef enum mdl_field_metric { MDL_FIELD_LMK_RATE = 0, MDL_FIELD_MEMORY_EXIT_RATE,
                                MDL_FIELD_METRICS } mdl_field_metric;
typedef struct mdl_field {
    char device[MDL_NAME_MAX]; /* "" when the entry is a RAM bucket */
    int64_t ram;               /* the bucket: devices of exactly this RAM (0: by name) */
    mdl_field_metric metric;
    double rate;               /* in [0, 1] */
    int has_background;        /* background_rate given */
    double background_rate;    /* the share with a memory exit while in the background */
    uint64_t users;
    double sessions_per_day;
    char source[MDL_NAME_MAX * 2]; /* where the number came from ("" when not said) */
} mdl_field;
#define MDL_FIELD_MAX 256
const char *mdl_field_metric_name(mdl_field_metric m);

#define MDL_STEPS_MAX 100000u /* path steps once `repeat` is unrolled */
#define MDL_NO_HOLD UINT32_MAX
#define MDL_HOLDS_MAX 1000u

typedef struct mdl_workload {
    mdl_step *steps;          /* owned by whoever built it (scenarios/) */
    uint32_t nsteps;
    mdl_requests *requests;
    uint32_t nrequests;
    char (*pages)[MDL_NAME_MAX]; /* names of enter/leave markers */
    uint32_t npages;
    int has_relaunch;
    mdl_dist relaunch;        /* user reopens the app this long after a death */
    sim_time timeout;         /* the client gives up on an attempt after this; 0: never */
    int has_app;
    mdl_amounts app;          /* the app's own memory, drawn at each cold start (`app.baseline`) */
    char version[MDL_TEXT_MAX]; /* the app's version its exit records name (`app.version`) */
    char package[MDL_PACKAGE_MAX];    /* Android: its processes' names (`app.package`) */
    char executable[MDL_PACKAGE_MAX]; /* iOS: the process's name (`app.executable`) */
    mdl_amounts *holds;       /* what `enter` steps hold while on their page */
    uint32_t nholds;
    mdl_holder *holders;      /* `owners`, in file order (NULL: none, one implicit owner) */
    uint32_t nholders;
    int has_proc;             /* `processes`: the model runs in `proc`, not the main process */
    mdl_process proc;
    mdl_owned owned;          /* empirical values the loader allocated */
} mdl_workload;

#endif /* OOMSIM_MODELS_WORKLOAD_H */
