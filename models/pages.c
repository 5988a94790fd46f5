/* pages.c - the phone's pages in lmkd's PSI mode (docs/model.md "The
 * phone's pages"): where every byte of RAM is at each instant, the
 * kernel's reclaim (kswapd, direct reclaim, zram), refaults, PSI stalls,
 * lmkd's wake-ups with its decision (lmkd.c) and its victims, and the
 * kernel's OOM killer.
 *
 * No event per page or per token: kswapd's progress between two world
 * events is counted in one step when the next one comes (advance); lmkd
 * polls as lmkd does after a PSI event, a few events per second of
 * pressure.  What a user reads of it: docs/model.md. */
#include "filepages.h"

#include <math.h>

#define PAGE 4096
/* lmkd.cpp: PSI_WINDOW_SIZE_MS, PSI_POLL_PERIOD_SHORT_MS, _LONG_MS */
#define WINDOW_US ((sim_time)1000 * 1000)
#define POLL_SHORT_US ((sim_time)10 * 1000)
#define POLL_LONG_US ((sim_time)100 * 1000)
/* how often the page model looks while kswapd runs or the page cache
 * refaults: kswapd's work is continuous, the look is not */
#define TICK_US ((sim_time)100 * 1000)
/* the adj the cached apps other than this one hold, above the app's own
 * 900 once it is cached (the LRU gives 900-999; it is the newest) */
#define CACHED_OTHERS_ADJ 950

static int64_t swap_used(const world *w) { return w->pg.cached_swap + w->pg.succ_swap; }

/* zram's compressed store, in RAM. */
static int64_t zstore(const world *w)
{
    int64_t u = swap_used(w);
    return u == 0 ? 0 : (int64_t)ceil((double)u / w->dev->zram_ratio);
}

void w__pages_parts(const world *w, int64_t part[W_PAGE_PARTS])
{
    if (w->pg.on == W_PAGES_XNU) {
        w__memstat_parts(w, part);
        return;
    }
    part[0] = w->dev->system;
    part[1] = w->dstate.cached + w->dstate.successor;
    part[2] = app_anon(w);
    part[3] = app_file_resident(w) + w->pg.pc_cold + w->pg.pc_ws;
    part[4] = zstore(w);
    part[5] = w->pg.spike;
    part[6] = w__pages_free(w);
}

int64_t w__pages_free(const world *w)
{
    if (w->pg.on == W_PAGES_XNU)
        return w__memstat_free(w);
    const mdl_device *d = w->dev;
    return d->ram - d->system - w->dstate.cached - w->dstate.successor - app_anon(w) -
           app_file_resident(w) - w->pg.pc_cold - w->pg.pc_ws - zstore(w) - w->pg.spike;
}

/* ------------------------------------------------------------- PSI */

/* A stall at now: `some` is any task waiting on memory; `full` every
 * runnable task.  Each trigger counts its stall in a 1 s window and fires
 * once per window at its threshold (the kernel's psi trigger). */
static void lmkd_wake(world *w, mdl_psi_level level, int event);

/* One trigger's window: the stall added at t, 1 when it fires now. */
static int psi_window(sim_time t, sim_time stall, int threshold_ms, sim_time *start,
                      sim_time *acc, int *fired)
{
    if (t - *start >= WINDOW_US) {
        *start = t;
        *acc = 0;
        *fired = 0;
    }
    *acc += stall;
    if (*fired || *acc < (sim_time)threshold_ms * 1000)
        return 0;
    return *fired = 1;
}

static void psi_stall(world *w, sim_time stall, int full)
{
    const mdl_lmkd_props *p = &w->dev->lmkd;
    w_pages *pg = &w->pg;
    if (stall <= 0)
        return;
    w->out->psi_some_us += stall;
    int fire_some = psi_window(now(w), stall, p->psi_partial_stall_ms, &pg->some_start,
                               &pg->some_acc, &pg->some_fired);
    int fire_full = full && psi_window(now(w), stall, p->psi_complete_stall_ms, &pg->full_start,
                                       &pg->full_acc, &pg->full_fired);
    if (fire_full)
        lmkd_wake(w, MDL_PSI_CRITICAL, 1);
    else if (fire_some)
        lmkd_wake(w, MDL_PSI_MEDIUM, 1);
}

