/* why.c - what ended a process, in the device's own terms, as `explain`
 * tells it at each death: the limit or line crossed and by how much, the
 * lmkd or memorystatus rule that fired, the heap, the timeout, or that no
 * record names a cause. */
#include "tell_int.h"

#include <stdio.h>
#include <string.h>

/* "free pages 38 MiB under the low watermark 52 MiB, thrashing 143 %": the
 * phone's pages an event carries (its `pages` map), "" without them. */
void rpl__pages_text(const trc_event *e, char *buf, size_t n, int ios)
{
    buf[0] = '\0';
    if (!(e->has & TRC_F_PAGES))
        return;
    int64_t free = PG(e, TRC_PG_FREE), low = PG(e, TRC_PG_LOW);
    if (ios) { /* the iPhone's pages: low is the critical level (docs/traces.md) */
        snprintf(buf, n, "available pages %.0f MiB (free %.0f, file %.0f) %s the critical "
                 "level %.0f MiB, the compressor holding %.0f MiB%s",
                 TELL_MIB(free + PG(e, TRC_PG_FILE_LRU)), TELL_MIB(free),
                 TELL_MIB(PG(e, TRC_PG_FILE_LRU)),
                 free + PG(e, TRC_PG_FILE_LRU) < low ? "under" : "over", TELL_MIB(low),
                 TELL_MIB(PG(e, TRC_PG_SWAP_USED)),
                 PG(e, TRC_PG_THRASHING) > 0 ? ", the file cache thrashing" : "");
        return;
    }
    snprintf(buf, n, "free pages %.0f MiB %s the low watermark %.0f MiB, file pages %.0f MiB, "
             "zram %.0f MiB used, thrashing %lld %%", TELL_MIB(free),
             free < low ? "under" : "over", TELL_MIB(low), TELL_MIB(PG(e, TRC_PG_FILE_LRU)),
             TELL_MIB(PG(e, TRC_PG_SWAP_USED)), (long long)PG(e, TRC_PG_THRASHING));
}

/* What lmkd's reason says of the phone, for the kill named in the exit
 * (the page model's kills: docs/model.md "The phone's pages"). */
static const char *lmkd_says(const trc_event *e)
{
    static const char *const says[MDL_LMKD_COUNT] = {
        [MDL_LMKD_PRESSURE_AFTER_KILL] = "free pages stayed under the min watermark even after "
                                         "a kill",
        [MDL_LMKD_NOT_RESPONDING] = "the phone stalled on memory (a complete PSI stall: every "
                                    "task waiting on reclaim or on pages read back), so lmkd "
                                    "may kill down to the foreground",
        [MDL_LMKD_LOW_SWAP_AND_THRASHING] = "zram's free swap was low and the page cache "
                                            "thrashed (file pages read back as fast as they "
                                            "were dropped)",
        [MDL_LMKD_LOW_MEM_AND_SWAP] = "free pages were under the low watermark and zram's free "
                                      "swap under its low share",
        [MDL_LMKD_LOW_MEM_AND_THRASHING] = "free pages were under the low watermark and the page "
                                           "cache thrashed: the model's hot mapped weights, "
                                           "which it reads at every inference, kept coming back",
        [MDL_LMKD_DIRECT_RECL_AND_THRASHING] = "allocations reclaimed directly while the page "
                                               "cache thrashed",
        [MDL_LMKD_LOW_MEM_AND_SWAP_UTIL] = "free pages were under the low watermark with most "
                                           "anonymous memory in swap",
        [MDL_LMKD_LOW_FILECACHE_AFTER_THRASHING] = "the file cache stayed small after thrashing",
        [MDL_LMKD_LOW_MEM] = "free pages were under the low watermark"};
    mdl_lmkd_reason r;
    if (!(e->has & TRC_F_ERROR))
        return NULL;
    if (strcmp(e->error, "kernel_oom") == 0)
        return "an allocation nothing could meet: reclaim had nothing left, and the kernel's "
               "OOM killer took the largest process";
    return mdl_lmkd_reason_parse(e->error, &r) == SIM_OK ? says[r] : NULL;
}

/* The JetsamEvent's cause an exit event names ("jetsam_system:fc-thrashing",
 * "jetsam_pageshortage"), or "". */
