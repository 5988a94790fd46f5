/* world.c - one replication of one grid cell: the device and its kill
 * rules, the app process, its candidate's parts, the user path.
 *
 * The semantics are spec/SCENARIO.md's ("Memory semantics", "Kill
 * rules", "Workload", "Policies"); docs/model.md states every choice the
 * spec leaves open.  Events carry the process epoch in the high half of
 * their argument: a death bumps the epoch, so the events of a dead process
 * fire as no-ops instead of being hunted down and cancelled.  The path and
 * the device (arrivals, steps, pressure spikes, relaunches) live outside
 * the process and carry no epoch.
 *
 * Every allocation goes through take(), which applies the Java heap limit
 * before the allocation and the kill rules after it; a take() that killed
 * the process returns 0 and the caller must return at once, because the
 * death has already released every part and request. */
#include "models.h"

#include <math.h>
#include <stddef.h>
#include <string.h>

#include <gsl/gsl_rng.h>

/* Stream purposes: fixed numbers, never derived from the cell (common
 * random numbers across the policies of a grid, docs/design/rng.md). */
enum {
    PURPOSE_DEVICE = 1,   /* cached apps at start */
    PURPOSE_ARRIVALS = 2, /* request gaps */
    PURPOSE_REQUESTS = 3, /* payloads, inference times, working sets */
    PURPOSE_STAGES = 4,   /* stage times and amounts, session states */
    PURPOSE_FAILURES = 5, /* delegate failures and crashes, cache hits */
    PURPOSE_RELAUNCH = 6, /* the user's delay before reopening the app */
    PURPOSE_PRESSURE = 7, /* background pressure spikes */
    PURPOSE_RETRY = 8     /* backoff jitter (docs/model.md: why not the failures stream) */
};

/* At equal times: releases first, then kill timers, then arrivals, then
 * path steps (so the last arrival of a step happens inside it), then
 * device pressure. */
enum { PRIO_RELEASE = 0, PRIO_TIMER = 1, PRIO_ARRIVAL = 2, PRIO_PATH = 3, PRIO_PRESSURE = 4 };

enum { P_UNLOADED = 0, P_LOADING, P_READY, P_FAILED };
enum { PH_LOAD = 0, PH_PREPARE, PH_DELEGATE, PH_FALLBACK };
enum { R_QUEUED = 0, R_WAITING, R_RUNNING };

#define NIL UINT32_MAX
#define APP_ADJ_FOREGROUND 0
#define APP_ADJ_BACKGROUND 700

typedef struct part_rt {
    const mdl_part *def;
    mdl_owner owner, sess_owner, leak_owner;
    uint8_t state, phase, release_pending, cache_done, on_demand;
    uint8_t deferred;                 /* release_first: LOADING, waiting for room (1: start-up,
                                         2: on demand) */
    uint32_t serial;                  /* bumped at every phase start (ANR timers) */
    int64_t transient[MDL_CAT_COUNT]; /* held by the running phase */
    int64_t cache_tr[MDL_CAT_COUNT];  /* cache-miss transient (cache owner) */
    int64_t failed_tr[MDL_CAT_COUNT]; /* failed delegate's transient, kept with overlap */
    int64_t delegate_res[MDL_CAT_COUNT];
    int64_t resident[MDL_CAT_COUNT];  /* all resident bytes, delegate_res included */
    int64_t prepare_res[MDL_CAT_COUNT]; /* what copy_runtime copies into each session */
    mdl_stage phase_stage;
    uint32_t busy, sess_idle;
    uint64_t last_use;
    uint32_t wait_head, wait_tail;    /* requests waiting for READY */
    uint64_t slots[MDL_SESSIONS_MAX / 64]; /* session slots executing (the timeline's ids) */
} part_rt;

/* What a request draws at arrival, alive or not, so every policy sees the
 * same request k.  Its retries reuse the draws (a new attempt of the same
 * request), each with a payload of its own. */
typedef struct req_draw {
    int64_t payload[MDL_CAT_COUNT];
    int64_t time[MDL_PARTS_MAX];
    int64_t ws[MDL_PARTS_MAX][MDL_CAT_COUNT]; /* working set + output */
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
    uint8_t in_use, nneeds, waiting; /* waiting: a retry is scheduled or parked */
} user;

/* One attempt: what is queued, waits for a part or executes. */
typedef struct req {
    sim_time arrival, start; /* start: the first execution (the end of the wait) */
    mdl_owner owner;
    uint32_t next;        /* waiter list / free list */
    uint32_t user;
    sim_handle timer, exec;
    uint8_t in_use, state, idx, nneeds, orphan, has_timer, has_exec;
    uint16_t slot;        /* its session slot while executing (timeline only) */
    uint8_t needs[MDL_PARTS_MAX];
} req;

typedef struct world {
    const mdl_cell *cell;
    const mdl_device *dev;
    const mdl_candidate *cand;
    const mdl_workload *wl;
    const mdl_policy *pol;
    const sim_alloc *alloc;
    sim_engine *e;
    mdl_ledger *led;
    sim_stream s_dev, s_arr, s_req, s_stage, s_fail, s_relaunch, s_press, s_retry;
    unsigned streams;
    mdl_rep *out;
    const mdl_times_sink *times;
    const mdl_trace_sink *trace;
    trc_event ev;          /* the event being built for `trace` */
    sim_error *err;
    int rc;

    part_rt parts[MDL_PARTS_MAX];
    unsigned nparts;
    uint8_t *needs_map;   /* nrequests x MDL_PARTS_MAX part indices */
    uint8_t *nneeds_map;
    uint8_t startup[MDL_PARTS_MAX];
    unsigned nstartup, startup_next;
    uint32_t res_cap;
    mdl_owner cache_owner;

    /* the process */
    uint32_t epoch;
    int alive, fg, startup_done, cache_valid, relaunch_pending, relaunch_scheduled;
    sim_handle relaunch_h;
    uint32_t consec_startup_deaths;
    sim_time alive_since;
    uint64_t lru_clock, req_seq;
    mdl_stage last_stage;
    uint32_t switching;   /* on-demand loads in progress */
    int startup_skip;     /* safe mode or stop_prewarm: no start-up model work */
    /* a trace-driven run: the next recorded occurrence of each list */
    uint32_t rp_stage[MDL_PARTS_MAX][MDL_REPLAY_KINDS], rp_outcome[MDL_PARTS_MAX];
    uint32_t rp_session[MDL_PARTS_MAX], rp_relaunch, rp_next_req;
    uint64_t user_seq;    /* user requests made (their ids in the timeline) */
    int degraded;         /* degrade_cpu: no delegate, the CPU path */
    int64_t sample_pss_kb, sample_rss_kb; /* the last periodic sample, 0 before one */
    sim_time accept_since; /* alive and accepting inference since */

    /* the recovery state: a small record persisted outside the process and
     * its model loading (DOMAIN.md section 6), read at every cold start */
    struct {
        mdl_stage failed_stage;       /* of the last death */
        uint32_t same_stage;          /* consecutive start-up deaths at that stage */
        uint32_t consec[MDL_EXIT_COUNT]; /* consecutive failures by class */
        const mdl_candidate *last_stable;
        const mdl_candidate *candidate; /* the one the next cold start runs */
        int safe_mode;
        unsigned ladder_step;         /* ladder actions in force */
    } rec;
    unsigned acts;        /* 1 << mdl_action: what the recovery put in force */
    int ending;           /* the horizon's teardown: no new events */

    /* the device */
    int64_t cached;
    int warned;
    int rejecting;        /* new requests are rejected (on_warning or recovery) */
    int warn_active;      /* on_warning actions in force */
    uint32_t sess_eff;    /* sessions in force (reduce_concurrency lowers it) */

    /* the path */
    int path_bg;
    uint32_t rq_step;
    const mdl_requests *rq;
    uint64_t rq_left;
    sim_time rq_end;

    /* requests */
    req *pool;
    uint32_t pool_cap, free_head;
    user *users;
    uint32_t users_cap, users_free, parked; /* parked: on_new_condition retries */
    uint32_t running;     /* requests holding an execution slot */
    uint32_t *q;          /* FIFO ring of request indices */
    uint32_t q_cap, q_head, q_len;
    sim_time q_last;
} world;

/* ------------------------------------------------------------- helpers */

static inline sim_time now(const world *w) { return sim_now(w->e); }

static inline uint64_t tag(const world *w, uint32_t index)
{
    return ((uint64_t)w->epoch << 32) | index;
}

static inline int current(const world *w, uint64_t arg)
{
    return w->alive && (uint32_t)(arg >> 32) == w->epoch;
}

static void fail(world *w, int rc)
{
    if (w->rc == SIM_OK)
        w->rc = rc;
    sim_abort(w->e, rc);
}

/* Closes the current stretch of "alive and accepting inference". */
static void accept_mark(world *w)
{
    if (w->alive && !w->rejecting)
        w->out->accepting_us += now(w) - w->accept_since;
    w->accept_since = now(w);
}

/* Whether new requests are taken, and how many run at once: the policy,
 * cut by what the recovery put in force (safe mode: one session) and by
 * on_warning actions while a warning holds. */
static void apply_limits(world *w)
{
    accept_mark(w);
    unsigned warn = w->warn_active ? w->pol->on_warning : 0;
    w->rejecting = (w->acts & (1u << MDL_ACT_REJECT_NEW)) || (warn & MDL_WARN_REJECT_NEW);
    uint32_t s = w->rec.safe_mode ? 1 : w->pol->sessions;
    if (w->acts & (1u << MDL_ACT_REDUCE_CONCURRENCY))
        s = s > 1 ? s / 2 : 1;
    if (warn & MDL_WARN_REDUCE_CONCURRENCY)
        s = s > 1 ? s / 2 : 1;
    w->sess_eff = s;
}

/* ----------------------------------------------------------- the timeline */

static trc_event *ev_begin(world *w, mdl_stage stage, trc_kind kind, int part);
static void ev_send(world *w);
#define TRACING(w) ((w)->trace != NULL && !(w)->ending)

/* A sample that only says what happened: an error class of spec/TRACE.md. */
static void ev_note(world *w, mdl_stage stage, const char *what)
{
    trc_event *e = ev_begin(w, stage < MDL_STAGE_COUNT ? stage : MDL_STAGE_LOAD, TRC_SAMPLE, -1);
    e->has |= TRC_F_ERROR;
    snprintf(e->error, sizeof e->error, "%s", what);
    ev_send(w);
}

/* The event announces the allocation that follows it (docs/traces.md). */
static void ev_alloc(trc_event *e, const int64_t amounts[MDL_CAT_COUNT])
{
    e->has |= TRC_F_ALLOC;
    e->alloc_has = 0xfu;
    memcpy(e->alloc, amounts, sizeof e->alloc);
}

/* Starts a timeline event with what every event carries: the time, the
 * candidate, memory by category, the session and queue counts. */
