/* field.c - each cell's prediction against what the fleet observed
 * (docs/field.md): the share of device-days with at least one memory death
 * while the app is visible, predicted from the share of replications
 * (sessions) with one, beside the observed rate, each with its 95 %
 * interval, and whether they disagree. */
#include "results.h"
#include "internal.h"
#include "render_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The field entry for a device: the first naming it, else the first RAM
 * bucket it is in; NULL when none. */
const mdl_field *res__field_entry(const res_plan *plan, const mdl_device *d)
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
double res__day_rate(double p, double s)
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
    out->f = res__field_entry(plan, plan->cells[i].device);
    if (out->f == NULL)
        return;
    double s = out->f->sessions_per_day;
    uint64_t n = plan->replications;
    out->session_rate = n > 0 ? (double)c->with_visible_death / (double)n : 0;
    out->session_ci = res_wilson95(c->with_visible_death, n);
    /* 1 - (1 - p)^s is increasing in p: the interval maps end to end */
    out->predicted = res__day_rate(out->session_rate, s);
    out->predicted_ci.lo = res__day_rate(out->session_ci.lo, s);
    out->predicted_ci.hi = res__day_rate(out->session_ci.hi, s);
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
