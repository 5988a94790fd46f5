/* memstat.c - the iPhone's pages as XNU's memorystatus sees them (docs/model.md
 * "The iPhone's pages"): the kernel's wired pages, the processes beside the
 * app by jetsam band, the compressor's pool, the file cache (the app's
 * mapped weights among it) with the phantom cache that tells when it
 * thrashes, and memorystatus's decision (xnu.c) after every change, its
 * victims in band order.
 *
 * Sources, XNU tag xnu-11417.101.15: the page levels and the decision
 * (bsd/kern/kern_memorystatus.c, kern_memorystatus_policy.c), the available
 * pages (osfmk/vm/vm_page.h AVAILABLE_NON_COMPRESSED_MEMORY, AVAILABLE_MEMORY),
 * the free target (osfmk/vm/vm_pageout.c), the pressure levels
 * (vm_pageout.c VM_PRESSURE_*), the compressor's space (vm_compressor.c
 * vm_compressor_low_on_space), the phantom cache
 * (vm_phantom_cache.c vm_phantom_cache_check_pressure).  What the model
 * simplifies is said where it does.
 *
 * Like pages.c, no event per page: the pageout daemon's work is counted at
 * the change that needs it; the phantom cache is looked at when the app's
 * weights are read back. */
#include "filepages.h"

#include <math.h>
#include <string.h>

#define XPAGE MDL_XNU_PAGE
/* vm_page_free_target on iOS: the pageout daemon works while free pages
 * are below it (vm_pageout.c; the device's, mdl_xnu_free_target) */
#define XFREE_TARGET (pg->dev->xnu_free_target)

enum { MS_NONE = 0, MS_OTHER, MS_APP, MS_SUCC };

/* The app's anonymous memory the compressor may take: native and Java, not
 * IOKit-mapped (gpu) memory. */
static int64_t ms_app_compressible(const w_pages *pg)
{
    return mdl_ledger_total(pg->led, MDL_CAT_NATIVE) + mdl_ledger_total(pg->led, MDL_CAT_JAVA);
}

/* The app's bytes in the compressor: what it holds there, within what it
 * still has (a release or a death frees compressed bytes too). */
static int64_t ms_app_comp(const w_pages *pg)
{
    int64_t c = pg->x.app_comp, own = ms_app_compressible(pg);
    return c < own ? c : own;
}

static int64_t ms_comp_total(const w_pages *pg)
{
    return pg->x.other_comp + ms_app_comp(pg) + pg->x.succ_comp;
}

/* The compressor's pool in RAM for a content of c bytes: c over the ratio. */
static int64_t ms_pool_of(const mdl_device *d, int64_t c)
{
    return c == 0 ? 0 : (int64_t)ceil((double)c / d->compressor_ratio);
}

static int64_t ms_pool(const w_pages *pg) { return ms_pool_of(pg->dev, ms_comp_total(pg)); }

/* vm_compressor_low_on_space: it holds over 98 % of what it may. */
static int ms_low_on_space(const mdl_device *d, int64_t c) { return c > d->compressor_max / 100 * 98; }

static int64_t ms_file_resident(const w_pages *pg)
{
    return pg->pc_cold + pg->pc_ws + app_file_resident(pg);
}

/* Free pages: what RAM has left beside the app's anonymous bytes less
 * app_comp, its file pages and the others' (file), and the pool. */
static int64_t ms_free_of(const w_pages *pg, int64_t anon, int64_t app_comp, int64_t file,
                          int64_t pool)
{
    const mdl_device *d = pg->dev;
    return d->ram - d->system - pg->ds->cached - pg->ds->successor - (anon - app_comp) -
           file - pool - pg->spike;
}

int64_t pg_xnu_free(const w_pages *pg)
{
    return ms_free_of(pg, app_anon(pg), ms_app_comp(pg), ms_file_resident(pg), ms_pool(pg));
}

void pg_xnu_parts(const w_pages *pg, const pg_app *a, int64_t part[W_PAGE_PARTS])
{
    (void)a;
    part[0] = pg->dev->system;
    part[1] = pg->ds->cached + pg->ds->successor;
    part[2] = app_anon(pg) - ms_app_comp(pg);
    part[3] = ms_file_resident(pg);
    part[4] = ms_pool(pg);
    part[5] = pg->spike;
    part[6] = pg_xnu_free(pg);
}

