/* results.h - statistics over replications, result documents, tables and plots.
 *
 * So far: the statistics the result document is built from
 * (spec/RESULTS.md): quantiles, Wilson intervals for rates, t intervals
 * for means and paired differences, and the Erlang C reference the
 * queueing tests compare against.  Pure functions, thread-safe. */
#ifndef OOMSIM_RESULTS_H
#define OOMSIM_RESULTS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct res_interval {
    double lo, hi;
} res_interval;

/* Wilson score interval at 95 % for k successes out of n trials
 * (z = 1.959964).  n == 0 gives [0, 1].  k > n is clamped to n. */
res_interval res_wilson95(uint64_t k, uint64_t n);

/* The mean of x[0..n) and its 95 % confidence interval from Student's t
 * with n - 1 degrees of freedom; n < 2 gives a zero-width interval at the
 * mean (0 for n == 0).  Used for paired differences between cells. */
double res_mean_ci95(const double *x, size_t n, res_interval *ci);

/* The p-quantile (0 <= p <= 1) of sorted[0..n) by GSL's definition
 * (linear interpolation between order statistics, type 7).  n == 0 gives 0. */
double res_quantile_sorted(const double *sorted, size_t n, double p);

/* Sorts x[0..n) in place (ascending, NaN-free input). */
void res_sort(double *x, size_t n);

/* M/M/c with arrival rate lambda and service rate mu per server
 * (same time unit), c >= 1, lambda < c * mu. */
typedef struct res_erlang_c {
    double p_wait; /* probability that an arrival waits (Erlang C) */
    double wq;     /* mean wait in queue */
    double lq;     /* mean queue length (Little: lambda * wq) */
    double rho;    /* utilisation lambda / (c mu) */
} res_erlang_c;

/* Returns 0 and fills *out, or -1 for parameters outside the domain. */
int res_erlang_c_compute(double lambda, double mu, unsigned c, res_erlang_c *out);

#ifdef __cplusplus
}
#endif

#endif /* OOMSIM_RESULTS_H */
