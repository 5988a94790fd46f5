/* knobs.c - the device values `oomsim calibrate` may set (docs/calibration.md):
 * the scalars a capture cannot give, and the parameters of the distributions
 * the loader builds (successor.size, pressure, pressure_size, cached_apps),
 * each read and set through the distribution's constructor so that what is
 * set is what the loader would have built.  A gamma's and an empirical's
 * draws take a varying number of random numbers (models.h), so the same
 * seeds would not give the same draws at two values: their parameters are
 * not knobs. */
#include "device.h"

#include <math.h>
#include <string.h>

#define Z95 1.6448536269514722

enum { P_VALUE = 0, P_MIN, P_MAX, P_MEDIAN, P_P95, P_MEAN, P_SD };
static const char *const param_name[] = {"", "min", "max", "median", "p95", "mean", "sd"};

enum { D_SUCCESSOR = 0, D_PRESSURE, D_PRESSURE_SIZE, D_CACHED_APPS, D_COUNT };
static const char *const dist_name[] = {"successor.size", "pressure", "pressure_size",
                                        "cached_apps"};

enum { S_SYSTEM = 0, S_CACHED_APP_SIZE, S_WARNING_AT, S_PAGE_CACHE, S_PAGE_CACHE_WS,
       S_ZRAM_RATIO, S_RECLAIM_RATE, S_STORAGE_READ, S_COUNT };
static const char *const scalar_name[] = {"system", "cached_app_size", "warning_at",
                                          "page_cache.size", "page_cache.working_set",
                                          "zram.ratio", "reclaim_rate", "storage_read"};

#define NPARAMS 7
#define NKNOBS (S_COUNT + D_COUNT * NPARAMS)

/* each distribution's parameters, in the order of dist_name x param_name */
static const char *const dist_param_name[] = {
    "successor.size", "successor.size.min", "successor.size.max", "successor.size.median",
    "successor.size.p95", "successor.size.mean", "successor.size.sd", "pressure",
    "pressure.min", "pressure.max", "pressure.median", "pressure.p95", "pressure.mean",
    "pressure.sd", "pressure_size", "pressure_size.min", "pressure_size.max",
    "pressure_size.median", "pressure_size.p95", "pressure_size.mean", "pressure_size.sd",
    "cached_apps", "cached_apps.min", "cached_apps.max", "cached_apps.median",
    "cached_apps.p95", "cached_apps.mean", "cached_apps.sd"};


/* Knob k: a scalar (k < S_COUNT) or a distribution's parameter. */
static void split(unsigned k, int *scalar, int *dist, int *param)
{
    *scalar = k < S_COUNT ? (int)k : -1;
    *dist = k < S_COUNT ? -1 : (int)((k - S_COUNT) / NPARAMS);
    *param = k < S_COUNT ? -1 : (int)((k - S_COUNT) % NPARAMS);
}

unsigned mdl_knob_count(void)
{
    return NKNOBS;
}

const char *mdl_knob_path(unsigned k)
{
    if (k >= NKNOBS)
        return NULL;
    return k < S_COUNT ? scalar_name[k] : dist_param_name[k - S_COUNT];
}

mdl_knob_unit mdl_knob_unit_of(unsigned k)
{
    int s, d, p;
    split(k, &s, &d, &p);
    if (s == S_ZRAM_RATIO)
        return MDL_KNOB_RATIO;
    if (s == S_RECLAIM_RATE || s == S_STORAGE_READ)
        return MDL_KNOB_RATE; /* bytes a second */
    if (d == D_PRESSURE)
        return MDL_KNOB_TIME;
    return MDL_KNOB_BYTES;
}

int mdl_knob_find(const char *path)
{
    for (unsigned k = 0; k < NKNOBS; k++)
        if (strcmp(mdl_knob_path(k), path) == 0)
            return (int)k;
    return -1;
}

static mdl_dist *dist_of(mdl_device *d, int which)
{
    switch (which) {
    case D_SUCCESSOR: return d->has_successor ? &d->successor : NULL;
    case D_PRESSURE: return d->has_pressure ? &d->pressure : NULL;
    case D_PRESSURE_SIZE: return d->has_pressure ? &d->pressure_size : NULL;
    default: return d->rule == MDL_KILL_LMK ? &d->cached_apps : NULL;
    }
}

static int64_t *scalar_of(mdl_device *d, int which)
{
    switch (which) {
    case S_SYSTEM: return &d->system;
    case S_CACHED_APP_SIZE: return &d->cached_app_size;
    case S_WARNING_AT: return &d->warning_at;
    case S_PAGE_CACHE: return &d->page_cache;
    case S_PAGE_CACHE_WS: return &d->page_cache_ws;
    case S_RECLAIM_RATE: return &d->reclaim_rate;
    case S_STORAGE_READ: return &d->storage_read;
    default: return NULL;
    }
}

/* The parameters a distribution of its kind has, and their values. */
static int params(const mdl_dist *x, double v[NPARAMS], int has[NPARAMS])
{
    memset(has, 0, NPARAMS * sizeof *has);
    switch (x->kind) {
    case MDL_DIST_FIXED: v[P_VALUE] = x->p1, has[P_VALUE] = 1; return 1;
    case MDL_DIST_UNIFORM: v[P_MIN] = x->p1, v[P_MAX] = x->p2, has[P_MIN] = has[P_MAX] = 1; return 1;
    case MDL_DIST_LOGNORMAL:
        v[P_MEDIAN] = exp(x->p1), v[P_P95] = exp(x->p1 + Z95 * x->p2);
        has[P_MEDIAN] = has[P_P95] = 1;
        return 1;
    case MDL_DIST_EXPONENTIAL: v[P_MEAN] = x->p1, has[P_MEAN] = 1; return 1;
    case MDL_DIST_NORMAL: v[P_MEAN] = x->p1, v[P_SD] = x->p2, has[P_MEAN] = has[P_SD] = 1; return 1;
    default: return 0; /* gamma, empirical */
    }
}