static trc_event *ev_begin(world *w, mdl_stage stage, trc_kind kind, int part)
{
    trc_event *e = &w->ev;
    trc_event_clear(e);
    e->time_us = now(w);
    e->stage = (trc_stage)stage;
    e->kind = kind;
    e->has = TRC_F_KIND | TRC_F_CANDIDATE | TRC_F_MEM | TRC_F_QUEUE | TRC_F_IN_FLIGHT |
             TRC_F_SESSIONS | TRC_F_RSS_MB;
    snprintf(e->candidate, sizeof e->candidate, "%.63s", w->cand->id);
    static const int cat_of[TRC_MEM_COUNT] = {MDL_CAT_JAVA, MDL_CAT_NATIVE, MDL_CAT_GPU,
                                              MDL_CAT_FILE};
    e->mem_has = 0xfu;
    for (int k = 0; k < TRC_MEM_COUNT; k++)
        e->mem[k] = mdl_ledger_total(w->led, (mdl_category)cat_of[k]);
    e->rss_mb = mdl_ledger_counted(w->led) >> 20;
    e->queue = w->q_len;
    e->in_flight = w->running;
    e->sessions = w->sess_eff;
    if (part >= 0) {
        e->has |= TRC_F_PART;
        snprintf(e->part, sizeof e->part, "%.63s", w->parts[part].def->name);
    }
    return e;
}

static void fail(world *w, int rc);

static void ev_send(world *w)
{
    int rc = w->trace->fn(w->trace->ctx, &w->ev, w->err);
    if (rc != SIM_OK)
        fail(w, rc);
}

static int at(world *w, sim_time t, int prio, sim_event_fn fn, uint64_t arg, sim_handle *h)
{
    int rc = sim_schedule(w->e, t, prio, fn, w, arg, h);
    if (rc != SIM_OK) {
        sim_error_set(w->err, rc, "replication: cannot schedule an event (%s)",
                      sim_strerror(rc));
        fail(w, rc);
        return 0;
    }
    return 1;
}

static void sample_amounts(const mdl_amounts *a, gsl_rng *r, int64_t out[MDL_CAT_COUNT])
{
    for (int c = 0; c < MDL_CAT_COUNT; c++)
        out[c] = (a->mask & MDL_CAT_BIT(c)) ? mdl_dist_sample(&a->cat[c], r) : 0;
}

static int64_t headroom(const world *w, int64_t extra)
{
    const mdl_device *d = w->dev;
    int64_t counted = mdl_ledger_counted(w->led);
    if (d->rule == MDL_KILL_JETSAM)
        return (w->fg ? d->jetsam_limit : d->jetsam_background_limit) - counted;
    return d->ram - d->system - w->cached - extra - counted;
}

static void on_warning(sim_engine *e, void *ctx, uint64_t arg);

/* Memory warnings are edge-triggered: one per crossing below warning_at.
 * The app hears of a crossing (onTrimMemory, didReceiveMemoryWarning)
 * asynchronously: the policy's actions, and their end when memory
 * recovers, run in an event at the same instant, never inside the
 * allocation or release that crossed. */
static void warning_check(world *w, int64_t room)
{
    if (w->dev->warning_at <= 0)
        return;
    int below = room < w->dev->warning_at;
    if (below == w->warned)
        return;
    w->warned = below;
    if (below) {
        w->out->warnings++;
        if (TRACING(w))
            ev_note(w, w->last_stage, "memory_warning");
    }
    if (!w->ending &&
        (w->pol->on_warning != 0 || w->pol->retry.kind == MDL_RETRY_ON_NEW_CONDITION))
        at(w, now(w), PRIO_TIMER, on_warning, tag(w, (uint32_t)below), NULL);
}

static void die(world *w, mdl_exit why, mdl_stage stage);

/* The lmk level that applies to adj: the entry with the largest adj not
 * above it; NULL when adj is below every level. */
static const mdl_minfree *lmk_level(const mdl_device *d, int adj)
{
    const mdl_minfree *lv = NULL;
    for (unsigned i = 0; i < d->nminfree && d->minfree[i].adj <= adj; i++)
        lv = &d->minfree[i];
    return lv;
}

int64_t mdl_kill_line(const mdl_device *d, int foreground)
{
    if (d->rule == MDL_KILL_JETSAM)
        return foreground ? d->jetsam_limit : d->jetsam_background_limit;
    const mdl_minfree *lv = lmk_level(d, foreground ? APP_ADJ_FOREGROUND : APP_ADJ_BACKGROUND);
    return lv != NULL ? d->ram - d->system - lv->free : -1;
}

/* Applies the kill rules after memory changed (extra: a pressure spike's
 * bytes, held only for the check).  Returns 1 when the app lives. */
static int kill_check(world *w, int64_t extra, mdl_stage stage)
{
    const mdl_device *d = w->dev;
    if (d->rule == MDL_KILL_JETSAM) {
        int64_t room = headroom(w, 0);
        if (room < 0) {
            die(w, MDL_EXIT_LOW_MEMORY, stage);
            return 0;
        }
        warning_check(w, room);
        return 1;
    }
    int64_t room = headroom(w, extra);
    int64_t cached_floor = d->minfree[d->nminfree - 1].free;
    while (room < cached_floor && w->cached > 0) {
        int64_t freed = d->cached_app_size > 0 && d->cached_app_size < w->cached
                            ? d->cached_app_size : w->cached;
        w->cached -= freed;
        room += freed;
        w->out->cached_kills++;
        if (TRACING(w))
            ev_note(w, stage, "cached_app_killed");
    }
    const mdl_minfree *lv = lmk_level(d, w->fg ? APP_ADJ_FOREGROUND : APP_ADJ_BACKGROUND);
    if (lv != NULL && room < lv->free) {
        die(w, w->fg ? MDL_EXIT_LOW_MEMORY : MDL_EXIT_SYSTEM_RECLAIM, stage);
        return 0;
    }
    warning_check(w, room);
    return 1;
}

/* Allocates bytes of category c to o.  Returns 1 when the app lives on. */
static int take(world *w, mdl_owner o, int c, int64_t bytes, mdl_stage stage)
{
    if (bytes <= 0)
        return 1;
    w->last_stage = stage;
    const mdl_device *d = w->dev;
    if (c == MDL_CAT_JAVA && d->java_heap_limit > 0 &&
        mdl_ledger_total(w->led, MDL_CAT_JAVA) + bytes > d->java_heap_limit) {
        die(w, MDL_EXIT_JAVA_CRASH, stage); /* OutOfMemoryError: not made */
        return 0;
    }
    int rc = mdl_ledger_alloc(w->led, o, (mdl_category)c, bytes, stage, now(w), w->err);
    if (rc != SIM_OK) {
        fail(w, rc);
        return 0;
    }
    if (!(d->counts_mask & MDL_CAT_BIT(c)))
        return 1;
    if (w->switching > 0 && mdl_ledger_counted(w->led) > w->out->switch_peak)
        w->out->switch_peak = mdl_ledger_counted(w->led);
    return kill_check(w, 0, stage);
}

static int take_all(world *w, mdl_owner o, const int64_t v[MDL_CAT_COUNT], mdl_stage stage)
{
    for (int c = 0; c < MDL_CAT_COUNT; c++)
        if (!take(w, o, c, v[c], stage))
            return 0;
    return 1;
}

static void give_all(world *w, mdl_owner o, int64_t v[MDL_CAT_COUNT])
{
    for (int c = 0; c < MDL_CAT_COUNT; c++) {
        if (v[c] > 0) {
            int rc = mdl_ledger_free(w->led, o, (mdl_category)c, v[c], w->err);
            if (rc != SIM_OK)
                fail(w, rc);
        }
        v[c] = 0;
    }
    warning_check(w, headroom(w, 0));
}

static void add_to(int64_t dst[MDL_CAT_COUNT], const int64_t src[MDL_CAT_COUNT])
{
    for (int c = 0; c < MDL_CAT_COUNT; c++)
        dst[c] += src[c];
}

/* ------------------------------------------------------------ requests */

/* Doubles a pool of `elem`-byte records up to MDL_REQUESTS_IN_SYSTEM_MAX;
 * returns the old capacity (the first new record), or NIL on failure. */
static uint32_t grow(world *w, void **pool, uint32_t *cap, size_t elem)
{
    if (*cap >= MDL_REQUESTS_IN_SYSTEM_MAX) {
        sim_error_set(w->err, SIM_ELIMIT,
                      "more than %u requests in the system at once at t=%.3f s: the "
                      "queue never drains; bound policies.queue or lower the rate",
                      MDL_REQUESTS_IN_SYSTEM_MAX, (double)now(w) / 1e6);
        fail(w, SIM_ELIMIT);
        return NIL;
    }
    uint32_t n = *cap == 0 ? 64 : *cap * 2;
    if (n > MDL_REQUESTS_IN_SYSTEM_MAX)
        n = MDL_REQUESTS_IN_SYSTEM_MAX;
    void *p = sim_realloc(w->alloc, *pool, (size_t)*cap * elem, (size_t)n * elem);
    if (p == NULL) {
        sim_error_set(w->err, SIM_ENOMEM, "replication: out of memory for requests");
        fail(w, SIM_ENOMEM);
        return NIL;
    }
    uint32_t old = *cap;
    *pool = p;
    *cap = n;
    return old;
}

/* Takes a free record from a pool of `elem`-byte records whose `next` and
 * `in_use` fields sit at the given offsets, growing it (and threading the
 * new records onto the free list) when none is free; NIL on failure. */
static uint32_t take_free(world *w, void **pool, uint32_t *cap, uint32_t *free_head, size_t elem,
                          size_t next_off, size_t in_use_off)
{
    if (*free_head == NIL) {
        uint32_t old = grow(w, pool, cap, elem);
        if (old == NIL)
            return NIL;
        char *base = *pool;
        for (uint32_t i = old; i < *cap; i++) {
            uint32_t next = i + 1 < *cap ? i + 1 : NIL;
            memcpy(base + (size_t)i * elem + next_off, &next, sizeof next);
            base[(size_t)i * elem + in_use_off] = 0;
        }
        *free_head = old;
    }
    uint32_t i = *free_head;
    memcpy(free_head, (char *)*pool + (size_t)i * elem + next_off, sizeof *free_head);
    return i;
}

static uint32_t pool_get(world *w)
{
    void *pool = w->pool;
    uint32_t i = take_free(w, &pool, &w->pool_cap, &w->free_head, sizeof *w->pool,
                           offsetof(req, next), offsetof(req, in_use));
    w->pool = pool;
    return i;
}

static uint32_t user_get(world *w)
{
    void *pool = w->users;
    uint32_t u = take_free(w, &pool, &w->users_cap, &w->users_free, sizeof *w->users,
                           offsetof(user, next), offsetof(user, in_use));
    w->users = pool;
    return u;
}

/* The user request is over when no attempt is left and none will come. */
static void user_maybe_free(world *w, uint32_t u)
{
    user *x = &w->users[u];
    if (x->live > 0 || x->waiting)
        return;
    x->in_use = 0;
    x->next = w->users_free;
    w->users_free = u;
}

static void queue_area(world *w)
{
    sim_time t = now(w);
    w->out->queue_area += (double)w->q_len * (double)(t - w->q_last);
    w->q_last = t;
}

static int enqueue(world *w, uint32_t i)
{
    if (w->q_len == w->q_cap) {
        uint32_t cap = w->q_cap == 0 ? 64 : w->q_cap * 2;
        uint32_t *q = sim_malloc(w->alloc, (size_t)cap * sizeof *q);
        if (q == NULL) {
            sim_error_set(w->err, SIM_ENOMEM, "replication: out of memory for the queue");
            fail(w, SIM_ENOMEM);
            return 0;
        }
        for (uint32_t k = 0; k < w->q_len; k++)
            q[k] = w->q[(w->q_head + k) % w->q_cap];
        sim_free(w->alloc, w->q, (size_t)w->q_cap * sizeof *q);
        w->q = q;
        w->q_cap = cap;
        w->q_head = 0;
    }
    queue_area(w);
    w->q[(w->q_head + w->q_len) % w->q_cap] = i;
    w->q_len++;
    w->pool[i].state = R_QUEUED;
    return 1;
}

