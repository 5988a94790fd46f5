/* owners.c - who holds sessions of the model (a scenario's `owners`,
 * docs/model.md "Owners"): a page from its enter to its leave, a
 * background task while a run lasts, a service while the process lives.
 * An owner that opens loads the parts it needs and, once each is ready,
 * opens its session states of it; one that closes closes them, and a part
 * no owner holds any more is released (the on-demand residencies; preload
 * keeps every part for the process's life).  An owner that never releases
 * (`releases: false`) leaves its sessions open: leaked, held until the
 * part goes or the process dies.  Requests of an owner execute on its
 * idle sessions first.  The sessions are w_store.sess records (their
 * memory the part's session owner's in the ledger); the process's death
 * takes them all.  Without owners nothing here runs.  Any call here may
 * kill the process (world_int.h). */
#include "world_int.h"

static const mdl_holder *holder(const world *w, uint32_t h) { return &w->wl->holders[h]; }

/* The first free session record, the array grown when none is (NIL: out
 * of memory, the replication failed). */
static uint32_t sess_slot(world *w)
{
    for (uint32_t k = 0; k < w->proc.nsess; k++)
        if (!w->store.sess[k].in_use)
            return k;
    if (w->proc.nsess == w->store.sess_cap) {
        uint32_t cap = w->store.sess_cap ? 2 * w->store.sess_cap : 16;
        w_session *v = sim_malloc(w->alloc, (size_t)cap * sizeof *v);
        if (v == NULL) {
            sim_error_set(w->err, SIM_ENOMEM, "replication: out of memory for the sessions");
            w__fail(w, SIM_ENOMEM);
            return NIL;
        }
        if (w->store.sess_cap > 0)
            memcpy(v, w->store.sess, (size_t)w->store.sess_cap * sizeof *v);
        sim_free(w->alloc, w->store.sess, (size_t)w->store.sess_cap * sizeof *v);
        w->store.sess = v;
        w->store.sess_cap = cap;
    }
    return w->proc.nsess++;
}

/* Sessions of part k that owner h holds open (leaked ones are no longer its). */
static uint32_t held(const world *w, uint32_t h, unsigned k)
{
    uint32_t n = 0;
    for (uint32_t s = 0; s < w->proc.nsess; s++) {
        const w_session *x = &w->store.sess[s];
        n += x->in_use && !x->leaked && !x->closing && x->holder == h && x->part == k;
    }
    return n;
}

/* Another owner than `but` holding part k: an open one that needs it, or
 * a leaked session of it.  NIL when none. */
static uint32_t other_holder(const world *w, unsigned k, uint32_t but)
{
    for (uint32_t h = 0; h < w->wl->nholders; h++) {
        if (h == but || !w->proc.h_open[h])
            continue;
        for (unsigned j = 0; j < w->h_nneeds[h]; j++)
            if (w->h_needs[h][j] == k)
                return h;
    }
    for (uint32_t s = 0; s < w->proc.nsess; s++)
        if (w->store.sess[s].in_use && w->store.sess[s].leaked && w->store.sess[s].part == k)
            return w->store.sess[s].holder;
    return NIL;
}

/* held_after_leave: part k's clock since a page that needed it left, if
 * it runs, stopped and counted. */
static void stop_clock(world *w, unsigned k)
{
    if (!w->proc.left[k])
        return;
    w->out->held_after_leave_us += now(w) - w->proc.left_at[k];
    w->proc.left[k] = 0;
}

static const char *made_text(const world *w, uint32_t h, char *buf, size_t n)
{
    const mdl_holder *x = holder(w, h);
    if (x->kind == MDL_HOLDER_PAGE)
        snprintf(buf, n, "enter %s", w->wl->pages[x->page]);
    else
        snprintf(buf, n, "%s", x->kind == MDL_HOLDER_TASK ? "task run" : "process start");
    return buf;
}

/* Owner h's sessions of ready part p, up to its count: drawn, charged to
 * the part's session owner (a generation part's session is its context,
 * made at its first request: no memory of its own here). */
