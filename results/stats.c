/* stats.c - quantiles, Wilson and t intervals, Erlang C (docs/results.md). */
#include "results.h"
#include "internal.h"

#include <math.h>

#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_rng.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>

#define Z95 1.959963984540054

res_interval res_wilson95(uint64_t k, uint64_t n)
{
    res_interval ci = {0.0, 1.0};
    if (n == 0)
        return ci;
    if (k > n)
        k = n;
    double nn = (double)n, p = (double)k / nn, z2 = Z95 * Z95;
    double centre = (p + z2 / (2 * nn)) / (1 + z2 / nn);
    double half = Z95 * sqrt(p * (1 - p) / nn + z2 / (4 * nn * nn)) / (1 + z2 / nn);
    ci.lo = centre - half < 0 ? 0 : centre - half;
    ci.hi = centre + half > 1 ? 1 : centre + half;
    /* Exact ends: no successes cannot exclude 0, all successes cannot exclude 1. */
    if (k == 0)
        ci.lo = 0;
    if (k == n)
        ci.hi = 1;
    return ci;
}

double res_mean_ci95(const double *x, size_t n, res_interval *ci)
{
    double mean = n > 0 ? gsl_stats_mean(x, 1, n) : 0.0;
    double half = 0;
    if (n >= 2) {
        double sd = gsl_stats_sd_m(x, 1, n, mean);
        half = gsl_cdf_tdist_Pinv(0.975, (double)(n - 1)) * sd / sqrt((double)n);
    }
    if (ci != NULL) {
        ci->lo = mean - half;
        ci->hi = mean + half;
    }
    return mean;
}

double res_quantile_sorted(const double *sorted, size_t n, double p)
{
    if (n == 0)
        return 0;
    if (p < 0)
        p = 0;
    if (p > 1)
        p = 1;
    return gsl_stats_quantile_from_sorted_data(sorted, 1, n, p);
}

void res_sort(double *x, size_t n) { gsl_sort(x, 1, n); }

int res_erlang_c_compute(double lambda, double mu, unsigned c, res_erlang_c *out)
{
    if (!(lambda > 0) || !(mu > 0) || c == 0 || !(lambda < (double)c * mu) || c > 100000)
        return SIM_EINVAL;
    double a = lambda / mu; /* offered load in Erlangs */
    double rho = a / c;
    /* Erlang B by its stable recurrence, then C from B. */
    double b = 1.0;
    for (unsigned k = 1; k <= c; k++)
        b = a * b / (k + a * b);
    double pw = b / (1 - rho + rho * b);
    out->p_wait = pw;
    out->wq = pw / ((double)c * mu - lambda);
    out->lq = lambda * out->wq;
    out->rho = rho;
    return SIM_OK;
}

/* The p-quantile of a resample given by multiplicities: the values in
 * ascending order are v[order[0..n)], value k taken m[k] times (n in all). */
static double weighted_quantile(const double *v, const size_t *order, const uint32_t *m,
                                size_t n, double p)
{
    double h = p * (double)(n - 1);
    size_t lhs = (size_t)h;
    double delta = h - (double)lhs;
    size_t seen = 0, j = 0;
    while (seen + m[order[j]] <= lhs) /* the item holding position lhs */
        seen += m[order[j++]];
    double a = v[order[j]];
    if (delta == 0 || lhs + 1 >= n)
        return a;
    if (seen + m[order[j]] <= lhs + 1) { /* position lhs + 1 is the next item */
        do
            j++;
        while (m[order[j]] == 0);
    }
    return a + delta * (v[order[j]] - a);
}

int res_paired_quantile_diff(const double *x, const double *y, size_t n, double p,
                             unsigned resamples, void *rng, double *diff, res_interval *ci)
{
    *diff = 0;
    ci->lo = ci->hi = 0;
    if (n == 0)
        return 0;
    double *sx = malloc(n * sizeof *sx), *sy = malloc(n * sizeof *sy);
    size_t *ox = malloc(n * sizeof *ox), *oy = malloc(n * sizeof *oy);
    uint32_t *m = malloc(n * sizeof *m);
    double *d = malloc((resamples > 0 ? resamples : 1) * sizeof *d);
    int rc = sx && sy && ox && oy && m && d ? SIM_OK : SIM_ENOMEM;
    if (rc == SIM_OK) {
        memcpy(sx, x, n * sizeof *sx);
        memcpy(sy, y, n * sizeof *sy);
        gsl_sort(sx, 1, n);
        gsl_sort(sy, 1, n);
        *diff = gsl_stats_quantile_from_sorted_data(sy, 1, n, p) -
                gsl_stats_quantile_from_sorted_data(sx, 1, n, p);
        gsl_sort_index(ox, x, 1, n);
        gsl_sort_index(oy, y, 1, n);
        for (unsigned b = 0; b < resamples; b++) {
            memset(m, 0, n * sizeof *m);
            for (size_t k = 0; k < n; k++)
                m[gsl_rng_uniform_int((gsl_rng *)rng, n)]++;
            d[b] = weighted_quantile(y, oy, m, n, p) - weighted_quantile(x, ox, m, n, p);
        }
        if (resamples > 0) {
            gsl_sort(d, 1, resamples);
            ci->lo = gsl_stats_quantile_from_sorted_data(d, 1, resamples, 0.025);
            ci->hi = gsl_stats_quantile_from_sorted_data(d, 1, resamples, 0.975);
        } else {
            ci->lo = ci->hi = *diff;
        }
    }
    free(sx);
    free(sy);
    free(ox);
    free(oy);
    free(m);
    free(d);
    return rc;
}

/* ------------------------------------------------------------ histogram */

#define SUB_BITS 7

unsigned res__hist_bucket(int64_t v)
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
int64_t res__hist_mid(unsigned b)
{
    if (b < (2u << SUB_BITS))
        return (int64_t)b;
    unsigned shift = (b >> SUB_BITS) - 1;
    uint64_t m = (uint64_t)(b - (shift << SUB_BITS));
    return (int64_t)((m << shift) + ((UINT64_C(1) << shift) >> 1));
}

void res_hist_add(res_hist *h, int64_t v)
{
    unsigned b = res__hist_bucket(v);
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
            return res__hist_mid(b);
    }
    return res__hist_mid(RES_HIST_BUCKETS - 1);
}
