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
#include <string.h>

#define PAGE 4096
/* lmkd.cpp: PSI_WINDOW_SIZE_MS, PSI_POLL_PERIOD_SHORT_MS, _LONG_MS */
#define WINDOW_US ((sim_time)1000 * 1000)
#define POLL_SHORT_US ((sim_time)10 * 1000)
#define POLL_LONG_US ((sim_time)100 * 1000)
/* how often the page model looks while kswapd runs or the page cache
 * refaults: kswapd's work is continuous, the look is not */
#define TICK_US ((sim_time)100 * 1000)

/* What allocated() finds of the allocating process. */
enum { LIVES = 0, GONE = 1 };

static int64_t swap_used(const w_pages *pg) { return pg->cached_swap + pg->succ_swap; }

/* zram's compressed store, in RAM. */
static int64_t zstore(const w_pages *pg)
{
    int64_t u = swap_used(pg);
    return u == 0 ? 0 : (int64_t)ceil((double)u / pg->dev->zram_ratio);
}

void pg_parts(const w_pages *pg, const pg_app *a, int64_t part[W_PAGE_PARTS])
{
    if (pg->on == W_PAGES_XNU) {
        pg_xnu_parts(pg, a, part);
        return;
    }
    part[0] = pg->dev->system;
    part[1] = pg->ds->cached + pg->ds->successor;
    part[2] = app_anon(pg);
    part[3] = app_file_resident(pg) + pg->pc_cold + pg->pc_ws;
    part[4] = zstore(pg);
    part[5] = pg->spike;
    part[6] = pg_free(pg);
}

int64_t pg_free(const w_pages *pg)
{
    if (pg->on == W_PAGES_XNU)
        return pg_xnu_free(pg);
    const mdl_device *d = pg->dev;
    return d->ram - d->system - pg->ds->cached - pg->ds->successor - app_anon(pg) -
           app_file_resident(pg) - pg->pc_cold - pg->pc_ws - zstore(pg) - pg->spike;
}

/* ------------------------------------------------------------- PSI */

/* A stall at now: `some` is any task waiting on memory; `full` every
 * runnable task.  lmkd's triggers are the kernel's (kernel/sched/psi.c,
 * Linux 6.1): the growth of the stall over a sliding 1 s window.  The
 * kernel updates them at its polls, 100 ms apart, as the stall goes; the
 * model updates them once per stall, at the stall's end, when the kernel
 * has seen all of it, and lmkd hears an event at once (the stall is the
 * model's instant). */
static void lmkd_wake(w_pages *pg, const pg_app *a, mdl_psi_level level, int event);

void pg_psi_reset(pg_psi_trigger *t, sim_time now, sim_time total)
{
    t->start = now;
    t->start_value = total;
    t->prev_growth = 0;
}

/* window_update: the growth since the window began, plus the window
 * before's growth in proportion to what is left of this one (the kernel's
 * approximation of a sliding window); a window over restarts at now. */
static sim_time window_update(pg_psi_trigger *t, sim_time now, sim_time total, sim_time window)
{
    sim_time elapsed = now - t->start, growth = total - t->start_value;
    if (elapsed > window) {
        t->start = now;
        t->start_value = total;
        t->prev_growth = growth;
        return growth;
    }
    return growth + t->prev_growth * (window - elapsed) / window;
}

int pg_psi_update(pg_psi_trigger *t, sim_time now, sim_time total, int new_stall,
                  sim_time threshold, sim_time window)
{
    if (!new_stall && !t->pending)
        return 0;
    if (new_stall) {
        sim_time growth = window_update(t, now, total, window);
        if (!t->pending) {
            if (growth < threshold)
                return 0;
            t->pending = 1;
        }
    }
    if (now < t->last_event + window)
        return 0; /* one event per window: held */
    t->last_event = now;
    t->pending = 0;
    return 1;
}

