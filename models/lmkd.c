/* lmkd.c - one wake-up of lmkd's PSI handler, as a pure function of its
 * inputs and the state the previous wake-ups left (lmkd.h).
 *
 * Source: AOSP system/memory/lmkd, lmkd.cpp at commit 18578a5
 * (2023-11-27), functions mp_event_psi, get_lowest_watermark,
 * calc_swap_utilization, get_free_swap, and the property reads of
 * update_props; statslog.h for the reasons.  docs/model.md "lmkd's
 * decision" walks the branches with their conditions. */
#include "models.h"

#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

/* lmkd.cpp: THRASHING_RESET_INTERVAL_MS */
#define THRASHING_RESET_MS 1000

#define P(f) (unsigned)offsetof(mdl_lmkd_props, f)
const mdl_lmkd_prop mdl_lmkd_prop_table[] = {
    {"swap_free_low_percentage", 0, 0, 0, 100, P(swap_free_low_percentage),
     "free swap under this percent of SwapTotal is low swap (10)"},
    {"thrashing_limit", 0, 0, 0, INT32_MAX, P(thrashing_limit),
     "thrashing percent that kills (100; 30 on low-RAM devices)"},
    {"thrashing_limit_decay", 0, 0, 0, 100, P(thrashing_limit_decay),
     "percent the limit is cut by after each thrashing kill (10; 50 on low-RAM devices)"},
    {"thrashing_limit_critical", 0, 0, 0, INT32_MAX, P(thrashing_limit_critical),
     "thrashing percent that may kill perceptible apps (3 x thrashing_limit)"},
    {"psi_partial_stall_ms", 0, 0, 1, 1000, P(psi_partial_stall_ms),
     "some-stall per 1 s window that wakes lmkd (70; 200 on low-RAM devices)"},
    {"psi_complete_stall_ms", 0, 0, 1, 1000, P(psi_complete_stall_ms),
     "full-stall per 1 s window that is a critical event (700)"},
    {"swap_util_max", 0, 0, 0, 100, P(swap_util_max),
     "percent of swappable memory in swap that kills at low memory (100: off)"},
    {"filecache_min_kb", 0, 1, 0, INT64_MAX / 1024, P(filecache_min_kb),
     "file LRU under which killing goes on after thrashing (0)"},
    {"stall_limit_critical", 0, 1, 0, INT64_MAX, P(stall_limit_critical),
     "full avg10 percent above which kills reach adj 0 (100)"},
    {"pressure_after_kill_min_score", 0, 0, 0, MDL_ADJ_MAX, P(pressure_after_kill_min_score),
     "lowest adj a kill after a kill may reach (0)"},
    {"kill_timeout_ms", 0, 0, 0, 60000, P(kill_timeout_ms),
     "how long lmkd waits for a victim's death before the next kill (100)"},
    {"kill_heaviest_task", 1, 0, 0, 1, P(kill_heaviest_task),
     "pick the heaviest process of an adj, not the one at its list's tail (false)"},
    {"low_ram", 1, 0, 0, 1, P(low_ram), "ro.config.low_ram: a low-RAM (Go) device (false)"},
    {NULL, 0, 0, 0, 0, 0, NULL},
};
#undef P

const mdl_lmkd_prop *mdl_lmkd_prop_named(const char *name)
{
    for (const mdl_lmkd_prop *p = mdl_lmkd_prop_table; p->name != NULL; p++)
        if (strcmp(p->name, name) == 0)
            return p;
    return NULL;
}

void mdl_lmkd_prop_set(mdl_lmkd_props *p, const mdl_lmkd_prop *prop, int64_t v)
{
    char *at = (char *)p + prop->offset;
    if (prop->is_64)
        memcpy(at, &v, sizeof v);
    else {
        int i = (int)v;
        memcpy(at, &i, sizeof i);
    }
}

int64_t mdl_lmkd_prop_get(const mdl_lmkd_props *p, const mdl_lmkd_prop *prop)
{
    const char *at = (const char *)p + prop->offset;
    if (prop->is_64) {
        int64_t v;
        memcpy(&v, at, sizeof v);
        return v;
    }
    int i;
    memcpy(&i, at, sizeof i);
    return i;
}

void mdl_lmkd_props_unset(mdl_lmkd_props *p)
{
    for (const mdl_lmkd_prop *q = mdl_lmkd_prop_table; q->name != NULL; q++)
        mdl_lmkd_prop_set(p, q, -1);
}

static int64_t clamp(int64_t lo, int64_t hi, int64_t v) { return v < lo ? lo : v > hi ? hi : v; }

