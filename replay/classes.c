/* classes.c - the death classes a diagnosis names and the recovery each
 * calls for: one name table for the classes (the six the model's deaths
 * have keep mdl_exit_name's names; "other" and "unknown" are the
 * diagnosis's own) and one table of recoveries, each with the sentence a
 * verdict gives and, for the drill's eight choices, its short form
 * (docs/model.md "Recovery", docs/on-call.md). */
#include "exits_int.h"

#include <string.h>
#include <strings.h>

/* The model's exit behind each class (-1: the diagnosis's own). */
static const int exit_of[RPL_CLASS_COUNT] = {
    [RPL_CLASS_LOW_MEMORY] = MDL_EXIT_LOW_MEMORY,
    [RPL_CLASS_SYSTEM_RECLAIM] = MDL_EXIT_SYSTEM_RECLAIM,
    [RPL_CLASS_JAVA_CRASH] = MDL_EXIT_JAVA_CRASH,
    [RPL_CLASS_NATIVE_CRASH] = MDL_EXIT_NATIVE_CRASH,
    [RPL_CLASS_ANR] = MDL_EXIT_ANR,
    [RPL_CLASS_WATCHDOG] = MDL_EXIT_WATCHDOG,
    [RPL_CLASS_KERNEL_OOM] = -1,
    [RPL_CLASS_OTHER] = -1,
    [RPL_CLASS_UNKNOWN] = -1,
};

const char *rpl_class_name(rpl_class c)
{
    if ((unsigned)c >= RPL_CLASS_COUNT)
        return "?";
    if (exit_of[c] >= 0)
        return mdl_exit_name((mdl_exit)exit_of[c]);
    return c == RPL_CLASS_KERNEL_OOM ? "kernel_oom" : c == RPL_CLASS_OTHER ? "other" : "unknown";
}

rpl_class rpl_class_of_exit(mdl_exit x)
{
    for (int c = 0; c < RPL_CLASS_COUNT; c++)
        if (exit_of[c] == (int)x)
            return (rpl_class)c;
    return RPL_CLASS_UNKNOWN;
}

/* What supports each class: why a chosen class that is not the death's
 * is not it (docs/on-call.md "Evidence levels"). */
static const char *const needs[RPL_CLASS_COUNT] = {
    [RPL_CLASS_LOW_MEMORY] = "a memory kill of the app in front (LOW_MEMORY below importance "
                             "400, an lmkd kill below adj 700, a frontmost JetsamEvent "
                             "whatever its cause) or over its own limit (per-process-limit, "
                             "in front or behind)",
    [RPL_CLASS_SYSTEM_RECLAIM] = "a kill of the app in the background: importance 400 and up, "
                                 "adj 700 and up, a JetsamEvent of the system's memory for a "
                                 "process not frontmost",
    [RPL_CLASS_JAVA_CRASH] = "a CRASH whose description is java.lang.OutOfMemoryError",
    [RPL_CLASS_NATIVE_CRASH] = "a CRASH_NATIVE record with a tombstone",
    [RPL_CLASS_ANR] = "an ANR record: the main thread blocked past its timeout",
    [RPL_CLASS_WATCHDOG] = "a launch watchdog report (0x8badf00d): a launch past its time",
    [RPL_CLASS_KERNEL_OOM] = "the kernel OOM killer's line, not lmkd's",
    [RPL_CLASS_OTHER] = "a reason that is no failure (EXIT_SELF, USER_REQUESTED, ...)",
    [RPL_CLASS_UNKNOWN] = "a death no record names a reason for",
};

const char *rpl__class_needs(rpl_class c)
{
    return (unsigned)c < RPL_CLASS_COUNT ? needs[c] : "?";
}

rpl_class rpl_class_parse(const char *s, int any_case)
{
    for (int c = 0; c < RPL_CLASS_COUNT; c++) {
        const char *name = rpl_class_name((rpl_class)c);
        if (any_case ? strcasecmp(s, name) == 0 : strcmp(s, name) == 0)
            return (rpl_class)c;
    }
    return RPL_CLASS_COUNT;
}

