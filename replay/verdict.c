/* verdict.c - what an exit record tells (docs/traces.md "oomsim
 * diagnose"): its death class by the record's kind (an ApplicationExitInfo
 * record, an lmkd line, an iOS report or JetsamEvent), the evidence level
 * with the match to a trace's death, what is missing to say more, and the
 * recovery ladder's advice.  match.c finds the death; this file judges. */
#include "exits_int.h"

#include <stdio.h>
#include <string.h>

static int contains(const char *s, const char *what) { return strstr(s, what) != NULL; }

/* XNU's kill causes by class: over the process's own limit, the system
 * reclaiming memory (its pages, its compressor, its file cache), or not
 * memory at all. */
static rpl_class class_of_cause(const char *cause)
{
    static const char *const own[] = {"per-process-limit", "highwater"};
    static const char *const other[] = {"vnode-limit", "disk-space-shortage", "jettisoned"};
    for (size_t k = 0; k < sizeof own / sizeof *own; k++)
        if (strcmp(cause, own[k]) == 0)
            return RPL_CLASS_LOW_MEMORY;
    for (size_t k = 0; k < sizeof other / sizeof *other; k++)
        if (strcmp(cause, other[k]) == 0)
            return RPL_CLASS_OTHER;
    mdl_jetsam_cause c;
    return mdl_jetsam_cause_parse(cause, &c) == SIM_OK ? RPL_CLASS_SYSTEM_RECLAIM
                                                       : RPL_CLASS_UNKNOWN;
}

/* An entry of a JetsamEvent report (.ips): killed with a cause, or listed
 * only (not killed in this event), or not listed at all. */
static rpl_class classify_jetsam_event(const rpl_exit *x, rpl_verdict *v, int *level)
{
    /* the names cut to 40 bytes on a character's start: the sentence fits */
    char name[41], big[41], states[41], largest[96] = "";
    rpl__utf8_copy(name, sizeof name, x->process);
    rpl__utf8_copy(big, sizeof big, x->largest);
    rpl__utf8_copy(states, sizeof states, x->states[0] ? x->states : "in no state given");
    if (x->largest[0] != '\0' && strcmp(x->largest, x->process) != 0)
        snprintf(largest, sizeof largest, "; another process was the largest (%s)", big);
    else if (x->largest[0] != '\0')
        snprintf(largest, sizeof largest, "; it was the largest process");
    if (!x->jetsam_listed) {
        *level = 0;
        snprintf(v->supports, sizeof v->supports, "nothing: the JetsamEvent does not list %s "
                 "(not running when the event was written)%s", name, largest);
        return RPL_CLASS_UNKNOWN;
    }
    if (x->cause[0] == '\0') {
        *level = 0;
        snprintf(v->supports, sizeof v->supports, "nothing: %s is listed in the JetsamEvent "
                 "(%s) but not killed in this event%s", name, states, largest);
        return RPL_CLASS_UNKNOWN;
    }
    rpl_class cls = class_of_cause(x->cause);
    int front = strstr(x->states, "frontmost") != NULL;
    if (cls == RPL_CLASS_SYSTEM_RECLAIM && front)
        cls = RPL_CLASS_LOW_MEMORY; /* the app in front: a foreground death */
    /* memorystatus_pick_action (kern_memorystatus_policy.c) kills over a
     * high-water mark only below the pressure level or when the system is
     * unhealthy: the soft limit alone kills nothing */
    const char *what = strcmp(x->cause, "highwater") == 0
                           ? "over its high-water mark, its soft limit, which kills only when "
                             "the system is under memory pressure"
                       : cls == RPL_CLASS_LOW_MEMORY
                           ? front && strcmp(x->cause, "per-process-limit") != 0
                                 ? "reclaimed down to the app in front"
                                 : "over its own footprint limit"
                       : cls == RPL_CLASS_SYSTEM_RECLAIM
                           ? "the system reclaiming memory, the cause named"
                       : cls == RPL_CLASS_OTHER ? "a cause that is not memory"
                                                : "a cause this version does not know";
    if (cls == RPL_CLASS_UNKNOWN)
        *level = 0;
    snprintf(v->supports, sizeof v->supports, "a JetsamEvent with reason %s (%s), the process "
             "%s%s", x->cause, what, states, largest);
    return cls;
}

/* An iOS report's class: its cause is named (an EXC_RESOURCE report alone
 * proves no death: *level 0). */
