/* service.c - the model in a service process of its own (a scenario's
 * `processes`; docs/model.md "Processes").  w_proc is then the service
 * process and w_main the app's main process, its client, which the user
 * sees: the path's pages and the app's baseline are the main process's,
 * the model's parts, sessions and requests the service's.
 *
 * The main process binds the service when it starts (BIND_AUTO_CREATE:
 * the service's process starts with it).  The service's adj comes from
 * the binding (w__app_adj).  When the service dies the app lives: the
 * calls in flight fail, requests fail until the client is bound again
 * after the restart delay, and the service cold-starts its model.  When
 * the main process dies its binding goes, and the service with it. */
#include "world_int.h"

#include <stdio.h>

/* ActiveServices' restart backoff (ActivityManagerConstants' defaults):
 * SERVICE_RESET_RUN_DURATION, SERVICE_RESTART_DURATION_FACTOR; the cap
 * only keeps the product finite (the delay never exceeds the horizon's
 * use: a restart past it is not scheduled) */
#define SVC_RESET_RUN_US (60 * SIM_US_PER_S)
#define SVC_RESTART_FACTOR 4
#define SVC_RESTART_CAP_US (24 * 3600 * SIM_US_PER_S)

w_fate w__main_start(world *w)
{
    w_main *m = &w->main;
    m->alive = 1;
    m->alive_since = now(w);
    m->aged = 0;
    m->restart_delay = 0;
    m->svc_started = now(w);
    m->svc_up = 0;
    w->proc.fg = !w->path.bg; /* the kill rules read the app's place from here */
    if (!w->wl->has_app)
        return W_LIVES;
    sample_amounts(&w->wl->app, sim_stream_rng(&w->s_app), m->app);
    w__emit_app(w, "app_baseline", m->app);
    return w__charge(w, w->app_owner, m->app, MDL_STAGE_APP_START);
}

static void rebind(sim_engine *e, void *ctx, uint64_t arg)
{
    (void)e;
    (void)arg;
    world *w = ctx;
    w->main.restart_scheduled = 0;
    if (!w->main.alive || w->proc.alive)
        return;
    w__emit_note(w, -1, w->last_stage, "service_restart");
    w->main.svc_started = now(w);
    w__svc_start(w);
}

void w__svc_died(world *w)
{
    w_main *m = &w->main;
    if (!m->alive)
        return;
    /* ActiveServices.scheduleServiceRestartLocked: a service killed within
     * SERVICE_RESET_RUN_DURATION (60 s) of its start waits
     * SERVICE_RESTART_DURATION_FACTOR (4) times its last delay; else the
     * delay starts over (`restart`, drawn: SERVICE_RESTART_DURATION, 1 s,
     * by default) */
    sim_time drawn = w->src->restart(w);
    w__emit_restart_delay(w, drawn);
    if (m->restart_delay > 0 && now(w) - m->svc_started < SVC_RESET_RUN_US &&
        m->restart_delay < SVC_RESTART_CAP_US)
        m->restart_delay *= SVC_RESTART_FACTOR;
    else
        m->restart_delay = drawn;
    sim_time t = now(w) + m->restart_delay;
    if (t >= w->cell->horizon)
        return;
    if (w__at(w, t, PRIO_PATH, rebind, 0, &m->restart_h) == SIM_OK)
        m->restart_scheduled = 1;
}

void w__svc_refuse(world *w, uint32_t u)
{
    w->out->failed++;
    w->out->svc_failed++;
    w__emit_request_note(w, "service_died", u);
}