int rpl_class_is_memory(rpl_class c)
{
    return c == RPL_CLASS_LOW_MEMORY || c == RPL_CLASS_SYSTEM_RECLAIM ||
           c == RPL_CLASS_KERNEL_OOM;
}

/* Each recovery: the verdict's sentence, and the drill's short form
 * (NULL past the drill's choices). */
static const struct {
    const char *text, *choice;
} recoveries[RPL_REC_COUNT] = {
    [RPL_REC_START_UP] =
        {"a death during start-up, before any request: stop prewarm or start in safe mode "
         "(recovery: safe_mode), ship a smaller candidate, or fall back to the last known good; "
         "releasing idle parts does not help, nothing is idle yet",
         "stop prewarm or start in safe mode, a smaller candidate, or the last known good"},
    [RPL_REC_RELEASE_IDLE] =
        {"fewer resident models, sessions and tasks: release idle parts and reduce concurrency; "
         "retry only on a new condition",
         "fewer resident models, sessions and tasks: release idle parts, reduce concurrency"},
    [RPL_REC_RELEASE_IN_BACKGROUND] =
        {"a reclaim in the background is the system's right, not a failure to forbid: check "
         "that the app restores the user's state on relaunch (the page, the chat, the work "
         "half done), and release models when the app goes to the background so that it is "
         "reclaimed later and less often",
         "release models when the app goes to the background"},
    [RPL_REC_HEAP_OUT_OF_JAVA] = {"keep model bytes out of the Java heap (mmap or native buffers)",
                                  "keep model bytes out of the Java heap (mmap or native buffers)"},
    [RPL_REC_OFF_MAIN_THREAD] = {"move model work off the main thread",
                                 "move model work off the main thread"},
    [RPL_REC_ISOLATE_DELEGATE] =
        {"turn the GPU delegate off on the affected devices first (a remote switch by device "
         "model and driver) and serve from the CPU path, validated; keep the tombstone and "
         "symbolicate it; the last known good only with a complete receipt",
         "isolate the delegate: the CPU path or the last known good, keeping the evidence"},
    [RPL_REC_OUT_OF_LAUNCH] =
        {"take model work out of the launch: load after the first frame, off the main thread",
         "take model work out of the launch"},
    [RPL_REC_COLLECT_EVIDENCE] =
        {"reject new inference and keep the app usable; collect exit records before changing "
         "anything",
         "collect more evidence before changing anything"},
    [RPL_REC_NOT_MEMORY] = {"none for memory: the exit is not a memory failure", NULL},
    [RPL_REC_THRASHING] =
        {"the phone thrashed or stalled on memory: mapped weights read at every token are memory "
         "the app holds; count them in the plan, and use a smaller model (or fewer mapped "
         "layers) on this device",
         NULL},
    [RPL_REC_SWAP_LOW] =
        {"lmkd killed because swap (zram) was nearly full: it fills with anonymous memory, the "
         "heaps, the KV cache and copied weights; hold less of it (map the weights rather than "
         "copy them, a smaller or quantised KV cache) and release what is idle",
         NULL},
    [RPL_REC_CACHED] =
        {"lmkd's low-memory kill takes cached apps only: the app was in the background, not "
         "visible; check that it restores the user's state on relaunch, and release models "
         "when it goes to the background so that it is reclaimed later and less often",
         NULL},
    [RPL_REC_KERNEL_OOM] =
        {"the kernel's OOM killer ran, not lmkd: memory ran out faster than lmkd could free it "
         "(an allocation burst, or lmkd not keeping up); cut the peak of one step (load and "
         "prepare in pieces, never two working sets at once), not only the memory held",
         NULL},
    [RPL_REC_ISOLATED] =
        {"an isolated process (a sandboxed WebView renderer or an isolated service) died, not "
         "the app, which lives on: look at what that process held (its page, its service's "
         "work); the model's memory in the app's process is not the cause",
         NULL},
    [RPL_REC_SWAP_THRASHING] =
        {"lmkd killed because swap (zram) was full and the page cache thrashed: with swap "
         "full, anonymous memory (the heaps, the KV cache, copied weights) can no longer be "
         "pushed out, so reclaim takes the page cache and reads it back; hold less anonymous "
         "memory first (map the weights rather than copy them, a smaller or quantised KV "
         "cache, release what is idle), then count the mapped weights read at every token in "
         "the plan",
         NULL},
    [RPL_REC_STALE_CACHE] =
        {"key the compiled cache by the model digest, the runtime and the OS version, so that "
         "an update invalidates it and it is rebuilt once, not an outage; until that ships, the "
         "remote kill switch, and clearing the refused artefact lets the next start rebuild it",
         NULL},
};