sim_time pg_psi_growth(const pg_psi_trigger *t, sim_time now, sim_time total, sim_time window)
{
    sim_time elapsed = now - t->start, growth = total - t->start_value;
    if (elapsed < 0) /* the window was moved by a stall that ends later */
        elapsed = 0;
    if (elapsed > window) /* the whole stall since the start, spread over it */
        return growth * window / elapsed;
    return growth + t->prev_growth * (window - elapsed) / window;
}

/* A held event is signalled at the first poll after its trigger's window:
 * one look for the earlier of the two. */
static void psi_look_later(w_pages *pg, const pg_app *a)
{
    sim_time at = -1;
    if (pg->some.pending)
        at = pg->some.last_event + WINDOW_US;
    if (pg->full.pending && (at < 0 || pg->full.last_event + WINDOW_US < at))
        at = pg->full.last_event + WINDOW_US;
    if (at < 0 || (pg->psi_look_at >= 0 && pg->psi_look_at <= at) || *a->ending)
        return; /* none held, or a look comes in time */
    if (pg->host->at(pg->ctx, at, PG_PSI))
        pg->psi_look_at = at;
}

/* The triggers updated at u (a stall's end, or a held event's poll): lmkd
 * hears the critical event when `full` signals, else the medium one when
 * `some` does. */
static void psi_signal(w_pages *pg, const pg_app *a, sim_time u, int new_some, int new_full)
{
    const mdl_lmkd_props *p = &pg->dev->lmkd;
    int fire_some = pg_psi_update(&pg->some, u, pg->some_total, new_some,
                                  (sim_time)p->psi_partial_stall_ms * 1000, WINDOW_US);
    int fire_full = pg_psi_update(&pg->full, u, pg->full_total, new_full,
                                  (sim_time)p->psi_complete_stall_ms * 1000, WINDOW_US);
    if (fire_full)
        lmkd_wake(pg, a, MDL_PSI_CRITICAL, 1);
    else if (fire_some)
        lmkd_wake(pg, a, MDL_PSI_MEDIUM, 1);
    psi_look_later(pg, a);
}

static void psi_stall(w_pages *pg, const pg_app *a, sim_time stall, int full)
{
    if (stall <= 0)
        return;
    sim_time now = sim_now(a->e);
    pg->out->psi_some_us += stall;
    /* psi_poll_work: a stall after a window without one starts the polling
     * anew, the windows from the totals then (init_triggers); the polling
     * goes on a window past the last change */
    if (now > pg->psi_until) {
        pg_psi_reset(&pg->some, now, pg->some_total);
        pg_psi_reset(&pg->full, now, pg->full_total);
        pg->psi_seen = now;
    }
    /* the kernel's update that has seen the whole stall, never before one
     * already made (stalls at one instant are taken as overlapping) */
    sim_time u = now + stall > pg->psi_seen ? now + stall : pg->psi_seen;
    pg->psi_seen = u;
    pg->psi_until = u + WINDOW_US;
    pg->some_total += stall;
    if (full)
        pg->full_total += stall;
    psi_signal(pg, a, u, 1, full);
}

/* ---------------------------------------------------------- reclaim */

static void observe_swap(w_pages *pg)
{
    if (swap_used(pg) > pg->out->swap_used_max)
        pg->out->swap_used_max = swap_used(pg);
}

/* Anonymous bytes that zram could still take, net of its store. */
static int64_t swappable_net(const w_pages *pg)
{
    const mdl_device *d = pg->dev;
    if (!d->has_zram || d->zram_ratio <= 1.0)
        return 0;
    int64_t room = d->zram_size - swap_used(pg);
    int64_t anon = pg->ds->cached + pg->ds->successor; /* never the app's own */
    int64_t gross = room < anon ? room : anon;
    return gross <= 0 ? 0 : (int64_t)((double)gross * (1.0 - 1.0 / d->zram_ratio));
}

/* Swaps out anonymous pages to free `net` bytes: the cached apps' first
 * (the highest adj), then the successor's. */
