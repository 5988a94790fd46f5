/* ladder.c - the one recovery ladder `explain`, `diagnose` and the quiz
 * all print: four steps in the order of their reversibility (reject new
 * inference; stop prewarm and extra sessions; clear rebuildable inactive
 * caches; fall back to the last known good only with a complete receipt),
 * the step a death calls for marked with why the steps before it do not
 * suffice, then the failure mode's own fix.  The failure mode comes from
 * what the death's life showed (rpl_life's signs) when a timeline is
 * there, else from the verdict's recovery (docs/on-call.md "The recovery
 * ladder"). */
#include "replay.h"

#include <string.h>

static const char *const steps[RPL_STEP_COUNT] = {
    [RPL_STEP_NONE] = "",
    [RPL_STEP_REJECT] = "reject new inference: keep the app usable, start no new request",
    [RPL_STEP_STOP_EXTRA] = "stop prewarm and extra sessions",
    [RPL_STEP_CLEAR_CACHES] = "clear rebuildable inactive caches",
    [RPL_STEP_LAST_GOOD] = "fall back to the last known good, only with a complete receipt",
};

const char *rpl_step_name(rpl_step s)
{
    return (unsigned)s < RPL_STEP_COUNT ? steps[s] : "?";
}

/* A failure mode a life's signs name: its step, why the earlier ones do
 * not suffice, its own fix.  The first sign that applies wins (a life that
 * retried into a queue is a retry storm first). */
static const struct {
    unsigned sign;
    rpl_step step;
    const char *why, *fix;
} modes[] = {
    {RPL_SIGN_RETRY_DUPLICATE, RPL_STEP_REJECT,
     "the first step suffices: the memory that killed it was new attempts, retries each "
     "holding a working set beside the attempt still running",
     "cancel the timed-out attempt before retrying it (or retry only on a new condition), and "
     "give the client a timeout longer than an inference takes"},
    {RPL_SIGN_DELEGATE_FAILED, RPL_STEP_STOP_EXTRA,
     "rejecting new inference does not suffice: the failed delegate's buffers are held "
     "whether a request comes or not, an extra set beside the fallback's",
     "release the failed delegate's buffers before the fallback prepares its own"},
    {RPL_SIGN_CACHE_REBUILD, RPL_STEP_CLEAR_CACHES,
     "the steps before it do not suffice: the death came with a cache rebuild at start, "
     "before any request or extra session",
     "key the compiled cache by the model digest, the runtime and the OS version, so a valid "
     "cache is found and an invalid one is rebuilt once, off the start path"},
    {RPL_SIGN_QUEUE, RPL_STEP_REJECT,
     "the first step suffices: the memory was the queue's payloads, requests waiting to run",
     "bound the queue and drop the stale requests (a camera's oldest frames), not the newest"},
};

/* The step each recovery calls for when no sign names the mode, and why
 * the earlier ones do not suffice; the fix is the recovery's own
 * sentence. */
