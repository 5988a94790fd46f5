/* kill_jetsam.c - iOS's jetsam, as oomsim models it (docs/model.md "Kill
 * rules"): a per-process footprint limit, one in the foreground and one in
 * the background.  The app dies when its counted bytes pass the limit of
 * where it is (strictly: exactly at the limit it lives); other apps'
 * memory and pressure spikes do not move the limit. */
/* Included by charge.c, as Redis's ae.c includes its ae_*.c backend: the
 * rule is inlined into the world's hot path (docs/design/architecture.md). */
#include "world_int.h"

static inline int64_t jetsam_line(const mdl_device *d, int foreground)
{
    return foreground ? d->jetsam_limit : d->jetsam_background_limit;
}

/* A per-process limit: other apps do not move it. */
static inline int64_t jetsam_headroom(const mdl_device *d, int64_t counted,
                                      int foreground)
{
    return jetsam_line(d, foreground) - counted;
}

static inline void jetsam_decide(const mdl_device *d, const mdl_kill_input *in,
                                 mdl_kill_verdict *out)
{
    memset(out, 0, sizeof *out);
    out->room = jetsam_headroom(d, in->counted, in->foreground);
    out->cached = in->cached;
    if (out->room < 0) {
        out->dies = 1;
        out->why = MDL_EXIT_LOW_MEMORY;
    }
}
