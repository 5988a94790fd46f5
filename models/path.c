/* path.c - the user's path (cold start, pages, requests steps, time in
 * the background) and the arrivals of its requests: drawn (fixed interval
 * or Poisson) or, in a trace-driven run, the recorded ones.  The path lives
 * outside the process: its events carry no epoch, and its arrivals are
 * drawn while the app is dead too, so later requests match across policies. */
#include "world_int.h"

static void next_step(world *w, sim_time t)
{
    (void)w__at(w, t, PRIO_PATH, w__step, w->path.step + 1, NULL);
}

/* User request u (its draws and needs filled in) is made now. */
static void user_arrives(world *w, uint32_t u, uint8_t nneeds)
{
    user *x = &w->store.users[u];
    x->in_use = 1;
    x->first = now(w);
    x->nneeds = nneeds;
    x->live = x->retries = 0;
    x->waiting = 0;
    x->id = w->path.user_seq++;
    w->out->arrived++;
    if (w->times != NULL && w->times->arrival != NULL)
        w->times->arrival(w->times->ctx, now(w));
    w__emit_request(w, x);
    if (w->rc != SIM_OK)
        return;
    if (w->svc && !w->proc.alive) { /* the service is down: the call fails */
        w__svc_refuse(w, u);
        w__user_maybe_free(w, u);
        return;
    }
    w__submit(w, u);
}

/* A trace-driven run: recorded request k arrives (when the app is alive). */
/* A generation part's draws of request k: its tokens and their times (no
 * stage time, no working set: the KV is its own). */
static void gen_request(const mdl_part *p, gsl_rng *r, req_draw *d, unsigned k)
{
    gen_draw(p, r, d->gen[k]);
    d->time[k] = 0;
    memset(d->ws[k], 0, sizeof d->ws[k]);
}

static void replay_arrival(sim_engine *e, void *ctx, uint64_t arg)
{
    (void)e;
    world *w = ctx;
    const mdl_replay_request *q = &w->cell->replay->requests[(uint32_t)arg];
    if (!w__app_alive(w))
        return;
    uint32_t u = w__user_get(w);
    if (u == NIL)
        return;
    user *x = &w->store.users[u];
    memset(&x->d, 0, sizeof x->d);
    memcpy(x->d.payload, q->payload, sizeof q->payload);
    for (unsigned k = 0; k < q->nneeds; k++) {
        x->d.time[k] = q->time_of[k];
        memcpy(x->d.ws[k], q->ws[k], sizeof q->ws[k]);
        const mdl_part *p = &w->cand->parts[q->needs[k]];
        if (w->gen && p->has_generation) /* a recording has no tokens: drawn */
            gen_request(p, sim_stream_rng(&w->s_req), &x->d, k);
    }
    memcpy(x->needs, q->needs, MDL_PARTS_MAX);
    /* its owner: its requests step's, as in the recorded run */
    const mdl_step *st = q->step < w->wl->nsteps ? &w->wl->steps[q->step] : NULL;
    x->holder = st != NULL && st->kind == MDL_STEP_REQUESTS &&
                        w->wl->requests[st->index].holder < w->wl->nholders
                    ? w->wl->requests[st->index].holder
                    : MDL_NO_HOLDER;
    user_arrives(w, u, q->nneeds);
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
        if (w->gen && p->has_generation) {
            gen_request(p, r, d, k);
            continue;
        }
        d->time[k] = mdl_dist_sample(&p->inference_time, r);
        sample_amounts(&p->working_set, r, d->ws[k]);
        sample_amounts(&p->output, r, out);
        add_to(d->ws[k], out);
    }
}

static sim_time next_gap(world *w, const mdl_requests *rq)
{
    sim_time gap = rq->closed    ? mdl_dist_sample(&rq->think, sim_stream_rng(&w->s_arr))
                   : rq->poisson ? sim_stream_exp_us(&w->s_arr, rq->mean_gap_us)
                                 : rq->every;
    return gap < 1 ? 1 : gap;
}

