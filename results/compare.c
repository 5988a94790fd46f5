/* compare.c - each policy against its baseline (the first cell of its
 * device and candidate), paired over the replications: the peak p95 by a
 * paired bootstrap, the others by the mean of the paired differences. */
#include "run_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

const char *res_metric_name(res_metric m)
{
    static const char *const names[RES_CMP_COUNT] = {
        "peak.app_bytes.p95", "deaths.any_rate", "requests.latency_us.p95",
        "availability.mean"};
    return (unsigned)m < RES_CMP_COUNT ? names[m] : "?";
}

/* Past the values kept: the interval [lo, hi] around `sub`, the estimate
 * on the first m pairs, moved to the estimate on all n and narrowed by
 * sqrt(m / n) (the estimates' spread shrinks as one over the root of the
 * sample: the m-out-of-n bootstrap and the t interval alike). */
static res_interval rescaled(res_interval ci, double sub, double full, uint64_t m, uint64_t n)
{
    double s = sqrt((double)m / (double)n);
    res_interval r = {full + (ci.lo - sub) * s, full + (ci.hi - sub) * s};
    return r;
}

/* The four comparisons of cell ci with its baseline, appended to cmp.  Up
 * to the values kept (a->cap) every pair enters; past it the estimates
 * are the two cells' own figures over every replication, and the
 * intervals' spread comes from the first a->cap pairs (docs/results.md
 * "Large runs"). */
static int compare(const res_plan *plan, acc *a, unsigned ci, uint64_t reps,
                   res_comparison *cmp, sim_error *err)
{
    uint64_t kept = reps < a->cap ? reps : a->cap;
    int sub = kept < reps;
    double *d = malloc(kept * sizeof *d);
    if (d == NULL)
        return sim_error_set(err, SIM_ENOMEM, "run: out of memory for the comparisons");
    for (int m = 0; m < RES_CMP_COUNT; m++) {
        res_comparison *c = &cmp[m];
        c->metric = (res_metric)m;
        c->baseline = a->base_cell;
        c->cell = ci;
        const double *x = a->base.v[m], *y = a->cur.v[m];
        if (m == RES_CMP_PEAK_P95) {
            /* a quantile over replications: its paired bootstrap, keyed
             * by the baseline: every comparison of a device and candidate
             * draws the same resamples, so cells identical by construction
             * get identical intervals */
            /* at most about 10^8 resampled values per comparison */
            unsigned b = RES_BOOTSTRAP;
            if (kept > 100000)
                b = (unsigned)(100000000 / kept) < 100 ? 100 : (unsigned)(100000000 / kept);
            int rc = res_paired_quantile_diff(x, y, kept, 0.95, b, plan->seed, a->base_cell,
                                              a->nthreads, &c->diff, &c->ci);
            if (rc != SIM_OK) {
                free(d);
                return sim_error_set(err, SIM_ENOMEM, "run: out of memory for the bootstrap");
            }
            if (sub) {
                double full = a->cur_peak_p95 - a->base_peak_p95;
                c->ci = rescaled(c->ci, c->diff, full, kept, reps);
                c->diff = full;
            }
            c->pairs = reps;
            continue;
        }
        /* means of per-replication values: the mean paired difference */
        size_t n = 0;
        for (uint64_t k = 0; k < kept; k++)
            if (x[k] >= 0 && y[k] >= 0) /* latency: both replications completed requests */
                d[n++] = y[k] - x[k];
        c->diff = res_mean_ci95(d, n, &c->ci);
        c->pairs = n;
        if (sub && m != RES_CMP_LATENCY_P95) {
            /* every pair counts for these: the difference of the means */
            double full = m == RES_CMP_ANY_RATE ? a->cur_any - a->base_any
                                                : a->cur_avail - a->base_avail;
            c->ci = rescaled(c->ci, c->diff, full, kept, reps);
            c->diff = full;
            c->pairs = reps;
        }
        if (m == RES_CMP_LATENCY_P95) {
            /* the difference of the cells' own pooled p95s, with the paired
             * Poisson bootstrap's interval (docs/results.md) */
            if (a->latency.n == 0 || a->base_completed == 0) {
                c->diff = 0;
                c->ci.lo = c->ci.hi = 0;
                c->pairs = 0;
            } else {
                c->diff = (double)res_hist_quantile(&a->latency, 0.95) - a->base_latency_p95;
                c->ci = res__latency_boot(a->boot_cur, a->boot_lo, a->boot_hi, a->boot_base,
                                          a->base_lo, a->base_hi, c->diff);
            }
        }
    }
    free(d);
    return SIM_OK;
}

