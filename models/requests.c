/* requests.c - the user's requests in the process: their attempts (the
 * first submission and the retries), the FIFO queue and its bound, the
 * execution slots, executing on parts with their session states, timeouts,
 * cancellation and the retry policies.  The records live in pool.c's
 * pools.  Any call here may kill the process (world_int.h). */
#include <math.h>
#include <stdio.h>

#include "world_int.h"

/* ------------------------------------------------------------- queue */

void w__queue_area(world *w)
{
    sim_time t = now(w);
    w->out->queue_area += (double)w->proc.q_len * (double)(t - w->proc.q_last);
    w->proc.q_last = t;
}

static int enqueue(world *w, uint32_t i)
{
    w_proc *pr = &w->proc;
    if (pr->q_len == w->store.q_cap) {
        uint32_t cap = w->store.q_cap == 0 ? 64 : w->store.q_cap * 2;
        uint32_t *q = sim_malloc(w->alloc, (size_t)cap * sizeof *q);
        if (q == NULL) {
            sim_error_set(w->err, SIM_ENOMEM, "replication: out of memory for the queue");
            w__fail(w, SIM_ENOMEM);
            return SIM_ENOMEM;
        }
        for (uint32_t k = 0; k < pr->q_len; k++)
            q[k] = w->store.q[(pr->q_head + k) % w->store.q_cap];
        sim_free(w->alloc, w->store.q, (size_t)w->store.q_cap * sizeof *q);
        w->store.q = q;
        w->store.q_cap = cap;
        pr->q_head = 0;
    }
    w__queue_area(w);
    w->store.q[(pr->q_head + pr->q_len) % w->store.q_cap] = i;
    pr->q_len++;
    w->store.pool[i].state = R_QUEUED;
    return SIM_OK;
}

static uint32_t dequeue(world *w)
{
    w_proc *pr = &w->proc;
    w__queue_area(w);
    uint32_t i = w->store.q[pr->q_head];
    pr->q_head = (pr->q_head + 1) % w->store.q_cap;
    pr->q_len--;
    return i;
}

/* Takes attempt i out of the queue, wherever it is (a cancelled timeout). */
static void unqueue(world *w, uint32_t i)
{
    w_proc *pr = &w->proc;
    w__queue_area(w);
    uint32_t k = 0;
    while (k < pr->q_len && w->store.q[(pr->q_head + k) % w->store.q_cap] != i)
        k++;
    for (; k + 1 < pr->q_len; k++)
        w->store.q[(pr->q_head + k) % w->store.q_cap] = w->store.q[(pr->q_head + k + 1) % w->store.q_cap];
    pr->q_len--;
}

/* ------------------------------------------------------------ attempts */