/* ---------------------------------------------------------- reclaim */

static void observe_swap(world *w)
{
    if (swap_used(w) > w->out->swap_used_max)
        w->out->swap_used_max = swap_used(w);
}

/* Anonymous bytes that zram could still take, net of its store. */
static int64_t swappable_net(const world *w)
{
    const mdl_device *d = w->dev;
    if (!d->has_zram || d->zram_ratio <= 1.0)
        return 0;
    int64_t room = d->zram_size - swap_used(w);
    int64_t anon = w->dstate.cached + w->dstate.successor; /* never the app's own */
    int64_t gross = room < anon ? room : anon;
    return gross <= 0 ? 0 : (int64_t)((double)gross * (1.0 - 1.0 / d->zram_ratio));
}

/* Swaps out anonymous pages to free `net` bytes: the cached apps' first
 * (the highest adj), then the successor's. */
static int64_t swap_out(world *w, int64_t net)
{
    double keep = 1.0 - 1.0 / w->dev->zram_ratio;
    int64_t gross = (int64_t)ceil((double)net / keep);
    int64_t room = w->dev->zram_size - swap_used(w);
    if (gross > room)
        gross = room;
    int64_t a = gross < w->dstate.cached ? gross : w->dstate.cached;
    w->dstate.cached -= a;
    w->pg.cached_swap += a;
    int64_t b = gross - a < w->dstate.successor ? gross - a : w->dstate.successor;
    w->dstate.successor -= b;
    w->pg.succ_swap += b;
    return a + b;
}

/* Reclaims about `want` bytes, as shrink_node does: the inactive (cold)
 * file pages first, then anonymous pages into zram and working-set file
 * pages, split by swappiness (get_scan_count).  Counts the scan. */
static void reclaim(world *w, int64_t want, int direct)
{
    w_pages *pg = &w->pg;
    int64_t scanned = 0;
    int64_t take = want < pg->pc_cold ? want : pg->pc_cold;
    pg->pc_cold -= take;
    scanned += take;
    want -= take;
    take = want < app_cold(w) ? want : app_cold(w);
    pg->app_cold_gone += take;
    scanned += take;
    want -= take;
    if (want > 0) {
        int64_t anon_cap = swappable_net(w);
        int64_t ws_cap = app_hot_resident(w) + pg->pc_ws;
        int64_t anon = want * w->dev->swappiness / 200, ws = want - anon;
        if (anon > anon_cap) {
            ws += anon - anon_cap;
            anon = anon_cap;
        }
        if (ws > ws_cap) {
            int64_t more = ws - ws_cap;
            anon += more < anon_cap - anon ? more : anon_cap - anon;
            ws = ws_cap;
        }
        if (anon > 0)
            scanned += swap_out(w, anon);
        evict_ws(w, ws);
        scanned += ws;
    }
    if (direct)
        pg->pgscan_direct += scanned;
    else
        pg->pgscan_kswapd += scanned;
    observe_swap(w);
}

/* What reclaim could still free. */
static int64_t reclaimable(const world *w)
{
    return cold_file(w) + swappable_net(w) + app_hot_resident(w) + w->pg.pc_ws;
}

/* ---------------------------------------------------------- victims */

/* One cached app, the oldest (highest adj): its resident anon and its zram;
 * `why`: lmkd's reason, or "kernel_oom". */
