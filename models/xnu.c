/* xnu.c - memorystatus's decision as XNU xnu-11417.101.15 makes it
 * (models/xnu.h; docs/model.md "memorystatus's decision").  Pure. */
#include "models.h"

#include <string.h>

/* kern_memorystatus.c, the names by kill cause (memorystatus_kill_cause_name). */
static const char *const cause_names[MDL_JETSAM_COUNT] = {
    "",
    "jettisoned",
    "highwater",
    "vnode-limit",
    "vm-pageshortage",
    "proc-thrashing",
    "fc-thrashing",
    "per-process-limit",
    "disk-space-shortage",
    "idle-exit",
    "zone-map-exhaustion",
    "vm-compressor-thrashing",
    "vm-compressor-space-shortage",
    "low-swap",
    "sustained-memory-pressure",
    "vm-pageout-starvation",
    "",
    "long-idle-exit",
};

const char *mdl_jetsam_cause_name(mdl_jetsam_cause c)
{
    return (unsigned)c < MDL_JETSAM_COUNT ? cause_names[c] : "?";
}

int mdl_jetsam_cause_parse(const char *s, mdl_jetsam_cause *out)
{
    for (int c = 1; c < MDL_JETSAM_COUNT; c++)
        if (cause_names[c][0] != '\0' && strcmp(s, cause_names[c]) == 0) {
            *out = (mdl_jetsam_cause)c;
            return SIM_OK;
        }
    return SIM_ENOTFOUND;
}

/* memorystatus_init (kern_memorystatus.c) without a device-tree value:
 * critical is MEMSTAT_PERCENT_TOTAL_PAGES of 5 (up to
 * MEMORYSTATUS_SMALL_MEMORY_THRESHOLD, 3 GiB) or 4; idle and soft are
 * ratios of critical, 9/4 and 15/4 on "medium" devices (3 to 6 GiB), else
 * 2/1 and 3/1. */
void mdl_xnu_thresholds(int64_t ram, int64_t page, int64_t *critical, int64_t *idle,
                        int64_t *soft)
{
    const int64_t gib = (int64_t)1 << 30;
    int64_t pages = page > 0 ? ram / page : 0;
    int64_t crit = (ram <= 3 * gib ? 5 : 4) * pages / 100;
    int medium = ram > 3 * gib && ram <= 6 * gib;
    *critical = crit;
    *idle = medium ? 9 * crit / 4 : 2 * crit;
    *soft = medium ? 15 * crit / 4 : 3 * crit;
}

/* vm_phantom_cache.c is_thrashing: both counts at the threshold, and most
 * pages read were recently evicted. */
int mdl_xnu_pc_thrashing(int64_t added, int64_t found, int64_t threshold)
{
    if (added < threshold || found < threshold)
        return 0;
    return found >= added / 2;
}

int64_t mdl_xnu_free_target(int64_t free_at_boot)
{
    const int64_t reserved = 100 + 28;
    int64_t after = free_at_boot - reserved;
    if (after < 0)
        after = 0;
    int64_t min = reserved + 10 + after / 200;
    if (min > 1500)
        min = 1500;
    int64_t target = reserved + 15 + after / 100;
    if (target > MDL_XNU_FREE_TARGET_PAGES)
        target = MDL_XNU_FREE_TARGET_PAGES;
    return target < min + 5 ? min + 5 : target;
}

uint32_t mdl_xnu_pc_history(uint32_t hist, int64_t *start, int64_t now, int64_t periods,
                            int thrash)
{
    if (now - *start >= MDL_XNU_PC_PERIOD_US) { /* one shift per period gone */
        int64_t gone = (now - *start) / MDL_XNU_PC_PERIOD_US;
        hist = gone >= 32 ? 0 : hist << gone;
        *start = now;
    }
    for (int64_t k = 0; k < periods && k <= 32; k++) { /* 32 shifts clear it all */
        if (k > 0)
            hist <<= 1;
        if (thrash)
            hist |= 1u;
    }
    *start += (periods - 1) * MDL_XNU_PC_PERIOD_US; /* the read's last period */
    return hist;
}

int mdl_xnu_pc_pressure(uint32_t hist)
{
    uint32_t all = (1u << MDL_XNU_PC_PERIODS) - 1;
    return (hist & all) == all;
}

/* memorystatus_pick_action (kern_memorystatus_policy.c), CONFIG_JETSAM.
 * The health check is memorystatus_health_check's: the file cache
 * thrashes for the decision unless the compressor both thrashes and is
 * exhausted.  Branches the model has no state for are left out: swap
 * (iPhones do not swap apps), high-water marks (no process of the model
 * has a soft limit), the reaper and aggressive jetsam (no relaunch
 * likelihood); zone map and pageout starvation are never raised. */
void mdl_xnu_decide(const mdl_xnu_input *in, mdl_xnu_decision *out)
{
    int below_critical = in->available < in->critical;
    int below_idle = in->available < in->idle;
    int below_soft = in->available < in->soft;
    int fc = in->fc_thrashing && !(in->compressor_thrashing && in->compressor_exhausted);
    memset(out, 0, sizeof *out);
    out->healthy = !(below_critical || in->compressor_thrashing || in->compressor_exhausted || fc);
    out->fc_thrashing = fc;
    /* 1: below the soft threshold or unhealthy, the compressor out of space */
    if ((below_soft || !out->healthy) && in->compressor_exhausted) {
        out->action = MDL_XNU_KILL_TOP;
        out->cause = MDL_JETSAM_COMPRESSOR_SPACE;
        out->max_band = MDL_BAND_MAX;
        out->branch = 1;
        return;
    }
    /* 2: below idle while healthy: the idle band only */
    if (below_idle && in->idle_procs > 0 && out->healthy) {
        out->action = MDL_XNU_KILL_IDLE;
        out->cause = MDL_JETSAM_IDLE_EXIT;
        out->max_band = MDL_BAND_IDLE;
        out->branch = 2;
        return;
    }
    if (out->healthy) {
        out->branch = 3;
        return;
    }
    /* 4: unhealthy: the top process, the cause as memorystatus_pick_kill_cause
     * orders them */
    out->action = MDL_XNU_KILL_TOP;
    out->max_band = MDL_BAND_MAX;
    out->branch = 4;
    /* (the compressor out of space never gets here: branch 1 took it) */
    if (in->compressor_thrashing)
        out->cause = MDL_JETSAM_COMPRESSOR_THRASHING;
    else if (fc)
        out->cause = MDL_JETSAM_FC_THRASHING;
    else
        out->cause = MDL_JETSAM_VM_PAGESHORTAGE;
}
