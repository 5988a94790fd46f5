/* pagesys.c - the one place the world carries out a memory verdict: the
 * Java heap check's and the plain kill rules' (kill.c, through charge.c)
 * and, as the world's side of the page models (pages.h), theirs.  It shows
 * the page models where the app's figures are (world.pga), carries out the
 * deaths they decide (lmkd's line written, the JetsamEvent reported, the
 * process killed), tells the timeline of their own kills and refaults,
 * schedules the looks they ask for, and wraps their checks in what the
 * world does around a check (a generating part's KV brought up to date, the
 * memory warnings' edge). */
#include "world_int.h"

#include <stdio.h>

void w__rule_verdict(world *w, const mdl_kill_verdict *v, int adj, mdl_stage stage)
{
    w->dstate.cached = v->cached;
    for (uint32_t k = 0; k < v->cached_kills; k++) {
        w->out->cached_kills++;
        w__emit_note(w, -1, stage, "cached_app_killed");
    }
    if (!v->dies)
        return;
    w->proc.lmkd = v->lmkd;
    w__kill_at(w, adj, v->why, stage);
}

void w__heap_verdict(world *w, int main, mdl_stage stage)
{
    if (main)
        w__main_die(w, MDL_EXIT_JAVA_CRASH, stage);
    else
        w__die(w, MDL_EXIT_JAVA_CRASH, stage);
}

static int ps_adj(void *ctx, int main)
{
    const world *w = ctx;
    return main ? w__main_adj(w) : w__app_adj(w);
}

static int64_t ps_main_anon(void *ctx)
{
    const world *w = ctx;
    return w__main_anon(w) - w__main_held(w, MDL_CAT_BIT(MDL_CAT_GPU));
}

/* lmkd's kill line for one of the app's processes (main: the main one
 * while the model runs in a service process), as lmkd.cpp's
 * kill_one_process logs it; the pid and uid are the simulator's own
 * numbering (docs/traces.md "log"). */
static void ps_kill_line(world *w, const mdl_lmkd_decision *dec, int main)
{
    /* lmkd's rss (VmRSS of /proc/PID/status) leaves out the dma-bufs held by fd (gpu) */
    int64_t anon = pg_app_anon(&w->pg) - mdl_ledger_total(w->led, MDL_CAT_GPU);
    int64_t file = pg_app_file_resident(&w->pg);
    if (w->svc) { /* each process its own: the main one holds its baseline and holds */
        int64_t m = w__main_anon(w) - w__main_held(w, MDL_CAT_BIT(MDL_CAT_GPU));
        anon = main ? m : anon - m;
        file = main ? 0 : file;
    }
    char name[TRC_TEXT_MAX];
    w__process_name(w, main || !w->svc, name);
    snprintf(w->kill_log, sizeof w->kill_log,
             "lowmemorykiller: Kill '%s' (%u), uid 10000, oom_score_adj %d to free "
             "%lldkB rss, 0kB swap; reason: %.74s", name,
             1000u + w->epoch + (main && w->svc ? 500u : 0u),
             main && w->svc ? w__main_adj(w) : w__app_adj(w), (long long)((anon + file) / 1024),
             dec->description);
}

/* A JetsamEvent memorystatus posts, to the trace's sink. */
static void ps_report(void *ctx, const mdl_jetsam_event *ev)
{
    world *w = ctx;
    if (w->trace == NULL || w->trace->jetsam == NULL || w->ending)
        return;
    int rc = w->trace->jetsam(w->trace->ctx, ev, w->err);
    if (rc != SIM_OK)
        w__fail(w, rc);
}