static void kill_cached(world *w, const char *why)
{
    w_pages *pg = &w->pg;
    /* the note first: the pages as they were when the kill was decided */
    w__emit_pages(w, "cached_app_killed", why, 0, 0, MDL_ADJ_MAX - 1, 0);
    int64_t res = w->dstate.cached / pg->ncached, sw = pg->cached_swap / pg->ncached;
    if (pg->ncached == 1) {
        res = w->dstate.cached;
        sw = pg->cached_swap;
    }
    w->dstate.cached -= res;
    pg->cached_swap -= sw;
    pg->ncached--;
    w->out->cached_kills++;
}

static int other_adj(const world *w);

static void kill_successor(world *w, const char *why)
{
    w__emit_pages(w, w->path.bg ? "front_app_killed" : "previous_app_killed", why, 0, 0,
                  other_adj(w), 0);
    w->dstate.successor = 0;
    w->pg.succ_swap = 0;
    w->out->successor_kills++;
}

/* The other app's adj: in front (0) while the app is in the background,
 * the previous app (700) once the user came back. */
static int other_adj(const world *w) { return w->path.bg ? 0 : MDL_ADJ_PREVIOUS; }

static int64_t other_app(const world *w) { return w->dstate.successor + w->pg.succ_swap; }

/* lmkd's kill line for one of the app's processes (main: the main one
 * while the model runs in a service process), as lmkd.cpp's
 * kill_one_process logs it; the pid and uid are the simulator's own
 * numbering (docs/traces.md "log"). */
static void app_kill_line(world *w, const mdl_lmkd_decision *dec, int main)
{
    int64_t anon = app_anon(w), file = app_file_resident(w);
    if (w->svc) { /* each process its own: the main one holds its baseline and holds */
        int64_t m = w__main_anon(w);
        anon = main ? m : anon - m;
        file = main ? 0 : file;
    }
    if (!w->svc) {
        snprintf(w->pg.log, sizeof w->pg.log,
                 "lowmemorykiller: Kill '%.40s' (%u), uid 10000, oom_score_adj %d to free %lldkB "
                 "rss, 0kB swap; reason: %.85s", w->cand->id, 1000u + w->epoch, w__app_adj(w),
                 (long long)((anon + file) / 1024), dec->description);
        return;
    }
    char name[TRC_TEXT_MAX];
    w__process_name(w, main, name);
    snprintf(w->pg.log, sizeof w->pg.log,
             "lowmemorykiller: Kill '%s' (%u), uid 10000, oom_score_adj %d to free "
             "%lldkB rss, 0kB swap; reason: %.64s", name, 1000u + w->epoch + (main ? 500u : 0u),
             main ? w__main_adj(w) : w__app_adj(w), (long long)((anon + file) / 1024),
             dec->description);
}

/* The reclaim kill of the app's process at adj: the main process when it
 * has it (at one adj lmkd takes the process registered there first, and
 * the client's adj reaches lmkd before its service's), else the one the
 * model runs in. */
static void kill_app(world *w, int adj, const mdl_lmkd_decision *dec)
{
    int main = w__victim_is_main(w, adj);
    w->proc.lmkd = dec->reason;
    app_kill_line(w, dec, main);
    w__kill_process(w, main, w->proc.fg ? MDL_EXIT_LOW_MEMORY : MDL_EXIT_SYSTEM_RECLAIM,
                    w->last_stage);
}

/* The next adj under `adj` at which lmkd finds one of the app's processes
 * or the other app, -1 when none is left. */
static int next_adj(int adj, int a, int b, int c)
{
    int best = -1;
    if (a < adj && a > best)
        best = a;
    if (b < adj && b > best)
        best = b;
    if (c < adj && c > best)
        best = c;
    return best;
}

/* find_and_kill_process: from adj 1000 down to min_adj, the first process
 * found: the cached apps (above the app's 900), the app at 900 or 700, the
 * previous app at 700, the app at 250 while a job of an owner runs in the
 * background, the model's service process at 100 while the app is in
 * front, and at adj 0 the one in front (the app, or the other app while
 * the app is in the background).  At one adj the app's process goes
 * before the other app.  1 when one was killed, 2 when it was the app's. */
