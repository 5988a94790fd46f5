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
#include "run_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define BATCH 2048u
/* Replications of one round over the ranks: each rank's slice is at most
 * BATCH, and rank 0 holds the whole round's metrics (about 19 MB). */
#define ROUND_MAX 8192u

/* ------------------------------------------------------------ threads */

typedef struct batch_ctx {
    const mdl_cell *cell;
    uint64_t seed;
    unsigned base_cell;  /* the cell's baseline: the key of its resamples */
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
    mdl_times_sink sink = {res__add_times, t, NULL, res__add_gen};
    int rc = mdl_run_replication(b->cell, b->base + env->replication, env->alloc, &sink, &o->m,
                                 err);
    o->latency_p95 =
        res__rep_p95_and_merge(t, res__boot_key(b->seed, b->base_cell,
                                                b->base + env->replication));
    return rc;
}

/* Thread 0's histograms and resamples summed over the ranks into rank
 * 0's; the other ranks' emptied (after res__merge_threads). */
static int merge_ranks(acc *a, sim_error *err)
{
    if (sim_ranks_size() == 1)
        return SIM_OK;
    times_hist *t0 = &a->per_thread[0];
    res_hist *h[2] = {&t0->wait, &t0->latency};
    int rc = SIM_OK;
    for (int k = 0; k < 2 && rc == SIM_OK; k++) {
        rc = sim_ranks_sum(h[k]->count, RES_HIST_BUCKETS, err);
        if (rc == SIM_OK)
            rc = sim_ranks_sum(&h[k]->n, 1, err);
    }
    /* the counts of a boot_hist are all uint64_t: one array */
    if (rc == SIM_OK && t0->boot != NULL)
        rc = sim_ranks_sum((uint64_t *)t0->boot, BOOT_SUM_WORDS, err);
    if (rc != SIM_OK)
        return rc;
    if (sim_ranks_rank() != 0) {
        res__clear_thread(t0); /* its counts went into rank 0's */
        return SIM_OK;
    }
    /* other ranks' buckets: any may be non-zero now */
    t0->pool_lo = 0;
    t0->pool_hi = RES_HIST_BUCKETS - 1;
    if (t0->boot != NULL) {
        t0->boot_lo = 0;
        t0->boot_hi = RES_HIST_BUCKETS - 1;
        memset(t0->boot->used, 0xff, sizeof t0->boot->used);
    }
    return SIM_OK;
}

/* The pooled histograms of the cell: every thread's, then every rank's,
 * into rank 0's thread 0, whose resamples become the cell's. */