static uint32_t dequeue(world *w)
{
    queue_area(w);
    uint32_t i = w->q[w->q_head];
    w->q_head = (w->q_head + 1) % w->q_cap;
    w->q_len--;
    return i;
}

/* Takes attempt i out of the queue, wherever it is (a cancelled timeout). */
static void unqueue(world *w, uint32_t i)
{
    queue_area(w);
    uint32_t k = 0;
    while (k < w->q_len && w->q[(w->q_head + k) % w->q_cap] != i)
        k++;
    for (; k + 1 < w->q_len; k++)
        w->q[(w->q_head + k) % w->q_cap] = w->q[(w->q_head + k + 1) % w->q_cap];
    w->q_len--;
}

static void dispatch(world *w);
static void advance(world *w, uint32_t i);
static void new_condition(world *w);

/* The attempt leaves the system: payload released, owner retired. */
static void finish(world *w, uint32_t i, int had_slot)
{
    req *r = &w->pool[i];
    if (r->has_timer) {
        sim_cancel(w->e, r->timer);
        r->has_timer = 0;
    }
    mdl_ledger_free_owner(w->led, r->owner, NULL);
    int rc = mdl_ledger_retire(w->led, r->owner, w->err);
    if (rc != SIM_OK)
        fail(w, rc);
    r->in_use = 0;
    r->next = w->free_head;
    w->free_head = i;
    w->users[r->user].live--;
    user_maybe_free(w, r->user);
    warning_check(w, headroom(w, 0));
    if (had_slot) {
        w->running--;
        dispatch(w);
    }
}

static void record_times(world *w, sim_time wait, sim_time latency)
{
    mdl_rep *o = w->out;
    o->wait_sum += (double)wait;
    o->latency_sum += (double)latency;
    if (w->times != NULL)
        w->times->fn(w->times->ctx, wait, latency);
}

static void start_request(world *w, uint32_t i)
{
    req *r = &w->pool[i];
    w->running++;
    r->start = -1;
    r->state = R_RUNNING;
    r->idx = 0;
    advance(w, i);
}

static void dispatch(world *w)
{
    while (w->alive && w->running < w->sess_eff && w->q_len > 0)
        start_request(w, dequeue(w));
}

/* ---------------------------------------------------------------- parts */

static void start_deferred(world *w);
static int begin_load(world *w, part_rt *p, int on_demand);

static void release_part(world *w, part_rt *p)
{
    if (TRACING(w)) {
        ev_begin(w, MDL_STAGE_RELEASE, TRC_SAMPLE, (int)(p - w->parts));
        ev_send(w);
    }
    give_all(w, p->owner, p->resident);
    memset(p->delegate_res, 0, sizeof p->delegate_res);
    mdl_ledger_free_owner(w->led, p->sess_owner, NULL);
    memset(p->prepare_res, 0, sizeof p->prepare_res);
    p->sess_idle = 0;
    p->state = P_UNLOADED;
    p->release_pending = 0;
    warning_check(w, headroom(w, 0));
    if (w->pol->residency == MDL_RES_RELEASE_FIRST && !w->ending) {
        uint32_t epoch = w->epoch;
        start_deferred(w);
        /* requests that came for it while it was going: it loads again */
        if (p->wait_head != NIL && w->alive && w->epoch == epoch)
            begin_load(w, p, 1);
    }
}

static unsigned resident_count(const world *w, int with_loading)
{
    unsigned n = 0;
    for (unsigned k = 0; k < w->nparts; k++) {
        const part_rt *p = &w->parts[k];
        if ((p->state == P_READY && !p->release_pending) ||
            (with_loading && p->state == P_LOADING))
            n++;
    }
    return n;
}

/* The least recently used resident part other than keep, or NULL. */
static part_rt *lru_victim(world *w, const part_rt *keep)
{
    part_rt *v = NULL;
    for (unsigned k = 0; k < w->nparts; k++) {
        part_rt *p = &w->parts[k];
        if (p != keep && p->state == P_READY && !p->release_pending &&
            (v == NULL || p->last_use < v->last_use))
            v = p;
    }
    return v;
}

/* Releases v now, or once its executions end. */
static void evict(world *w, part_rt *v)
{
    if (v->busy > 0)
        v->release_pending = 1;
    else
        release_part(w, v);
}

static void start_phase(world *w, part_rt *p, int ph);
static void startup_continue(world *w);

/* Loads part p: at start-up, or on demand (a switch: its peak is reported). */
/* Parts that hold memory or are loading for real: ready ones, going or
 * not, and loads not deferred (the release_first room count). */
static unsigned physical_count(const world *w)
{
    unsigned n = 0;
    for (unsigned k = 0; k < w->nparts; k++) {
        const part_rt *p = &w->parts[k];
        n += p->state == P_READY || (p->state == P_LOADING && !p->deferred);
    }
    return n;
}

static int any_deferred(const world *w)
{
    for (unsigned k = 0; k < w->nparts; k++)
        if (w->parts[k].deferred)
            return 1;
    return 0;
}

static void start_load(world *w, part_rt *p, int on_demand)
{
    if (on_demand) {
        p->on_demand = 1;
        w->switching++;
        w->out->switches++;
    }
    start_phase(w, p, PH_LOAD);
}

/* release_first: deferred loads start, in part order, as room appears. */
static void start_deferred(world *w)
{
    uint32_t epoch = w->epoch;
    for (unsigned k = 0; k < w->nparts && !w->ending; k++) {
        part_rt *p = &w->parts[k];
        if (!p->deferred || physical_count(w) >= w->res_cap)
            continue;
        int on_demand = p->deferred == 2;
        p->deferred = 0;
        start_load(w, p, on_demand);
        if (!w->alive || w->epoch != epoch)
            return;
    }
}

/* Loads part p: at start-up, or on demand (a switch: its peak is reported). */
static int begin_load(world *w, part_rt *p, int on_demand)
{
    p->state = P_LOADING;
    if (w->pol->residency == MDL_RES_RELEASE_FIRST) {
        /* release first, then load: a part still executing goes when its
         * executions end, and the load waits for that (a longer latency,
         * never two parts' memory at once) */
        part_rt *v;
        p->deferred = on_demand ? 2 : 1; /* not counted while room is made */
        while (physical_count(w) >= w->res_cap && (v = lru_victim(w, p)) != NULL)
            evict(w, v);
        if (physical_count(w) >= w->res_cap)
            return 1; /* stays deferred until a release makes room */
        p->deferred = 0;
    }
    start_load(w, p, on_demand);
    return w->alive;
}

static void anr_timer(sim_engine *e, void *ctx, uint64_t arg);
static void phase_end(sim_engine *e, void *ctx, uint64_t arg);

static void start_phase(world *w, part_rt *p, int ph)
{
    const mdl_part *def = p->def;
    const mdl_phase *f = ph == PH_LOAD       ? &def->load
                         : ph == PH_DELEGATE ? &def->delegate_prepare
                                             : &def->prepare;
    mdl_stage stage = ph == PH_LOAD       ? MDL_STAGE_LOAD
                      : ph == PH_DELEGATE ? MDL_STAGE_DELEGATE_PREPARE
                                          : MDL_STAGE_RUNTIME_PREPARE;
    uint32_t idx = (uint32_t)(p - w->parts);
    sim_time d;
    int64_t tr[MDL_CAT_COUNT], rs[MDL_CAT_COUNT], miss[MDL_CAT_COUNT] = {0};
    int miss_now;
    int kind = ph == PH_LOAD ? MDL_REPLAY_LOAD : ph == PH_DELEGATE ? MDL_REPLAY_DELEGATE
                                                                  : MDL_REPLAY_PREPARE;
    const mdl_replay *rp = w->cell->replay;
    if (rp != NULL && rp->nstages[idx][kind] > 0) {
        /* a trace-driven run: the recorded occurrence (the file included) */
        const mdl_replay_stage *x =
            &rp->stages[idx][kind][w->rp_stage[idx][kind]++ % rp->nstages[idx][kind]];
        d = x->time;
        memcpy(rs, x->resident, sizeof rs);
        memcpy(tr, x->transient, sizeof tr);
        miss_now = ph == PH_PREPARE && x->cache_miss;
        if (miss_now)
            memcpy(miss, x->miss_transient, sizeof miss);
    } else {
        gsl_rng *r = sim_stream_rng(&w->s_stage);
        d = mdl_dist_sample(&f->time, r);
        sample_amounts(&f->transient, r, tr);
        sample_amounts(&f->resident, r, rs);
        if (ph == PH_LOAD)
            rs[def->load_mode == MDL_LOAD_MMAP ? MDL_CAT_FILE : MDL_CAT_NATIVE] += def->file;
        miss_now = ph == PH_PREPARE && w->cand->has_cache && !w->cache_valid && !p->cache_done;
        if (miss_now) {
            d += w->cand->cache_miss_time;
            sample_amounts(&w->cand->cache_miss_transient, r, miss);
        }
    }
    p->phase = (uint8_t)ph;
    p->phase_stage = stage;
    p->serial++;
    /* resident first, then the transient on top (the file, then its
     * decompression buffer); a cache rebuild belongs to stage `cache`.  The
     * timeline's begin comes first: a death inside the stage leaves it
     * open, as on a device */
    if (TRACING(w)) { /* with what a replay needs: the drawn time and amounts */
        trc_event *e = ev_begin(w, stage, TRC_BEGIN, (int)idx);
        e->has |= TRC_F_DURATION | TRC_F_ALLOC | TRC_F_KEEP;
        e->duration_us = d;
        e->alloc_has = e->keep_has = 0xfu;
        for (int c = 0; c < MDL_CAT_COUNT; c++) {
            e->alloc[c] = rs[c] + tr[c];
            e->keep[c] = rs[c];
        }
        ev_send(w);
    }
    if (!take_all(w, p->owner, rs, stage))
        return;
    add_to(p->resident, rs);
    if (ph == PH_DELEGATE)
        memcpy(p->delegate_res, rs, sizeof rs);
    if (ph == PH_PREPARE)
        memcpy(p->prepare_res, rs, sizeof rs);
    if (!take_all(w, p->owner, tr, stage))
        return;
    memcpy(p->transient, tr, sizeof tr);
    if (miss_now) {
        if (TRACING(w)) {
            trc_event *e = ev_begin(w, MDL_STAGE_CACHE, TRC_BEGIN, (int)idx);
            ev_alloc(e, miss);
            ev_send(w);
        }
        if (!take_all(w, w->cache_owner, miss, MDL_STAGE_CACHE))
            return;
        memcpy(p->cache_tr, miss, sizeof miss);
    }
    const mdl_device *dev = w->dev;
    if (f->main_thread && dev->os == MDL_OS_ANDROID && dev->anr_timeout > 0 &&
        d > dev->anr_timeout) {
        uint32_t arg = idx | ((p->serial & 0xffffffu) << 8);
        if (!at(w, now(w) + dev->anr_timeout, PRIO_TIMER, anr_timer, tag(w, arg), NULL))
            return;
    }
    at(w, now(w) + d, PRIO_RELEASE, phase_end, tag(w, idx), NULL);
}

static void load_over(world *w, part_rt *p)
{
    if (p->on_demand) {
        p->on_demand = 0;
        w->switching--;
    }
}