static int lmkd_kill(world *w, int min_adj, const mdl_lmkd_decision *dec)
{
    mdl_lmkd_reason why = dec->reason;
    int app = w->proc.alive ? w__app_adj(w) : -1;
    int main = w->svc && w->main.alive ? w__main_adj(w) : -1;
    int other = other_app(w) > 0 ? other_adj(w) : -1;
    if (w->pg.ncached > 0 && min_adj <= MDL_ADJ_MAX - 1) { /* the oldest at 999 */
        kill_cached(w, mdl_lmkd_reason_name(why));
        w->out->lmkd_kills_of_others++;
        return 1;
    }
    for (int adj = next_adj(MDL_ADJ_MAX, app, main, other); adj >= 0 && adj >= min_adj;
         adj = next_adj(adj, app, main, other)) {
        if (app == adj || main == adj) {
            kill_app(w, adj, dec);
            return 2;
        }
        kill_successor(w, mdl_lmkd_reason_name(why));
        w->out->lmkd_kills_of_others++;
        return 1;
    }
    return 0;
}

/* The kernel's OOM killer (oom_badness): the largest rss + swap plus
 * adj x totalpages / 1000.  1 when one was killed, 2 the app's, 0 none. */
static int kernel_oom(world *w)
{
    const mdl_device *d = w->dev;
    double total = (double)(d->ram + (d->has_zram ? d->zram_size : 0)) / 1000.0;
    double best = -1.0;
    int who = 0; /* 1 a cached app, 2 the app (the model's process), 3 the successor, 4 the
                    main process (svc) */
    if (w->pg.ncached > 0) {
        best = (double)(w->dstate.cached + w->pg.cached_swap) / w->pg.ncached +
               CACHED_OTHERS_ADJ * total;
        who = 1;
    }
    int64_t main_anon = w->svc && w->main.alive ? w__main_anon(w) : 0;
    if (w->proc.alive) {
        double app = (double)(app_anon(w) - main_anon + app_file_resident(w)) +
                     w__app_adj(w) * total;
        if (app > best) {
            best = app;
            who = 2;
        }
    }
    if (w->svc && w->main.alive) {
        double app = (double)(w->proc.alive ? main_anon : app_anon(w)) + w__main_adj(w) * total;
        if (app > best) {
            best = app;
            who = 4;
        }
    }
    if (other_app(w) > 0 && (double)other_app(w) + other_adj(w) * total > best)
        who = 3;
    w->out->kernel_oom_kills += who != 0;
    if (who == 1)
        kill_cached(w, "kernel_oom");
    else if (who == 3)
        kill_successor(w, "kernel_oom");
    else if (who == 2 || who == 4) {
        w->proc.lmkd = MDL_LMKD_NONE;
        w->proc.kernel_oom = 1;
        mdl_exit why = w->proc.fg ? MDL_EXIT_LOW_MEMORY : MDL_EXIT_SYSTEM_RECLAIM;
        if (who == 4)
            w__main_die(w, why, w->last_stage);
        else
            w__die(w, w__svc_class(w, why), w->last_stage);
    }
    return who == 2 || who == 4 ? 2 : who != 0;
}

/* ------------------------------------------------------------ lmkd */

static void lmkd_poll(sim_engine *e, void *ctx, uint64_t arg);

/* The figures lmkd reads, in pages. */
static void lmkd_mem(const world *w, mdl_lmkd_mem *m)
{
    const mdl_device *d = w->dev;
    int64_t free = w__pages_free(w);
    int64_t cold = cold_file(w), active = w->pg.pc_ws + app_hot_resident(w);
    memset(m, 0, sizeof *m);
    m->free = free / PAGE;
    m->swap_total = d->has_zram ? d->zram_size / PAGE : 0;
    m->swap_free = m->swap_total - swap_used(w) / PAGE;
    m->inactive_file = m->nr_inactive_file = cold / PAGE;
    m->nr_active_file = active / PAGE;
    m->active_anon = (w->dstate.cached + w->dstate.successor + app_anon(w)) / PAGE;
    m->refault = w->pg.refault / PAGE;
    m->pgscan_kswapd = w->pg.pgscan_kswapd / PAGE;
    m->pgscan_direct = w->pg.pgscan_direct / PAGE;
    m->pgrefill = w->pg.pgrefill / PAGE;
}

