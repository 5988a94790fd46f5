/* device.c - device profiles: YAML to mdl_device (docs/scenarios.md "Device").
 *
 * Every key is checked against the schema; every value is resolved to
 * bytes or microseconds; the rules that tie keys together (a kill rule
 * that fits the OS, minfree levels in increasing adj, the system's share
 * below the RAM) are checked here, so the model can trust the struct. */
#include "yaml_int.h"

#include <stdlib.h>
#include <string.h>

static const char *const device_keys[] = {
    "name",        "about",         "os",       "ram",          "system",
    "cached_apps", "cached_app_size", "pressure", "pressure_size", "kill",
    "counts",      "java_heap_limit", "anr_timeout", "launch_watchdog", "warning_at",
    "pss_sample",  "low_memory_reporting"};

/* An optional size: 0 when absent. */
static int opt_size(const scn__node *m, const char *key, int64_t *out, sim_error *err)
{
    scn__node v;
    scn__get(m, key, &v);
    *out = 0;
    return v.n == NULL ? SIM_OK : scn__size(&v, out, err);
}

static int opt_duration(const scn__node *m, const char *key, sim_time *out, sim_error *err)
{
    scn__node v;
    scn__get(m, key, &v);
    *out = 0;
    return v.n == NULL ? SIM_OK : scn__duration(&v, out, err);
}

static int load_minfree(const scn__node *list, mdl_device *dev, sim_error *err)
{
    int rc = scn__expect_sequence(list, err);
    if (rc != SIM_OK)
        return rc;
    int count = fy_node_sequence_item_count(list->n);
    if (count < 1)
        return scn__fail(list, err, SIM_EINPUT, "expected at least one level");
    if (count > MDL_MINFREE_MAX)
        return scn__fail(list, err, SIM_ELIMIT, "%d levels exceed the limit of %d", count,
                         MDL_MINFREE_MAX);
    static const char *const keys[] = {"adj", "free"};
    void *it = NULL;
    struct fy_node *item;
    unsigned i = 0;
    while ((item = fy_node_sequence_iterate(list->n, &it)) != NULL) {
        scn__node lv, adj, fr;
        scn__item(list, i, item, &lv);
        int64_t a;
        rc = scn__expect_mapping(&lv, err);
        if (rc == SIM_OK)
            rc = scn__check_keys(&lv, keys, 2, err);
        if (rc == SIM_OK)
            rc = scn__require(&lv, "adj", &adj, err);
        if (rc == SIM_OK)
            rc = scn__int(&adj, -1000, 1000, &a, err);
        if (rc == SIM_OK && i > 0 && a <= dev->minfree[i - 1].adj)
            rc = scn__fail(&adj, err, SIM_EINPUT, "levels must be in increasing adj: %lld "
                           "follows %d", (long long)a, dev->minfree[i - 1].adj);
        if (rc == SIM_OK)
            rc = scn__require(&lv, "free", &fr, err);
        if (rc == SIM_OK)
            rc = scn__size(&fr, &dev->minfree[i].free, err);
        if (rc != SIM_OK)
            return rc;
        dev->minfree[i].adj = (int)a;
        i++;
    }
    dev->nminfree = i;
    return SIM_OK;
}