/* memorystatus_available_pages (vm_page.h): free and file-backed pageable
 * pages (no secluded pool, no purgeable memory in the model), bytes. */
static int64_t ms_available(const w_pages *pg) { return pg_xnu_free(pg) + ms_file_resident(pg); }

/* ---------------------------------------------------------- bands */

/* The app's band: the foreground; once it left, the aging band for
 * MDL_XNU_APP_AGING_US, then idle (the world's aged: path.c sets it). */
static int ms_app_band(const pg_app *a)
{
    return *a->fg ? MDL_BAND_FOREGROUND : *a->aged ? MDL_BAND_IDLE : MDL_BAND_AGING_APPS;
}

static int ms_succ_alive(const w_pages *pg) { return pg->ds->successor + pg->x.succ_comp > 0; }

/* The other app the user went to: in front while the app is in the
 * background; once the user came back it ages as the app does. */
static int ms_succ_band(const w_pages *pg, const pg_app *a)
{
    if (*a->bg)
        return MDL_BAND_FOREGROUND;
    return sim_now(a->e) - pg->x.succ_left < MDL_XNU_APP_AGING_US ? MDL_BAND_AGING_APPS
                                                             : MDL_BAND_IDLE;
}

static uint32_t ms_idle_procs(const w_pages *pg, const pg_app *a)
{
    uint32_t n = 0;
    for (uint32_t k = 0; k < pg->x.nother && pg->x.other[k].band == MDL_BAND_IDLE; k++)
        n++;
    n += *a->alive && ms_app_band(a) == MDL_BAND_IDLE;
    n += ms_succ_alive(pg) && ms_succ_band(pg, a) == MDL_BAND_IDLE;
    return n;
}

/* The first process of the lowest band up to max_band (memorystatus_kill_top_process
 * walks the bands up; in a band, the first entered: the others were there
 * from the start, before the app and the successor). */
static int ms_victim(const w_pages *pg, const pg_app *a, int max_band)
{
    int who = MS_NONE, b = MDL_BAND_MAX + 1;
    if (pg->x.nother > 0) {
        who = MS_OTHER;
        b = pg->x.other[0].band;
    }
    if (*a->alive && ms_app_band(a) < b) {
        who = MS_APP;
        b = ms_app_band(a);
    }
    if (ms_succ_alive(pg) && ms_succ_band(pg, a) < b) {
        who = MS_SUCC;
        b = ms_succ_band(pg, a);
    }
    return b <= max_band ? who : MS_NONE;
}

/* ---------------------------------------------------------- pageout */

/* Compresses anonymous memory of one process: up to `gross` bytes of
 * `*resident` move to `*comp`.  The bytes moved. */
static int64_t ms_squeeze(int64_t *resident, int64_t *comp, int64_t gross)
{
    int64_t m = gross < *resident ? gross : *resident;
    *resident -= m;
    *comp += m;
    return m;
}

/* The compressor takes suspended processes' anonymous memory (bands below
 * the foreground), lowest band first (the app and the successor among the
 * others by their bands), until `net` bytes are free or it is full
 * (compressor.max, uncompressed).  The model's order; XNU compresses from
 * its inactive queue, oldest first. */
