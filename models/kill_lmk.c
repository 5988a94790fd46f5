/* kill_lmk.c - Android's low-memory killer in lmkd's legacy minfree mode
 * (docs/model.md "Kill rules"); PSI mode is the page model (pages.c).
 *
 * Free memory at a check is ram - system - cached apps - the app the user
 * switched to (in the background) - a pressure spike - the app's counted
 * bytes - its hot mapped pages (foreground) + what zram gains by
 * compressing the other apps' swappable memory - the reserve (the zones'
 * high watermarks, when the device gives them: mp_event_common's
 * other_free).
 *
 * While free is below the last (highest-adj) level's free, a cached app is
 * killed, one at a time; then the app dies when free is below the level of
 * its own oom_score_adj (the entry with the largest adj not above it): 0 in
 * the foreground, 700 (previous) in the background, 900 (cached) once there
 * past the device's previous_ttl.  A level holds only while the page cache
 * (other_file) is under it too.  lmkd names no reason in this mode.
 *
 * A level applies strictly below its free: memory exactly at it survives. */
/* Included by kill_rules.h, as Redis's ae.c includes its ae_*.c backend:
 * the rule is inlined into the world's hot path (docs/design/architecture.md). */
#ifndef OOMSIM_MODELS_KILL_LMK_C /* included once per unit, by kill_rules.h */
#define OOMSIM_MODELS_KILL_LMK_C

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

static inline int lmk_adj(int foreground, int aged, int job)
{
    return foreground ? APP_ADJ_FOREGROUND : job ? APP_ADJ_JOB
           : aged ? APP_ADJ_CACHED : APP_ADJ_BACKGROUND;
}

/* What zram gains: the swappable share of the other apps' memory, up to
 * the device's size, stored at 1/ratio of its size. */
static inline int64_t lmk_zram_bonus(const mdl_device *d, int64_t cached, int64_t successor)
{
    if (!d->has_zram)
        return 0;
    double stored = d->zram_swappable * (double)(cached + successor);
    if (stored > (double)d->zram_size)
        stored = (double)d->zram_size;
    return (int64_t)(stored * (1.0 - 1.0 / d->zram_ratio) + 0.5);
}

/* Free memory, wherever the app is (no spike): what the warnings read. */
static inline int64_t lmk_headroom(const mdl_device *d, int64_t counted, int64_t cached,
                                   int64_t successor, int64_t hot)
{
    return d->ram - d->system - cached - successor - counted - hot +
           lmk_zram_bonus(d, cached, successor);
}

/* The free memory under which the app dies, and under which cached apps go
 * first; -1 (never) when no minfree level applies to the app. */
static inline int64_t lmk_app_floor(const mdl_device *d, int foreground, int aged, int job)
{
    if (d->lmk_psi)
        return -1; /* the page model decides (pages.c) */
    const mdl_minfree *lv = lmk_level_of(d, lmk_adj(foreground, aged, job));
    return lv != NULL ? lv->free : -1;
}

/* The floor of the process the model runs in: the app's adj from its
 * flags, or the service's from its binding (processes). */
static inline int64_t lmk_floor_of(const mdl_device *d, const mdl_kill_input *in)
{
    if (in->bound_adj > 0 && !d->lmk_psi) {
        const mdl_minfree *lv = lmk_level_of(d, in->bound_adj);
        return lv != NULL ? lv->free : -1;
    }
    return lmk_app_floor(d, in->foreground, in->aged, in->job);
}

static inline void lmk_decide(const mdl_device *d, const mdl_kill_input *in,
                              mdl_kill_verdict *out)
{
    /* every field set by hand: a memset of the verdict is a library call
     * on the hottest path */
    out->dies = 0;
    out->why = MDL_EXIT_LOW_MEMORY;
    out->cached_kills = 0;
    out->lmkd = MDL_LMKD_NONE;
    /* minfree mode: free net of the reserve (mp_event_common's other_free,
     * the zones' high watermarks with their protection: 0 when the device
     * gives none), and a level holds only when the file cache is under it
     * too (other_file: the page cache, 0 when the device gives none) */
    int64_t base = d->ram - d->system - in->successor - in->extra - in->counted - in->hot -
                   d->wmark_high;
    int64_t cached = in->cached;
    if (d->lmk_psi || d->nminfree == 0) { /* the page model decides (pages.c) */
        out->cached = cached;
        out->room = base - cached;
        out->margin = INT64_MAX;
        return;
    }
    int64_t cached_floor = d->minfree[d->nminfree - 1].free;
    int64_t room = base - cached + lmk_zram_bonus(d, cached, in->successor);
    while (room < cached_floor && d->page_cache < cached_floor && cached > 0) {
        int64_t freed = d->cached_app_size > 0 && d->cached_app_size < cached
                            ? d->cached_app_size : cached;
        cached -= freed;
        room = base - cached + lmk_zram_bonus(d, cached, in->successor);
        out->cached_kills++;
    }
    int64_t bonus0 = lmk_zram_bonus(d, 0, in->successor);
    out->cached = cached;
    out->room = room;
    int64_t floor = lmk_floor_of(d, in);
    /* the margin counts every cached app as reclaimed (mdl_kill_line) */
    out->margin = floor >= 0 ? base + bonus0 - floor : INT64_MAX;
    if (floor < 0 || room >= floor || d->page_cache >= floor)
        return;
    out->dies = 1;
    out->why = in->foreground ? MDL_EXIT_LOW_MEMORY : MDL_EXIT_SYSTEM_RECLAIM;
}

static int64_t lmk_line(const mdl_device *d, int foreground)
{
    int64_t floor = lmk_app_floor(d, foreground, 0, 0);
    return floor >= 0 ? d->ram - d->system - d->wmark_high - floor : -1;
}

#endif /* OOMSIM_MODELS_KILL_LMK_C */
