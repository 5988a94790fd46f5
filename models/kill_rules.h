/* kill_rules.h - the kill rules as the world runs them: the device's rule
 * picked by its kind (fixed at setup), and the room left under it.
 * Internal to models/; included by charge.c, warning.c and kill.c. */
#ifndef OOMSIM_MODELS_KILL_RULES_H
#define OOMSIM_MODELS_KILL_RULES_H

#include "world_int.h"

/* The kill rule of each OS family, one file each, included here (as Redis's
 * ae.c includes its ae_*.c backend), and this header by every file that
 * runs a rule (charge.c, warning.c) or answers of one (kill.c), so the rule
 * inlines into the hot path: a table of function pointers cost 2 % of a
 * run, and a call out of line 2 % more. */
#include "kill_jetsam.c"
#include "kill_lmk.c"

/* The device's rule: its kind, fixed when the replication is set up. */
static inline void kill_decide(const mdl_device *d, const mdl_kill_input *in,
                               mdl_kill_verdict *out)
{
    if (d->rule == MDL_KILL_JETSAM)
        jetsam_decide(d, in, out);
    else
        lmk_decide(d, in, out);
}

/* The room left with no spike: what the memory warnings compare. */
static inline int64_t headroom(const world *w, int64_t counted)
{
    const mdl_device *d = w->dev;
    if (w->pg.on)
        return w__pages_room(w);
    return d->rule == MDL_KILL_JETSAM
               ? jetsam_headroom(d, counted, w->proc.fg)
               : lmk_headroom(d, counted, w->dstate.cached, w->dstate.successor,
                              w->proc.fg ? w->proc.hot : 0);
}

#endif /* OOMSIM_MODELS_KILL_RULES_H */