static int64_t swap_out(w_pages *pg, int64_t net)
{
    double keep = 1.0 - 1.0 / pg->dev->zram_ratio;
    int64_t gross = (int64_t)ceil((double)net / keep);
    int64_t room = pg->dev->zram_size - swap_used(pg);
    if (gross > room)
        gross = room;
    int64_t c = gross < pg->ds->cached ? gross : pg->ds->cached;
    pg->ds->cached -= c;
    pg->cached_swap += c;
    int64_t b = gross - c < pg->ds->successor ? gross - c : pg->ds->successor;
    pg->ds->successor -= b;
    pg->succ_swap += b;
    return c + b;
}

/* Reclaims about `want` bytes, as shrink_node does: the inactive (cold)
 * file pages first, then anonymous pages into zram and working-set file
 * pages, split by swappiness (get_scan_count).  Counts the scan. */
static void reclaim(w_pages *pg, const pg_app *a, int64_t want, int direct)
{
    int64_t scanned = 0;
    int64_t take = want < pg->pc_cold ? want : pg->pc_cold;
    pg->pc_cold -= take;
    scanned += take;
    want -= take;
    take = want < app_cold(pg, a) ? want : app_cold(pg, a);
    pg->app_cold_gone += take;
    scanned += take;
    want -= take;
    if (want > 0) {
        int64_t anon_cap = swappable_net(pg);
        int64_t ws_cap = app_hot_resident(pg, a) + pg->pc_ws;
        int64_t anon = want * pg->dev->swappiness / 200, ws = want - anon;
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
            scanned += swap_out(pg, anon);
        evict_ws(pg, a, ws);
        scanned += ws;
    }
    if (direct)
        pg->pgscan_direct += scanned;
    else
        pg->pgscan_kswapd += scanned;
    observe_swap(pg);
}

/* What reclaim could still free. */
static int64_t reclaimable(const w_pages *pg, const pg_app *a)
{
    return cold_file(pg, a) + swappable_net(pg) + app_hot_resident(pg, a) + pg->pc_ws;
}

/* ---------------------------------------------------------- victims */

/* One cached app, the oldest (highest adj): its resident anon and its zram;
 * `why`: lmkd's reason, or "kernel_oom". */
static void kill_cached(w_pages *pg, const char *why)
{
    /* the note first: the pages as they were when the kill was decided */
    pg->host->note(pg->ctx, "cached_app_killed", why, 0, 0, MDL_ADJ_MAX - 1, 0);
    int64_t res = pg->ds->cached / pg->ncached, sw = pg->cached_swap / pg->ncached;
    if (pg->ncached == 1) {
        res = pg->ds->cached;
        sw = pg->cached_swap;
    }
    pg->ds->cached -= res;
    pg->cached_swap -= sw;
    pg->ncached--;
    pg->out->cached_kills++;
}

static int other_adj(const pg_app *a);

static void kill_successor(w_pages *pg, const pg_app *a, const char *why)
{
    pg->host->note(pg->ctx, *a->bg ? "front_app_killed" : "previous_app_killed", why, 0, 0,
                   other_adj(a), 0);
    pg->ds->successor = 0;
    pg->succ_swap = 0;
    pg->out->successor_kills++;
}

/* The other app's adj: in front (0) while the app is in the background,
 * the previous app (700) once the user came back. */
static int other_adj(const pg_app *a) { return *a->bg ? 0 : MDL_ADJ_PREVIOUS; }

static int64_t other_app(const w_pages *pg) { return pg->ds->successor + pg->succ_swap; }

/* The reclaim kill of the app's process at adj (lmkd): the world finds
 * which of its processes holds the adj, kills it and writes lmkd's line. */