/* lmkd's reasons that mean the phone thrashed or stalled on memory: the
 * page cache refaulting (the thrashing branches) or a complete stall. */
int rpl_lmkd_thrashed(const char *reason)
{
    mdl_lmkd_reason r;
    if (mdl_lmkd_reason_parse(reason, &r) != SIM_OK)
        return 0;
    return r == MDL_LMKD_LOW_MEM_AND_THRASHING || r == MDL_LMKD_LOW_SWAP_AND_THRASHING ||
           r == MDL_LMKD_DIRECT_RECL_AND_THRASHING ||
           r == MDL_LMKD_LOW_FILECACHE_AFTER_THRASHING || r == MDL_LMKD_NOT_RESPONDING;
}

const char *rpl_recovery_text(rpl_recovery r)
{
    return (unsigned)r < RPL_REC_COUNT ? recoveries[r].text : "?";
}

const char *rpl_recovery_choice(rpl_recovery r)
{
    return (unsigned)r < RPL_REC_DRILL_CHOICES ? recoveries[r].choice : NULL;
}

rpl_recovery rpl_recovery_of(rpl_class c)
{
    static const rpl_recovery of[RPL_CLASS_COUNT] = {
        [RPL_CLASS_LOW_MEMORY] = RPL_REC_RELEASE_IDLE,
        [RPL_CLASS_SYSTEM_RECLAIM] = RPL_REC_RELEASE_IN_BACKGROUND,
        [RPL_CLASS_JAVA_CRASH] = RPL_REC_HEAP_OUT_OF_JAVA,
        [RPL_CLASS_NATIVE_CRASH] = RPL_REC_ISOLATE_DELEGATE,
        [RPL_CLASS_ANR] = RPL_REC_OFF_MAIN_THREAD,
        [RPL_CLASS_WATCHDOG] = RPL_REC_OUT_OF_LAUNCH,
        [RPL_CLASS_KERNEL_OOM] = RPL_REC_KERNEL_OOM,
        [RPL_CLASS_OTHER] = RPL_REC_NOT_MEMORY,
        [RPL_CLASS_UNKNOWN] = RPL_REC_COLLECT_EVIDENCE,
    };
    return (unsigned)c < RPL_CLASS_COUNT ? of[c] : RPL_REC_COLLECT_EVIDENCE;
}


/* lmkd's reason as the record names it: the kill line's (x->lmkd), or a
 * trace's "lmkd: REASON" description. */
static mdl_lmkd_reason lmkd_reason_of(const rpl_exit *x)
{
    mdl_lmkd_reason r = MDL_LMKD_NONE;
    if (x->lmkd != MDL_LMKD_NONE)
        return x->lmkd;
    if (strncmp(x->description, "lmkd: ", 6) == 0 &&
        mdl_lmkd_reason_parse(x->description + 6, &r) != SIM_OK)
        r = MDL_LMKD_NONE;
    return r;
}

