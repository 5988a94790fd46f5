/* charge.c - the app's memory: charging and releasing through the ledger,
 * the Java heap check, the kill rules (kill.c) after every change, then the
 * memory warnings' edge (warning.c), and the other apps' pressure spikes.
 *
 * The charging rule (docs/model.md "Memory semantics"): a stage's
 * allocation, every owner and category it allocates, is one allocation.
 * The Java heap check alone comes first and refuses the whole allocation
 * (an OutOfMemoryError: nothing is made).  Otherwise the allocation is made
 * whole and counts toward the peak, and then the kill rules run once.  So a
 * death inside a stage reports the stage's full footprint, as the system's
 * sample at the kill would. */
#include "kill_rules.h"

static mdl_kill_input state_now(const world *w, int64_t extra)
{
    mdl_kill_input in;
    in.counted = mdl_ledger_counted(w->led);
    in.cached = w->dstate.cached;
    in.extra = extra;
    in.foreground = w->proc.fg;
    in.successor = w->dstate.successor;
    in.aged = w->proc.aged;
    in.job = w->proc.tasks > 0;
    in.hot = w->proc.fg ? w->proc.hot : 0;
    in.bound_adj = w->svc && w->proc.alive ? w__app_adj(w) : 0;
    return in;
}

w_fate w__kill_check(world *w, int64_t extra, mdl_stage stage)
{
    if (w->pg.on)
        return w__pages_check(w, extra, 0);
    if (w->proc.gen_growing > 0)
        w__gen_sync(w); /* the KV written so far, before the rule reads memory */
    mdl_kill_input in = state_now(w, extra);
    mdl_kill_verdict v;
    kill_decide(w->dev, &in, &v);
    if (v.margin < w->out->min_margin)
        w->out->min_margin = v.margin;
    w__rule_verdict(w, &v, in.bound_adj > 0 ? in.bound_adj : w__main_adj(w), stage);
    if (v.dies)
        return W_GONE;
    w__warning_room(w, v.room);
    if (w->proc.gen_growing > 0)
        w__gen_replan(w); /* the KV's next line moved */
    return W_LIVES;
}

/* The growth of counted bytes after which the plain rule's verdict could
 * change: jetsam's margin (the limit, in the background the page-shortage
 * level); lmk's room over the app's level and, while cached apps are left,
 * over the level that kills them; and the warning level's, before it is
 * crossed.  A line past which nothing was killed (lmk's page cache over
 * the level) leaves a soft room of 0: checked again step by step. */
int64_t w__growth_room(world *w, int64_t *soft)
{
    *soft = INT64_MAX;
    if (w->pg.on)
        return w__pages_growth_room(w, soft);
    const mdl_device *d = w->dev;
    mdl_kill_input in = state_now(w, 0);
    mdl_kill_verdict v;
    kill_decide(d, &in, &v);
    int64_t step = INT64_MAX;
    if (d->rule == MDL_KILL_JETSAM) {
        step = v.margin;
    } else {
        int64_t floor = lmk_floor_of(d, &in);
        if (floor >= 0)
            step = v.room - floor;
        if (v.cached > 0 && d->nminfree > 0 && v.room >= d->minfree[d->nminfree - 1].free &&
            v.room - d->minfree[d->nminfree - 1].free < step)
            step = v.room - d->minfree[d->nminfree - 1].free;
    }
    if (w->warn_level[1] > 0 && !w->proc.warned) {
        int64_t lv = w->warn_level[w->proc.fg != 0];
        if (v.room >= lv && v.room - lv < step)
            step = v.room - lv;
    }
    if (step < 0) {
        *soft = 0;
        return INT64_MAX;
    }
    return step;
}

/* The Java heap of the process owner o allocates in: each process has its
 * own (the main one holds app_owner's bytes when the model runs in a
 * service process). */