static int pool_hists(acc *a, sim_error *err)
{
    res__merge_threads(a);
    int rc = merge_ranks(a, err);
    if (rc != SIM_OK)
        return rc;
    const times_hist *t0 = &a->per_thread[0];
    for (unsigned k = t0->pool_lo; k <= t0->pool_hi && k < RES_HIST_BUCKETS; k++) {
        a->wait.count[k] = t0->wait.count[k];
        a->latency.count[k] = t0->latency.count[k];
    }
    a->wait.n = t0->wait.n;
    a->latency.n = t0->latency.n;
    a->pool_lo = t0->pool_lo;
    a->pool_hi = t0->pool_hi;
    if (t0->boot != NULL) {
        a->boot_cur = t0->boot;
        a->boot_lo = t0->boot_lo;
        a->boot_hi = t0->boot_hi;
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

/* What a run carries from cell to cell. */
typedef struct run_ctx {
    const res_plan *plan;
    unsigned threads;
    acc *a;
    rep_out *outs;
    size_t *lens;
    res_cell *cells;
    res_comparison *cmp;
    unsigned k; /* comparisons made */
    res_progress_fn progress;
    void *pctx;
    uint64_t digest; /* plan_digest */
    double last;     /* when the last checkpoint was written (rank 0's clock) */
} run_ctx;

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* At the end of a round (done replications of cell ci folded, on rank 0):
 * a checkpoint when one is due or asked for.  Every rank takes part:
 * whether to write one is agreed first (a signal on any rank asks), then
 * the threads' and ranks' histograms go into rank 0's thread 0, where
 * they stay (their sums do not change), and rank 0 writes.  Returns
 * SIM_EINTR after the checkpoint a signal asked for. */
static int checkpoint_point(run_ctx *x, unsigned ci, uint64_t done, int fold_rc, sim_error *err)
{
    res_checkpoint *ck = x->plan->checkpoint;
    int rc = sim_ranks_agree(fold_rc, err);
    if (rc != SIM_OK)
        return rc;
    /* 1 + the request (a signal's number, on any rank; the largest when
     * several), 1: the period is over (rank 0's clock) */
    uint64_t want = ck->request != NULL && *ck->request > 0 ? 1 + (uint64_t)*ck->request : 0;
    double t = now_seconds();
    if (want == 0 && sim_ranks_rank() == 0 && t - x->last >= ck->period)
        want = 1;
    if ((rc = sim_ranks_max(&want, 1, err)) != SIM_OK || want == 0)
        return rc;
    res__merge_threads(x->a);
    rc = merge_ranks(x->a, err);
    if (rc == SIM_OK && sim_ranks_rank() == 0)
        rc = res__ckpt_write(x->plan, x->digest, x->a, x->cells, ci, done, x->cmp, x->k,
                             ck->path, err);
    if ((rc = sim_ranks_agree(rc, err)) != SIM_OK)
        return rc;
    ck->written++;
    ck->done = (uint64_t)ci * x->plan->replications + done;
    x->last = now_seconds();
    if (want > 1) {
        ck->signal = (int)(want - 1);
        return sim_error_set(err, SIM_EINTR, "interrupted: checkpoint written");
    }
    return SIM_OK;
}

/* Cell ci's replications from `from` on (0, or where a checkpoint left
 * it: its state then is already in the accumulator and cells[ci]). */
static int run_cell(run_ctx *x, unsigned ci, uint64_t from, sim_error *err)
{
    const res_plan *plan = x->plan;
    acc *a = x->a;
    res_cell *c = &x->cells[ci];
    uint64_t reps = plan->replications;
    unsigned rank = sim_ranks_rank(), size = sim_ranks_size();
    uint64_t round = round_of(size);
    if (from == 0) {
        memset(c, 0, sizeof *c);
        res__acc_reset(a);
    }
    batch_ctx b = {&plan->cells[ci], plan->seed, res__baseline_of(plan, ci), 0, a->per_thread,
                   plan->stop};
    int fold_rc = SIM_OK; /* rank 0's folding of the last round */
    for (uint64_t base = from; base < reps; base += round) {
        uint64_t n = reps - base < round ? reps - base : round;
        uint64_t lo = slice_start(n, rank, size), hi = slice_start(n, rank + 1, size);
        b.base = plan->first_replication + base + lo;
        int rc = fold_rc;
        if (rc == SIM_OK && hi > lo)
            rc = sim_replicate(hi - lo, x->threads, one, &b, x->outs, sizeof *x->outs, err);
        if (rc != SIM_OK && fold_rc == SIM_OK) {
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
                x->lens[r] = (size_t)(slice_start(n, r + 1, size) - slice_start(n, r, size)) *
                             sizeof *x->outs;
        rc = sim_ranks_gather(x->outs, (size_t)(hi - lo) * sizeof *x->outs, x->outs, x->lens,
                              err);
        if (rc == SIM_OK)
            rc = res__gen_round(a, err);
        if (rc != SIM_OK)
            return rc;
        if (rank == 0) {
            for (uint64_t k = 0; k < n && fold_rc == SIM_OK; k++)
                fold_rc = res__fold(a, c, &x->outs[k], base + k, plan->horizon);
            if (fold_rc != SIM_OK)
                sim_error_set(err, fold_rc, "run: out of memory for the cell's figures");
            if (x->progress != NULL)
                x->progress(x->pctx, (uint64_t)ci * reps + base + n,
                            (uint64_t)plan->ncells * reps);
        }
        if (plan->checkpoint != NULL && plan->checkpoint->path != NULL &&
            (rc = checkpoint_point(x, ci, base + n, fold_rc, err)) != SIM_OK)
            return rc;
    }
    /* every rank hears of a failure to fold the last round */
    int rc = sim_ranks_agree(fold_rc, err);
    if (rc == SIM_OK)
        rc = pool_hists(a, err);
    if (rc == SIM_OK && rank == 0)
        res__finish_cell(a, c, reps, plan->horizon);
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

static void acc_destroy(acc *a)
{
    if (a == NULL)
        return;
    res__acc_sketches_free(a);
    res__gen_free(a);
    free(a->peaks);
    free(a->switch_peaks);
    free(a->margins);
    for (int s = 0; s < MDL_STAGE_COUNT; s++)
        free(a->stage[s]);
    for (int m = 0; m < RES_CMP_COUNT; m++) {
        free(a->cur.v[m]);
        free(a->base.v[m]);
    }
    for (unsigned t = 0; a->per_thread != NULL && t < a->nthreads; t++)
        free(a->per_thread[t].boot);
    free(a->per_thread_block);
    free(a->boot_base); /* boot_cur is thread 0's */
    free(a);
}

/* An accumulator for `threads` worker threads and n per-replication
 * values (rank 0 folds them all; the other ranks keep one), and gen LLM
 * requests' values (genvals.c); NULL when out of memory. */
static acc *acc_create(unsigned threads, uint64_t n, int with_boot, uint64_t gen)
{
    acc *a = calloc(1, sizeof *a);
    if (a == NULL)
        return NULL;
    a->cap = n;
    /* sizeof (times_hist) is a multiple of its 64-byte alignment; calloc
     * hands large blocks over as untouched zero pages, which only the
     * buckets used ever fault in */
    a->per_thread_block = calloc(1, threads * sizeof *a->per_thread + _Alignof(times_hist));
    if (a->per_thread_block != NULL)
        a->per_thread = (times_hist *)(((uintptr_t)a->per_thread_block + _Alignof(times_hist) - 1) &
                                       ~(uintptr_t)(_Alignof(times_hist) - 1));
    a->nthreads = threads;
    a->base_cell = UINT32_MAX;
    size_t bytes = (size_t)n * sizeof(double);
    int ok = a->per_thread != NULL && (a->peaks = malloc(bytes)) != NULL &&
             (a->switch_peaks = malloc(bytes)) != NULL && (a->margins = malloc(bytes)) != NULL;
    for (int s = 0; ok && s < MDL_STAGE_COUNT; s++)
        ok = (a->stage[s] = malloc(bytes)) != NULL;
    for (int m = 0; ok && m < RES_CMP_COUNT; m++)
        ok = (a->cur.v[m] = malloc(bytes)) != NULL && (a->base.v[m] = malloc(bytes)) != NULL;
    /* the latency resamples, only when there is something to compare */
    size_t boot = sizeof(boot_hist);
    ok = ok && (!with_boot || (a->boot_base = calloc(1, boot)) != NULL);
    for (unsigned t = 0; ok && with_boot && t < threads; t++)
        ok = (a->per_thread[t].boot = calloc(1, boot)) != NULL;
    ok = ok && (gen == 0 || res__gen_alloc(a, gen, sim_ranks_size()) == SIM_OK);
    if (!ok) {
        acc_destroy(a);
        return NULL;
    }
    for (unsigned t = 0; t < threads; t++) {
        a->per_thread[t].pool_lo = RES_HIST_BUCKETS;
        a->per_thread[t].rep.lo = RES_HIST_BUCKETS;
        a->per_thread[t].boot_lo = RES_HIST_BUCKETS;
        a->per_thread[t].boot_hi = 0;
    }
    a->boot_cur = with_boot ? a->per_thread[0].boot : NULL;
    a->pool_lo = RES_HIST_BUCKETS;
    a->pool_hi = 0;
    a->boot_lo = a->base_lo = RES_HIST_BUCKETS;
    a->boot_hi = a->base_hi = 0;
    return a;
}

/* The values kept per cell: every replication's up to exact_max. */
static uint64_t kept_of(const res_plan *plan)
{
    uint64_t cap = plan->exact_max != 0 ? plan->exact_max : RES_EXACT_MAX;
    return plan->replications < cap ? plan->replications : cap;
}

int res_resume_load(const res_plan *plan, const char *path, res_resume **out, sim_error *err)
{
    return res__ckpt_load(plan, plan_digest(plan), kept_of(plan),
                          res__comparisons_before(plan, plan->ncells) > 0, path, out, err);
}

int res_resume_parse(const res_plan *plan, const void *data, size_t len, const char *name,
                     res_resume **out, sim_error *err)
{
    *out = NULL;
    if (len > res_checkpoint_bound(plan))
        return sim_error_set(err, SIM_EINPUT, "%s: larger than a checkpoint of this run can be",
                             name);
    char *copy = malloc(len > 0 ? len : 1);
    if (copy == NULL)
        return sim_error_set(err, SIM_ENOMEM, "%s: out of memory", name);
    if (len > 0)
        memcpy(copy, data, len);
    return res__ckpt_parse(plan, plan_digest(plan), kept_of(plan), copy, len, name, out, err);
}

uint64_t res_checkpoint_bound(const res_plan *plan)
{
    return res__ckpt_bound(plan, kept_of(plan), res__comparisons_before(plan, plan->ncells) > 0);
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
    uint64_t digest = plan_digest(plan);
    int rc = sim_ranks_same(digest, "the plan (scenario text, its includes, seed, "
                            "replications, or the oomsim build)", err);
    /* and takes part in the same checkpoint collectives */
    const res_checkpoint *ck = plan->checkpoint;
    if (rc == SIM_OK)
        rc = sim_ranks_same((ck != NULL) + 2u * (ck != NULL && ck->path != NULL),
                            "--checkpoint or --resume", err);
    if (rc != SIM_OK)
        return rc;
    unsigned rank = sim_ranks_rank(), size = sim_ranks_size();
    unsigned ncmp = (unsigned)res__comparisons_before(plan, plan->ncells);
    /* rank 0 holds a round of every rank's metrics; the others a slice */
    size_t nouts = rank == 0 ? (size_t)round_of(size) : BATCH;
    acc *a = acc_create(threads, rank != 0 ? 1 : kept_of(plan), ncmp > 0, res__gen_kept(plan));
    rep_out *outs = calloc(nouts, sizeof *outs);
    size_t *lens = calloc(size, sizeof *lens);
    res_cell *cells = calloc(plan->ncells, sizeof *cells);
    res_comparison *cmp = calloc(ncmp > 0 ? ncmp : 1, sizeof *cmp);
    rc = a != NULL && outs != NULL && lens != NULL && cells != NULL && cmp != NULL
             ? SIM_OK
             : SIM_ENOMEM;
    if (rc != SIM_OK)
        sim_error_set(err, rc, "run: out of memory for %llu replications",
                      (unsigned long long)reps);
    rc = sim_ranks_agree(rc, err);
    run_ctx x = {plan, threads, a, outs, lens, cells, cmp, 0, progress, ctx, digest, 0};
    /* where a checkpoint left the run: rank 0 restores its state and
     * tells the others the cell and the replications done */
    uint64_t at[2] = {0, 0};
    if (rc == SIM_OK && ck != NULL) {
        if (rank == 0 && ck->resume != NULL) {
            unsigned cell;
            res_resume_where(ck->resume, &cell, &at[1]);
            at[0] = cell;
            rc = res__ckpt_restore(plan, ck->resume, a, cells, cmp, err);
            x.k = (unsigned)res__comparisons_before(plan, cell);
        }
        if ((rc = sim_ranks_agree(rc, err)) == SIM_OK)
            rc = sim_ranks_max(at, 2, err);
        x.last = now_seconds();
    }
    for (unsigned ci = (unsigned)at[0]; rc == SIM_OK && ci < plan->ncells; ci++) {
        rc = run_cell(&x, ci, ci == at[0] ? at[1] : 0, err);
        if (rc != SIM_OK)
            break;
        /* only rank 0 compares; then every rank hears how that went */
        if (rank == 0)
            rc = res__after_cell(plan, a, ci, cmp, &x.k, err);
        rc = sim_ranks_agree(rc, err);
    }
    acc_destroy(a);
    free(outs);
    free(lens);
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
