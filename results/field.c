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

/* k of n sessions against an observed share of the entry's users: the
 * predicted share of device-days, both intervals, the verdict. */
static void compare_rate(const mdl_field *f, uint64_t k, uint64_t n, double observed,
                         res_field_rate *out)
{
    double s = f->sessions_per_day;
    out->session_rate = n > 0 ? (double)k / (double)n : 0;
    out->session_ci = res_wilson95(k, n);
    /* 1 - (1 - p)^s is increasing in p: the interval maps end to end */
    out->predicted = res__day_rate(out->session_rate, s);
    out->predicted_ci.lo = res__day_rate(out->session_ci.lo, s);
    out->predicted_ci.hi = res__day_rate(out->session_ci.hi, s);
    out->observed = observed;
    out->observed_ci = res_wilson95((uint64_t)llround(observed * (double)f->users), f->users);
    out->verdict = out->predicted_ci.lo > out->observed_ci.hi   ? RES_FIELD_HIGHER
                   : out->predicted_ci.hi < out->observed_ci.lo ? RES_FIELD_LOWER
                                                                : RES_FIELD_AGREES;
}

void res_field_compare(const res_plan *plan, unsigned i, const res_cell *c, res_field_cmp *out)
{
    memset(out, 0, sizeof *out);
    out->f = res__field_entry(plan, plan->cells[i].device);
    if (out->f == NULL)
        return;
    compare_rate(out->f, c->with_visible_death, plan->replications, out->f->rate, &out->visible);
    if (out->f->has_background)
        compare_rate(out->f, c->with_background_death, plan->replications,
                     out->f->background_rate, &out->background);
}

const char *res_field_verdict_name(res_field_verdict v)
{
    static const char *const names[] = {"agrees", "predicts_higher", "predicts_lower"};
    return (unsigned)v < 3 ? names[v] : "?";
}