static const struct {
    rpl_step step;
    const char *why;
} by_recovery[RPL_REC_COUNT] = {
    [RPL_REC_START_UP] = {RPL_STEP_STOP_EXTRA,
                          "rejecting new inference does not suffice: no request had run; the "
                          "start's own model work (prewarm) held the memory"},
    [RPL_REC_RELEASE_IDLE] = {RPL_STEP_STOP_EXTRA,
                              "rejecting new inference does not suffice: it frees none of the "
                              "models, sessions and tasks already held"},
    [RPL_REC_RELEASE_IN_BACKGROUND] = {RPL_STEP_STOP_EXTRA,
                                       "rejecting new inference does not suffice: in the "
                                       "background no request runs, what is held is idle"},
    [RPL_REC_HEAP_OUT_OF_JAVA] = {RPL_STEP_STOP_EXTRA,
                                  "rejecting new inference does not suffice: the model's bytes "
                                  "fill the Java heap whether a request comes or not"},
    [RPL_REC_OFF_MAIN_THREAD] = {RPL_STEP_REJECT,
                                 "the first step suffices: new work only queues behind the "
                                 "blocked main thread; memory is not the cause"},
    [RPL_REC_ISOLATE_DELEGATE] = {RPL_STEP_LAST_GOOD,
                                  "steps 1 to 3 do not suffice: the crash is in the delegate's "
                                  "code, not in memory held; only another path avoids it"},
    [RPL_REC_OUT_OF_LAUNCH] = {RPL_STEP_STOP_EXTRA,
                               "rejecting new inference does not suffice: the launch's own "
                               "model work took the time, before any request"},
    [RPL_REC_COLLECT_EVIDENCE] = {RPL_STEP_REJECT,
                                  "the first step only: the later ones need a cause, and an "
                                  "unknown death names none"},
    [RPL_REC_NOT_MEMORY] = {RPL_STEP_NONE, "none: the exit is not a failure the ladder answers"},
    [RPL_REC_THRASHING] = {RPL_STEP_STOP_EXTRA,
                           "rejecting new inference does not suffice: the weights refaulted "
                           "at every token are held between requests too"},
    [RPL_REC_SWAP_LOW] = {RPL_STEP_STOP_EXTRA,
                          "rejecting new inference does not suffice: swap is full of what the "
                          "app already holds"},
    [RPL_REC_CACHED] = {RPL_STEP_STOP_EXTRA,
                        "rejecting new inference does not suffice: in the background no "
                        "request runs, what is held is idle"},
    [RPL_REC_KERNEL_OOM] = {RPL_STEP_STOP_EXTRA,
                            "rejecting new inference does not suffice: one step's peak ran "
                            "memory out, whatever came next"},
    [RPL_REC_ISOLATED] = {RPL_STEP_NONE,
                          "none: an isolated process died and the app lives on"},
};

void rpl_ladder_of(rpl_recovery rec, unsigned signs, rpl_ladder *l)
{
    memset(l, 0, sizeof *l);
    /* a sign names the mode only for a death the ladder answers */
    int answers = (unsigned)rec < RPL_REC_COUNT && by_recovery[rec].step != RPL_STEP_NONE &&
                  rec != RPL_REC_ISOLATE_DELEGATE && rec != RPL_REC_OFF_MAIN_THREAD &&
                  rec != RPL_REC_COLLECT_EVIDENCE;
    for (size_t k = 0; answers && k < sizeof modes / sizeof *modes; k++)
        if (signs & modes[k].sign) {
            l->step = modes[k].step;
            l->why = modes[k].why;
            l->fix = modes[k].fix;
            return;
        }
    if ((unsigned)rec >= RPL_REC_COUNT)
        rec = RPL_REC_NOT_MEMORY;
    l->step = by_recovery[rec].step;
    l->why = by_recovery[rec].why;
    l->fix = rpl_recovery_text(rec);
}

void rpl_ladder_text(const rpl_ladder *l, const char *indent, sim_text *out)
{
    sim_text_printf(out, "%srecovery ladder, in the order of reversibility:\n", indent);
    for (int s = RPL_STEP_REJECT; s < RPL_STEP_COUNT; s++)
        sim_text_printf(out, "%s%s %d. %s%s\n", indent, l->step == (rpl_step)s ? ">" : " ", s,
                        steps[s], l->step == (rpl_step)s ? "  <- this death's step" : "");
    sim_text_printf(out, "%s  never: delete the active model or the evidence\n", indent);
    if (l->step != RPL_STEP_NONE)
        sim_text_printf(out, "%s  why step %d: %s\n", indent, (int)l->step, l->why);
    else
        sim_text_printf(out, "%s  no step: %s\n", indent, l->why);
    sim_text_printf(out, "%s  then the failure mode's own fix: %s\n", indent, l->fix);
}
