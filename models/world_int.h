/* world_int.h - the state of one replication's world, shared by the files
 * of models/ that run it.  Internal: nothing outside models/ includes it
 * but the tests of the world checker.
 *
 * The state is split by lifetime, as SQLite's btreeInt.h splits a btree
 * from its shared pages and Lua splits lua_State from global_State:
 *
 *   world        what the replication is: the cell, the engine, the ledger,
 *                the streams, the sinks, the candidate in force
 *   w_proc       what lives for one app process: its parts, its requests in flight
 *                and their queue, its flags (proc_reset() empties it at a death)
 *   w_store      what outlives every process: the arrays the process's
 *                requests and queue are kept in, each part's definition
 *                and ledger owners
 *   w_life       what survives deaths: the recovery state, the start-up death
 *                count, the scheduled relaunch, the cache's and phone's versions
 *   w_limits     what the policy, the recovery and the warnings allow now
 *   w_devstate   the device around the app: the other apps' cached memory
 *   w_path       the user's path and its arrivals
 *   w_cursors    where a trace-driven run stands in each recorded list
 *
 * Who may change what:
 *   world.c      everything, at setup and teardown only; the candidate in force
 *                (configure_candidate, between lives); reads all in the checker
 *   charge.c     the ledger (charge, give), dstate.cached (through the kill
 *                rules of kill.c, pure)
 *   kill.c       nothing: the kill rules (kill_lmk.c, kill_jetsam.c, included)
 *                and the device's queries are pure
 *   warning.c    warn_level (at setup), proc.warned, proc.warn_active, and
 *                what on_warning releases (through give and release)
 *   exitrec.c    out's exit-record tables (the record itself is pure)
 *   recovery.c   nothing but the mdl_recovery_state handed to it
 *   costs.c      the cursors, and the streams it draws from
 *   parts.c      proc.parts' states, phases and memory arrays, proc.switching,
 *                part.on_delegate (and the device's refusals of a delegate_prepare)
 *   pool.c       store's pools (growing them) and proc.users_free
 *   requests.c   the attempts and requests in the pools, proc's queue and
 *                running count, the parts' busy and idle-session counts and
 *                wait lists, proc.dispatching (and iOS's background GPU
 *                denial of executions)
 *   process.c    proc (start and death: proc_reset zeroes it whole, which
 *                also empties page_held; the app baseline, proc.app), life, lim
 *   path.c       path, and a new request's record in store.users; the background
 *                life: dstate.successor, proc.aged; the pages' holds (page_held,
 *                through charge and give); an update's life.os_ver, rt_ver
 *   emit.c       the event being built (world.ev), and the session slots the
 *                timeline numbers executions by (part.slots, req.slot)
 *
 * The hazard of this model: the process may die under you.  Any call that
 * allocates memory (charge) or moves the process on (advance, dispatch,
 * begin_load, start_phase, part_ready, new_condition, submit, kill_check)
 * can kill the process; a death resets w_proc, so every pointer into it
 * (a part, a request) is stale afterwards.  Such calls either return a
 * w_fate that the compiler makes the caller read (W_MAY_KILL), or the
 * caller compares the epoch before and after (`still(w, epoch)`).  Events
 * carry the process epoch in the high half of their argument: the events of
 * a dead process fire as no-ops instead of being hunted down and cancelled.
 */
#ifndef OOMSIM_MODELS_WORLD_INT_H
#define OOMSIM_MODELS_WORLD_INT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <gsl/gsl_rng.h>

#include "models.h"
#include "pages.h"
#include "generate.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Stream purposes: fixed numbers, never derived from the cell (common random
 * numbers across the policies of a grid, docs/design/rng.md). */
enum {
    PURPOSE_DEVICE = 1,   /* cached apps at start */
    PURPOSE_ARRIVALS = 2, /* request gaps */
    PURPOSE_REQUESTS = 3, /* payloads, inference times, working sets */
    PURPOSE_STAGES = 4,   /* stage times and amounts, session states */
    PURPOSE_FAILURES = 5, /* delegate failures and crashes, cache hits */
    PURPOSE_RELAUNCH = 6, /* the user's delay before reopening the app */
    PURPOSE_PRESSURE = 7, /* background pressure spikes */
    PURPOSE_RETRY = 8,    /* backoff jitter (docs/model.md: why not the failures stream) */
    PURPOSE_APP = 9,      /* the app's baseline, page holds and the successor app */
    PURPOSE_OWNERS = 10   /* the owners' background tasks: the gaps between runs */
};

/* At equal times: releases, kill timers, arrivals, path steps (so the last
 * arrival of a step happens inside it), device pressure. */
enum { PRIO_RELEASE = 0, PRIO_TIMER = 1, PRIO_ARRIVAL = 2, PRIO_PATH = 3, PRIO_PRESSURE = 4 };

