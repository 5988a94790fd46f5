/* world.c - the runner: one replication of one grid cell, the world set up
 * on a fresh engine and ledger, run to the horizon, torn down in order.
 * Nothing calls back into it; the helpers every file uses live with their
 * concern (world_int.h: the events and a failure; inforce.c: the candidate
 * in force).
 *
 * The semantics are docs/model.md's; world_int.h says how the state is
 * split by lifetime and by concern, which file changes which part, and the
 * one hazard of the model (the process may die under you).  models/README.md
 * has every file's concern: the models that decide below, the world that
 * acts above. */
#include "world_int.h"

/* Some part of c generates tokens. */
static int generates(const mdl_candidate *c)
{
    for (unsigned k = 0; k < c->nparts; k++)
        if (c->parts[k].has_generation)
            return 1;
    return 0;
}

/* The ledger could not hand out an owner: out of memory, or its limit. */
static int owners_failed(sim_error *err, int rc)
{
    if (rc == SIM_ENOMEM)
        return sim_error_set(err, rc, "replication: out of memory for the ledger's owners");
    return sim_error_set(err, rc, "replication: cannot register owners (%s)", sim_strerror(rc));
}

/* The app's own stream: only when the scenario or device draws from it
 * (a stream costs its 624-word state at every replication). */
static int draws_app(const mdl_cell *cell)
{
    return cell->workload->has_app || cell->workload->nholds > 0 ||
           cell->device->has_successor || cell->workload->has_proc;
}

#define W_STREAMS 10

/* The world's streams, in the order of init_streams' purposes (and of
 * stream_mask's bits). */
static void stream_list(world *w, sim_stream *s[W_STREAMS])
{
    sim_stream *all[W_STREAMS] = {&w->s_dev,  &w->s_arr,      &w->s_req,   &w->s_stage,
                                  &w->s_fail, &w->s_relaunch, &w->s_press, &w->s_retry,
                                  &w->s_app,  &w->s_own};
    memcpy(s, all, sizeof all);
}

static int init_streams(world *w, const mdl_cell *cell, uint64_t rep, sim_error *err)
{
    sim_stream *streams[W_STREAMS];
    stream_list(w, streams);
    static const uint64_t purposes[] = {PURPOSE_DEVICE, PURPOSE_ARRIVALS, PURPOSE_REQUESTS,
                                        PURPOSE_STAGES, PURPOSE_FAILURES, PURPOSE_RELAUNCH,
                                        PURPOSE_PRESSURE, PURPOSE_RETRY, PURPOSE_APP,
                                        PURPOSE_OWNERS};
    /* the jitter stream only when there is jitter */
    const mdl_retry *rt = &cell->policy.retry;
    int needed[W_STREAMS] = {1, 1, 1, 1, 1, 1, 1, rt->kind == MDL_RETRY_BACKOFF && rt->jitter > 0,
                     draws_app(cell), cell->workload->nholders > 0};
    for (unsigned k = 0; k < W_STREAMS; k++) {
        if (!needed[k])
            continue;
        if (sim_stream_init(streams[k], w->alloc, cell->seed, rep, purposes[k]) != SIM_OK)
            return sim_error_set(err, SIM_ENOMEM, "replication: out of memory for streams");
        w->stream_mask |= 1u << k;
    }
    return SIM_OK;
}

/* Owners for every part of the candidate and of its last known good, and
 * the cache's. */
static int init_owners(world *w, const mdl_cell *cell, sim_error *err)
{
    unsigned nowners = cell->candidate->nparts;
    if (cell->lkg != NULL && cell->lkg->nparts > nowners)
        nowners = cell->lkg->nparts;
    int rc;
    for (unsigned k = 0; k < nowners; k++) {
        w_part_id *id = &w->store.part[k];
        if ((rc = mdl_ledger_owner(w->led, MDL_OWNER_PART, k, &id->owner)) != SIM_OK ||
            (rc = mdl_ledger_owner(w->led, MDL_OWNER_SESSION, k, &id->sess_owner)) != SIM_OK ||
            (rc = mdl_ledger_owner(w->led, MDL_OWNER_LEAKED, k, &id->leak_owner)) != SIM_OK)
            return owners_failed(err, rc);
    }
    if ((rc = mdl_ledger_owner(w->led, MDL_OWNER_CACHE, 0, &w->cache_owner)) != SIM_OK)
        return owners_failed(err, rc);
    if ((rc = mdl_ledger_owner(w->led, MDL_OWNER_APP, 0, &w->app_owner)) != SIM_OK)
        return owners_failed(err, rc);
    if (w->svc && (rc = mdl_ledger_owner(w->led, MDL_OWNER_APP, 1, &w->svc_owner)) != SIM_OK)
        return owners_failed(err, rc);
    return SIM_OK;
}