static const char *jetsam_cause(const trc_event *e)
{
    if (!(e->has & TRC_F_ERROR))
        return "";
    if (strcmp(e->error, "jetsam_pageshortage") == 0)
        return "vm-pageshortage";
    const char *colon = strchr(e->error, ':');
    return colon != NULL ? colon + 1 : "";
}

/* The iPhone's page model: what memorystatus saw when it killed the app. */
static void xnu_why(const rpl_teller *t, const trc_event *e, long long counted, char *buf,
                    size_t n)
{
    const mdl_device *d = t->cell->device;
    const char *cause = jetsam_cause(e);
    const char *says = "memorystatus killed it for the system's memory health";
    if (strcmp(cause, "idle-exit") == 0)
        says = "it was in the idle band while available pages were under the idle level: "
               "memorystatus's idle-exit";
    else if (strcmp(cause, "vm-pageshortage") == 0)
        says = "available pages were under the critical level: memorystatus killed up the "
               "bands until it reached the app";
    else if (strcmp(cause, "fc-thrashing") == 0)
        says = "the file cache thrashed (mapped weights read back as fast as they were "
               "dropped): memorystatus killed the lowest band's process, the app";
    else if (strcmp(cause, "vm-compressor-space-shortage") == 0)
        says = "the compressor was out of space: memorystatus killed up the bands";
    int64_t avail = PG(e, TRC_PG_FREE) + PG(e, TRC_PG_FILE_LRU);
    snprintf(buf, n, "counted %lld MiB in band %lld; %.140s (available %.0f MiB: critical "
             "%.0f, idle %.0f; compressed %.0f MiB)", counted, (long long)PG(e, TRC_PG_ADJ), says,
             TELL_MIB(avail), TELL_MIB(PG(e, TRC_PG_LOW)), TELL_MIB(d->xnu_idle),
             TELL_MIB(PG(e, TRC_PG_SWAP_USED)));
}

/* A memory death, in the device's own terms: the limit crossed and by how
 * much, or the rule that fired. */
static void memory_why(const rpl_teller *t, const trc_event *e, rpl_class cls, char *buf,
                       size_t n)
{
    const mdl_device *d = t->cell->device;
    int fg = !t->bg;
    long long counted = (long long)e->rss_mb;
    long long line = (long long)(mdl_cell_kill_line(t->cell, fg) >> 20);
    const char *where = fg ? "foreground" : "background";
    if ((e->has & TRC_F_PROCESS) && strchr(e->process, ':') != NULL &&
        d->rule == MDL_KILL_LMK && !d->lmk_psi) {
        /* the model's service process: the level of its adj from its binding */
        const mdl_workload *wl = t->cell->workload;
        line = (long long)(mdl_cell_model_line(t->cell, fg) >> 20);
        where = wl->has_proc && wl->proc.waive_priority
                    ? "service, whose binding lends it no importance (adj 900)"
                : !fg ? "service bound by the app in the background"
                : wl->has_proc && wl->proc.important
                    ? "service importantly bound by the app in front (adj 0)"
                    : "service bound by the app in front (adj 100)";
    }
    if (cls == RPL_CLASS_KERNEL_OOM)
        snprintf(buf, n, "counted %lld MiB; free pages ran out before lmkd freed any: the "
                 "kernel's OOM killer (mark_victim) chose it", counted);
    else if (d->rule == MDL_KILL_JETSAM && d->xnu_pages &&
             (cls == RPL_CLASS_SYSTEM_RECLAIM || jetsam_cause(e)[0] != '\0'))
        xnu_why(t, e, counted, buf, n);
    else if (d->rule == MDL_KILL_JETSAM && cls == RPL_CLASS_SYSTEM_RECLAIM)
        snprintf(buf, n, "counted %lld MiB in the background, and free pages fell below "
                 "the %lld MiB idle level (with the app the user switched to): "
                 "memorystatus's idle-exit", counted,
                 (long long)((d->pageshortage + (1 << 19)) >> 20));
    else if (d->rule == MDL_KILL_JETSAM)
        snprintf(buf, n, "counted %lld MiB over the %lld MiB %s jetsam limit", counted,
                 (long long)((fg ? mdl_cell_kill_line(t->cell, 1)
                                 : mdl_device_jetsam_limit(d, 0)) >> 20),
                 where);
    else if (d->lmk_psi && lmkd_says(e) != NULL) {
        char pg[200];
        rpl__pages_text(e, pg, sizeof pg, t->cell->device->xnu_pages);
        snprintf(buf, n, "counted %lld MiB; %s (%s%s%lld%s%s)", counted, lmkd_says(e),
                 e->error, e->pages_has >> TRC_PG_ADJ & 1u ? ", adj " : "",
                 (long long)PG(e, TRC_PG_ADJ), pg[0] ? "; " : "", pg);
    }
    else if (d->lmk_psi)
        snprintf(buf, n, "counted %lld MiB; the page model killed it", counted);
    else if (counted > line)
        snprintf(buf, n, "counted %lld MiB over the %lld MiB lmk line of the %s (cached "
                 "apps reclaimed)", counted, line, where);
    else
        snprintf(buf, n, "counted %lld MiB, %lld MiB under the %lld MiB lmk line of the "
                 "%s: other apps' memory took the rest", counted, line - counted, line,
                 where);
}

