/* fold.c - a cell's figures from its replications: each replication's
 * output folded in replication order (so sums, and the document, are the
 * same bytes whatever ran it), the latency histograms, and the quantiles,
 * rates and means of the cell once every replication is in. */
#include "run_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void res__add_times(void *ctx, sim_time wait, sim_time latency)
{
    times_hist *t = ctx;
    unsigned wb = res__hist_bucket(wait);
    t->wait.count[wb]++;
    t->wait.n++;
    if (wb < t->pool_lo)
        t->pool_lo = wb;
    if (wb > t->pool_hi)
        t->pool_hi = wb;
    unsigned b = res__hist_bucket(latency);
    t->rep.h.count[b]++;
    t->rep.h.n++;
    if (b < t->rep.lo)
        t->rep.lo = b;
    if (b > t->rep.hi)
        t->rep.hi = b;
}

/* The replication's latency p95 (as res_hist_quantile), -1 when it has no
 * completed request; merges it into the thread's pool and clears it. */
uint64_t res__boot_key(uint64_t seed, unsigned base_cell, uint64_t rep)
{
    return seed ^ (0x9e3779b97f4a7c15u * ((uint64_t)base_cell + 1)) ^
           (0xbf58476d1ce4e5b9u * (rep + 1));
}

/* splitmix64: the weights' bits, a pure function of the key. */
static uint64_t mix(uint64_t z)
{
    z += 0x9e3779b97f4a7c15u;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}

/* A Poisson(1) draw from 64 random bits, by inversion. */
static unsigned poisson1(uint64_t bits)
{
    double u = (double)(bits >> 11) * 0x1.0p-53, p = 0.36787944117144233, cum = p;
    unsigned k = 0;
    while (u >= cum && k < 20) {
        k++;
        p /= k;
        cum += p;
    }
    return k;
}

/* Adds the replication's latencies to each resample, weighted: for each
 * of its non-empty buckets, the bucket's counts of every resample at once.
 * Integer sums, so the AVX2 clone (four resamples per instruction where
 * the CPU has it) gives the same counts as the default one. */
__attribute__((target_clones("avx2", "default"))) static void boot_add(times_hist *t,
                                                                        uint64_t key)
{
    const rep_hist *r = &t->rep;
    if (r->lo < t->boot_lo)
        t->boot_lo = r->lo;
    if (r->hi > t->boot_hi)
        t->boot_hi = r->hi;
    /* 32-bit factors with a 64-bit product: the compiler multiplies two
     * resamples per instruction (pmuludq) */
    uint32_t w[RES_LATENCY_BOOT];
    boot_hist *bh = t->boot;
    for (unsigned b = 0; b < RES_LATENCY_BOOT; b++) {
        w[b] = poisson1(mix(key + b));
        bh->n[b] += (uint64_t)w[b] * r->h.n;
    }
    for (unsigned k = r->lo; k <= r->hi; k++) {
        uint64_t c = r->h.count[k];
        if (c == 0)
            continue;
        BOOT_MARK(bh, k);
        uint64_t *row = bh->count[k];
        if (c <= UINT32_MAX) {
            uint32_t c32 = (uint32_t)c;
            for (unsigned b = 0; b < RES_LATENCY_BOOT; b++)
                row[b] += (uint64_t)w[b] * c32;
        } else {
            for (unsigned b = 0; b < RES_LATENCY_BOOT; b++)
                row[b] += w[b] * c;
        }
    }
}

double res__rep_p95_and_merge(times_hist *t, uint64_t key)
{
    rep_hist *r = &t->rep;
    double p95 = -1;
    if (r->h.n > 0 && t->boot != NULL)
        boot_add(t, key);
    if (r->h.n > 0) {
        uint64_t rank = (uint64_t)ceil(0.95 * (double)r->h.n), seen = 0;
        if (rank < 1)
            rank = 1;
        for (unsigned b = r->lo; b <= r->hi; b++) {
            seen += r->h.count[b];
            if (p95 < 0 && seen >= rank)
                p95 = (double)res__hist_mid(b);
            t->latency.count[b] += r->h.count[b];
            r->h.count[b] = 0;
        }
        t->latency.n += r->h.n;
        if (r->lo < t->pool_lo)
            t->pool_lo = r->lo;
        if (r->hi > t->pool_hi)
            t->pool_hi = r->hi;
        r->h.n = 0;
    }
    r->lo = RES_HIST_BUCKETS;
    r->hi = 0;
    return p95;
}