static w_fate open_sessions(world *w, uint32_t h, part_rt *p)
{
    unsigned k = (unsigned)(p - w->proc.parts);
    uint32_t epoch = w->epoch;
    char made[MDL_NAME_MAX + 8];
    for (uint32_t n = held(w, h, k); n < holder(w, h)->sessions; n++) {
        uint32_t s = sess_slot(w);
        if (s == NIL)
            return W_GONE;
        w_session *x = &w->store.sess[s];
        memset(x, 0, sizeof *x);
        x->in_use = 1;
        x->part = (uint8_t)k;
        x->holder = (uint8_t)h;
        x->id = w->proc.sess_seq++;
        x->last_req = -1;
        x->opened = now(w);
        if (!W_GEN(w, p) && w->src == &w__costs_recorded)
            w->src->session(w, k, x->amount); /* the recording's, in its order */
        else if (!W_GEN(w, p)) /* a stream of its own: the stage draws do not move */
            sample_amounts(&part_id(w, p)->def->session, sim_stream_rng(&w->s_own), x->amount);
        /* the drawn state, as an execution's opening announces it (a replay
         * draws it again from there) */
        w__emit_session(w, k, holder(w, h)->name, x->id, "session_open",
                        made_text(w, h, made, sizeof made), -1, x->amount);
        if (!W_GEN(w, p) && (w->pol->copy_runtime || !w->cand->shares_weights))
            add_to(x->amount, p->prepare_res); /* its own copy of the prepared runtime */
        if (w__charge(w, part_id(w, p)->sess_owner, x->amount, MDL_STAGE_INFERENCE) != W_LIVES ||
            !still(w, epoch))
            return W_GONE;
    }
    return W_LIVES;
}

/* release_first: a load waits for room, which a pending release makes. */
static int switch_waits(const world *w)
{
    if (w->pol->residency != MDL_RES_RELEASE_FIRST)
        return 0;
    for (unsigned k = 0; k < w->nparts; k++)
        if (w->proc.parts[k].deferred)
            return 1;
    return 0;
}

/* Owner h's opening loads unloaded part k itself: not a part the start-up
 * loads (preload's, or prewarm's before the start-up is done: their
 * order is the start-up's), nor a service's at a start that skips the
 * model's start-up work (safe mode). */
/* Part k is one the start-up has still to load (from its next entry on). */
static int startup_part(const world *w, unsigned k)
{
    if (w->proc.startup_done || w->proc.startup_skip)
        return 0;
    for (unsigned j = w->proc.startup_next; j < w->nstartup; j++)
        if (w->startup[j] == k)
            return 1;
    return 0;
}

static int loads_now(const world *w, uint32_t h, unsigned k)
{
    if (w->proc.startup_skip)
        return holder(w, h)->kind != MDL_HOLDER_SERVICE;
    return !startup_part(w, k);
}

/* Owner h opens: each part it needs is loaded (an on-demand load when it
 * is not), its sessions opened once the part is ready. */
static w_fate holder_open(world *w, uint32_t h)
{
    uint32_t epoch = w->epoch;
    w->proc.h_open[h] = 1;
    for (unsigned j = 0; j < w->h_nneeds[h] && still(w, epoch); j++) {
        unsigned k = w->h_needs[h][j];
        part_rt *p = &w->proc.parts[k];
        if (holder(w, h)->kind == MDL_HOLDER_PAGE)
            stop_clock(w, k); /* the page is back */
        p->unwanted = 0;
        if (p->state == P_READY && p->release_pending && switch_waits(w)) {
            /* release_first: it goes first, for the load waiting for its room;
             * the sessions open when it is loaded again */
        } else if (p->state == P_READY) {
            p->release_pending = 0; /* wanted again before it went */
            if (open_sessions(w, h, p) != W_LIVES)
                return W_GONE;
        } else if (p->state == P_UNLOADED && loads_now(w, h, k)) {
            if (w__begin_load(w, p, 1) != W_LIVES)
                return W_GONE; /* the sessions open when it is ready (w__holders_part_ready) */
        }
    }
    return still(w, epoch) ? W_LIVES : W_GONE;
}

/* Frees session s's memory and its record. */
static void close_session(world *w, uint32_t s, const char *result)
{
    w_session *x = &w->store.sess[s];
    part_rt *p = &w->proc.parts[x->part];
    w__emit_session(w, x->part, holder(w, x->holder)->name, x->id, "session_close", result,
                    x->last_req, NULL);
    w__give(w, part_id(w, p)->sess_owner, x->amount);
    x->in_use = 0;
}

/* release_first: no load waits for room any more (one was dropped): the
 * parts an owner holds that were to go for it stay, and the owners that
 * opened meanwhile get their sessions. */
static void keep_held(world *w)
{
    uint32_t epoch = w->epoch;
    if (switch_waits(w))
        return;
    for (unsigned k = 0; k < w->nparts && still(w, epoch); k++) {
        part_rt *q = &w->proc.parts[k];
        if (q->state != P_READY || !q->release_pending || other_holder(w, k, NIL) == NIL)
            continue;
        q->release_pending = 0;
        for (uint32_t h = 0; h < w->wl->nholders && still(w, epoch); h++)
            for (unsigned j = 0; j < w->h_nneeds[h]; j++)
                if (w->proc.h_open[h] && w->h_needs[h][j] == k &&
                    open_sessions(w, h, q) != W_LIVES)
                    return;
    }
}