static void arrival(sim_engine *e, void *ctx, uint64_t arg);

/* The awaited answer is over (w__answer_ended): the next request a think
 * time later, or, past a counted step's last, the next step. */
static void answered(world *w)
{
    const mdl_requests *rq = w->path.rq;
    if (rq->count > 0 && w->path.left == 0) { /* its last answer ends the step */
        next_step(w, now(w));
        return;
    }
    sim_time t = now(w) + next_gap(w, rq);
    if (rq->count > 0 || t <= w->path.end)
        (void)w__at(w, t, PRIO_ARRIVAL, arrival, w->path.rqi, NULL);
}

static void arrival(sim_engine *e, void *ctx, uint64_t arg)
{
    (void)e;
    world *w = ctx;
    const mdl_requests *rq = w->path.rq;
    uint32_t rqi = (uint32_t)arg;
    /* drawn in place in the request's slot; while the app is dead the
     * draws are made all the same (into scratch) so later requests match */
    uint32_t u = NIL;
    req_draw scratch, *d = &scratch;
    if (w__app_alive(w)) {
        if ((u = w__user_get(w)) == NIL)
            return;
        d = &w->store.users[u].d;
    }
    uint8_t nneeds;
    draw_request(w, rq, rqi, d, &nneeds);
    if (rq->closed) { /* the answer it brings is awaited; one never made ends at once */
        w->path.left -= rq->count > 0;
        w->path.awaiting = 1;
        w->path.awaiting_id = w->path.user_seq;
        w->path.answered = answered;
    }
    if (u != NIL) {
        memcpy(w->store.users[u].needs, &w->needs_map[(size_t)rqi * MDL_PARTS_MAX],
               MDL_PARTS_MAX);
        w->store.users[u].holder = rq->holder < w->wl->nholders ? rq->holder : MDL_NO_HOLDER;
        user_arrives(w, u, nneeds);
    }
    if (w->rc != SIM_OK)
        return;
    if (rq->closed) {
        if (u == NIL)
            w__answer_ended(w, w->path.awaiting_id);
        return;
    }
    if (rq->count > 0 && --w->path.left == 0) {
        if (rq->poisson)
            next_step(w, now(w));
        return;
    }
    sim_time t = now(w) + next_gap(w, rq);
    if (rq->count == 0 && t > w->path.end)
        return;
    (void)w__at(w, t, PRIO_ARRIVAL, arrival, arg, NULL);
}

/* A requests step with drawn arrivals: a count, or a duration. */
static void drawn_requests(world *w, uint32_t step, const mdl_requests *rq)
{
    sim_time t = now(w);
    w->path.rq = rq;
    w->path.rqi = w->wl->steps[step].index;
    w->path.left = rq->count;
    w->path.end = t + rq->duration;
    sim_time gap = next_gap(w, rq);
    if (rq->count > 0 || t + gap <= w->path.end)
        (void)w__at(w, t + gap, PRIO_ARRIVAL, arrival, w->path.rqi, NULL);
    /* rate + count ends at its last arrival (see arrival()), after_answer +
     * count at its last answer (w__answer_ended) */
    if (rq->count == 0 || (!rq->poisson && !rq->closed))
        next_step(w, w->path.end);
}

/* A requests step with the recorded arrivals; a step that ends at its
 * last arrival ends at the last recorded one. */
static void recorded_requests(world *w, uint32_t step, const mdl_requests *rq)
{
    const mdl_replay *rp = w->cell->replay;
    sim_time t = now(w);
    sim_time end = t + rq->duration;
    if (rq->count > 0 && (rq->poisson || rq->closed)) /* ends at the last recorded arrival */
        end = t;
    while (w->path.rp_next_req < rp->nrequests && rp->requests[w->path.rp_next_req].step < step)
        w->path.rp_next_req++; /* a step this run did not reach the same way */
    while (w->path.rp_next_req < rp->nrequests &&
           rp->requests[w->path.rp_next_req].step == step) {
        const mdl_replay_request *q = &rp->requests[w->path.rp_next_req];
        sim_time at_t = q->time < t ? t : q->time;
        if (rq->count > 0 && (rq->poisson || rq->closed) && at_t > end)
            end = at_t;
        if (w__at(w, at_t, PRIO_ARRIVAL, replay_arrival, w->path.rp_next_req, NULL) != SIM_OK)
            return;
        w->path.rp_next_req++;
    }
    next_step(w, end);
}

