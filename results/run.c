/* run.c - the run driver: every cell of a plan, R replications each, in
 * batches over threads, aggregated in replication order.
 *
 * Replications of a batch run on threads (sim_replicate), each in its own
 * arena; their metrics are then folded into the cell's aggregates in
 * replication order, so floating-point sums, and so the document, are the
 * same bytes whatever the thread count.  Request wait and latency go
 * straight into one histogram pair per worker thread as requests complete
 * (integer counts, merged per cell: the sum does not depend on which
 * thread ran which replication), so memory does not grow with the number
 * of requests. */
#include "results.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define BATCH 2048u

/* ------------------------------------------------------------ histogram */

#define SUB_BITS 7

static unsigned bucket_of(int64_t v)
{
    if (v < 0)
        v = 0;
    uint64_t u = (uint64_t)v;
    if (u < (UINT64_C(2) << SUB_BITS))
        return (unsigned)u;
    unsigned e = 63u - (unsigned)__builtin_clzll(u);
    unsigned shift = e - SUB_BITS;
    return (shift << SUB_BITS) + (unsigned)(u >> shift);
}

/* The midpoint of bucket b: b = (shift << SUB_BITS) + m, m in
 * [2^SUB_BITS, 2^(SUB_BITS+1)), covers [m << shift, (m + 1) << shift). */
static int64_t bucket_mid(unsigned b)
{
    if (b < (2u << SUB_BITS))
        return (int64_t)b;
    unsigned shift = (b >> SUB_BITS) - 1;
    uint64_t m = (uint64_t)(b - (shift << SUB_BITS));
    return (int64_t)((m << shift) + ((UINT64_C(1) << shift) >> 1));
}

void res_hist_add(res_hist *h, int64_t v)
{
    unsigned b = bucket_of(v);
    if (b >= RES_HIST_BUCKETS)
        b = RES_HIST_BUCKETS - 1;
    h->count[b]++;
    h->n++;
}

int64_t res_hist_quantile(const res_hist *h, double p)
{
    if (h->n == 0)
        return 0;
    uint64_t rank = (uint64_t)ceil(p * (double)h->n);
    if (rank < 1)
        rank = 1;
    uint64_t seen = 0;
    for (unsigned b = 0; b < RES_HIST_BUCKETS; b++) {
        seen += h->count[b];
        if (seen >= rank)
            return bucket_mid(b);
    }
    return bucket_mid(RES_HIST_BUCKETS - 1);
}

/* ------------------------------------------------------------ the cells */

typedef struct times_hist {
    res_hist wait, latency;
} times_hist;

static void add_times(void *ctx, sim_time wait, sim_time latency)
{
    times_hist *h = ctx;
    res_hist_add(&h->wait, wait);
    res_hist_add(&h->latency, latency);
}

typedef struct batch_ctx {
    const mdl_cell *cell;
    uint64_t base;
    times_hist *per_thread;
} batch_ctx;

static int one(void *ctx, const sim_rep_env *env, void *out, sim_error *err)
{
    const batch_ctx *b = ctx;
    mdl_times_sink sink = {add_times, &b->per_thread[env->thread]};
    return mdl_run_replication(b->cell, b->base + env->replication, env->alloc, &sink, out,
                               err);
}

typedef struct acc {
    double *peaks;                    /* per replication */
    double *stage[MDL_STAGE_COUNT];   /* per replication where the stage allocated */
    uint64_t nstage[MDL_STAGE_COUNT];
    uint64_t peak_stage[MDL_STAGE_COUNT + 1];
    uint64_t death_stage[MDL_STAGE_COUNT + 1];
    res_hist wait, latency;
    double wait_sum, latency_sum, queue_area, alive, accepting, deaths;
    uint64_t boot_loops;
    times_hist *per_thread; /* one per worker thread */
    unsigned nthreads;
} acc;