/* Part p, which no owner holds now: released when it is ready and idle
 * (when busy, at its executions' end); a load for nobody (no request waits
 * for it) is dropped while deferred (what was to go for its room and is
 * held stays: keep_held), released once ready when it runs. */
static void let_go(world *w, part_rt *p)
{
    if (p->state == P_READY && p->busy > 0) {
        p->release_pending = 1;
    } else if (p->state == P_READY) {
        w__release_part(w, p);
    } else if (p->state == P_LOADING && p->wait_head == NIL &&
               !startup_part(w, (unsigned)(p - w->proc.parts))) {
        if (p->deferred) { /* not started: dropped */
            p->deferred = 0;
            p->state = P_UNLOADED;
            keep_held(w);
        } else {
            p->unwanted = 1;
        }
    }
}

/* Owner h closes: its sessions close (a busy one when its execution ends),
 * or leak when it never releases; a part no owner holds any more goes
 * (not under preload).  After a page leaves, a part it needed that stays
 * resident starts held_after_leave's clock. */
static void holder_close(world *w, uint32_t h)
{
    const mdl_holder *o = holder(w, h);
    w->proc.h_open[h] = 0;
    for (unsigned j = 0; j < w->h_nneeds[h]; j++) {
        unsigned k = w->h_needs[h][j];
        part_rt *p = &w->proc.parts[k];
        uint32_t other = other_holder(w, k, h);
        char result[MDL_NAME_MAX + 16];
        if (!o->releases)
            snprintf(result, sizeof result, "leaked");
        else if (other != NIL)
            snprintf(result, sizeof result, "still held by %s", holder(w, other)->name);
        else
            snprintf(result, sizeof result, "released");
        for (uint32_t s = 0; s < w->proc.nsess; s++) {
            w_session *x = &w->store.sess[s];
            if (!x->in_use || x->leaked || x->closing || x->holder != h || x->part != k)
                continue;
            if (!o->releases) {
                x->leaked = 1;
                w->out->leaked_sessions++;
                w__emit_session(w, k, o->name, x->id, "session_leaked", result, x->last_req,
                                NULL);
            } else if (x->busy) {
                x->closing = 1; /* closes when its execution ends */
            } else {
                close_session(w, s, result);
            }
        }
        if (other == NIL && o->releases && w->pol->residency != MDL_RES_PRELOAD)
            let_go(w, p);
        if (o->kind == MDL_HOLDER_PAGE && p->state == P_READY && !w->proc.left[k]) {
            w->proc.left[k] = 1; /* resident after the page left */
            w->proc.left_at[k] = now(w);
        }
    }
}

/* ---------------------------------------------------------- tasks */

static void task_run(sim_engine *e, void *ctx, uint64_t arg);

static void task_next(world *w, uint32_t h)
{
    sim_time gap = mdl_dist_sample(&holder(w, h)->every, sim_stream_rng(&w->s_own));
    sim_time t = now(w) + (gap < 1 ? 1 : gap);
    if (t < w->cell->horizon)
        (void)w__at(w, t, PRIO_PATH, task_run, tag(w, h), NULL);
}

static void task_end(sim_engine *e, void *ctx, uint64_t arg)
{
    (void)e;
    world *w = ctx;
    if (!current(w, arg))
        return;
    uint32_t h = (uint32_t)arg;
    w->proc.tasks--;
    holder_close(w, h);
    if (w->proc.alive && w__kill_check(w, 0, w->last_stage) == W_LIVES)
        task_next(w, h); /* its adj back to the app's: checked at it */
}

static void task_run(sim_engine *e, void *ctx, uint64_t arg)
{
    (void)e;
    world *w = ctx;
    if (!current(w, arg))
        return;
    uint32_t h = (uint32_t)arg;
    uint32_t epoch = w->epoch;
    w->proc.tasks++;
    if (holder_open(w, h) != W_LIVES || !still(w, epoch))
        return;
    (void)w__at(w, now(w) + holder(w, h)->runs, PRIO_PATH, task_end, tag(w, h), NULL);
}

/* ------------------------------------------------------- the world's calls */

static void holders_config(world *w, const mdl_candidate *c)
{
    for (uint32_t h = 0; h < w->wl->nholders; h++) {
        const mdl_holder *o = holder(w, h);
        unsigned n = 0;
        if (o->nneeds == 0) {
            for (unsigned k = 0; k < c->nparts; k++)
                w->h_needs[h][n++] = (uint8_t)k;
        }
        for (unsigned j = 0; j < o->nneeds; j++)
            for (unsigned k = 0; k < c->nparts; k++)
                if (strcmp(c->parts[k].name, o->needs[j]) == 0)
                    w->h_needs[h][n++] = (uint8_t)k;
        w->h_nneeds[h] = (uint8_t)n;
    }
}

