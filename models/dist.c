/* dist.c - the scenario distributions, sampled with GSL.
 *
 * Parameters are converted once, in the constructors:
 *   lognormal(median m, p95 q): mu = ln m, sigma = (ln q - ln m) / z95,
 *     z95 = 1.6448536269514722 (the standard normal 95 % quantile);
 *   gamma(mean, cv): shape k = 1 / cv^2, scale theta = mean * cv^2;
 *   normal(mean, sd) truncated at 0: sampled by inverting the CDF on
 *     [Phi(-mean/sd), 1], so one uniform draw gives one sample and no
 *     rejection loop can spin. */
#include "models.h"

#include <math.h>

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_randist.h>

#define Z95 1.6448536269514722
#define SAMPLE_MAX 4611686018427387904.0 /* 2^62 */

static int bad(sim_error *err, const char *what)
{
    return sim_error_set(err, SIM_EINPUT, "%s", what);
}

int mdl_dist_fixed(mdl_dist *d, int64_t value, sim_error *err)
{
    if (value < 0)
        return bad(err, "a fixed value must be >= 0");
    *d = (mdl_dist){MDL_DIST_FIXED, (double)value, 0, NULL, 0, 0, 0};
    return SIM_OK;
}

int mdl_dist_lognormal(mdl_dist *d, double median, double p95, sim_error *err)
{
    if (!(median > 0) || !isfinite(median))
        return bad(err, "lognormal: median must be > 0");
    if (!(p95 > median) || !isfinite(p95))
        return bad(err, "lognormal: p95 must be greater than the median");
    *d = (mdl_dist){MDL_DIST_LOGNORMAL, log(median), (log(p95) - log(median)) / Z95, NULL, 0, 0, 0};
    return SIM_OK;
}

int mdl_dist_exponential(mdl_dist *d, double mean, sim_error *err)
{
    if (!(mean > 0) || !isfinite(mean))
        return bad(err, "exponential: mean must be > 0");
    *d = (mdl_dist){MDL_DIST_EXPONENTIAL, mean, 0, NULL, 0, 0, 0};
    return SIM_OK;
}

int mdl_dist_uniform(mdl_dist *d, double min, double max, sim_error *err)
{
    if (!(min >= 0))
        return bad(err, "uniform: min must be >= 0");
    if (!(max >= min) || !isfinite(max))
        return bad(err, "uniform: max must be >= min");
    *d = (mdl_dist){MDL_DIST_UNIFORM, min, max, NULL, 0, 0, 0};
    return SIM_OK;
}

int mdl_dist_normal(mdl_dist *d, double mean, double sd, sim_error *err)
{
    if (!isfinite(mean))
        return bad(err, "normal: mean must be a number");
    if (!(sd > 0) || !isfinite(sd))
        return bad(err, "normal: sd must be > 0");
    if (mean / sd < -8)
        return bad(err, "normal: mean is more than 8 sd below 0, so almost no mass is left "
                        "after truncation at 0");
    *d = (mdl_dist){MDL_DIST_NORMAL, mean, sd, NULL, 0, 0, 0};
    return SIM_OK;
}

int mdl_dist_gamma(mdl_dist *d, double mean, double cv, sim_error *err)
{
    if (!(mean > 0) || !isfinite(mean))
        return bad(err, "gamma: mean must be > 0");
    if (!(cv > 0) || !(cv <= 100))
        return bad(err, "gamma: cv must be > 0 and <= 100");
    double shape = 1.0 / (cv * cv), dd = shape - 1.0 / 3.0;
    *d = (mdl_dist){MDL_DIST_GAMMA, shape, mean * cv * cv, NULL, 0, dd,
                    shape >= 1 ? (1.0 / 3.0) / sqrt(dd) : 0};
    return SIM_OK;
}

int mdl_dist_empirical(mdl_dist *d, const int64_t *values, uint32_t n, sim_error *err)
{
    if (n == 0)
        return bad(err, "empirical: values must not be empty");
    if (n > MDL_DIST_EMPIRICAL_MAX)
        return sim_error_set(err, SIM_ELIMIT, "empirical: %u values exceed the limit %d", n,
                             MDL_DIST_EMPIRICAL_MAX);
    for (uint32_t i = 0; i < n; i++)
        if (values[i] < 0)
            return sim_error_set(err, SIM_EINPUT, "empirical: value %u is negative", i);
    *d = (mdl_dist){MDL_DIST_EMPIRICAL, 0, 0, values, n, 0, 0};
    return SIM_OK;
}

/* The standard normal quantile of u in (0, 1): the central region of
 * Wichura's AS241 (|u - 1/2| <= 0.425, 85 % of draws) inline, the tails by
 * GSL.  The same coefficients and Horner order as GSL's
 * gsl_cdf_ugaussian_Pinv, so the same bits (a test compares them over
 * 10^6 draws); inline it costs a third of the library call. */