static rpl_class classify_ios(const rpl_exit *x, rpl_verdict *v, int *level)
{
    if (x->jetsam_event)
        return classify_jetsam_event(x, v, level);
    /* iOS reports name their cause: a per-process-limit kill is
     * low_memory in the foreground and the background alike, a
     * page-shortage kill of the idle band is system_reclaim; an
     * EXC_RESOURCE report alone proves no death */
    static const rpl_class cls_of[RPL_IOS_COUNT] = {
        RPL_CLASS_LOW_MEMORY, RPL_CLASS_UNKNOWN, RPL_CLASS_WATCHDOG, RPL_CLASS_NATIVE_CRASH,
        RPL_CLASS_SYSTEM_RECLAIM, RPL_CLASS_SYSTEM_RECLAIM, RPL_CLASS_SYSTEM_RECLAIM};
    static const char *const what[RPL_IOS_COUNT] = {
        "jetsam ended the process over its per-process footprint limit",
        ("the footprint crossed a memory threshold; that report is a diagnostic, not a "
         "kill: the death needs its JetsamEvent"),
        "the launch took longer than the watchdog allows",
        "the process crashed",
        "memorystatus killed processes up the bands until available pages were above "
        "critical",
        "memorystatus killed the process for the system's memory health",
        ("no JetsamEvent: a kill in the idle band posts none (kern.jetsam_idle_snapshot "
         "is off on phones); MetricKit counts it in the day's backgroundExitData."
         "cumulativeMemoryPressureExitCount, with no time and no footprint")};
    rpl_class cls = cls_of[x->ios];
    /* the app in front killed for the system's pages: a foreground death */
    int front = x->has_importance && x->importance < 400;
    if (cls == RPL_CLASS_SYSTEM_RECLAIM && front)
        cls = RPL_CLASS_LOW_MEMORY;
    if (x->ios == RPL_IOS_EXC_RESOURCE)
        *level = 0;
    const char *name = rpl_ios_report_name(x->ios);
    if (x->ios == RPL_IOS_JETSAM_SYSTEM && x->cause[0] != '\0') {
        snprintf(v->supports, sizeof v->supports, "a JetsamEvent with reason %.31s: %s",
                 x->cause, what[x->ios]);
        rpl_class named = class_of_cause(x->cause);
        if (named == RPL_CLASS_UNKNOWN || (named == RPL_CLASS_SYSTEM_RECLAIM && front))
            return cls;
        return named;
    }
    if (x->ios == RPL_IOS_METRICKIT)
        snprintf(v->supports, sizeof v->supports, "%s", what[x->ios]);
    else
        snprintf(v->supports, sizeof v->supports, "%s %s: %s",
                 strchr("AEIOU", name[0]) != NULL ? "an" : "a", name, what[x->ios]);
    return cls;
}

/* An ApplicationExitInfo record's class, by its reason (bg: importance
 * 400 or more, the app in the background). */
static rpl_class classify_exit_info(const rpl_exit *x, rpl_verdict *v, int *level, int bg)
{
    rpl_class cls = RPL_CLASS_UNKNOWN;
    switch (x->reason_code) {
    case 3:
        cls = bg ? RPL_CLASS_SYSTEM_RECLAIM : RPL_CLASS_LOW_MEMORY;
        snprintf(v->supports, sizeof v->supports, "a LOW_MEMORY exit record%s",
                 bg ? " while the app was in the background (importance >= 400)" : "");
        break;
    case 2:
        if (x->has_status && x->status == 9) {
            cls = bg ? RPL_CLASS_SYSTEM_RECLAIM : RPL_CLASS_LOW_MEMORY;
            snprintf(v->supports, sizeof v->supports, "SIGNALED with status 9: a kill, "
                     "maybe for memory (other killers send signal 9 too)");
            *level = 1;
        } else {
            cls = RPL_CLASS_OTHER;
            snprintf(v->supports, sizeof v->supports, "SIGNALED: a signal that is not a "
                     "memory kill");
        }
        break;
    case 4:
        if (contains(x->description, "OutOfMemoryError")) {
            cls = RPL_CLASS_JAVA_CRASH;
            snprintf(v->supports, sizeof v->supports, "a CRASH with OutOfMemoryError: the "
                     "Java heap was full");
        } else {
            cls = RPL_CLASS_OTHER;
            snprintf(v->supports, sizeof v->supports, "a Java CRASH that is not an "
                     "OutOfMemoryError: not a memory class");
        }
        break;
    case 5:
        cls = RPL_CLASS_NATIVE_CRASH;
        snprintf(v->supports, sizeof v->supports, "a CRASH_NATIVE record");
        break;
    case 6:
        cls = RPL_CLASS_ANR;
        snprintf(v->supports, sizeof v->supports, "an ANR record: the main thread was "
                 "blocked");
        break;
    case -1:
    case 0:
        cls = RPL_CLASS_UNKNOWN;
        *level = 0;
        snprintf(v->supports, sizeof v->supports, "nothing: the record gives no reason");
        break;
    default:
        cls = RPL_CLASS_OTHER;
        snprintf(v->supports, sizeof v->supports, "reason %s: the process ended for a "
                 "reason that is not memory", rpl_reason_name(x->reason_code));
        break;
    }
    return cls;
}