void w__main_die(world *w, mdl_exit why, mdl_stage stage)
{
    w_main *m = &w->main;
    mdl_rep *o = w->out;
    int fg = w->proc.fg;
    mdl_death x = {why, stage, now(w), fg, w__main_counted(w), m->sample_pss_kb,
                   m->sample_rss_kb, w->proc.lmkd, w->proc.kernel_oom, MDL_JETSAM_NONE, 0};
    if (o->deaths_total == 0) {
        o->first_death = why;
        o->first_death_stage = stage;
        o->first_death_time = now(w);
        o->first_death_counted = x.counted;
        o->first_death_foreground = fg;
        o->first_death_hot = 0;
    }
    o->deaths[why]++;
    o->deaths_total++;
    o->visible_memory_deaths += why == MDL_EXIT_LOW_MEMORY && fg;
    o->background_memory_deaths +=
        (why == MDL_EXIT_LOW_MEMORY || why == MDL_EXIT_SYSTEM_RECLAIM) && !fg;
    o->deaths_by_lmkd[w->proc.lmkd]++;
    if (w->pg.on && w->proc.lmkd != MDL_LMKD_NONE)
        o->lmkd_counted[mdl_counted_bucket(x.counted)]++;
    /* a death while the service's start-up runs is a start-up death of the
     * app: the boot loop's count and the recovery state learn of it */
    int in_startup = !m->svc_up; /* (its own start, or its service's, not yet done) */
    if (!in_startup)
        w->life.consec_startup_deaths = 0;
    else if (++w->life.consec_startup_deaths >= 2)
        o->boot_loop = 1;
    mdl_recovery_on_death(&w->life.rec, w->pol, w->cand, w->cell->lkg, in_startup, why, stage);
    if (w->proc.alive) /* told with the death: its binding goes with the process */
        w__emit_note(w, -1, stage, "service_unbound");
    mdl_exit_record r;
    mdl_exit_record_make(w->dev, &x, &r);
    if (w->dev->no_exit_info) /* Android 10 or older: no record to read */
        w->out->deaths_unrecorded++;
    else
        mdl_rep_add_record(o, &r);
    w__emit_exit(w, &r, 1);
    w->kill_log[0] = '\0';
    w__main_end(w); /* the service's binding goes with it: so does the service */
    if (w->proc.alive) {
        o->svc_alive_us += now(w) - w->proc.alive_since;
        w__apply_limits(w);
        w__queue_area(w);
        w__proc_gone(w);
    }
    mdl_ledger_clear(w->led);
    if (w->page_held != NULL)
        memset(w->page_held, 0, (size_t)w->wl->npages * sizeof *w->page_held);
    w->proc.fg = 0;
    w->proc.aged = 0;
    w->proc.lmkd = MDL_LMKD_NONE;
    w->proc.kernel_oom = 0;
    w->proc.jetsam = MDL_JETSAM_NONE;
    w->proc.unreported = 0;
    w__relaunch_at(w);
}

void w__main_end(world *w)
{
    w_main *m = &w->main;
    w->out->alive_us += now(w) - m->alive_since;
    if (m->restart_scheduled) {
        sim_cancel(w->e, m->restart_h);
        m->restart_scheduled = 0;
    }
    m->alive = 0;
    m->sample_pss_kb = m->sample_rss_kb = 0;
    memset(m->app, 0, sizeof m->app);
}

int w__victim_is_main(const world *w, int adj)
{
    if (!w->svc || !w->main.alive)
        return 0;
    if (!w->proc.alive)
        return 1;
    int main = w__main_adj(w), svc = w__app_adj(w);
    if (main != svc) /* the one at adj */
        return main == adj;
    /* find_and_kill_process (lmkd 18578a5): at one adj, the tail of its
     * list, the process slotted there first (the client's adj reaches lmkd
     * before its service's), over PERCEPTIBLE_APP_ADJ; the heaviest
     * (proc_get_heaviest) at or under it, or at every adj with
     * kill_heaviest_task.  proc_get_heaviest walks from the list's head,
     * the newest, and keeps the first of a tie: the service.  Its size is
     * proc_get_size's, the resident pages of /proc/PID/statm, where the
     * GPU's buffers are not (they are the driver's pages, not mapped as
     * the process's own) */
    if (adj > APP_ADJ_PERCEPTIBLE && w->dev->lmkd.kill_heaviest_task <= 0)
        return 1;
    int64_t all = 0;
    for (int c = 0; c < MDL_CAT_COUNT; c++)
        if (c != MDL_CAT_GPU)
            all += mdl_ledger_total(w->led, (mdl_category)c);
    int64_t mine = w__main_held(w, MDL_CAT_ALL & ~MDL_CAT_BIT(MDL_CAT_GPU));
    return mine > all - mine;
}

mdl_exit w__svc_class(const world *w, mdl_exit why)
{
    /* a service whose binding waives priority is a cached process: its
     * reclaim is the background's, whatever its client's place */
    return w->svc && w->wl->proc.waive_priority && why == MDL_EXIT_LOW_MEMORY
               ? MDL_EXIT_SYSTEM_RECLAIM
               : why;
}

void w__kill_process(world *w, int main, mdl_exit why, mdl_stage stage)
{
    if (main)
        w__main_die(w, why, stage);
    else
        w__die(w, w__svc_class(w, why), stage);
}

void w__kill_at(world *w, int adj, mdl_exit why, mdl_stage stage)
{
    w__kill_process(w, w__victim_is_main(w, adj), why, stage);
}

void w__main_teardown(world *w)
{
    w_main *m = &w->main;
    if (!m->alive)
        return;
    w->out->alive_us += w->cell->horizon - m->alive_since;
    w__give(w, w->app_owner, m->app);
    for (uint32_t k = 0; w->page_held != NULL && k < w->wl->npages; k++)
        w__give(w, w->app_owner, w->page_held[k]);
}