static void part_ready(world *w, part_rt *p)
{
    load_over(w, p);
    p->state = P_READY;
    p->last_use = ++w->lru_clock;
    if (w->pol->residency == MDL_RES_OVERLAP || w->pol->residency == MDL_RES_LRU) {
        part_rt *v;
        while (resident_count(w, 0) > w->res_cap && (v = lru_victim(w, p)) != NULL)
            evict(w, v);
    }
    uint32_t epoch = w->epoch;
    while (p->wait_head != NIL && w->alive && w->epoch == epoch) {
        uint32_t i = p->wait_head;
        p->wait_head = w->pool[i].next;
        if (p->wait_head == NIL)
            p->wait_tail = NIL;
        w->pool[i].state = R_RUNNING;
        advance(w, i);
    }
    if (w->alive && w->epoch == epoch && w->pol->residency == MDL_RES_RELEASE_FIRST &&
        any_deferred(w)) {
        /* a load waits for room: this part goes once its waiters are served */
        part_rt *v;
        while (physical_count(w) >= w->res_cap && (v = lru_victim(w, NULL)) != NULL &&
               w->alive && w->epoch == epoch)
            evict(w, v);
    }
    if (w->alive && w->epoch == epoch)
        startup_continue(w);
}

/* The delegate failed and there is no fallback: the part cannot be used
 * in this process; whoever waits for it fails. */
static void part_failed(world *w, part_rt *p)
{
    load_over(w, p);
    give_all(w, p->owner, p->resident);
    memset(p->delegate_res, 0, sizeof p->delegate_res);
    p->state = P_FAILED;
    uint32_t epoch = w->epoch;
    while (p->wait_head != NIL && w->alive && w->epoch == epoch) {
        uint32_t i = p->wait_head;
        p->wait_head = w->pool[i].next;
        if (p->wait_head == NIL)
            p->wait_tail = NIL;
        w->out->failed++;
        finish(w, i, 1);
    }
    if (w->alive && w->epoch == epoch)
        startup_continue(w);
}

static void phase_end(sim_engine *e, void *ctx, uint64_t arg)
{
    (void)e;
    world *w = ctx;
    if (!current(w, arg))
        return;
    part_rt *p = &w->parts[(uint32_t)arg];
    int ph = p->phase;
    int idx = (int)(uint32_t)arg;
    int rebuilt = 0;
    for (int c = 0; c < MDL_CAT_COUNT; c++)
        rebuilt |= p->cache_tr[c] > 0;
    give_all(w, w->cache_owner, p->cache_tr);
    if (rebuilt && TRACING(w)) {
        ev_begin(w, MDL_STAGE_CACHE, TRC_END, idx);
        ev_send(w);
    }
    if (ph == PH_PREPARE && w->cand->has_cache)
        p->cache_done = 1; /* the rebuilt artefact is valid for this process */
    if (ph != PH_DELEGATE) {
        give_all(w, p->owner, p->transient);
        if (ph == PH_FALLBACK) {
            /* the failed delegate's set, held through the fallback */
            give_all(w, p->owner, p->failed_tr);
            for (int c = 0; c < MDL_CAT_COUNT; c++)
                p->resident[c] -= p->delegate_res[c];
            give_all(w, p->owner, p->delegate_res);
        }
        if (TRACING(w)) {
            ev_begin(w, p->phase_stage, TRC_END, idx);
            ev_send(w);
        }
        if (ph == PH_LOAD) {
            start_phase(w, p, PH_PREPARE);
        } else if (ph == PH_PREPARE && p->def->has_delegate_prepare && !w->degraded) {
            start_phase(w, p, PH_DELEGATE);
        } else {
            uint32_t epoch = w->epoch;
            part_ready(w, p);
            if (ph == PH_FALLBACK && w->alive && w->epoch == epoch)
                new_condition(w); /* the part now runs on the fallback */
        }
        return;
    }
    /* one draw per delegate_prepare whatever the probabilities (CRN); a
     * trace-driven run takes the recorded outcome */
    const mdl_part *def = p->def;
    const mdl_replay *rp = w->cell->replay;
    int outcome;
    if (rp != NULL && rp->noutcome[idx] > 0) {
        outcome = rp->outcome[idx][w->rp_outcome[idx]++ % rp->noutcome[idx]];
    } else {
        double u = gsl_rng_uniform(sim_stream_rng(&w->s_fail));
        outcome = u < def->delegate_crash                         ? MDL_OUTCOME_CRASH
                  : u < def->delegate_crash + def->delegate_fail ? MDL_OUTCOME_FAIL
                                                                 : MDL_OUTCOME_OK;
    }
    if (outcome == MDL_OUTCOME_CRASH) {
        die(w, MDL_EXIT_NATIVE_CRASH, MDL_STAGE_DELEGATE_PREPARE);
        return;
    }
    if (outcome == MDL_OUTCOME_OK) {
        give_all(w, p->owner, p->transient);
        if (TRACING(w)) {
            ev_begin(w, MDL_STAGE_DELEGATE_PREPARE, TRC_END, idx);
            ev_send(w);
        }
        part_ready(w, p);
        return;
    }
    if (TRACING(w)) { /* the delegate failed: its memory is still held here */
        trc_event *ev = ev_begin(w, MDL_STAGE_DELEGATE_PREPARE, TRC_END, idx);
        ev->has |= TRC_F_ERROR;
        snprintf(ev->error, sizeof ev->error, "delegate_failed");
        ev_send(w);
    }
    if (!w->cand->release_on_init_failure) {
        /* a re-init that never releases the failed delegate: its transient
         * and resident move to the part's leak owner and stay for the life
         * of the process, whatever the part does next */
        for (int c = 0; c < MDL_CAT_COUNT; c++)
            p->resident[c] -= p->delegate_res[c];
        add_to(p->delegate_res, p->transient);
        memset(p->transient, 0, sizeof p->transient);
        for (int c = 0; c < MDL_CAT_COUNT; c++) {
            int64_t v = p->delegate_res[c];
            p->delegate_res[c] = 0;
            if (v > 0 && mdl_ledger_free(w->led, p->owner, (mdl_category)c, v, w->err) != SIM_OK) {
                fail(w, SIM_EINTERNAL);
                return;
            }
            if (!take(w, p->leak_owner, c, v, MDL_STAGE_DELEGATE_PREPARE))
                return;
        }
    }
    if (strcmp(w->cand->fallback, "none") == 0) {
        give_all(w, p->owner, p->transient);
        part_failed(w, p);
        return;
    }
    if (w->cand->fallback_overlap) {
        memcpy(p->failed_tr, p->transient, sizeof p->transient);
        memset(p->transient, 0, sizeof p->transient);
    } else {
        give_all(w, p->owner, p->transient);
        for (int c = 0; c < MDL_CAT_COUNT; c++)
            p->resident[c] -= p->delegate_res[c];
        give_all(w, p->owner, p->delegate_res);
    }
    start_phase(w, p, PH_FALLBACK);
}

static void anr_timer(sim_engine *e, void *ctx, uint64_t arg)
{
    (void)e;
    world *w = ctx;
    if (!current(w, arg))
        return;
    uint32_t low = (uint32_t)arg;
    part_rt *p = &w->parts[low & 0xffu];
    if (p->state == P_LOADING && (p->serial & 0xffffffu) == (low >> 8) && w->fg)
        die(w, MDL_EXIT_ANR, p->phase_stage);
}

static void stable(sim_engine *e, void *ctx, uint64_t arg);

/* The start-up is over: a stable run if the process lives stable_after more. */
static void started(world *w)
{
    w->consec_startup_deaths = 0;
    at(w, now(w) + w->pol->stable_after, PRIO_TIMER, stable, tag(w, 0), NULL);
}

/* Start-up: preload (or prewarm) parts one after another. */
static void startup_continue(world *w)
{
    while (!w->startup_done) {
        if (w->startup_next == (w->startup_skip ? 0 : w->nstartup)) {
            w->startup_done = 1;
            started(w);
            return;
        }
        part_rt *p = &w->parts[w->startup[w->startup_next]];
        if (p->state == P_LOADING)
            return; /* a request is loading it: continue when it is ready */
        if (p->state == P_UNLOADED) {
            begin_load(w, p, 0);
            return;
        }
        w->startup_next++;
    }
}

/* --------------------------------------------------------------- flow */

static void exec_end(sim_engine *e, void *ctx, uint64_t arg);
static int begin_load(world *w, part_rt *p, int on_demand);

static void execute(world *w, uint32_t i, part_rt *p)
{
    req *r = &w->pool[i];
    const req_draw *d = &w->users[r->user].d;
    p->last_use = ++w->lru_clock;
    p->busy++;
    if (r->start < 0)
        r->start = now(w);
    int opened = p->sess_idle == 0;
    int64_t sess[MDL_CAT_COUNT] = {0};
    unsigned pi = (unsigned)(p - w->parts);
    if (opened) {
        /* a new session state (recorded in a trace-driven run); copy_runtime:
         * with its own copy of the part's prepared runtime */
        const mdl_replay *rp = w->cell->replay;
        if (rp != NULL && rp->nsession[pi] > 0)
            memcpy(sess, rp->session[pi][w->rp_session[pi]++ % rp->nsession[pi]], sizeof sess);
        else
            sample_amounts(&p->def->session, sim_stream_rng(&w->s_stage), sess);
    }
    if (TRACING(w)) {
        unsigned s = 0;
        while (s < MDL_SESSIONS_MAX && (p->slots[s / 64] >> (s % 64) & 1u))
            s++;
        r->slot = (uint16_t)s;
        p->slots[s / 64] |= UINT64_C(1) << (s % 64);
        trc_event *e = ev_begin(w, MDL_STAGE_INFERENCE, TRC_BEGIN, (int)pi);
        e->has |= TRC_F_SESSION | TRC_F_REQUEST | TRC_F_DURATION;
        e->session = s;
        e->request = (int64_t)w->users[r->user].id;
        e->duration_us = d->time[r->idx];
        ev_alloc(e, d->ws[r->idx]);
        if (opened) { /* the session state it opens, which stays */
            e->has |= TRC_F_KEEP;
            e->keep_has = 0xfu;
            memcpy(e->keep, sess, sizeof sess);
        }
        ev_send(w);
    }
    if (opened) {
        if (w->pol->copy_runtime)
            add_to(sess, p->prepare_res);
        if (!take_all(w, p->sess_owner, sess, MDL_STAGE_INFERENCE))
            return;
    } else {
        p->sess_idle--;
    }
    if (!take_all(w, r->owner, d->ws[r->idx], MDL_STAGE_INFERENCE))
        return;
    if (at(w, now(w) + d->time[r->idx], PRIO_RELEASE, exec_end, tag(w, i), &r->exec))
        r->has_exec = 1;
}

static void wait_for(world *w, uint32_t i, part_rt *p)
{
    req *r = &w->pool[i];
    r->state = R_WAITING;
    r->next = NIL;
    if (p->wait_tail == NIL)
        p->wait_head = i;
    else
        w->pool[p->wait_tail].next = i;
    p->wait_tail = i;
}