static const char *kind_words(const mdl_dist *x)
{
    switch (x->kind) {
    case MDL_DIST_FIXED: return "a plain value (no parameter: name the value itself)";
    case MDL_DIST_UNIFORM: return "a uniform (min, max)";
    case MDL_DIST_LOGNORMAL: return "a lognormal (median, p95)";
    case MDL_DIST_EXPONENTIAL: return "an exponential (mean)";
    case MDL_DIST_NORMAL: return "a normal (mean, sd)";
    case MDL_DIST_GAMMA: return "a gamma";
    default: return "an empirical distribution";
    }
}

int mdl_knob_get(const mdl_device *d, unsigned k, double *v, sim_error *err)
{
    int s, w, p;
    if (k >= NKNOBS)
        return sim_error_set(err, SIM_EINVAL, "no knob %u", k);
    split(k, &s, &w, &p);
    mdl_device *dd = (mdl_device *)(uintptr_t)d; /* read only */
    if (s == S_ZRAM_RATIO) {
        if (!d->has_zram)
            return sim_error_set(err, SIM_EINPUT, "the device has no zram");
        *v = d->zram_ratio;
        return SIM_OK;
    }
    if (s >= 0) {
        *v = (double)*scalar_of(dd, s);
        return SIM_OK;
    }
    const mdl_dist *x = dist_of(dd, w);
    if (x == NULL)
        return sim_error_set(err, SIM_EINPUT, "the device has no %s", dist_name[w]);
    double pv[NPARAMS];
    int has[NPARAMS];
    if (!params(x, pv, has))
        return sim_error_set(err, SIM_EINPUT, "the device's %s is %s: its draws take a varying "
                             "number of random numbers, so common random numbers would not "
                             "hold; write it as a uniform, lognormal, exponential or normal",
                             dist_name[w], kind_words(x));
    if (!has[p])
        return sim_error_set(err, SIM_EINPUT, "the device's %s is %s: `%s` is not one of its "
                             "parameters", dist_name[w], kind_words(x),
                             p ? param_name[p] : "the value itself");
    *v = pv[p];
    return SIM_OK;
}

static int rebuild(mdl_dist *x, int p, double v, sim_error *err)
{
    double pv[NPARAMS];
    int has[NPARAMS];
    params(x, pv, has);
    pv[p] = v;
    mdl_dist n;
    int rc;
    switch (x->kind) {
    case MDL_DIST_FIXED: rc = mdl_dist_fixed(&n, llround(pv[P_VALUE]), err); break;
    case MDL_DIST_UNIFORM: rc = mdl_dist_uniform(&n, pv[P_MIN], pv[P_MAX], err); break;
    case MDL_DIST_LOGNORMAL: rc = mdl_dist_lognormal(&n, pv[P_MEDIAN], pv[P_P95], err); break;
    case MDL_DIST_EXPONENTIAL: rc = mdl_dist_exponential(&n, pv[P_MEAN], err); break;
    default: rc = mdl_dist_normal(&n, pv[P_MEAN], pv[P_SD], err); break;
    }
    if (rc == SIM_OK)
        *x = n;
    return rc;
}

int mdl_knob_set(mdl_device *d, unsigned k, double v, sim_error *err)
{
    double now;
    int rc = mdl_knob_get(d, k, &now, err);
    if (rc != SIM_OK)
        return rc;
    int s, w, p;
    split(k, &s, &w, &p);
    double lo, hi;
    mdl_knob_range(d, k, &lo, &hi);
    if (!(v >= lo && v <= hi))
        return sim_error_set(err, SIM_EINPUT, "%s: %g is outside its range [%g, %g]",
                             mdl_knob_path(k), v, lo, hi);
    if (s == S_ZRAM_RATIO) {
        d->zram_ratio = v;
        return SIM_OK;
    }
    if (s >= 0) {
        int64_t *x = scalar_of(d, s);
        int64_t keep = *x;
        *x = llround(v);
        if (d->page_cache_ws > d->page_cache || d->system + d->page_cache >= d->ram) {
            *x = keep;
            return sim_error_set(err, SIM_EINPUT, "%s: %g leaves no room (the system and the "
                                 "page cache within the RAM, the working set within the cache)",
                                 mdl_knob_path(k), v);
        }
        return SIM_OK;
    }
    return rebuild(dist_of(d, w), p, v, err);
}

void mdl_knob_range(const mdl_device *d, unsigned k, double *lo, double *hi)
{
    int s, w, p;
    split(k, &s, &w, &p);
    *lo = 0;
    *hi = (double)d->ram; /* a size: within the RAM */
    if (s == S_ZRAM_RATIO)
        *lo = 1, *hi = 10;
    else if (s == S_RECLAIM_RATE || s == S_STORAGE_READ)
        *lo = 1, *hi = 1e12; /* bytes/s */
    else if (w == D_PRESSURE)
        *lo = 1, *hi = 86400e6; /* a day, in microseconds */
    else if (p == P_SD || p == P_MEAN || p == P_MEDIAN || p == P_P95)
        *lo = p == P_SD || w != D_CACHED_APPS ? 1 : 0;
}