/* One wake-up of lmkd: its decision, the kill it asks for, its polling. */
static void lmkd_wake(world *w, mdl_psi_level level, int event)
{
    const mdl_device *d = w->dev;
    w_pages *pg = &w->pg;
    mdl_lmkd_mem m;
    lmkd_mem(w, &m);
    mdl_lmkd_wake wk;
    memset(&wk, 0, sizeof wk);
    wk.now_ms = now(w) / 1000;
    wk.level = event ? level : pg->level;
    wk.event = event;
    wk.has_psi = 1;
    sim_time full = now(w) - pg->full_start < WINDOW_US ? pg->full_acc : 0;
    wk.full_avg10 = full >= WINDOW_US ? 100.0 : 100.0 * (double)full / (double)WINDOW_US;
    wk.wmark_min = d->wmark_min / PAGE;
    wk.wmark_low = d->wmark_low / PAGE;
    wk.wmark_high = d->wmark_high / PAGE;
    wk.page_kb = PAGE / 1024;
    if (event)
        pg->level = level;
    mdl_lmkd_decision dec;
    mdl_lmkd_decide(&pg->lmkd, &d->lmkd, &wk, &m, &dec);
    w->out->lmkd_wakeups++;
    w->out->lmkd_decided[dec.reason]++;
    pg->thrashing = dec.thrashing;
    if (dec.thrashing > w->out->thrashing_max)
        w->out->thrashing_max = dec.thrashing;
    int killed = 0;
    if (dec.reason != MDL_LMKD_NONE) {
        killed = lmkd_kill(w, dec.min_score_adj, &dec);
        if (killed)
            mdl_lmkd_killed(&pg->lmkd, &d->lmkd, &dec);
    }
    /* mp_event_psi's polling: restart the window on an event, a kill or
     * direct reclaim; poll fast while killing or with swap low */
    if (event || killed || dec.reclaim == MDL_RECLAIM_DIRECT)
        pg->poll_until = now(w) + WINDOW_US;
    sim_time gap = killed || dec.swap_is_low ? POLL_SHORT_US : POLL_LONG_US;
    if (!pg->poll_pending && !w->ending && now(w) <= pg->poll_until &&
        now(w) + gap < w->cell->horizon &&
        w__at(w, now(w) + gap, PRIO_PRESSURE, lmkd_poll, 0, NULL) == SIM_OK)
        pg->poll_pending = 1;
}

/* ---------------------------------------------------------- the clock */

/* The figures the results read, after every change. */
static void observe_free(world *w, int64_t free)
{
    int64_t room = free - w->dev->wmark_low;
    if (room < w->out->min_free)
        w->out->min_free = w->out->min_margin = room; /* the margin, in psi mode */
    observe_swap(w);
}

static void observe(world *w) { observe_free(w, w__pages_free(w)); }

/* The app's weights dropped since the last such note: one note per step. */
static void note_dropped(world *w)
{
    if (w->pg.dropped > 0 && w->proc.alive)
        w__emit_pages(w, "weights_dropped", NULL, w->pg.dropped, 0, -1, 0);
    w->pg.dropped = 0;
}

static void keep_ticking(world *w);

/* kswapd's work since the last look, and the page cache's own refaults:
 * the other apps read their working set back as fast as storage allows,
 * into what is free above min. */
