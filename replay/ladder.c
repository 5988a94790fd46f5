/* ladder.c - the one recovery ladder `explain`, `diagnose` and the drill
 * all print: four steps in the order of their reversibility (reject new
 * inference; stop prewarm and extra sessions; release idle parts and clear
 * rebuildable inactive caches; fall back to the last known good only with
 * a complete receipt), the step a death calls for marked with why the
 * steps before it do not suffice, then the failure mode's own fix.  The
 * step and fix come from one table, the verdict table: the verdict's
 * recovery (class, foreground or background, start-up or not, lmkd's
 * reason or XNU's cause) against what the death's life and record showed
 * (RPL_SIGN_*), first row that fits (docs/on-call.md "The verdict
 * table"). */
#include "exits_int.h"

#include <string.h>

static const char *const steps[RPL_STEP_COUNT] = {
    [RPL_STEP_NONE] = "",
    [RPL_STEP_REJECT] = "reject new inference: keep the app usable, start no new request",
    [RPL_STEP_STOP_EXTRA] = "stop prewarm and extra sessions",
    [RPL_STEP_CLEAR_CACHES] = "release idle parts and clear rebuildable inactive caches",
    [RPL_STEP_LAST_GOOD] = "fall back to the last known good, only with a complete receipt",
};

const char *rpl_step_name(rpl_step s)
{
    return (unsigned)s < RPL_STEP_COUNT ? steps[s] : "?";
}

#define R(x) (1u << RPL_REC_##x)
/* the verdicts of a kill for memory */
#define MEMORY                                                                                 \
    (R(START_UP) | R(RELEASE_IDLE) | R(RELEASE_IN_BACKGROUND) | R(THRASHING) | R(SWAP_LOW) |    \
     R(CACHED) | R(KERNEL_OOM) | R(SWAP_THRASHING))

/* The verdict table: a row fits a death whose recovery is in recs, whose
 * signs include need and none of none.  fix NULL: the recovery's own
 * sentence. */