/* The p95 of every resample (as res_hist_quantile), in one pass over the
 * buckets [lo, hi], outside which every count is 0; -1 for a resample
 * with no latency. */
static void boot_p95(const boot_hist *h, unsigned lo, unsigned hi, double q[RES_LATENCY_BOOT])
{
    uint64_t rank[RES_LATENCY_BOOT], seen[RES_LATENCY_BOOT] = {0};
    unsigned left = 0;
    for (unsigned b = 0; b < RES_LATENCY_BOOT; b++) {
        q[b] = -1;
        if (h->n[b] == 0)
            continue;
        rank[b] = (uint64_t)ceil(0.95 * (double)h->n[b]);
        if (rank[b] < 1)
            rank[b] = 1;
        left++;
    }
    for (unsigned k = lo; k <= hi && k < RES_HIST_BUCKETS && left > 0; k++) {
        if (!BOOT_USED(h, k))
            continue; /* a row of zeros, never written */
        for (unsigned b = 0; b < RES_LATENCY_BOOT; b++) {
            if (h->n[b] == 0 || q[b] >= 0)
                continue;
            seen[b] += h->count[k][b];
            if (seen[b] >= rank[b]) {
                q[b] = (double)res__hist_mid(k);
                left--;
            }
        }
    }
}

res_interval res__latency_boot(const boot_hist *boot_cell, unsigned cell_lo, unsigned cell_hi,
                               const boot_hist *boot_base, unsigned base_lo, unsigned base_hi,
                               double diff)
{
    double d[RES_LATENCY_BOOT], qc[RES_LATENCY_BOOT], qb[RES_LATENCY_BOOT];
    boot_p95(boot_cell, cell_lo, cell_hi, qc);
    boot_p95(boot_base, base_lo, base_hi, qb);
    size_t n = 0;
    for (unsigned b = 0; b < RES_LATENCY_BOOT; b++)
        if (boot_cell->n[b] > 0 && boot_base->n[b] > 0)
            d[n++] = qc[b] - qb[b];
    res_interval ci = {diff, diff};
    if (n == 0)
        return ci;
    res_sort(d, n);
    ci.lo = res_quantile_sorted(d, n, 0.025);
    ci.hi = res_quantile_sorted(d, n, 0.975);
    return ci;
}

/* The baseline of cell ci: the first cell with its device, candidate and
 * path (a scenario's named paths are conditions to compare policies
 * under, not policies to compare). */
unsigned res__baseline_of(const res_plan *plan, unsigned ci)
{
    const mdl_cell *c = &plan->cells[ci];
    for (unsigned j = 0; j < ci; j++)
        if (plan->cells[j].device == c->device && plan->cells[j].candidate == c->candidate &&
            plan->cells[j].workload == c->workload)
            return j;
    return ci;
}

/* After cell ci: keeps a baseline's values, or compares the cell with its
 * baseline into cmp[*k ..] and moves *k on. */
int res__after_cell(const res_plan *plan, acc *a, unsigned ci, res_comparison *cmp,
                      unsigned *k, sim_error *err)
{
    unsigned base = res__baseline_of(plan, ci);
    if (base == ci) {
        /* keep its values for the cells compared with it */
        per_rep t = a->base;
        a->base = a->cur;
        a->cur = t;
        /* the cell's resamples (thread 0's array) become the baseline's;
         * thread 0 takes the old baseline's array, with its used buckets,
         * which the next reset clears */
        times_hist *t0 = &a->per_thread[0];
        boot_hist *h = a->boot_base;
        a->boot_base = t0->boot;
        t0->boot = h;
        a->boot_cur = h;
        unsigned lo = a->base_lo, hi = a->base_hi;
        a->base_lo = a->boot_lo;
        a->base_hi = a->boot_hi;
        if (h != NULL) {
            t0->boot_lo = lo;
            t0->boot_hi = hi;
        }
        a->boot_lo = RES_HIST_BUCKETS;
        a->boot_hi = 0;
        a->base_cell = ci;
        a->base_peak_p95 = a->cur_peak_p95;
        a->base_any = a->cur_any;
        a->base_avail = a->cur_avail;
        a->base_latency_p95 = (double)res_hist_quantile(&a->latency, 0.95);
        a->base_completed = a->latency.n;
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