/* Value number n of an array kept up to cap: stored while it fits; the
 * first one past it moves the stored ones into the sketch, and it and
 * every later one go there. */
static int keep(acc *a, double *arr, uint64_t n, res__qhist *q, double v)
{
    if (n < a->cap) {
        arr[n] = v;
        return SIM_OK;
    }
    if (n == a->cap)
        for (uint64_t i = 0; i < a->cap; i++)
            if (res__qh_add(q, arr[i]) != SIM_OK)
                return SIM_ENOMEM;
    return res__qh_add(q, v);
}

/* The mapped weights, and an LLM cell's figures (docs/results.md
 * "generation"). */
static void fold_generation(res_cell *c, const mdl_rep *r)
{
    if (r->file_peak > c->file_peak_max)
        c->file_peak_max = r->file_peak;
    c->file_peak_sum += (double)r->file_peak;
    if (r->gen_requests == 0 && r->kv_peak == 0)
        return;
    c->gen_requests += r->gen_requests;
    c->context_overflow += r->context_overflow;
    c->gen_started += r->gen_started;
    c->kv_lines += r->kv_lines;
    c->tokens_out += r->tokens_out;
    c->decode_us += (double)r->decode_us;
    if (r->kv_peak > c->kv_peak_max)
        c->kv_peak_max = r->kv_peak;
    c->kv_peak_sum += (double)r->kv_peak;
    for (unsigned b = 0; b < MDL_SLOWDOWN_BUCKETS; b++) {
        c->ttft[b] += r->ttft[b];
        c->tps[b] += r->tps[b];
    }
}

/* The phone's pages (PSI mode): slowdowns, lmkd's kills, the highest
 * thrashing and swap. */
static void fold_pages(res_cell *c, const mdl_rep *r)
{
    for (unsigned b = 0; b < MDL_SLOWDOWN_BUCKETS; b++)
        c->slowdown[b] += r->slowdown[b];
    for (unsigned b = 0; b < MDL_COUNTED_BUCKETS; b++)
        c->lmkd_counted[b] += r->lmkd_counted[b];
    if (r->thrashing_max > c->thrashing_max)
        c->thrashing_max = r->thrashing_max;
    if (r->swap_used_max > c->swap_used_max)
        c->swap_used_max = r->swap_used_max;
    c->lmkd_kills_of_others += r->lmkd_kills_of_others;
    c->kernel_oom_kills += r->kernel_oom_kills;
    c->deaths_unrecorded += r->deaths_unrecorded;
    c->lmkd_wakeups += r->lmkd_wakeups;
}