#ifdef OOMSIM_WORLD_CHECK
/* Attempts and pending events up to which every event is checked. */
#define CHECK_EVERY_EVENT_UP_TO 4096u
/* The engine's pending-set check walks all its 2049 radix buckets whatever
 * is pending, and the ledger's walks every owner: they run after every
 * this-many events (and the ledger's at the end of every replication). */
#define QUEUE_CHECK_EVERY 64u

/* After every event (builds with OOMSIM_WORLD_CHECK): the world keeps its
 * invariants, and so does the engine's pending set.  The world's check is
 * linear in the attempts and the pending events; past
 * CHECK_EVERY_EVENT_UP_TO of them (a queue that grows toward its limit) it
 * runs after every k-th event, k = size / CHECK_EVERY_EVENT_UP_TO + 1, so a
 * check costs about as much per event as in a small world. */
static int check_after_event(void *ctx)
{
    world *w = ctx;
    uint64_t fired = sim_events_fired(w->e);
    uint64_t size = (uint64_t)w->store.pool_cap + sim_pending(w->e);
    int rc = SIM_OK;
    if (fired % QUEUE_CHECK_EVERY == 0) {
        rc = sim_queue_validate(w->e, w->err);
        if (rc == SIM_OK)
            rc = mdl_ledger_validate(w->led, w->err);
    }
    if (rc == SIM_OK && fired % (size / CHECK_EVERY_EVENT_UP_TO + 1) == 0)
        rc = w__validate_state(w, w->err);
    if (rc != SIM_OK && w->rc == SIM_OK)
        w->rc = rc;
    return rc;
}
#endif

static int init_engine(world *w, const mdl_cell *cell, sim_error *err)
{
    sim_engine_config ec;
    memset(&ec, 0, sizeof ec);
    ec.alloc = w->alloc;
    /* A replication keeps about four events pending (the next arrival,
     * the executions' ends, a timer): a binary heap that small beats the
     * radix heap, which redistributes a one-event bucket at nearly every
     * step (docs/design/engine.md, "The world's pending set"). */
    ec.pending = SIM_PENDING_HEAP;
    ec.heap_arity_log2 = 1;
#ifdef OOMSIM_WORLD_CHECK
    ec.after_event = check_after_event;
    ec.after_ctx = w;
#endif
    if ((w->e = sim_engine_create(&ec, err)) == NULL)
        return err->code;
    if ((w->led = mdl_ledger_create(w->alloc, cell->device->counts_mask, err)) == NULL)
        return err->code;
    return SIM_OK;
}

/* The first events: the path's first step and the first pressure spike. */
static int first_events(world *w, const mdl_cell *cell)
{
    if (w__at(w, 0, PRIO_PATH, w__step, 0, NULL) != SIM_OK)
        return w->rc;
    if (cell->device->has_pressure && cell->device->rule == MDL_KILL_LMK) {
        sim_time t = mdl_dist_sample(&cell->device->pressure, sim_stream_rng(&w->s_press));
        if (t < cell->horizon && w__at(w, t, PRIO_PRESSURE, w__pressure, 0, NULL) != SIM_OK)
            return w->rc;
    }
    return SIM_OK;
}