static void ms_compress(w_pages *pg, const pg_app *a, int64_t net)
{
    w_xnu *x = &pg->x;
    double keep = 1.0 - 1.0 / pg->dev->compressor_ratio;
    double want = ceil((double)net / keep); /* in double: a ratio near 1 wants a lot */
    int64_t room = pg->dev->compressor_max - ms_comp_total(pg);
    int64_t gross = want < (double)room ? (int64_t)want : room;
    x->app_comp = ms_app_comp(pg);
    /* by band, lowest first; in a band the others first (there first) */
    int app = *a->alive && !*a->fg ? ms_app_band(a) : MDL_BAND_FOREGROUND;
    int succ = ms_succ_alive(pg) ? ms_succ_band(pg, a) : MDL_BAND_FOREGROUND;
    uint32_t k = 0;
    while (gross > 0) {
        int other = k < x->nother ? x->other[k].band : MDL_BAND_FOREGROUND;
        int low = other < app ? other : app;
        low = succ < low ? succ : low;
        if (low >= MDL_BAND_FOREGROUND)
            break; /* nothing suspended is left */
        if (other == low) {
            int64_t m = ms_squeeze(&x->other[k].resident, &x->other[k].comp, gross);
            pg->ds->cached -= m;
            x->other_comp += m;
            gross -= m;
            k++;
        } else if (app == low) {
            int64_t res = ms_app_compressible(pg) - x->app_comp;
            int64_t m = gross < res ? gross : res;
            x->app_comp += m;
            gross -= m;
            app = MDL_BAND_FOREGROUND;
        } else {
            gross -= ms_squeeze(&pg->ds->successor, &x->succ_comp, gross);
            succ = MDL_BAND_FOREGROUND;
        }
    }
}

/* File pages dropped: ghosts for the phantom cache, counted in the period
 * they were added (a quiet period since the last ones clears the count,
 * as the cache's sample restarts every 250 ms). */
static void ms_ghosts(w_pages *pg, const pg_app *a, int64_t bytes)
{
    w_xnu *x = &pg->x;
    if (bytes <= 0)
        return;
    if (sim_now(a->e) - x->pc_added_at > MDL_XNU_PC_PERIOD_US)
        x->pc_added = 0;
    x->pc_added += bytes;
    x->pc_added_at = sim_now(a->e);
}

/* The pageout daemon, while free pages are below its target: the cold file
 * pages first, then the compressor, then the file working set (the app's
 * hot weights among it).  Every file page dropped is a ghost the phantom
 * cache remembers. */
static void ms_pageout(w_pages *pg, const pg_app *a)
{
    int64_t need = XFREE_TARGET - pg_xnu_free(pg);
    if (need <= 0)
        return;
    int64_t take = need < pg->pc_cold ? need : pg->pc_cold;
    pg->pc_cold -= take;
    ms_ghosts(pg, a, take);
    need -= take;
    take = need < app_cold(pg, a) ? need : app_cold(pg, a);
    pg->app_cold_gone += take;
    ms_ghosts(pg, a, take);
    need -= take;
    if (need > 0 && pg->dev->compressor_ratio > 1.0) {
        ms_compress(pg, a, need);
        need = XFREE_TARGET - pg_xnu_free(pg);
    }
    if (need > 0) {
        int64_t ws = app_hot_resident(pg, a) + pg->pc_ws;
        take = need < ws ? need : ws;
        evict_ws(pg, a, take);
        ms_ghosts(pg, a, take);
    }
    int64_t c = ms_comp_total(pg);
    if (c > pg->out->swap_used_max)
        pg->out->swap_used_max = c;
}

/* ----------------------------------------------------- phantom cache */

/* Pages found in the phantom cache (`found` bytes read back over `dur`),
 * with the ghosts added since the last look, as
 * vm_phantom_cache_check_pressure sees them (vm_phantom_cache.c): the
 * history shifts once per 250 ms period gone (mdl_xnu_pc_history); each
 * period of the read then thrashes or not (is_thrashing, bit 0), the next
 * shifted in.  Pressure when the last four bits are set,
 * unless file pages are over half of AVAILABLE_MEMORY (the active,
 * inactive, free and compressor pages: ram less the kernel's); the flag,
 * memorystatus_phantom_cache_pressure, stays set until a thrashing kill
 * clears it (memorystatus_thread_internal). */
static void ms_pc_look(w_pages *pg, const pg_app *a, int64_t found, sim_time dur)
{
    w_xnu *x = &pg->x;
    sim_time now = sim_now(a->e);
    int64_t periods = dur / MDL_XNU_PC_PERIOD_US;
    if (periods < 1)
        periods = 1;
    /* the ghosts added in the period before the read and during it */
    int64_t added = now - x->pc_added_at <= MDL_XNU_PC_PERIOD_US ? x->pc_added : 0;
    x->pc_added = 0;
    x->added_total += added;
    x->found_total += found;
    int thrash = mdl_xnu_pc_thrashing(added / XPAGE / periods, found / XPAGE / periods,
                                      pg->dev->fc_threshold);
    x->pc_hist = mdl_xnu_pc_history(x->pc_hist, &x->pc_start, now, periods, thrash);
    if (mdl_xnu_pc_pressure(x->pc_hist) &&
        ms_file_resident(pg) <= (pg->dev->ram - pg->dev->system) / 2)
        x->fc = 1;
}

