/* filepages.h - the app's file pages and the page cache's, as both page
 * models count them (pages.c for Android, memstat.c for iOS): the app's
 * mapped bytes, the hot ones (read at every inference) and what reclaim
 * dropped of each, kept in w_pages.  Internal to models/; static inline,
 * included by the two page models only. */
#ifndef OOMSIM_MODELS_FILEPAGES_H
#define OOMSIM_MODELS_FILEPAGES_H

#include "pages.h"

static inline int64_t app_anon(const w_pages *pg)
{
    return mdl_ledger_total(pg->led, MDL_CAT_JAVA) + mdl_ledger_total(pg->led, MDL_CAT_NATIVE) +
           mdl_ledger_total(pg->led, MDL_CAT_GPU);
}

static inline int64_t app_file(const w_pages *pg)
{
    return mdl_ledger_total(pg->led, MDL_CAT_FILE);
}

static inline int64_t app_hot(const w_pages *pg, const pg_app *a)
{
    int64_t f = app_file(pg), h = *a->alive ? *a->hot : 0;
    return h < f ? h : f;
}

/* The app's file pages resident: its mapped bytes less what reclaim
 * dropped (cold or hot: a part turned hot keeps what was dropped of it
 * out until it is read, sync_app moving it from one count to the other). */
static inline int64_t app_file_resident(const w_pages *pg)
{
    int64_t f = app_file(pg), out = pg->app_evicted + pg->app_cold_gone;
    return out < f ? f - out : 0;
}

/* The app's mapped bytes that are not hot and still resident. */
static inline int64_t app_cold(const w_pages *pg, const pg_app *a)
{
    int64_t app = app_file(pg) - app_hot(pg, a) - pg->app_cold_gone;
    return app > 0 ? app : 0;
}

/* The app's hot weights still resident. */
static inline int64_t app_hot_resident(const w_pages *pg, const pg_app *a)
{
    return app_hot(pg, a) - pg->app_evicted;
}

/* The cold file pages reclaim drops first: the page cache beyond its
 * working set, the app's mapped bytes that are not hot. */
static inline int64_t cold_file(const w_pages *pg, const pg_app *a)
{
    return pg->pc_cold + app_cold(pg, a);
}

/* The app's dropped pages, within what it maps now (a release, a death). */
static inline void sync_app(w_pages *pg, const pg_app *a)
{
    if (pg->app_evicted == 0 && pg->app_cold_gone == 0)
        return; /* nothing of the app is out */
    int64_t hot = app_hot(pg, a), cold = app_file(pg) - hot;
    if (pg->app_cold_gone > cold) { /* pages dropped while cold are now hot: still out */
        pg->app_evicted += pg->app_cold_gone - cold;
        pg->app_cold_gone = cold;
    }
    if (pg->app_evicted > hot)
        pg->app_evicted = hot;
    if (pg->app_cold_gone > cold)
        pg->app_cold_gone = cold;
}

/* Drops working-set file pages: the page cache's and the app's hot
 * weights, in proportion to what each holds. */
static inline void evict_ws(w_pages *pg, const pg_app *a, int64_t bytes)
{
    int64_t app = app_hot_resident(pg, a);
    int64_t all = app + pg->pc_ws;
    if (all <= 0 || bytes <= 0)
        return;
    if (bytes > all)
        bytes = all;
    int64_t from_app = (int64_t)((double)bytes * ((double)app / (double)all));
    if (from_app > app)
        from_app = app;
    int64_t from_pc = bytes - from_app;
    if (from_pc > pg->pc_ws) {
        from_app += from_pc - pg->pc_ws;
        from_pc = pg->pc_ws;
    }
    pg->app_evicted += from_app;
    pg->dropped += from_app;
    pg->pc_ws -= from_pc;
    pg->pgrefill += bytes; /* taken off the active list first */
}

/* An inference on a part (`file` its hot bytes) reads its weights: its share of the app's hot
 * pages reclaim dropped comes back (a refault each).  The bytes read. */
static inline int64_t read_back(w_pages *pg, const pg_app *a, int64_t file)
{
    int64_t hot = app_hot(pg, a);
    if (pg->app_evicted <= 0 || hot <= 0)
        return 0;
    int64_t bytes = file >= hot ? pg->app_evicted
                                : (int64_t)((double)pg->app_evicted * (double)file / (double)hot);
    pg->app_evicted -= bytes;
    pg->refault += bytes;
    pg->out->refault_bytes += bytes;
    return bytes;
}

#endif /* OOMSIM_MODELS_FILEPAGES_H */