/* A part's state in the process. */
enum {
    P_UNLOADED = 0, /* holds nothing */
    P_LOADING,      /* a phase runs (or, release_first, waits for room: deferred) */
    P_READY,        /* loaded and prepared: executions may run on it */
    P_FAILED        /* its delegate failed with no fallback, or its cache was outdated:
                       unusable in this process */
};
/* The phase a loading part is in. */
enum {
    PH_LOAD = 0,    /* reading the file (mmap, copy or decompress) */
    PH_PREPARE,     /* runtime_prepare (and the cache rebuild on a miss) */
    PH_DELEGATE,    /* delegate_prepare */
    PH_FALLBACK     /* the fallback's prepare after a failed delegate */
};
/* An attempt's state. */
enum {
    R_QUEUED = 0,   /* in the FIFO, no execution slot */
    R_WAITING,      /* holds a slot, waits on a part's wait list */
    R_RUNNING       /* holds a slot, executing (or between two parts) */
};

#define NIL UINT32_MAX
/* oom_score_adj of the app in the foreground and in the background
 * (ProcessList.java: FOREGROUND_APP_ADJ 0, PREVIOUS_APP_ADJ 700). */
#define APP_ADJ_FOREGROUND 0
#define APP_ADJ_BACKGROUND 700
#define APP_ADJ_CACHED 900 /* ... once in the background past previous_ttl (CACHED_APP_MIN_ADJ) */
/* ... in the background while a task owner's job runs: its binding
 * (BIND_NOT_PERCEPTIBLE) gives PERCEPTIBLE_LOW_APP_ADJ (owners.c) */
#define APP_ADJ_JOB 250
/* ... its service bound from the front: VISIBLE_APP_ADJ (computeServiceHostOomAdjLSP) */
#define APP_ADJ_VISIBLE 100
#define APP_ADJ_PERCEPTIBLE 200

#if defined(__GNUC__)
#define W_MAY_KILL __attribute__((warn_unused_result))
#else
#define W_MAY_KILL
#endif

/* What a call that may end the process returns.  W_LIVES is SIM_OK. */
typedef enum w_fate {
    W_LIVES = 0, /* the process lives on: carry on */
    W_GONE = 1   /* it died, or the replication failed (w->rc): return at once */
} w_fate;


typedef struct part_rt {
    uint8_t state, phase;             /* P_*, PH_* */
    uint8_t release_pending;          /* evicted while executing: goes when idle */
    uint8_t cache_done;               /* its cache was rebuilt in this process */
    uint8_t on_demand;                /* this load is a switch (counted in switching) */
    uint8_t on_delegate;              /* ready on the delegate (not the fallback) */
    uint8_t hot;                      /* its file counts in proc.hot */
    uint8_t deferred;                 /* release_first: waits for room (1 start-up, 2 on demand) */
    uint8_t unwanted;                 /* owners: its last owner closed while it loaded */
    uint32_t serial;                  /* bumped at every phase start (ANR timers) */
    int64_t transient[MDL_CAT_COUNT]; /* held by the running phase */
    int64_t cache_tr[MDL_CAT_COUNT];  /* cache-miss transient (cache owner) */
    int64_t failed_tr[MDL_CAT_COUNT]; /* failed delegate's transient, kept with overlap */
    int64_t delegate_res[MDL_CAT_COUNT]; /* delegate_prepare's resident, within resident */
    int64_t resident[MDL_CAT_COUNT];  /* all resident bytes, delegate_res included */
    int64_t prepare_res[MDL_CAT_COUNT]; /* what copy_runtime copies into each session */
    mdl_stage phase_stage;
    uint32_t busy;                    /* executions running on it */
    uint32_t sess_idle;               /* session states open and unused */
    uint64_t last_use;                /* LRU clock at its last use */
    uint32_t wait_head, wait_tail;    /* attempts waiting for READY, linked by req.next */
    uint64_t slots[MDL_SESSIONS_MAX / 64]; /* session slots executing (the timeline's ids) */
    /* generation: the context (compute, a reserved KV) is made (its KV
     * regions are in world.gslots), unload_after's timer */
    uint8_t ctx_open;
    uint8_t unload_armed;             /* unload_after's timer is pending */
    int64_t ctx_kv;                   /* the reserved KV charged at the context's creation */
    sim_time idle_since;              /* unload_after: idle from then */
} part_rt;

/* What a request draws at arrival, alive or not, so every policy sees the
 * same request k.  Its retries reuse the draws (a new attempt of the same
 * request), each with a payload of its own. */
typedef struct req_draw {
    int64_t payload[MDL_CAT_COUNT];
    int64_t time[MDL_PARTS_MAX];
    int64_t ws[MDL_PARTS_MAX][MDL_CAT_COUNT]; /* working set + output */
    /* generation parts: prompt and output tokens, prefill and decode us
     * per token (at speed 1) */
    uint32_t gen[MDL_PARTS_MAX][4];
} req_draw;

/* A request of the user: its draws, and its attempts (the first
 * submission and the retries after timeouts). */
typedef struct user {
    req_draw d;
    sim_time first;       /* the first submission (latency counts from here) */
    uint32_t live;        /* attempts in the system */
    uint32_t retries;     /* retries made */
    uint32_t next;        /* free list / parked list */
    uint64_t id;          /* the timeline's request id */
    uint8_t needs[MDL_PARTS_MAX]; /* part indices, in order */
    uint8_t in_use, nneeds;
    uint8_t waiting;      /* a retry is scheduled or parked */
    uint32_t holder;      /* its owner (workload.holders), MDL_NO_HOLDER: none */
} user;