/* ------------------------------------------------- JetsamEvents */

/* The app's per-process limit, where it is (the entitlement in force). */
static int64_t ms_limit_of(const w_pages *pg, const pg_app *a)
{
    return *a->fg ? pg->dev->jetsam_limit : pg->dev->jetsam_background_limit;
}

static mdl_jetsam_proc ms_entry_other(const w_other *o)
{
    return (mdl_jetsam_proc){o->band, o->pid, o->resident, o->comp, o->resident + o->comp,
                             o->resident + o->comp, 0, 0, MDL_JETSAM_NONE};
}

static mdl_jetsam_proc ms_entry_succ(const w_pages *pg, const pg_app *a)
{
    int64_t r = pg->ds->successor, c = pg->x.succ_comp;
    return (mdl_jetsam_proc){ms_succ_band(pg, a), 3000u + pg->x.succ_life, r, c, r + c, r + c,
                             0, 1, MDL_JETSAM_NONE};
}

/* The app as the snapshot has it: its footprint is what jetsam counts (the
 * ledger's counted bytes, compressed ones included); over its per-process
 * limit the kill comes at the page that crossed it (the ledger's limit
 * check, task_footprint_exceeded), not after the whole allocation. */
static mdl_jetsam_proc ms_entry_app(const w_pages *pg, const pg_app *a, mdl_jetsam_cause why)
{
    const w_xnu *x = &pg->x;
    mdl_ledger_stats st;
    mdl_ledger_stats_get(pg->led, &st);
    int64_t foot = st.counted, most = st.peak;
    if (why == MDL_JETSAM_PER_PROCESS_LIMIT && x->crossed && foot > ms_limit_of(pg, a)) {
        foot = ms_limit_of(pg, a) + MDL_XNU_PAGE; /* what it held before, at most that */
        most = x->seen_peak > foot ? x->seen_peak : foot;
    }
    if (most < foot)
        most = foot;
    return (mdl_jetsam_proc){ms_app_band(a), 1000u + *a->epoch,
                             app_anon(pg) - ms_app_comp(pg) + app_file_resident(pg),
                             ms_app_comp(pg), most, foot, 1, 0, MDL_JETSAM_NONE};
}

static void ms_snap_add(mdl_jetsam_event *ev, mdl_jetsam_proc p)
{
    if (ev->nprocs < MDL_JETSAM_PROCS)
        ev->procs[ev->nprocs++] = p;
}

/* memorystatus_init_jetsam_snapshot_locked: the pages now, and every
 * process by band from 0 up (the app and the successor after the others
 * of their band: those were there first). */
static void ms_snap_make(w_pages *pg, const pg_app *a, mdl_jetsam_cause why)
{
    w_xnu *x = &pg->x;
    mdl_jetsam_event *ev = &x->snap;
    ev->cause = why;
    ev->free = pg_xnu_free(pg);
    ev->file = ms_file_resident(pg);
    ev->anonymous = pg->ds->cached + pg->ds->successor + app_anon(pg) - ms_app_comp(pg);
    ev->wired = pg->dev->system;
    ev->compressor = ms_pool(pg);
    ev->compressed = ms_comp_total(pg);
    ev->nprocs = 0;
    int app = *a->alive, succ = ms_succ_alive(pg);
    for (uint32_t k = 0; k <= x->nother; k++) {
        int band = k < x->nother ? x->other[k].band : MDL_BAND_MAX + 1;
        if (app && ms_app_band(a) < band)
            ms_snap_add(ev, ms_entry_app(pg, a, MDL_JETSAM_NONE)), app = 0;
        if (succ && ms_succ_band(pg, a) < band)
            ms_snap_add(ev, ms_entry_succ(pg, a)), succ = 0;
        if (k < x->nother)
            ms_snap_add(ev, ms_entry_other(&x->other[k]));
    }
    x->snap_open = 1;
}