static void advance(world *w)
{
    const mdl_device *d = w->dev;
    w_pages *pg = &w->pg;
    sim_time dt = now(w) - pg->t;
    pg->t = now(w);
    sync_app(w);
    if (dt <= 0 || (!pg->kswapd && pg->pc_ws == d->page_cache_ws))
        return; /* kswapd asleep, the page cache whole: nothing moved */
    if (pg->kswapd) {
        int64_t need = d->wmark_high - w__pages_free(w);
        double budget = (double)d->reclaim_rate * (double)dt / 1e6;
        if (need > 0)
            reclaim(w, (double)need < budget ? need : (int64_t)budget, 0);
        if (w__pages_free(w) >= d->wmark_high)
            pg->kswapd = 0;
    }
    int64_t gone = d->page_cache_ws - pg->pc_ws;
    if (gone > 0) {
        int64_t can = (int64_t)((double)d->storage_read * (double)dt / 1e6);
        int64_t room = w__pages_free(w) - d->wmark_min;
        int64_t r = gone < can ? gone : can;
        if (r > room)
            r = room > 0 ? room : 0;
        pg->pc_ws += r;
        pg->refault += r;
        psi_stall(w, (sim_time)((double)r * 1e6 / (double)d->storage_read), 0);
    }
    if (w__pages_free(w) < d->wmark_low)
        pg->kswapd = 1;
    keep_ticking(w);
}

static void kswapd_tick(sim_engine *e, void *ctx, uint64_t arg);

/* While reclaim or refaults go on, the page model looks every TICK_US. */
static void keep_ticking(world *w)
{
    w_pages *pg = &w->pg;
    if (pg->tick_pending || w->ending || !(pg->kswapd || pg->pc_ws < w->dev->page_cache_ws))
        return;
    sim_time t = now(w) + TICK_US;
    if (t < w->cell->horizon && w__at(w, t, PRIO_PRESSURE, kswapd_tick, 0, NULL) == SIM_OK)
        pg->tick_pending = 1;
}

static void kswapd_tick(sim_engine *e, void *ctx, uint64_t arg)
{
    (void)e;
    (void)arg;
    world *w = ctx;
    w->pg.tick_pending = 0;
    w->out->page_events++;
    if (w->ending)
        return;
    advance(w);
    observe(w);
    note_dropped(w);
    keep_ticking(w);
}

static void lmkd_poll(sim_engine *e, void *ctx, uint64_t arg)
{
    (void)e;
    (void)arg;
    world *w = ctx;
    w->pg.poll_pending = 0;
    w->out->page_events++;
    if (w->ending)
        return;
    advance(w);
    observe(w);
    lmkd_wake(w, w->pg.level, 0);
}

/* An allocation was made (the app's, or another app's spike): below min,
 * the allocating task reclaims directly, and what cannot be reclaimed is
 * the OOM killer's.  `own`: the app allocated (its stall is its own and
 * counts as full in the foreground). */
/* The allocating process lives on: the one the model runs in; or, while
 * the model's service is down (svc), the app's main process, the only one
 * that can allocate then. */
static int lives(const world *w, uint32_t epoch, int svc_down)
{
    return svc_down ? w->main.alive : still(w, epoch);
}

