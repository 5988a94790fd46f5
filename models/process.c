/* process.c - the app process's life: the cold start (what the recovery
 * state puts in force, the cache check, the start-up list), the stable
 * run, the system's periodic samples, the iOS launch watchdog, the death
 * (its record, what the recovery state learns, everything the process held
 * gone at once) and the user's relaunch; and the orderly teardown at the
 * horizon. */
#include "world_int.h"

/* Closes the current stretch of "alive and accepting inference". */
static void accept_mark(world *w)
{
    if (w->proc.alive && !w->lim.rejecting)
        w->out->accepting_us += now(w) - w->proc.accept_since;
    w->proc.accept_since = now(w);
}

/* Whether new requests are taken, and how many run at once: the policy,
 * cut by what the recovery put in force (safe mode: one session) and by
 * on_warning actions while a warning holds. */
void w__apply_limits(world *w)
{
    accept_mark(w);
    unsigned warn = w->proc.warn_active ? w->pol->on_warning : 0;
    unsigned acts = w->life.rec.acts;
    w->lim.rejecting = (acts & (1u << MDL_ACT_REJECT_NEW)) || (warn & MDL_WARN_REJECT_NEW);
    uint32_t s = w->life.rec.safe_mode ? 1 : w->pol->sessions;
    if (acts & (1u << MDL_ACT_REDUCE_CONCURRENCY))
        s = s > 1 ? s / 2 : 1;
    if (warn & MDL_WARN_REDUCE_CONCURRENCY)
        s = s > 1 ? s / 2 : 1;
    w->lim.sess_eff = s;
}

static void stable(sim_engine *e, void *ctx, uint64_t arg)
{
    (void)e;
    world *w = ctx;
    if (current(w, arg))
        mdl_recovery_on_stable(&w->life.rec, w->cand);
}

/* The start-up is over: a stable run if the process lives stable_after more. */
static void started(world *w)
{
    w->life.consec_startup_deaths = 0;
    w->main.svc_up = 1; /* (svc: the main process's start-up too is over) */
    (void)w__at(w, now(w) + w->pol->stable_after, PRIO_TIMER, stable, tag(w, 0), NULL);
}

/* Start-up: preload (or prewarm) parts one after another. */
void w__startup_continue(world *w)
{
    w_proc *pr = &w->proc;
    while (!pr->startup_done) {
        if (pr->startup_next == (pr->startup_skip ? 0 : w->nstartup)) {
            pr->startup_done = 1;
            started(w);
            return;
        }
        part_rt *p = &pr->parts[w->startup[pr->startup_next]];
        if (p->state == P_LOADING)
            return; /* a request is loading it: continue when it is ready */
        if (p->state == P_UNLOADED) {
            if (w__begin_load(w, p, 0) != W_LIVES)
                return; /* the load killed the process */
            return;     /* continue when the part is ready */
        }
        pr->startup_next++;
    }
}

static void relaunch(sim_engine *e, void *ctx, uint64_t arg);

/* After a death: the user reopens the app after a delay, if the workload
 * says so and it falls inside the horizon. */
void w__relaunch_at(world *w)
{
    if (!w->wl->has_relaunch)
        return;
    sim_time delay = w->src->relaunch(w);
    w__emit_relaunch_delay(w, delay);
    sim_time t = now(w) + delay;
    if (t >= w->cell->horizon)
        return;
    if (w__at(w, t, PRIO_PATH, relaunch, 0, &w->life.relaunch_h) == SIM_OK)
        w->life.relaunch_scheduled = 1;
}

/* Parts whose failed delegate memory was never released (a leak). */
static uint32_t leaked_owners(const world *w)
{
    uint32_t n = 0;
    for (unsigned k = 0; k < w->nparts; k++) {
        int64_t held = 0;
        for (int c = 0; c < MDL_CAT_COUNT; c++)
            held += mdl_ledger_held(w->led, w->store.part[k].leak_owner, (mdl_category)c);
        n += held > 0;
    }
    return n;
}

/* The service process died (svc): the ledger cleared of it keeps what the
 * main process holds, its baseline and its pages' holds, as they were. */
