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
 * Each concern's own state and its functions are in a small header of
 * its own, which says which files may change which of its fields (as Lua's
 * lstate.h sits beside one header per module): pages.h and memstat.h (the
 * page models), generate.h (the KV growth), parts.h (the parts, their
 * costs, genrun.c), requests.h (attempts, the queue, the pools), owners.h
 * (who holds sessions), service.h (the service process and the main one),
 * process.h (one app process, its life), emit.h (the timeline).
 * world_fwd.h holds the names they share.
 *
 * Who may change what here (the files that change a concern's own state
 * are in its header):
 *   world.c      everything, at setup and teardown only
 *   inforce.c    the candidate in force (cand, nparts, needs maps, startup,
 *                res_cap, gen, the delegate's figures, store.part), between
 *                lives only
 *   charge.c     the ledger (charge, give), last_stage
 *   pagesys.c    dstate.cached (the plain rules' verdict), kill_log (lmkd's
 *                line of the death it carries out), the page model's links
 *                and pga (at setup)
 *   process.c    life, lim, epoch, ending (the horizon's teardown), kill_log
 *                (cleared once written), store's free list and users at a
 *                death, main.sample_* and main.svc_up
 *   service.c    main (its life and restarts), kill_log (cleared once
 *                written), life.consec_startup_deaths (the service's start-up
 *                death)
 *   path.c       path; the background life: dstate.successor, main.aged; the
 *                pages' holds (page_held, through charge and give); an
 *                update's life.os_ver, rt_ver; store.users (a new request)
 *   owners.c     path.on_page (the owners' pages), store.sess
 *   requests.c   exec_extra, lru_clock, req_seq, denying, store's pool and queue
 *   genrun.c     exec_extra, lru_clock, an attempt's KV region in store.pool
 *   parts.c      lru_clock, an attempt's need in store.pool
 *   costs.c      cur (the recorded lists' cursors), and the streams it draws from
 *   warning.c    warn_level (at setup)
 *   emit.c       the event being built (world.ev)
 *   exitrec.c    out's exit-record tables (the record itself is pure)
 *   kill.c, recovery.c, world_check.c: nothing (recovery.c only the
 *                mdl_recovery_state handed to it); nor do the pure modules
 *                (ledger.c has its own state, dist.c, names.c, estimate.c,
 *                lmkd.c, xnu.c)
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
#include "world_fwd.h"
#include "pages.h"
#include "thermal.h"
#include "generate.h"
#include "parts.h"
#include "requests.h"
#include "owners.h"
#include "service.h"
#include "emit.h"
#include "process.h"

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

/* What outlives every process: the storage the process's records are kept
 * in (their capacity; their contents are the process's, and the pool's
 * free list spans deaths) and each part's identity (parts.h). */
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
    uint32_t rqi;         /* the requests step's index in workload.requests */
    int awaiting;         /* after_answer: the user waits for request awaiting_id's answer, */
    uint64_t awaiting_id; /* then `answered` (path.c's) brings the next */
    void (*answered)(struct mdl_world *w);
} w_path;

/* A trace-driven run: the next recorded occurrence of each list. */
typedef struct w_cursors {
    uint32_t stage[MDL_PARTS_MAX][MDL_REPLAY_KINDS];
    uint32_t outcome[MDL_PARTS_MAX];
    uint32_t session[MDL_PARTS_MAX];
    uint32_t relaunch, restart;
} w_cursors;


struct mdl_world {
    /* what the replication is */
    const mdl_cell *cell;
    const mdl_device *dev;
    mdl_device dev_in_force;    /* the cell's device with the policy's entitlement (dev) */
    int64_t warn_level[2];      /* warn below this headroom, background [0] / foreground [1] */
    double speed_cpu, speed_gpu_of_delegate; /* divide drawn durations (1: as drawn) */
    int scaled;                 /* some speed is not 1 */
    /* the phone's heat (thermal.h), on with a `thermal` device in a run that
     * is not trace-driven; requests.c and genrun.c at each execution's start
     * and end, process.c at a death */
    int thermal_on;
    mdl_heat heat;
    unsigned thermal_step;      /* the step last told */
    double thermal_speed;       /* its speed: every execution's time is divided by it too */
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
    pg_app pga;           /* where the page models read the app (pagesys.c sets it up) */
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
 * the CPU's otherwise, times the thermal step's speed read at its start. */
#define EXEC_TIME(w, p, t)                                                                  \
    ((w)->scaled || (w)->thermal_step != 0                                                  \
         ? scale_time((t), ((p)->on_delegate ? (w)->speed_gpu_of_delegate : (w)->speed_cpu) * \
                               (w)->thermal_speed)                                          \
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
#if defined(__GNUC__)
__attribute__((cold, noinline))
#endif
static void w__at_failed(world *w, int rc)
{
    sim_error_set(w->err, rc, "replication: cannot schedule an event (%s)", sim_strerror(rc));
    w__fail(w, rc);
}
static inline int w__at(world *w, sim_time t, int prio, sim_event_fn fn, uint64_t arg,
                        sim_handle *h)
{
    int rc = sim_schedule(w->e, t, prio, fn, w, arg, h);
    if (rc != SIM_OK)
        w__at_failed(w, rc);
    return rc;
}
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
/* The same after memory was only given back: the room can only have grown,
 * so only a warning in force can end; without one there is nothing to do. */
static inline void w__warning_after_free(world *w)
{
    if (w->proc.warned)
        w__warning_check(w);
}
void w__pressure(sim_engine *e, void *ctx, uint64_t arg);

/* charge.c: the growth of the app's memory the rule in force allows before
 * its verdict or the warning could change: a hard room (an exact line, to
 * be met at its byte; INT64_MAX: none) returned, a soft one (a watermark
 * past which the kernel acts step by step; INT64_MAX: none) in *soft */
int64_t w__growth_room(world *w, int64_t *soft);
/* pagesys.c: the world's side of the page models (pages.h): the app as
 * they see it, the verdicts carried out, their looks scheduled */
void w__pages_setup(world *w);
/* the plain kill rules' verdict: the cached apps it killed go (each told to
 * the timeline), and when the app dies, the process holding `adj` (the
 * app's, or its service's from its binding) dies with its record */
void w__rule_verdict(world *w, const mdl_kill_verdict *v, int adj, mdl_stage stage);
/* the Java heap check's verdict: an OutOfMemoryError in the process that
 * allocates (main: the app's main process, the model in a service) */
void w__heap_verdict(world *w, int main, mdl_stage stage);
int64_t w__pages_free(const world *w);
int64_t w__pages_room(const world *w);
W_MAY_KILL w_fate w__pages_check(world *w, int64_t extra, int own);
sim_time w__pages_refault(world *w, const part_rt *p);
int64_t w__pages_growth_room(const world *w, int64_t *soft);
int64_t w__pages_hot_resident(const world *w);

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