/* A session state an owner holds (owners.c): its part, its owner, its
 * memory (charged to the part's session owner), what ran on it last. */
typedef struct w_session {
    int64_t amount[MDL_CAT_COUNT];
    int64_t last_req;     /* the timeline's id of its last request, -1: none */
    sim_time opened;
    uint32_t id;          /* the timeline's session id, counted per process */
    uint8_t in_use, part, holder;
    uint8_t busy;         /* an execution runs on it */
    uint8_t leaked;       /* its owner closed without releasing it */
    uint8_t closing;      /* its owner closed while it was busy: closes at the end */
} w_session;

/* One attempt: what is queued, waits for a part or executes. */
typedef struct req {
    sim_time arrival, start; /* start: the first execution (the end of the wait), -1 before */
    mdl_owner owner;      /* holds its payload and its working set while executing */
    uint32_t next;        /* waiter list / free list */
    uint32_t user;
    sim_handle timer, exec;
    uint8_t in_use, state; /* state: R_* */
    uint8_t idx;          /* the need it is at */
    uint8_t nneeds;
    uint8_t orphan;       /* timed out: the client no longer waits for it */
    uint32_t hsess;       /* the owner's session it executes on (owners.c), NIL: none */
    uint8_t has_timer, has_exec;
    uint16_t slot;        /* its session slot while executing (timeline only) */
    uint8_t gslot;        /* generation: its KV region while executing */
    uint8_t needs[MDL_PARTS_MAX];
} req;

/* One app process.  proc_reset() (process.c) returns it to "no process". */
typedef struct w_proc {
    part_rt parts[MDL_PARTS_MAX];
    int alive, fg;        /* fg: in the foreground */
    int startup_done;     /* the start-up list is loaded (or skipped) */
    unsigned startup_next; /* the start-up list's next entry */
    int startup_skip;     /* safe mode or stop_prewarm: no start-up model work */
    int degraded;         /* degrade_cpu: no delegate, the CPU path */
    int cache_valid;      /* the compiled cache was found valid at this start */
    int cache_outdated;   /* ... though built under a version its key omits: prepare fails */
    sim_time alive_since, accept_since; /* accept_since: alive and accepting since */
    uint32_t switching;   /* on-demand loads in progress */
    int warned;           /* below warning_at as last heard (edge-triggered) */
    int warn_active;      /* on_warning actions in force */
    int64_t sample_pss_kb, sample_rss_kb; /* the last periodic sample, 0 before one */
    int aged;             /* lmk: in the background past previous_ttl (adj 900) */
    int64_t hot;          /* file bytes of hot parts, from their load's end to release */
    mdl_lmkd_reason lmkd; /* the kill about to be recorded: lmkd's reason */
    int kernel_oom;       /* ... or the kernel's OOM killer's */
    mdl_jetsam_cause jetsam; /* ... or memorystatus's cause (iOS page model) */
    int dispatching;      /* dispatch() runs: a nested call leaves it to the loop */
    int64_t app[MDL_CAT_COUNT]; /* the app baseline this process holds */
    /* the attempts and requests in flight, in w_store's arrays */
    uint32_t users_free;  /* free user records */
    uint32_t parked;      /* on_new_condition retries, linked by user.next */
    uint32_t running;     /* attempts holding an execution slot */
    uint32_t q_head, q_len; /* the FIFO in store.q */
    sim_time q_last;      /* the queue-area integral's last mark */
    uint32_t gen_growing; /* KV regions whose resident KV grows now (generate.c) */
    int64_t kv_held;      /* every generation part's KV charged now */
    /* owners (owners.c): who holds sessions now, the session records in
     * use (w_store.sess[0..nsess)), tasks running, and per part the
     * held_after_leave clock */
    uint8_t h_open[MDL_HOLDERS_MAX];
    uint32_t nsess, sess_seq;
    uint32_t tasks;
    uint8_t left[MDL_PARTS_MAX];
    sim_time left_at[MDL_PARTS_MAX];
} w_proc;

/* What outlives every process: the storage the process's records are kept
 * in (their capacity; their contents are the process's, and the pool's
 * free list spans deaths) and each part's identity (its definition and
 * its ledger owners, made at setup). */
typedef struct w_part_id {
    const mdl_part *def;
    mdl_owner owner, sess_owner, leak_owner;
    /* in force (configure_candidate): the policy's generation axes applied
     * (gen: in world.gen_in_force, NULL for a part that does not generate) */
    int file_hot;
    int64_t hot_bytes;
    mdl_generation *gen;
} w_part_id;

typedef struct w_store {
    req *pool;            /* attempts */
    uint32_t pool_cap, free_head;
    user *users;          /* the user's requests */
    uint32_t users_cap;
    uint32_t *q;          /* FIFO ring of attempt indices */
    uint32_t q_cap;
    w_session *sess;      /* the owners' session records (owners.c) */
    uint32_t sess_cap;
    w_part_id part[MDL_PARTS_MAX];
} w_store;

