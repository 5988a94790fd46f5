/* decide.c - a decision against the scenario's target: which policies of
 * each device and candidate meet it, the one recommended, or the one that
 * came closest when none does. */
#include "internal.h"
#include "render_int.h"

#include <float.h>
#include <math.h>
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

double res_overflow_share(const res_cell *c)
{
    return c->gen_started > 0 ? (double)c->context_overflow / (double)c->gen_started : 0;
}

/* The LLM criteria's ratios of measured value to target (> 1: missed),
 * the largest; DBL_MAX when no request had the figure. */
static double llm_verdict(const mdl_target *t, const res_cell *c, res_verdict *v)
{
    double worst = 0;
    /* a cell none of whose requests reached an LLM's KV region (a
     * candidate that does not generate, a path without such requests) is
     * not judged on them */
    int judged = c->gen_started > 0;
    double q = t->ttft > 0 ? c->ttft_q[t->ttft_q] : 0;
    v->ttft_ok = t->ttft <= 0 || !judged || (q >= 0 && q <= (double)t->ttft);
    if (t->ttft > 0 && judged)
        worst = fmax(worst, q < 0 ? DBL_MAX : q / (double)t->ttft);
    double r = t->tokens_per_s > 0 ? c->tps_q[t->tps_q] : 0;
    v->tps_ok = t->tokens_per_s <= 0 || !judged || r >= t->tokens_per_s;
    if (t->tokens_per_s > 0 && judged)
        worst = fmax(worst, r <= 0 ? DBL_MAX : t->tokens_per_s / r);
    double share = res_overflow_share(c);
    v->overflow_ok = !t->has_overflow || share <= t->overflow;
    if (t->has_overflow)
        worst = fmax(worst, t->overflow > 0 ? share / t->overflow : share > 0 ? DBL_MAX : 0);
    return worst;
}

void res_cell_verdict(const mdl_target *t, const res_cell *c, res_verdict *v)
{
    v->deaths_ok = !t->has_deaths || c->any_ci.hi < t->deaths;
    v->latency_ok = t->latency_p95 <= 0 || (c->completed && c->latency_us.p95 <=
                                            (double)t->latency_p95);
    double share = c->arrived ? (double)c->completed / (double)c->arrived : 1;
    v->completed_ok = !t->has_completed || share >= t->completed;
    double g = llm_verdict(t, c, v);
    v->meets = t->set && v->deaths_ok && v->latency_ok && v->completed_ok && v->ttft_ok &&
               v->tps_ok && v->overflow_ok;
    double d = t->has_deaths ? c->any_ci.hi / t->deaths : 0, l = latency_ratio(t, c);
    /* the requests that did not complete over those the target allows */
    double f = !t->has_completed ? 0
               : t->completed < 1 ? (1 - share) / (1 - t->completed)
               : share < 1 ? DBL_MAX : 0;
    v->shortfall = fmax(fmax(d, l), fmax(f, g));
}

const char *res_rule_name(res_rule r)
{
    static const char *const names[] = {"the only one", "the largest context",
                                        "the fastest decode", "the lowest peak",
                                        "the lowest latency", "the first in the grid"};
    return (unsigned)r < sizeof names / sizeof *names ? names[r] : "?";
}

/* Latency p95 for ordering: cells where nothing completed go last. */
static double latency_key(const res_cell *c)
{
    return c->completed ? c->latency_us.p95 : DBL_MAX;
}

/* The largest context of a cell's generation parts as its policy runs
 * them; 0 for a candidate that does not generate. */
uint32_t res_cell_context(const mdl_cell *cell)
{
    uint32_t n = 0;
    for (unsigned k = 0; k < cell->candidate->nparts; k++) {
        const mdl_part *p = &cell->candidate->parts[k];
        if (!p->has_generation)
            continue;
        mdl_generation g;
        mdl_generation_in_force(p, &cell->policy, cell->device->os == MDL_OS_IOS, &g);
        if (g.context > n)
            n = g.context;
    }
    return n;
}

/* A policy as the rule ranks it: its worst cell over its paths (the
 * highest peak p95, then latency) and its slowest decode (tokens/s p50)
 * over the paths whose requests reached its LLM (-1: none). */
typedef struct ranked {
    unsigned worst;
    int fast; /* of the largest context's fastest decodes (within the fastest's interval) */
} ranked;

/* The first rule by which policy a ranks before policy b, RES_RULE_ORDER
 * when none does: for an LLM, the largest context, then the fastest decode
 * (of the policies that meet at the largest context, those whose decode
 * p50's 95% interval reaches the fastest's lower end: a difference within
 * the runs' noise is no difference, and the set is fixed before any two are
 * compared, so the order is the same whatever the grid's); then the lowest
 * peak p95, the lowest latency p95. */