static void kill_app(w_pages *pg, int adj, const mdl_lmkd_decision *dec)
{
    pg_kill k = {PG_BY_LMKD, adj, 0, dec, MDL_JETSAM_NONE, 0};
    pg->host->kill(pg->ctx, &k);
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
static int lmkd_kill(w_pages *pg, const pg_app *a, int min_adj, const mdl_lmkd_decision *dec)
{
    mdl_lmkd_reason why = dec->reason;
    int app = *a->alive ? pg->host->adj(pg->ctx, 0) : -1;
    int main = *a->svc && *a->main_alive ? pg->host->adj(pg->ctx, 1) : -1;
    int other = other_app(pg) > 0 ? other_adj(a) : -1;
    if (pg->ncached > 0 && min_adj <= MDL_ADJ_MAX - 1) { /* the oldest at 999 */
        kill_cached(pg, mdl_lmkd_reason_name(why));
        pg->out->lmkd_kills_of_others++;
        return 1;
    }
    for (int adj = next_adj(MDL_ADJ_MAX, app, main, other); adj >= 0 && adj >= min_adj;
         adj = next_adj(adj, app, main, other)) {
        if (app == adj || main == adj) {
            kill_app(pg, adj, dec);
            return 2;
        }
        kill_successor(pg, a, mdl_lmkd_reason_name(why));
        pg->out->lmkd_kills_of_others++;
        return 1;
    }
    return 0;
}

/* oom_badness (mm/oom_kill.c, Linux 6.1), in pages: the resident and
 * swapped pages, the page tables mapping them (one 4 KiB table per 512
 * pages: dense mappings, an assumption), plus adj x (totalpages / 1000). */
static int64_t badness(int64_t bytes, int adj, int64_t per_adj)
{
    int64_t pages = (bytes + PAGE - 1) / PAGE;
    return pages + (pages + 511) / 512 + adj * per_adj;
}

/* The kernel's OOM killer: select_bad_process walks the processes oldest
 * first and takes the most points, a tie going to the later one
 * (oom_evaluate_task skips only fewer points): the cached apps (the oldest
 * at 999, no smaller than the others), the app's main process, its service
 * (started after it), the app the user switched to.  1 when one was
 * killed, 2 the app's, 0 none. */
static int kernel_oom(w_pages *pg, const pg_app *a)
{
    const mdl_device *d = pg->dev;
    int64_t per_adj = (d->ram + (d->has_zram ? d->zram_size : 0)) / PAGE / 1000;
    int64_t best = INT64_MIN, p;
    int who = 0; /* 1 a cached app, 2 the app (the model's process), 3 the successor, 4 the
                    main process (svc) */
    if (pg->ncached > 0) {
        int64_t one = (pg->ds->cached + pg->cached_swap) / pg->ncached;
        best = badness(one, MDL_ADJ_MAX - 1, per_adj);
        who = 1;
    }
    /* rss holds no GPU buffer (held by fd, not mapped as the process's pages) */
    int64_t rss_anon = app_anon(pg) - mdl_ledger_total(pg->led, MDL_CAT_GPU);
    int64_t main_anon = *a->svc && *a->main_alive ? pg->host->main_anon(pg->ctx) : 0;
    if (*a->svc && *a->main_alive) {
        p = badness(*a->alive ? main_anon : rss_anon, pg->host->adj(pg->ctx, 1), per_adj);
        if (p >= best) {
            best = p;
            who = 4;
        }
    }
    if (*a->alive) {
        p = badness(rss_anon - main_anon + app_file_resident(pg), pg->host->adj(pg->ctx, 0),
                    per_adj);
        if (p >= best) {
            best = p;
            who = 2;
        }
    }
    if (other_app(pg) > 0 && badness(other_app(pg), other_adj(a), per_adj) >= best)
        who = 3;
    pg->out->kernel_oom_kills += who != 0;
    if (who == 1)
        kill_cached(pg, "kernel_oom");
    else if (who == 3)
        kill_successor(pg, a, "kernel_oom");
    else if (who == 2 || who == 4) {
        pg_kill k = {PG_BY_KERNEL_OOM, -1, who == 4, NULL, MDL_JETSAM_NONE, 0};
        pg->host->kill(pg->ctx, &k);
    }
    return who == 2 || who == 4 ? 2 : who != 0;
}

/* ------------------------------------------------------------ lmkd */

/* The figures lmkd reads, in pages. */
static void lmkd_mem(const w_pages *pg, const pg_app *a, mdl_lmkd_mem *m)
{
    const mdl_device *d = pg->dev;
    int64_t free = pg_free(pg);
    int64_t cold = cold_file(pg, a), active = pg->pc_ws + app_hot_resident(pg, a);
    memset(m, 0, sizeof *m);
    m->free = free / PAGE;
    m->swap_total = d->has_zram ? d->zram_size / PAGE : 0;
    m->swap_free = m->swap_total - swap_used(pg) / PAGE;
    m->inactive_file = m->nr_inactive_file = cold / PAGE;
    m->nr_active_file = active / PAGE;
    m->active_anon = (pg->ds->cached + pg->ds->successor + app_anon(pg)) / PAGE;
    m->refault = pg->refault / PAGE;
    m->pgscan_kswapd = pg->pgscan_kswapd / PAGE;
    m->pgscan_direct = pg->pgscan_direct / PAGE;
    m->pgrefill = pg->pgrefill / PAGE;
}

/* One wake-up of lmkd: its decision, the kill it asks for, its polling. */
static void lmkd_wake(w_pages *pg, const pg_app *a, mdl_psi_level level, int event)
{
    const mdl_device *d = pg->dev;
    mdl_lmkd_mem m;
    lmkd_mem(pg, a, &m);
    mdl_lmkd_wake wk;
    memset(&wk, 0, sizeof wk);
    wk.now_ms = sim_now(a->e) / 1000;
    wk.level = event ? level : pg->level;
    wk.event = event;
    wk.has_psi = 1;
    sim_time full = sim_now(a->e) > pg->psi_until
                        ? 0
                        : pg_psi_growth(&pg->full, sim_now(a->e), pg->full_total, WINDOW_US);
    wk.full_avg10 = full >= WINDOW_US ? 100.0 : 100.0 * (double)full / (double)WINDOW_US;
    wk.wmark_min = d->wmark_min / PAGE;
    wk.wmark_low = d->wmark_low / PAGE;
    wk.wmark_high = d->wmark_high / PAGE;
    wk.page_kb = PAGE / 1024;
    if (event)
        pg->level = level;
    mdl_lmkd_decision dec;
    mdl_lmkd_decide(&pg->lmkd, &d->lmkd, &wk, &m, &dec);
    pg->out->lmkd_wakeups++;
    pg->out->lmkd_decided[dec.reason]++;
    pg->thrashing = dec.thrashing;
    if (dec.thrashing > pg->out->thrashing_max)
        pg->out->thrashing_max = dec.thrashing;
    int killed = 0;
    if (dec.reason != MDL_LMKD_NONE) {
        killed = lmkd_kill(pg, a, dec.min_score_adj, &dec);
        if (killed)
            mdl_lmkd_killed(&pg->lmkd, &d->lmkd, &dec);
    }
    /* mp_event_psi's polling: restart the window on an event, a kill or
     * direct reclaim; poll fast while killing or with swap low */
    if (event || killed || dec.reclaim == MDL_RECLAIM_DIRECT)
        pg->poll_until = sim_now(a->e) + WINDOW_US;
    sim_time gap = killed || dec.swap_is_low ? POLL_SHORT_US : POLL_LONG_US;
    if (!pg->poll_pending && !*a->ending && sim_now(a->e) <= pg->poll_until &&
        pg->host->at(pg->ctx, sim_now(a->e) + gap, PG_POLL))
        pg->poll_pending = 1;
}

/* ---------------------------------------------------------- the clock */

/* The figures the results read, after every change. */
static void observe_free(w_pages *pg, int64_t free)
{
    int64_t room = free - pg->dev->wmark_low;
    if (room < pg->out->min_free)
        pg->out->min_free = pg->out->min_margin = room; /* the margin, in psi mode */
    observe_swap(pg);
}

static void observe(w_pages *pg) { observe_free(pg, pg_free(pg)); }

/* The app's weights dropped since the last such note: one note per step. */
static void note_dropped(w_pages *pg, const pg_app *a)
{
    if (pg->dropped > 0 && *a->alive)
        pg->host->note(pg->ctx, "weights_dropped", NULL, pg->dropped, 0, -1, 0);
    pg->dropped = 0;
}

static void keep_ticking(w_pages *pg, const pg_app *a);

/* kswapd's work since the last look, and the page cache's own refaults:
 * the other apps read their working set back as fast as storage allows,
 * into what is free above min. */
static void advance(w_pages *pg, const pg_app *a)
{
    const mdl_device *d = pg->dev;
    sim_time dt = sim_now(a->e) - pg->t;
    pg->t = sim_now(a->e);
    sync_app(pg, a);
    if (dt <= 0 || (!pg->kswapd && pg->pc_ws == d->page_cache_ws))
        return; /* kswapd asleep, the page cache whole: nothing moved */
    if (pg->kswapd) {
        int64_t need = d->wmark_high - pg_free(pg);
        double budget = (double)d->reclaim_rate * (double)dt / 1e6;
        if (need > 0)
            reclaim(pg, a, (double)need < budget ? need : (int64_t)budget, 0);
        if (pg_free(pg) >= d->wmark_high)
            pg->kswapd = 0;
    }
    int64_t gone = d->page_cache_ws - pg->pc_ws;
    if (gone > 0) {
        int64_t can = (int64_t)((double)d->storage_read * (double)dt / 1e6);
        int64_t room = pg_free(pg) - d->wmark_min;
        int64_t r = gone < can ? gone : can;
        if (r > room)
            r = room > 0 ? room : 0;
        pg->pc_ws += r;
        pg->refault += r;
        psi_stall(pg, a, (sim_time)((double)r * 1e6 / (double)d->storage_read), 0);
    }
    if (pg_free(pg) < d->wmark_low)
        pg->kswapd = 1;
    keep_ticking(pg, a);
}

/* While reclaim or refaults go on, the page model looks every TICK_US. */
static void keep_ticking(w_pages *pg, const pg_app *a)
{
    if (pg->tick_pending || *a->ending || !(pg->kswapd || pg->pc_ws < pg->dev->page_cache_ws))
        return;
    if (pg->host->at(pg->ctx, sim_now(a->e) + TICK_US, PG_TICK))
        pg->tick_pending = 1;
}

/* kswapd's look (PG_TICK), lmkd's poll (PG_POLL), or the kernel's poll of
 * its PSI triggers for an event held (PG_PSI). */
void pg_look(w_pages *pg, const pg_app *a, int what)
{
    if (what == PG_TICK)
        pg->tick_pending = 0;
    else if (what == PG_POLL)
        pg->poll_pending = 0;
    else
        if (pg->psi_look_at <= sim_now(a->e))
            pg->psi_look_at = -1; /* (a later look asked for before comes all the same) */
    pg->out->page_events++;
    if (*a->ending)
        return;
    advance(pg, a);
    observe(pg);
    if (what == PG_TICK) {
        note_dropped(pg, a);
        keep_ticking(pg, a);
    } else if (what == PG_POLL) {
        lmkd_wake(pg, a, pg->level, 0);
    } else if (sim_now(a->e) <= pg->psi_until) {
        if (sim_now(a->e) > pg->psi_seen)
            pg->psi_seen = sim_now(a->e);
        psi_signal(pg, a, pg->psi_seen, 0, 0);
    }
}

/* An allocation was made (the app's, or another app's spike): below min,
 * the allocating task reclaims directly, and what cannot be reclaimed is
 * the OOM killer's.  `own`: the app allocated (its stall is its own and
 * counts as full in the foreground). */
/* The allocating process lives on: the one the model runs in; or, while
 * the model's service is down (svc), the app's main process, the only one
 * that can allocate then. */
static int lives(const pg_app *a, uint32_t epoch, int svc_down)
{
    return svc_down ? *a->main_alive : *a->alive && *a->epoch == epoch;
}

static int allocated(w_pages *pg, const pg_app *a, int own)
{
    const mdl_device *d = pg->dev;
    uint32_t epoch = *a->epoch;
    int svc_down = *a->svc && !*a->alive;
    int64_t free = pg_free(pg);
    if (free >= d->wmark_low) { /* the common case: nothing for the kernel to do */
        observe_free(pg, free);
        return LIVES;
    }
    if (free < d->wmark_min) {
        int64_t want = d->wmark_min - free;
        reclaim(pg, a, want, 1);
        sim_time stall = (sim_time)((double)want * 1e6 / (double)d->reclaim_rate);
        if (own)
            pg->stall += stall;
        psi_stall(pg, a, stall, own && *a->fg);
        if (!lives(a, epoch, svc_down) && own)
            return GONE;
    }
    /* the allocation cannot be met: the OOM killer, until it can */
    while (pg_free(pg) < 0 || (pg_free(pg) < d->wmark_min && reclaimable(pg, a) == 0)) {
        int who = kernel_oom(pg, a);
        if (who == 0)
            break;
        if (who == 2 && own && !lives(a, epoch, svc_down))
            return GONE;
    }
    note_dropped(pg, a);
    /* another app's spike that nothing could make room for is refused in part */
    if (pg->spike > 0 && pg_free(pg) < 0)
        pg->spike += pg_free(pg);
    if (pg_free(pg) < d->wmark_low)
        pg->kswapd = 1;
    observe(pg);
    keep_ticking(pg, a);
    return own && !lives(a, epoch, svc_down) ? GONE : LIVES;
}

void pg_fill(const w_pages *pg, const pg_app *a, trc_event *e)
{
    if (pg->on == W_PAGES_XNU) {
        pg_xnu_fill(pg, a, e);
        return;
    }
    const mdl_device *d = pg->dev;
    int64_t free = pg_free(pg);
    int64_t active = pg->pc_ws + app_hot_resident(pg, a);
    int64_t v[6] = {free > 0 ? free : 0,
                    d->wmark_low,
                    cold_file(pg, a) + (active > 0 ? active : 0),
                    swap_used(pg),
                    pg->thrashing > 0 ? pg->thrashing : 0,
                    sim_now(a->e) > pg->psi_until
                        ? 0
                        : pg_psi_growth(&pg->some, sim_now(a->e), pg->some_total, WINDOW_US)};
    e->has |= TRC_F_PAGES;
    for (int k = 0; k < 6; k++) {
        e->pages[k] = v[k];
        e->pages_has |= 1u << k;
    }
}

/* ------------------------------------------------------ entry points */

/* Room for growth before the kernel does something: free pages over the
 * low watermark (kswapd wakes under it), a soft line; none once under it. */
int64_t pg_growth_room(const w_pages *pg, const pg_app *a, int64_t *soft)
{
    if (pg->on == W_PAGES_XNU)
        return pg_xnu_growth_room(pg, a, soft);
    *soft = pg_free(pg) - pg->dev->wmark_low;
    return INT64_MAX;
}

pg_result pg_check(w_pages *pg, const pg_app *a, int64_t extra, int own)
{
    if (pg->on == W_PAGES_XNU)
        return pg_xnu_check(pg, a, extra);
    pg_result res = {0, 0, 0};
    uint32_t epoch = *a->epoch;
    int svc_down = *a->svc && !*a->alive;
    advance(pg, a);
    if (extra > 0) {
        pg->spike = extra;
        (void)allocated(pg, a, 0);
        pg->spike = 0; /* the other app frees it (what did not fit was refused) */
        observe(pg);
        res.gone = !lives(a, epoch, svc_down);
        return res;
    }
    int64_t free = pg_free(pg);
    if (free >= pg->dev->wmark_low) { /* the common case: nothing for the kernel to do */
        observe_free(pg, free);
        res.warn = 1;
        res.room = free - pg->dev->wmark_low + cold_file(pg, a);
        return res;
    }
    if (allocated(pg, a, own) != LIVES || !lives(a, epoch, svc_down)) {
        res.gone = 1;
        return res;
    }
    res.warn = 1;
    res.room = pg_room(pg, a);
    return res;
}

/* The app's stall since it was last taken: added to its running stage. */
sim_time pg_take_stall(w_pages *pg)
{
    sim_time s = pg->stall;
    pg->stall = 0;
    return s;
}

/* An inference on part p reads its weights: the pages of them reclaim
 * dropped are read back first (a refault each), at storage speed, and
 * need memory again.  The time it takes (the app's memory stall). */
sim_time pg_refault(w_pages *pg, const pg_app *a, int hot, int64_t hot_bytes, pg_result *res)
{
    res->gone = res->warn = 0;
    if (!pg->on || !hot)
        return 0;
    if (pg->on == W_PAGES_XNU)
        return pg_xnu_refault(pg, a, hot, hot_bytes, res);
    advance(pg, a);
    int64_t bytes = read_back(pg, a, hot_bytes);
    if (bytes == 0)
        return 0;
    sim_time t = (sim_time)((double)bytes * 1e6 / (double)pg->dev->storage_read);
    pg->host->note(pg->ctx, "refault", NULL, 0, bytes, -1, t);
    /* each page is allocated (reclaiming if need be), then read */
    uint32_t epoch = *a->epoch;
    if (allocated(pg, a, 1) == LIVES && *a->alive && *a->epoch == epoch)
        psi_stall(pg, a, t, *a->fg);
    res->gone = !(*a->alive && *a->epoch == epoch);
    return t;
}

/* The headroom the memory warnings read: free pages over low, and the
 * cold file pages reclaim would drop first. */
int64_t pg_room(const w_pages *pg, const pg_app *a)
{
    if (pg->on == W_PAGES_XNU)
        return pg_xnu_room(pg, a);
    return pg_free(pg) - pg->dev->wmark_low + cold_file(pg, a);
}

/* A new app the user switches to replaces the previous one (its pages
 * with it: the model holds one other app in front or just left). */
void pg_successor_left(w_pages *pg)
{
    pg->succ_swap = 0;
    pg->x.succ_comp = 0; /* iOS: the new one replaces its compressed pages */
    pg->x.succ_life++;   /* ... and is a new process (its own pid in the reports) */
}

int pg_successor_back(w_pages *pg, sim_time now)
{
    pg->x.succ_left = now;
    return pg->on == W_PAGES_XNU && pg->ds->successor + pg->x.succ_comp > 0;
}

int64_t pg_app_hot_resident(const w_pages *pg, const pg_app *a) { return app_hot_resident(pg, a); }

int64_t pg_app_anon(const w_pages *pg) { return app_anon(pg); }

int64_t pg_app_file_resident(const w_pages *pg) { return app_file_resident(pg); }

void pg_app_gone(w_pages *pg)
{
    pg->x.app_comp = 0;
    pg->app_evicted = pg->app_cold_gone = 0;
}

void pg_setup(w_pages *pg, const pg_app *a, gsl_rng *r)
{
    const mdl_device *d = pg->dev;
    pg->out->min_free = INT64_MAX;
    if (d->rule == MDL_KILL_JETSAM && d->xnu_pages) {
        pg_xnu_setup(pg, a, r);
        return;
    }
    if (d->rule != MDL_KILL_LMK || !d->lmk_psi)
        return;
    pg->on = W_PAGES_LMKD;
    int64_t c = pg->ds->cached;
    pg->ncached = c <= 0 ? 0 : (uint32_t)((c + d->cached_app_size - 1) / d->cached_app_size);
    pg->pc_cold = d->page_cache - d->page_cache_ws;
    pg->pc_ws = d->page_cache_ws;
    pg->some.last_event = pg->full.last_event = -WINDOW_US;
    pg->psi_until = pg->psi_seen = pg->psi_look_at = -1;
    pg->poll_until = -1;
    mdl_lmkd_mem m;
    lmkd_mem(pg, a, &m);
    mdl_lmkd_state_init(&pg->lmkd, &d->lmkd, &m, 0);
    if (pg_free(pg) < d->wmark_low)
        pg->kswapd = 1;
    observe(pg);
    keep_ticking(pg, a);
}

/* An inference that would take `base` takes `took`. */
void pg_inference(w_pages *pg, sim_time base, sim_time took)
{
    double ratio = base > 0 ? (double)took / (double)base : 1.0;
    pg->out->slowdown[mdl_slowdown_bucket(ratio)]++;
}