/* What survives the process's deaths. */
typedef struct w_life {
    mdl_recovery_state rec;       /* persisted outside the process, read at cold start */
    uint32_t consec_startup_deaths; /* the boot-loop count */
    int relaunch_pending;         /* the user reopens the app once back in the foreground */
    int relaunch_scheduled;
    sim_handle relaunch_h;
    const mdl_candidate *cache_stale; /* its compiled cache, found invalid, not rebuilt yet */
    /* update steps so far; the versions the cache on disk was built under
     * ([0] the cell's candidate, [1] its last known good) */
    uint32_t os_ver, rt_ver, built_os[2], built_rt[2];
} w_life;

/* The limits in force, derived by apply_limits() at every start and
 * warning change from the policy, the recovery and the warnings; read by
 * the timeline between lives too, so a death leaves them. */
typedef struct w_limits {
    int rejecting;        /* new requests are rejected (on_warning or recovery) */
    uint32_t sess_eff;    /* sessions in force (reduce_concurrency lowers it) */
} w_limits;

/* The app's main process while the model runs in a service process of its
 * own (service.c; docs/model.md "Processes"): w_proc is then the service,
 * and this is its client, which the user sees.  Unused otherwise. */
typedef struct w_main {
    int alive;
    sim_time alive_since;
    int64_t app[MDL_CAT_COUNT]; /* its baseline (app_owner, with the pages' holds) */
    int aged;                   /* past previous_ttl in the background (kept for the service) */
    int restart_scheduled;      /* the service is bound again at restart_h */
    sim_handle restart_h;
    sim_time restart_delay;     /* the last restart's delay (ActiveServices' backoff) */
    int svc_up;                 /* the service finished a start-up in this process's life */
    sim_time svc_started;       /* the service's last start */
    int64_t sample_pss_kb, sample_rss_kb; /* its last periodic sample (with the service's) */
} w_main;

/* The user's path. */
typedef struct w_path {
    int bg;               /* the user has put the app in the background */
    uint32_t bg_seq;      /* background steps begun (previous_ttl's timer) */
    uint32_t step;        /* the step being run */
    const mdl_requests *rq; /* the requests step whose arrivals run */
    uint64_t left;        /* its arrivals still to come (count) */
    sim_time end;         /* its end (duration) */
    uint64_t user_seq;    /* user requests made (their ids in the timeline) */
    uint8_t on_page[MDL_HOLDERS_MAX]; /* owners: the user is on the page owner's page */
    uint32_t rp_next_req; /* a trace-driven run: the next recorded request */
} w_path;

/* A trace-driven run: the next recorded occurrence of each list. */
typedef struct w_cursors {
    uint32_t stage[MDL_PARTS_MAX][MDL_REPLAY_KINDS];
    uint32_t outcome[MDL_PARTS_MAX];
    uint32_t session[MDL_PARTS_MAX];
    uint32_t relaunch, restart;
} w_cursors;

typedef struct mdl_world world;
typedef struct w_holders w_holders;

/* What one phase of a part costs: its time and amounts. */
typedef struct w_stage_cost {
    sim_time time;
    int64_t resident[MDL_CAT_COUNT], transient[MDL_CAT_COUNT];
    int cache_miss;                    /* a runtime_prepare that rebuilds the cache */
    int64_t miss[MDL_CAT_COUNT];       /* its transient (stage cache) */
} w_stage_cost;

/* Where stage costs come from (costs.c): drawn from the candidate's
 * distributions, or taken from a recording (a trace-driven run), chosen
 * once at setup. */
typedef struct w_costs {
    void (*stage)(world *w, unsigned part, int phase, w_stage_cost *out);
    int (*outcome)(world *w, unsigned part); /* MDL_OUTCOME_* of a delegate_prepare */
    void (*session)(world *w, unsigned part, int64_t out[MDL_CAT_COUNT]);
    sim_time (*relaunch)(world *w);          /* the user's delay before reopening */
    sim_time (*restart)(world *w);           /* the service's restart delay (`restart`) */
} w_costs;
extern const w_costs w__costs_drawn, w__costs_recorded;

struct mdl_world {
    /* what the replication is */
    const mdl_cell *cell;
    const mdl_device *dev;
    mdl_device dev_in_force;    /* the cell's device with the policy's entitlement (dev) */
    int64_t warn_level[2];      /* warn below this headroom, background [0] / foreground [1] */
    double speed_cpu, speed_gpu_of_delegate; /* divide drawn durations (1: as drawn) */
    int scaled;                 /* some speed is not 1 */
    int delegate_available;     /* the candidate's delegate exists on this device */
    double dfail[MDL_PARTS_MAX], dcrash[MDL_PARTS_MAX]; /* delegate outcome probabilities */
    int deny_bg_delegate, denying; /* iOS background_gpu: deny with a GPU delegate; stopping one */
    mdl_owner app_owner;        /* the app baseline and the page holds */
    int svc;                    /* the model runs in a service process (wl->proc): w_proc is
                                   it, `main` its client */
    mdl_owner svc_owner;        /* the service process's baseline (svc) */
    w_main main;
    int64_t (*page_held)[MDL_CAT_COUNT]; /* per page: what its enter holds now */
    const mdl_workload *wl;
    const w_holders *hold;      /* the owners (owners.c), NULL: the scenario names none */
    const mdl_policy *pol;
    const sim_alloc *alloc;
    const w_costs *src;
    sim_engine *e;
    mdl_ledger *led;
    sim_stream s_dev, s_arr, s_req, s_stage, s_fail, s_relaunch, s_press, s_retry, s_app, s_own;
    unsigned stream_mask; /* streams initialised, by their order in init_streams */
    mdl_rep *out;
    const mdl_times_sink *times;
    const mdl_trace_sink *trace;
    trc_event ev;         /* the event being built for `trace` */
    sim_error *err;
    int rc;               /* the first failure; the engine is aborted with it */
    int ending;           /* the horizon's teardown: no new events */

