/* genvals.c - the exact quantiles of an LLM cell's requests (docs/results.md
 * "generation"): each request's time to first token and decode rate, kept
 * as a pair while the cell has at most `cap` of them (65,536 unless the
 * plan's exact_max says), so that its p50, p95 and p5 are the order
 * statistics themselves; past it the quantiles are read from the
 * 1/8-octave buckets every replication counts.
 *
 * A worker thread appends the pairs of its replications to its own
 * buffer; at the end of each round every thread's, and in an MPI job
 * every rank's, go into the cell's, which is then sorted: a multiset in a
 * canonical order, so neither the figures nor a checkpoint depend on the
 * threads or ranks that made them. */
#include "run_int.h"

#include <gsl/gsl_statistics_double.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

uint64_t res__gen_kept(const res_plan *plan)
{
    for (unsigned ci = 0; ci < plan->ncells; ci++)
        for (unsigned k = 0; k < plan->cells[ci].candidate->nparts; k++)
            if (plan->cells[ci].candidate->parts[k].has_generation)
                return plan->exact_max != 0 ? plan->exact_max : RES_EXACT_MAX;
    return 0;
}

void res__add_gen(void *ctx, sim_time ttft, double tokens_per_s)
{
    gen_vals *g = &((times_hist *)ctx)->gen;
    if (g->v == NULL)
        return;
    if (g->n >= g->cap) {
        g->over = 1;
        return;
    }
    g->v[2 * g->n] = (double)ttft;
    g->v[2 * g->n + 1] = tokens_per_s;
    g->n++;
}

static int alloc_vals(gen_vals *g, uint64_t cap)
{
    memset(g, 0, sizeof *g);
    g->cap = cap;
    g->v = malloc((size_t)(2 * cap > 0 ? 2 * cap : 1) * sizeof(double));
    return g->v != NULL;
}

int res__gen_alloc(acc *a, uint64_t cap, unsigned ranks)
{
    int ok = alloc_vals(&a->gen, cap);
    for (unsigned t = 0; ok && t < a->nthreads; t++)
        ok = alloc_vals(&a->per_thread[t].gen, cap);
    a->nranks = ranks;
    if (ok && ranks > 1 && sim_ranks_rank() == 0)
        ok = (a->gen_in = malloc((size_t)(2 * cap * ranks) * sizeof(double))) != NULL;
    if (!ok)
        res__gen_free(a);
    return ok ? SIM_OK : SIM_ENOMEM;
}

void res__gen_free(acc *a)
{
    free(a->gen.v);
    a->gen.v = NULL;
    for (unsigned t = 0; a->per_thread != NULL && t < a->nthreads; t++) {
        free(a->per_thread[t].gen.v);
        a->per_thread[t].gen.v = NULL;
    }
    free(a->gen_in);
    a->gen_in = NULL;
}

/* n pairs at p into the cell's, or its `over` set when they do not fit. */
static void take(gen_vals *g, const double *p, uint64_t n, int over)
{
    if (over || g->over || n > g->cap - g->n) {
        g->over = 1;
        return;
    }
    memcpy(g->v + 2 * g->n, p, (size_t)(2 * n) * sizeof(double));
    g->n += n;
}

static int by_ttft(const void *x, const void *y)
{
    const double *a = x, *b = y;
    if (a[0] != b[0])
        return a[0] < b[0] ? -1 : 1;
    return a[1] < b[1] ? -1 : a[1] > b[1];
}

static int by_rate(const void *x, const void *y)
{
    const double *a = x, *b = y;
    if (a[1] != b[1])
        return a[1] < b[1] ? -1 : 1;
    return a[0] < b[0] ? -1 : a[0] > b[0];
}

/* Every rank's pairs of the round into rank 0's cell: each rank's count
 * first (cap + 1: more than fit), then the pairs, in rank order. */
static int gather_ranks(acc *a, const double *mine, uint64_t n, int over, sim_error *err)
{
    unsigned rank = sim_ranks_rank(), size = a->nranks;
    uint64_t *counts = calloc(size, sizeof *counts);
    size_t *lens = calloc(size, sizeof *lens);
    if (counts == NULL || lens == NULL) {
        free(counts);
        free(lens);
        return sim_error_set(err, SIM_ENOMEM, "run: out of memory for the LLM requests' values");
    }
    uint64_t cap = a->gen.cap;
    counts[rank] = over || n > cap ? cap + 1 : n;
    int rc = sim_ranks_sum(counts, size, err);
    int any_over = 0;
    uint64_t total = 0;
    for (unsigned r = 0; rc == SIM_OK && r < size; r++) {
        any_over |= counts[r] > cap;
        lens[r] = counts[r] > cap ? 0 : (size_t)(2 * counts[r]) * sizeof(double);
        total += counts[r] > cap ? 0 : counts[r];
    }
    if (rc == SIM_OK)
        rc = sim_ranks_gather(mine, counts[rank] > cap ? 0 : (size_t)(2 * n) * sizeof(double),
                              a->gen_in, lens, err);
    if (rc == SIM_OK && rank == 0)
        take(&a->gen, a->gen_in, total, any_over);
    free(counts);
    free(lens);
    return rc;
}

