/* why.c - what ended a process, in the device's own terms, as `explain`
 * tells it at each death: the limit or line crossed and by how much, the
 * lmkd or memorystatus rule that fired, the heap, the timeout, or that no
 * record names a cause. */
#include "tell_int.h"

#include <stdarg.h>
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
        snprintf(buf, n, "counted %lld MiB; an allocation found no free page even after direct "
                 "reclaim, sooner than lmkd (one kill a wake-up) could free enough: the "
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
    else /* the line leaves out what is not counted: the app's mapped files too */
        snprintf(buf, n, "counted %lld MiB, %lld MiB under the %lld MiB lmk line of the "
                 "%s: %s took the rest", counted, line - counted, line, where,
                 (e->mem_has >> TRC_MEM_FILE & 1u) && e->mem[TRC_MEM_FILE] > 0
                     ? "other apps' memory and the app's own mapped file pages (resident, "
                       "not counted)"
                     : "other apps' memory");
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

/* A line of the record, into line k; the next k. */
static unsigned put(char lines[TELL_RECORD_LINES][TELL_LINE_MAX], unsigned k, const char *fmt,
                    ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
static unsigned put(char lines[TELL_RECORD_LINES][TELL_LINE_MAX], unsigned k, const char *fmt,
                    ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(lines[k], TELL_LINE_MAX, fmt, ap);
    va_end(ap);
    return k + 1;
}

/* The adj lmkd logs for the app's kill when the trace carries no line of
 * its own: 700 (previous app) in the background (importance 400 and up), 0
 * in the foreground, 100 for a service bound by the app in front (its
 * importance is the foreground's too), 900 for one whose binding waives
 * the app's priority. */
static int logged_adj(const rpl_teller *t, const trc_event *e, const rpl_exit *x)
{
    int svc = (e->has & TRC_F_PROCESS) && strchr(e->process, ':') != NULL;
    return svc && t->cell->workload->proc.waive_priority ? 900
           : x->importance >= 400                      ? 700
           : svc && !t->cell->workload->proc.important ? 100
                                                       : 0;
}

unsigned rpl__record_lines(const rpl_teller *t, const trc_event *e, const rpl_exit *x,
                           char lines[TELL_RECORD_LINES][TELL_LINE_MAX])
{
    const char *who = (e->has & TRC_F_PROCESS) && e->process[0] ? e->process : "(unnamed)";
    const char *build = (e->has & TRC_F_APP_VERSION) ? e->app_version : "";
    int hide = t->quiz == 2; /* the drill: what the record is, not what it names */
    if (x->source == RPL_EXIT_INFO && !(e->has & TRC_F_EXIT)) {
        unsigned k = put(lines, 0, "  no exit record: the phone keeps no ApplicationExitInfo "
                         "(Android 10 or older)%s", (e->has & TRC_F_LOG)
                         ? "; lmkd's kill line is in its log" : "");
        if (!(e->has & TRC_F_LOG))
            return k;
        return hide ? put(lines, k, "  lmkd logs a kill of '%s' (its adj and reason hidden)", who)
                    : put(lines, k, "  lmkd logs: %s", e->log);
    }
    if (x->source == RPL_IOS) { /* a crash report's header names the version; a JetsamEvent none */
        char version[TRC_TEXT_MAX + 40] = " (a JetsamEvent names no app version)";
        int jetsam = x->ios == RPL_IOS_JETSAM || x->ios == RPL_IOS_JETSAM_PAGESHORTAGE ||
                     x->ios == RPL_IOS_JETSAM_SYSTEM;
        if (!jetsam && build[0])
            snprintf(version, sizeof version, " (app version %s in its header)", build);
        else if (!jetsam)
            snprintf(version, sizeof version, " (its header names no version)");
        if (hide && x->ios == RPL_IOS_METRICKIT)
            return put(lines, 0, "  the system's record: (its kind hidden) of %s, no "
                       "footprint", who);
        if (hide)
            return put(lines, 0, "  the system's report: (its kind hidden) of %s, footprint "
                       "%lld kB at the kill", who, (long long)x->pss_kb);
        if (x->ios == RPL_IOS_METRICKIT)
            return put(lines, 0, "  no JetsamEvent: memorystatus posts none for a kill in the "
                       "idle band (here %s); the next MetricKit payload of %s counts it in "
                       "backgroundExitData.cumulativeMemoryPressureExitCount (no time, no "
                       "footprint, no cause)", jetsam_cause(e)[0] ? jetsam_cause(e) : "its cause",
                       who);
        if (x->cause[0] != '\0')
            return put(lines, 0, "  the system's report: JetsamEvent (%s) of %s, footprint %lld "
                       "kB at the kill%s", x->cause, who, (long long)x->pss_kb, version);
        return put(lines, 0, "  the system's report: %s of %s, footprint %lld kB at the kill%s",
                   rpl_ios_report_name(x->ios), who, (long long)x->pss_kb, version);
    }
    /* dumpsys activity exit-info prints no version: the app's own upload
     * of the record (getHistoricalProcessExitReasons) adds its build */
    char head[TRC_TEXT_MAX + 128] = "ApplicationExitInfo (no app version: dumpsys prints none)";
    if (build[0])
        snprintf(head, sizeof head, "ApplicationExitInfo of app version %s (dumpsys prints "
                 "none: the app's upload of the record adds it)", build);
    const char *sample = x->pss_kb == 0 ? ": none before the death" : "";
    unsigned k;
    if (hide)
        k = put(lines, 0, "  %s: process=%s reason=(hidden) status=%d importance=(hidden) "
                "pss=%lldkB rss=%lldkB%s (the last periodic sample%s)", head, who, x->status,
                (long long)x->pss_kb, (long long)x->rss_kb,
                x->description[0] ? " description=(hidden)" : "", sample);
    else
        k = put(lines, 0, "  %s: process=%s reason=%d (%s) status=%d importance=%d pss=%lldkB "
                "rss=%lldkB%s%s%s (the last periodic sample%s)", head, who, x->reason_code,
                rpl_reason_name(x->reason_code), x->status, x->importance,
                (long long)x->pss_kb, (long long)x->rss_kb,
                x->description[0] ? " description=\"" : "", x->description,
                x->description[0] ? "\"" : "", sample);
    if (hide)
        return (e->has & TRC_F_LOG) || x->reason_code == MDL_AEI_LOW_MEMORY
                   ? put(lines, k, "  lmkd logs a kill of '%s' (its adj and reason hidden)", who)
                   : k;
    if (e->has & TRC_F_LOG) /* the page model's kill: lmkd's own line */
        return put(lines, k, "  lmkd logs: %s", e->log);
    if (x->reason_code == MDL_AEI_LOW_MEMORY) /* lmkd reports its kills so */
        return put(lines, k, "  lmkd logs: Kill '%s', oom_score_adj %d to free %lldkB rss", who,
                   logged_adj(t, e, x), rpl__lmkd_rss_kb(t, e));
    return k;
}
