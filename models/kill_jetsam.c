/* kill_jetsam.c - iOS's jetsam, as oomsim models it (docs/model.md "Kill
 * rules"): a per-process footprint limit, one in the foreground and one in
 * the background, and in the background the page-shortage kills of the
 * idle band.  The app dies when its counted bytes pass the limit of where
 * it is (strictly: exactly at the limit it lives): low_memory, a
 * JetsamEvent with reason per-process-limit.  In the background it also
 * dies, of system_reclaim (reason vm-pageshortage), when
 * ram - system - the successor app - a spike - counted falls below the
 * device's pageshortage level.  Other apps' cached memory does not move
 * either line: iOS suspends and compresses them. */
/* Included by kill_rules.h, as Redis's ae.c includes its ae_*.c backend:
 * the rule is inlined into the world's hot path (docs/design/architecture.md). */
#ifndef OOMSIM_MODELS_KILL_JETSAM_C /* included once per unit, by kill_rules.h */
#define OOMSIM_MODELS_KILL_JETSAM_C

#include "world_int.h"

/* The per-process limit of where the app is. */
static inline int64_t jetsam_limit_of(const mdl_device *d, int foreground)
{
    return foreground ? d->jetsam_limit : d->jetsam_background_limit;
}

/* The line for the tables: the limit, and in the background the
 * page-shortage level with no successor, whichever comes first. */
static inline int64_t jetsam_line(const mdl_device *d, int foreground)
{
    int64_t l = jetsam_limit_of(d, foreground);
    if (!foreground && d->pageshortage > 0 && d->ram - d->system - d->pageshortage < l)
        l = d->ram - d->system - d->pageshortage;
    return l;
}

/* A per-process limit: other apps do not move it (the warning level reads it). */
static inline int64_t jetsam_headroom(const mdl_device *d, int64_t counted, int foreground)
{
    return jetsam_limit_of(d, foreground) - counted;
}

static inline void jetsam_decide(const mdl_device *d, const mdl_kill_input *in,
                                 mdl_kill_verdict *out)
{
    /* every field set by hand: a memset of the verdict is a library call
     * on the hottest path */
    out->dies = 0;
    out->why = MDL_EXIT_LOW_MEMORY;
    out->cached_kills = 0;
    out->lmkd = MDL_LMKD_NONE;
    out->room = jetsam_headroom(d, in->counted, in->foreground);
    out->cached = in->cached;
    out->margin = out->room - in->extra;
    if (out->room < 0) {
        out->dies = 1;
        out->why = MDL_EXIT_LOW_MEMORY;
        return;
    }
    if (in->foreground || d->pageshortage <= 0)
        return;
    int64_t avail = d->ram - d->system - in->successor - in->extra - in->counted;
    if (avail - d->pageshortage < out->margin)
        out->margin = avail - d->pageshortage;
    if (avail < d->pageshortage) {
        out->dies = 1;
        out->why = MDL_EXIT_SYSTEM_RECLAIM;
    }
}

#endif /* OOMSIM_MODELS_KILL_JETSAM_C */
