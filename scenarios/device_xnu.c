/* device_xnu.c - an iOS device's page keys (docs/scenarios.md, "The
 * iPhone's pages"): the processes beside the app by band (`others`, which
 * turns the page model on), the compressor, memorystatus's page levels and
 * the phantom cache's threshold.  Values the device does not give are the
 * defaults docs/model.md names (XNU's, or marked as assumptions). */
#include "yaml_int.h"

#include <string.h>

/* XNU's compressed-page limit: about the physical pages above 2 GiB of
 * DRAM, 1.88 times them at or below (docs/model.md "The iPhone's pages") */
#define SMALL_RAM ((int64_t)2 << 30)
#define SMALL_RAM_COMPRESSOR 1.88
/* an assumption: the compression ratio of app memory (docs/model.md) */
#define DEFAULT_RATIO 2.5

/* count: an integer, or {min: A, max: B} (`dist: uniform` may be said),
 * each count equally likely; *most: the largest it draws. */
static int load_count(const scn__node *v, mdl_dist *out, int64_t *add, int64_t *most,
                      sim_error *err)
{
    static const char *const keys[] = {"min", "max", "dist"};
    int64_t lo = 0, hi = 0;
    if (fy_node_is_scalar(v->n)) {
        int rc = scn__int(v, 0, MDL_OTHERS_MAX, &lo, err);
        *most = lo;
        *add = 0;
        return rc != SIM_OK ? rc : mdl_dist_fixed(out, lo, err);
    }
    scn__node a, b, kind;
    int rc = scn__expect_mapping(v, err);
    scn__get(v, "dist", &kind);
    if (rc == SIM_OK && kind.n != NULL) {
        static const char *const uniform[] = {"uniform"};
        int k;
        if (scn__enum(&kind, uniform, 1, &k, err) != SIM_OK)
            return scn__fail(&kind, err, SIM_EINPUT, "a count of processes is a number or "
                             "uniform: {min, max}, each count equally likely");
    }
    if (rc == SIM_OK)
        rc = scn__check_keys(v, keys, 3, err);
    if (rc == SIM_OK)
        rc = scn__require(v, "min", &a, err);
    if (rc == SIM_OK)
        rc = scn__int(&a, 0, MDL_OTHERS_MAX, &lo, err);
    if (rc == SIM_OK)
        rc = scn__require(v, "max", &b, err);
    if (rc == SIM_OK)
        rc = scn__int(&b, lo, MDL_OTHERS_MAX, &hi, err);
    /* 1 .. hi - lo + 1 rounded to the nearest integer, each the same
     * width, then lo - 1 added: a distribution of positive values */
    *most = hi;
    *add = lo - 1;
    return rc != SIM_OK ? rc
                        : mdl_dist_uniform(out, 0.5001, (double)(hi - lo + 1) + 0.4999, err);
}

typedef struct others_ctx {
    mdl_device *dev;
    int64_t most; /* processes at most, all groups together */
} others_ctx;

/* {band: N, count: COUNT, size: DIST} */
static int load_group(void *ctx, const scn__node *item, sim_error *err)
{
    static const char *const keys[] = {"band", "count", "size"};
    others_ctx *c = ctx;
    mdl_device *dev = c->dev;
    if (dev->nothers >= MDL_OTHER_GROUPS_MAX)
        return scn__fail(item, err, SIM_ELIMIT, "at most %d groups of others",
                         MDL_OTHER_GROUPS_MAX);
    mdl_other_group *g = &dev->others[dev->nothers];
    scn__node v;
    int64_t band, most = 0;
    int rc = scn__expect_mapping(item, err);
    if (rc == SIM_OK)
        rc = scn__check_keys(item, keys, 3, err);
    if (rc == SIM_OK)
        rc = scn__require(item, "band", &v, err);
    if (rc == SIM_OK)
        rc = scn__int(&v, 0, MDL_BAND_MAX, &band, err);
    if (rc == SIM_OK)
        rc = scn__require(item, "count", &v, err);
    if (rc == SIM_OK)
        rc = load_count(&v, &g->count, &g->count_add, &most, err);
    if (rc == SIM_OK) {
        c->most += most;
        if (c->most > MDL_OTHERS_MAX)
            rc = scn__fail(&v, err, SIM_ELIMIT, "the others may hold at most %d processes in "
                           "all", MDL_OTHERS_MAX);
    }
    if (rc == SIM_OK)
        rc = scn__require(item, "size", &v, err);
    if (rc == SIM_OK)
        rc = scn__dist(&v, SCN__UNIT_SIZE, &g->size, &dev->owned[4 + dev->nothers], err);
    if (rc == SIM_OK) {
        g->band = (int)band;
        dev->nothers++;
    }
    return rc;
}

