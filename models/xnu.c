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

/* memorystatus_init's fallback table (the comment above
 * MEMORYSTATUS_CRITICAL_PERCENTAGE_SMALL): DRAM up to 3 GB 5/10/15 %, up
 * to 6 GB 4/9/15 %, above 4/8/12 %. */
void mdl_xnu_threshold_pcts(int64_t ram, int *critical, int *idle, int *pressure)
{
    const int64_t gb = (int64_t)1 << 30;
    if (ram <= 3 * gb) {
        *critical = 5, *idle = 10, *pressure = 15;
    } else if (ram <= 6 * gb) {
        *critical = 4, *idle = 9, *pressure = 15;
    } else {
        *critical = 4, *idle = 8, *pressure = 12;
    }
}

/* vm_phantom_cache.c is_thrashing: both counts at the threshold, and most
 * pages read were recently evicted. */
int mdl_xnu_pc_thrashing(int64_t added, int64_t found, int64_t threshold)
{
    if (added < threshold || found < threshold)
        return 0;
    return found >= added / 2;
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
    if (in->compressor_thrashing)
        out->cause = MDL_JETSAM_COMPRESSOR_THRASHING;
    else if (in->compressor_exhausted)
        out->cause = MDL_JETSAM_COMPRESSOR_SPACE;
    else if (fc)
        out->cause = MDL_JETSAM_FC_THRASHING;
    else
        out->cause = MDL_JETSAM_VM_PAGESHORTAGE;
}
