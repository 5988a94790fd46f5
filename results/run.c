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
 * of requests.
 *
 * In an MPI job (sim.h "ranks") each round of a cell's replications is
 * cut into one contiguous slice per rank, in rank order; every rank runs
 * its slice on its threads, rank 0 gathers the slices' metrics, which
 * arrive in replication order, and folds them exactly as one process
 * would; the histograms, integer counts, are summed over the ranks at
 * the end of the cell.  So the document is the same bytes for any rank
 * count as well. */
#include "results.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define BATCH 2048u
/* Replications of one round over the ranks: each rank's slice is at most
 * BATCH, and rank 0 holds the whole round's metrics (about 19 MB). */
#define ROUND_MAX 8192u

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

/* A replication's own latencies, in a histogram whose used bucket range
 * is tracked, so that clearing it and merging it cost what it holds. */
typedef struct rep_hist {
    res_hist h;
    unsigned lo, hi; /* buckets [lo, hi] may be non-zero; lo > hi: empty */
} rep_hist;

typedef struct times_hist {
    res_hist wait, latency; /* pooled over the thread's replications */
    rep_hist rep;           /* the running replication's latencies */
} times_hist;

static void add_times(void *ctx, sim_time wait, sim_time latency)
{
    times_hist *t = ctx;
    res_hist_add(&t->wait, wait);
    unsigned b = bucket_of(latency);
    if (b >= RES_HIST_BUCKETS)
        b = RES_HIST_BUCKETS - 1;
    t->rep.h.count[b]++;
    t->rep.h.n++;
    if (b < t->rep.lo)
        t->rep.lo = b;
    if (b > t->rep.hi)
        t->rep.hi = b;
}

/* The replication's latency p95 (as res_hist_quantile), -1 when it has no
 * completed request; merges it into the thread's pool and clears it. */
static double rep_p95_and_merge(times_hist *t)
{
    rep_hist *r = &t->rep;
    double p95 = -1;
    if (r->h.n > 0) {
        uint64_t rank = (uint64_t)ceil(0.95 * (double)r->h.n), seen = 0;
        if (rank < 1)
            rank = 1;
        for (unsigned b = r->lo; b <= r->hi; b++) {
            seen += r->h.count[b];
            if (p95 < 0 && seen >= rank)
                p95 = (double)bucket_mid(b);
            t->latency.count[b] += r->h.count[b];
            r->h.count[b] = 0;
        }
        t->latency.n += r->h.n;
        r->h.n = 0;
    }
    r->lo = RES_HIST_BUCKETS;
    r->hi = 0;
    return p95;
}

/* What a replication hands back: the model's metrics and its latency p95. */
typedef struct rep_out {
    mdl_rep m;
    double latency_p95;
} rep_out;

typedef struct batch_ctx {
    const mdl_cell *cell;
    uint64_t base;
    times_hist *per_thread;
    const volatile sig_atomic_t *stop;
} batch_ctx;

static int one(void *ctx, const sim_rep_env *env, void *out, sim_error *err)
{
    const batch_ctx *b = ctx;
    if (b->stop != NULL && *b->stop)
        return sim_error_set(err, SIM_EINTR, "interrupted");
    rep_out *o = out;
    times_hist *t = &b->per_thread[env->thread];
    mdl_times_sink sink = {add_times, t, NULL};
    int rc = mdl_run_replication(b->cell, b->base + env->replication, env->alloc, &sink, &o->m,
                                 err);
    o->latency_p95 = rep_p95_and_merge(t);
    return rc;
}

/* Per-replication values the comparisons pair, for one cell. */
typedef struct per_rep {
    double *v[RES_CMP_COUNT]; /* peak, any death (0/1), latency p95 (-1: none), availability */
} per_rep;

typedef struct acc {
    double *peaks;                    /* per replication, sorted for the quantiles */
    double *stage[MDL_STAGE_COUNT];   /* per replication where the stage allocated */
    double *switch_peaks;
    uint64_t nstage[MDL_STAGE_COUNT];
    uint64_t peak_stage[MDL_STAGE_COUNT + 1];
    uint64_t death_stage[MDL_STAGE_COUNT + 1];
    res_hist wait, latency;
    double wait_sum, latency_sum, queue_area, alive, accepting, deaths;
    uint64_t boot_loops;
    times_hist *per_thread; /* one per worker thread */
    unsigned nthreads;
    per_rep cur, base;      /* this cell's, and its baseline's */
    unsigned base_cell;     /* the cell whose values `base` holds; UINT_MAX: none */
} acc;

