/* field.c - each cell's prediction against what the fleet observed
 * (docs/field.md): the share of device-days with at least one memory death
 * while the app is visible, predicted from the share of replications
 * (sessions) with one, beside the observed rate, each with its 95 %
 * interval, and whether they disagree. */
#include "results.h"
#include "internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The field entry for a device: the first naming it, else the first RAM
 * bucket it is in; NULL when none. */
static const mdl_field *entry_of(const res_plan *plan, const mdl_device *d)
{
    for (unsigned k = 0; k < plan->nfield; k++)
        if (plan->field[k].device[0] != '\0' && strcmp(plan->field[k].device, d->name) == 0)
            return &plan->field[k];
    for (unsigned k = 0; k < plan->nfield; k++)
        if (plan->field[k].device[0] == '\0' && plan->field[k].ram == d->ram)
            return &plan->field[k];
    return NULL;
}

/* A session's probability p over a day of s sessions: at least one. */
static double day_rate(double p, double s)
{
    if (p <= 0)
        return 0;
    if (p >= 1)
        return 1;
    return -expm1(s * log1p(-p));
}

void res_field_compare(const res_plan *plan, unsigned i, const res_cell *c, res_field_cmp *out)
{
    memset(out, 0, sizeof *out);
    out->f = entry_of(plan, plan->cells[i].device);
    if (out->f == NULL)
        return;
    double s = out->f->sessions_per_day;
    uint64_t n = plan->replications;
    out->session_rate = n > 0 ? (double)c->with_visible_death / (double)n : 0;
    out->session_ci = res_wilson95(c->with_visible_death, n);
    /* 1 - (1 - p)^s is increasing in p: the interval maps end to end */
    out->predicted = day_rate(out->session_rate, s);
    out->predicted_ci.lo = day_rate(out->session_ci.lo, s);
    out->predicted_ci.hi = day_rate(out->session_ci.hi, s);
    out->observed = out->f->rate;
    uint64_t k = (uint64_t)llround(out->f->rate * (double)out->f->users);
    out->observed_ci = res_wilson95(k, out->f->users);
    out->verdict = out->predicted_ci.lo > out->observed_ci.hi   ? RES_FIELD_HIGHER
                   : out->predicted_ci.hi < out->observed_ci.lo ? RES_FIELD_LOWER
                                                                : RES_FIELD_AGREES;
}

const char *res_field_verdict_name(res_field_verdict v)
{
    static const char *const names[] = {"agrees", "predicts_higher", "predicts_lower"};
    return (unsigned)v < 3 ? names[v] : "?";
}

const char res_field_intro[] =
    "each cell against the fleet: the share of users with at least one memory death a day "
    "while the app is visible (sessions_per_day sessions each), predicted [95% CI] and "
    "observed [95% CI]";
const char res_field_note[] =
    "predicted: 1 - (1 - p)^s, p the share of replications with a low_memory death in the "
    "foreground (Wilson interval), s the sessions a day; observed: the field rate over its "
    "users (Wilson interval). A disagreement is two intervals that do not overlap; "
    "docs/field.md says which inputs to re-measure first.";

static void percent(char *buf, size_t n, double v, res_interval ci)
{
    snprintf(buf, n, "%.2f%% [%.2f, %.2f]", v * 100, ci.lo * 100, ci.hi * 100);
}

int res_field_table(const res_plan *plan, const res_result *r, res_table *t)
{
    static const char *const head[] = {"device", "candidate", "policy", "predicted a day",
                                       "observed", "metric", "users", "verdict"};
    static const int right[] = {0, 0, 0, 1, 1, 0, 1, 0};
    unsigned rows = 1;
    for (unsigned i = 0; i < r->ncells; i++)
        rows += entry_of(plan, plan->cells[i].device) != NULL;
    if (res__table_alloc(t, rows, 8, head, right) != SIM_OK)
        return SIM_ENOMEM;
    unsigned row = 1;
    for (unsigned i = 0; i < r->ncells; i++) {
        res_field_cmp f;
        res_field_compare(plan, i, &r->cells[i], &f);
        if (f.f == NULL)
            continue;
        res_text *x = &t->cell[row++ * 8];
        snprintf(x[0], RES_TEXT_MAX, "%s", plan->cells[i].device->name);
        snprintf(x[1], RES_TEXT_MAX, "%s", plan->cells[i].candidate->id);
        if (res_policy_label(plan->policy_json[i], x[2], RES_TEXT_MAX) != SIM_OK)
            return SIM_ENOMEM;
        percent(x[3], RES_TEXT_MAX, f.predicted, f.predicted_ci);
        percent(x[4], RES_TEXT_MAX, f.observed, f.observed_ci);
        snprintf(x[5], RES_TEXT_MAX, "%s", mdl_field_metric_name(f.f->metric));
        snprintf(x[6], RES_TEXT_MAX, "%llu", (unsigned long long)f.f->users);
        snprintf(x[7], RES_TEXT_MAX, "%s",
                 f.verdict == RES_FIELD_AGREES  ? "agrees"
                 : f.verdict == RES_FIELD_HIGHER ? "DISAGREES: predicts more deaths"
                                                 : "DISAGREES: predicts fewer deaths");
    }
    return SIM_OK;
}