static int load_kill(const scn__node *root, mdl_device *dev, sim_error *err)
{
    static const char *const rules[] = {"lmk", "jetsam"};
    static const char *const lmk_keys[] = {"rule", "minfree"};
    static const char *const jetsam_keys[] = {"rule", "limit", "background_limit"};
    scn__node kill, rule;
    int r;
    int rc = scn__require(root, "kill", &kill, err);
    if (rc == SIM_OK)
        rc = scn__expect_mapping(&kill, err);
    if (rc == SIM_OK)
        rc = scn__require(&kill, "rule", &rule, err);
    if (rc == SIM_OK)
        rc = scn__enum(&rule, rules, 2, &r, err);
    if (rc != SIM_OK)
        return rc;
    dev->rule = (mdl_kill_rule)r;
    if ((dev->os == MDL_OS_ANDROID) != (dev->rule == MDL_KILL_LMK))
        return scn__fail(&rule, err, SIM_EINPUT, "%s uses the %s rule",
                         dev->os == MDL_OS_ANDROID ? "android" : "ios",
                         dev->os == MDL_OS_ANDROID ? "lmk" : "jetsam");
    if (dev->rule == MDL_KILL_LMK) {
        scn__node mf;
        rc = scn__check_keys(&kill, lmk_keys, 2, err);
        if (rc == SIM_OK)
            rc = scn__require(&kill, "minfree", &mf, err);
        return rc != SIM_OK ? rc : load_minfree(&mf, dev, err);
    }
    scn__node lim, bg;
    rc = scn__check_keys(&kill, jetsam_keys, 3, err);
    if (rc == SIM_OK)
        rc = scn__require(&kill, "limit", &lim, err);
    if (rc == SIM_OK)
        rc = scn__size(&lim, &dev->jetsam_limit, err);
    if (rc != SIM_OK)
        return rc;
    scn__get(&kill, "background_limit", &bg);
    dev->jetsam_background_limit = dev->jetsam_limit;
    if (bg.n != NULL) {
        rc = scn__size(&bg, &dev->jetsam_background_limit, err);
        if (rc == SIM_OK && dev->jetsam_background_limit > dev->jetsam_limit)
            rc = scn__fail(&bg, err, SIM_EINPUT, "the background limit must not exceed the "
                           "foreground limit");
    }
    return rc;
}

static int load_counts(const scn__node *root, mdl_device *dev, sim_error *err)
{
    static const char *const cats[] = {"java", "native", "gpu", "file"};
    scn__node list;
    scn__get(root, "counts", &list);
    dev->counts_mask = MDL_COUNTS_DEFAULT;
    if (list.n == NULL)
        return SIM_OK;
    int rc = scn__expect_sequence(&list, err);
    if (rc != SIM_OK)
        return rc;
    dev->counts_mask = 0;
    void *it = NULL;
    struct fy_node *item;
    size_t i = 0;
    while ((item = fy_node_sequence_iterate(list.n, &it)) != NULL) {
        scn__node v;
        int c;
        scn__item(&list, i++, item, &v);
        rc = scn__enum(&v, cats, 4, &c, err);
        if (rc != SIM_OK)
            return rc;
        if (dev->counts_mask & MDL_CAT_BIT(c))
            return scn__fail(&v, err, SIM_EINPUT, "\"%s\" is listed twice", cats[c]);
        dev->counts_mask |= MDL_CAT_BIT(c);
    }
    if (dev->counts_mask == 0)
        return scn__fail(&list, err, SIM_EINPUT, "expected at least one category");
    return SIM_OK;
}

static int load_memory(const scn__node *root, mdl_device *dev, sim_error *err)
{
    scn__node v;
    int rc = scn__require(root, "ram", &v, err);
    if (rc == SIM_OK)
        rc = scn__size(&v, &dev->ram, err);
    if (rc == SIM_OK && dev->ram == 0)
        rc = scn__fail(&v, err, SIM_EINPUT, "ram must be above 0");
    if (rc == SIM_OK)
        rc = scn__require(root, "system", &v, err);
    if (rc == SIM_OK)
        rc = scn__size(&v, &dev->system, err);
    if (rc == SIM_OK && dev->system >= dev->ram)
        rc = scn__fail(&v, err, SIM_EINPUT, "the system's share leaves no memory for apps");
    if (rc != SIM_OK)
        return rc;
    scn__get(root, "cached_apps", &v);
    if (v.n == NULL) {
        rc = mdl_dist_fixed(&dev->cached_apps, 0, err);
    } else {
        rc = scn__dist(&v, SCN__UNIT_SIZE, &dev->cached_apps, &dev->owned[0], err);
        if (rc == SIM_OK) {
            scn__node sz;
            rc = scn__require(root, "cached_app_size", &sz, err);
            if (rc == SIM_OK)
                rc = scn__size(&sz, &dev->cached_app_size, err);
            if (rc == SIM_OK && dev->cached_app_size == 0)
                rc = scn__fail(&sz, err, SIM_EINPUT, "cached_app_size must be above 0");
        }
    }
    if (rc != SIM_OK)
        return rc;
    scn__get(root, "pressure", &v);
    dev->has_pressure = v.n != NULL;
    if (dev->has_pressure) {
        scn__node ps;
        rc = scn__dist(&v, SCN__UNIT_DURATION, &dev->pressure, &dev->owned[1], err);
        if (rc == SIM_OK && mdl_dist_mean(&dev->pressure) <= 0)
            rc = scn__fail(&v, err, SIM_EINPUT, "the time between spikes must be above 0");
        if (rc == SIM_OK)
            rc = scn__require(root, "pressure_size", &ps, err);
        if (rc == SIM_OK)
            rc = scn__dist(&ps, SCN__UNIT_SIZE, &dev->pressure_size, &dev->owned[2], err);
    } else {
        scn__get(root, "pressure_size", &v);
        if (v.n != NULL)
            rc = scn__fail(&v, err, SIM_EINPUT, "pressure_size needs pressure");
    }
    return rc;
}

