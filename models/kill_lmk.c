/* kill_lmk.c - Android's low-memory killer, as oomsim models it
 * (docs/model.md "Kill rules"): the minfree levels of lmkd's legacy mode.
 *
 * Available memory at a check is ram - system - cached apps - the app the
 * user switched to (in the background) - a pressure spike - the app's
 * counted bytes.  While it is below the last (highest-adj) level's free, a
 * cached app is killed, one at a time; then the app dies when available
 * memory is below the level of its own oom_score_adj (the entry with the
 * largest adj not above it): 0 in the foreground, 700 (previous) in the
 * background, 900 (cached) once there past the device's previous_ttl.  A
 * level applies strictly below its free: memory exactly at the level
 * survives. */
/* Included by charge.c, as Redis's ae.c includes its ae_*.c backend: the
 * rule is inlined into the world's hot path (docs/design/architecture.md). */
#include "world_int.h"

/* The lmk level that applies to adj: the entry with the largest adj not
 * above it; NULL when adj is below every level. */
static inline const mdl_minfree *lmk_level_of(const mdl_device *d, int adj)
{
    const mdl_minfree *lv = NULL;
    for (unsigned i = 0; i < d->nminfree && d->minfree[i].adj <= adj; i++)
        lv = &d->minfree[i];
    return lv;
}

static inline int lmk_adj(int foreground, int aged)
{
    return foreground ? APP_ADJ_FOREGROUND : aged ? APP_ADJ_CACHED : APP_ADJ_BACKGROUND;
}

/* Free memory is the device's, wherever the app is. */
static inline int64_t lmk_headroom(const mdl_device *d, int64_t counted, int64_t cached,
                                   int64_t successor)
{
    return d->ram - d->system - cached - successor - counted;
}

static inline void lmk_decide(const mdl_device *d, const mdl_kill_input *in,
                              mdl_kill_verdict *out)
{
    /* every field set by hand: a memset of the verdict is a library call
     * on the hottest path */
    out->dies = 0;
    out->why = MDL_EXIT_LOW_MEMORY;
    out->cached_kills = 0;
    int64_t room = lmk_headroom(d, in->counted, in->cached, in->successor) - in->extra;
    int64_t cached = in->cached;
    int64_t cached_floor = d->minfree[d->nminfree - 1].free;
    while (room < cached_floor && cached > 0) {
        int64_t freed = d->cached_app_size > 0 && d->cached_app_size < cached
                            ? d->cached_app_size : cached;
        cached -= freed;
        room += freed;
        out->cached_kills++;
    }
    out->cached = cached;
    out->room = room;
    const mdl_minfree *lv = lmk_level_of(d, lmk_adj(in->foreground, in->aged));
    /* the margin counts every cached app as reclaimable (mdl_kill_line) */
    out->margin = lv != NULL ? room + cached - lv->free : INT64_MAX;
    if (lv != NULL && room < lv->free) {
        out->dies = 1;
        out->why = in->foreground ? MDL_EXIT_LOW_MEMORY : MDL_EXIT_SYSTEM_RECLAIM;
    }
}

static int64_t lmk_line(const mdl_device *d, int foreground)
{
    const mdl_minfree *lv = lmk_level_of(d, lmk_adj(foreground, 0));
    return lv != NULL ? d->ram - d->system - lv->free : -1;
}