static void keep_main(world *w)
{
    /* each at the stage that made it (the baseline at app_start, the holds
     * at page): a stage's peak mark never rises with it, the app being
     * smaller now by the service's memory */
    int64_t holds[MDL_CAT_COUNT] = {0};
    for (uint32_t k = 0; w->page_held != NULL && k < w->wl->npages; k++)
        add_to(holds, w->page_held[k]);
    for (int c = 0; c < MDL_CAT_COUNT; c++)
        if ((w->main.app[c] > 0 &&
             mdl_ledger_alloc(w->led, w->app_owner, (mdl_category)c, w->main.app[c],
                              MDL_STAGE_APP_START, now(w), w->err) != SIM_OK) ||
            (holds[c] > 0 && mdl_ledger_alloc(w->led, w->app_owner, (mdl_category)c, holds[c],
                                              MDL_STAGE_PAGE, now(w), w->err) != SIM_OK))
            w__fail(w, SIM_EINTERNAL);
}

/* The process is gone: everything it held goes at once, its attempts are
 * lost, its requests die with it, and w_proc is "no process" again (the
 * storage of its pools kept). */
static void proc_reset(world *w)
{
    w_proc *pr = &w->proc;
    int svc_only = w->svc && w->main.alive; /* the service died, the app lives */
    for (uint32_t u = 0; svc_only && u < w->store.users_cap; u++)
        if (w->store.users[u].in_use) { /* the client's calls fail (DeadObjectException) */
            w->out->failed++;
            w->out->svc_failed++;
            w__emit_request_note(w, "service_died", u);
        }
    if (w->thermal_on) /* its executions end with it: the heat counted, no step told */
        mdl_heat_to(&w->dev->thermal, &w->heat, now(w), 0);
    mdl_ledger_clear(w->led);
    for (uint32_t i = 0; i < w->store.pool_cap; i++) {
        req *r = &w->store.pool[i];
        if (!r->in_use)
            continue;
        w->out->lost += !svc_only;
        if (mdl_ledger_retire(w->led, r->owner, w->err) != SIM_OK)
            w__fail(w, SIM_EINTERNAL);
        r->in_use = 0;
        r->next = w->store.free_head;
        w->store.free_head = i;
    }
    uint32_t users_free = NIL; /* the client's requests die with the app */
    for (uint32_t u = w->store.users_cap; u-- > 0;) {
        if (w->store.users[u].in_use)
            w__answer_ended(w, w->store.users[u].id);
        w->store.users[u].in_use = 0;
        w->store.users[u].next = users_free;
        users_free = u;
    }
    if (w->page_held != NULL && !w->svc) /* the pages' holds went with the process */
        memset(w->page_held, 0, (size_t)w->wl->npages * sizeof *w->page_held);
    int fg = pr->fg;
    memset(pr, 0, sizeof *pr); /* what dies with the process; w_store stays */
    if (svc_only) { /* the app lives on, with what it holds */
        pr->fg = fg;
        pr->aged = w->main.aged;
        keep_main(w);
    }
    if (w->gslots != NULL)
        memset(w->gslots, 0, GEN_SLOTS_BYTES); /* its KV regions with it */
    pr->users_free = users_free;
    pr->parked = NIL;
    for (unsigned k = 0; k < MDL_PARTS_MAX; k++)
        pr->parts[k].wait_head = pr->parts[k].wait_tail = NIL;
}

/* The death's figures: first death, counts, boot loop, alive time. */
static void count_death(world *w, mdl_exit why, mdl_stage stage)
{
    mdl_rep *o = w->out;
    if (o->deaths_total == 0) {
        o->first_death = why;
        o->first_death_stage = stage;
        o->first_death_time = now(w);
        o->first_death_counted = mdl_ledger_counted(w->led);
        o->first_death_foreground = w->proc.fg;
        /* the mapped weights read at every inference, resident then: the
         * page models' (what reclaim left), or lmk's in the foreground */
        o->first_death_hot = w->pg.on ? w__pages_hot_resident(w) : w->proc.fg ? w->proc.hot : 0;
    }
    o->deaths[why]++;
    o->deaths_total++;
    if (why == MDL_EXIT_LOW_MEMORY && w->proc.fg)
        o->visible_memory_deaths++;
    if ((why == MDL_EXIT_LOW_MEMORY || why == MDL_EXIT_SYSTEM_RECLAIM) && !w->proc.fg)
        o->background_memory_deaths++;
    if (!w->proc.startup_done) {
        if (++w->life.consec_startup_deaths >= 2)
            o->boot_loop = 1;
    } else {
        w->life.consec_startup_deaths = 0;
    }
    if (w->svc)
        o->svc_alive_us += now(w) - w->proc.alive_since;
    else
        o->alive_us += now(w) - w->proc.alive_since;
}

