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

int res_bucket_quantile(const uint64_t *count, unsigned n, double p)
{
    uint64_t total = 0, seen = 0;
    for (unsigned k = 0; k < n; k++)
        total += count[k];
    if (total == 0)
        return -1;
    uint64_t rank = (uint64_t)ceil(p * (double)total);
    if (rank < 1)
        rank = 1;
    for (unsigned k = 0; k < n; k++) {
        seen += count[k];
        if (seen >= rank)
            return (int)k;
    }
    return (int)n - 1;
}

double res_lmkd_counted_p50(const res_cell *c)
{
    int k = res_bucket_quantile(c->lmkd_counted, MDL_COUNTED_BUCKETS, 0.50);
    return k < 0 ? -1 : mdl_counted_middle((unsigned)k);
}

int res_lmkd_kills_first(const res_cell *c)
{
    int best = -1;
    for (int x = MDL_LMKD_FIRST_REASON; x < MDL_LMKD_COUNT; x++)
        if (c->by_lmkd[x] > 0 && (best < 0 || c->by_lmkd[x] > c->by_lmkd[best]))
            best = x;
    return best;
}

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

/* The sorted item holding position q (0-based) of a resample given by
 * multiplicities: the values in ascending order are v[order[0..n)], value k
 * taken m[k] times (n in all).  Walked from the nearer end, so a tail
 * quantile costs its tail. */
static size_t item_at(const size_t *order, const uint32_t *m, size_t n, size_t q)
{
    size_t seen = 0, j = 0;
    if (q < n / 2) {
        while (seen + m[order[j]] <= q)
            seen += m[order[j++]];
        return j;
    }
    size_t above = n - 1 - q; /* positions above q */
    j = n;
    do
        seen += m[order[--j]];
    while (seen <= above);
    return j;
}

/* The p-quantile of such a resample, as res_quantile_sorted. */
static double weighted_quantile(const double *v, const size_t *order, const uint32_t *m,
                                size_t n, double p)
{
    double h = p * (double)(n - 1);
    size_t lhs = (size_t)h;
    double delta = h - (double)lhs;
    double a = v[order[item_at(order, m, n, lhs)]];
    if (delta == 0 || lhs + 1 >= n)
        return a;
    return a + delta * (v[order[item_at(order, m, n, lhs + 1)]] - a);
}

/* What the resamples share, each resample drawing its own indices. */
/* Each worker thread's stream state, reused by its resamples: a
 * "allocator" of one block. */
typedef struct state_slot {
    sim_alloc alloc;
    _Alignas(16) unsigned char buf[64];
} state_slot;

static void *slot_malloc(void *ctx, size_t n)
{
    state_slot *s = ctx;
    return n <= sizeof s->buf ? s->buf : NULL;
}

static void *slot_realloc(void *ctx, void *p, size_t old, size_t n)
{
    (void)ctx;
    (void)p;
    (void)old;
    (void)n;
    return NULL;
}

static void slot_free(void *ctx, void *p, size_t n)
{
    (void)ctx;
    (void)p;
    (void)n;
}

typedef struct boot_job {
    const double *x, *y;
    const size_t *ox, *oy;
    size_t n;
    double p;
    uint64_t seed, key;
    uint32_t *m;       /* n multiplicities per worker thread */
    state_slot *slots; /* one per worker thread */
} boot_job;

/* A resample allocates nothing (so its arena is never reset, and an
 * allocation sweep has nothing of it to fail): its multiplicities and its
 * stream state are its thread's. */
static int one_resample(void *ctx, const sim_rep_env *env, void *out, sim_error *err)
{
    const boot_job *j = ctx;
    uint32_t *m = j->m + (size_t)env->thread * j->n;
    state_slot *slot = &j->slots[env->thread];
    slot->alloc = (sim_alloc){slot_malloc, slot_realloc, slot_free, slot};
    sim_stream s;
    memset(&s, 0, sizeof s);
    if (sim_stream_init(&s, &slot->alloc, j->seed, j->key,
                        RES_PURPOSE_BOOTSTRAP + env->replication) != SIM_OK)
        return sim_error_set(err, SIM_EINTERNAL, "bootstrap: a stream state does not fit");
    memset(m, 0, j->n * sizeof *m);
    gsl_rng *r = sim_stream_rng(&s);
    for (size_t k = 0; k < j->n; k++)
        m[gsl_rng_uniform_int(r, j->n)]++;
    sim_stream_release(&s);
    *(double *)out = weighted_quantile(j->y, j->oy, m, j->n, j->p) -
                     weighted_quantile(j->x, j->ox, m, j->n, j->p);
    return SIM_OK;
}