int res__fold(acc *a, res_cell *c, const rep_out *o, uint64_t k, sim_time horizon)
{
    const mdl_rep *r = &o->m;
    int rc = keep(a, a->peaks, k, &a->q_peak, (double)r->peak);
    a->peak_sum += (double)r->peak;
    if (k < a->cap) { /* the pairs the comparisons keep */
        a->cur.v[RES_CMP_PEAK_P95][k] = (double)r->peak;
        a->cur.v[RES_CMP_ANY_RATE][k] = r->deaths_total > 0 ? 1.0 : 0.0;
        a->cur.v[RES_CMP_LATENCY_P95][k] = o->latency_p95;
        a->cur.v[RES_CMP_AVAILABILITY][k] = (double)r->alive_us / (double)horizon;
    }
    a->peak_stage[r->peak_stage <= MDL_STAGE_COUNT ? r->peak_stage : MDL_STAGE_COUNT]++;
    for (int s = 0; s < MDL_STAGE_COUNT && rc == SIM_OK; s++)
        if (r->stage_peak[s] >= 0)
            rc = keep(a, a->stage[s], a->nstage[s]++, &a->q_stage[s], (double)r->stage_peak[s]);
    if (r->switch_peak >= 0 && rc == SIM_OK)
        rc = keep(a, a->switch_peaks, c->with_switch++, &a->q_switch, (double)r->switch_peak);
    if (r->min_margin != INT64_MAX && rc == SIM_OK)
        rc = keep(a, a->margins, a->nmargins++, &a->q_margin, (double)r->min_margin);
    if (rc != SIM_OK)
        return rc;
    for (int x = 0; x < MDL_EXIT_COUNT; x++)
        c->by_reason[x] += r->deaths[x];
    for (int x = 0; x < MDL_LMKD_COUNT; x++)
        c->by_lmkd[x] += r->deaths_by_lmkd[x];
    for (int x = 0; x < MDL_JETSAM_COUNT; x++) {
        c->by_jetsam[x] += r->deaths_by_jetsam[x];
        c->jetsam_kills[x] += r->jetsam_kills[x];
    }
    c->successor_kills += r->successor_kills;
    fold_generation(c, r);
    if (r->visible_memory_deaths > 0)
        c->with_visible_death++;
    if (r->background_memory_deaths > 0)
        c->with_background_death++;
    if (r->deaths_total > 0) {
        c->with_death++;
        if (r->first_death == MDL_EXIT_LOW_MEMORY || r->first_death == MDL_EXIT_SYSTEM_RECLAIM) {
            c->memory_deaths[r->first_death_foreground != 0]++;
            c->death_hot_sum += (double)r->first_death_hot;
        }
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
    fold_pages(c, r);
    c->held_after_leave_us += (double)r->held_after_leave_us;
    c->leaked_sessions += r->leaked_sessions;
    c->svc_deaths += r->svc_deaths;
    c->svc_failed += r->svc_failed;
    c->svc_alive_us += (double)r->svc_alive_us;
    c->candidate_switches += r->candidate_switches;
    c->safe_mode_starts += r->safe_mode_starts;
    for (unsigned q = 0; q < r->nrecord_kinds; q++)
        mdl_record_kinds_add(c->records, &c->nrecords, &r->record_kinds[q]);
    c->events += r->events;
    a->wait_sum += r->wait_sum;
    a->latency_sum += r->latency_sum;
    a->queue_area += r->queue_area;
    a->alive += (double)r->alive_us;
    a->accepting += (double)r->accepting_us;
    return SIM_OK;
}

/* The quantiles of an array of n values: exact from the values kept, or,
 * past cap, from the sketch (the mean from sum). */
static res_q quantiles(const acc *a, double *x, uint64_t n, const res__qhist *q, int with_mean,
                       double sum)
{
    res_q r;
    memset(&r, 0, sizeof r);
    if (n == 0)
        return r;
    if (n > a->cap) {
        r.mean = with_mean ? sum / (double)n : 0;
        r.p50 = res__qh_quantile(q, 0.50);
        r.p95 = res__qh_quantile(q, 0.95);
        r.p99 = res__qh_quantile(q, 0.99);
        r.max = q->max;
        return r;
    }
    res_sort(x, (size_t)n);
    if (with_mean) {
        double s = 0;
        for (size_t i = 0; i < n; i++)
            s += x[i];
        r.mean = s / (double)n;
    }
    r.p50 = res_quantile_sorted(x, (size_t)n, 0.50);
    r.p95 = res_quantile_sorted(x, (size_t)n, 0.95);
    r.p99 = res_quantile_sorted(x, (size_t)n, 0.99);
    r.max = x[n - 1];
    return r;
}

void res__finish_cell(acc *a, res_cell *c, uint64_t reps, sim_time horizon)
{
    c->peak = quantiles(a, a->peaks, reps, &a->q_peak, 1, a->peak_sum); /* sorts a->peaks */
    for (int k = 0; k < RES_CDF_POINTS; k++) {
        double p = k / (double)(RES_CDF_POINTS - 1);
        c->peak_cdf[k] = reps > a->cap ? res__qh_quantile(&a->q_peak, p)
                                       : res_quantile_sorted(a->peaks, (size_t)reps, p);
    }
    c->switch_peak = quantiles(a, a->switch_peaks, c->with_switch, &a->q_switch, 0, 0);
    c->has_margin = a->nmargins > 0;
    if (c->has_margin && a->nmargins > a->cap) {
        c->margin_p5 = res__qh_quantile(&a->q_margin, 0.05);
        c->margin_p50 = res__qh_quantile(&a->q_margin, 0.50);
    } else if (c->has_margin) {
        res_sort(a->margins, a->nmargins);
        c->margin_p5 = res_quantile_sorted(a->margins, a->nmargins, 0.05);
        c->margin_p50 = res_quantile_sorted(a->margins, a->nmargins, 0.50);
    }
    for (int s = 0; s < MDL_STAGE_COUNT; s++) {
        c->stage_at_peak[s] = (double)a->peak_stage[s] / (double)reps;
        c->has_stage[s] = a->nstage[s] > 0;
        c->by_stage[s] = quantiles(a, a->stage[s], a->nstage[s], &a->q_stage[s], 0, 0);
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
    res__gen_finish(a, c);
    a->cur_peak_p95 = c->peak.p95;
    a->cur_any = c->any_rate;
    a->cur_avail = c->availability;
    c->top_death_stage = MDL_STAGE_NONE;
    uint64_t best = 0;
    for (int s = 0; s <= MDL_STAGE_COUNT; s++)
        if (a->death_stage[s] > best) {
            best = a->death_stage[s];
            c->top_death_stage = (mdl_stage)s;
        }
}


void res__boot_clear(boot_hist *h, unsigned lo, unsigned hi)
{
    if (h == NULL)
        return;
    for (unsigned k = lo; k <= hi && k < RES_HIST_BUCKETS; k++)
        if (BOOT_USED(h, k))
            memset(h->count[k], 0, sizeof h->count[k]);
    if (lo <= hi)
        memset(h->used, 0, sizeof h->used);
    memset(h->n, 0, sizeof h->n);
}

/* Zeroes a wait and latency pair whose buckets [*lo, *hi] may be
 * non-zero (only those: the others were never touched), and empties the
 * range. */
static void clear_pair(res_hist *w, res_hist *l, unsigned *lo, unsigned *hi)
{
    if (*lo <= *hi) {
        size_t n = (size_t)(*hi - *lo + 1) * sizeof w->count[0];
        memset(&w->count[*lo], 0, n);
        memset(&l->count[*lo], 0, n);
    }
    w->n = l->n = 0;
    *lo = RES_HIST_BUCKETS;
    *hi = 0;
}

void res__clear_thread(times_hist *th)
{
    clear_pair(&th->wait, &th->latency, &th->pool_lo, &th->pool_hi);
    res__boot_clear(th->boot, th->boot_lo, th->boot_hi);
    th->boot_lo = RES_HIST_BUCKETS;
    th->boot_hi = 0;
}

void res__merge_threads(acc *a)
{
    times_hist *t0 = &a->per_thread[0];
    for (unsigned t = 1; t < a->nthreads; t++) {
        times_hist *th = &a->per_thread[t];
        for (unsigned k = th->pool_lo; k <= th->pool_hi && k < RES_HIST_BUCKETS; k++) {
            t0->wait.count[k] += th->wait.count[k];
            t0->latency.count[k] += th->latency.count[k];
        }
        t0->wait.n += th->wait.n;
        t0->latency.n += th->latency.n;
        if (th->pool_lo < t0->pool_lo)
            t0->pool_lo = th->pool_lo;
        if (th->pool_hi > t0->pool_hi)
            t0->pool_hi = th->pool_hi;
        if (th->boot != NULL && th->boot_lo <= th->boot_hi) {
            for (unsigned k = th->boot_lo; k <= th->boot_hi; k++) {
                if (!BOOT_USED(th->boot, k))
                    continue;
                BOOT_MARK(t0->boot, k);
                for (unsigned b = 0; b < RES_LATENCY_BOOT; b++)
                    t0->boot->count[k][b] += th->boot->count[k][b];
            }
            for (unsigned b = 0; b < RES_LATENCY_BOOT; b++)
                t0->boot->n[b] += th->boot->n[b];
            if (th->boot_lo < t0->boot_lo)
                t0->boot_lo = th->boot_lo;
            if (th->boot_hi > t0->boot_hi)
                t0->boot_hi = th->boot_hi;
        }
        res__clear_thread(th);
    }
}

void res__acc_sketches_free(acc *a)
{
    res__qh_free(&a->q_peak);
    res__qh_free(&a->q_switch);
    res__qh_free(&a->q_margin);
    for (int s = 0; s < MDL_STAGE_COUNT; s++)
        res__qh_free(&a->q_stage[s]);
}

void res__acc_reset(acc *a)
{
    res__acc_sketches_free(a);
    a->peak_sum = 0;
    memset(a->nstage, 0, sizeof a->nstage);
    a->nmargins = 0;
    memset(a->peak_stage, 0, sizeof a->peak_stage);
    memset(a->death_stage, 0, sizeof a->death_stage);
    clear_pair(&a->wait, &a->latency, &a->pool_lo, &a->pool_hi);
    for (unsigned t = 0; t < a->nthreads; t++)
        res__clear_thread(&a->per_thread[t]);
    /* the cell's resamples are thread 0's, cleared with it */
    a->boot_lo = RES_HIST_BUCKETS;
    a->boot_hi = 0;
    a->wait_sum = a->latency_sum = a->queue_area = a->alive = a->accepting = a->deaths = 0;
    a->boot_loops = 0;
    a->gen.n = 0;
    a->gen.over = 0;
    for (unsigned t = 0; t < a->nthreads; t++) {
        a->per_thread[t].gen.n = 0;
        a->per_thread[t].gen.over = 0;
    }
}