static const struct row {
    const char *name;
    unsigned recs, need, none;
    rpl_step step;
    const char *why, *fix;
} rows[] = {
    {"isolated", R(ISOLATED), 0, 0, RPL_STEP_NONE,
     "none: an isolated process died and the app lives on", NULL},
    {"not-memory", R(NOT_MEMORY), 0, 0, RPL_STEP_NONE,
     "none: the exit is not a failure the ladder answers", NULL},
    {"stale-cache", R(STALE_CACHE), 0, 0, RPL_STEP_REJECT,
     "the first step suffices for now: no death, but every request for the part fails; "
     "turning the feature off (the remote kill switch) keeps the app usable without them",
     NULL},
    {"unknown", R(COLLECT_EVIDENCE), 0, 0, RPL_STEP_REJECT,
     "the first step only: the later ones need a cause, and an unknown death names none", NULL},
    {"native-crash", R(ISOLATE_DELEGATE), 0, 0, RPL_STEP_LAST_GOOD,
     "steps 1 to 3 do not suffice: the crash is in the delegate's code, not in memory held; "
     "step 4 here is another path, the nearest first: the same candidate without the GPU "
     "delegate on the affected devices, then the last known good with a complete receipt",
     NULL},
    {"anr-at-start", R(OFF_MAIN_THREAD), RPL_SIGN_STARTING, 0, RPL_STEP_STOP_EXTRA,
     "rejecting new inference does not suffice: no request was in flight; the start's own "
     "model work held the main thread",
     "load the model on a worker thread and draw the first frame first: the main thread must "
     "stay free for input (an ANR is an input event left waiting about 5 s behind it)"},
    {"anr", R(OFF_MAIN_THREAD), 0, 0, RPL_STEP_REJECT,
     "the first step suffices: new work only queues behind the blocked main thread; memory is "
     "not the cause",
     NULL},
    {"java-heap", R(HEAP_OUT_OF_JAVA), 0, 0, RPL_STEP_STOP_EXTRA,
     "rejecting new inference does not suffice: the model's bytes fill the Java heap whether "
     "a request comes or not",
     NULL},
    {"watchdog", R(OUT_OF_LAUNCH), 0, 0, RPL_STEP_STOP_EXTRA,
     "rejecting new inference does not suffice: the launch's own model work took the time, "
     "before any request",
     NULL},
    {"thermal", MEMORY, RPL_SIGN_THERMAL, RPL_SIGN_BACKGROUND | RPL_SIGN_STARTING,
     RPL_STEP_REJECT,
     "the first step suffices: the phone throttled under sustained work, each execution "
     "took longer, and the new work piling up behind them (timeouts, retries, a queue) held "
     "the memory that killed it",
     "watch the thermal status (Android's PowerManager thermal status listener, iOS's "
     "ProcessInfo.thermalState) and lower the work as it rises: fewer frames, a smaller "
     "model; cancel a timed-out attempt before retrying it, since timeouts tuned on a cool "
     "phone fire on a hot one"},
    {"retry-duplicate", MEMORY, RPL_SIGN_RETRY_DUPLICATE, 0, RPL_STEP_REJECT,
     "the first step suffices: the memory that killed it was new attempts, retries each "
     "holding a working set beside the attempt still running",
     "cancel the timed-out attempt before retrying it (or retry only on a new condition), and "
     "give the client a timeout longer than an inference takes"},
    {"delegate-failed", MEMORY, RPL_SIGN_DELEGATE_FAILED, 0, RPL_STEP_STOP_EXTRA,
     "rejecting new inference does not suffice: the failed delegate's buffers are held "
     "whether a request comes or not, an extra set beside the fallback's",
     "release the failed delegate's buffers before the fallback prepares its own"},
    {"update-rebuild", MEMORY, RPL_SIGN_CACHE_REBUILD | RPL_SIGN_UPDATED, 0,
     RPL_STEP_STOP_EXTRA,
     "rejecting new inference does not suffice: the rebuild is the start's own work, before "
     "any request; the update invalidated the cache as its key meant it to, on every phone "
     "at once, and clearing it would change nothing",
     "keep the key: lower the rebuild's peak (compile in pieces, on a worker thread) or "
     "rebuild off the start path, with the model off on the phones it does not fit until "
     "then; plan for update day reaching every phone at once"},
    {"cache-rebuild", MEMORY, RPL_SIGN_CACHE_REBUILD, 0, RPL_STEP_STOP_EXTRA,
     "rejecting new inference does not suffice: the rebuild is the start's own work, before "
     "any request; and clearing the cache would make the next start rebuild again: the "
     "rebuild is what killed it",
     "start without the rebuild (the model off until its cache is built once, off the start "
     "path), and key the compiled cache by the model digest, the runtime and the OS version "
     "so that a valid cache is found; never answer it by clearing the cache"},
    {"preload", MEMORY, RPL_SIGN_PRELOAD, 0, RPL_STEP_STOP_EXTRA,
     "rejecting new inference does not suffice: the preload held one part while the next "
     "prepared, before any request asked for it",
     "do not preload: load each part when a request first asks for it, releasing the other "
     "first (residency on_demand_release_first); each part fits, the two together do not"},
    {"queue", MEMORY, RPL_SIGN_QUEUE, 0, RPL_STEP_REJECT,
     "the first step suffices: the memory was the queue's payloads, requests waiting to run",
     "bound the queue and drop the stale requests (a camera's oldest frames), not the newest"},
    {"service", MEMORY, RPL_SIGN_SERVICE, RPL_SIGN_BACKGROUND, RPL_STEP_REJECT,
     "the first step suffices for the app: its service process died, not the app; until the "
     "service is back each request fails (service_died), so start none",
     "importance 100 on a PACKAGE:NAME record is the binding from the app in front, not the "
     "app: read every process's records and count the requests that failed with "
     "service_died; bind the service with BIND_IMPORTANT (important: true) so that it shares "
     "the app's adj, or run a smaller model in it"},
    {"warning-ignored", R(RELEASE_IDLE), RPL_SIGN_WARNED,
     RPL_SIGN_BACKGROUND | RPL_SIGN_LEAKED | RPL_SIGN_KV, RPL_STEP_CLEAR_CACHES,
     "steps 1 and 2 do not suffice: what was held was idle, not new work or an extra "
     "session; a memory warning came and nothing was released after it",
     "act on the memory warning: release idle parts and clear rebuildable caches when it "
     "comes (on_warning; onTrimMemory on Android, didReceiveMemoryWarning on iOS, where it "
     "is the only notice before jetsam)"},
    {"switch", MEMORY, RPL_SIGN_SWITCH, 0, RPL_STEP_CLEAR_CACHES,
     "steps 1 and 2 do not suffice: the switch is the user's own request, not prewarm or an "
     "extra session; the first part, idle, was still held while the second loaded",
     "release the first part before the second loads (residency on_demand_release_first), or "
     "smaller parts: the switch, holding both, is what does not fit"},
    {"slow-leak", MEMORY, RPL_SIGN_LEAKED, RPL_SIGN_BACKGROUND, RPL_STEP_STOP_EXTRA,
     "rejecting new inference does not suffice: the sessions a page's owner leaked, one at "
     "each entry, are held whether a request comes or not",
     "close the sessions a page's owner holds when the page is left (the session_leaked "
     "notes name the owner and its sessions); a few MiB a page entry kill an hour later, so "
     "read the pss samples' trend across the session, not the last one"},
    {"leaked-session", MEMORY, RPL_SIGN_LEAKED, 0, RPL_STEP_STOP_EXTRA,
     "rejecting new inference does not suffice: no request runs; the session a page's owner "
     "leaked holds its part after the page is gone",
     "close the sessions a page's owner holds when the page is left (the session_leaked note "
     "names the owner, its session and its last request): the part goes with its last "
     "session; a reclaim in the background stays the system's right, so check that the "
     "state is restored"},
    {"kv-foreground", MEMORY, RPL_SIGN_KV, RPL_SIGN_BACKGROUND, RPL_STEP_REJECT,
     "the first step suffices: what killed it was the answer's own KV cache, growing with "
     "each token; a new request only grows it further",
     "cap the context, or stop generating as the KV cache nears its budget (a quantized KV, "
     "kv_precision, holds less); restore the chat after the death, the user was in it"},
    {"kv-background-answering", MEMORY, RPL_SIGN_KV | RPL_SIGN_BACKGROUND | RPL_SIGN_ANSWERING,
     0, RPL_STEP_CLEAR_CACHES,
     "the steps before it do not suffice: no new request came, and the answer still decoding "
     "after the user left held the model and its growing KV cache; stopped, they are idle, "
     "and releasing them is this step",
     "stop generating when the app leaves the foreground (keep what was written as text), then "
     "release the model and its KV cache (unload_after); restore the chat on relaunch; a "
     "smaller context or a quantized KV holds less meanwhile"},
    {"kv-background", MEMORY, RPL_SIGN_KV | RPL_SIGN_BACKGROUND, 0, RPL_STEP_CLEAR_CACHES,
     "the steps before it do not suffice: in the background no request runs and no session "
     "is extra; the model and its KV cache are idle",
     "release the model and its KV cache when the app goes to the background (unload_after), "
     "keep the conversation as text and restore it on relaunch; a smaller context or a "
     "quantized KV holds less meanwhile"},
    {"start-up", R(START_UP), 0, 0, RPL_STEP_STOP_EXTRA,
     "rejecting new inference does not suffice: no request had run; the start's own model "
     "work (prewarm) held the memory",
     NULL},
    {"thrashing", R(THRASHING), 0, 0, RPL_STEP_STOP_EXTRA,
     "rejecting new inference does not suffice: the weights refaulted at every token are held "
     "between requests too",
     NULL},
    {"swap-thrashing", R(SWAP_THRASHING), 0, 0, RPL_STEP_STOP_EXTRA,
     "rejecting new inference does not suffice: swap is full of what the app already holds, "
     "and the weights refaulted at every token are held between requests too",
     NULL},
    {"swap-low", R(SWAP_LOW), 0, 0, RPL_STEP_STOP_EXTRA,
     "rejecting new inference does not suffice: swap is full of what the app already holds",
     NULL},
    {"kernel-oom", R(KERNEL_OOM), 0, 0, RPL_STEP_STOP_EXTRA,
     "rejecting new inference does not suffice: one step's peak ran memory out, whatever came "
     "next",
     NULL},
    {"background", R(RELEASE_IN_BACKGROUND) | R(CACHED), 0, 0, RPL_STEP_CLEAR_CACHES,
     "the steps before it do not suffice: in the background no request runs and no session "
     "is extra; what is held is idle",
     NULL},
    {"foreground", R(RELEASE_IDLE), 0, 0, RPL_STEP_STOP_EXTRA,
     "rejecting new inference does not suffice: it frees none of the models, sessions and "
     "tasks already held",
     NULL},
};
#undef MEMORY
#undef R