static inline double normal_quantile(double u)
{
    double q = u - 0.5;
    if (!(fabs(q) <= 0.425))
        return gsl_cdf_ugaussian_Pinv(u);
    double r = 0.180625 - q * q;
    double num = 2509.0809287301226727;
    num = r * num + 33430.575583588128105;
    num = r * num + 67265.770927008700853;
    num = r * num + 45921.953931549871457;
    num = r * num + 13731.693765509461125;
    num = r * num + 1971.5909503065514427;
    num = r * num + 133.14166789178437745;
    num = r * num + 3.387132872796366608;
    double den = 5226.495278852854561;
    den = r * den + 28729.085735721942674;
    den = r * den + 39307.89580009271061;
    den = r * den + 21213.794301586595867;
    den = r * den + 5394.1960214247511077;
    den = r * den + 687.1870074920579083;
    den = r * den + 42.313330701600911252;
    den = r * den + 1.0;
    return q * (num / den);
}

/* A gamma draw of shape >= 1 by Marsaglia and Tsang's method as GSL's
 * gsl_ran_gamma draws it (the same draws, the same bits), with d and c
 * computed once for the distribution instead of at every draw. */
static double gamma_draw(const mdl_dist *dd, gsl_rng *r)
{
    const double d = dd->p3, c = dd->p4;
    double x, v, u;
    for (;;) {
        do {
            x = gsl_ran_gaussian_ziggurat(r, 1.0);
            v = 1.0 + c * x;
        } while (v <= 0);
        v = v * v * v;
        u = gsl_rng_uniform_pos(r);
        if (u < 1 - 0.0331 * x * x * x * x)
            break;
        if (log(u) < 0.5 * x * x + d * (1 - v + log(v)))
            break;
    }
    return dd->p2 * d * v;
}

static int64_t round_clamp(double x)
{
    if (!(x > 0))
        return 0;
    if (x >= SAMPLE_MAX)
        return (int64_t)SAMPLE_MAX;
    return (int64_t)(x + 0.5);
}

int64_t mdl_dist_sample(const mdl_dist *d, gsl_rng *r)
{
    switch (d->kind) {
    case MDL_DIST_FIXED:
        return (int64_t)d->p1;
    case MDL_DIST_LOGNORMAL:
        return round_clamp(exp(d->p1 + d->p2 * normal_quantile(gsl_rng_uniform_pos(r))));
    case MDL_DIST_EXPONENTIAL:
        return round_clamp(gsl_ran_exponential(r, d->p1));
    case MDL_DIST_UNIFORM:
        return round_clamp(d->p1 + (d->p2 - d->p1) * gsl_rng_uniform(r));
    case MDL_DIST_NORMAL: {
        double lo = gsl_cdf_ugaussian_P(-d->p1 / d->p2);
        double u = lo + (1.0 - lo) * gsl_rng_uniform_pos(r);
        if (u >= 1.0)
            u = nextafter(1.0, 0.0);
        return round_clamp(d->p1 + d->p2 * normal_quantile(u));
    }
    case MDL_DIST_GAMMA:
        return round_clamp(d->p1 >= 1 ? gamma_draw(d, r) : gsl_ran_gamma(r, d->p1, d->p2));
    case MDL_DIST_EMPIRICAL:
        return d->values[gsl_rng_uniform_int(r, d->nvalues)];
    }
    return 0;
}

double mdl_dist_mean(const mdl_dist *d)
{
    switch (d->kind) {
    case MDL_DIST_FIXED:
    case MDL_DIST_EXPONENTIAL:
        return d->p1;
    case MDL_DIST_LOGNORMAL:
        return exp(d->p1 + d->p2 * d->p2 / 2);
    case MDL_DIST_UNIFORM:
        return (d->p1 + d->p2) / 2;
    case MDL_DIST_NORMAL: {
        /* Truncated at 0: mean + sd * phi(a) / (1 - Phi(a)), a = -mean/sd. */
        double a = -d->p1 / d->p2;
        return d->p1 + d->p2 * gsl_ran_ugaussian_pdf(a) / gsl_cdf_ugaussian_Q(a);
    }
    case MDL_DIST_GAMMA:
        return d->p1 * d->p2;
    case MDL_DIST_EMPIRICAL: {
        double s = 0;
        for (uint32_t i = 0; i < d->nvalues; i++)
            s += (double)d->values[i];
        return s / d->nvalues;
    }
    }
    return 0;
}

const char *mdl_dist_name(mdl_dist_kind k)
{
    static const char *const names[] = {"fixed",  "lognormal", "exponential", "uniform",
                                        "normal", "gamma",     "empirical"};
    return (unsigned)k < sizeof names / sizeof *names ? names[k] : "?";
}

/* The 1/8-octave buckets the replication keeps its histograms in (mdl_rep:
 * slowdowns, counted memory, and through them a generation's figures). */
unsigned mdl_slowdown_bucket(double ratio)
{
    if (!(ratio > 1.0))
        return 0;
    double k = floor(log2(ratio) * 8.0);
    return k >= MDL_SLOWDOWN_BUCKETS - 1 ? MDL_SLOWDOWN_BUCKETS - 1 : (unsigned)k;
}

double mdl_slowdown_middle(unsigned bucket) { return exp2(((double)bucket + 0.5) / 8.0); }

unsigned mdl_counted_bucket(int64_t bytes)
{
    /* the same 1/8-octave buckets, of MiB (at most 2^16 MiB apart from the last) */
    return mdl_slowdown_bucket((double)bytes / 1048576.0);
}

double mdl_counted_middle(unsigned bucket) { return mdl_slowdown_middle(bucket) * 1048576.0; }