static void advance(world *w, uint32_t i)
{
    req *r = &w->pool[i];
    if (r->idx == r->nneeds) {
        if (!r->orphan) {
            /* the attempt the client waits for: the request is served */
            w->out->completed++;
            record_times(w, r->start - r->arrival, now(w) - w->users[r->user].first);
        }
        finish(w, i, 1);
        return;
    }
    part_rt *p = &w->parts[r->needs[r->idx]];
    switch (p->state) {
    case P_READY:
        if (p->release_pending && w->pol->residency == MDL_RES_RELEASE_FIRST &&
            any_deferred(w)) {
            wait_for(w, i, p); /* it goes first: served when it is loaded again */
            return;
        }
        p->release_pending = 0; /* wanted again before it went */
        execute(w, i, p);
        return;
    case P_LOADING:
        wait_for(w, i, p);
        return;
    case P_UNLOADED:
        wait_for(w, i, p);
        begin_load(w, p, 1);
        return;
    default: /* P_FAILED */
        if (!r->orphan)
            w->out->failed++;
        finish(w, i, 1);
        return;
    }
}

/* The execution of attempt i on part p ends (or is cancelled). */
static void exec_stop(world *w, uint32_t i, part_rt *p)
{
    req *r = &w->pool[i];
    const int64_t *ws = w->users[r->user].d.ws[r->idx];
    r->has_exec = 0;
    for (int c = 0; c < MDL_CAT_COUNT; c++)
        if (ws[c] > 0 && mdl_ledger_free(w->led, r->owner, (mdl_category)c, ws[c], w->err) !=
                             SIM_OK)
            fail(w, SIM_EINTERNAL);
    warning_check(w, headroom(w, 0));
    if (TRACING(w)) {
        p->slots[r->slot / 64] &= ~(UINT64_C(1) << (r->slot % 64));
        trc_event *e = ev_begin(w, MDL_STAGE_INFERENCE, TRC_END, (int)(p - w->parts));
        e->has |= TRC_F_SESSION;
        e->session = r->slot;
        ev_send(w);
    }
    p->busy--;
    p->sess_idle++;
    if (p->busy == 0 && (p->release_pending || (w->acts & (1u << MDL_ACT_RELEASE_IDLE)))) {
        release_part(w, p); /* ladder release_idle: a part goes when idle */
    } else if (p->busy == 0 && (w->acts & (1u << MDL_ACT_CLEAR_CACHE))) {
        mdl_ledger_free_owner(w->led, p->sess_owner, NULL); /* sessions are rebuildable */
        p->sess_idle = 0;
        warning_check(w, headroom(w, 0));
    }
}

static void exec_end(sim_engine *e, void *ctx, uint64_t arg)
{
    (void)e;
    world *w = ctx;
    if (!current(w, arg))
        return;
    uint32_t i = (uint32_t)arg;
    req *r = &w->pool[i];
    exec_stop(w, i, &w->parts[r->needs[r->idx]]);
    r->idx++;
    advance(w, i);
}

static void draw_request(world *w, const mdl_requests *rq, uint32_t step, req_draw *d,
                         uint8_t *nneeds)
{
    gsl_rng *r = sim_stream_rng(&w->s_req);
    const uint8_t *needs = &w->needs_map[(size_t)step * MDL_PARTS_MAX];
    *nneeds = w->nneeds_map[step];
    sample_amounts(&rq->payload, r, d->payload);
    for (unsigned k = 0; k < *nneeds; k++) {
        const mdl_part *p = &w->cand->parts[needs[k]];
        int64_t out[MDL_CAT_COUNT];
        d->time[k] = mdl_dist_sample(&p->inference_time, r);
        sample_amounts(&p->working_set, r, d->ws[k]);
        sample_amounts(&p->output, r, out);
        add_to(d->ws[k], out);
    }
}

static void timeout(sim_engine *e, void *ctx, uint64_t arg);

/* A new attempt of user request u enters: its payload, its timer, then a
 * slot, the queue, or a rejection. */
static void submit(world *w, uint32_t u)
{
    uint32_t i = pool_get(w);
    if (i == NIL)
        return;
    req *r = &w->pool[i];
    user *x = &w->users[u];
    int rc = mdl_ledger_owner(w->led, MDL_OWNER_REQUEST, (uint32_t)w->req_seq++, &r->owner);
    if (rc != SIM_OK) {
        sim_error_set(w->err, rc, "replication: cannot register a request (%s)",
                      sim_strerror(rc));
        r->next = w->free_head;
        w->free_head = i;
        fail(w, rc);
        return;
    }
    r->in_use = 1;
    r->user = u;
    r->orphan = 0;
    r->has_timer = 0;
    r->has_exec = 0;
    r->arrival = now(w);
    r->start = -1;
    r->nneeds = x->nneeds;
    r->state = R_QUEUED;
    memcpy(r->needs, x->needs, MDL_PARTS_MAX);
    x->live++;
    if (!take_all(w, r->owner, x->d.payload, MDL_STAGE_INFERENCE))
        return;
    if (w->rejecting) { /* on_warning reject_new */
        w->out->rejected++;
        finish(w, i, 0);
        return;
    }
    if (w->wl->timeout > 0 &&
        at(w, now(w) + w->wl->timeout, PRIO_TIMER, timeout, tag(w, i), &r->timer))
        r->has_timer = 1;
    if (w->running < w->sess_eff && w->q_len == 0) {
        start_request(w, i);
    } else if (w->pol->queue == MDL_QUEUE_UNBOUNDED || w->q_len < w->pol->queue) {
        enqueue(w, i);
    } else {
        w->out->rejected++;
        if (TRACING(w)) {
            trc_event *e = ev_begin(w, MDL_STAGE_INFERENCE, TRC_SAMPLE, -1);
            e->has |= TRC_F_ERROR;
            snprintf(e->error, sizeof e->error, "rejected");
            ev_send(w);
        }
        finish(w, i, 0);
    }
}

/* A retry of user request u: a new attempt; a duplicate working set when
 * an earlier attempt is still queued or running. */
static void retry_now(world *w, uint32_t u)
{
    user *x = &w->users[u];
    x->waiting = 0;
    x->retries++;
    w->out->retried++;
    if (x->live > 0)
        w->out->duplicates++;
    if (TRACING(w)) { /* with the payload the new attempt allocates next */
        trc_event *e = ev_begin(w, MDL_STAGE_INFERENCE, TRC_SAMPLE, -1);
        e->has |= TRC_F_ERROR;
        snprintf(e->error, sizeof e->error, "%s", x->live > 0 ? "retry_duplicate" : "retry");
        ev_alloc(e, x->d.payload);
        ev_send(w);
    }
    submit(w, u);
}

static void retry_event(sim_engine *e, void *ctx, uint64_t arg)
{
    (void)e;
    world *w = ctx;
    if (current(w, arg))
        retry_now(w, (uint32_t)arg);
}

/* The client gave up on an attempt of u: retry as the policy says. */
static void retry_after_timeout(world *w, uint32_t u)
{
    user *x = &w->users[u];
    const mdl_retry *rt = &w->pol->retry;
    if (rt->kind == MDL_RETRY_NONE || x->retries >= rt->max) {
        user_maybe_free(w, u);
        return;
    }
    x->waiting = 1;
    if (rt->kind == MDL_RETRY_ON_NEW_CONDITION) {
        x->next = w->parked;
        w->parked = u;
        return;
    }
    double d;
    if (rt->kind == MDL_RETRY_FIXED) {
        d = (double)rt->delay;
    } else {
        /* base * factor^(k-1) for retry k, capped, then +-jitter */
        d = (double)rt->base * pow(rt->factor, (double)x->retries);
        if (d > (double)rt->cap)
            d = (double)rt->cap;
        if (rt->jitter > 0)
            d *= 1.0 + rt->jitter * (2.0 * gsl_rng_uniform(sim_stream_rng(&w->s_retry)) - 1.0);
    }
    at(w, now(w) + (sim_time)(d + 0.5), PRIO_ARRIVAL, retry_event, tag(w, u), NULL);
}

/* Something changed (a fallback finished, the app is back in the
 * foreground, memory recovered): on_new_condition retries go now. */
static void new_condition(world *w)
{
    uint32_t epoch = w->epoch;
    while (w->parked != NIL && w->alive && w->epoch == epoch) {
        uint32_t u = w->parked;
        w->parked = w->users[u].next;
        retry_now(w, u);
    }
}

/* Cancels attempt i wherever it is (cancel_on_timeout). */
static void cancel(world *w, uint32_t i)
{
    req *r = &w->pool[i];
    if (r->state == R_QUEUED) {
        unqueue(w, i);
        finish(w, i, 0);
        return;
    }
    part_rt *p = &w->parts[r->needs[r->idx]];
    if (r->state == R_WAITING) {
        uint32_t *link = &p->wait_head, prev = NIL;
        while (*link != i) {
            prev = *link;
            link = &w->pool[*link].next;
        }
        *link = r->next;
        if (p->wait_tail == i)
            p->wait_tail = prev;
    } else if (r->has_exec) {
        sim_cancel(w->e, r->exec);
        exec_stop(w, i, p);
    }
    finish(w, i, 1);
}

static void timeout(sim_engine *e, void *ctx, uint64_t arg)
{
    (void)e;
    world *w = ctx;
    if (!current(w, arg))
        return;
    uint32_t i = (uint32_t)arg;
    req *r = &w->pool[i];
    uint32_t u = r->user;
    r->has_timer = 0;
    r->orphan = 1;
    w->out->timed_out++;
    if (TRACING(w)) {
        trc_event *ev = ev_begin(w, MDL_STAGE_INFERENCE, TRC_SAMPLE, -1);
        ev->has |= TRC_F_ERROR;
        snprintf(ev->error, sizeof ev->error, "timeout");
        ev_send(w);
    }
    w->users[u].live++; /* hold u while the attempt goes */
    if (w->pol->cancel_on_timeout)
        cancel(w, i);
    if (!w->alive || !current(w, arg))
        return;
    w->users[u].live--;
    retry_after_timeout(w, u);
}

/* A memory warning reached the app (arg 1), or memory recovered (arg 0). */
static void on_warning(sim_engine *e, void *ctx, uint64_t arg)
{
    (void)e;
    world *w = ctx;
    if (!current(w, arg))
        return;
    unsigned act = w->pol->on_warning;
    if ((uint32_t)arg == 0) {
        if (w->warned)
            return; /* below again at the same instant */
        w->warn_active = 0;
        apply_limits(w);
        uint32_t epoch = w->epoch;
        dispatch(w);
        if (w->alive && w->epoch == epoch)
            new_condition(w); /* the device state improved */
        return;
    }
    if (!w->warned)
        return;
    w->warn_active = 1;
    apply_limits(w);
    for (unsigned k = 0; k < w->nparts; k++) {
        part_rt *p = &w->parts[k];
        if (p->state != P_READY || p->busy > 0)
            continue; /* only what no execution uses */
        if (act & MDL_WARN_RELEASE_IDLE) {
            release_part(w, p); /* reloaded on demand */
        } else if ((act & MDL_WARN_CLEAR_CACHE) && p->sess_idle > 0) {
            /* session states are rebuildable: opened again when needed */
            mdl_ledger_free_owner(w->led, p->sess_owner, NULL);
            p->sess_idle = 0;
            warning_check(w, headroom(w, 0));
        }
    }
}

/* -------------------------------------------------------- life and death */

static void watchdog(sim_engine *e, void *ctx, uint64_t arg);
static void relaunch(sim_engine *e, void *ctx, uint64_t arg);