    /* the candidate in force (configure_candidate, only between lives) */
    const mdl_candidate *cand;
    unsigned nparts;
    uint8_t *needs_map;   /* nrequests x MDL_PARTS_MAX part indices */
    uint8_t *nneeds_map;
    uint8_t startup[MDL_PARTS_MAX]; /* preload or prewarm, in order */
    unsigned nstartup;
    uint32_t res_cap;     /* parts the residency keeps at once */
    int gen;              /* some part generates tokens (generate.c's hooks are skipped else) */
    /* the generation parts' KV regions, MDL_GEN_SLOTS_MAX a part, allocated
     * when the cell's candidates generate (NULL else: the others' worlds stay
     * small); what dies with the process, cleared with it */
    w_gen_slot *gslots;
    mdl_generation *gen_in_force; /* MDL_PARTS_MAX of them, with gslots */
    mdl_owner cache_owner;
    /* the owners' needs in the candidate in force (owners.c) */
    uint8_t h_needs[MDL_HOLDERS_MAX][MDL_PARTS_MAX];
    uint8_t h_nneeds[MDL_HOLDERS_MAX];

    /* counters that run across lives */
    uint32_t epoch;       /* bumped at every start and death */
    uint64_t lru_clock, req_seq;
    mdl_stage last_stage; /* of the last allocation */
    sim_time exec_extra;  /* the refault of the execution being emitted */
    char kill_log[TRC_LOG_MAX]; /* lmkd's kill line of the app's death being recorded */

    w_proc proc;
    w_store store;
    w_life life;
    w_limits lim;
    w_devstate dstate;
    w_pages pg;
    w_path path;
    w_cursors cur;
};

/* --------------------------------------------------------------- helpers */
static inline sim_time now(const world *w) { return sim_now(w->e); }

/* Part p's identity: its definition and its owners (w_store). */
static inline w_part_id *part_id(world *w, const part_rt *p)
{
    return &w->store.part[p - w->proc.parts];
}
static inline const w_part_id *part_id_of(const world *w, const part_rt *p)
{
    return &w->store.part[p - w->proc.parts];
}

/* The app's oom_score_adj: 0 in the foreground, 700 in the background,
 * 900 once there past previous_ttl; 250 in the background while a task
 * owner's job runs. */
static inline int w__main_adj(const world *w)
{
    return w->proc.fg ? APP_ADJ_FOREGROUND : w->proc.tasks > 0 ? APP_ADJ_JOB
           : w->proc.aged ? APP_ADJ_CACHED : APP_ADJ_BACKGROUND;
}
/* The adj of the process the model runs in: the app's, or its service
 * process's from its binding (svc): a client under PERCEPTIBLE_APP_ADJ
 * lends at most VISIBLE_APP_ADJ, one at or over it its own adj; an
 * important binding lends the client's adj; a binding that waives
 * priority lends nothing (the process is cached). */
static inline int w__app_adj(const world *w)
{
    int adj = w__main_adj(w);
    if (!w->svc || w->wl->proc.important)
        return adj;
    if (w->wl->proc.waive_priority)
        return APP_ADJ_CACHED;
    return adj < APP_ADJ_VISIBLE ? APP_ADJ_VISIBLE : adj; /* 0 -> 100; 250, 700, 900 kept */
}
/* The app lives: its process (svc: the main one, which outlasts the
 * service's epochs); _lives: the process that had `epoch` still does. */
static inline int w__app_lives(const world *w, uint32_t epoch)
{
    return w->svc ? w->main.alive : w->proc.alive && w->epoch == epoch;
}
static inline int w__app_alive(const world *w)
{
    return w->svc ? w->main.alive : w->proc.alive;
}

static inline uint64_t tag(const world *w, uint32_t index)
{
    return ((uint64_t)w->epoch << 32) | index;
}

/* The event's process is the one alive now. */
static inline int current(const world *w, uint64_t arg)
{
    return w->proc.alive && (uint32_t)(arg >> 32) == w->epoch;
}

/* The process that had `epoch` is still alive. */
static inline int still(const world *w, uint32_t epoch)
{
    return w->proc.alive && w->epoch == epoch;
}

static inline void add_to(int64_t dst[MDL_CAT_COUNT], const int64_t src[MDL_CAT_COUNT])
{
    for (int c = 0; c < MDL_CAT_COUNT; c++)
        dst[c] += src[c];
}

static inline void sample_amounts(const mdl_amounts *a, gsl_rng *r, int64_t out[MDL_CAT_COUNT])
{
    for (int c = 0; c < MDL_CAT_COUNT; c++)
        out[c] = (a->mask & MDL_CAT_BIT(c)) ? mdl_dist_sample(&a->cat[c], r) : 0;
}