/* A kill of process p (its figures now) by `why`: the snapshot made when
 * none is open (memorystatus_kill_top_process makes none for a victim in
 * band 0 unless kern.jetsam_idle_snapshot is set; a per-process-limit
 * kill, `own`, always makes one), its entry updated or appended
 * (memorystatus_update_jetsam_snapshot_entry_locked: an entry already
 * killed is kept), and the pass marked for a post unless the victim was in
 * band 0 or 10 (memorystatus_should_post_snapshot).  1: the kill is in the
 * snapshot, which this pass or a later one posts (an open snapshot goes
 * with the next pass that posts); 0: no report will list it. */
static int ms_snap_kill(w_pages *pg, const pg_app *a, mdl_jetsam_proc p, mdl_jetsam_cause why,
                        int own)
{
    w_xnu *x = &pg->x;
    int idle = p.band == MDL_BAND_IDLE || p.band == MDL_BAND_AGING_DAEMONS;
    int always = pg->dev->xnu_idle_snapshot;
    if (x->settling)
        return 0;
    if (!x->snap_open && (own || p.band != MDL_BAND_IDLE || always))
        ms_snap_make(pg, a, why);
    if (own || !idle || always)
        x->snap_post = 1;
    if (!x->snap_open)
        return 0;
    p.killed = why;
    mdl_jetsam_event *ev = &x->snap;
    unsigned k = 0;
    while (k < ev->nprocs && !(ev->procs[k].pid == p.pid && ev->procs[k].app == p.app &&
                               ev->procs[k].successor == p.successor))
        k++;
    if (k < ev->nprocs && ev->procs[k].killed == MDL_JETSAM_NONE)
        ev->procs[k] = p;
    else if (k == ev->nprocs && ev->nprocs < MDL_JETSAM_PROCS)
        ev->procs[ev->nprocs++] = p;
    else
        return 0; /* the buffer full (or a kill already listed): not listed */
    return 1;
}

/* memorystatus_post_snapshot: an open snapshot goes out (ReportCrash reads
 * it, which empties it) unless one went out in the last 30 s
 * (JETSAM_SNAPSHOT_TIMEOUT_SECS): then it stays open, and the next pass
 * that posts adds its kills to it. */
static void ms_snap_post(w_pages *pg, const pg_app *a)
{
    w_xnu *x = &pg->x;
    sim_time now = sim_now(a->e);
    if (!x->snap_open || (x->snap_last >= 0 && now <= x->snap_last + MDL_XNU_SNAPSHOT_GAP_US))
        return;
    x->snap.time = now;
    x->snap_open = 0;
    x->snap_last = now;
    if (pg->host->report != NULL)
        pg->host->report(pg->ctx, &x->snap);
}

static void ms_kill_other(w_pages *pg, const pg_app *a, mdl_jetsam_cause why)
{
    w_xnu *x = &pg->x;
    (void)ms_snap_kill(pg, a, ms_entry_other(&x->other[0]), why, 0);
    pg->host->note(pg->ctx, "process_killed", mdl_jetsam_cause_name(why), 0, 0, x->other[0].band,
                   0);
    pg->ds->cached -= x->other[0].resident;
    x->other_comp -= x->other[0].comp;
    memmove(&x->other[0], &x->other[1], (x->nother - 1) * sizeof *x->other);
    x->nother--;
    pg->out->cached_kills++;
}

static void ms_kill_succ(w_pages *pg, const pg_app *a, mdl_jetsam_cause why)
{
    pg->host->note(pg->ctx, "successor_killed", mdl_jetsam_cause_name(why), 0, 0,
                   ms_succ_band(pg, a), 0);
    (void)ms_snap_kill(pg, a, ms_entry_succ(pg, a), why, 0);
    pg->ds->successor = 0;
    pg->x.succ_comp = 0;
    pg->x.succ_life++;
    pg->out->successor_kills++;
}