static void relaunch_at(world *w)
{
    if (!w->wl->has_relaunch)
        return;
    const mdl_replay *rp = w->cell->replay;
    sim_time delay = rp != NULL && rp->nrelaunch > 0
                         ? rp->relaunch[w->rp_relaunch++ % rp->nrelaunch]
                         : mdl_dist_sample(&w->wl->relaunch, sim_stream_rng(&w->s_relaunch));
    if (TRACING(w)) { /* the user's delay before reopening (for a replay) */
        trc_event *e = ev_begin(w, MDL_STAGE_EXIT, TRC_SAMPLE, -1);
        e->has |= TRC_F_DURATION;
        e->duration_us = delay;
        ev_send(w);
    }
    sim_time t = now(w) + delay;
    if (t >= w->cell->horizon)
        return;
    if (at(w, t, PRIO_PATH, relaunch, 0, &w->relaunch_h))
        w->relaunch_scheduled = 1;
}

/* Parts whose failed delegate memory was never released (a leak). */
static uint32_t leaked_owners(const world *w)
{
    uint32_t n = 0;
    for (unsigned k = 0; k < w->nparts; k++) {
        int64_t held = 0;
        for (int c = 0; c < MDL_CAT_COUNT; c++)
            held += mdl_ledger_held(w->led, w->parts[k].leak_owner, (mdl_category)c);
        n += held > 0;
    }
    return n;
}

static void configure_candidate(world *w, const mdl_candidate *c);

/* The record the death leaves, as the system writes it (DOMAIN.md 4). */
static void exit_record(world *w, mdl_exit why, mdl_stage stage)
{
    mdl_rep *o = w->out;
    const mdl_device *d = w->dev;
    mdl_exit_record r;
    memset(&r, 0, sizeof r);
    r.cls = why;
    r.time = now(w);
    r.stage = stage;
    r.importance = w->fg ? 100 : 400;
    if (d->os == MDL_OS_IOS) {
        /* the footprint at the kill: jetsam reports carry it */
        r.pss_kb = r.rss_kb = mdl_ledger_counted(w->led) / 1024;
        switch (why) {
        case MDL_EXIT_WATCHDOG:
            r.kind = MDL_REC_WATCHDOG;
            r.status = 9;
            r.description = MDL_TEXT_WATCHDOG;
            break;
        case MDL_EXIT_NATIVE_CRASH:
            r.kind = MDL_REC_CRASH;
            r.status = 11;
            r.description = MDL_TEXT_IOS_SEGV;
            break;
        default: /* low_memory: over the jetsam limit */
            if (w->fg) {
                r.kind = MDL_REC_EXC_RESOURCE;
                r.description = MDL_TEXT_EXC_RESOURCE;
            } else {
                r.kind = MDL_REC_JETSAM;
                r.description = MDL_TEXT_JETSAM;
            }
            r.status = 9;
            break;
        }
    } else {
        r.kind = MDL_REC_EXIT_INFO;
        r.pss_kb = w->sample_pss_kb;
        r.rss_kb = w->sample_rss_kb;
        switch (why) {
        case MDL_EXIT_JAVA_CRASH:
            r.reason = MDL_AEI_CRASH;
            r.status = 0;
            r.description = MDL_TEXT_JAVA_OOM;
            break;
        case MDL_EXIT_NATIVE_CRASH:
            r.reason = MDL_AEI_CRASH_NATIVE;
            r.status = 6;
            r.description = MDL_TEXT_NATIVE_ABRT;
            break;
        case MDL_EXIT_ANR:
            r.reason = MDL_AEI_ANR;
            r.status = 0;
            r.description = MDL_TEXT_ANR;
            break;
        default: /* low_memory, system_reclaim: an lmkd kill */
            if (d->low_memory_reporting) {
                r.reason = MDL_AEI_LOW_MEMORY;
                r.status = 0;
                r.description = MDL_TEXT_LMKD;
            } else {
                r.reason = MDL_AEI_SIGNALED;
                r.status = 9;
                r.description = MDL_TEXT_SIGNALED;
            }
            break;
        }
    }
    if (o->nrecords < MDL_RECORDS_KEPT)
        o->records[o->nrecords++] = r;
    unsigned k = 0;
    while (k < o->nrecord_kinds &&
           !(o->record_kinds[k].kind == r.kind && o->record_kinds[k].reason == r.reason &&
             o->record_kinds[k].status == r.status &&
             o->record_kinds[k].importance == r.importance &&
             o->record_kinds[k].description == r.description))
        k++;
    if (k == o->nrecord_kinds && k < MDL_RECORD_KINDS_MAX) {
        mdl_record_kind_count *c = &o->record_kinds[o->nrecord_kinds++];
        memset(c, 0, sizeof *c);
        c->kind = r.kind;
        c->reason = r.reason;
        c->status = r.status;
        c->importance = r.importance;
        c->description = r.description;
    }
    if (k < o->nrecord_kinds) { /* more signatures than the table: impossible here */
        o->record_kinds[k].count++;
        o->record_kinds[k].pss_kb_sum += r.pss_kb;
    }
    if (TRACING(w)) {
        static const trc_exit_reason reason_of[MDL_EXIT_COUNT] = {
            TRC_LOW_MEMORY, TRC_JAVA_CRASH, TRC_NATIVE_CRASH, TRC_ANR, TRC_SYSTEM_RECLAIM,
            TRC_UNKNOWN}; /* watchdog: no trace class of its own */
        trc_event *e = ev_begin(w, MDL_STAGE_EXIT, TRC_EXIT_EVENT, -1);
        e->has |= TRC_F_EXIT_REASON | TRC_F_EXIT;
        e->exit_reason = reason_of[why];
        e->exit.has = TRC_X_IMPORTANCE | TRC_X_PSS_KB | TRC_X_RSS_KB | TRC_X_STATUS |
                      TRC_X_TIMESTAMP_MS;
        if (r.kind == MDL_REC_EXIT_INFO) {
            e->exit.has |= TRC_X_REASON_CODE;
            e->exit.reason_code = r.reason;
        }
        e->exit.importance = r.importance;
        e->exit.pss_kb = r.pss_kb;
        e->exit.rss_kb = r.rss_kb;
        e->exit.status = r.status;
        e->exit.timestamp_ms = r.time / 1000;
        ev_send(w);
    }
}

/* The system's periodic pss/rss sample of the process (Android). */
static void sample(sim_engine *e, void *ctx, uint64_t arg)
{
    (void)e;
    world *w = ctx;
    if (!current(w, arg))
        return;
    int64_t all = 0;
    for (int c = 0; c < MDL_CAT_COUNT; c++)
        all += mdl_ledger_total(w->led, (mdl_category)c);
    w->sample_pss_kb = mdl_ledger_counted(w->led) / 1024;
    w->sample_rss_kb = all / 1024;
    if (TRACING(w)) {
        ev_begin(w, w->last_stage < MDL_STAGE_COUNT ? w->last_stage : MDL_STAGE_LOAD, TRC_SAMPLE,
                 -1);
        ev_send(w);
    }
    at(w, now(w) + w->dev->pss_sample, PRIO_PRESSURE, sample, tag(w, 0), NULL);
}

/* The recovery state learns of a death (before the process's state
 * goes), and decides what the next cold start does. */
static void record_failure(world *w, mdl_exit why, mdl_stage stage)
{
    const mdl_policy *pol = w->pol;
    if (!w->startup_done)
        w->rec.same_stage = w->rec.same_stage > 0 && stage == w->rec.failed_stage
                                ? w->rec.same_stage + 1 : 1;
    else
        w->rec.same_stage = 0;
    w->rec.failed_stage = stage;
    w->rec.consec[why]++;
    const mdl_candidate *lkg = w->cell->lkg;
    /* only a candidate whose identity, files and receipt are complete */
    int lkg_ok = lkg != NULL && lkg->receipt_complete && w->cand != lkg;
    int trigger = w->rec.same_stage >= pol->safe_mode_after;
    switch (pol->recovery) {
    case MDL_RECOVERY_NAIVE:
        break;
    case MDL_RECOVERY_SAFE_MODE:
        if (trigger)
            w->rec.safe_mode = 1;
        break;
    case MDL_RECOVERY_FALLBACK_LKG:
        if (trigger) {
            if (lkg_ok)
                w->rec.candidate = lkg;
            else
                w->rec.safe_mode = 1;
        }
        break;
    case MDL_RECOVERY_LADDER:
        /* one more step per failure, in order of reversibility */
        if (w->rec.ladder_step < pol->nladder) {
            mdl_action a = pol->ladder[w->rec.ladder_step++];
            w->acts |= 1u << a;
            if (a == MDL_ACT_FALLBACK_LKG && lkg_ok)
                w->rec.candidate = lkg;
        }
        break;
    }
}

static void stable(sim_engine *e, void *ctx, uint64_t arg)
{
    (void)e;
    world *w = ctx;
    if (!current(w, arg))
        return;
    /* a stable run: the consecutive counts start again */
    memset(w->rec.consec, 0, sizeof w->rec.consec);
    w->rec.same_stage = 0;
    w->rec.last_stable = w->cand;
}

static void die(world *w, mdl_exit why, mdl_stage stage)
{
    mdl_rep *o = w->out;
    if (o->deaths_total == 0) {
        o->first_death = why;
        o->first_death_stage = stage;
        o->first_death_time = now(w);
        o->first_death_counted = mdl_ledger_counted(w->led);
    }
    o->deaths[why]++;
    o->deaths_total++;
    if (!w->startup_done) {
        if (++w->consec_startup_deaths >= 2)
            o->boot_loop = 1;
    } else {
        w->consec_startup_deaths = 0;
    }
    o->alive_us += now(w) - w->alive_since;
    accept_mark(w);
    queue_area(w);
    exit_record(w, why, stage);
    record_failure(w, why, stage);
    o->leaks += leaked_owners(w); /* the process dies with its leak */
    mdl_ledger_clear(w->led);
    for (uint32_t i = 0; i < w->pool_cap; i++) {
        req *r = &w->pool[i];
        if (!r->in_use)
            continue;
        o->lost++;
        if (mdl_ledger_retire(w->led, r->owner, w->err) != SIM_OK)
            fail(w, SIM_EINTERNAL);
        r->in_use = 0;
        r->next = w->free_head;
        w->free_head = i;
    }
    w->users_free = NIL; /* the client's requests die with the app */
    for (uint32_t u = w->users_cap; u-- > 0;) {
        w->users[u].in_use = 0;
        w->users[u].next = w->users_free;
        w->users_free = u;
    }
    w->parked = NIL;
    for (unsigned k = 0; k < w->nparts; k++) {
        part_rt *p = &w->parts[k];
        const mdl_part *def = p->def;
        mdl_owner a = p->owner, b = p->sess_owner, c = p->leak_owner;
        memset(p, 0, sizeof *p);
        p->def = def;
        p->owner = a;
        p->sess_owner = b;
        p->leak_owner = c;
        p->wait_head = p->wait_tail = NIL;
    }
    w->q_len = 0;
    w->q_head = 0;
    w->running = 0;
    w->switching = 0;
    w->alive = 0;
    w->warned = 0;
    w->warn_active = 0;
    w->epoch++;
    relaunch_at(w);
}