/* What ended the process, in the device's own terms: the limit crossed
 * and by how much, or the rule that fired. */
void rpl__why_text(const rpl_teller *t, const trc_event *e, rpl_class cls, char *buf,
                     size_t n)
{
    const mdl_device *d = t->cell->device;
    int fg = !t->bg;
    long long counted = (long long)e->rss_mb;
    if (rpl_class_is_memory(cls)) {
        memory_why(t, e, cls, buf, n);
    } else if (cls == RPL_CLASS_JAVA_CRASH && t->last_java > 0 && (e->mem_has & 1u)) {
        /* what the heap held, and what the failing allocation asked of it */
        long long held = (long long)(e->mem[TRC_MEM_JAVA] >> 20);
        long long asked = (long long)(t->last_java >> 20);
        snprintf(buf, n, "the Java heap would hold %lld + %lld = %lld MiB and pass its %lld MiB "
                 "growth limit", held, asked, held + asked,
                 (long long)(d->java_heap_limit >> 20));
    } else if (cls == RPL_CLASS_JAVA_CRASH) {
        snprintf(buf, n, "the Java heap would pass its %lld MiB growth limit",
                 (long long)(d->java_heap_limit >> 20));
    } else if (cls == RPL_CLASS_ANR && (e->has & TRC_F_PROCESS) && strchr(e->process, ':')) {
        snprintf(buf, n, "the service's main thread ran a callback past ActiveServices' timeout "
                 "(%d s, with the app %s)", fg ? 20 : 200, fg ? "in front" : "in the background");
    } else if (cls == RPL_CLASS_ANR) {
        snprintf(buf, n, "an input event waited %.1f s behind the blocked main thread (the "
                 "model takes the user's touch as coming at once): the system declared the app "
                 "not responding, %s", (double)d->anr_timeout / 1e6,
                 fg ? "showed its dialog, and the process ended when the user closed it (taken "
                      "as at once)"
                    : "and killed it in the background, with no dialog");
    } else if (cls == RPL_CLASS_WATCHDOG) {
        snprintf(buf, n, "the launch took longer than the %.1f s watchdog",
                 (double)d->launch_watchdog / 1e6);
    } else if (cls == RPL_CLASS_NATIVE_CRASH) {
        snprintf(buf, n, "the delegate crashed in native code");
    } else if (!(e->has & TRC_F_EXIT) && !(e->has & TRC_F_ERROR)) {
        snprintf(buf, n, "no exit record names a cause (counted %lld MiB at the death; the "
                 "phone keeps no ApplicationExitInfo)", counted);
    } else {
        snprintf(buf, n, "the record names no memory cause");
    }
}

/* lmkd's "to free" of the app at its death: what it counts, less the GPU's
 * dma-bufs, which no rss counts (docs/model.md "Exit records"). */
long long rpl__lmkd_rss_kb(const rpl_teller *t, const trc_event *e)
{
    long long kb = (long long)e->rss_mb * 1024;
    if ((t->cell->device->counts_mask & MDL_CAT_BIT(MDL_CAT_GPU)) &&
        (e->mem_has >> TRC_MEM_GPU & 1u))
        kb -= (long long)(e->mem[TRC_MEM_GPU] >> 10);
    return kb;
}
