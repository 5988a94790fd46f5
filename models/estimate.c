/* estimate.c - how many engine events a replication of a cell can need,
 * before it runs (docs/model.md, "Events per replication").
 *
 * Upper-end, per kind of event the world schedules (models/world.c):
 * - a path step: one event each, and a BACKGROUND step its end (and, on a
 *   device with previous_ttl, the app's move to adj 900);
 * - a request: each attempt (the first and every retry the policy allows
 *   once a timeout is set) arrives, arms its timeout, and for each part it
 *   needs may load it (download, load, prepare, delegate prepare: a phase
 *   end and an ANR timer each) and runs it (an inference end);
 * - a launch: the start-up phases of every part, the watchdog, the stable
 *   timer and the first sample; with relaunch after a death, as many
 *   launches as the horizon holds relaunch means;
 * - the system's pss samples (Android), every pss_sample over the horizon;
 * - other apps' pressure spikes, one each mean interval.
 * Memory warnings and cached-app kills follow allocations, a few per
 * phase at most, and are covered by the per-phase allowance. */
#include "models.h"

#include <math.h>
#include <string.h>

/* Events one part can cost when it runs or loads: up to four phase ends,
 * an ANR timer each, and an inference end. */
#define EVENTS_PER_PART 9.0
/* ... and a generation part's request besides: its KV lines (at most 16
 * steps under a page model, and the rule's lines, a few: 4 counted) and
 * an unload_after timer (models/generate.c). */
#define EVENTS_PER_GENERATION 21.0

/* The extra events of a request needing parts `needs` (0: every part). */
static double generation_events(const mdl_candidate *c, const mdl_requests *q)
{
    double e = 0;
    for (unsigned k = 0; k < c->nparts; k++) {
        int needed = q->nneeds == 0;
        for (unsigned j = 0; !needed && j < q->nneeds; j++)
            needed = strcmp(q->needs[j], c->parts[k].name) == 0;
        if (needed && c->parts[k].has_generation)
            e += EVENTS_PER_GENERATION;
    }
    return e;
}

static double arrivals_of(const mdl_requests *q, sim_time horizon)
{
    if (q->count > 0)
        return (double)q->count;
    double span = (double)(q->duration < horizon ? q->duration : horizon);
    /* after_answer: at most one a think time (the answers' own time is not known here) */
    double gap = q->poisson || q->closed ? q->mean_gap_us : (double)q->every;
    return gap > 0 ? span / gap : 0;
}

void mdl_events_estimate(const mdl_cell *cell, mdl_estimate *out)
{
    const mdl_workload *wl = cell->workload;
    const mdl_candidate *c = cell->candidate;
    const mdl_device *d = cell->device;
    const mdl_policy *p = &cell->policy;
    double horizon = (double)cell->horizon;
    *out = (mdl_estimate){0};
    double attempts = 1;
    if (wl->timeout > 0 && p->retry.kind != MDL_RETRY_NONE)
        attempts += p->retry.max;
    double arrivals = 0, weighted = 0, fastest = 0, updates = 0;
    for (uint32_t s = 0; s < wl->nsteps; s++) {
        const mdl_step *st = &wl->steps[s];
        updates += st->kind == MDL_STEP_UPDATE; /* each stops the app: one more launch */
        out->steps += st->kind != MDL_STEP_BACKGROUND ? 1
                      : cell->device->previous_ttl > 0 ? 3 : 2;
        if (st->kind != MDL_STEP_REQUESTS)
            continue;
        const mdl_requests *q = &wl->requests[st->index];
        double n = arrivals_of(q, cell->horizon);
        unsigned needs = q->nneeds > 0 ? q->nneeds : c->nparts;
        arrivals += n;
        weighted += n * (2 + EVENTS_PER_PART * needs + generation_events(c, q));
        double gap = q->closed        ? q->mean_gap_us
                     : q->count > 0   ? (double)q->every
                     : q->poisson     ? q->mean_gap_us
                                      : (double)q->every;
        if (gap > 0 && (fastest == 0 || gap < fastest))
            fastest = gap;
    }
    /* no more arrivals than the fastest step's rate over the whole horizon */
    if (fastest > 0 && arrivals > horizon / fastest + 1) {
        weighted *= (horizon / fastest + 1) / arrivals;
        arrivals = horizon / fastest + 1;
    }
    out->arrivals = arrivals;
    out->per_request = arrivals > 0 ? attempts * weighted / arrivals : 0;
    out->launches = 1 + updates;
    if (wl->has_relaunch) {
        double mean = mdl_dist_mean(&wl->relaunch);
        out->launches += mean >= 1 ? horizon / mean : horizon;
    }
    out->per_launch = 3 + EVENTS_PER_PART * c->nparts;
    if (d->os == MDL_OS_ANDROID && d->pss_sample > 0)
        out->samples = horizon / (double)d->pss_sample + out->launches;
    if (d->has_pressure) {
        double mean = mdl_dist_mean(&d->pressure);
        out->pressure = mean >= 1 ? horizon / mean + 1 : horizon;
    }
    /* the page model: a look every 100 ms while kswapd runs, and lmkd's
     * polls, every 10 ms at the fastest (models/pages.c): bounded by the
     * horizon, not by what the app does */
    if (d->rule == MDL_KILL_LMK && d->lmk_psi)
        out->pages = horizon / 100000.0 + horizon / 10000.0;
    out->total = out->steps + out->arrivals * out->per_request +
                 out->launches * out->per_launch + out->samples + out->pressure + out->pages;
    if (!isfinite(out->total))
        out->total = HUGE_VAL;
}