static void fold(acc *a, res_cell *c, const mdl_rep *r, uint64_t k)
{
    a->peaks[k] = (double)r->peak;
    a->peak_stage[r->peak_stage <= MDL_STAGE_COUNT ? r->peak_stage : MDL_STAGE_COUNT]++;
    for (int s = 0; s < MDL_STAGE_COUNT; s++)
        if (r->stage_peak[s] >= 0)
            a->stage[s][a->nstage[s]++] = (double)r->stage_peak[s];
    for (int x = 0; x < MDL_EXIT_COUNT; x++)
        c->by_reason[x] += r->deaths[x];
    if (r->deaths_total > 0) {
        c->with_death++;
        a->death_stage[r->first_death_stage <= MDL_STAGE_COUNT ? r->first_death_stage
                                                               : MDL_STAGE_COUNT]++;
    }
    a->deaths += r->deaths_total;
    a->boot_loops += (uint64_t)r->boot_loop;
    c->arrived += r->arrived;
    c->completed += r->completed;
    c->rejected += r->rejected;
    c->lost += r->lost;
    c->failed += r->failed;
    c->leaks += r->leaks;
    c->warnings += r->warnings;
    c->cached_kills += r->cached_kills;
    c->events += r->events;
    a->wait_sum += r->wait_sum;
    a->latency_sum += r->latency_sum;
    a->queue_area += r->queue_area;
    a->alive += (double)r->alive_us;
    a->accepting += (double)r->accepting_us;
}

static void hist_merge(res_hist *into, const res_hist *from)
{
    for (unsigned b = 0; b < RES_HIST_BUCKETS; b++)
        into->count[b] += from->count[b];
    into->n += from->n;
}

static res_q quantiles(double *x, size_t n, int with_mean)
{
    res_q q;
    memset(&q, 0, sizeof q);
    if (n == 0)
        return q;
    res_sort(x, n);
    if (with_mean) {
        double sum = 0;
        for (size_t i = 0; i < n; i++)
            sum += x[i];
        q.mean = sum / (double)n;
    }
    q.p50 = res_quantile_sorted(x, n, 0.50);
    q.p95 = res_quantile_sorted(x, n, 0.95);
    q.p99 = res_quantile_sorted(x, n, 0.99);
    q.max = x[n - 1];
    return q;
}

static void finish_cell(acc *a, res_cell *c, uint64_t reps, sim_time horizon)
{
    for (unsigned t = 0; t < a->nthreads; t++) {
        hist_merge(&a->wait, &a->per_thread[t].wait);
        hist_merge(&a->latency, &a->per_thread[t].latency);
    }
    c->peak = quantiles(a->peaks, reps, 1);
    for (int s = 0; s < MDL_STAGE_COUNT; s++) {
        c->stage_at_peak[s] = (double)a->peak_stage[s] / (double)reps;
        c->has_stage[s] = a->nstage[s] > 0;
        c->by_stage[s] = quantiles(a->stage[s], a->nstage[s], 0);
    }
    c->deaths_mean = a->deaths / (double)reps;
    c->any_rate = (double)c->with_death / (double)reps;
    c->any_ci = res_wilson95(c->with_death, reps);
    c->boot_loop_rate = (double)a->boot_loops / (double)reps;
    double done = (double)c->completed;
    c->wait_us.mean = c->completed ? a->wait_sum / done : 0;
    c->latency_us.mean = c->completed ? a->latency_sum / done : 0;
    c->wait_us.p50 = (double)res_hist_quantile(&a->wait, 0.50);
    c->wait_us.p95 = (double)res_hist_quantile(&a->wait, 0.95);
    c->wait_us.p99 = (double)res_hist_quantile(&a->wait, 0.99);
    c->latency_us.p50 = (double)res_hist_quantile(&a->latency, 0.50);
    c->latency_us.p95 = (double)res_hist_quantile(&a->latency, 0.95);
    c->latency_us.p99 = (double)res_hist_quantile(&a->latency, 0.99);
    c->queue_len_mean = a->alive > 0 ? a->queue_area / a->alive : 0;
    double total = (double)horizon * (double)reps;
    c->availability = a->alive / total;
    c->inference_availability = a->accepting / total;
    c->top_reason = MDL_EXIT_LOW_MEMORY;
    for (int x = 1; x < MDL_EXIT_COUNT; x++)
        if (c->by_reason[x] > c->by_reason[c->top_reason])
            c->top_reason = (mdl_exit)x;
    c->top_death_stage = MDL_STAGE_NONE;
    uint64_t best = 0;
    for (int s = 0; s <= MDL_STAGE_COUNT; s++)
        if (a->death_stage[s] > best) {
            best = a->death_stage[s];
            c->top_death_stage = (mdl_stage)s;
        }
}