static int setup(world *w, const mdl_cell *cell, uint64_t rep, sim_error *err)
{
    int rc = mdl_cell_check(cell, err);
    if (rc == SIM_OK)
        rc = init_engine(w, cell, err);
    if (rc == SIM_OK)
        rc = init_streams(w, cell, rep, err);
    if (rc != SIM_OK)
        return rc;
    size_t nmap = (size_t)(w->wl->nrequests > 0 ? w->wl->nrequests : 1);
    w->needs_map = sim_malloc(w->alloc, nmap * MDL_PARTS_MAX);
    w->nneeds_map = sim_malloc(w->alloc, nmap);
    if (w->needs_map == NULL || w->nneeds_map == NULL)
        return sim_error_set(err, SIM_ENOMEM, "replication: out of memory");
    if ((rc = init_owners(w, cell, err)) != SIM_OK)
        return rc;
    if (w->wl->nholds > 0) {
        size_t n = (size_t)w->wl->npages * sizeof *w->page_held;
        if ((w->page_held = sim_malloc(w->alloc, n)) == NULL)
            return sim_error_set(err, SIM_ENOMEM, "replication: out of memory");
        memset(w->page_held, 0, n);
    }
    if (generates(cell->candidate) || (cell->lkg != NULL && generates(cell->lkg))) {
        w->gslots = sim_malloc(w->alloc, GEN_SLOTS_BYTES);
        w->gen_in_force = sim_malloc(w->alloc, MDL_PARTS_MAX * sizeof *w->gen_in_force);
        if (w->gslots == NULL || w->gen_in_force == NULL)
            return sim_error_set(err, SIM_ENOMEM, "replication: out of memory");
        memset(w->gslots, 0, GEN_SLOTS_BYTES);
    }
    w->src = cell->replay != NULL ? &w__costs_recorded : &w__costs_drawn;
    w__configure_candidate(w, cell->candidate);
    mdl_recovery_init(&w->life.rec, cell->candidate);
    w->store.free_head = NIL;
    w->proc.users_free = NIL;
    w->proc.parked = NIL;
    w->lim.sess_eff = cell->policy.sessions;
    w->out->switch_peak = -1;
    w->proc.startup_done = 1;
    w->last_stage = MDL_STAGE_NONE;
    w->proc.fg = 1;
    w->dstate.cached = mdl_dist_sample(&cell->device->cached_apps, sim_stream_rng(&w->s_dev));
    w__pages_setup(w);
    return first_events(w, cell);
}

void w__close(world *w)
{
    sim_stream *streams[W_STREAMS];
    stream_list(w, streams);
    for (unsigned k = 0; k < W_STREAMS; k++)
        if (w->stream_mask & (1u << k))
            sim_stream_release(streams[k]);
    if (w->page_held != NULL)
        sim_free(w->alloc, w->page_held, (size_t)w->wl->npages * sizeof *w->page_held);
    size_t nmap = (size_t)(w->wl->nrequests > 0 ? w->wl->nrequests : 1);
    if (w->gslots != NULL)
        sim_free(w->alloc, w->gslots, GEN_SLOTS_BYTES);
    if (w->gen_in_force != NULL)
        sim_free(w->alloc, w->gen_in_force, MDL_PARTS_MAX * sizeof *w->gen_in_force);
    sim_free(w->alloc, w->needs_map, nmap * MDL_PARTS_MAX);
    sim_free(w->alloc, w->nneeds_map, nmap);
    sim_free(w->alloc, w->store.pool, (size_t)w->store.pool_cap * sizeof *w->store.pool);
    sim_free(w->alloc, w->store.users, (size_t)w->store.users_cap * sizeof *w->store.users);
    sim_free(w->alloc, w->store.q, (size_t)w->store.q_cap * sizeof *w->store.q);
    sim_free(w->alloc, w->store.sess, (size_t)w->store.sess_cap * sizeof *w->store.sess);
    mdl_ledger_destroy(w->led);
    sim_engine_destroy(w->e);
}

int w__open(world *w, const mdl_cell *cell, uint64_t rep, const sim_alloc *alloc,
            const mdl_times_sink *times, const mdl_trace_sink *trace, mdl_rep *out,
            sim_error *err)
{
    memset(out, 0, sizeof *out);
    out->min_margin = INT64_MAX;
    memset(w, 0, sizeof *w);
    w->cell = cell;
    mdl_device_in_force(cell->device, &cell->policy, &w->dev_in_force);
    w->dev = &w->dev_in_force;
    w->thermal_on = cell->replay == NULL && w->dev->thermal.nsteps > 0;
    w->thermal_speed = 1.0;
    w__warning_levels(w);
    w->cand = cell->candidate;
    w->wl = cell->workload;
    w->hold = w->wl->nholders > 0 ? &w__holders : NULL;
    w->svc = cell->workload->has_proc;
    w->pol = &cell->policy;
    w->alloc = alloc != NULL ? alloc : sim_alloc_default();
    w->times = times;
    w->trace = trace;
    w->out = out;
    w->err = err;
    return setup(w, cell, rep, err);
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
    world w;
    int rc = w__open(&w, cell, rep, alloc, times, trace, out, err);
    if (rc == SIM_OK) {
        int run = sim_run(w.e, cell->horizon);
        rc = w.rc != SIM_OK ? w.rc : (run < 0 ? run : SIM_OK);
    }
    if (rc == SIM_OK) {
        w__teardown(&w);
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
        out->file_peak = st.category_peak[MDL_CAT_FILE];
        out->events = sim_events_fired(w.e);
    }
    w__close(&w);
    return rc;
}