/* A drawn duration on a device `f` times as fast (1: as drawn, exactly). */
static inline sim_time scale_time(sim_time t, double f)
{
    return f == 1.0 ? t : (sim_time)((double)t / f + 0.5);
}

/* An execution's time on part p: the delegate's speed while p runs on it,
 * the CPU's otherwise. */
#define EXEC_TIME(w, p, t)                                                                  \
    ((w)->scaled ? scale_time((t), (p)->on_delegate ? (w)->speed_gpu_of_delegate : (w)->speed_cpu) \
                 : (t))

#define TRACING(w) ((w)->trace != NULL && !(w)->ending)

/* The replication fails with rc (the first failure is kept): the engine stops. */
static inline void w__fail(world *w, int rc)
{
    if (w->rc == SIM_OK)
        w->rc = rc;
    sim_abort(w->e, rc);
}
/* Schedules fn at t.  Returns SIM_OK, or the engine's code (the
 * replication failed: w->rc, err set). */
static inline int w__at(world *w, sim_time t, int prio, sim_event_fn fn, uint64_t arg,
                        sim_handle *h)
{
    int rc = sim_schedule(w->e, t, prio, fn, w, arg, h);
    if (rc != SIM_OK) {
        sim_error_set(w->err, rc, "replication: cannot schedule an event (%s)",
                      sim_strerror(rc));
        w__fail(w, rc);
    }
    return rc;
}
/* inforce.c: makes c the candidate in force (at setup, or at a relaunch
 * that switches to the last known good); only while no process runs */
void w__configure_candidate(world *w, const mdl_candidate *c);

/* charge.c: memory.  A stage's allocation (every owner and category it
 * allocates) is one: the Java heap check first, which refuses the whole
 * allocation; then all of it is charged to the ledger (counting toward
 * the peak); then the kill rules run once. */
W_MAY_KILL w_fate w__charge_n(world *w, unsigned n, const mdl_owner *owners,
                              const int64_t *const *amounts, mdl_stage stage);
W_MAY_KILL w_fate w__charge(world *w, mdl_owner o, const int64_t v[MDL_CAT_COUNT],
                            mdl_stage stage);
/* Releases v (and zeroes it), then checks the warning level. */
void w__give(world *w, mdl_owner o, int64_t v[MDL_CAT_COUNT]);
/* Releases everything o holds, then checks the warning level. */
void w__give_owner(world *w, mdl_owner o);
/* The kill rules after memory changed (extra: a pressure spike's bytes,
 * held only for the check). */
W_MAY_KILL w_fate w__kill_check(world *w, int64_t extra, mdl_stage stage);
void w__warning_check(world *w);
/* warning.c: the levels, set up from the device in force; a crossing of
 * the level (below: 1 going under it, 0 coming back over) */
void w__warning_levels(world *w);
void w__warning_edge(world *w, int below);
/* The room after a change: a warning only at a crossing (inlined: it runs
 * after every allocation). */
static inline void w__warning_room(world *w, int64_t room)
{
    if (w->warn_level[1] <= 0)
        return;
    int below = room < w->warn_level[w->proc.fg != 0];
    if (below != w->proc.warned)
        w__warning_edge(w, below);
}
/* requests.c: starts what the free slots and parts allow */
void w__dispatch(world *w);
/* The same after memory was only given back: the room can only have grown,
 * so only a warning in force can end; without one there is nothing to do. */
static inline void w__warning_after_free(world *w)
{
    if (w->proc.warned)
        w__warning_check(w);
}
void w__pressure(sim_engine *e, void *ctx, uint64_t arg);

/* emit.c: the timeline (each does nothing when not tracing) */
void w__emit_note(world *w, int part, mdl_stage stage, const char *what); /* part -1: none */
void w__emit_app(world *w, const char *what, const int64_t amounts[MDL_CAT_COUNT]);
void w__emit_page(world *w, const char *what, const char *page, const int64_t *amounts);
void w__emit_update(world *w, const char *what, int stops); /* stops: it stopped the app */
void w__emit_request_note(world *w, const char *what, uint32_t user_index); /* names it */
void w__emit_stage_begin(world *w, unsigned part, mdl_stage stage, const w_stage_cost *c);
void w__emit_stage_end(world *w, unsigned part, mdl_stage stage, const char *error);
void w__emit_release(world *w, unsigned part);
void w__emit_cache_begin(world *w, unsigned part, const int64_t miss[MDL_CAT_COUNT]);
void w__emit_inference_begin(world *w, part_rt *p, req *r, const int64_t *keep);
void w__emit_inference_end(world *w, part_rt *p, const req *r);
void w__emit_retry(world *w, const user *x);
void w__emit_relaunch_delay(world *w, sim_time delay);
/* The service's drawn restart delay (`restart`, before the backoff), as a
 * "service_restart_delay" note, for a replay */
void w__emit_restart_delay(world *w, sim_time delay);
/* main: the record is the main process's while the model runs in a
 * service process (svc), which names both processes */
void w__emit_exit(world *w, const mdl_exit_record *r, int main);
void w__emit_recovery(world *w);
void w__emit_sample(world *w);
void w__emit_request(world *w, const user *x);
void w__emit_gen(world *w, unsigned part, const char *what, unsigned n, const int *keys,
                 const int64_t *vals);