static w_fate allocated(world *w, int own)
{
    const mdl_device *d = w->dev;
    uint32_t epoch = w->epoch;
    int svc_down = w->svc && !w->proc.alive;
    int64_t free = w__pages_free(w);
    if (free >= d->wmark_low) { /* the common case: nothing for the kernel to do */
        observe_free(w, free);
        return W_LIVES;
    }
    if (free < d->wmark_min) {
        int64_t want = d->wmark_min - free;
        reclaim(w, want, 1);
        sim_time stall = (sim_time)((double)want * 1e6 / (double)d->reclaim_rate);
        if (own)
            w->pg.stall += stall;
        psi_stall(w, stall, own && w->proc.fg);
        if (!lives(w, epoch, svc_down) && own)
            return W_GONE;
    }
    /* the allocation cannot be met: the OOM killer, until it can */
    while (w__pages_free(w) < 0 || (w__pages_free(w) < d->wmark_min && reclaimable(w) == 0)) {
        int who = kernel_oom(w);
        if (who == 0)
            break;
        if (who == 2 && own && !lives(w, epoch, svc_down))
            return W_GONE;
    }
    note_dropped(w);
    /* another app's spike that nothing could make room for is refused in part */
    if (w->pg.spike > 0 && w__pages_free(w) < 0)
        w->pg.spike += w__pages_free(w);
    if (w__pages_free(w) < d->wmark_low)
        w->pg.kswapd = 1;
    observe(w);
    keep_ticking(w);
    return own && !lives(w, epoch, svc_down) ? W_GONE : W_LIVES;
}

void w__pages_fill(const world *w, trc_event *e)
{
    if (w->pg.on == W_PAGES_XNU) {
        w__memstat_fill(w, e);
        return;
    }
    const mdl_device *d = w->dev;
    int64_t free = w__pages_free(w);
    int64_t active = w->pg.pc_ws + app_hot_resident(w);
    int64_t v[6] = {free > 0 ? free : 0,
                    d->wmark_low,
                    cold_file(w) + (active > 0 ? active : 0),
                    swap_used(w),
                    w->pg.thrashing > 0 ? w->pg.thrashing : 0,
                    now(w) - w->pg.some_start < WINDOW_US ? w->pg.some_acc : 0};
    e->has |= TRC_F_PAGES;
    for (int k = 0; k < 6; k++) {
        e->pages[k] = v[k];
        e->pages_has |= 1u << k;
    }
}

/* ------------------------------------------------------ entry points */

#if defined(__GNUC__)
__attribute__((always_inline))
#endif
static inline w_fate pages_check(world *w, int64_t extra, int own);

/* A kill check under the page model (charge.c's w__kill_check): an
 * allocation was made, by the app (own) or by another app (a spike of
 * `extra` bytes, held only for the check). */
w_fate w__pages_check(world *w, int64_t extra, int own)
{
    if (w->proc.gen_growing == 0)
        return pages_check(w, extra, own);
    w__gen_sync(w); /* the KV written so far, before the kernel reads memory */
    uint32_t epoch = w->epoch;
    if (pages_check(w, extra, own) != W_LIVES || !still(w, epoch))
        return W_GONE;
    w__gen_replan(w); /* the KV's next line moved */
    return W_LIVES;
}

/* Room for growth before the kernel does something: free pages over the
 * low watermark (kswapd wakes under it), a soft line; none once under it. */
int64_t w__pages_growth_room(const world *w, int64_t *soft)
{
    *soft = w__pages_free(w) - w->dev->wmark_low;
    return INT64_MAX;
}

static inline w_fate pages_check(world *w, int64_t extra, int own)
{
    if (w->pg.on == W_PAGES_XNU)
        return w__memstat_check(w, extra, own);
    uint32_t epoch = w->epoch;
    int svc_down = w->svc && !w->proc.alive;
    advance(w);
    if (extra > 0) {
        w->pg.spike = extra;
        (void)allocated(w, 0);
        w->pg.spike = 0; /* the other app frees it (what did not fit was refused) */
        observe(w);
        return lives(w, epoch, svc_down) ? W_LIVES : W_GONE;
    }
    int64_t free = w__pages_free(w);
    if (free >= w->dev->wmark_low) { /* the common case: nothing for the kernel to do */
        observe_free(w, free);
        w__warning_room(w, free - w->dev->wmark_low + cold_file(w));
        return W_LIVES;
    }
    if (allocated(w, own) != W_LIVES || !lives(w, epoch, svc_down))
        return W_GONE;
    w__warning_room(w, w__pages_room(w));
    return W_LIVES;
}