int res_paired_quantile_diff(const double *x, const double *y, size_t n, double p,
                             unsigned resamples, uint64_t seed, uint64_t key, unsigned threads,
                             double *diff, res_interval *ci)
{
    *diff = 0;
    ci->lo = ci->hi = 0;
    if (n == 0)
        return SIM_OK;
    double *sx = malloc(n * sizeof *sx), *sy = malloc(n * sizeof *sy);
    size_t *ox = malloc(n * sizeof *ox), *oy = malloc(n * sizeof *oy);
    double *d = malloc((resamples > 0 ? resamples : 1) * sizeof *d);
    /* threads only for work that repays starting them (the interval is
     * the same bytes either way): from about 4 million resampled values */
    if (threads == 0 || (uint64_t)n * resamples < (UINT64_C(1) << 22))
        threads = 1;
    if (threads > SIM_THREADS_MAX)
        threads = SIM_THREADS_MAX;
    if (resamples > 0 && threads > resamples)
        threads = resamples;
    uint32_t *m = n <= SIZE_MAX / sizeof(uint32_t) / threads
                      ? malloc((size_t)threads * n * sizeof *m)
                      : NULL;
    state_slot *slots = malloc(threads * sizeof *slots);
    int rc = sx && sy && ox && oy && d && m && slots ? SIM_OK : SIM_ENOMEM;
    if (rc == SIM_OK) {
        memcpy(sx, x, n * sizeof *sx);
        memcpy(sy, y, n * sizeof *sy);
        gsl_sort(sx, 1, n);
        gsl_sort(sy, 1, n);
        *diff = gsl_stats_quantile_from_sorted_data(sy, 1, n, p) -
                gsl_stats_quantile_from_sorted_data(sx, 1, n, p);
        gsl_sort_index(ox, x, 1, n);
        gsl_sort_index(oy, y, 1, n);
        boot_job j = {x, y, ox, oy, n, p, seed, key, m, slots};
        sim_error err;
        sim_error_clear(&err);
        if (resamples > 0)
            rc = sim_replicate(resamples, threads, one_resample, &j, d, sizeof *d, &err);
        if (rc == SIM_OK && resamples > 0) {
            gsl_sort(d, 1, resamples);
            ci->lo = gsl_stats_quantile_from_sorted_data(d, 1, resamples, 0.025);
            ci->hi = gsl_stats_quantile_from_sorted_data(d, 1, resamples, 0.975);
        } else if (rc == SIM_OK) {
            ci->lo = ci->hi = *diff;
        }
    }
    free(sx);
    free(sy);
    free(ox);
    free(oy);
    free(d);
    free(m);
    free(slots);
    return rc;
}

/* ------------------------------------------------------------ histogram */

#define SUB_BITS 7

/* Log-linear buckets with `sub` bits below the leading one: exact below
 * 2^(sub+1), then 2^sub buckets per power of two. */
static inline unsigned log_bucket(uint64_t u, unsigned sub)
{
    if (u < (UINT64_C(2) << sub))
        return (unsigned)u;
    unsigned e = 63u - (unsigned)__builtin_clzll(u);
    unsigned shift = e - sub;
    return (shift << sub) + (unsigned)(u >> shift);
}

/* The midpoint of bucket b: b = (shift << sub) + m, m in [2^sub,
 * 2^(sub+1)), covers [m << shift, (m + 1) << shift). */
static inline uint64_t log_mid(unsigned b, unsigned sub)
{
    if (b < (2u << sub))
        return b;
    unsigned shift = (b >> sub) - 1;
    uint64_t m = (uint64_t)(b - (shift << sub));
    return (m << shift) + ((UINT64_C(1) << shift) >> 1);
}

unsigned res__hist_bucket(int64_t v)
{
    unsigned b = log_bucket(v < 0 ? 0 : (uint64_t)v, SUB_BITS);
    return b < RES_HIST_BUCKETS ? b : RES_HIST_BUCKETS - 1;
}

int64_t res__hist_mid(unsigned b) { return (int64_t)log_mid(b, SUB_BITS); }

/* ------------------------------------------------- per-cell value sketch */

#define QH_SUB 10
#define QH_BUCKETS (((63u - QH_SUB) << QH_SUB) + (2u << QH_SUB))

int res__qh_add(res__qhist *h, double v)
{
    uint64_t **side = v < 0 ? &h->neg : &h->pos;
    if (*side == NULL && (*side = calloc(QH_BUCKETS, sizeof **side)) == NULL)
        return SIM_ENOMEM;
    double a = v < 0 ? -v : v;
    uint64_t u = a >= 9.2e18 ? UINT64_C(9200000000000000000) : (uint64_t)a;
    (*side)[log_bucket(u, QH_SUB)]++;
    if (h->n == 0 || v < h->min)
        h->min = v;
    if (h->n == 0 || v > h->max)
        h->max = v;
    h->n++;
    return SIM_OK;
}

/* The value at 0-based rank q: the midpoint of its bucket, within the
 * sample's least and greatest values. */
static double qh_at(const res__qhist *h, uint64_t q)
{
    uint64_t seen = 0;
    double v = h->max;
    int found = 0;
    if (h->neg != NULL)
        for (unsigned b = QH_BUCKETS; b-- > 0 && !found;)
            if ((seen += h->neg[b]) > q) {
                v = -(double)log_mid(b, QH_SUB);
                found = 1;
            }
    if (h->pos != NULL)
        for (unsigned b = 0; b < QH_BUCKETS && !found; b++)
            if ((seen += h->pos[b]) > q) {
                v = (double)log_mid(b, QH_SUB);
                found = 1;
            }
    return v < h->min ? h->min : v > h->max ? h->max : v;
}

double res__qh_quantile(const res__qhist *h, double p)
{
    if (h->n == 0)
        return 0;
    double pos = p * (double)(h->n - 1);
    uint64_t lhs = (uint64_t)pos;
    double delta = pos - (double)lhs, a = qh_at(h, lhs);
    if (delta == 0 || lhs + 1 >= h->n)
        return a;
    return a + delta * (qh_at(h, lhs + 1) - a);
}

void res__qh_free(res__qhist *h)
{
    free(h->neg);
    free(h->pos);
    memset(h, 0, sizeof *h);
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