/* parts.c */
void w__release_part(world *w, part_rt *p);
/* The first attempt on p's wait list, taken off it. */
uint32_t w__pop_waiter(world *w, part_rt *p);
/* Part p's KV regions (a generation part). */
#define GEN_SLOTS(w, p) (&(w)->gslots[(size_t)((p) - (w)->proc.parts) * MDL_GEN_SLOTS_MAX])
#define GEN_SLOTS_BYTES ((size_t)MDL_PARTS_MAX * MDL_GEN_SLOTS_MAX * sizeof(w_gen_slot))
/* Part p generates tokens (a test the hot path makes cheap for the others). */
#if defined(__GNUC__)
#define W_GEN(w, p) __builtin_expect((w)->gen && part_id_of((w), (p))->def->has_generation, 0)
#else
#define W_GEN(w, p) ((w)->gen && part_id_of((w), (p))->def->has_generation)
#endif
/* A generation part runs at most its slots' executions at once. */
static inline int w__part_full(const world *w, const part_rt *p)
{
    return W_GEN(w, p) && p->busy >= part_id_of(w, p)->gen->slots;
}
/* Frees p's session states (and a generation part's context). */
void w__drop_sessions(world *w, part_rt *p);

/* genrun.c: an LLM part's requests */
void w__gen_execute(world *w, uint32_t i, part_rt *p, sim_time refault);
/* The execution of attempt i on generation part p stops (its end, or a
 * cancellation): the KV written so far stays. */
void w__gen_stop(world *w, uint32_t i, part_rt *p);
/* At the end of attempt i's execution on p: its last KV written, charged
 * and checked (the process may die of it). */
W_MAY_KILL w_fate w__gen_settle(world *w, uint32_t i, part_rt *p);
/* A generation part is loaded: its weights by kind, for the timeline. */
void w__gen_loaded(world *w, part_rt *p);
/* Serves p's waiters while it has a free slot. */
void w__gen_wake(world *w, part_rt *p);
/* The KV written up to now, charged (before a kill check reads memory). */
void w__gen_sync(world *w);
/* After a check the app lived: the next KV lines, computed again. */
void w__gen_replan(world *w);
/* The context's memory is gone (sessions dropped, part released). */
void w__gen_close(world *w, part_rt *p);

/* charge.c: the growth of the app's memory the rule in force allows before
 * its verdict or the warning could change: a hard room (an exact line, to
 * be met at its byte; INT64_MAX: none) returned, a soft one (a watermark
 * past which the kernel acts step by step; INT64_MAX: none) in *soft */
int64_t w__growth_room(world *w, int64_t *soft);
void w__exec_end(sim_engine *e, void *ctx, uint64_t arg);
/* requests.c: unload_after's timer on an idle part */
void w__unload_later(world *w, part_rt *p);
W_MAY_KILL w_fate w__begin_load(world *w, part_rt *p, int on_demand);

/* requests.c */
void w__advance(world *w, uint32_t i);
void w__submit(world *w, uint32_t u);
void w__new_condition(world *w);
void w__on_warning(sim_engine *e, void *ctx, uint64_t arg);
void w__queue_area(world *w);
/* pool.c: a free attempt record, the pool grown when none is free (NIL when
 * it is at its bound, or out of memory: w->rc says which) */
uint32_t w__attempt_take(world *w);
/* A free attempt record: the free list's head, inlined (an attempt a
 * request); w__attempt_take when the list is empty. */
static inline uint32_t w__attempt_get(world *w)
{
    uint32_t i = w->store.free_head;
    if (i == NIL)
        return w__attempt_take(w);
    w->store.free_head = w->store.pool[i].next;
    return i;
}
/* a free user request record, the same way */
uint32_t w__user_get(world *w);
/* frees user request u once no attempt of it is left and none will come */
void w__user_maybe_free(world *w, uint32_t u);
void w__finish(world *w, uint32_t i, int had_slot);
void w__deny_background_delegate(world *w);

/* process.c */
void w__apply_limits(world *w);
void w__startup_continue(world *w);
void w__die(world *w, mdl_exit why, mdl_stage stage);
/* pagesys.c: the world's side of the page models (pages.h): the app as
 * they see it, the verdicts carried out, their looks scheduled */
void w__pages_setup(world *w);
static inline pg_app w__pg_app(const world *w)
{
    pg_app a = {sim_now(w->e), w->epoch,   w->proc.alive, w->proc.fg, w->proc.aged,
                w->path.bg,    w->svc,     w->main.alive, w->ending,  w->proc.hot};
    return a;
}
int64_t w__pages_free(const world *w);
int64_t w__pages_room(const world *w);
W_MAY_KILL w_fate w__pages_check(world *w, int64_t extra, int own);
sim_time w__pages_refault(world *w, const part_rt *p);
int64_t w__pages_growth_room(const world *w, int64_t *soft);
int64_t w__pages_hot_resident(const world *w);
void w__emit_pages(world *w, const char *what, const char *why, int64_t dropped,
                   int64_t refault, int adj, sim_time took);
void w__cold_start(world *w);
void w__teardown(world *w);
void w__app_stop(world *w);      /* an update step: the app stops, not a death */
void w__cache_rebuilt(world *w); /* the cache on disk: valid for the phone's versions */
/* process.c: the model's process dies, "no process" again (the caller writes its record) */
void w__proc_gone(world *w);
void w__relaunch_at(world *w); /* after the app's death: the user reopens it after a delay */