static void fold(acc *a, res_cell *c, const rep_out *o, uint64_t k, sim_time horizon)
{
    const mdl_rep *r = &o->m;
    a->peaks[k] = (double)r->peak;
    a->cur.v[RES_CMP_PEAK_P95][k] = (double)r->peak;
    a->cur.v[RES_CMP_ANY_RATE][k] = r->deaths_total > 0 ? 1.0 : 0.0;
    a->cur.v[RES_CMP_LATENCY_P95][k] = o->latency_p95;
    a->cur.v[RES_CMP_AVAILABILITY][k] = (double)r->alive_us / (double)horizon;
    a->peak_stage[r->peak_stage <= MDL_STAGE_COUNT ? r->peak_stage : MDL_STAGE_COUNT]++;
    for (int s = 0; s < MDL_STAGE_COUNT; s++)
        if (r->stage_peak[s] >= 0)
            a->stage[s][a->nstage[s]++] = (double)r->stage_peak[s];
    if (r->switch_peak >= 0)
        a->switch_peaks[c->with_switch++] = (double)r->switch_peak;
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
    c->timed_out += r->timed_out;
    c->retried += r->retried;
    c->duplicates += r->duplicates;
    c->lost += r->lost;
    c->failed += r->failed;
    c->leaks += r->leaks;
    c->warnings += r->warnings;
    c->cached_kills += r->cached_kills;
    c->switches += r->switches;
    c->candidate_switches += r->candidate_switches;
    c->safe_mode_starts += r->safe_mode_starts;
    for (unsigned q = 0; q < r->nrecord_kinds; q++) {
        const mdl_record_kind_count *x = &r->record_kinds[q];
        unsigned j = 0;
        while (j < c->nrecords &&
               !(c->records[j].kind == x->kind && c->records[j].reason == x->reason &&
                 c->records[j].status == x->status &&
                 c->records[j].importance == x->importance &&
                 c->records[j].description == x->description))
            j++;
        if (j == c->nrecords && j < MDL_RECORD_KINDS_MAX) {
            c->records[j] = *x;
            c->records[j].count = 0;
            c->records[j].pss_kb_sum = 0;
            c->nrecords++;
        }
        if (j < c->nrecords) {
            c->records[j].count += x->count;
            c->records[j].pss_kb_sum += x->pss_kb_sum;
        }
    }
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
    c->peak = quantiles(a->peaks, reps, 1); /* sorts a->peaks */
    for (int k = 0; k < RES_CDF_POINTS; k++)
        c->peak_cdf[k] = res_quantile_sorted(a->peaks, reps, k / (double)(RES_CDF_POINTS - 1));
    c->switch_peak = quantiles(a->switch_peaks, c->with_switch, 0);
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

/* ---------------------------------------------------------- comparisons */

const char *res_metric_name(res_metric m)
{
    static const char *const names[RES_CMP_COUNT] = {
        "peak.app_bytes.p95", "deaths.any_rate", "requests.latency_us.p95",
        "availability.mean"};
    return (unsigned)m < RES_CMP_COUNT ? names[m] : "?";
}

/* Stream purpose of the bootstrap (never a model purpose, docs/design/rng.md). */
#define PURPOSE_BOOTSTRAP 100u

/* The four comparisons of cell ci with its baseline, appended to cmp. */
static int compare(const res_plan *plan, acc *a, unsigned ci, uint64_t reps,
                   res_comparison *cmp, sim_error *err)
{
    double *d = malloc(reps * sizeof *d);
    if (d == NULL)
        return sim_error_set(err, SIM_ENOMEM, "run: out of memory for the comparisons");
    for (int m = 0; m < RES_CMP_COUNT; m++) {
        res_comparison *c = &cmp[m];
        c->metric = (res_metric)m;
        c->baseline = a->base_cell;
        c->cell = ci;
        const double *x = a->base.v[m], *y = a->cur.v[m];
        if (m == RES_CMP_PEAK_P95) {
            /* a quantile over replications: its paired bootstrap */
            sim_stream s;
            memset(&s, 0, sizeof s);
            if (sim_stream_init(&s, sim_alloc_default(), plan->seed, ci, PURPOSE_BOOTSTRAP) !=
                SIM_OK) {
                free(d);
                return sim_error_set(err, SIM_ENOMEM, "run: out of memory for the bootstrap");
            }
            /* at most about 10^8 resampled values per comparison */
            unsigned b = RES_BOOTSTRAP;
            if (reps > 100000)
                b = (unsigned)(100000000 / reps) < 100 ? 100 : (unsigned)(100000000 / reps);
            int rc = res_paired_quantile_diff(x, y, reps, 0.95, b, sim_stream_rng(&s), &c->diff,
                                              &c->ci);
            sim_stream_release(&s);
            if (rc != SIM_OK) {
                free(d);
                return sim_error_set(err, SIM_ENOMEM, "run: out of memory for the bootstrap");
            }
            c->pairs = reps;
            continue;
        }
        /* means of per-replication values: the mean paired difference */
        size_t n = 0;
        for (uint64_t k = 0; k < reps; k++)
            if (x[k] >= 0 && y[k] >= 0) /* latency: both replications completed requests */
                d[n++] = y[k] - x[k];
        c->diff = res_mean_ci95(d, n, &c->ci);
        c->pairs = n;
    }
    free(d);
    return SIM_OK;
}

/* The baseline of cell ci: the first cell with its device and candidate. */
static unsigned baseline_of(const res_plan *plan, unsigned ci)
{
    const mdl_cell *c = &plan->cells[ci];
    for (unsigned j = 0; j < ci; j++)
        if (plan->cells[j].device == c->device && plan->cells[j].candidate == c->candidate)
            return j;
    return ci;
}

/* The pooled histograms of the cell: every thread's, then every rank's
 * (into rank 0's). */
static int pool_hists(acc *a, sim_error *err)
{
    for (unsigned t = 0; t < a->nthreads; t++) {
        hist_merge(&a->wait, &a->per_thread[t].wait);
        hist_merge(&a->latency, &a->per_thread[t].latency);
    }
    res_hist *h[2] = {&a->wait, &a->latency};
    for (int k = 0; k < 2; k++) {
        int rc = sim_ranks_sum(h[k]->count, RES_HIST_BUCKETS, err);
        if (rc == SIM_OK)
            rc = sim_ranks_sum(&h[k]->n, 1, err);
        if (rc != SIM_OK)
            return rc;
    }
    return SIM_OK;
}

/* Where the slice of `rank` starts in a round of n replications over
 * `size` ranks; it ends where the slice of rank + 1 starts. */
static uint64_t slice_start(uint64_t n, unsigned rank, unsigned size)
{
    return n * rank / size;
}

/* Replications per round over `size` ranks. */
static uint64_t round_of(unsigned size)
{
    return (uint64_t)BATCH * size < ROUND_MAX ? (uint64_t)BATCH * size : ROUND_MAX;
}

static int run_cell(const res_plan *plan, unsigned ci, unsigned threads, acc *a, rep_out *outs,
                    size_t *lens, res_cell *c, res_progress_fn progress, void *pctx,
                    sim_error *err)
{
    uint64_t reps = plan->replications;
    unsigned rank = sim_ranks_rank(), size = sim_ranks_size();
    uint64_t round = round_of(size);
    memset(c, 0, sizeof *c);
    memset(a->nstage, 0, sizeof a->nstage);
    memset(a->peak_stage, 0, sizeof a->peak_stage);
    memset(a->death_stage, 0, sizeof a->death_stage);
    memset(&a->wait, 0, sizeof a->wait);
    memset(&a->latency, 0, sizeof a->latency);
    for (unsigned t = 0; t < a->nthreads; t++) {
        memset(&a->per_thread[t].wait, 0, sizeof a->per_thread[t].wait);
        memset(&a->per_thread[t].latency, 0, sizeof a->per_thread[t].latency);
    }
    a->wait_sum = a->latency_sum = a->queue_area = a->alive = a->accepting = a->deaths = 0;
    a->boot_loops = 0;
    batch_ctx b = {&plan->cells[ci], 0, a->per_thread, plan->stop};
    for (uint64_t base = 0; base < reps; base += round) {
        uint64_t n = reps - base < round ? reps - base : round;
        uint64_t lo = slice_start(n, rank, size), hi = slice_start(n, rank + 1, size);
        b.base = plan->first_replication + base + lo;
        int rc = hi > lo ? sim_replicate(hi - lo, threads, one, &b, outs, sizeof *outs, err)
                         : SIM_OK;
        if (rc != SIM_OK) {
            char msg[SIM_ERROR_MSG_MAX];
            snprintf(msg, sizeof msg, "%s", err->msg);
            const mdl_cell *cell = &plan->cells[ci];
            sim_error_set(err, rc, "cell %u (%s, %s): %s", ci, cell->device->name,
                          cell->candidate->id, msg);
        }
        /* every rank hears of a failure on any of them before the gather */
        if ((rc = sim_ranks_agree(rc, err)) != SIM_OK)
            return rc;
        if (rank == 0)
            for (unsigned r = 0; r < size; r++)
                lens[r] = (size_t)(slice_start(n, r + 1, size) - slice_start(n, r, size)) *
                          sizeof *outs;
        rc = sim_ranks_gather(outs, (size_t)(hi - lo) * sizeof *outs, outs, lens, err);
        if (rc != SIM_OK)
            return rc;
        if (rank != 0)
            continue;
        for (uint64_t k = 0; k < n; k++)
            fold(a, c, &outs[k], base + k, plan->horizon);
        if (progress != NULL)
            progress(pctx, (uint64_t)ci * reps + base + n, (uint64_t)plan->ncells * reps);
    }
    int rc = pool_hists(a, err);
    if (rc == SIM_OK && rank == 0)
        finish_cell(a, c, reps, plan->horizon);
    return rc;
}

/* What every rank must share to run its part of the plan: the build, the
 * plan's shape and the scenario's source text (FNV-1a, 64 bits). */
static uint64_t plan_digest(const res_plan *plan)
{
    const uint64_t shape[] = {sizeof(rep_out), sizeof(res_hist), plan->seed,
                              plan->replications, (uint64_t)plan->horizon,
                              plan->first_replication, plan->ncells, plan->digest};
    uint64_t h = sim_digest(0, SIM_VERSION, sizeof SIM_VERSION);
    h = sim_digest(h, shape, sizeof shape);
    for (unsigned ci = 0; ci < plan->ncells; ci++) {
        const mdl_cell *c = &plan->cells[ci];
        h = sim_digest(h, c->device->name, strlen(c->device->name) + 1);
        h = sim_digest(h, c->candidate->id, strlen(c->candidate->id) + 1);
        h = sim_digest(h, &c->seed, sizeof c->seed);
        if (plan->policy_json != NULL)
            h = sim_digest(h, plan->policy_json[ci], strlen(plan->policy_json[ci]) + 1);
    }
    return h;
}

/* After cell ci: keeps a baseline's values, or compares the cell with its
 * baseline into cmp[*k ..] and moves *k on. */
static int after_cell(const res_plan *plan, acc *a, unsigned ci, res_comparison *cmp,
                      unsigned *k, sim_error *err)
{
    unsigned base = baseline_of(plan, ci);
    if (base == ci) {
        /* keep its values for the cells compared with it */
        per_rep t = a->base;
        a->base = a->cur;
        a->cur = t;
        a->base_cell = ci;
        return SIM_OK;
    }
    if (base != a->base_cell)
        return sim_error_set(err, SIM_EINTERNAL, "run: the cells of device %s and candidate "
                             "%s are not contiguous", plan->cells[ci].device->name,
                             plan->cells[ci].candidate->id);
    int rc = compare(plan, a, ci, plan->replications, &cmp[*k], err);
    *k += RES_CMP_COUNT;
    return rc;
}

int res_run(const res_plan *plan, unsigned threads, res_progress_fn progress, void *ctx,
            res_result *out, sim_error *err)
{
    memset(out, 0, sizeof *out);
    uint64_t reps = plan->replications;
    if (reps == 0 || plan->ncells == 0)
        return sim_error_set(err, SIM_EINVAL, "run: nothing to run");
    if (threads == 0)
        threads = 1;
    if (threads > SIM_THREADS_MAX)
        threads = SIM_THREADS_MAX;
    /* every rank runs the same plan, or the gathered metrics mean nothing */
    int rc = sim_ranks_same(plan_digest(plan), "the plan (scenario text, its includes, seed, "
                            "replications, or the oomsim build)", err);
    if (rc != SIM_OK)
        return rc;
    unsigned rank = sim_ranks_rank(), size = sim_ranks_size();
    unsigned ncmp = 0;
    for (unsigned ci = 0; ci < plan->ncells; ci++)
        ncmp += baseline_of(plan, ci) != ci ? RES_CMP_COUNT : 0;
    /* rank 0 holds a round of every rank's metrics; the others a slice */
    size_t nouts = rank == 0 ? (size_t)round_of(size) : BATCH;
    acc *a = calloc(1, sizeof *a);
    rep_out *outs = calloc(nouts, sizeof *outs);
    size_t *lens = calloc(size, sizeof *lens);
    res_cell *cells = calloc(plan->ncells, sizeof *cells);
    res_comparison *cmp = calloc(ncmp > 0 ? ncmp : 1, sizeof *cmp);
    times_hist *per_thread = calloc(threads, sizeof *per_thread);
    rc = a != NULL && outs != NULL && lens != NULL && cells != NULL && cmp != NULL &&
                 per_thread != NULL
             ? SIM_OK
             : SIM_ENOMEM;
    if (rc == SIM_OK) {
        a->per_thread = per_thread;
        a->nthreads = threads;
        a->base_cell = UINT32_MAX;
        for (unsigned t = 0; t < threads; t++)
            per_thread[t].rep.lo = RES_HIST_BUCKETS;
        /* the per-replication values: rank 0 folds them all */
        size_t bytes = (rank == 0 ? reps : 1) * sizeof(double);
        if ((a->peaks = malloc(bytes)) == NULL || (a->switch_peaks = malloc(bytes)) == NULL)
            rc = SIM_ENOMEM;
        for (int s = 0; rc == SIM_OK && s < MDL_STAGE_COUNT; s++)
            if ((a->stage[s] = malloc(bytes)) == NULL)
                rc = SIM_ENOMEM;
        for (int m = 0; rc == SIM_OK && m < RES_CMP_COUNT; m++)
            if ((a->cur.v[m] = malloc(bytes)) == NULL || (a->base.v[m] = malloc(bytes)) == NULL)
                rc = SIM_ENOMEM;
    }
    if (rc != SIM_OK)
        sim_error_set(err, rc, "run: out of memory for %llu replications",
                      (unsigned long long)reps);
    rc = sim_ranks_agree(rc, err);
    unsigned k = 0;
    for (unsigned ci = 0; rc == SIM_OK && ci < plan->ncells; ci++) {
        rc = run_cell(plan, ci, threads, a, outs, lens, &cells[ci], progress, ctx, err);
        if (rc != SIM_OK)
            break;
        /* only rank 0 compares; then every rank hears how that went */
        if (rank == 0)
            rc = after_cell(plan, a, ci, cmp, &k, err);
        rc = sim_ranks_agree(rc, err);
    }
    if (a != NULL) {
        free(a->peaks);
        free(a->switch_peaks);
        for (int s = 0; s < MDL_STAGE_COUNT; s++)
            free(a->stage[s]);
        for (int m = 0; m < RES_CMP_COUNT; m++) {
            free(a->cur.v[m]);
            free(a->base.v[m]);
        }
    }
    free(a);
    free(outs);
    free(lens);
    free(per_thread);
    if (rc != SIM_OK || rank != 0) {
        free(cells);
        free(cmp);
        return rc;
    }
    out->cells = cells;
    out->ncells = plan->ncells;
    out->cmp = cmp;
    out->ncmp = ncmp;
    for (unsigned ci = 0; ci < plan->ncells; ci++)
        out->events += cells[ci].events;
    return SIM_OK;
}

void res_result_free(res_result *r)
{
    free(r->cells);
    free(r->cmp);
    memset(r, 0, sizeof *r);
}