void w__die(world *w, mdl_exit why, mdl_stage stage)
{
    count_death(w, why, stage);
    accept_mark(w);
    w__queue_area(w);
    mdl_death x = {why, stage, now(w), w->proc.fg, mdl_ledger_counted(w->led),
                   w->proc.sample_pss_kb, w->proc.sample_rss_kb, w->proc.lmkd,
                   w->proc.kernel_oom, w->proc.jetsam, w->proc.unreported};
    if (w->svc) { /* the service's own figures: its memory, its importance */
        x.counted -= w__main_counted(w);
        /* bound by the app in front, the service's process state is
         * BOUND_TOP, whose importance is the foreground's (100); a binding
         * that waives priority leaves it cached (400) */
        x.foreground = w->proc.fg && !w->wl->proc.waive_priority;
        w->out->svc_deaths++;
    }
    w->out->deaths_by_lmkd[w->proc.lmkd]++;
    if (w->pg.on && w->proc.lmkd != MDL_LMKD_NONE)
        w->out->lmkd_counted[mdl_counted_bucket(x.counted)]++;
    mdl_exit_record r;
    mdl_exit_record_make(w->dev, &x, &r);
    if (w->svc && r.description == MDL_TEXT_ANR)
        r.description = MDL_TEXT_ANR_SERVICE; /* ActiveServices' "executing service ..." */
    if (w->dev->no_exit_info) /* Android 10 or older: no record to read */
        w->out->deaths_unrecorded++;
    else
        mdl_rep_add_record(w->out, &r);
    w__gen_at_death(w);
    w__emit_exit(w, &r, 0);
    w->kill_log[0] = '\0';
    mdl_recovery_on_death(&w->life.rec, w->pol, w->cand, w->cell->lkg, !w->proc.startup_done,
                          why, stage);
    w__proc_gone(w);
    if (w->svc)
        w__svc_died(w);
    else
        w__relaunch_at(w);
}

void w__proc_gone(world *w)
{
    w->out->leaks += leaked_owners(w); /* the process dies with its leak */
    if (w->hold != NULL)
        w->hold->end(w); /* the sessions die with the process */
    proc_reset(w);
    /* the page models: nothing of the dead process is compressed or dropped */
    pg_app_gone(&w->pg);
    w->epoch++;
}

/* The system's periodic pss/rss sample of the process (Android).  Neither
 * counts the `gpu` bytes: dma-bufs the process holds by a file descriptor,
 * not mapped, are in no process's pss or rss (docs/model.md "Exit
 * records"), though the phone's free memory lost them all the same. */
static void sample(sim_engine *e, void *ctx, uint64_t arg)
{
    (void)e;
    world *w = ctx;
    if (!current(w, arg))
        return;
    const unsigned gpu = MDL_CAT_BIT(MDL_CAT_GPU), seen = MDL_CAT_ALL & ~gpu;
    int64_t all = 0, counted = 0;
    for (int c = 0; c < MDL_CAT_COUNT; c++)
        if (seen & MDL_CAT_BIT(c)) {
            all += mdl_ledger_total(w->led, (mdl_category)c);
            if (w->dev->counts_mask & MDL_CAT_BIT(c))
                counted += mdl_ledger_total(w->led, (mdl_category)c);
        }
    if (w->svc) { /* the service process's own: the main one's bytes are its */
        int64_t main_all = w__main_held(w, seen);
        int64_t main_counted = w__main_held(w, w->dev->counts_mask & seen);
        w->main.sample_pss_kb = main_counted / 1024;
        w->main.sample_rss_kb = main_all / 1024;
        counted -= main_counted;
        all -= main_all;
    }
    w->proc.sample_pss_kb = counted / 1024;
    w->proc.sample_rss_kb = all / 1024;
    w__emit_sample(w);
    (void)w__at(w, now(w) + w->dev->pss_sample, PRIO_PRESSURE, sample, tag(w, 0), NULL);
}

static void watchdog(sim_engine *e, void *ctx, uint64_t arg)
{
    (void)e;
    world *w = ctx;
    if (current(w, arg) && !w->proc.startup_done)
        w__die(w, MDL_EXIT_WATCHDOG, w->last_stage);
}

/* The relaunch reads the recovery state before any model work: the
 * candidate, safe mode, the ladder's actions. */
