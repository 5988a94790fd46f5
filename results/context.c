/* context.c - the largest context per phone (docs/results.md "The largest
 * context"): for each device and candidate that generates, the largest
 * `context` at which the cell the decision chose (the recommended one, or
 * the closest) still meets the target, its other settings kept.  Each step
 * runs every open search's cells once, at its own context, with the plan's
 * seeds: the same draws at every context (common random numbers).  From a
 * context that meets the target it doubles until one misses, from one that
 * misses it halves until one meets (doubles, when only its context
 * overflow missed: a larger context overflows less); then it halves the
 * gap between the last that met and the first that missed, on llama.cpp's
 * steps of 256
 * tokens (it pads n_ctx to a multiple of 256), until they are one step
 * apart or the steps run out. */
#include "results.h"

#include <stdlib.h>
#include <string.h>

#define PAD 256u

/* The largest context the search may try: 2^20 tokens, and no generation
 * part's KV past 1 TiB. */
static uint32_t cap_of(const mdl_cell *cell)
{
    uint32_t cap = MDL_GEN_CONTEXT_MAX;
    for (unsigned k = 0; k < cell->candidate->nparts; k++) {
        const mdl_part *p = &cell->candidate->parts[k];
        if (!p->has_generation)
            continue;
        mdl_policy pol = cell->policy;
        pol.gen_context = PAD;
        mdl_generation g;
        mdl_generation_in_force(p, &pol, cell->device->os == MDL_OS_IOS, &g);
        double most = MDL_GEN_KV_MAX / (double)(g.kv_per_token > 0 ? g.kv_per_token : 1);
        if (most < (double)cap)
            cap = (uint32_t)most;
    }
    return cap / PAD * PAD;
}

/* Where a context falls: it meets the target on every path; or it is too
 * small: the context overflow misses, or with requests cut and no death
 * too many, the requests that did not complete or the latency miss (a
 * context that refuses what does not fit fails them: `on_full: fail`), and
 * a larger one may meet; or too large (anything else misses). */
enum { MEETS, TOO_SMALL, TOO_LARGE };
static int judge(const res_plan *plan, const res_result *r, const unsigned *cells, unsigned n)
{
    int all = 1, other = 0;
    for (unsigned q = 0; q < n; q++) {
        const res_cell *c = &r->cells[cells[q]];
        res_verdict v;
        res_cell_verdict(&plan->target, c, &v);
        all &= v.meets;
        int cut = c->context_overflow > 0 && v.deaths_ok;
        other |= !(v.deaths_ok && v.ttft_ok && v.tps_ok &&
                   (cut || (v.latency_ok && v.completed_ok)));
    }
    return all ? MEETS : other ? TOO_LARGE : TOO_SMALL;
}

static void record(res_context *s, uint32_t tokens, int where)
{
    if (where == MEETS && tokens > s->tokens)
        s->tokens = tokens;
    else if (where == TOO_SMALL && tokens > s->low)
        s->low = tokens;
    else if (where == TOO_LARGE && (s->upper == 0 || tokens < s->upper))
        s->upper = tokens;
}

/* The context after `from` going up: doubled, at most the cap; 0 past it. */
static uint32_t doubled(const res_context *s, uint32_t from)
{
    return from >= s->cap ? 0 : from > s->cap / 2 ? s->cap : 2 * from;
}

/* The next context of search s, 0 when it is done: up from the largest
 * that met or was too small, down from the smallest too large, then the
 * middle of the gap (on a multiple of 256 when one is inside it), until
 * the two are at most 256 tokens apart. */
static uint32_t next_probe(const res_context *s)
{
    uint32_t below = s->tokens > s->low ? s->tokens : s->low;
    if (s->upper == 0)
        return below > 0 ? doubled(s, below) : 0;
    if (below == 0) /* too large so far: halve */
        return s->upper <= PAD ? 0 : (s->upper / 2 + PAD - 1) / PAD * PAD;
    if (s->upper <= below || s->upper - below <= PAD)
        return 0;
    uint32_t half = below + (s->upper - below) / 2;
    uint32_t mid = half / PAD * PAD;
    return mid > below ? mid : half;
}

/* One step: the cells of every open search at its probe, run as a plan of
 * their own. */
