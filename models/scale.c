/* scale.c - a candidate whose memory is a factor of another's (`oomsim run
 * --headroom`, docs/devices.md "Headroom"): every stage's transient and
 * resident memory, the working sets, outputs and session states, the
 * cache miss's transient, the weights file and its hot bytes, and a
 * generation part's weights, KV per token and compute buffer.  Each
 * distribution is scaled so that a sample is the factor times the sample
 * the same draw gives the original: common random numbers across factors. */
#include "models.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int64_t times(int64_t v, double f)
{
    double x = (double)v * f;
    return x >= 9.2e18 ? INT64_MAX : (int64_t)llround(x);
}

/* d scaled in place; an empirical one's values copied into owned. */
static int scale_dist(mdl_dist *d, double f, mdl_owned *owned, sim_error *err)
{
    switch (d->kind) {
    case MDL_DIST_FIXED:
    case MDL_DIST_EXPONENTIAL:
        d->p1 *= f;
        return SIM_OK;
    case MDL_DIST_LOGNORMAL:
        d->p1 += log(f); /* exp(mu + log f + sigma z) = f exp(mu + sigma z) */
        return SIM_OK;
    case MDL_DIST_UNIFORM:
    case MDL_DIST_NORMAL:
        d->p1 *= f, d->p2 *= f;
        return SIM_OK;
    case MDL_DIST_GAMMA:
        d->p2 *= f; /* the scale; shape and Marsaglia-Tsang's constants stay */
        return SIM_OK;
    case MDL_DIST_EMPIRICAL:
        break;
    }
    if (owned->n == owned->cap) {
        unsigned cap = owned->cap ? 2 * owned->cap : 8;
        int64_t **v = realloc(owned->v, cap * sizeof *v);
        if (v == NULL)
            return sim_error_set(err, SIM_ENOMEM, "out of memory");
        owned->v = v, owned->cap = cap;
    }
    int64_t *copy = malloc(d->nvalues * sizeof *copy);
    if (copy == NULL)
        return sim_error_set(err, SIM_ENOMEM, "out of memory");
    for (uint32_t k = 0; k < d->nvalues; k++)
        copy[k] = times(d->values[k], f);
    owned->v[owned->n++] = copy;
    d->values = copy;
    return SIM_OK;
}

static int scale_amounts(mdl_amounts *a, double f, mdl_owned *owned, sim_error *err)
{
    int rc = SIM_OK;
    for (int k = 0; k < MDL_CAT_COUNT && rc == SIM_OK; k++)
        if (a->mask & (1u << k))
            rc = scale_dist(&a->cat[k], f, owned, err);
    return rc;
}

static int scale_part(mdl_part *p, double f, mdl_owned *owned, sim_error *err)
{
    mdl_amounts *all[] = {&p->load.transient,     &p->load.resident,
                          &p->prepare.transient,  &p->prepare.resident,
                          &p->delegate_prepare.transient, &p->delegate_prepare.resident,
                          &p->working_set,        &p->output, &p->session};
    int rc = SIM_OK;
    for (size_t k = 0; k < sizeof all / sizeof *all && rc == SIM_OK; k++)
        rc = scale_amounts(all[k], f, owned, err);
    p->file = times(p->file, f);
    p->hot_bytes = times(p->hot_bytes, f);
    if (p->has_generation) {
        mdl_generation *g = &p->gen;
        g->kv_per_token = times(g->kv_per_token, f);
        g->mapped = times(g->mapped, f);
        g->repacked = times(g->repacked, f);
        g->gpu = times(g->gpu, f);
        if (g->layers.bytes > 0)
            g->layers.bytes = times(g->layers.bytes, f);
        if (g->layers.output > 0)
            g->layers.output = times(g->layers.output, f);
        g->compute = times(g->compute, f);
        /* a compute buffer sized from the graph: its size times f */
        g->graph.scale = (g->graph.scale > 0 ? g->graph.scale : 1.0) * f;
    }
    return rc;
}

int mdl_candidate_scaled(const mdl_candidate *c, double f, mdl_candidate *out, sim_error *err)
{
    *out = *c;
    memset(&out->owned, 0, sizeof out->owned); /* the original's stay the original's */
    if (!(f > 0) || !isfinite(f))
        return sim_error_set(err, SIM_EINVAL, "a memory factor must be above 0");
    int rc = scale_amounts(&out->cache_miss_transient, f, &out->owned, err);
    for (unsigned k = 0; k < out->nparts && rc == SIM_OK; k++)
        rc = scale_part(&out->parts[k], f, &out->owned, err);
    if (rc != SIM_OK)
        mdl_candidate_scaled_free(out);
    return rc;
}

void mdl_candidate_scaled_free(mdl_candidate *c)
{
    for (unsigned k = 0; k < c->owned.n; k++)
        free(c->owned.v[k]);
    free(c->owned.v);
    memset(&c->owned, 0, sizeof c->owned);
}

double mdl_candidate_memory(const mdl_candidate *c)
{
    double sum = 0;
    for (unsigned k = 0; k < c->nparts; k++) {
        const mdl_part *p = &c->parts[k];
        const mdl_amounts *held[] = {&p->load.resident, &p->prepare.resident,
                                     &p->working_set, &p->session};
        for (size_t a = 0; a < sizeof held / sizeof *held; a++)
            for (int cat = 0; cat < MDL_CAT_COUNT; cat++)
                if (held[a]->mask & (1u << cat))
                    sum += mdl_dist_mean(&held[a]->cat[cat]);
        if (p->has_generation) {
            int64_t compute = p->gen.compute;
            if (p->gen.graph.heads > 0)
                compute = mdl_compute_bytes(&p->gen.graph, p->gen.context, p->gen.slots,
                                            p->gen.flash_attn != MDL_FA_OFF);
            sum += (double)(p->gen.mapped + p->gen.repacked + p->gen.gpu + compute) +
                   (double)p->gen.kv_per_token * p->gen.context;
        }
    }
    return sum;
}