/* compressor: {ratio, max} */
static int load_compressor(const scn__node *m, mdl_device *dev, sim_error *err)
{
    static const char *const keys[] = {"ratio", "max"};
    scn__node v;
    int rc = scn__expect_mapping(m, err);
    if (rc == SIM_OK)
        rc = scn__check_keys(m, keys, 2, err);
    scn__get(m, "ratio", &v);
    if (rc == SIM_OK && v.n != NULL)
        rc = scn__real(&v, 1.0, 10.0, &dev->compressor_ratio, err);
    scn__get(m, "max", &v);
    if (rc == SIM_OK && v.n != NULL && (rc = scn__size(&v, &dev->compressor_max, err)) == SIM_OK &&
        dev->compressor_max <= 0)
        rc = scn__fail(&v, err, SIM_EINPUT, "the compressor's max must be above 0");
    return rc;
}

/* A share of ram ("5%"), in bytes. */
static int share_of_ram(const scn__node *v, const mdl_device *dev, int64_t *out, sim_error *err)
{
    double p;
    int rc = scn__probability(v, &p, err);
    if (rc == SIM_OK && !(p > 0 && p < 0.5))
        rc = scn__fail(v, err, SIM_EINPUT, "a page level must be above 0%% and below 50%% of ram");
    if (rc == SIM_OK)
        *out = (int64_t)(p * (double)dev->ram + 0.5);
    return rc;
}

/* pages: {critical, idle, pressure}: critical <= idle <= pressure. */
static int load_levels(const scn__node *m, mdl_device *dev, sim_error *err)
{
    static const char *const keys[] = {"critical", "idle", "pressure"};
    int64_t *out[] = {&dev->xnu_critical, &dev->xnu_idle, &dev->xnu_soft};
    scn__node v;
    int rc = scn__expect_mapping(m, err);
    if (rc == SIM_OK)
        rc = scn__check_keys(m, keys, 3, err);
    for (int k = 0; rc == SIM_OK && k < 3; k++) {
        scn__get(m, keys[k], &v);
        if (v.n != NULL)
            rc = share_of_ram(&v, dev, out[k], err);
    }
    if (rc == SIM_OK && !(dev->xnu_critical <= dev->xnu_idle && dev->xnu_idle <= dev->xnu_soft))
        rc = scn__fail(m, err, SIM_EINPUT, "the page levels must be critical <= idle <= "
                       "pressure");
    return rc;
}

/* fc_thrashing (vm_phantom_cache.c): 1000 for files the pager calls
 * SSD-backed, 500 on other storage; a number as the device's own. */
static int load_fc(const scn__node *root, mdl_device *dev, sim_error *err)
{
    scn__node v;
    dev->fc_threshold = MDL_XNU_PC_THRESHOLD_SSD;
    scn__get(root, "fc_thrashing", &v);
    if (v.n == NULL)
        return SIM_OK;
    const char *word;
    size_t wl;
    if (scn__scalar(&v, &word, &wl, err) == SIM_OK && wl > 0 && (word[0] < '0' || word[0] > '9') &&
        word[0] != '-' && word[0] != '+') {
        static const char *const names[] = {"ssd", "non-ssd"};
        int which = 0;
        int rc = scn__enum(&v, names, 2, &which, err);
        dev->fc_threshold = which ? MDL_XNU_PC_THRESHOLD : MDL_XNU_PC_THRESHOLD_SSD;
        return rc;
    }
    return scn__int(&v, 1, 1000000, &dev->fc_threshold, err);
}

