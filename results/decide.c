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
    v->meets = t->set && v->deaths_ok && v->latency_ok;
    double d = t->has_deaths ? c->any_ci.hi / t->deaths : 0, l = latency_ratio(t, c);
    v->shortfall = d > l ? d : l;
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
        double closest = DBL_MAX;
        for (; i < r->ncells && plan->cells[i].device == plan->cells[d->first].device &&
               plan->cells[i].candidate == plan->cells[d->first].candidate;
             i++, d->count++) {
            const res_cell *c = &r->cells[i];
            res_verdict v;
            res_cell_verdict(&plan->target, c, &v);
            if (v.meets) {
                d->meeting++;
                if (d->recommended < 0 || better(c, &r->cells[d->recommended]))
                    d->recommended = (int)i;
            } else if (d->closest < 0 || v.shortfall < closest ||
                       (v.shortfall == closest && better(c, &r->cells[d->closest]))) {
                d->closest = (int)i;
                closest = v.shortfall;
            }
        }
    }
    return n;
}