int rpl_ladder_row_fits(size_t k, rpl_recovery rec)
{
    return k < sizeof rows / sizeof *rows && (unsigned)rec < RPL_REC_COUNT &&
           (rows[k].recs >> rec & 1u);
}

const char *rpl_ladder_row(size_t k, rpl_step *step, const char **fix)
{
    if (k >= sizeof rows / sizeof *rows)
        return NULL;
    *step = rows[k].step;
    unsigned first = 0; /* a row without its own fix gives its first verdict's sentence */
    while (!(rows[k].recs >> first & 1u))
        first++;
    *fix = rows[k].fix != NULL ? rows[k].fix : rpl_recovery_text((rpl_recovery)first);
    return rows[k].name;
}

void rpl_ladder_of(rpl_recovery rec, unsigned signs, rpl_ladder *l)
{
    memset(l, 0, sizeof *l);
    if ((unsigned)rec >= RPL_REC_COUNT)
        rec = RPL_REC_NOT_MEMORY;
    for (size_t k = 0; k < sizeof rows / sizeof *rows; k++) {
        const struct row *r = &rows[k];
        if (!(r->recs >> rec & 1u) || (signs & r->need) != r->need || (signs & r->none))
            continue;
        l->step = r->step;
        l->why = r->why;
        l->fix = r->fix != NULL ? r->fix : rpl_recovery_text(rec);
        l->outage = rec == RPL_REC_STALE_CACHE;
        return;
    }
    l->step = RPL_STEP_NONE; /* every verdict has a row: not reached */
    l->why = rows[1].why;
    l->fix = rpl_recovery_text(rec);
}

