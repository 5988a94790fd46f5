/* kill_lmk.c - Android's low-memory killer, as oomsim models it
 * (docs/model.md "Kill rules"), in lmkd's two modes.
 *
 * Free memory at a check is ram - system - cached apps - the app the user
 * switched to (in the background) - a pressure spike - the app's counted
 * bytes - its hot mapped pages (foreground) + what zram gains by
 * compressing the other apps' swappable memory.
 *
 * minfree mode (legacy): while free is below the last (highest-adj)
 * level's free, a cached app is killed, one at a time; then the app dies
 * when free is below the level of its own oom_score_adj (the entry with
 * the largest adj not above it): 0 in the foreground, 700 (previous) in
 * the background, 900 (cached) once there past the device's previous_ttl.
 * lmkd names no reason in this mode.
 *
 * psi mode (lmkd's default since Android 10): while free is below the high
 * watermark, a cached app is killed, one at a time; then an app in the
 * background dies when free is below the high watermark, one in the
 * foreground only when free is below the min watermark.  lmkd names the
 * reason: LOW_MEM_AND_THRASHING when the app would have lived without its
 * hot pages, else LOW_MEM_AND_SWAP with zram, else LOW_MEM.
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

static inline int lmk_adj(int foreground, int aged)
{
    return foreground ? APP_ADJ_FOREGROUND : aged ? APP_ADJ_CACHED : APP_ADJ_BACKGROUND;
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
static inline int64_t lmk_app_floor(const mdl_device *d, int foreground, int aged)
{
    if (d->lmk_psi)
        return foreground ? d->wmark_min : d->wmark_high;
    const mdl_minfree *lv = lmk_level_of(d, lmk_adj(foreground, aged));
    return lv != NULL ? lv->free : -1;
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
    int64_t base = d->ram - d->system - in->successor - in->extra - in->counted - in->hot;
    int64_t cached = in->cached;
    int64_t cached_floor = d->lmk_psi ? d->wmark_high : d->minfree[d->nminfree - 1].free;
    int64_t room = base - cached + lmk_zram_bonus(d, cached, in->successor);
    while (room < cached_floor && cached > 0) {
        int64_t freed = d->cached_app_size > 0 && d->cached_app_size < cached
                            ? d->cached_app_size : cached;
        cached -= freed;
        room = base - cached + lmk_zram_bonus(d, cached, in->successor);
        out->cached_kills++;
    }
    int64_t bonus0 = lmk_zram_bonus(d, 0, in->successor);
    out->cached = cached;
    out->room = room;
    int64_t floor = lmk_app_floor(d, in->foreground, in->aged);
    /* the margin counts every cached app as reclaimed (mdl_kill_line) */
    out->margin = floor >= 0 ? base + bonus0 - floor : INT64_MAX;
    if (floor < 0 || room >= floor)
        return;
    out->dies = 1;
    out->why = in->foreground ? MDL_EXIT_LOW_MEMORY : MDL_EXIT_SYSTEM_RECLAIM;
    if (d->lmk_psi)
        out->lmkd = in->hot > 0 && room + in->hot >= floor ? MDL_LMKD_LOW_MEM_AND_THRASHING
                    : d->has_zram                          ? MDL_LMKD_LOW_MEM_AND_SWAP
                                                           : MDL_LMKD_LOW_MEM;
}

static int64_t lmk_line(const mdl_device *d, int foreground)
{
    int64_t floor = lmk_app_floor(d, foreground, 0);
    return floor >= 0 ? d->ram - d->system - floor : -1;
}

#endif /* OOMSIM_MODELS_KILL_LMK_C */