/* The app's stall since it was last taken: added to its running stage. */
sim_time w__pages_take_stall(world *w)
{
    sim_time s = w->pg.stall;
    w->pg.stall = 0;
    return s;
}

/* An inference on part p reads its weights: the pages of them reclaim
 * dropped are read back first (a refault each), at storage speed, and
 * need memory again.  The time it takes (the app's memory stall). */
sim_time w__pages_refault(world *w, const part_rt *p)
{
    if (!w->pg.on || !p->hot)
        return 0;
    if (w->pg.on == W_PAGES_XNU)
        return w__memstat_refault(w, p);
    advance(w);
    int64_t bytes = read_back(w, p);
    if (bytes == 0)
        return 0;
    sim_time t = (sim_time)((double)bytes * 1e6 / (double)w->dev->storage_read);
    w__emit_pages(w, "refault", NULL, 0, bytes, -1, t);
    /* each page is allocated (reclaiming if need be), then read */
    uint32_t epoch = w->epoch;
    if (allocated(w, 1) == W_LIVES && still(w, epoch))
        psi_stall(w, t, w->proc.fg);
    return t;
}

/* The headroom the memory warnings read: free pages over low, and the
 * cold file pages reclaim would drop first. */
int64_t w__pages_room(const world *w)
{
    if (w->pg.on == W_PAGES_XNU)
        return w__memstat_room(w);
    return w__pages_free(w) - w->dev->wmark_low + cold_file(w);
}

/* A new app the user switches to replaces the previous one (its pages
 * with it: the model holds one other app in front or just left). */
void w__pages_successor_left(world *w)
{
    w->pg.succ_swap = 0;
    w__memstat_successor_left(w);
}

void w__pages_setup(world *w)
{
    const mdl_device *d = w->dev;
    /* w->pg is zero: w__open cleared the world */
    w->out->min_free = INT64_MAX;
    if (d->rule == MDL_KILL_JETSAM && d->xnu_pages) {
        w__memstat_setup(w);
        return;
    }
    if (d->rule != MDL_KILL_LMK || !d->lmk_psi)
        return;
    w->pg.on = W_PAGES_LMKD;
    int64_t c = w->dstate.cached;
    w->pg.ncached = c <= 0 ? 0 : (uint32_t)((c + d->cached_app_size - 1) / d->cached_app_size);
    w->pg.pc_cold = d->page_cache - d->page_cache_ws;
    w->pg.pc_ws = d->page_cache_ws;
    w->pg.some_start = w->pg.full_start = -WINDOW_US;
    w->pg.poll_until = -1;
    mdl_lmkd_mem m;
    lmkd_mem(w, &m);
    mdl_lmkd_state_init(&w->pg.lmkd, &d->lmkd, &m, 0);
    if (w__pages_free(w) < d->wmark_low)
        w->pg.kswapd = 1;
    observe(w);
    keep_ticking(w);
}

unsigned mdl_slowdown_bucket(double ratio)
{
    if (!(ratio > 1.0))
        return 0;
    double k = floor(log2(ratio) * 8.0);
    return k >= MDL_SLOWDOWN_BUCKETS - 1 ? MDL_SLOWDOWN_BUCKETS - 1 : (unsigned)k;
}

double mdl_slowdown_middle(unsigned bucket) { return exp2(((double)bucket + 0.5) / 8.0); }

unsigned mdl_counted_bucket(int64_t bytes)
{
    /* the same 1/8-octave buckets, of MiB (at most 2^16 MiB apart from the last) */
    return mdl_slowdown_bucket((double)bytes / 1048576.0);
}

double mdl_counted_middle(unsigned bucket) { return mdl_slowdown_middle(bucket) * 1048576.0; }

/* An inference that would take `base` takes `took`. */
void w__pages_inference(world *w, sim_time base, sim_time took)
{
    double ratio = base > 0 ? (double)took / (double)base : 1.0;
    w->out->slowdown[mdl_slowdown_bucket(ratio)]++;
}