static void holders_start(world *w)
{
    uint32_t epoch = w->epoch;
    for (uint32_t h = 0; h < w->wl->nholders && still(w, epoch); h++) {
        /* a service; a page the user is on (a relaunch restores it) */
        int open = holder(w, h)->kind == MDL_HOLDER_SERVICE ||
                   (holder(w, h)->kind == MDL_HOLDER_PAGE && w->path.on_page[h]);
        if (open && holder_open(w, h) != W_LIVES)
            return;
        if (holder(w, h)->kind == MDL_HOLDER_TASK)
            task_next(w, h);
    }
}

void w__holders_page(world *w, uint32_t page, int enter)
{
    uint32_t epoch = w->epoch;
    for (uint32_t h = 0; h < w->wl->nholders; h++)
        if (holder(w, h)->kind == MDL_HOLDER_PAGE && holder(w, h)->page == page)
            w->path.on_page[h] = (uint8_t)enter; /* the path's, whether the app lives or not */
    for (uint32_t h = 0; h < w->wl->nholders && still(w, epoch); h++) {
        const mdl_holder *o = holder(w, h);
        if (o->kind != MDL_HOLDER_PAGE || o->page != page || enter == w->proc.h_open[h])
            continue;
        if (!enter)
            holder_close(w, h);
        else if (holder_open(w, h) != W_LIVES)
            return;
    }
}

static int holders_unwanted(world *w, part_rt *p)
{
    unsigned k = (unsigned)(p - w->proc.parts);
    if (!p->unwanted)
        return 0;
    p->unwanted = 0; /* loaded for an owner that has closed since */
    if (p->wait_head != NIL || other_holder(w, k, NIL) != NIL)
        return 0;
    w__release_part(w, p);
    return 1;
}

static w_fate holders_part_ready(world *w, part_rt *p)
{
    unsigned k = (unsigned)(p - w->proc.parts);
    for (uint32_t h = 0; h < w->wl->nholders; h++) {
        if (!w->proc.h_open[h])
            continue;
        for (unsigned j = 0; j < w->h_nneeds[h]; j++)
            if (w->h_needs[h][j] == k && open_sessions(w, h, p) != W_LIVES)
                return W_GONE;
    }
    return W_LIVES;
}

static void holders_part_gone(world *w, part_rt *p, const char *why)
{
    unsigned k = (unsigned)(p - w->proc.parts);
    stop_clock(w, k);
    for (uint32_t s = 0; s < w->proc.nsess; s++) {
        w_session *x = &w->store.sess[s];
        if (x->in_use && x->part == k) {
            if (!x->leaked && !x->closing)
                w__emit_session(w, k, holder(w, x->holder)->name, x->id, "session_close", why,
                                x->last_req, NULL);
            x->in_use = 0; /* its memory went with the part's session owner */
        }
    }
}

static int holders_take(world *w, req *r, part_rt *p)
{
    uint32_t h = w->store.users[r->user].holder;
    unsigned k = (unsigned)(p - w->proc.parts);
    if (h == MDL_NO_HOLDER)
        return 0;
    for (uint32_t s = 0; s < w->proc.nsess; s++) {
        w_session *x = &w->store.sess[s];
        if (x->in_use && !x->busy && !x->leaked && !x->closing && x->holder == h &&
            x->part == k) {
            x->busy = 1;
            x->last_req = (int64_t)w->store.users[r->user].id;
            r->hsess = s;
            return 1;
        }
    }
    return 0;
}

static void holders_put(world *w, req *r)
{
    w_session *x = &w->store.sess[r->hsess];
    r->hsess = NIL;
    x->busy = 0;
    if (x->closing) {
        x->closing = 0;
        uint32_t other = other_holder(w, x->part, x->holder);
        char result[MDL_NAME_MAX + 16] = "released";
        if (other != NIL)
            snprintf(result, sizeof result, "still held by %s", holder(w, other)->name);
        close_session(w, (uint32_t)(x - w->store.sess), result);
    }
}

static void holders_end(world *w)
{
    for (unsigned k = 0; k < MDL_PARTS_MAX; k++)
        stop_clock(w, k);
}

const w_holders w__holders = {holders_config,    holders_start,    holders_unwanted,
                              holders_part_ready, holders_part_gone, holders_take,
                              holders_put,       holders_end};