/* The class the record supports (docs/traces.md "oomsim diagnose"), with what
 * supports it in v->supports; *level: 1 supported, 0 unconfirmed. */
static rpl_class classify(const rpl_exit *x, rpl_verdict *v, int *level)
{
    int bg = x->has_importance && x->importance >= 400;
    if (x->source == RPL_IOS)
        return classify_ios(x, v, level);
    char name[41];
    rpl__utf8_copy(name, sizeof name, x->process);
    if (x->source == RPL_KERNEL) {
        snprintf(v->supports, sizeof v->supports, "the kernel's OOM killer killed %s (pid %lld): "
                 "lmkd did not free memory in time", name, (long long)x->pid);
        return RPL_CLASS_KERNEL_OOM;
    }
    if (x->source == RPL_LMKD) {
        char who[80], why[RPL_TEXT_MAX + 40] = "";
        if (name[0] != '\0')
            snprintf(who, sizeof who, "%s", name);
        else /* killinfo gives no name */
            snprintf(who, sizeof who, "pid %lld (uid %lld; killinfo names no process)",
                     (long long)x->pid, (long long)x->uid);
        if (x->lmkd != MDL_LMKD_NONE)
            snprintf(why, sizeof why, ", reason %s", mdl_lmkd_reason_name(x->lmkd));
        else if (x->description[0] != '\0') /* a vendor's words, or the older forms' */
            snprintf(why, sizeof why, ", in its own words \"%.*s\"", 100, x->description);
        snprintf(v->supports, sizeof v->supports, "an lmkd kill of %.79s at oom_score_adj %d%s%.100s",
                 who, x->adj, x->has_adj ? "" : " (adj not given)", why);
        return x->has_adj && x->adj >= 700 ? RPL_CLASS_SYSTEM_RECLAIM : RPL_CLASS_LOW_MEMORY;
    }
    rpl_class c = classify_exit_info(x, v, level, bg);
    if (x->kernel_oom && rpl_class_is_memory(c)) {
        c = RPL_CLASS_KERNEL_OOM;
        *level = 1;
        snprintf(v->supports, sizeof v->supports, "SIGNALED with status 9 and the kernel's OOM "
                 "killer named for it: lmkd did not free memory in time");
    }
    if (x->joined_line > 0 && rpl_class_is_memory(c)) {
        /* the kill line is the system's own account of the same death */
        char gap[48] = "the line has no time";
        if (x->joined_gap_ms >= 0)
            snprintf(gap, sizeof gap, "%.1f s apart", (double)x->joined_gap_ms / 1e3);
        size_t used = strlen(v->supports);
        snprintf(v->supports + used, sizeof v->supports - used, "; %s line %llu, the same pid "
                 "(%s)%s%s", x->joined_source == RPL_KERNEL ? "the kernel's OOM kill" :
                 "lmkd's kill", (unsigned long long)x->joined_line, gap,
                 x->lmkd != MDL_LMKD_NONE ? ": " : "",
                 x->lmkd != MDL_LMKD_NONE ? mdl_lmkd_reason_name(x->lmkd) : "");
        *level = 2;
    }
    return c;
}

const char *rpl_class_missing(const rpl_exit *x, rpl_class cls)
{
    if (cls == RPL_CLASS_UNKNOWN)
        return "everything: no record names a reason";
    if (cls == RPL_CLASS_WATCHDOG)
        return "the main-thread work of the launch that took the time";
    if (cls == RPL_CLASS_JAVA_CRASH)
        return "the device's heap growth limit";
    if (cls == RPL_CLASS_NATIVE_CRASH)
        return "the tombstone: the delegate or path that crashed";
    if (cls == RPL_CLASS_ANR)
        return "the main-thread trace of the blocking stage";
    if (rpl_class_is_memory(cls) && x->source == RPL_EXIT_INFO && x->reason_code == 2)
        return "a LOW_MEMORY record or an lmkd line: signal 9 alone does not name memory";
    return NULL;
}

/* What is missing to confirm the class: the class's own evidence, after
 * the trace when none matches. */