static int step(const res_plan *plan, unsigned threads, res_context *s, unsigned n,
                const uint32_t *probe, res_result *r, unsigned *first, sim_error *err)
{
    unsigned ncells = 0;
    for (unsigned k = 0; k < n; k++)
        ncells += probe[k] > 0 ? s[k].paths : 0;
    mdl_cell *cells = calloc(ncells > 0 ? ncells : 1, sizeof *cells);
    if (cells == NULL)
        return sim_error_set(err, SIM_ENOMEM, "out of memory");
    unsigned at = 0;
    for (unsigned k = 0; k < n; k++) {
        first[k] = at;
        for (unsigned q = 0; probe[k] > 0 && q < s[k].paths; q++, at++) {
            cells[at] = plan->cells[s[k].cells[q]];
            cells[at].policy.gen_context = probe[k];
        }
    }
    res_plan p = *plan;
    p.cells = cells;
    p.ncells = ncells;
    p.policy_json = NULL;
    p.checkpoint = NULL;
    p.paths = 0;
    int rc = res_run(&p, threads, NULL, NULL, r, err);
    free(cells);
    return rc;
}

/* The searches of the plan's decisions, set up from the run r. */
static unsigned setup(const res_plan *plan, const res_result *r, res_context *out)
{
    res_decision *d = calloc(r->ncells, sizeof *d);
    if (d == NULL)
        return 0;
    unsigned n = res_decisions(plan, r, d);
    for (unsigned k = 0; k < n; k++) {
        res_context *s = &out[k];
        memset(s, 0, sizeof *s);
        int pick = d[k].recommended >= 0 ? d[k].recommended : d[k].closest;
        const mdl_cell *cell = &plan->cells[d[k].first];
        if (pick < 0 || res_cell_context(cell) == 0 || d[k].paths > RES_CONTEXT_PATHS)
            continue;
        unsigned j = ((unsigned)pick - d[k].first) % d[k].policies;
        s->searched = 1;
        s->base = (unsigned)pick;
        s->paths = d[k].paths;
        for (unsigned q = 0; q < d[k].paths; q++)
            s->cells[q] = d[k].first + q * d[k].policies + j;
        s->cap = cap_of(&plan->cells[s->base]);
        record(s, res_cell_context(&plan->cells[s->base]), judge(plan, r, s->cells, s->paths));
    }
    free(d);
    return n;
}

int res_context_find(const res_plan *plan, const res_result *r, unsigned threads,
                     unsigned steps, res_context *out, unsigned *n, sim_error *err)
{
    *n = 0;
    if (!plan->target.set)
        return SIM_OK;
    unsigned nd = setup(plan, r, out);
    if (nd == 0 && r->ncells > 0)
        return sim_error_set(err, SIM_ENOMEM, "out of memory");
    uint32_t *probe = calloc(nd, sizeof *probe);
    unsigned *first = calloc(nd, sizeof *first);
    int rc = probe == NULL || first == NULL ? sim_error_set(err, SIM_ENOMEM, "out of memory")
                                            : SIM_OK;
    for (unsigned t = 0; rc == SIM_OK && t < steps; t++) {
        unsigned open = 0;
        for (unsigned k = 0; k < nd; k++) {
            probe[k] = out[k].searched ? next_probe(&out[k]) : 0;
            open += probe[k] > 0;
        }
        if (open == 0)
            break;
        res_result x;
        if ((rc = step(plan, threads, out, nd, probe, &x, first, err)) != SIM_OK)
            break;
        for (unsigned k = 0; k < nd; k++) {
            if (probe[k] == 0)
                continue;
            unsigned cells[RES_CONTEXT_PATHS];
            for (unsigned q = 0; q < out[k].paths; q++)
                cells[q] = first[k] + q;
            out[k].runs++;
            record(&out[k], probe[k], judge(plan, &x, cells, out[k].paths));
        }
        res_result_free(&x);
    }
    for (unsigned k = 0; k < nd; k++) {
        res_context *s = &out[k];
        s->done = s->searched && next_probe(s) == 0;
        s->step = s->tokens > 0 && s->upper > 0 ? s->upper - s->tokens : 0;
    }
    free(probe);
    free(first);
    *n = nd;
    return rc;
}
