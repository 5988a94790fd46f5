/* stats.c - quantiles, Wilson and t intervals, Erlang C (spec/RESULTS.md). */
#include "results.h"

#include <math.h>

#include <gsl/gsl_cdf.h>
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
        return -1;
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
    return 0;
}