static void read_recovery(world *w)
{
    w_life *l = &w->life;
    if (l->relaunch_scheduled) {
        sim_cancel(w->e, l->relaunch_h);
        l->relaunch_scheduled = 0;
    }
    l->relaunch_pending = 0;
    if (mdl_recovery_on_start(&l->rec, w->cand)) {
        w__configure_candidate(w, l->rec.candidate);
        l->consec_startup_deaths = 0; /* a boot loop is of one candidate */
        w->out->candidate_switches++;
    }
    w->proc.startup_skip = l->rec.safe_mode || (l->rec.acts & (1u << MDL_ACT_STOP_PREWARM));
    w->proc.degraded = (l->rec.acts & (1u << MDL_ACT_DEGRADE_CPU)) != 0;
    if (l->rec.safe_mode)
        w->out->safe_mode_starts++;
}

/* Whether the start-up list runs model work on the main thread. */
static int startup_on_main(const world *w, unsigned nstart)
{
    int main_work = 0;
    for (unsigned k = 0; k < nstart; k++) {
        const mdl_part *p = &w->cand->parts[w->startup[k]];
        main_work |= p->load.main_thread | p->prepare.main_thread |
                     (p->has_delegate_prepare && p->delegate_prepare.main_thread);
    }
    return main_work;
}

/* The app's own memory, drawn for this launch and held until the process
 * dies, before any model work. */
W_MAY_KILL static w_fate app_baseline(world *w)
{
    if (w->svc) { /* the service process's own (app.processes.NAME.baseline) */
        if (!w->wl->proc.has_baseline)
            return W_LIVES;
        sample_amounts(&w->wl->proc.baseline, sim_stream_rng(&w->s_app), w->proc.app);
        w__emit_app(w, "service_baseline", w->proc.app);
        return w__charge(w, w->svc_owner, w->proc.app, MDL_STAGE_APP_START);
    }
    if (!w->wl->has_app)
        return W_LIVES;
    sample_amounts(&w->wl->app, sim_stream_rng(&w->s_app), w->proc.app);
    w__emit_app(w, "app_baseline", w->proc.app);
    return w__charge(w, w->app_owner, w->proc.app, MDL_STAGE_APP_START);
}

static void proc_start(world *w);

void w__svc_start(world *w) { proc_start(w); }

void w__cold_start(world *w)
{
    if (w->svc) { /* the app's main process, then the service it binds */
        if (w->main.alive)
            return;
        if (w__main_start(w) != W_LIVES && !w->main.alive)
            return; /* (the service is not there yet: a check that reads the
                       service's epoch says W_GONE, the main process lives) */
        if (w->life.relaunch_scheduled) {
            sim_cancel(w->e, w->life.relaunch_h);
            w->life.relaunch_scheduled = 0;
        }
        w->life.relaunch_pending = 0;
    }
    proc_start(w);
}

/* The slot of the candidate in force in w_life's built_* arrays. */
static unsigned cache_slot(const world *w) { return w->cand != w->cell->candidate; }

/* The compiled cache at a start, u the draw of a hit.  A cache found
 * invalid stays so, start after start, until a rebuild finishes (a start
 * that dies in its rebuild leaves it invalid); an update its key names
 * makes it invalid; one its key omits leaves it found valid but outdated. */
static void cache_at_start(world *w, double u)
{
    w_proc *pr = &w->proc;
    const mdl_candidate *c = w->cand;
    w_life *l = &w->life;
    pr->cache_valid = 1;
    pr->cache_outdated = 0;
    if (!c->has_cache)
        return;
    unsigned k = cache_slot(w);
    int os = l->built_os[k] != l->os_ver, rt = l->built_rt[k] != l->rt_ver;
    int rekeyed = (os && (c->cache_key & MDL_KEY_OS)) || (rt && (c->cache_key & MDL_KEY_RUNTIME));
    pr->cache_valid = u < c->cache_hit && l->cache_stale != c && !rekeyed;
    if (!pr->cache_valid)
        l->cache_stale = c;
    else
        pr->cache_outdated = os || rt;
}

void w__cache_rebuilt(world *w)
{
    unsigned k = cache_slot(w);
    if (w->life.cache_stale == w->cand)
        w->life.cache_stale = NULL;
    w->life.built_os[k] = w->life.os_ver;
    w->life.built_rt[k] = w->life.rt_ver;
}