/* iOS (the page model): the app the user left has aged 2 s into the idle
 * band: memorystatus looks again. */
static void successor_aged(sim_engine *e, void *ctx, uint64_t arg)
{
    (void)e;
    world *w = ctx;
    if (w->path.bg || (uint32_t)arg != w->path.bg_seq)
        return;
    if (w__pages_check(w, 0, 0) != W_LIVES) {
        /* the app died of it: the path goes on */
    }
}

static void background_end(sim_engine *e, void *ctx, uint64_t arg)
{
    (void)e;
    (void)arg;
    world *w = ctx;
    w->path.bg = 0;
    /* the user left the other app: under the page model it stays, the
     * previous app (adj 700); else its memory goes with it */
    if (!w->pg.on)
        w->dstate.successor = 0;
    /* iOS: it ages from now */
    if (pg_successor_back(&w->pg, now(w)) &&
        now(w) + MDL_XNU_APP_AGING_US < w->cell->horizon &&
        w__at(w, now(w) + MDL_XNU_APP_AGING_US, PRIO_TIMER, successor_aged, w->path.bg_seq,
              NULL) != SIM_OK) {
        /* the replication fails: w->rc says why */
    }
    if (w__app_alive(w)) {
        w->proc.fg = 1;
        w->proc.aged = w->main.aged = 0;
        w__emit_note(w, -1, w->last_stage, "foreground");
        /* the foreground limits differ; back in the foreground, parked
         * retries go */
        if (w__kill_check(w, 0, w->last_stage) == W_LIVES && w->proc.alive)
            w__new_condition(w);
    } else if (w->life.relaunch_pending) {
        w__cold_start(w);
    }
    if (w->rc == SIM_OK)
        next_step(w, now(w));
}

/* Android: the app has been in the background previous_ttl: its adj goes
 * from 700 (previous) to 900 (cached), and the level that applies with it.
 * iOS (the page model): 2 s in the aging band, then the idle band. */
static void aged(sim_engine *e, void *ctx, uint64_t arg)
{
    (void)e;
    world *w = ctx;
    /* the app's process: the main one's events outlive its service's */
    if (!(w->svc ? w->main.alive : current(w, arg)) || !w->path.bg ||
        (uint32_t)arg != w->path.bg_seq)
        return;
    w->proc.aged = w->main.aged = 1;
    w__emit_note(w, -1, w->last_stage, w->pg.on == W_PAGES_XNU ? "idle_band" : "cached_adj");
    if (w__kill_check(w, 0, w->last_stage) != W_LIVES) {
        /* reclaimed at its new level: the path goes on */
    }
}

static void to_background(world *w, sim_time duration)
{
    w->path.bg = 1;
    w->path.bg_seq++;
    const mdl_device *d = w->dev;
    /* the app the user switches to, drawn whether this app lives or not */
    pg_successor_left(&w->pg);
    if (d->has_successor)
        w->dstate.successor = mdl_dist_sample(&d->successor, sim_stream_rng(&w->s_app));
    /* no app to check: the page model makes room for the new app all the same */
    if (w->pg.on && !w__app_alive(w) && w__pages_check(w, 0, 0) != W_LIVES) {
        /* nothing of the app to lose */
    }
    if (w__app_alive(w)) {
        w->proc.fg = 0;
        w__emit_background(w);
        uint32_t epoch = w->epoch;
        if (w->deny_bg_delegate)
            w__deny_background_delegate(w);
        if (w__app_lives(w, epoch) && w__kill_check(w, 0, w->last_stage) != W_LIVES) {
            /* reclaimed as it went: the path goes on */
        }
        /* the app ages: Android's previous -> cached adj; iOS's aging band
         * -> idle (the page model) */
        sim_time ttl = d->rule == MDL_KILL_LMK ? d->previous_ttl
                       : w->pg.on == W_PAGES_XNU ? MDL_XNU_APP_AGING_US : 0;
        if (w__app_lives(w, epoch) && ttl > 0 && ttl < duration &&
            w__at(w, now(w) + ttl, PRIO_TIMER, aged, tag(w, w->path.bg_seq), NULL) != SIM_OK)
            return;
    }
    (void)w__at(w, now(w) + duration, PRIO_PATH, background_end, 0, NULL);
}