int scn__device_xnu(const scn__node *root, mdl_device *dev, sim_error *err)
{
    static const char *const page_only[] = {"compressor", "pages", "fc_thrashing"};
    scn__node v, others;
    int rc = SIM_OK;
    /* kern.jetsam_idle_snapshot (kern_memorystatus.c): off on phones; read
     * under the plain rule too */
    dev->xnu_idle_snapshot = 0;
    scn__get(root, "jetsam_idle_snapshot", &v);
    if (v.n != NULL) {
        static const char *const names[] = {"false", "true"};
        rc = scn__enum(&v, names, 2, &dev->xnu_idle_snapshot, err);
        if (rc == SIM_OK && dev->os != MDL_OS_IOS)
            rc = scn__fail(&v, err, SIM_EINPUT, "jetsam_idle_snapshot is XNU's "
                           "kern.jetsam_idle_snapshot: an ios device's key");
        if (rc != SIM_OK)
            return rc;
    }
    scn__get(root, "others", &others);
    if (others.n != NULL && dev->os != MDL_OS_IOS)
        return scn__fail(&others, err, SIM_EINPUT, "others applies to ios devices only (android "
                         "devices give cached_apps)");
    for (size_t k = 0; k < sizeof page_only / sizeof *page_only; k++) {
        scn__get(root, page_only[k], &v);
        if (v.n != NULL && others.n == NULL)
            return scn__fail(&v, err, SIM_EINPUT, "%s belongs to the iOS page model: give the "
                             "device's others", page_only[k]);
    }
    if (others.n == NULL)
        return SIM_OK;
    scn__get(root, "cached_apps", &v);
    if (v.n != NULL)
        return scn__fail(&v, err, SIM_EINPUT, "cached_apps and others both given: on ios, "
                         "others replaces cached_apps");
    others_ctx ctx = {dev, 0};
    rc = scn__each(&others, "group of others", load_group, &ctx, err);
    if (rc != SIM_OK)
        return rc;
    dev->xnu_pages = 1;
    dev->compressor_ratio = DEFAULT_RATIO;
    dev->compressor_max = dev->ram <= SMALL_RAM
                              ? (int64_t)((double)dev->ram * SMALL_RAM_COMPRESSOR)
                              : dev->ram;
    scn__get(root, "compressor", &v);
    if (v.n != NULL && (rc = load_compressor(&v, dev, err)) != SIM_OK)
        return rc;
    /* the pageout daemon's free target, from the pages free at boot: taken
     * as ram less the system's (an assumption: the kernel's wired pages at
     * vm_pageout's start are not known) */
    dev->xnu_free_target = mdl_xnu_free_target((dev->ram - dev->system) / MDL_XNU_PAGE) *
                           MDL_XNU_PAGE;
    /* XNU's fallback levels, in its page arithmetic; pageshortage is idle */
    int64_t crit, idle, soft;
    mdl_xnu_thresholds(dev->ram, MDL_XNU_PAGE, &crit, &idle, &soft);
    dev->xnu_critical = crit * MDL_XNU_PAGE;
    dev->xnu_idle = dev->pageshortage > 0 ? dev->pageshortage : idle * MDL_XNU_PAGE;
    dev->xnu_soft = soft * MDL_XNU_PAGE;
    scn__get(root, "pageshortage", &v);
    if (v.n != NULL && !(dev->xnu_critical <= dev->xnu_idle && dev->xnu_idle <= dev->xnu_soft))
        return scn__fail(&v, err, SIM_EINPUT, "pageshortage (the idle level) must be between "
                         "XNU's critical and pressure levels for this ram (%.1f%% and %.1f%%), "
                         "or give pages", 100.0 * (double)dev->xnu_critical / (double)dev->ram,
                         100.0 * (double)dev->xnu_soft / (double)dev->ram);
    scn__get(root, "pages", &v);
    if (v.n != NULL) {
        scn__node ps;
        scn__get(root, "pageshortage", &ps);
        if (ps.n != NULL)
            return scn__fail(&ps, err, SIM_EINPUT, "pageshortage and pages both given: "
                             "pageshortage is pages.idle");
        if ((rc = load_levels(&v, dev, err)) != SIM_OK)
            return rc;
    }
    return load_fc(root, dev, err);
}