static res_rule ranks_before(const res_plan *plan, const res_result *r, ranked a, ranked b)
{
    const res_cell *x = &r->cells[a.worst], *y = &r->cells[b.worst];
    uint32_t ca = res_cell_context(&plan->cells[a.worst]);
    uint32_t cb = res_cell_context(&plan->cells[b.worst]);
    if (ca != cb)
        return ca > cb ? RES_RULE_CONTEXT : RES_RULE_ORDER;
    if (ca > 0 && a.fast != b.fast)
        return a.fast ? RES_RULE_DECODE : RES_RULE_ORDER;
    if (x->peak.p95 != y->peak.p95)
        return x->peak.p95 < y->peak.p95 ? RES_RULE_PEAK : RES_RULE_ORDER;
    if (latency_key(x) != latency_key(y))
        return latency_key(x) < latency_key(y) ? RES_RULE_LATENCY : RES_RULE_ORDER;
    return RES_RULE_ORDER;
}

/* Policy a ranks strictly before policy b. */
static int better(const res_plan *plan, const res_result *r, ranked a, ranked b)
{
    return ranks_before(plan, r, a, b) != RES_RULE_ORDER;
}

/* Cell a is lighter than cell b: the lower peak p95, then latency p95
 * (a policy's worst cell over its paths is the heaviest). */
static int lighter(const res_cell *a, const res_cell *b)
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
    double tps; /* its slowest decode p50 over the paths with LLM requests, -1: none */
    double tps_ci[2];
} policy_fate;

static policy_fate fate_of(const res_plan *plan, const res_result *r, const res_decision *d,
                           unsigned j)
{
    policy_fate f = {1, d->first + j, d->first + j, 0, -1, {-1, -1}};
    for (unsigned q = 0; q < d->paths; q++) {
        unsigned i = d->first + q * d->policies + j;
        res_verdict v;
        res_cell_verdict(&plan->target, &r->cells[i], &v);
        const res_cell *c = &r->cells[i];
        if (c->gen_started > 0 && (f.tps < 0 || c->tps_q[0] < f.tps)) {
            f.tps = c->tps_q[0];
            f.tps_ci[0] = c->tps_ci[0];
            f.tps_ci[1] = c->tps_ci[1];
        }
        if (lighter(&r->cells[f.worst], &r->cells[i]))
            f.worst = i;
        if (!v.meets && (f.meets || v.shortfall > f.shortfall)) {
            f.missing = i;
            f.shortfall = v.shortfall;
        }
        f.meets &= v.meets;
    }
    return f;
}

/* The fastest decode's lower end among the policies of d that meet the
 * target at the largest context (*ctx); -1 when none decodes. */
static double fastest_floor(const res_plan *plan, const res_result *r, const res_decision *d,
                            uint32_t *ctx)
{
    *ctx = 0;
    for (unsigned j = 0; j < d->policies; j++) {
        policy_fate f = fate_of(plan, r, d, j);
        uint32_t c = res_cell_context(&plan->cells[f.worst]);
        if (f.meets && c > *ctx)
            *ctx = c;
    }
    double best = -1, floor = -1;
    for (unsigned j = 0; j < d->policies; j++) {
        policy_fate f = fate_of(plan, r, d, j);
        if (f.meets && res_cell_context(&plan->cells[f.worst]) == *ctx && f.tps > best) {
            best = f.tps;
            floor = f.tps_ci[0];
        }
    }
    return floor;
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
        int nbest = 0; /* the best two policies so far: best, then second */
        ranked best = {0, 0}, second = {0, 0};
        uint32_t top_ctx;
        double floor = fastest_floor(plan, r, d, &top_ctx);
        for (unsigned j = 0; j < d->policies; j++) {
            policy_fate f = fate_of(plan, r, d, j);
            ranked me = {f.worst, f.meets && floor >= 0 && f.tps >= 0 && f.tps_ci[1] >= floor &&
                                      res_cell_context(&plan->cells[f.worst]) == top_ctx};
            if (f.meets) {
                d->meeting++;
                if (nbest == 0 || better(plan, r, me, best)) {
                    second = best;
                    best = me;
                    d->recommended = (int)(d->first + j);
                    nbest++;
                } else if (nbest == 1 || better(plan, r, me, second)) {
                    second = me;
                    nbest++;
                }
                d->heaviest = (int)best.worst;
            } else if (d->closest < 0 || f.shortfall < closest ||
                       (f.shortfall == closest &&
                        lighter(&r->cells[f.missing], &r->cells[d->closest]))) {
                d->closest = (int)f.missing;
                closest = f.shortfall;
            }
        }
        d->rule = nbest < 2 ? RES_RULE_ONLY : ranks_before(plan, r, best, second);
    }
    return n;
}