/* A page is entered: what it holds is allocated (drawn whether the app
 * lives or not), and released at its leave. */
static void enter_page(world *w, const mdl_step *s)
{
    if (w->wl->nholders > 0) {
        uint32_t epoch = w->epoch;
        w__holders_page(w, s->index, 1); /* its owners open (when the app lives) */
        if (w->proc.alive && !still(w, epoch))
            return;
    }
    if (s->hold >= w->wl->nholds) /* MDL_NO_HOLD */
        return;
    int64_t v[MDL_CAT_COUNT];
    sample_amounts(&w->wl->holds[s->hold], sim_stream_rng(&w->s_app), v);
    if (!w__app_alive(w))
        return;
    w__emit_page(w, "page_hold", w->wl->pages[s->index], v);
    if (w->svc) { /* the main process's: it outlives its service's death */
        add_to(w->page_held[s->index], v);
        if (w__charge(w, w->app_owner, v, MDL_STAGE_PAGE) != W_LIVES) {
            /* a death of either process: the main one's clears its holds */
        }
        return;
    }
    if (w__charge(w, w->app_owner, v, MDL_STAGE_PAGE) == W_LIVES)
        add_to(w->page_held[s->index], v);
}

static void leave_page(world *w, const mdl_step *s)
{
    int held = 0;
    for (int c = 0; w->page_held != NULL && c < MDL_CAT_COUNT; c++)
        held |= w->page_held[s->index][c] > 0;
    if (held && w__app_alive(w)) {
        w__give(w, w->app_owner, w->page_held[s->index]);
        w__emit_page(w, "page_release", w->wl->pages[s->index], NULL); /* told once given */
    }
    if (w->wl->nholders > 0)
        w__holders_page(w, s->index, 0); /* its owners close (when the app lives) */
}

/* The phone's OS, or the model's runtime, is updated: the app stops (a
 * reboot, a replaced runtime) and the next cold_start meets the new
 * version, which the cache's key names or not. */
static void update(world *w, uint32_t what)
{
    if (what == MDL_UPDATE_OS)
        w->life.os_ver++;
    else
        w->life.rt_ver++;
    w__emit_update(w, what == MDL_UPDATE_OS ? "os_update" : "runtime_update", w__app_alive(w));
    w__app_stop(w);
}

void w__step(sim_engine *e, void *ctx, uint64_t arg)
{
    (void)e;
    world *w = ctx;
    uint32_t i = (uint32_t)arg;
    w->path.step = i;
    w->path.awaiting = 0; /* an answer still awaited belongs to a step that ended */
    if (i >= w->wl->nsteps)
        return;
    const mdl_step *s = &w->wl->steps[i];
    switch (s->kind) {
    case MDL_STEP_COLD_START:
        w__cold_start(w);
        break;
    case MDL_STEP_ENTER:
        enter_page(w, s);
        break;
    case MDL_STEP_LEAVE:
        leave_page(w, s);
        break;
    case MDL_STEP_BACKGROUND:
        to_background(w, s->duration);
        return;
    case MDL_STEP_REQUESTS:
        if (w->src == &w__costs_recorded)
            recorded_requests(w, i, &w->wl->requests[s->index]);
        else
            drawn_requests(w, i, &w->wl->requests[s->index]);
        return;
    case MDL_STEP_UPDATE:
        update(w, s->index);
        break;
    }
    if (w->rc == SIM_OK)
        next_step(w, now(w));
}
