/* decide.c - a decision against the scenario's target: which policies of
 * each device and candidate meet it, the one recommended, or the one that
 * came closest when none does. */
#include "internal.h"
#include "render_int.h"

#include <float.h>
#include <stdio.h>
#include <stdlib.h>

/* A criterion's measured value over its target (<= 1: met for latency,
 * < 1: met for deaths); DBL_MAX when nothing was measured. */
static double latency_ratio(const mdl_target *t, const res_cell *c)
{
    if (t->latency_p95 <= 0)
        return 0;
    return c->completed ? c->latency_us.p95 / (double)t->latency_p95 : DBL_MAX;
}

void res_cell_verdict(const mdl_target *t, const res_cell *c, res_verdict *v)
{
    v->deaths_ok = !t->has_deaths || c->any_ci.hi < t->deaths;
    v->latency_ok = t->latency_p95 <= 0 || (c->completed && c->latency_us.p95 <=
                                            (double)t->latency_p95);
    double share = c->arrived ? (double)c->completed / (double)c->arrived : 1;
    v->completed_ok = !t->has_completed || share >= t->completed;
    v->meets = t->set && v->deaths_ok && v->latency_ok && v->completed_ok;
    double d = t->has_deaths ? c->any_ci.hi / t->deaths : 0, l = latency_ratio(t, c);
    /* the requests that did not complete over those the target allows */
    double f = !t->has_completed ? 0
               : t->completed < 1 ? (1 - share) / (1 - t->completed)
               : share < 1 ? DBL_MAX : 0;
    v->shortfall = d > l ? d : l;
    v->shortfall = f > v->shortfall ? f : v->shortfall;
}

/* Latency p95 for ordering: cells where nothing completed go last. */
static double latency_key(const res_cell *c)
{
    return c->completed ? c->latency_us.p95 : DBL_MAX;
}

/* Cell a ranks before cell b: the lowest peak p95, then the lowest latency
 * p95 (then the first, as the caller scans in order). */
static int better(const res_cell *a, const res_cell *b)
{
    if (a->peak.p95 != b->peak.p95)
        return a->peak.p95 < b->peak.p95;
    return latency_key(a) < latency_key(b);
}

/* Policy j of decision d: whether it meets on every path, its worst cell
 * (the highest peak p95, then latency) and where it misses the most. */
typedef struct policy_fate {
    int meets;
    unsigned worst, missing; /* cells */
    double shortfall;
} policy_fate;

static policy_fate fate_of(const res_plan *plan, const res_result *r, const res_decision *d,
                           unsigned j)
{
    policy_fate f = {1, d->first + j, d->first + j, 0};
    for (unsigned q = 0; q < d->paths; q++) {
        unsigned i = d->first + q * d->policies + j;
        res_verdict v;
        res_cell_verdict(&plan->target, &r->cells[i], &v);
        if (better(&r->cells[f.worst], &r->cells[i]))
            f.worst = i;
        if (!v.meets && (f.meets || v.shortfall > f.shortfall)) {
            f.missing = i;
            f.shortfall = v.shortfall;
        }
        f.meets &= v.meets;
    }
    return f;
}

unsigned res_decisions(const res_plan *plan, const res_result *r, res_decision *out)
{
    unsigned n = 0;
    for (unsigned i = 0; i < r->ncells; n++) {
        res_decision *d = &out[n];
        d->first = i;
        d->count = 0;
        d->meeting = 0;
        d->recommended = -1;
        d->closest = -1;
        d->heaviest = -1;
        d->policies = 0;
        for (; i < r->ncells && plan->cells[i].device == plan->cells[d->first].device &&
               plan->cells[i].candidate == plan->cells[d->first].candidate;
             i++, d->count++)
            if (d->policies == 0 && plan->cells[i].workload != plan->cells[d->first].workload)
                d->policies = d->count; /* the second path starts here */
        if (d->policies == 0)
            d->policies = d->count;
        d->paths = d->count / d->policies;
        double closest = DBL_MAX;
        int best = -1; /* the recommended policy's worst cell */
        for (unsigned j = 0; j < d->policies; j++) {
            policy_fate f = fate_of(plan, r, d, j);
            if (f.meets) {
                d->meeting++;
                if (best < 0 || better(&r->cells[f.worst], &r->cells[best])) {
                    best = (int)f.worst;
                    d->recommended = (int)(d->first + j);
                }
                d->heaviest = best;
            } else if (d->closest < 0 || f.shortfall < closest ||
                       (f.shortfall == closest &&
                        better(&r->cells[f.missing], &r->cells[d->closest]))) {
                d->closest = (int)f.missing;
                closest = f.shortfall;
            }
        }
    }
    return n;
}