/* The process the model runs in starts: the app's, or its service. */
static void proc_start(world *w)
{
    w_proc *pr = &w->proc;
    if (pr->alive)
        return;
    read_recovery(w);
    pr->alive = 1;
    pr->fg = !w->path.bg;
    w->epoch++;
    pr->alive_since = now(w);
    pr->accept_since = now(w);
    if (w->svc) {
        pr->aged = w->main.aged;
        pr->warned = 0; /* the service's warning edges start over with it */
    }
    w__apply_limits(w);
    w__emit_recovery(w);
    if (w->dev->os == MDL_OS_ANDROID &&
        w__at(w, now(w) + w->dev->pss_sample, PRIO_PRESSURE, sample, tag(w, 0), NULL) != SIM_OK)
        return;
    pr->q_last = now(w);
    cache_at_start(w, gsl_rng_uniform(sim_stream_rng(&w->s_fail))); /* drawn even without one */
    unsigned nstart = pr->startup_skip ? 0 : w->nstartup;
    pr->startup_done = nstart == 0;
    if (pr->startup_done)
        started(w);
    const mdl_device *d = w->dev;
    if (d->os == MDL_OS_IOS && d->launch_watchdog > 0 && startup_on_main(w, nstart) &&
        w__at(w, now(w) + d->launch_watchdog, PRIO_TIMER, watchdog, tag(w, 0), NULL) != SIM_OK)
        return;
    if (app_baseline(w) != W_LIVES)
        return;
    w__startup_continue(w);
    if (w->hold != NULL && still(w, w->epoch))
        w->hold->start(w);
}

static void relaunch(sim_engine *e, void *ctx, uint64_t arg)
{
    (void)e;
    (void)arg;
    world *w = ctx;
    w->life.relaunch_scheduled = 0;
    if (w__app_alive(w))
        return;
    if (w->path.bg)
        w->life.relaunch_pending = 1; /* the user reopens the app when back */
    else
        w__cold_start(w);
}

/* An update step stops the app, as the phone's reboot or the runtime's
 * replacement does: not a death, and no record.  What it held goes, its
 * requests in flight are lost, and the path's next cold_start starts it
 * anew (a relaunch the user had pending is forgotten). */
void w__app_stop(world *w)
{
    mdl_rep *o = w->out;
    if (w->life.relaunch_scheduled)
        sim_cancel(w->e, w->life.relaunch_h);
    w->life.relaunch_scheduled = w->life.relaunch_pending = 0;
    if (w->svc && w->main.alive)
        w__main_end(w); /* the main process first: the service's calls are not failed */
    if (w->proc.alive) {
        if (w->proc.gen_growing > 0)
            w__gen_sync(w); /* the KV written so far counts toward the peak */
        accept_mark(w);
        w__queue_area(w);
        if (w->svc)
            o->svc_alive_us += now(w) - w->proc.alive_since;
        else
            o->alive_us += now(w) - w->proc.alive_since;
        w__proc_gone(w);
    }
    mdl_ledger_clear(w->led);
    if (w->page_held != NULL)
        memset(w->page_held, 0, (size_t)w->wl->npages * sizeof *w->page_held);
    w->epoch++;
}

/* The horizon: an orderly shutdown, so that whatever is still held
 * afterwards is a leak of the model's bookkeeping. */
void w__teardown(world *w)
{
    mdl_rep *o = w->out;
    w_proc *pr = &w->proc;
    if (pr->alive && pr->gen_growing > 0)
        w__gen_sync(w); /* the KV written up to the horizon counts toward the peak */
    w->ending = 1;
    if (pr->alive && w->hold != NULL)
        w->hold->end(w);
    if (pr->alive) {
        if (w->svc)
            o->svc_alive_us += w->cell->horizon - pr->alive_since;
        else
            o->alive_us += w->cell->horizon - pr->alive_since;
        if (!w->lim.rejecting)
            o->accepting_us += w->cell->horizon - pr->accept_since;
        w__queue_area(w);
        for (uint32_t i = 0; i < w->store.pool_cap; i++) {
            req *r = &w->store.pool[i];
            if (r->in_use) {
                mdl_ledger_free_owner(w->led, r->owner, NULL);
                mdl_ledger_retire(w->led, r->owner, w->err);
                r->in_use = 0;
            }
        }
        w__give(w, w->svc ? w->svc_owner : w->app_owner, pr->app);
        for (uint32_t k = 0; !w->svc && w->page_held != NULL && k < w->wl->npages; k++)
            w__give(w, w->app_owner, w->page_held[k]);
        for (unsigned k = 0; k < w->nparts; k++) {
            part_rt *p = &pr->parts[k];
            w__give(w, part_id(w, p)->owner, p->transient);
            w__give(w, part_id(w, p)->owner, p->failed_tr);
            w__give(w, w->cache_owner, p->cache_tr);
            if (p->state == P_READY || p->state == P_LOADING)
                w__release_part(w, p);
        }
    }
    if (w->svc)
        w__main_teardown(w);
    o->leaks += mdl_ledger_leaks(w->led, NULL, NULL);
}
