/* device_pages.c - a device's page keys (docs/scenarios.md, "Android's
 * pages"): in lmkd's PSI mode, lmkd's properties, the rates of reclaim and
 * of storage reads, vm.swappiness; in both modes the other apps' page
 * cache; the iOS page model's keys (device_xnu.c), its storage reads and
 * page cache.  Values the device does not give are the defaults
 * docs/model.md names (lmkd's, or marked as assumptions). */
#include "yaml_int.h"

#include <stdint.h>
#include <string.h>

/* Assumptions (docs/model.md "The phone's pages"): kswapd's reclaim rate,
 * a UFS 3.1 phone's 4 KiB random reads, Android's usual swappiness. */
#define DEFAULT_RECLAIM_RATE ((int64_t)400 << 20)
#define DEFAULT_STORAGE_READ ((int64_t)250 * 1000 * 1000)
#define DEFAULT_SWAPPINESS 100

/* "400MiB/s": a size per second, above 0. */
int scn__bandwidth(const scn__node *v, int64_t *out, sim_error *err)
{
    const char *s;
    size_t len;
    int rc = scn__scalar(v, &s, &len, err);
    if (rc != SIM_OK)
        return rc;
    if (len < 3 || s[len - 2] != '/' || s[len - 1] != 's')
        return scn__fail(v, err, SIM_EINPUT, "expected a rate in bytes per second such as "
                         "400MiB/s, got \"%.*s\"", (int)(len > 40 ? 40 : len), s);
    sim_error inner;
    if (scn_parse_size(s, len - 2, out, &inner) != SIM_OK)
        return scn__fail(v, err, SIM_EINPUT, "%s", inner.msg);
    if (*out <= 0)
        return scn__fail(v, err, SIM_EINPUT, "a rate must be above 0/s");
    return SIM_OK;
}

/* lmkd: {NAME: VALUE}, any ro.lmk property of lmkd.h's table, in its bounds. */
static int load_lmkd(const scn__node *m, mdl_device *dev, sim_error *err)
{
    int rc = scn__expect_mapping(m, err);
    for (const mdl_lmkd_prop *p = mdl_lmkd_prop_table; rc == SIM_OK && p->name != NULL; p++) {
        scn__node v;
        scn__get(m, p->name, &v);
        if (v.n == NULL)
            continue;
        int64_t x;
        if (p->is_bool) {
            static const char *const names[] = {"false", "true"};
            int b;
            rc = scn__enum(&v, names, 2, &b, err);
            x = b;
        } else {
            rc = scn__int(&v, p->min, p->max, &x, err);
        }
        if (rc == SIM_OK)
            mdl_lmkd_prop_set(&dev->lmkd, p, x);
    }
    if (rc != SIM_OK)
        return rc;
    /* an unknown key: the property does not exist in the version modelled */
    const char *names[32];
    size_t n = 0;
    for (const mdl_lmkd_prop *p = mdl_lmkd_prop_table; p->name != NULL && n < 32; p++)
        names[n++] = p->name;
    return scn__check_keys(m, names, n, err);
}

/* page_cache: {size, working_set}: working_set within size. */
static int load_page_cache(const scn__node *m, mdl_device *dev, sim_error *err)
{
    static const char *const keys[] = {"size", "working_set"};
    scn__node v;
    int rc = scn__expect_mapping(m, err);
    if (rc == SIM_OK)
        rc = scn__check_keys(m, keys, 2, err);
    if (rc == SIM_OK)
        rc = scn__require(m, "size", &v, err);
    if (rc == SIM_OK)
        rc = scn__size(&v, &dev->page_cache, err);
    if (rc == SIM_OK)
        rc = scn__require(m, "working_set", &v, err);
    if (rc == SIM_OK)
        rc = scn__size(&v, &dev->page_cache_ws, err);
    if (rc == SIM_OK && dev->page_cache_ws > dev->page_cache)
        rc = scn__fail(&v, err, SIM_EINPUT, "the working set must be within the page cache's "
                       "size");
    if (rc == SIM_OK && dev->page_cache >= dev->ram - dev->system)
        rc = scn__fail(m, err, SIM_EINPUT, "the page cache must fit in ram - system");
    return rc;
}

int scn__device_pages(const scn__node *root, mdl_device *dev, sim_error *err)
{
    static const char *const psi_only[] = {"lmkd", "reclaim_rate", "storage_read", "swappiness"};
    mdl_lmkd_props_unset(&dev->lmkd);
    dev->reclaim_rate = DEFAULT_RECLAIM_RATE;
    dev->storage_read = DEFAULT_STORAGE_READ;
    dev->swappiness = DEFAULT_SWAPPINESS;
    int psi = dev->rule == MDL_KILL_LMK && dev->lmk_psi;
    int rc = scn__device_xnu(root, dev, err);
    scn__node v;
    for (size_t k = 0; rc == SIM_OK && k < sizeof psi_only / sizeof *psi_only; k++) {
        scn__get(root, psi_only[k], &v);
        /* storage_read: the iOS page model reads weights back too */
        if (v.n != NULL && !psi && !(dev->xnu_pages && strcmp(psi_only[k], "storage_read") == 0))
            rc = scn__fail(&v, err, SIM_EINPUT, "%s applies to android devices in kill mode: "
                           "psi only%s", psi_only[k],
                           strcmp(psi_only[k], "storage_read") == 0
                               ? " (or ios devices that give others)" : "");
    }
    scn__get(root, "page_cache", &v);
    if (rc == SIM_OK && v.n != NULL && dev->os != MDL_OS_ANDROID && !dev->xnu_pages)
        rc = scn__fail(&v, err, SIM_EINPUT, "page_cache applies to android devices and to ios "
                       "devices that give others");
    if (rc == SIM_OK && v.n != NULL)
        rc = load_page_cache(&v, dev, err);
    scn__get(root, "lmkd", &v);
    if (rc == SIM_OK && v.n != NULL)
        rc = load_lmkd(&v, dev, err);
    scn__get(root, "reclaim_rate", &v);
    if (rc == SIM_OK && v.n != NULL)
        rc = scn__bandwidth(&v, &dev->reclaim_rate, err);
    scn__get(root, "storage_read", &v);
    if (rc == SIM_OK && v.n != NULL)
        rc = scn__bandwidth(&v, &dev->storage_read, err);
    scn__get(root, "swappiness", &v);
    if (rc == SIM_OK && v.n != NULL) {
        int64_t s;
        rc = scn__int(&v, 0, 200, &s, err);
        dev->swappiness = (int)s;
    }
    mdl_lmkd_props_resolve(&dev->lmkd);
    return rc;
}