/* The app's death by memorystatus (own: over its per-process limit, the
 * kill of that process by pid): the world kills it, the cause on the
 * record, and whether a JetsamEvent will list it. */
static void ms_kill_app(w_pages *pg, const pg_app *a, mdl_jetsam_cause why, int own)
{
    int report = ms_snap_kill(pg, a, ms_entry_app(pg, a, why), why, own);
    pg->out->deaths_by_jetsam[why]++;
    pg_kill k = {PG_BY_JETSAM, -1, 0, NULL, why, report};
    pg->host->kill(pg->ctx, &k);
}

/* ------------------------------------------------ the decision loop */

static void ms_input_of(const w_pages *pg, const pg_app *a, mdl_xnu_input *in)
{
    const mdl_device *d = pg->dev;
    in->available = ms_available(pg) / XPAGE;
    in->critical = d->xnu_critical / XPAGE;
    in->idle = d->xnu_idle / XPAGE;
    in->soft = d->xnu_soft / XPAGE;
    /* the model has no decompression stream: the compressor never thrashes */
    in->compressor_thrashing = 0;
    in->compressor_exhausted = ms_low_on_space(d, ms_comp_total(pg));
    in->fc_thrashing = pg->x.fc;
    in->idle_procs = ms_idle_procs(pg, a);
}

/* The pressure level the app would be told of, one step per look as
 * vm_pressure_response takes it (vm_pageout.c, VM_PRESSURE_* with the
 * compressor active and iOS's divisors): with ANC the pageable and free
 * pages and AM those and the compressor's, normal goes critical when the
 * compressor is low on space or ANC < 0.30 AM, else warning when ANC <
 * AM/2; warning goes normal over 0.60 AM, else critical as normal does;
 * critical goes normal over 0.60 AM, else warning over 0.35 AM. */
static int ms_pressure_level(const w_pages *pg, int exhausted)
{
    int64_t am = pg->dev->ram - pg->dev->system, anc = am - ms_pool(pg);
    int to_critical = exhausted || anc * 100 < am * 30, to_normal = anc * 100 > am * 60;
    switch (pg->x.level) {
    case 0:
        return to_critical ? 2 : anc * 2 < am ? 1 : 0;
    case 1:
        return to_normal ? 0 : to_critical ? 2 : 1;
    default:
        return to_normal ? 0 : anc * 100 > am * 35 ? 1 : 2;
    }
}

/* memorystatus's thread: decides, kills, decides again until nothing is
 * to be done (each pass kills one process, so it ends).  1 when the
 * app died. */
static int ms_run(w_pages *pg, const pg_app *a)
{
    w_xnu *x = &pg->x;
    uint32_t epoch = *a->epoch;
    x->snap_post = 0; /* a new pass */
    for (;;) {
        ms_pageout(pg, a);
        mdl_xnu_input in;
        mdl_xnu_decision dec;
        ms_input_of(pg, a, &in);
        mdl_xnu_decide(&in, &dec);
        x->level = ms_pressure_level(pg, in.compressor_exhausted);
        x->level_comp = ms_comp_total(pg);
        int who = dec.action == MDL_XNU_NONE ? MS_NONE : ms_victim(pg, a, dec.max_band);
        if (who == MS_NONE)
            break;
        pg->out->jetsam_kills[dec.cause]++;
        if (dec.cause == MDL_JETSAM_FC_THRASHING || dec.cause == MDL_JETSAM_COMPRESSOR_THRASHING ||
            dec.cause == MDL_JETSAM_COMPRESSOR_SPACE) {
            /* is_reason_thrashing: the flag cleared, and with no
             * compressor thrashing (swapout_target_age 0) the phantom
             * cache's sample restarts (vm_thrashing_jetsam_done,
             * vm_phantom_cache_restart_sample): the next call shifts the
             * history once and begins a period; the history is kept */
            x->fc = 0;
            x->pc_hist <<= 1;
            x->pc_start = sim_now(a->e);
        }
        if (who == MS_APP) {
            ms_kill_app(pg, a, dec.cause, 0);
            break;
        }
        if (who == MS_OTHER)
            ms_kill_other(pg, a, dec.cause);
        else
            ms_kill_succ(pg, a, dec.cause);
    }
    if (x->snap_post)
        ms_snap_post(pg, a);
    return !(*a->alive && *a->epoch == epoch);
}