int scn__device(const scn__node *root, mdl_device *dev, sim_error *err)
{
    static const char *const oses[] = {"android", "ios"};
    scn__node v;
    int os;
    int rc = scn__check_keys(root, device_keys, sizeof device_keys / sizeof *device_keys, err);
    if (rc == SIM_OK)
        rc = scn__require(root, "name", &v, err);
    if (rc == SIM_OK)
        rc = scn__name(&v, dev->name, err);
    if (rc == SIM_OK)
        rc = scn__require(root, "os", &v, err);
    if (rc == SIM_OK)
        rc = scn__enum(&v, oses, 2, &os, err);
    if (rc != SIM_OK)
        return rc;
    dev->os = (mdl_os)os;
    scn__get(root, "about", &v);
    if (v.n != NULL) {
        const char *s;
        size_t len;
        rc = scn__scalar(&v, &s, &len, err);
        if (rc != SIM_OK)
            return rc;
    }
    rc = load_memory(root, dev, err);
    if (rc == SIM_OK)
        rc = load_kill(root, dev, err);
    if (rc == SIM_OK)
        rc = load_counts(root, dev, err);
    if (rc == SIM_OK)
        rc = opt_size(root, "java_heap_limit", &dev->java_heap_limit, err);
    if (rc == SIM_OK)
        rc = opt_duration(root, "anr_timeout", &dev->anr_timeout, err);
    if (rc == SIM_OK)
        rc = opt_duration(root, "launch_watchdog", &dev->launch_watchdog, err);
    if (rc == SIM_OK)
        rc = opt_size(root, "warning_at", &dev->warning_at, err);
    dev->pss_sample = 30 * (sim_time)1000000;
    scn__get(root, "pss_sample", &v);
    if (rc == SIM_OK && v.n != NULL && (rc = scn__duration(&v, &dev->pss_sample, err)) == SIM_OK &&
        dev->pss_sample <= 0)
        rc = scn__fail(&v, err, SIM_EINPUT, "pss_sample must be longer than 0");
    dev->low_memory_reporting = 1;
    scn__get(root, "low_memory_reporting", &v);
    if (rc == SIM_OK && v.n != NULL) {
        static const char *const names[] = {"false", "true"};
        rc = scn__enum(&v, names, 2, &dev->low_memory_reporting, err);
    }
    return rc;
}

static int finish(scn__doc *doc, mdl_device *dev, sim_error *err)
{
    scn__node root;
    memset(dev, 0, sizeof *dev);
    int rc = scn__doc_root(doc, &root, err);
    if (rc == SIM_OK)
        rc = scn__device(&root, dev, err);
    scn__doc_free(doc);
    if (rc != SIM_OK)
        scn_device_release(dev);
    return rc;
}

int scn_device_parse(const char *text, size_t len, const char *file, mdl_device *dev,
                     sim_error *err)
{
    scn__doc doc;
    memset(dev, 0, sizeof *dev);
    int rc = scn__doc_parse(&doc, text, len, file, err);
    return rc != SIM_OK ? rc : finish(&doc, dev, err);
}

int scn_device_load(const char *path, mdl_device *dev, sim_error *err)
{
    scn__doc doc;
    memset(dev, 0, sizeof *dev);
    int rc = scn__doc_load(&doc, path, err);
    return rc != SIM_OK ? rc : finish(&doc, dev, err);
}

void scn_device_release(mdl_device *dev)
{
    for (int i = 0; i < 3; i++) {
        free(dev->owned[i]);
        dev->owned[i] = NULL;
    }
}