/* update_props: the defaults and clamps, in lmkd's order. */
void mdl_lmkd_props_resolve(mdl_lmkd_props *p)
{
    if (p->low_ram < 0)
        p->low_ram = 0;
    int lr = p->low_ram != 0;
    if (p->kill_heaviest_task < 0)
        p->kill_heaviest_task = 0;
    if (p->kill_timeout_ms < 0)
        p->kill_timeout_ms = 100;
    if (p->pressure_after_kill_min_score < 0)
        p->pressure_after_kill_min_score = 0;
    p->swap_free_low_percentage =
        (int)clamp(0, 100, p->swap_free_low_percentage < 0 ? 10 : p->swap_free_low_percentage);
    if (p->psi_partial_stall_ms < 0)
        p->psi_partial_stall_ms = lr ? 200 : 70;
    if (p->psi_complete_stall_ms < 0)
        p->psi_complete_stall_ms = 700;
    if (p->thrashing_limit < 0)
        p->thrashing_limit = lr ? 30 : 100;
    p->thrashing_limit_decay =
        (int)clamp(0, 100, p->thrashing_limit_decay < 0 ? (lr ? 50 : 10)
                                                        : p->thrashing_limit_decay);
    if (p->thrashing_limit_critical < 0) { /* 3 x the limit, held at INT32_MAX */
        int64_t critical = (int64_t)p->thrashing_limit * 3;
        p->thrashing_limit_critical = critical > INT32_MAX ? INT32_MAX : (int)critical;
    }
    p->swap_util_max = (int)clamp(0, 100, p->swap_util_max < 0 ? 100 : p->swap_util_max);
    if (p->filecache_min_kb < 0)
        p->filecache_min_kb = 0;
    if (p->stall_limit_critical < 0)
        p->stall_limit_critical = 100;
}

static const char *const reason_names[MDL_LMKD_COUNT] = {
    "NONE",
    "PRESSURE_AFTER_KILL",
    "NOT_RESPONDING",
    "LOW_SWAP_AND_THRASHING",
    "LOW_MEM_AND_SWAP",
    "LOW_MEM_AND_THRASHING",
    "DIRECT_RECL_AND_THRASHING",
    "LOW_MEM_AND_SWAP_UTIL",
    "LOW_FILECACHE_AFTER_THRASHING",
    "LOW_MEM",
};

const char *mdl_lmkd_reason_name(mdl_lmkd_reason r)
{
    return (unsigned)r < MDL_LMKD_COUNT ? reason_names[r] : "?";
}

int mdl_lmkd_reason_parse(const char *s, mdl_lmkd_reason *out)
{
    for (int i = 0; i < MDL_LMKD_COUNT; i++)
        if (strcmp(reason_names[i], s) == 0) {
            *out = (mdl_lmkd_reason)i;
            return SIM_OK;
        }
    return SIM_ENOTFOUND;
}

const char *mdl_wmark_name(mdl_wmark w)
{
    static const char *const n[] = {"min", "low", "high", "none"};
    return (unsigned)w <= MDL_WMARK_NONE ? n[w] : "?";
}

const char *mdl_reclaim_name(mdl_reclaim r)
{
    static const char *const n[] = {"none", "kswapd", "direct"};
    return (unsigned)r <= MDL_RECLAIM_DIRECT ? n[r] : "?";
}

void mdl_lmkd_state_init(mdl_lmkd_state *s, const mdl_lmkd_props *p, const mdl_lmkd_mem *at,
                         int64_t now_ms)
{
    memset(s, 0, sizeof *s);
    s->init_ws_refault = at->refault;
    s->prev_workingset_refault = at->refault;
    s->base_file_lru = at->nr_inactive_file + at->nr_active_file;
    s->init_pgscan_kswapd = at->pgscan_kswapd;
    s->init_pgscan_direct = at->pgscan_direct;
    s->init_pgrefill = at->pgrefill;
    s->thrashing_reset_ms = now_ms;
    s->thrashing_limit = p->thrashing_limit;
}

/* get_free_swap: zram's free swap is bounded by what could be freed to
 * hold it, MemFree + Inactive(file) (meminfo_parse's easy_available). */
static int64_t free_swap(const mdl_lmkd_mem *m)
{
    int64_t easy = m->free + m->inactive_file;
    return m->swap_free < easy ? m->swap_free : easy;
}

static mdl_wmark lowest_watermark(const mdl_lmkd_mem *m, const mdl_lmkd_wake *w)
{
    int64_t free = m->free - m->cma_free;
    return free < w->wmark_min ? MDL_WMARK_MIN
           : free < w->wmark_low ? MDL_WMARK_LOW
           : free < w->wmark_high ? MDL_WMARK_HIGH
                                   : MDL_WMARK_NONE;
}