/* The figures after a change: the margin the tables show is the nearer of
 * the per-process limit and the critical level. */
static void ms_observe_at(w_pages *pg, const pg_app *a, int64_t free, int64_t file)
{
    if (free - XFREE_TARGET < pg->out->min_free)
        pg->out->min_free = free - XFREE_TARGET;
    if (!*a->alive)
        return;
    int64_t m = free + file - pg->dev->xnu_critical;
    int64_t l = ms_limit_of(pg, a) - mdl_ledger_counted(pg->led);
    if (l < m)
        m = l;
    if (m < pg->out->min_margin)
        pg->out->min_margin = m;
}

static void ms_observe(w_pages *pg, const pg_app *a)
{
    ms_observe_at(pg, a, pg_xnu_free(pg), ms_file_resident(pg));
}

/* Room for growth before memorystatus or the pageout daemon acts: the
 * per-process limit over the footprint (a line the kill is exact at), free
 * pages over the free target (a soft one). */
int64_t pg_xnu_growth_room(const w_pages *pg, const pg_app *a, int64_t *soft)
{
    *soft = pg_xnu_free(pg) - XFREE_TARGET;
    int64_t limit = ms_limit_of(pg, a) - mdl_ledger_counted(pg->led);
    return limit >= 0 ? limit : INT64_MAX;
}

int64_t pg_xnu_room(const w_pages *pg, const pg_app *a)
{
    /* a pressure level reaches the app in front as a warning: no room */
    if (*a->fg && pg->x.level > 0)
        return INT64_MIN / 4;
    return ms_limit_of(pg, a) - mdl_ledger_counted(pg->led);
}

/* ------------------------------------------------------ entry points */

/* The common case, nothing for memorystatus to do: no pageout (free over
 * its target), the compressor holding no more than when the level was
 * last set (normal) and not short, available pages over every level.
 * The figures are observed, the warning's room checked: 1.  Else 0, and
 * nothing done.  It runs after every allocation: the app's compressible
 * bytes come from the caller, app_comp within them. */
static int ms_quiet(w_pages *pg, const pg_app *a, int64_t compressible)
{
    const mdl_device *d = pg->dev;
    const w_xnu *x = &pg->x;
    int64_t comp = x->other_comp + x->app_comp + x->succ_comp;
    if (comp > x->level_comp || ms_low_on_space(d, comp))
        return 0;
    int64_t file = ms_file_resident(pg);
    int64_t free = ms_free_of(pg, compressible + mdl_ledger_total(pg->led, MDL_CAT_GPU),
                              x->app_comp, file, ms_pool_of(d, comp));
    if (free < XFREE_TARGET || free + file < d->xnu_soft)
        return 0;
    ms_observe_at(pg, a, free, file);
    return 1;
}

pg_result pg_xnu_check(w_pages *pg, const pg_app *a, int64_t extra)
{
    pg_result res = {0, 0, 0};
    w_xnu *x = &pg->x;
    sync_app(pg, a);
    int64_t compressible = ms_app_compressible(pg), counted = mdl_ledger_counted(pg->led);
    if (x->app_comp > compressible)
        x->app_comp = compressible; /* freed while compressed */
    if (*a->fg && x->app_comp > 0)
        x->app_comp = 0; /* in front again: its pages are decompressed as it runs */
    uint32_t epoch = *a->epoch;
    if (x->seen_epoch != epoch) /* a new life of the app: nothing seen of it yet */
        x->seen_epoch = epoch, x->seen_counted = x->seen_peak = 0;
    int64_t before = x->seen_counted;
    x->seen_counted = counted;
    /* the per-process limit: at once, on the allocating thread */
    if (*a->alive && counted > ms_limit_of(pg, a)) {
        pg->out->jetsam_kills[MDL_JETSAM_PER_PROCESS_LIMIT]++;
        x->crossed = before <= ms_limit_of(pg, a);
        ms_kill_app(pg, a, MDL_JETSAM_PER_PROCESS_LIMIT, 1);
        ms_snap_post(pg, a); /* memorystatus_kill_process_sync posts at once */
        (void)ms_run(pg, a);
        ms_observe(pg, a);
        res.gone = 1;
        return res;
    }
    if (*a->alive && counted > x->seen_peak)
        x->seen_peak = counted;
    if (extra == 0 && x->level == 0 && !x->fc && ms_quiet(pg, a, compressible)) {
        res.warn = 1;
        res.room = pg_xnu_room(pg, a);
        return res;
    }
    pg->spike = extra;
    int gone = ms_run(pg, a);
    pg->spike = 0; /* the other app frees it */
    ms_observe(pg, a);
    if (gone || !(*a->alive && *a->epoch == epoch)) {
        res.gone = 1;
        return res;
    }
    res.warn = 1;
    res.room = pg_xnu_room(pg, a);
    return res;
}

