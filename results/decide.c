/* decide.c - a decision against the scenario's target: which policies of
 * each device and candidate meet it, the one recommended, or the one that
 * came closest when none does. */
#include "internal.h"

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

/* "1%" or "0.1%": a share as a percentage with the digits it needs. */
static void percent(char *buf, size_t n, double share)
{
    snprintf(buf, n, "%.3g%%", 100 * share);
}

static void millis(char *buf, size_t n, double us)
{
    if (us >= 1e6)
        snprintf(buf, n, "%.3g s", us / 1e6);
    else
        snprintf(buf, n, "%.0f ms", us / 1e3);
}

void res_target_text(const mdl_target *t, char *buf, size_t n)
{
    char d[32] = "", l[32] = "";
    if (t->has_deaths)
        percent(d, sizeof d, t->deaths);
    if (t->latency_p95 > 0)
        millis(l, sizeof l, (double)t->latency_p95);
    snprintf(buf, n, "%s%s%s%s%s%s", t->has_deaths ? "deaths under " : "", d,
             t->has_deaths ? " (the upper end of the 95% interval)" : "",
             t->has_deaths && t->latency_p95 > 0 ? ", " : "",
             t->latency_p95 > 0 ? "latency p95 at most " : "", l);
}

void res_verdict_text(const mdl_target *t, const res_cell *c, char *buf, size_t n)
{
    res_verdict v;
    res_cell_verdict(t, c, &v);
    char d[32], l[32];
    percent(d, sizeof d, c->any_ci.hi);
    millis(l, sizeof l, c->latency_us.p95);
    if (v.meets)
        snprintf(buf, n, "meets");
    else if (!v.latency_ok && !c->completed)
        snprintf(buf, n, "misses: no request completed");
    else
        snprintf(buf, n, "misses: %s%s%s%s%s", v.deaths_ok ? "" : "deaths up to ",
                 v.deaths_ok ? "" : d, !v.deaths_ok && !v.latency_ok ? ", " : "",
                 v.latency_ok ? "" : "latency p95 ", v.latency_ok ? "" : l);
}

int res_decision_table(const res_plan *plan, const res_result *r, res_table *t)
{
    static const char *const head[] = {"device", "candidate", "meet the target", "recommended",
                                       "why"};
    static const int right[] = {0, 0, 1, 0, 0};
    t->cell = NULL;
    t->rows = 1;
    if (!plan->target.set || r->ncells == 0)
        return res__table_alloc(t, 1, 5, head, right);
    res_decision *d = calloc(r->ncells, sizeof *d);
    if (d == NULL)
        return SIM_ENOMEM;
    unsigned n = res_decisions(plan, r, d);
    if (res__table_alloc(t, n + 1, 5, head, right) != SIM_OK) {
        free(d);
        return SIM_ENOMEM;
    }
    int rc = SIM_OK;
    for (unsigned k = 0; k < n && rc == SIM_OK; k++) {
        res_text *row = &t->cell[(k + 1) * 5];
        const mdl_cell *cell = &plan->cells[d[k].first];
        snprintf(row[0], RES_TEXT_MAX, "%s", cell->device->name);
        snprintf(row[1], RES_TEXT_MAX, "%s", cell->candidate->id);
        snprintf(row[2], RES_TEXT_MAX, "%u of %u", d[k].meeting, d[k].count);
        int pick = d[k].recommended >= 0 ? d[k].recommended : d[k].closest;
        const res_cell *c = &r->cells[pick];
        char label[RES_TEXT_MAX], peak[32], lat[32], verdict[RES_TEXT_MAX];
        rc = res_policy_label(plan->policy_json[pick], label, sizeof label);
        snprintf(peak, sizeof peak, "%.1f MiB", c->peak.p95 / RES_MIB);
        if (c->completed)
            millis(lat, sizeof lat, c->latency_us.p95);
        else
            snprintf(lat, sizeof lat, "-");
        if (d[k].recommended >= 0) {
            snprintf(row[3], RES_TEXT_MAX, "%s", label);
            snprintf(row[4], RES_TEXT_MAX, "%s: peak p95 %s, latency p95 %s",
                     d[k].meeting > 1 ? "the lowest peak of those that meet it" : "the only one "
                     "that meets it", peak, lat);
        } else {
            res_verdict_text(&plan->target, c, verdict, sizeof verdict);
            snprintf(row[3], RES_TEXT_MAX, "none");
            snprintf(row[4], RES_TEXT_MAX, "closest: %.120s (%.80s; peak p95 %s)", label,
                     verdict + (sizeof "misses: " - 1), peak);
        }
    }
    free(d);
    return rc;
}