/* The verdict carried out: the process it names dies with its record. */
static void ps_kill(void *ctx, const pg_kill *k)
{
    world *w = ctx;
    mdl_exit why = w->proc.fg ? MDL_EXIT_LOW_MEMORY : MDL_EXIT_SYSTEM_RECLAIM;
    if (k->by == PG_BY_LMKD) {
        /* at one adj lmkd takes the process registered there first, and the
         * client's adj reaches lmkd before its service's */
        int main = w__victim_is_main(w, k->adj);
        w->proc.lmkd = k->dec->reason;
        ps_kill_line(w, k->dec, main);
        w__kill_process(w, main, why, w->last_stage);
    } else if (k->by == PG_BY_KERNEL_OOM) {
        w->proc.lmkd = MDL_LMKD_NONE;
        w->proc.kernel_oom = 1;
        if (k->main)
            w__main_die(w, why, w->last_stage);
        else
            w__die(w, w__svc_class(w, why), w->last_stage);
    } else {
        /* memorystatus: over the per-process limit, or the app in front
         * killed for the system's pages (every lower band already empty), is
         * a foreground death, low_memory; a system kill of the app behind is
         * system_reclaim */
        w->proc.jetsam = k->cause;
        w->proc.unreported = !k->report;
        w__die(w, k->cause == MDL_JETSAM_PER_PROCESS_LIMIT || w->proc.fg
                      ? MDL_EXIT_LOW_MEMORY
                      : MDL_EXIT_SYSTEM_RECLAIM,
               w->last_stage);
    }
}

static void ps_note(void *ctx, const char *what, const char *why, int64_t dropped,
                    int64_t refault, int adj, sim_time took)
{
    w__emit_pages(ctx, what, why, dropped, refault, adj, took);
}

static void ps_look(sim_engine *e, void *ctx, uint64_t arg)
{
    (void)e;
    world *w = ctx;
    pg_look(&w->pg, &w->pga, (int)arg);
}

static int ps_at(void *ctx, sim_time t, int what)
{
    world *w = ctx;
    return t < w->cell->horizon &&
           w__at(w, t, PRIO_PRESSURE, ps_look, (uint64_t)what, NULL) == SIM_OK;
}

static const pg_host ps_host = {ps_adj, ps_main_anon, ps_kill, ps_note, ps_at, ps_report};

void w__pages_setup(world *w)
{
    /* w->pg is zero: w__open cleared the world */
    w->pg.dev = w->dev;
    w->pg.led = w->led;
    w->pg.ds = &w->dstate;
    w->pg.out = w->out;
    w->pg.host = &ps_host;
    w->pg.ctx = w;
    w->pga = (pg_app){w->e,          &w->epoch,  &w->proc.alive, &w->proc.fg,
                      &w->proc.aged, &w->path.bg, &w->svc,       &w->main.alive,
                      &w->ending,    &w->proc.hot};
    pg_setup(&w->pg, &w->pga, sim_stream_rng(&w->s_dev));
}

/* A check under the page model (charge.c's w__kill_check): the KV written
 * so far first, the warning's edge after, then the KV's next line. */
static inline w_fate ps_check(world *w, int64_t extra, int own)
{
    pg_result r = pg_check(&w->pg, &w->pga, extra, own);
    if (r.gone)
        return W_GONE;
    if (r.warn)
        w__warning_room(w, r.room);
    return W_LIVES;
}

w_fate w__pages_check(world *w, int64_t extra, int own)
{
    if (w->proc.gen_growing == 0)
        return ps_check(w, extra, own);
    w__gen_sync(w); /* the KV written so far, before the kernel reads memory */
    uint32_t epoch = w->epoch;
    if (ps_check(w, extra, own) != W_LIVES || !still(w, epoch))
        return W_GONE;
    w__gen_replan(w); /* the KV's next line moved */
    return W_LIVES;
}

sim_time w__pages_refault(world *w, const part_rt *p)
{
    if (!w->pg.on || !p->hot)
        return 0;
    pg_result r;
    sim_time t = pg_refault(&w->pg, &w->pga, p->hot, part_id_of(w, p)->hot_bytes, &r);
    if (r.warn)
        w__warning_room(w, r.room);
    return t;
}

int64_t w__pages_free(const world *w) { return pg_free(&w->pg); }

int64_t w__pages_room(const world *w) { return pg_room(&w->pg, &w->pga); }

int64_t w__pages_growth_room(const world *w, int64_t *soft)
{
    return pg_growth_room(&w->pg, &w->pga, soft);
}

int64_t w__pages_hot_resident(const world *w)
{
    return pg_app_hot_resident(&w->pg, &w->pga);
}