sim_time pg_xnu_refault(w_pages *pg, const pg_app *a, int hot, int64_t hot_bytes, pg_result *res)
{
    sync_app(pg, a);
    int64_t bytes = hot ? read_back(pg, a, hot_bytes) : 0;
    if (bytes == 0)
        return 0;
    sim_time t = (sim_time)((double)bytes * 1e6 / (double)pg->dev->storage_read);
    ms_pageout(pg, a); /* room for the pages read back: their ghosts found, others added */
    pg->host->note(pg->ctx, "refault", NULL, 0, bytes, -1, t);
    ms_pc_look(pg, a, bytes, t);
    *res = pg_xnu_check(pg, a, 0); /* killed as the pages came back: res->gone */
    return t;
}

void pg_xnu_fill(const w_pages *pg, const pg_app *a, trc_event *e)
{
    (void)a;
    int64_t free = pg_xnu_free(pg);
    /* on iOS: low is the critical level, swap_used the compressor's
     * content (uncompressed), thrashing 100 while the phantom cache reports
     * pressure (docs/traces.md) */
    int64_t v[6] = {free > 0 ? free : 0, pg->dev->xnu_critical, ms_file_resident(pg),
                    ms_comp_total(pg), pg->x.fc ? 100 : 0, 0};
    e->has |= TRC_F_PAGES;
    for (int k = 0; k < 6; k++) {
        e->pages[k] = v[k];
        e->pages_has |= 1u << k;
    }
}

/* The app's band now: where memorystatus would find it. */
int pg_xnu_band(const w_pages *pg, const pg_app *a)
{
    (void)pg;
    return ms_app_band(a);
}

/* The other processes, drawn per replication: each group's count (rounded,
 * all groups together at most MDL_OTHERS_MAX) and each one's size; kept
 * in kill order.  Then the phone settles: memorystatus runs once. */
void pg_xnu_setup(w_pages *pg, const pg_app *a, gsl_rng *r)
{
    const mdl_device *d = pg->dev;
    w_xnu *x = &pg->x;
    pg->on = W_PAGES_XNU;
    pg->ds->cached = 0;
    for (unsigned g = 0; g < d->nothers; g++) {
        double c = (double)(mdl_dist_sample(&d->others[g].count, r) + d->others[g].count_add);
        for (int64_t k = 0; k < (int64_t)c && x->nother < MDL_OTHERS_MAX; k++) {
            int64_t s = mdl_dist_sample(&d->others[g].size, r);
            w_other o = {d->others[g].band, 2000u + x->nother, s > 0 ? s : 0, 0};
            uint32_t at = x->nother; /* after every process of its band or lower */
            while (at > 0 && x->other[at - 1].band > o.band)
                at--;
            memmove(&x->other[at + 1], &x->other[at], (x->nother - at) * sizeof o);
            x->other[at] = o;
            x->nother++;
            pg->ds->cached += o.resident;
        }
    }
    pg->pc_cold = d->page_cache - d->page_cache_ws;
    pg->pc_ws = d->page_cache_ws;
    x->pc_start = INT64_MIN / 2;
    x->snap_last = -1;
    x->settling = 1; /* the phone as it was before the session: its reports are not the session's */
    (void)ms_run(pg, a);
    x->settling = 0;
    ms_observe(pg, a);
}