rpl_recovery rpl_advise(rpl_class c, const rpl_exit *x, int started)
{
    if (rpl_exit_isolated(x))
        return RPL_REC_ISOLATED;
    if (started == 0 && (c == RPL_CLASS_LOW_MEMORY || c == RPL_CLASS_KERNEL_OOM))
        return RPL_REC_START_UP; /* a background kill (system_reclaim) is not the start's */
    if (c == RPL_CLASS_KERNEL_OOM)
        return RPL_REC_KERNEL_OOM;
    if (rpl_class_is_memory(c)) {
        mdl_lmkd_reason r = lmkd_reason_of(x);
        if (r == MDL_LMKD_LOW_SWAP_AND_THRASHING) /* swap full: the anonymous memory first */
            return RPL_REC_SWAP_THRASHING;
        if (rpl_lmkd_thrashed(mdl_lmkd_reason_name(r)))
            return RPL_REC_THRASHING;
        if (r == MDL_LMKD_LOW_MEM_AND_SWAP || r == MDL_LMKD_LOW_MEM_AND_SWAP_UTIL)
            return RPL_REC_SWAP_LOW;
        if (r == MDL_LMKD_LOW_MEM && c == RPL_CLASS_SYSTEM_RECLAIM)
            return RPL_REC_CACHED; /* lmkd's low-memory branch spares the visible ones */
        if (strstr(x->description, "stuck in direct reclaim") != NULL)
            return RPL_REC_THRASHING; /* DIRECT_RECL_STUCK (Android 15): a stall */
        if (strcmp(x->cause, "fc-thrashing") == 0 ||
            strcmp(x->cause, "vm-compressor-thrashing") == 0)
            return RPL_REC_THRASHING;
    }
    return rpl_recovery_of(c);
}

rpl_recovery rpl_recovery_fitting(rpl_class c, const rpl_exit *x, int started)
{
    rpl_recovery r = rpl_advise(c, x, started);
    if (r < RPL_REC_DRILL_CHOICES)
        return r;
    if (r == RPL_REC_CACHED)
        return RPL_REC_RELEASE_IN_BACKGROUND;
    if (r == RPL_REC_THRASHING || r == RPL_REC_SWAP_LOW || r == RPL_REC_KERNEL_OOM ||
        r == RPL_REC_SWAP_THRASHING)
        return RPL_REC_RELEASE_IDLE;
    return RPL_REC_COLLECT_EVIDENCE; /* the drill's choices have no "not memory" */
}

const char *rpl_recovery_for(rpl_recovery r)
{
    static const char *const fors[RPL_REC_DRILL_CHOICES] = {
        [RPL_REC_START_UP] = "a memory death during start-up, before any request",
        [RPL_REC_RELEASE_IDLE] = "low_memory after the start: too much held at once",
        [RPL_REC_RELEASE_IN_BACKGROUND] = "system_reclaim: a kill of the app in the background",
        [RPL_REC_HEAP_OUT_OF_JAVA] = "java_crash: the Java heap past its growth limit",
        [RPL_REC_OFF_MAIN_THREAD] = "anr: a main thread blocked past its timeout",
        [RPL_REC_ISOLATE_DELEGATE] = "native_crash: a crash in the delegate's code",
        [RPL_REC_OUT_OF_LAUNCH] = "watchdog: a launch past its time",
        [RPL_REC_COLLECT_EVIDENCE] = "an unknown death: no record names a reason",
    };
    return (unsigned)r < RPL_REC_DRILL_CHOICES ? fors[r] : "?";
}

int rpl_exit_isolated(const rpl_exit *x)
{
    return strstr(x->process, ":sandboxed_process") != NULL ||
           strstr(x->process, ":isolated") != NULL || (x->uid >= 99000 && x->uid <= 99999);
}

/* The names live with the exit records the model writes (models/names.c). */
const char *rpl_reason_name(int code) { return mdl_aei_reason_name(code); }

static const char *const ios_names[RPL_IOS_COUNT][2] = {
    {"jetsam", "JetsamEvent (per-process-limit)"},
    {"exc_resource", "EXC_RESOURCE RESOURCE_TYPE_MEMORY report"},
    {"watchdog", "watchdog termination (0x8badf00d)"},
    {"crash", "crash report (EXC_BAD_ACCESS)"},
    {"jetsam_pageshortage", "JetsamEvent (vm-pageshortage)"},
    {"jetsam_system", "JetsamEvent (the system's memory health)"},
    {"metrickit_background", "no JetsamEvent: MetricKit's cumulativeMemoryPressureExitCount "
                             "in backgroundExitData"}};

const char *rpl_ios_report_name(rpl_ios_report r)
{
    return (unsigned)r < RPL_IOS_COUNT ? ios_names[r][1] : "?";
}

const char *rpl__ios_report_key(rpl_ios_report r)
{
    return (unsigned)r < RPL_IOS_COUNT ? ios_names[r][0] : "?";
}