static int run_cell(const res_plan *plan, unsigned ci, unsigned threads, acc *a, mdl_rep *outs,
                    res_cell *c, res_progress_fn progress, void *pctx, sim_error *err)
{
    uint64_t reps = plan->replications;
    memset(c, 0, sizeof *c);
    memset(a->nstage, 0, sizeof a->nstage);
    memset(a->peak_stage, 0, sizeof a->peak_stage);
    memset(a->death_stage, 0, sizeof a->death_stage);
    memset(&a->wait, 0, sizeof a->wait);
    memset(&a->latency, 0, sizeof a->latency);
    memset(a->per_thread, 0, a->nthreads * sizeof *a->per_thread);
    a->wait_sum = a->latency_sum = a->queue_area = a->alive = a->accepting = a->deaths = 0;
    a->boot_loops = 0;
    batch_ctx b = {&plan->cells[ci], 0, a->per_thread};
    for (uint64_t base = 0; base < reps; base += BATCH) {
        uint64_t n = reps - base < BATCH ? reps - base : BATCH;
        b.base = base;
        int rc = sim_replicate(n, threads, one, &b, outs, sizeof *outs, err);
        if (rc != SIM_OK) {
            char msg[SIM_ERROR_MSG_MAX];
            snprintf(msg, sizeof msg, "%s", err->msg);
            const mdl_cell *cell = &plan->cells[ci];
            return sim_error_set(err, rc, "cell %u (%s, %s): %s", ci, cell->device->name,
                                 cell->candidate->id, msg);
        }
        for (uint64_t k = 0; k < n; k++)
            fold(a, c, &outs[k], base + k);
        if (progress != NULL)
            progress(pctx, (uint64_t)ci * reps + base + n, (uint64_t)plan->ncells * reps);
    }
    finish_cell(a, c, reps, plan->horizon);
    return SIM_OK;
}

int res_run(const res_plan *plan, unsigned threads, res_progress_fn progress, void *ctx,
            res_result *out, sim_error *err)
{
    memset(out, 0, sizeof *out);
    uint64_t reps = plan->replications;
    if (reps == 0 || plan->ncells == 0)
        return sim_error_set(err, SIM_EINVAL, "run: nothing to run");
    acc *a = calloc(1, sizeof *a);
    mdl_rep *outs = calloc(BATCH, sizeof *outs);
    res_cell *cells = calloc(plan->ncells, sizeof *cells);
    if (threads == 0)
        threads = 1;
    if (threads > SIM_THREADS_MAX)
        threads = SIM_THREADS_MAX;
    times_hist *per_thread = calloc(threads, sizeof *per_thread);
    int rc = a != NULL && outs != NULL && cells != NULL && per_thread != NULL ? SIM_OK
                                                                            : SIM_ENOMEM;
    if (rc == SIM_OK) {
        a->per_thread = per_thread;
        a->nthreads = threads;
    }
    if (rc == SIM_OK && (a->peaks = malloc(reps * sizeof(double))) == NULL)
        rc = SIM_ENOMEM;
    for (int s = 0; rc == SIM_OK && s < MDL_STAGE_COUNT; s++)
        if ((a->stage[s] = malloc(reps * sizeof(double))) == NULL)
            rc = SIM_ENOMEM;
    if (rc != SIM_OK)
        sim_error_set(err, rc, "run: out of memory for %llu replications",
                      (unsigned long long)reps);
    for (unsigned ci = 0; rc == SIM_OK && ci < plan->ncells; ci++)
        rc = run_cell(plan, ci, threads, a, outs, &cells[ci], progress, ctx, err);
    if (a != NULL) {
        free(a->peaks);
        for (int s = 0; s < MDL_STAGE_COUNT; s++)
            free(a->stage[s]);
    }
    free(a);
    free(outs);
    free(per_thread);
    if (rc != SIM_OK) {
        free(cells);
        return rc;
    }
    out->cells = cells;
    out->ncells = plan->ncells;
    for (unsigned ci = 0; ci < plan->ncells; ci++)
        out->events += cells[ci].events;
    return SIM_OK;
}

void res_result_free(res_result *r)
{
    free(r->cells);
    memset(r, 0, sizeof *r);
}