static int swap_utilization(const mdl_lmkd_mem *m)
{
    int64_t used = m->swap_total - free_swap(m);
    int64_t swappable = m->active_anon + m->inactive_anon + m->shmem + used;
    return swappable > 0 ? (int)(used * 100 / swappable) : 0;
}

/* The reclaim state, and the counters it resets: mp_event_psi's
 * "Identify reclaim state"; -1 when nothing moved (lmkd bails out). */
static int reclaim_state(mdl_lmkd_state *s, const mdl_lmkd_mem *m, mdl_reclaim *out)
{
    *out = MDL_RECLAIM_NONE;
    if (m->pgscan_direct != s->init_pgscan_direct) {
        s->init_pgscan_direct = m->pgscan_direct;
        s->init_pgscan_kswapd = m->pgscan_kswapd;
        s->init_pgrefill = m->pgrefill;
        *out = MDL_RECLAIM_DIRECT;
    } else if (m->pgscan_kswapd != s->init_pgscan_kswapd) {
        s->init_pgscan_kswapd = m->pgscan_kswapd;
        s->init_pgrefill = m->pgrefill;
        *out = MDL_RECLAIM_KSWAPD;
    } else if (m->pgrefill != s->init_pgrefill) {
        s->init_pgrefill = m->pgrefill;
        *out = MDL_RECLAIM_KSWAPD;
    } else if (m->refault == s->prev_workingset_refault) {
        return -1;
    }
    return 0;
}

/* The thrashing percent, with the window's reset and decay. */
static int64_t thrashing_now(mdl_lmkd_state *s, const mdl_lmkd_props *p, const mdl_lmkd_mem *m,
                             int64_t now_ms)
{
    int64_t thrashing = 0;
    int64_t since = now_ms - s->thrashing_reset_ms;
    if (since > THRASHING_RESET_MS) {
        s->prev_thrash_growth = (m->refault - s->init_ws_refault) * 100 / (s->base_file_lru + 1);
        int64_t windows = since / THRASHING_RESET_MS;
        /* kept whole when the limit was crossed in the one window just ended */
        if (windows > 1 || s->prev_thrash_growth < s->thrashing_limit)
            s->prev_thrash_growth = windows >= 63 ? 0 : s->prev_thrash_growth >> windows;
        s->base_file_lru = m->nr_inactive_file + m->nr_active_file;
        s->init_ws_refault = m->refault;
        s->thrashing_reset_ms = now_ms;
        s->thrashing_limit = p->thrashing_limit;
    } else {
        thrashing = (m->refault - s->init_ws_refault) * 100 / (s->base_file_lru + 1);
    }
    thrashing += s->prev_thrash_growth;
    if (s->max_thrashing < thrashing)
        s->max_thrashing = thrashing;
    return thrashing;
}

/* The branches of mp_event_psi's "Decide if killing a process is
 * necessary", in order, and the LOW_MEM fallback. */