static void cold_start(world *w)
{
    if (w->alive)
        return;
    if (w->relaunch_scheduled) {
        sim_cancel(w->e, w->relaunch_h);
        w->relaunch_scheduled = 0;
    }
    w->relaunch_pending = 0;
    /* the relaunch reads the recovery state before any model work */
    if (w->rec.candidate != w->cand) {
        configure_candidate(w, w->rec.candidate);
        w->consec_startup_deaths = 0; /* a boot loop is of one candidate */
        w->rec.same_stage = 0;
        w->rec.safe_mode = 0;         /* a new condition: the candidate changed */
        w->out->candidate_switches++;
    }
    w->startup_skip = w->rec.safe_mode || (w->acts & (1u << MDL_ACT_STOP_PREWARM));
    w->degraded = (w->acts & (1u << MDL_ACT_DEGRADE_CPU)) != 0;
    if (w->rec.safe_mode)
        w->out->safe_mode_starts++;
    w->alive = 1;
    w->fg = !w->path_bg;
    w->epoch++;
    w->alive_since = now(w);
    w->accept_since = now(w);
    apply_limits(w);
    if (TRACING(w)) { /* what the recovery state put in force for this start */
        const char *acts[MDL_ACT_COUNT + 2];
        unsigned na = 0;
        if (w->rec.safe_mode)
            acts[na++] = "safe_mode";
        if (w->out->candidate_switches > 0 && w->cand == w->cell->lkg)
            acts[na++] = "fallback_lkg";
        for (int a = 0; a < MDL_ACT_COUNT; a++)
            if ((w->acts >> a & 1u) && a != MDL_ACT_FALLBACK_LKG)
                acts[na++] = mdl_action_name((mdl_action)a);
        for (unsigned k = 0; k < na; k++) {
            trc_event *e = ev_begin(w, MDL_STAGE_LOAD, TRC_RECOVERY, -1);
            e->has |= TRC_F_ACTION;
            snprintf(e->action, sizeof e->action, "%s", acts[k]);
            ev_send(w);
        }
    }
    w->sample_pss_kb = w->sample_rss_kb = 0; /* a new process: not sampled yet */
    if (w->dev->os == MDL_OS_ANDROID &&
        !at(w, now(w) + w->dev->pss_sample, PRIO_PRESSURE, sample, tag(w, 0), NULL))
        return;
    w->q_last = now(w);
    double u = gsl_rng_uniform(sim_stream_rng(&w->s_fail)); /* drawn even without a cache */
    w->cache_valid = !w->cand->has_cache || u < w->cand->cache_hit;
    w->startup_next = 0;
    unsigned nstart = w->startup_skip ? 0 : w->nstartup;
    w->startup_done = nstart == 0;
    if (w->startup_done)
        started(w);
    int main_work = 0;
    for (unsigned k = 0; k < nstart; k++) {
        const mdl_part *p = &w->cand->parts[w->startup[k]];
        main_work |= p->load.main_thread | p->prepare.main_thread |
                     (p->has_delegate_prepare && p->delegate_prepare.main_thread);
    }
    const mdl_device *d = w->dev;
    if (d->os == MDL_OS_IOS && d->launch_watchdog > 0 && main_work &&
        !at(w, now(w) + d->launch_watchdog, PRIO_TIMER, watchdog, tag(w, 0), NULL))
        return;
    startup_continue(w);
}

static void watchdog(sim_engine *e, void *ctx, uint64_t arg)
{
    (void)e;
    world *w = ctx;
    if (current(w, arg) && !w->startup_done)
        die(w, MDL_EXIT_WATCHDOG, w->last_stage);
}

static void relaunch(sim_engine *e, void *ctx, uint64_t arg)
{
    (void)e;
    (void)arg;
    world *w = ctx;
    w->relaunch_scheduled = 0;
    if (w->alive)
        return;
    if (w->path_bg)
        w->relaunch_pending = 1; /* the user reopens the app when back */
    else
        cold_start(w);
}

static void pressure(sim_engine *e, void *ctx, uint64_t arg)
{
    (void)e;
    (void)arg;
    world *w = ctx;
    gsl_rng *r = sim_stream_rng(&w->s_press);
    int64_t size = mdl_dist_sample(&w->dev->pressure_size, r);
    w->out->pressure_spikes++;
    if (w->alive) {
        if (TRACING(w))
            ev_note(w, w->last_stage, "pressure_spike");
        kill_check(w, size, w->last_stage);
    }
    sim_time t = now(w) + mdl_dist_sample(&w->dev->pressure, r);
    if (t < w->cell->horizon)
        at(w, t, PRIO_PRESSURE, pressure, 0, NULL);
}

/* ---------------------------------------------------------------- path */

static void step(sim_engine *e, void *ctx, uint64_t arg);

static void next_step(world *w, sim_time t)
{
    at(w, t, PRIO_PATH, step, w->rq_step + 1, NULL);
}

/* User request u (its draws and needs filled in) is made now. */
static void user_arrives(world *w, uint32_t u, uint8_t nneeds)
{
    user *x = &w->users[u];
    x->in_use = 1;
    x->first = now(w);
    x->nneeds = nneeds;
    x->live = x->retries = 0;
    x->waiting = 0;
    x->id = w->user_seq++;
    w->out->arrived++;
    if (w->times != NULL && w->times->arrival != NULL)
        w->times->arrival(w->times->ctx, now(w));
    if (TRACING(w)) { /* the request, its needs and its payload (for a replay) */
        trc_event *e = ev_begin(w, MDL_STAGE_INFERENCE, TRC_SAMPLE, -1);
        e->has |= TRC_F_REQUEST | TRC_F_STEP | TRC_F_NEEDS;
        e->request = (int64_t)x->id;
        e->step = w->rq_step; /* the path step (unique per occurrence of a repeated step) */
        size_t len = 0;
        for (unsigned k = 0; k < nneeds; k++) {
            const char *name = w->cand->parts[x->needs[k]].name;
            size_t nl = strlen(name);
            if (len + nl + (k > 0) >= sizeof e->needs) {
                sim_error_set(w->err, SIM_ELIMIT, "the needs of a request do not fit in a "
                              "trace's %d-byte string", TRC_TEXT_MAX - 1);
                fail(w, SIM_ELIMIT);
                return;
            }
            if (k > 0)
                e->needs[len++] = ',';
            memcpy(e->needs + len, name, nl);
            len += nl;
        }
        e->needs[len] = '\0';
        ev_alloc(e, x->d.payload);
        ev_send(w);
    }
    submit(w, u);
}

/* A trace-driven run: recorded request k arrives (when the app is alive). */
static void replay_arrival(sim_engine *e, void *ctx, uint64_t arg)
{
    (void)e;
    world *w = ctx;
    const mdl_replay_request *q = &w->cell->replay->requests[(uint32_t)arg];
    if (!w->alive)
        return;
    uint32_t u = user_get(w);
    if (u == NIL)
        return;
    user *x = &w->users[u];
    memset(&x->d, 0, sizeof x->d);
    memcpy(x->d.payload, q->payload, sizeof q->payload);
    for (unsigned k = 0; k < q->nneeds; k++) {
        x->d.time[k] = q->time_of[k];
        memcpy(x->d.ws[k], q->ws[k], sizeof q->ws[k]);
    }
    memcpy(x->needs, q->needs, MDL_PARTS_MAX);
    user_arrives(w, u, q->nneeds);
}

static void arrival(sim_engine *e, void *ctx, uint64_t arg)
{
    (void)e;
    world *w = ctx;
    const mdl_requests *rq = w->rq;
    uint32_t rqi = (uint32_t)arg;
    /* drawn in place in the request's slot; while the app is dead the
     * draws are made all the same (into scratch) so later requests match */
    uint32_t u = NIL;
    req_draw scratch, *d = &scratch;
    if (w->alive) {
        if ((u = user_get(w)) == NIL)
            return;
        d = &w->users[u].d;
    }
    uint8_t nneeds;
    draw_request(w, rq, rqi, d, &nneeds);
    if (u != NIL) {
        memcpy(w->users[u].needs, &w->needs_map[(size_t)rqi * MDL_PARTS_MAX], MDL_PARTS_MAX);
        user_arrives(w, u, nneeds);
    }
    if (w->rc != SIM_OK)
        return;
    if (rq->count > 0 && --w->rq_left == 0) {
        if (rq->poisson)
            next_step(w, now(w));
        return;
    }
    sim_time gap = rq->poisson ? sim_stream_exp_us(&w->s_arr, rq->mean_gap_us) : rq->every;
    if (gap < 1)
        gap = 1;
    sim_time t = now(w) + gap;
    if (rq->count == 0 && t > w->rq_end)
        return;
    at(w, t, PRIO_ARRIVAL, arrival, arg, NULL);
}

static void background_end(sim_engine *e, void *ctx, uint64_t arg)
{
    (void)e;
    (void)arg;
    world *w = ctx;
    w->path_bg = 0;
    if (w->alive) {
        w->fg = 1;
        if (TRACING(w))
            ev_note(w, w->last_stage, "foreground");
        uint32_t epoch = w->epoch;
        kill_check(w, 0, w->last_stage); /* the foreground limits differ */
        if (w->alive && w->epoch == epoch)
            new_condition(w); /* back in the foreground */
    } else if (w->relaunch_pending) {
        cold_start(w);
    }
    if (w->rc == SIM_OK)
        next_step(w, now(w));
}

static void step(sim_engine *e, void *ctx, uint64_t arg)
{
    (void)e;
    world *w = ctx;
    uint32_t i = (uint32_t)arg;
    w->rq_step = i;
    if (i >= w->wl->nsteps)
        return;
    const mdl_step *s = &w->wl->steps[i];
    sim_time t = now(w);
    switch (s->kind) {
    case MDL_STEP_COLD_START:
        cold_start(w);
        break;
    case MDL_STEP_ENTER:
    case MDL_STEP_LEAVE:
        break;
    case MDL_STEP_BACKGROUND:
        w->path_bg = 1;
        if (w->alive) {
            w->fg = 0;
            if (TRACING(w))
                ev_note(w, w->last_stage, "background");
            kill_check(w, 0, w->last_stage);
        }
        at(w, t + s->duration, PRIO_PATH, background_end, 0, NULL);
        return;
    case MDL_STEP_REQUESTS: {
        const mdl_requests *rq = &w->wl->requests[s->index];
        const mdl_replay *rp = w->cell->replay;
        if (rp != NULL) {
            /* the recorded arrivals of this step; a step that ends at its
             * last arrival ends at the last recorded one */
            sim_time end = t + rq->duration;
            if (rq->count > 0 && rq->poisson)
                end = t;
            while (w->rp_next_req < rp->nrequests && rp->requests[w->rp_next_req].step < i)
                w->rp_next_req++; /* a step this run did not reach the same way */
            while (w->rp_next_req < rp->nrequests && rp->requests[w->rp_next_req].step == i) {
                const mdl_replay_request *q = &rp->requests[w->rp_next_req];
                sim_time at_t = q->time < t ? t : q->time;
                if (rq->count > 0 && rq->poisson && at_t > end)
                    end = at_t;
                if (!at(w, at_t, PRIO_ARRIVAL, replay_arrival, w->rp_next_req, NULL))
                    return;
                w->rp_next_req++;
            }
            next_step(w, end);
            return;
        }
        w->rq = rq;
        w->rq_left = rq->count;
        w->rq_end = t + rq->duration;
        sim_time gap = rq->poisson ? sim_stream_exp_us(&w->s_arr, rq->mean_gap_us) : rq->every;
        if (gap < 1)
            gap = 1;
        if (rq->count > 0 || t + gap <= w->rq_end)
            at(w, t + gap, PRIO_ARRIVAL, arrival, s->index, NULL);
        /* rate + count ends at its last arrival (see arrival()) */
        if (rq->count == 0 || !rq->poisson)
            next_step(w, w->rq_end);
        return;
    }
    }
    if (w->rc == SIM_OK)
        next_step(w, t);
}

/* ------------------------------------------------------------ the cell */

static int part_index(const mdl_candidate *c, const char *name)
{
    for (unsigned k = 0; k < c->nparts; k++)
        if (strcmp(c->parts[k].name, name) == 0)
            return (int)k;
    return -1;
}

