/* warning.c - the memory warnings: the level each side is warned at, the
 * edge (one warning per crossing below it, heard by the app in an event
 * of its own) and the app's reaction (the policy's on_warning actions, and
 * their end when memory recovers).  charge.c reports the room after every
 * change; the limits in force follow in process.c (w__apply_limits). */
#include "kill_rules.h"

/* The headroom below which the app is warned, in the background [0] and
 * the foreground [1]: a share of jetsam's limit there, or the device's
 * fixed level. */
void w__warning_levels(world *w)
{
    const mdl_device *d = w->dev;
    for (int fg = 0; fg < 2; fg++) {
        int64_t limit = mdl_device_jetsam_limit(d, fg);
        w->warn_level[fg] = d->warning_share > 0 ? (int64_t)(d->warning_share * (double)limit)
                                                 : d->warning_at;
    }
}

/* Memory warnings are edge-triggered: one per crossing below warning_at.
 * The app hears of a crossing (onTrimMemory, didReceiveMemoryWarning)
 * asynchronously: the policy's actions, and their end when memory
 * recovers, run in an event at the same instant, never inside the
 * allocation or release that crossed. */
void w__warning_edge(world *w, int below)
{
    w->proc.warned = below;
    if (below) {
        w->out->warnings++;
        w__emit_note(w, -1, w->last_stage, "memory_warning");
    }
    if (!w->ending &&
        (w->pol->on_warning != 0 || w->pol->retry.kind == MDL_RETRY_ON_NEW_CONDITION))
        (void)w__at(w, now(w), PRIO_TIMER, w__on_warning, tag(w, (uint32_t)below), NULL);
}

void w__warning_check(world *w)
{
    if (w->warn_level[1] <= 0)
        return;
    w__warning_room(w, headroom(w, mdl_ledger_counted(w->led)));
}

/* Frees what no execution uses, as on_warning says. */
static void warning_release(world *w, unsigned act)
{
    for (unsigned k = 0; k < w->nparts; k++) {
        part_rt *p = &w->proc.parts[k];
        if (p->state != P_READY || p->busy > 0)
            continue; /* only what no execution uses */
        if (act & MDL_WARN_RELEASE_IDLE) {
            w__release_part(w, p); /* reloaded on demand */
        } else if ((act & MDL_WARN_CLEAR_CACHE) && (p->sess_idle > 0 || p->ctx_open)) {
            /* session states are rebuildable: opened again when needed */
            w__drop_sessions(w, p);
        }
    }
}

/* A memory warning reached the app (arg 1), or memory recovered (arg 0). */
void w__on_warning(sim_engine *e, void *ctx, uint64_t arg)
{
    (void)e;
    world *w = ctx;
    if (!current(w, arg))
        return;
    if ((uint32_t)arg == 0) {
        if (w->proc.warned)
            return; /* below again at the same instant */
        w->proc.warn_active = 0;
        w__apply_limits(w);
        uint32_t epoch = w->epoch;
        w__dispatch(w);
        if (still(w, epoch))
            w__new_condition(w); /* the device state improved */
        return;
    }
    if (!w->proc.warned)
        return;
    w->proc.warn_active = 1;
    w__apply_limits(w);
    warning_release(w, w->pol->on_warning);
}