static int64_t java_heap(const world *w, mdl_owner o)
{
    int64_t all = mdl_ledger_total(w->led, MDL_CAT_JAVA);
    if (!w->svc)
        return all;
    int64_t main = mdl_ledger_held(w->led, w->app_owner, MDL_CAT_JAVA);
    return o == w->app_owner ? main : all - main;
}

w_fate w__charge_n(world *w, unsigned n, const mdl_owner *owners, const int64_t *const *amounts,
                   mdl_stage stage)
{
    int64_t java = 0;
    int any = 0;
    for (unsigned k = 0; k < n; k++)
        for (int c = 0; c < MDL_CAT_COUNT; c++) {
            any |= amounts[k][c] > 0;
            if (c == MDL_CAT_JAVA && amounts[k][c] > 0)
                java += amounts[k][c];
        }
    if (!any)
        return W_LIVES;
    w->last_stage = stage;
    const mdl_device *d = w->dev;
    if (java > 0 && d->java_heap_limit > 0 && java_heap(w, owners[0]) + java > d->java_heap_limit) {
        /* OutOfMemoryError: nothing made; in the process that allocates */
        w__heap_verdict(w, w->svc && owners[0] == w->app_owner, stage);
        return W_GONE;
    }
    int counted = 0;
    for (unsigned k = 0; k < n; k++)
        for (int c = 0; c < MDL_CAT_COUNT; c++) {
            if (amounts[k][c] <= 0)
                continue;
            int rc = mdl_ledger_alloc(w->led, owners[k], (mdl_category)c, amounts[k][c], stage,
                                      now(w), w->err);
            if (rc != SIM_OK) {
                w__fail(w, rc);
                return W_GONE;
            }
            counted |= (d->counts_mask & MDL_CAT_BIT(c)) != 0;
        }
    if (w->pg.on) { /* every page needs RAM, counted or not (pages.c) */
        if (counted && w->proc.switching > 0 && mdl_ledger_counted(w->led) > w->out->switch_peak)
            w->out->switch_peak = mdl_ledger_counted(w->led);
        return w__pages_check(w, 0, 1);
    }
    if (!counted)
        return W_LIVES;
    if (w->proc.switching > 0 && mdl_ledger_counted(w->led) > w->out->switch_peak)
        w->out->switch_peak = mdl_ledger_counted(w->led);
    return w__kill_check(w, 0, stage);
}

w_fate w__charge(world *w, mdl_owner o, const int64_t v[MDL_CAT_COUNT], mdl_stage stage)
{
    const int64_t *amounts[1] = {v};
    return w__charge_n(w, 1, &o, amounts, stage);
}

void w__give(world *w, mdl_owner o, int64_t v[MDL_CAT_COUNT])
{
    for (int c = 0; c < MDL_CAT_COUNT; c++) {
        if (v[c] > 0) {
            int rc = mdl_ledger_free(w->led, o, (mdl_category)c, v[c], w->err);
            if (rc != SIM_OK)
                w__fail(w, rc);
        }
        v[c] = 0;
    }
    w__warning_after_free(w);
}

void w__give_owner(world *w, mdl_owner o)
{
    mdl_ledger_free_owner(w->led, o, NULL);
    w__warning_after_free(w);
}

/* Another app's allocation spike (lmk devices): held only for the check. */
void w__pressure(sim_engine *e, void *ctx, uint64_t arg)
{
    (void)e;
    (void)arg;
    world *w = ctx;
    gsl_rng *r = sim_stream_rng(&w->s_press);
    int64_t size = mdl_dist_sample(&w->dev->pressure_size, r);
    w->out->pressure_spikes++;
    if (w__app_alive(w)) {
        w__emit_note(w, -1, w->last_stage, "pressure_spike");
        if (w__kill_check(w, size, w->last_stage) != W_LIVES) {
            /* the app died; the other apps go on spiking */
        }
    }
    sim_time t = now(w) + mdl_dist_sample(&w->dev->pressure, r);
    if (t < w->cell->horizon)
        (void)w__at(w, t, PRIO_PRESSURE, w__pressure, 0, NULL);
}