int res__gen_round(acc *a, sim_error *err)
{
    if (a->gen.v == NULL)
        return SIM_OK;
    /* the threads' pairs into thread 0's, as far as they fit */
    gen_vals *t0 = &a->per_thread[0].gen;
    for (unsigned t = 1; t < a->nthreads; t++) {
        gen_vals *th = &a->per_thread[t].gen;
        take(t0, th->v, th->n, th->over);
        th->n = 0;
        th->over = 0;
    }
    int rc = SIM_OK;
    if (a->nranks > 1)
        rc = gather_ranks(a, t0->v, t0->n, t0->over, err);
    else
        take(&a->gen, t0->v, t0->n, t0->over);
    t0->n = 0;
    t0->over = 0;
    if (!a->gen.over)
        qsort(a->gen.v, (size_t)a->gen.n, 2 * sizeof(double), by_ttft);
    return rc;
}

static double bucket_middle(const uint64_t *count, double p, double (*middle)(unsigned))
{
    /* bucket 0 holds everything up to its top, which stands for it */
    int b = res_bucket_quantile(count, MDL_SLOWDOWN_BUCKETS, p);
    return b < 0 ? -1 : b == 0 ? middle(0) / exp2(1.0 / 16.0) : middle((unsigned)b);
}

void res__gen_finish(acc *a, res_cell *c)
{
    c->gen_exact = a->gen.v != NULL && !a->gen.over && a->gen.n == c->gen_requests;
    if (!c->gen_exact) {
        c->ttft_q[0] = bucket_middle(c->ttft, 0.50, mdl_ttft_middle_us);
        c->ttft_q[1] = bucket_middle(c->ttft, 0.95, mdl_ttft_middle_us);
        c->tps_q[0] = bucket_middle(c->tps, 0.50, mdl_tps_middle);
        c->tps_q[1] = bucket_middle(c->tps, 0.05, mdl_tps_middle);
        uint64_t m = 0;
        for (unsigned b = 0; b < MDL_SLOWDOWN_BUCKETS; b++)
            m += c->tps[b];
        double h = m > 0 ? 0.98 / sqrt((double)m) : 0.5;
        c->tps_ci[0] = bucket_middle(c->tps, fmax(0.5 - h, 0), mdl_tps_middle);
        c->tps_ci[1] = bucket_middle(c->tps, fmin(0.5 + h, 1), mdl_tps_middle);
        return;
    }
    size_t n = (size_t)a->gen.n;
    const double *v = a->gen.v;
    /* sorted by ttft at the round's end: its column, every other value */
    c->ttft_q[0] = n > 0 ? gsl_stats_quantile_from_sorted_data(v, 2, n, 0.50) : -1;
    c->ttft_q[1] = n > 0 ? gsl_stats_quantile_from_sorted_data(v, 2, n, 0.95) : -1;
    qsort(a->gen.v, n, 2 * sizeof(double), by_rate);
    size_t skip = 0;
    while (skip < n && v[2 * skip + 1] < 0)
        skip++;
    const double *r = v + 2 * skip + 1;
    c->tps_q[0] = n > skip ? gsl_stats_quantile_from_sorted_data(r, 2, n - skip, 0.50) : -1;
    c->tps_q[1] = n > skip ? gsl_stats_quantile_from_sorted_data(r, 2, n - skip, 0.05) : -1;
    /* the median's interval: the ranks m/2 -+ 1.96 sqrt(m)/2 (the binomial's
     * normal approximation; distribution-free) */
    size_t m = n - skip;
    double h = 0.98 * sqrt((double)m);
    long lo = (long)floor((double)m / 2 - h), hi = (long)ceil((double)m / 2 + h);
    c->tps_ci[0] = m > 0 ? r[2 * (size_t)(lo < 0 ? 0 : lo)] : -1;
    c->tps_ci[1] = m > 0 ? r[2 * (size_t)(hi > (long)m - 1 ? (long)m - 1 : hi)] : -1;
}