static void decide_reason(mdl_lmkd_state *s, const mdl_lmkd_props *p, const mdl_lmkd_wake *w,
                          const mdl_lmkd_mem *m, int cycle_after_kill, mdl_lmkd_decision *d)
{
    char *desc = d->description;
    size_t n = sizeof d->description;
    int64_t t = d->thrashing, kb = w->page_kb;
    const char *which = d->wmark < MDL_WMARK_LOW ? "min" : "low";
    int low_mem = d->wmark < MDL_WMARK_HIGH; /* free pages under the low watermark */
    int spare_perceptible = 0;
    int util;
    if (cycle_after_kill && d->wmark < MDL_WMARK_LOW) {
        d->reason = MDL_LMKD_PRESSURE_AFTER_KILL;
        d->min_score_adj = p->pressure_after_kill_min_score;
        snprintf(desc, n, "min watermark is breached even after kill");
    } else if (w->level == MDL_PSI_CRITICAL && w->event) {
        d->reason = MDL_LMKD_NOT_RESPONDING;
        snprintf(desc, n, "device is not responding");
    } else if (d->swap_is_low && t > p->thrashing_limit) {
        d->reason = MDL_LMKD_LOW_SWAP_AND_THRASHING;
        snprintf(desc, n, "device is low on swap (%" PRId64 "kB < %" PRId64
                 "kB) and thrashing (%" PRId64 "%%)", d->free_swap * kb,
                 d->swap_low_threshold * kb, t);
        spare_perceptible = d->wmark > MDL_WMARK_MIN && t < p->thrashing_limit_critical;
        s->check_filecache = 1;
    } else if (d->swap_is_low && low_mem) {
        d->reason = MDL_LMKD_LOW_MEM_AND_SWAP;
        snprintf(desc, n, "%s watermark is breached and swap is low (%" PRId64 "kB < %" PRId64
                 "kB)", which, d->free_swap * kb, d->swap_low_threshold * kb);
        spare_perceptible = d->wmark > MDL_WMARK_MIN && t < p->thrashing_limit_critical;
    } else if (low_mem && p->swap_util_max < 100 &&
               (util = swap_utilization(m)) > p->swap_util_max) {
        d->reason = MDL_LMKD_LOW_MEM_AND_SWAP_UTIL;
        snprintf(desc, n, "%s watermark is breached and swap utilization is high (%d%% > %d%%)",
                 which, util, p->swap_util_max);
    } else if (low_mem && t > s->thrashing_limit) {
        d->reason = MDL_LMKD_LOW_MEM_AND_THRASHING;
        snprintf(desc, n, "%s watermark is breached and thrashing (%" PRId64 "%%)", which, t);
        d->cut_thrashing_limit = 1;
        spare_perceptible = t < p->thrashing_limit_critical;
        s->check_filecache = 1;
    } else if (d->reclaim == MDL_RECLAIM_DIRECT && t > s->thrashing_limit) {
        d->reason = MDL_LMKD_DIRECT_RECL_AND_THRASHING;
        snprintf(desc, n, "device is in direct reclaim and thrashing (%" PRId64 "%%)", t);
        d->cut_thrashing_limit = 1;
        spare_perceptible = t < p->thrashing_limit_critical;
        s->check_filecache = 1;
    } else if (s->check_filecache) {
        int64_t file_kb = (m->nr_inactive_file + m->nr_active_file) * kb;
        if (file_kb < p->filecache_min_kb) {
            d->reason = MDL_LMKD_LOW_FILECACHE_AFTER_THRASHING;
            snprintf(desc, n, "filecache is low (%" PRId64 "kB < %" PRId64 "kB) after thrashing",
                     file_kb, p->filecache_min_kb);
            spare_perceptible = 1;
        } else {
            s->check_filecache = 0;
        }
    }
    if (spare_perceptible)
        d->min_score_adj = MDL_ADJ_PERCEPTIBLE + 1;
    if (d->reason == MDL_LMKD_NONE && low_mem) {
        d->reason = MDL_LMKD_LOW_MEM;
        snprintf(desc, n, "%s watermark is breached", which);
        d->min_score_adj = MDL_ADJ_PREVIOUS + 1;
    }
}

void mdl_lmkd_decide(mdl_lmkd_state *s, const mdl_lmkd_props *p, const mdl_lmkd_wake *w,
                     const mdl_lmkd_mem *m, mdl_lmkd_decision *d)
{
    memset(d, 0, sizeof *d);
    d->reason = MDL_LMKD_NONE;
    snprintf(d->description, sizeof d->description, "no_kill");
    int cycle_after_kill = 0;
    if (s->killing) { /* reset after a kill */
        s->killing = 0;
        cycle_after_kill = 1;
        s->base_file_lru = m->nr_inactive_file + m->nr_active_file;
        s->init_ws_refault = m->refault;
        s->thrashing_reset_ms = w->now_ms;
        s->prev_thrash_growth = 0;
    }
    if (p->swap_free_low_percentage) {
        d->swap_low_threshold = m->swap_total * p->swap_free_low_percentage / 100;
        d->swap_is_low = free_swap(m) < d->swap_low_threshold;
    }
    d->free_swap = free_swap(m);
    /* lmkd computes neither the watermark nor the stall before its bail-out;
     * the figures are filled all the same, for whoever reads them */
    d->wmark = lowest_watermark(m, w);
    d->critical_stall = w->has_psi && w->full_avg10 > (double)p->stall_limit_critical;
    if (reclaim_state(s, m, &d->reclaim) < 0) {
        d->bailed = 1;
        d->thrashing = s->prev_thrash_growth +
                       (m->refault - s->init_ws_refault) * 100 / (s->base_file_lru + 1);
        return;
    }
    s->prev_workingset_refault = m->refault;
    d->thrashing = thrashing_now(s, p, m, w->now_ms);
    decide_reason(s, p, w, m, cycle_after_kill, d);
    if (d->reason != MDL_LMKD_NONE && d->critical_stall)
        d->min_score_adj = 0; /* the system is stalled: perceptible apps too */
}

void mdl_lmkd_killed(mdl_lmkd_state *s, const mdl_lmkd_props *p, const mdl_lmkd_decision *d)
{
    s->killing = 1;
    s->max_thrashing = 0;
    if (d->cut_thrashing_limit)
        s->thrashing_limit = s->thrashing_limit * (100 - p->thrashing_limit_decay) / 100;
}