int mdl_cell_check(const mdl_cell *cell, sim_error *err)
{
    const mdl_candidate *c = cell->candidate;
    const mdl_workload *wl = cell->workload;
    for (uint32_t q = 0; q < wl->nrequests; q++)
        for (unsigned k = 0; k < wl->requests[q].nneeds; k++)
            if (part_index(c, wl->requests[q].needs[k]) < 0)
                return sim_error_set(err, SIM_EINPUT, "needs: candidate %s has no part '%s'",
                                     c->id, wl->requests[q].needs[k]);
    for (unsigned k = 0; k < cell->policy.nprewarm; k++)
        if (part_index(c, cell->policy.prewarm[k]) < 0)
            return sim_error_set(err, SIM_EINPUT, "prewarm: candidate %s has no part '%s'",
                                 c->id, cell->policy.prewarm[k]);
    if (cell->policy.sessions < 1 || cell->policy.sessions > MDL_SESSIONS_MAX)
        return sim_error_set(err, SIM_EINPUT, "sessions: %u outside [1, %u]",
                             cell->policy.sessions, MDL_SESSIONS_MAX);
    if (c->nparts < 1)
        return sim_error_set(err, SIM_EINPUT, "candidate %s has no parts", c->id);
    return SIM_OK;
}

/* Makes c the process's candidate (at setup, or at a relaunch that
 * switches to the last known good): its parts, the parts each requests
 * step needs (by name; a name it lacks: all its parts), the start-up list.
 * Only while no process runs. */
static void configure_candidate(world *w, const mdl_candidate *c)
{
    const mdl_workload *wl = w->wl;
    const mdl_policy *pol = w->pol;
    w->cand = c;
    for (uint32_t q = 0; q < wl->nrequests; q++) {
        const mdl_requests *rq = &wl->requests[q];
        uint8_t *m = &w->needs_map[(size_t)q * MDL_PARTS_MAX];
        unsigned n = 0;
        int all = rq->nneeds == 0;
        for (unsigned k = 0; k < rq->nneeds && !all; k++) {
            int x = part_index(c, rq->needs[k]);
            if (x < 0)
                all = 1;
            else
                m[n++] = (uint8_t)x;
        }
        if (all)
            for (n = 0; n < c->nparts; n++)
                m[n] = (uint8_t)n;
        w->nneeds_map[q] = (uint8_t)n;
    }
    w->nparts = c->nparts;
    for (unsigned k = 0; k < c->nparts; k++) {
        w->parts[k].def = &c->parts[k];
        w->parts[k].wait_head = w->parts[k].wait_tail = NIL;
    }
    w->nstartup = 0;
    if (pol->residency == MDL_RES_PRELOAD) {
        w->res_cap = c->nparts;
        for (unsigned k = 0; k < c->nparts; k++)
            w->startup[w->nstartup++] = (uint8_t)k;
    } else {
        w->res_cap = pol->residency == MDL_RES_LRU ? pol->lru_k : 1;
        for (unsigned k = 0; k < pol->nprewarm; k++) {
            int x = part_index(c, pol->prewarm[k]);
            if (x >= 0)
                w->startup[w->nstartup++] = (uint8_t)x;
        }
    }
}

/* The ledger could not hand out an owner: out of memory, or its limit. */
static int owners_failed(sim_error *err, int rc)
{
    if (rc == SIM_ENOMEM)
        return sim_error_set(err, rc, "replication: out of memory for the ledger's owners");
    return sim_error_set(err, rc, "replication: cannot register owners (%s)", sim_strerror(rc));
}

static int setup(world *w, const mdl_cell *cell, uint64_t rep, sim_error *err)
{
    const mdl_candidate *c = cell->candidate;
    const mdl_workload *wl = cell->workload;
    int rc = mdl_cell_check(cell, err);
    if (rc != SIM_OK)
        return rc;
    sim_engine_config ec;
    memset(&ec, 0, sizeof ec);
    ec.alloc = w->alloc;
    if ((w->e = sim_engine_create(&ec, err)) == NULL)
        return err->code;
    if ((w->led = mdl_ledger_create(w->alloc, cell->device->counts_mask, err)) == NULL)
        return err->code;
    sim_stream *streams[] = {&w->s_dev,  &w->s_arr,      &w->s_req,   &w->s_stage,
                             &w->s_fail, &w->s_relaunch, &w->s_press, &w->s_retry};
    static const uint64_t purposes[] = {PURPOSE_DEVICE, PURPOSE_ARRIVALS, PURPOSE_REQUESTS,
                                        PURPOSE_STAGES, PURPOSE_FAILURES, PURPOSE_RELAUNCH,
                                        PURPOSE_PRESSURE, PURPOSE_RETRY};
    /* the jitter stream only when there is jitter (a stream costs its
     * 624-word state at every replication) */
    const mdl_retry *rt = &cell->policy.retry;
    unsigned nstreams = rt->kind == MDL_RETRY_BACKOFF && rt->jitter > 0 ? 8 : 7;
    for (unsigned k = 0; k < nstreams; k++) {
        if (sim_stream_init(streams[k], w->alloc, cell->seed, rep, purposes[k]) != SIM_OK)
            return sim_error_set(err, SIM_ENOMEM, "replication: out of memory for streams");
        w->streams++;
    }
    size_t nmap = (size_t)(wl->nrequests > 0 ? wl->nrequests : 1);
    w->needs_map = sim_malloc(w->alloc, nmap * MDL_PARTS_MAX);
    w->nneeds_map = sim_malloc(w->alloc, nmap);
    if (w->needs_map == NULL || w->nneeds_map == NULL)
        return sim_error_set(err, SIM_ENOMEM, "replication: out of memory");
    /* owners for every part of the candidate and of its last known good */
    unsigned nowners = c->nparts;
    if (cell->lkg != NULL && cell->lkg->nparts > nowners)
        nowners = cell->lkg->nparts;
    for (unsigned k = 0; k < nowners; k++) {
        part_rt *p = &w->parts[k];
        if ((rc = mdl_ledger_owner(w->led, MDL_OWNER_PART, k, &p->owner)) != SIM_OK ||
            (rc = mdl_ledger_owner(w->led, MDL_OWNER_SESSION, k, &p->sess_owner)) != SIM_OK ||
            (rc = mdl_ledger_owner(w->led, MDL_OWNER_LEAKED, k, &p->leak_owner)) != SIM_OK)
            return owners_failed(err, rc);
    }
    if ((rc = mdl_ledger_owner(w->led, MDL_OWNER_CACHE, 0, &w->cache_owner)) != SIM_OK)
        return owners_failed(err, rc);
    const mdl_policy *pol = &cell->policy;
    configure_candidate(w, c);
    w->rec.candidate = c;
    w->rec.failed_stage = MDL_STAGE_NONE;
    w->free_head = NIL;
    w->users_free = NIL;
    w->parked = NIL;
    w->sess_eff = pol->sessions;
    w->out->switch_peak = -1;
    w->startup_done = 1;
    w->last_stage = MDL_STAGE_NONE;
    w->fg = 1;
    w->cached = mdl_dist_sample(&cell->device->cached_apps, sim_stream_rng(&w->s_dev));
    if (at(w, 0, PRIO_PATH, step, 0, NULL) != 1)
        return w->rc;
    if (cell->device->has_pressure && cell->device->rule == MDL_KILL_LMK) {
        sim_time t = mdl_dist_sample(&cell->device->pressure, sim_stream_rng(&w->s_press));
        if (t < cell->horizon && !at(w, t, PRIO_PRESSURE, pressure, 0, NULL))
            return w->rc;
    }
    return SIM_OK;
}

/* The horizon: an orderly shutdown, so that whatever is still held
 * afterwards is a leak of the model's bookkeeping. */
static void teardown(world *w)
{
    mdl_rep *o = w->out;
    w->ending = 1;
    if (w->alive) {
        o->alive_us += w->cell->horizon - w->alive_since;
        if (!w->rejecting)
            o->accepting_us += w->cell->horizon - w->accept_since;
        queue_area(w);
        for (uint32_t i = 0; i < w->pool_cap; i++) {
            req *r = &w->pool[i];
            if (r->in_use) {
                mdl_ledger_free_owner(w->led, r->owner, NULL);
                mdl_ledger_retire(w->led, r->owner, w->err);
                r->in_use = 0;
            }
        }
        for (unsigned k = 0; k < w->nparts; k++) {
            part_rt *p = &w->parts[k];
            give_all(w, p->owner, p->transient);
            give_all(w, p->owner, p->failed_tr);
            give_all(w, w->cache_owner, p->cache_tr);
            if (p->state == P_READY || p->state == P_LOADING)
                release_part(w, p);
        }
    }
    o->leaks += mdl_ledger_leaks(w->led, NULL, NULL);
}

static void destroy(world *w)
{
    sim_stream *streams[] = {&w->s_dev,  &w->s_arr,      &w->s_req,   &w->s_stage,
                             &w->s_fail, &w->s_relaunch, &w->s_press, &w->s_retry};
    for (unsigned k = 0; k < w->streams; k++)
        sim_stream_release(streams[k]);
    size_t nmap = (size_t)(w->wl->nrequests > 0 ? w->wl->nrequests : 1);
    sim_free(w->alloc, w->needs_map, nmap * MDL_PARTS_MAX);
    sim_free(w->alloc, w->nneeds_map, nmap);
    sim_free(w->alloc, w->pool, (size_t)w->pool_cap * sizeof *w->pool);
    sim_free(w->alloc, w->users, (size_t)w->users_cap * sizeof *w->users);
    sim_free(w->alloc, w->q, (size_t)w->q_cap * sizeof *w->q);
    mdl_ledger_destroy(w->led);
    sim_engine_destroy(w->e);
}

int mdl_run_replication(const mdl_cell *cell, uint64_t rep, const sim_alloc *alloc,
                        const mdl_times_sink *times, mdl_rep *out, sim_error *err)
{
    return mdl_run_replication_traced(cell, rep, alloc, times, NULL, out, err);
}

int mdl_run_replication_traced(const mdl_cell *cell, uint64_t rep, const sim_alloc *alloc,
                               const mdl_times_sink *times, const mdl_trace_sink *trace,
                               mdl_rep *out, sim_error *err)
{
    memset(out, 0, sizeof *out);
    world w;
    memset(&w, 0, sizeof w);
    w.cell = cell;
    w.dev = cell->device;
    w.cand = cell->candidate;
    w.wl = cell->workload;
    w.pol = &cell->policy;
    w.alloc = alloc != NULL ? alloc : sim_alloc_default();
    w.times = times;
    w.trace = trace;
    w.out = out;
    w.err = err;
    int rc = setup(&w, cell, rep, err);
    if (rc == SIM_OK) {
        int run = sim_run(w.e, cell->horizon);
        rc = w.rc != SIM_OK ? w.rc : (run < 0 ? run : SIM_OK);
    }
    if (rc == SIM_OK) {
        teardown(&w);
        rc = w.rc;
    }
    if (rc == SIM_OK)
        rc = mdl_ledger_validate(w.led, err);
    if (rc == SIM_OK) {
        mdl_ledger_stats st;
        mdl_ledger_stats_get(w.led, &st);
        out->peak = st.peak;
        out->peak_stage = st.peak_stage;
        memcpy(out->stage_peak, st.stage_peak, sizeof st.stage_peak);
        out->events = sim_events_fired(w.e);
    }
    destroy(&w);
    return rc;
}