static void missing(const rpl_exit *x, const rpl_trace_exits *t, const trace_exit *m,
                    rpl_class cls, rpl_verdict *v)
{
    int memory = rpl_class_is_memory(cls);
    const char *own = rpl_class_missing(x, cls);
    if (x->source == RPL_IOS && x->ios == RPL_IOS_EXC_RESOURCE)
        snprintf(v->missing, sizeof v->missing, "the JetsamEvent written at the death: an "
                 "EXC_RESOURCE report does not end the process");
    else if (x->jetsam_event && x->cause[0] == '\0')
        snprintf(v->missing, sizeof v->missing, "a record of a death: this JetsamEvent did not "
                 "kill the process (look for the report written when it died)");
    else if (cls == RPL_CLASS_UNKNOWN)
        snprintf(v->missing, sizeof v->missing, "everything: no record names a reason");
    else if (m == NULL)
        snprintf(v->missing, sizeof v->missing, "%s%s%s",
                 t != NULL ? "a trace exit of the same process within 5 s: the record does not "
                             "match the timeline"
                 : memory ? "a stage trace of the same process and time: the stage and the "
                            "allocation that raised memory are not known"
                          : "a stage trace of the same process and time: the stage that was "
                            "running is not known",
                 own != NULL ? "; and " : "", own != NULL ? own : "");
    else
        snprintf(v->missing, sizeof v->missing, "%s", own != NULL ? own : "nothing for the class");
}

void rpl__verdict_of(const rpl_exit *x, const rpl_trace_exits *t, const trace_exit *m,
                     const char *on, int own, const rpl__outbid *closer,
                     const trace_exit *other, rpl_verdict *v)
{
    memset(v, 0, sizeof *v);
    v->matched_on = "";
    int level = 1; /* 2 confirmed, 1 supported, 0 unconfirmed */
    rpl_class cls = classify(x, v, &level);
    v->own_record = own;
    if (m != NULL) {
        v->matched = 1;
        v->matched_on = own ? "the simulator's own record of this death" : on;
        snprintf(v->matched_stage, sizeof v->matched_stage, "%s", m->stage);
        /* SIGNALED 9 stays "supported" even when it matches: it does not
         * name memory (docs/traces.md "oomsim diagnose") */
        if (level == 1 && (!(x->source == RPL_EXIT_INFO && x->reason_code == 2) ||
                           cls == RPL_CLASS_KERNEL_OOM))
            level = 2;
    }
    /* dumpsys exit-info prints no version: such a record ties to a build
     * only when the trace ran one */
    int versionless = m != NULL && !own && x->source == RPL_EXIT_INFO &&
                      x->app_version[0] == '\0' && t != NULL && t->builds > 0;
    if (versionless && t->builds > 1 && level > 1)
        level = 1;
    v->kind = cls;
    v->cls = rpl_class_name(cls);
    v->evidence = level == 2 ? "confirmed" : level == 1 ? "supported" : "unconfirmed";
    missing(x, t, m, cls, v);
    if (versionless && t->builds > 1)
        snprintf(v->missing, sizeof v->missing, "the app version: the record names none, and "
                 "the trace ran two builds or more, so which build died is not known (the "
                 "app's own log of its version at start would tie it)");
    else if (versionless) {
        size_t used = strlen(v->missing);
        snprintf(v->missing + used, sizeof v->missing - used, " (the record names no version: "
                 "tied to the trace's only build, %.40s)", t->build);
    }
    if (closer != NULL) {
        v->outbid = 1;
        snprintf(v->missing, sizeof v->missing, "a death of its own in the trace: the death "
                 "nearest to it (%.3f s away) is matched by a record nearer to it (%.3f s "
                 "away), and no other death fits it; one record per death",
                 (double)closer->mine_ms / 1e3, (double)closer->theirs_ms / 1e3);
    } else if (other != NULL) {
        snprintf(v->missing, sizeof v->missing, "a trace of the same app version: the trace "
                 "has a death of this process at this time, of another version (%.40s here, "
                 "%.40s in the trace)", x->app_version, other->app_version);
    }
    /* the one source of advice (docs/model.md "Recovery"): the stage and
     * the start from the matching timeline, when there is one */
    v->started = m != NULL ? m->started : -1;
    v->rec = rpl_advise(cls, x, v->started);
    rpl_ladder_of(v->rec, (m != NULL ? m->signs : 0) | rpl_record_signs(cls, x, v->started),
                  &v->ladder);
    v->recovery = v->ladder.fix; /* one advice: the ladder's, the mode's own fix */
}