/* The attempt leaves the system: payload released, owner retired. */
void w__finish(world *w, uint32_t i, int had_slot)
{
    w_proc *pr = &w->proc;
    req *r = &w->store.pool[i];
    if (r->has_timer) {
        sim_cancel(w->e, r->timer);
        r->has_timer = 0;
    }
    mdl_ledger_free_owner(w->led, r->owner, NULL);
    int rc = mdl_ledger_retire(w->led, r->owner, w->err);
    if (rc != SIM_OK)
        w__fail(w, rc);
    r->in_use = 0;
    r->next = w->store.free_head;
    w->store.free_head = i;
    w->store.users[r->user].live--;
    w__user_maybe_free(w, r->user);
    w__warning_after_free(w);
    if (had_slot) {
        pr->running--;
        w__dispatch(w);
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
    req *r = &w->store.pool[i];
    w->proc.running++;
    r->start = -1;
    r->state = R_RUNNING;
    r->idx = 0;
    w__advance(w, i);
}

/* Starts queued attempts while slots are free.  An attempt that ends at
 * once (a failed part) frees its slot inside the loop: the loop, not a
 * nested call, starts the next, so the stack stays flat however long the
 * queue. */
void w__dispatch(world *w)
{
    if (w->proc.dispatching)
        return;
    w->proc.dispatching = 1;
    uint32_t epoch = w->epoch;
    while (w->proc.alive && w->proc.running < w->lim.sess_eff && w->proc.q_len > 0)
        start_request(w, dequeue(w));
    if (still(w, epoch))
        w->proc.dispatching = 0;
}


/* Attempt i executes on ready part p: a session state when none is idle
 * (copy_runtime: with its own copy of the prepared runtime) and its
 * working set, one allocation of stage inference. */
/* The phone's heat counted to now, with an execution running from now on or
 * not; a step reached or left is told to the timeline (`thermal:NAME`). */
void w__heat(world *w, int busy)
{
    if (!w->thermal_on)
        return;
    const mdl_thermal *t = &w->dev->thermal;
    mdl_heat_to(t, &w->heat, now(w), busy);
    unsigned k = mdl_heat_step(t, &w->heat, w->thermal_step);
    if (k == w->thermal_step)
        return;
    w->thermal_step = k;
    w->thermal_speed = mdl_heat_speed(t, k);
    char what[32];
    snprintf(what, sizeof what, "thermal:%s", mdl_thermal_name(w->dev->os, k));
    w__emit_note(w, -1, MDL_STAGE_INFERENCE, what);
}

/* Whether any execution still runs in the process. */
static int executing(const world *w)
{
    for (unsigned k = 0; k < w->cand->nparts; k++)
        if (w->proc.parts[k].busy > 0)
            return 1;
    return 0;
}

static void execute(world *w, uint32_t i, part_rt *p)
{
    req *r = &w->store.pool[i];
    const req_draw *d = &w->store.users[r->user].d;
    /* the weights reclaim dropped are read back first (the page model) */
    uint32_t epoch = w->epoch;
    sim_time refault = w__pages_refault(w, p);
    if (!still(w, epoch))
        return;
    if (W_GEN(w, p)) {
        w__gen_execute(w, i, p, refault);
        return;
    }
    w->exec_extra = refault;
    w__heat(w, 1);
    p->last_use = ++w->lru_clock;
    p->busy++;
    if (r->start < 0)
        r->start = now(w);
    int owned = w->hold != NULL && w->hold->take(w, r, p);
    int opened = !owned && p->sess_idle == 0;
    int64_t sess[MDL_CAT_COUNT] = {0};
    if (opened)
        w->src->session(w, (unsigned)(p - w->proc.parts), sess);
    w__emit_inference_begin(w, p, r, opened ? sess : NULL);
    if (opened && (w->pol->copy_runtime || !w->cand->shares_weights))
        add_to(sess, p->prepare_res);
    if (!opened && !owned)
        p->sess_idle--;
    const mdl_owner owners[2] = {part_id(w, p)->sess_owner, r->owner};
    const int64_t *amounts[2] = {sess, d->ws[r->idx]};
    if (w__charge_n(w, 2, owners, amounts, MDL_STAGE_INFERENCE) != W_LIVES)
        return;
    sim_time base = EXEC_TIME(w, p, d->time[r->idx]);
    sim_time t = base + refault + pg_take_stall(&w->pg);
    if (w->pg.on)
        pg_inference(&w->pg, base, t);
    if (w__at(w, now(w) + t, PRIO_RELEASE, w__exec_end, tag(w, i), &r->exec) == SIM_OK)
        r->has_exec = 1;
}

static void wait_for(world *w, uint32_t i, part_rt *p)
{
    req *r = &w->store.pool[i];
    r->state = R_WAITING;
    r->next = NIL;
    if (p->wait_tail == NIL)
        p->wait_head = i;
    else
        w->store.pool[p->wait_tail].next = i;
    p->wait_tail = i;
}

/* Attempt i moves on to its next need, or is served. */
void w__advance(world *w, uint32_t i)
{
    req *r = &w->store.pool[i];
    if (r->idx == r->nneeds) {
        if (!r->orphan) {
            /* the attempt the client waits for: the request is served */
            w->out->completed++;
            record_times(w, r->start - r->arrival, now(w) - w->store.users[r->user].first);
        }
        w__finish(w, i, 1);
        return;
    }
    part_rt *p = &w->proc.parts[r->needs[r->idx]];
    switch (p->state) {
    case P_READY:
        if (p->on_delegate && w->deny_bg_delegate && !w->proc.fg) {
            /* iOS: no GPU work in the background: it fails at its start */
            if (!r->orphan)
                w->out->failed++;
            w__emit_request_note(w, "background_gpu_denied", r->user);
            w__finish(w, i, 1);
            return;
        }
        if (p->release_pending && w->pol->residency == MDL_RES_RELEASE_FIRST) {
            int deferred = 0;
            for (unsigned k = 0; k < w->nparts; k++)
                deferred |= w->proc.parts[k].deferred != 0;
            if (deferred) {
                wait_for(w, i, p); /* it goes first: served when it is loaded again */
                return;
            }
        }
        p->release_pending = 0; /* wanted again before it went */
        if (w__part_full(w, p)) {
            wait_for(w, i, p); /* every KV region decodes: served when one is free */
            return;
        }
        execute(w, i, p);
        return;
    case P_LOADING:
        wait_for(w, i, p);
        return;
    case P_UNLOADED:
        wait_for(w, i, p);
        if (w__begin_load(w, p, 1) != W_LIVES)
            return; /* the load killed the process: i is gone with it */
        return;     /* i is served when the part is ready */
    default: /* P_FAILED */
        if (!r->orphan) {
            w->out->failed++;
            w__emit_request_note(w, "part_failed", r->user);
        }
        w__finish(w, i, 1);
        return;
    }
}

/* The execution of attempt i on part p ends (or is cancelled). */
static void exec_stop(world *w, uint32_t i, part_rt *p)
{
    req *r = &w->store.pool[i];
    int gen = W_GEN(w, p);
    if (gen)
        w__gen_stop(w, i, p);
    const int64_t *ws = w->store.users[r->user].d.ws[r->idx];
    r->has_exec = 0;
    for (int c = 0; c < MDL_CAT_COUNT; c++)
        if (ws[c] > 0 && mdl_ledger_free(w->led, r->owner, (mdl_category)c, ws[c], w->err) !=
                             SIM_OK)
            w__fail(w, SIM_EINTERNAL);
    w__warning_after_free(w);
    w__emit_inference_end(w, p, r);
    p->busy--;
    if (w->thermal_on)
        w__heat(w, executing(w));
    if (r->hsess != NIL)
        w->hold->put(w, r); /* the owner's session: idle again, or closed */
    else
        p->sess_idle++;
    unsigned acts = w->life.rec.acts;
    if (p->busy == 0 && (p->release_pending || (acts & (1u << MDL_ACT_RELEASE_IDLE)))) {
        w__release_part(w, p); /* ladder release_idle: a part goes when idle */
    } else if (p->busy == 0 && (acts & (1u << MDL_ACT_CLEAR_CACHE))) {
        w__drop_sessions(w, p); /* sessions are rebuildable */
    } else if (gen && p->busy == 0 && w->pol->unload_after > 0) {
        w__unload_later(w, p);
    }
}

/* unload_after's timer: the part goes once it has been idle that long
 * (used again meanwhile, the timer waits on from its new idle start). */
static void unload_idle(sim_engine *e, void *ctx, uint64_t arg)
{
    (void)e;
    world *w = ctx;
    if (!current(w, arg))
        return;
    part_rt *p = &w->proc.parts[(uint32_t)arg];
    p->unload_armed = 0;
    if (p->state != P_READY || p->busy > 0)
        return; /* gone, or busy: its next idle start arms it again */
    if (now(w) >= p->idle_since + w->pol->unload_after) {
        w__release_part(w, p); /* the next request loads it again */
        return;
    }
    if (w__at(w, p->idle_since + w->pol->unload_after, PRIO_RELEASE, unload_idle, arg, NULL) ==
        SIM_OK)
        p->unload_armed = 1;
}

/* unload_after: the part became idle now. */
void w__unload_later(world *w, part_rt *p)
{
    p->idle_since = now(w);
    if (p->unload_armed)
        return;
    if (w__at(w, now(w) + w->pol->unload_after, PRIO_RELEASE, unload_idle,
              tag(w, (uint32_t)(p - w->proc.parts)), NULL) == SIM_OK)
        p->unload_armed = 1;
}

/* The end of an execution on a generation part: its last tokens' KV
 * charged and checked, then the region freed goes to who waited for one,
 * before the queue's next (out of line: the other parts' path stays short). */
#if defined(__GNUC__)
__attribute__((noinline))
#endif
static void gen_exec_end(world *w, uint32_t i, part_rt *p)
{
    uint32_t epoch = w->epoch;
    if (w__gen_settle(w, i, p) != W_LIVES)
        return; /* the last tokens' KV killed the process */
    exec_stop(w, i, p);
    if (still(w, epoch))
        w__gen_wake(w, p);
    if (!still(w, epoch))
        return;
    w->store.pool[i].idx++;
    w__advance(w, i);
}

void w__exec_end(sim_engine *e, void *ctx, uint64_t arg)
{
    (void)e;
    world *w = ctx;
    if (!current(w, arg))
        return;
    uint32_t i = (uint32_t)arg;
    req *r = &w->store.pool[i];
    part_rt *p = &w->proc.parts[r->needs[r->idx]];
    if (W_GEN(w, p)) {
        gen_exec_end(w, i, p);
        return;
    }
    uint32_t epoch = w->epoch;
    exec_stop(w, i, p);
    if (w->epoch != epoch)
        return; /* the part went, and its load again killed the process */
    r->idx++;
    w__advance(w, i);
}

/* iOS with background_gpu: deny: the app went to the background, and every
 * execution on the delegate fails at that instant, its memory released. */
void w__deny_background_delegate(world *w)
{
    w_proc *pr = &w->proc;
    uint32_t epoch = w->epoch;
    for (uint32_t i = 0; i < w->store.pool_cap && still(w, epoch); i++) {
        req *r = &w->store.pool[i];
        if (!r->in_use || r->state != R_RUNNING || !r->has_exec)
            continue;
        part_rt *p = &pr->parts[r->needs[r->idx]];
        if (!p->on_delegate)
            continue;
        sim_cancel(w->e, r->exec);
        if (!r->orphan)
            w->out->failed++;
        w__emit_request_note(w, "background_gpu_denied", r->user);
        w->denying = 1; /* its end says why it stops */
        exec_stop(w, i, p);
        w->denying = 0;
        if (still(w, epoch) && W_GEN(w, p))
            w__gen_wake(w, p);
        if (still(w, epoch))
            w__finish(w, i, 1);
    }
}

static void timeout(sim_engine *e, void *ctx, uint64_t arg);

/* Takes an attempt record for user request u with a ledger owner of its
 * own; NIL when the replication failed. */
static uint32_t new_attempt(world *w, uint32_t u)
{
    uint32_t i = w__attempt_get(w);
    if (i == NIL)
        return NIL;
    req *r = &w->store.pool[i];
    int rc = mdl_ledger_owner(w->led, MDL_OWNER_REQUEST, (uint32_t)w->req_seq++, &r->owner);
    if (rc != SIM_OK) {
        sim_error_set(w->err, rc, "replication: cannot register a request (%s)",
                      sim_strerror(rc));
        r->next = w->store.free_head;
        w->store.free_head = i;
        w__fail(w, rc);
        return NIL;
    }
    const user *x = &w->store.users[u];
    r->in_use = 1;
    r->user = u;
    r->orphan = 0;
    r->hsess = NIL;
    r->has_timer = 0;
    r->has_exec = 0;
    r->arrival = now(w);
    r->start = -1;
    r->nneeds = x->nneeds;
    r->state = R_QUEUED;
    memcpy(r->needs, x->needs, MDL_PARTS_MAX);
    return i;
}

/* A new attempt of user request u enters: its payload, its timer, then a
 * slot, the queue, or a rejection. */
void w__submit(world *w, uint32_t u)
{
    w_proc *pr = &w->proc;
    uint32_t i = new_attempt(w, u);
    if (i == NIL)
        return;
    req *r = &w->store.pool[i];
    w->store.users[u].live++;
    if (w__charge(w, r->owner, w->store.users[u].d.payload, MDL_STAGE_INFERENCE) != W_LIVES)
        return;
    if (w->lim.rejecting) { /* on_warning reject_new */
        w->out->rejected++;
        w__finish(w, i, 0);
        return;
    }
    if (w->wl->timeout > 0 &&
        w__at(w, now(w) + w->wl->timeout, PRIO_TIMER, timeout, tag(w, i), &r->timer) == SIM_OK)
        r->has_timer = 1;
    if (pr->running < w->lim.sess_eff && pr->q_len == 0) {
        start_request(w, i);
    } else if (w->pol->queue == MDL_QUEUE_UNBOUNDED || pr->q_len < w->pol->queue) {
        (void)enqueue(w, i);
    } else if (w->pol->queue_drop_oldest && pr->q_len > 0) {
        /* a camera's pipeline: the stalest frame goes, the new one waits */
        uint32_t old = dequeue(w);
        w->out->rejected++;
        w__emit_request_note(w, "dropped_stale", w->store.pool[old].user);
        w__finish(w, old, 0);
        (void)enqueue(w, i);
    } else {
        w->out->rejected++;
        w__emit_request_note(w, "rejected", w->store.pool[i].user);
        w__finish(w, i, 0);
    }
}

/* --------------------------------------------------------- timeouts, retries */

/* A retry of user request u: a new attempt; a duplicate working set when
 * an earlier attempt is still queued or running. */
static void retry_now(world *w, uint32_t u)
{
    user *x = &w->store.users[u];
    x->waiting = 0;
    x->retries++;
    w->out->retried++;
    if (x->live > 0)
        w->out->duplicates++;
    w__emit_retry(w, x);
    w__submit(w, u);
}

static void retry_event(sim_engine *e, void *ctx, uint64_t arg)
{
    (void)e;
    world *w = ctx;
    if (current(w, arg))
        retry_now(w, (uint32_t)arg);
}

/* The delay before retry k+1 under the policy. */
static double retry_delay(world *w, const mdl_retry *rt, uint32_t retries)
{
    if (rt->kind == MDL_RETRY_FIXED)
        return (double)rt->delay;
    /* base * factor^(k-1) for retry k, capped, then +-jitter */
    double d = (double)rt->base * pow(rt->factor, (double)retries);
    if (d > (double)rt->cap)
        d = (double)rt->cap;
    if (rt->jitter > 0)
        d *= 1.0 + rt->jitter * (2.0 * gsl_rng_uniform(sim_stream_rng(&w->s_retry)) - 1.0);
    return d;
}

/* The client gave up on an attempt of u: retry as the policy says. */
static void retry_after_timeout(world *w, uint32_t u)
{
    user *x = &w->store.users[u];
    const mdl_retry *rt = &w->pol->retry;
    if (rt->kind == MDL_RETRY_NONE || x->retries >= rt->max) {
        w__answer_ended(w, x->id); /* the client gave up: the user has no answer */
        w__user_maybe_free(w, u);
        return;
    }
    x->waiting = 1;
    if (rt->kind == MDL_RETRY_ON_NEW_CONDITION) {
        x->next = w->proc.parked;
        w->proc.parked = u;
        return;
    }
    double d = retry_delay(w, rt, x->retries);
    (void)w__at(w, now(w) + (sim_time)(d + 0.5), PRIO_ARRIVAL, retry_event, tag(w, u), NULL);
}

/* Something changed (a fallback finished, the app is back in the
 * foreground, memory recovered): on_new_condition retries go now. */
void w__new_condition(world *w)
{
    uint32_t epoch = w->epoch;
    while (w->proc.parked != NIL && still(w, epoch)) {
        uint32_t u = w->proc.parked;
        w->proc.parked = w->store.users[u].next;
        retry_now(w, u);
    }
}

/* Cancels attempt i wherever it is (cancel_on_timeout). */
static void cancel(world *w, uint32_t i)
{
    req *r = &w->store.pool[i];
    if (r->state == R_QUEUED) {
        unqueue(w, i);
        w__finish(w, i, 0);
        return;
    }
    part_rt *p = &w->proc.parts[r->needs[r->idx]];
    if (r->state == R_WAITING) {
        uint32_t *link = &p->wait_head, prev = NIL;
        while (*link != i) {
            prev = *link;
            link = &w->store.pool[*link].next;
        }
        *link = r->next;
        if (p->wait_tail == i)
            p->wait_tail = prev;
    } else if (r->has_exec) {
        uint32_t epoch = w->epoch;
        sim_cancel(w->e, r->exec);
        exec_stop(w, i, p);
        if (still(w, epoch) && W_GEN(w, p))
            w__gen_wake(w, p); /* its KV region, to who waited for one */
        if (!still(w, epoch))
            return;
    }
    w__finish(w, i, 1);
}

static void timeout(sim_engine *e, void *ctx, uint64_t arg)
{
    (void)e;
    world *w = ctx;
    if (!current(w, arg))
        return;
    uint32_t i = (uint32_t)arg;
    req *r = &w->store.pool[i];
    uint32_t u = r->user;
    r->has_timer = 0;
    r->orphan = 1;
    w->out->timed_out++;
    w__emit_request_note(w, "timeout", u);
    w->store.users[u].live++; /* hold u while the attempt goes */
    if (w->pol->cancel_on_timeout)
        cancel(w, i);
    if (!current(w, arg))
        return;
    w->store.users[u].live--;
    retry_after_timeout(w, u);
}