/* service.c: the model in a service process of its own (svc) */
/* the app's main process starts: its baseline (W_GONE: it died of it) */
W_MAY_KILL w_fate w__main_start(world *w);
/* the main process dies: its record; the service goes with its binding */
void w__main_die(world *w, mdl_exit why, mdl_stage stage);
void w__main_end(world *w); /* it ends (a death, an update): its time, restart, memory */
void w__svc_died(world *w);  /* the service died, the app lives: bound again after a delay */
void w__svc_start(world *w); /* process.c: the service starts (the restart's bind) */
/* a request arrives while the service is down: it fails */
void w__svc_refuse(world *w, uint32_t user_index);
/* a reclaim kill's class for the service: a waived one's is system_reclaim */
mdl_exit w__svc_class(const world *w, mdl_exit why);
/* the reclaim kill of `adj` (lmkd, the OOM killer, the minfree levels) */
void w__kill_at(world *w, int adj, mdl_exit why, mdl_stage stage);
/* the reclaim kill at adj takes the main process (1) or the service (0):
 * the one with the adj; at one adj over PERCEPTIBLE_APP_ADJ the main
 * process (its adj reached lmkd first), at or under it the heavier */
int w__victim_is_main(const world *w, int adj);
/* ... the same with the victim chosen (main: 1 the main process) */
void w__kill_process(world *w, int main, mdl_exit why, mdl_stage stage);
/* the bytes the main process holds in the categories of mask */
static inline int64_t w__main_held(const world *w, unsigned mask)
{
    int64_t n = 0;
    for (int c = 0; c < MDL_CAT_COUNT; c++)
        if (mask & MDL_CAT_BIT(c))
            n += mdl_ledger_held(w->led, w->app_owner, (mdl_category)c);
    return n;
}
#define w__main_counted(w) w__main_held((w), (w)->dev->counts_mask)
#define w__main_anon(w) w__main_held((w), MDL_CAT_ALL & ~MDL_CAT_BIT(MDL_CAT_FILE))
/* emit.c: an app process's name: the package (the candidate's id), or PACKAGE:NAME */
void w__process_name(const world *w, int main, char out[TRC_TEXT_MAX]);
/* the horizon: the main process's times and memory */
void w__main_teardown(world *w);

/* owners.c: who holds sessions (a scenario's `owners`).  The process's
 * life tells them what happens through this interface (w->hold, NULL
 * when the scenario names no owners), and owners.c, above it, acts on the
 * process (opens sessions, loads and releases parts): the process's files
 * know the interface, not owners.c. */
struct w_holders {
    void (*config)(world *w, const mdl_candidate *c); /* the candidate in force */
    /* the process started: services open, tasks scheduled */
    void (*start)(world *w);
    /* part p is ready: released (1) when it was loaded for an owner that
     * closed since and nothing else wants it, before it evicts another */
    int (*unwanted)(world *w, part_rt *p);
    /* part p is ready: the open owners' sessions of it open */
    w_fate (*part_ready)(world *w, part_rt *p);
    /* part p's sessions went (released, or dropped: `why`) */
    void (*part_gone)(world *w, part_rt *p, const char *why);
    /* attempt r on p takes an idle session of its owner (1), or none (0) */
    int (*take)(world *w, req *r, part_rt *p);
    /* ... and gives it back at its execution's end */
    void (*put)(world *w, req *r);
    /* the process dies or the horizon comes: held_after_leave's clocks stop */
    void (*end)(world *w);
};
extern const w_holders w__holders;
/* the user enters (1) or leaves (0) a page: its owners open or close */
void w__holders_page(world *w, uint32_t page, int enter);
/* emit.c: an owner's session opens (what "session_open", how the owner's
 * moment, alloc its memory), closes ("session_close", how the result) or
 * leaks ("session_leaked"); last_req -1: none ran on it */
void w__emit_session(world *w, unsigned part, const char *owner, uint32_t id, const char *what,
                     const char *how, int64_t last_req, const int64_t *alloc);

/* path.c */
void w__step(sim_engine *e, void *ctx, uint64_t arg);

/* The world checker: busy counts equal executing attempts, wait lists and the queue
 * well formed and within bounds, every live attempt belongs to a live request, what
 * each owner holds equals what the world thinks it holds, the ledger's own
 * invariants.  SIM_OK or SIM_EINTERNAL with the first broken rule in err.  O(attempts + parts). */
int mdl_world_validate(const world *w, sim_error *err);
/* The same without the ledger's own invariants (O(owners)). */
int w__validate_state(const world *w, sim_error *err);

/* For the checker's tests: a world set up on cell (replication rep) whose
 * engine the test may run (w->e), then checked and closed. */
int w__open(world *w, const mdl_cell *cell, uint64_t rep, const sim_alloc *alloc,
            const mdl_times_sink *times, const mdl_trace_sink *trace, mdl_rep *out,
            sim_error *err);
void w__close(world *w);

#ifdef __cplusplus
}
#endif

#endif /* OOMSIM_MODELS_WORLD_INT_H */
