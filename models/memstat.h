/* memstat.h - the iPhone's pages as XNU's memorystatus sees them
 * (memstat.c; docs/model.md "The iPhone's pages"): the processes beside the
 * app by jetsam band, the compressor, the phantom cache, and the entry
 * points pages.c dispatches to on a device with `others`.  Internal to
 * models/; the page models' common part is pages.h.
 *
 * Who may change what: memstat.c everything in w_xnu (w_pages.x), and the
 * other apps' memory in w_devstate it compresses and kills; path.c
 * succ_left (pg_successor_back); process.c app_comp at a death
 * (pg_app_gone). */
#ifndef OOMSIM_MODELS_MEMSTAT_H
#define OOMSIM_MODELS_MEMSTAT_H

#include <stdint.h>

#include <gsl/gsl_rng.h>

#include "models.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct w_pages w_pages;
typedef struct pg_app pg_app;
typedef struct pg_result pg_result;

/* Where RAM is: kernel, other apps' anonymous, the app's anonymous, file
 * pages, zram's store (iOS: the compressor's pool), a spike, free: they sum
 * to ram. */
#define W_PAGE_PARTS 7

/* iOS: another process beside the app (memstat.c), in kill order. */
typedef struct w_other {
    int band;
    uint32_t pid;            /* its pid in the JetsamEvents */
    int64_t resident;        /* its anonymous bytes in RAM */
    int64_t comp;            /* ... and in the compressor, uncompressed */
} w_other;

/* iOS: the page model's own state (memstat.c; docs/model.md "The
 * iPhone's pages"); the file pages are w_pages' (filepages.h). */
typedef struct w_xnu {
    w_other other[MDL_OTHERS_MAX]; /* alive, in kill order (band, then first entered) */
    uint32_t nother;
    int64_t other_comp;      /* their bytes in the compressor, uncompressed (the sum) */
    int64_t app_comp;        /* the app's anonymous bytes in the compressor */
    int64_t succ_comp;       /* the successor app's */
    int64_t seen_counted;    /* the app's counted bytes at the last check (0: none since its start) */
    int64_t seen_peak;       /* the most of them at any check of this life */
    uint32_t seen_epoch;     /* the life they are of (a new life starts them again) */
    int crossed;             /* the per-process kill came at the allocation that crossed the
                              * limit (not at a limit lowered under the footprint) */
    sim_time succ_left;      /* the successor left the front (ages as the app does) */
    /* the phantom cache: file bytes evicted since its last look, its
     * history (bit 0 the current period, one bit per period: pc_history),
     * when its current period began */
    int64_t pc_added;
    sim_time pc_added_at;    /* when the last ghost was added */
    uint32_t pc_hist;
    sim_time pc_start;
    int fc;                  /* memorystatus_phantom_cache_pressure: set by the phantom
                              * cache, cleared only by a thrashing kill */
    int level;               /* the pressure level the app was last told: 0, 1 warning, 2 critical */
    int64_t level_comp;      /* the compressor's content when the level was last set */
    int64_t added_total, found_total; /* phantom cache counts over the replication, bytes */
    /* memorystatus's snapshot, the JetsamEvent to be (kern_memorystatus.c;
     * docs/model.md "JetsamEvent reports"): made at the first kill while
     * none is open, with the pages and every process then; each kill
     * updates its process's entry (or appends one); posted when a pass
     * that killed outside the idle bands ends, or at once after a
     * per-process-limit kill, at most once in 30 s */
    mdl_jetsam_event snap;
    int snap_open;           /* made and not yet posted */
    int snap_post;           /* this pass killed outside bands 0 and 10 */
    int settling;            /* the phone settles before the session: no report */
    sim_time snap_last;      /* the last post, -1 none */
    uint32_t succ_life;      /* the successor's lives ended (its pid in the reports) */
} w_xnu;

/* memstat.c: the iOS page model, pages.c dispatching to it */
void pg_xnu_setup(w_pages *pg, const pg_app *a, gsl_rng *r);
pg_result pg_xnu_check(w_pages *pg, const pg_app *a, int64_t extra);
sim_time pg_xnu_refault(w_pages *pg, const pg_app *a, int hot, int64_t hot_bytes, pg_result *res);
int64_t pg_xnu_free(const w_pages *pg);
void pg_xnu_parts(const w_pages *pg, const pg_app *a, int64_t part[W_PAGE_PARTS]);
int64_t pg_xnu_room(const w_pages *pg, const pg_app *a);
int64_t pg_xnu_growth_room(const w_pages *pg, const pg_app *a, int64_t *soft);
void pg_xnu_fill(const w_pages *pg, const pg_app *a, trc_event *e);
/* The app's jetsam band now. */
int pg_xnu_band(const w_pages *pg, const pg_app *a);

#ifdef __cplusplus
}
#endif

#endif /* OOMSIM_MODELS_MEMSTAT_H */