unsigned rpl_record_signs(rpl_class c, const rpl_exit *x, int started)
{
    unsigned s = 0;
    int frontmost = strstr(x->states, "frontmost") != NULL;
    if (c == RPL_CLASS_SYSTEM_RECLAIM || (x->has_importance && x->importance >= 400) ||
        (x->source == RPL_LMKD && x->has_adj && x->adj >= 700) ||
        (x->jetsam_event && x->states[0] != '\0' && !frontmost))
        s |= RPL_SIGN_BACKGROUND;
    if (started == 0)
        s |= RPL_SIGN_STARTING;
    if (strchr(x->process, ':') != NULL && !rpl_exit_isolated(x))
        s |= RPL_SIGN_SERVICE;
    return s;
}

void rpl_ladder_text(const rpl_ladder *l, const char *indent, sim_text *out)
{
    sim_text_printf(out, "%srecovery ladder, in the order of reversibility:\n", indent);
    for (int s = RPL_STEP_REJECT; s < RPL_STEP_COUNT; s++)
        sim_text_printf(out, "%s%s %d. %s%s\n", indent, l->step == (rpl_step)s ? ">" : " ", s,
                        steps[s], l->step != (rpl_step)s ? ""
                                  : l->outage ? "  <- this outage's step"
                                              : "  <- this death's step");
    sim_text_printf(out, "%s  never: delete the active model or the evidence\n", indent);
    if (l->step != RPL_STEP_NONE)
        sim_text_printf(out, "%s  why step %d: %s\n", indent, (int)l->step, l->why);
    else
        sim_text_printf(out, "%s  no step: %s\n", indent, l->why);
    sim_text_printf(out, "%s  then the failure mode's own fix: %s\n", indent, l->fix);
}
