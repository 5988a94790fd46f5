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
    "pss_sample",  "low_memory_reporting", "speed", "delegates", "successor",
    "previous_ttl", "pageshortage", "entitled_limit", "background_gpu", "zram",
    "lmkd",        "reclaim_rate",  "storage_read", "page_cache",  "swappiness",
    "others",      "compressor",    "pages",        "fc_thrashing", "exit_info",
    "measured",    "thermal",       "jetsam_idle_snapshot"};

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

/* watermarks {min, low, high}, in increasing order: psi mode's, or in
 * minfree mode the reserve lmkd takes from free memory (the high sums). */
static int read_watermarks(const scn__node *wm, mdl_device *dev, sim_error *err)
{
    static const char *const keys[] = {"min", "low", "high"};
    int64_t *out[] = {&dev->wmark_min, &dev->wmark_low, &dev->wmark_high};
    scn__node v;
    int rc = scn__expect_mapping(wm, err);
    if (rc == SIM_OK)
        rc = scn__check_keys(wm, keys, 3, err);
    for (int k = 0; rc == SIM_OK && k < 3; k++) {
        rc = scn__require(wm, keys[k], &v, err);
        if (rc == SIM_OK)
            rc = scn__size(&v, out[k], err);
        if (rc == SIM_OK && k > 0 && *out[k] < *out[k - 1])
            rc = scn__fail(&v, err, SIM_EINPUT, "watermarks must be in order: min <= low <= "
                           "high");
    }
    return rc;
}

/* psi mode: the watermarks, and no minfree. */
static int load_watermarks(const scn__node *kill, mdl_device *dev, sim_error *err)
{
    scn__node wm, v;
    scn__get(kill, "minfree", &v);
    if (v.n != NULL)
        return scn__fail(&v, err, SIM_EINPUT, "minfree belongs to mode: minfree (psi mode "
                         "reads the watermarks)");
    int rc = scn__require(kill, "watermarks", &wm, err);
    return rc != SIM_OK ? rc : read_watermarks(&wm, dev, err);
}

static int load_kill(const scn__node *root, mdl_device *dev, sim_error *err)
{
    static const char *const rules[] = {"lmk", "jetsam"};
    static const char *const lmk_keys[] = {"rule", "mode", "minfree", "watermarks"};
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
        static const char *const modes[] = {"minfree", "psi"};
        scn__node mf, mode;
        rc = scn__check_keys(&kill, lmk_keys, 4, err);
        scn__get(&kill, "mode", &mode);
        if (rc == SIM_OK && mode.n != NULL)
            rc = scn__enum(&mode, modes, 2, &dev->lmk_psi, err);
        if (rc != SIM_OK)
            return rc;
        if (dev->lmk_psi)
            return load_watermarks(&kill, dev, err);
        scn__get(&kill, "watermarks", &mf);
        if (mf.n != NULL && (rc = read_watermarks(&mf, dev, err)) != SIM_OK)
            return rc;
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

/* A key only one OS has: absent, or the device is that OS. */
static int only_on(const scn__node *root, const mdl_device *dev, const char *key, mdl_os os,
                   scn__node *v, sim_error *err)
{
    scn__get(root, key, v);
    if (v->n != NULL && dev->os != os)
        return scn__fail(v, err, SIM_EINPUT, "%s applies to %s devices only", key,
                         os == MDL_OS_IOS ? "ios" : "android");
    return SIM_OK;
}

/* A percentage ("5%") in (0%, 100%). */
static int percent(const scn__node *v, double *out, sim_error *err)
{
    const char *t;
    size_t len;
    int rc = scn__scalar(v, &t, &len, err);
    if (rc != SIM_OK)
        return rc;
    if (len == 0 || t[len - 1] != '%')
        return scn__fail(v, err, SIM_EINPUT, "expected a percentage such as 5%%, got \"%.*s\"",
                         (int)(len > 40 ? 40 : len), t);
    rc = scn__probability(v, out, err);
    if (rc == SIM_OK && !(*out > 0 && *out < 1))
        rc = scn__fail(v, err, SIM_EINPUT, "expected a percentage above 0%% and below 100%%");
    return rc;
}

/* speed: {cpu: X, gpu: Y}: how many times faster than the candidate's
 * drawn times (1 when absent). */
static int load_speed(const scn__node *root, mdl_device *dev, sim_error *err)
{
    static const char *const keys[] = {"cpu", "gpu"};
    double *out[] = {&dev->speed_cpu, &dev->speed_gpu};
    dev->speed_cpu = dev->speed_gpu = 1.0;
    scn__node sp, v;
    scn__get(root, "speed", &sp);
    if (sp.n == NULL)
        return SIM_OK;
    int rc = scn__expect_mapping(&sp, err);
    if (rc == SIM_OK)
        rc = scn__check_keys(&sp, keys, 2, err);
    for (int k = 0; rc == SIM_OK && k < 2; k++) {
        scn__get(&sp, keys[k], &v);
        if (v.n != NULL)
            rc = scn__real(&v, 0.01, 100.0, out[k], err);
    }
    return rc;
}

/* One thermal step: {after, speed}, later and slower than the one before. */
static int thermal_step(void *ctx, const scn__node *v, sim_error *err)
{
    static const char *const keys[] = {"after", "speed"};
    mdl_device *dev = ctx;
    mdl_thermal *t = &dev->thermal;
    unsigned max = dev->os == MDL_OS_IOS ? 3 : MDL_THERMAL_STEPS_MAX, k = t->nsteps;
    scn__node a, sp;
    int rc = scn__expect_mapping(v, err);
    if (rc == SIM_OK && k == max)
        rc = scn__fail(v, err, SIM_ELIMIT, "%u steps at most on %s (%s to %s)", max,
                       dev->os == MDL_OS_IOS ? "ios" : "android",
                       mdl_thermal_name(dev->os, 1), mdl_thermal_name(dev->os, max));
    if (rc == SIM_OK)
        rc = scn__check_keys(v, keys, 2, err);
    if (rc == SIM_OK)
        rc = scn__require(v, "after", &a, err);
    if (rc == SIM_OK)
        rc = scn__duration(&a, &t->after[k], err);
    if (rc == SIM_OK && t->after[k] <= (k > 0 ? t->after[k - 1] : 0))
        rc = scn__fail(&a, err, SIM_EINPUT, k > 0 ? "a step comes after the one before it"
                                                  : "after must be longer than 0");
    if (rc == SIM_OK)
        rc = scn__require(v, "speed", &sp, err);
    if (rc == SIM_OK)
        rc = scn__real(&sp, 0.01, 0.999, &t->speed[k], err);
    if (rc == SIM_OK && k > 0 && t->speed[k] >= t->speed[k - 1])
        rc = scn__fail(&sp, err, SIM_EINPUT, "a step is slower than the one before it");
    if (rc == SIM_OK)
        t->nsteps++;
    return rc;
}

/* thermal: {steps: [{after, speed}, ...], cooling, hysteresis}: how sustained load
 * slows the phone (models/thermal.h); absent: never throttled. */
static int load_thermal(const scn__node *root, mdl_device *dev, sim_error *err)
{
    static const char *const keys[] = {"steps", "cooling", "hysteresis"};
    scn__node th, v;
    memset(&dev->thermal, 0, sizeof dev->thermal);
    scn__get(root, "thermal", &th);
    if (th.n == NULL)
        return SIM_OK;
    int rc = scn__expect_mapping(&th, err);
    if (rc == SIM_OK)
        rc = scn__check_keys(&th, keys, 3, err);
    if (rc == SIM_OK)
        rc = scn__require(&th, "steps", &v, err);
    if (rc == SIM_OK)
        rc = scn__each(&v, "step", thermal_step, dev, err);
    dev->thermal.cooling = 1.0;
    scn__get(&th, "cooling", &v);
    if (rc == SIM_OK && v.n != NULL)
        rc = scn__real(&v, 0.01, 100.0, &dev->thermal.cooling, err);
    dev->thermal.hysteresis = 30 * (sim_time)1000000; /* an assumption: docs/model.md */
    scn__get(&th, "hysteresis", &v);
    if (rc == SIM_OK && v.n != NULL)
        rc = scn__duration(&v, &dev->thermal.hysteresis, err);
    if (rc == SIM_OK && dev->thermal.hysteresis >= dev->thermal.after[0])
        rc = scn__fail(v.n != NULL ? &v : &th, err, SIM_EINPUT, "hysteresis must be shorter "
                       "than the first step's after (the phone could never cool)");
    return rc;
}

/* One `delegates` entry: {available, fail, crash}. */
static int load_delegate(const scn__node *v, mdl_device_delegate *dd, sim_error *err)
{
    static const char *const keys[] = {"available", "fail", "crash"};
    static const char *const bools[] = {"false", "true"};
    scn__node x;
    int rc = scn__expect_mapping(v, err);
    if (rc == SIM_OK)
        rc = scn__check_keys(v, keys, 3, err);
    if (rc != SIM_OK)
        return rc; /* not a mapping: no key to read */
    dd->has_override = 1;
    dd->available = 1;
    scn__get(v, "available", &x);
    if (rc == SIM_OK && x.n != NULL)
        rc = scn__enum(&x, bools, 2, &dd->available, err);
    scn__get(v, "fail", &x);
    if (rc == SIM_OK && (dd->has_fail = x.n != NULL))
        rc = scn__probability(&x, &dd->fail, err);
    scn__get(v, "crash", &x);
    if (rc == SIM_OK && (dd->has_crash = x.n != NULL))
        rc = scn__probability(&x, &dd->crash, err);
    if (rc == SIM_OK && dd->has_fail && dd->has_crash && dd->fail + dd->crash > 1)
        rc = scn__fail(v, err, SIM_EINPUT, "fail + crash exceed 1");
    return rc;
}

/* delegates: {KIND: {...}}, keyed by the candidate's `delegate` name. */
static int load_delegates(const scn__node *root, mdl_device *dev, sim_error *err)
{
    scn__node m;
    scn__get(root, "delegates", &m);
    if (m.n == NULL)
        return SIM_OK;
    int rc = scn__expect_mapping(&m, err);
    if (rc != SIM_OK)
        return rc;
    void *it = NULL;
    struct fy_node_pair *pr;
    while ((pr = fy_node_mapping_iterate(m.n, &it)) != NULL) {
        size_t len = 0;
        const char *k = fy_node_get_scalar(fy_node_pair_key(pr), &len);
        int ok = k != NULL && len > 0 && len < MDL_NAME_MAX && !(len == 4 && !memcmp(k, "none", 4));
        for (size_t i = 0; ok && i < len; i++)
            ok = (k[i] >= 'a' && k[i] <= 'z') || (k[i] >= 'A' && k[i] <= 'Z') ||
                 (k[i] >= '0' && k[i] <= '9') || k[i] == '.' || k[i] == '_' || k[i] == '-';
        if (!ok)
            return scn__fail(&m, err, SIM_EINPUT, "expected delegate kinds (a candidate's "
                             "`delegate`, such as gpu) as keys, got \"%.*s\"",
                             (int)(k == NULL ? 0 : len > 40 ? 40 : len), k == NULL ? "" : k);
        if (dev->ndelegates == MDL_DELEGATES_MAX)
            return scn__fail(&m, err, SIM_ELIMIT, "more than %d delegate kinds",
                             MDL_DELEGATES_MAX);
        mdl_device_delegate *dd = &dev->delegates[dev->ndelegates++];
        memcpy(dd->name, k, len);
        dd->name[len] = '\0';
        scn__node v;
        scn__get(&m, dd->name, &v);
        if ((rc = load_delegate(&v, dd, err)) != SIM_OK)
            return rc;
    }
    return SIM_OK;
}

/* Background life and the OS-specific keys of issue-era profiles:
 * successor, previous_ttl (android), pageshortage, entitled_limit and
 * background_gpu (ios), and warning_at as a percentage (ios). */
static int load_background(const scn__node *root, mdl_device *dev, sim_error *err)
{
    static const char *const succ_keys[] = {"size"};
    scn__node v, sz;
    scn__get(root, "successor", &v);
    int rc = SIM_OK;
    if (v.n != NULL) {
        rc = scn__expect_mapping(&v, err);
        if (rc == SIM_OK)
            rc = scn__check_keys(&v, succ_keys, 1, err);
        if (rc == SIM_OK)
            rc = scn__require(&v, "size", &sz, err);
        if (rc == SIM_OK)
            rc = scn__dist(&sz, SCN__UNIT_SIZE, &dev->successor, &dev->owned[3], err);
        dev->has_successor = rc == SIM_OK;
    }
    if (rc == SIM_OK && (rc = only_on(root, dev, "previous_ttl", MDL_OS_ANDROID, &v, err)) ==
                            SIM_OK && v.n != NULL &&
        (rc = scn__duration(&v, &dev->previous_ttl, err)) == SIM_OK && dev->previous_ttl <= 0)
        rc = scn__fail(&v, err, SIM_EINPUT, "previous_ttl must be longer than 0");
    double share;
    if (rc == SIM_OK && (rc = only_on(root, dev, "pageshortage", MDL_OS_IOS, &v, err)) ==
                            SIM_OK && v.n != NULL && (rc = percent(&v, &share, err)) == SIM_OK)
        dev->pageshortage = (int64_t)(share * (double)dev->ram + 0.5);
    if (rc == SIM_OK && (rc = only_on(root, dev, "entitled_limit", MDL_OS_IOS, &v, err)) ==
                            SIM_OK && v.n != NULL &&
        (rc = scn__size(&v, &dev->entitled_limit, err)) == SIM_OK &&
        dev->entitled_limit < dev->jetsam_limit)
        rc = scn__fail(&v, err, SIM_EINPUT, "the entitled limit must not be below the "
                       "foreground limit");
    if (rc == SIM_OK && (rc = only_on(root, dev, "background_gpu", MDL_OS_IOS, &v, err)) ==
                            SIM_OK && v.n != NULL) {
        static const char *const names[] = {"allow", "deny"};
        rc = scn__enum(&v, names, 2, &dev->background_gpu_deny, err);
    }
    return rc;
}

/* zram: {size, ratio, swappable} (android): compressed swap for the other
 * apps' anonymous memory. */
static int load_zram(const scn__node *root, mdl_device *dev, sim_error *err)
{
    static const char *const keys[] = {"size", "ratio", "swappable"};
    scn__node z, v;
    int rc = only_on(root, dev, "zram", MDL_OS_ANDROID, &z, err);
    if (rc != SIM_OK || z.n == NULL)
        return rc;
    rc = scn__expect_mapping(&z, err);
    if (rc == SIM_OK)
        rc = scn__check_keys(&z, keys, 3, err);
    if (rc == SIM_OK)
        rc = scn__require(&z, "size", &v, err);
    if (rc == SIM_OK)
        rc = scn__size(&v, &dev->zram_size, err);
    if (rc == SIM_OK && dev->zram_size == 0)
        rc = scn__fail(&v, err, SIM_EINPUT, "a zram size must be above 0");
    if (rc == SIM_OK)
        rc = scn__require(&z, "ratio", &v, err);
    if (rc == SIM_OK)
        rc = scn__real(&v, 1.0, 10.0, &dev->zram_ratio, err);
    /* psi mode: reclaim decides what is swapped; minfree mode has no
     * reclaim and keeps its share */
    scn__get(&z, "swappable", &v);
    if (rc == SIM_OK && dev->lmk_psi && v.n != NULL)
        rc = scn__fail(&v, err, SIM_EINPUT, "swappable belongs to mode: minfree (in psi mode "
                       "reclaim decides what is swapped)");
    else if (rc == SIM_OK && !dev->lmk_psi)
        rc = scn__require(&z, "swappable", &v, err);
    if (rc == SIM_OK && !dev->lmk_psi)
        rc = scn__probability(&v, &dev->zram_swappable, err);
    dev->has_zram = rc == SIM_OK;
    return rc;
}

/* warning_at: a size of headroom, or (ios) a percentage of the limit in force. */
static int load_warning(const scn__node *root, mdl_device *dev, sim_error *err)
{
    scn__node v;
    scn__get(root, "warning_at", &v);
    if (v.n == NULL)
        return SIM_OK;
    const char *t;
    size_t len;
    int rc = scn__scalar(&v, &t, &len, err);
    if (rc != SIM_OK)
        return rc;
    if (len == 0 || t[len - 1] != '%')
        return scn__size(&v, &dev->warning_at, err);
    if (dev->rule != MDL_KILL_JETSAM)
        return scn__fail(&v, err, SIM_EINPUT, "a percentage needs a jetsam limit (ios); give "
                         "the headroom as a size");
    return percent(&v, &dev->warning_share, err);
}

static int load_measured(const scn__node *root, mdl_device *dev, sim_error *err);

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
        rc = load_warning(root, dev, err);
    if (rc == SIM_OK)
        rc = load_speed(root, dev, err);
    if (rc == SIM_OK)
        rc = load_thermal(root, dev, err);
    if (rc == SIM_OK)
        rc = load_delegates(root, dev, err);
    if (rc == SIM_OK)
        rc = load_background(root, dev, err);
    if (rc == SIM_OK)
        rc = load_zram(root, dev, err);
    if (rc == SIM_OK)
        rc = scn__device_pages(root, dev, err);
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
    /* Android 10 and older keep no ApplicationExitInfo (API level 30) */
    dev->no_exit_info = 0;
    scn__get(root, "exit_info", &v);
    if (rc == SIM_OK && v.n != NULL) {
        static const char *const names[] = {"true", "false"};
        rc = scn__enum(&v, names, 2, &dev->no_exit_info, err);
        if (rc == SIM_OK && dev->os != MDL_OS_ANDROID)
            rc = scn__fail(&v, err, SIM_EINPUT, "exit_info is Android's ApplicationExitInfo: "
                           "an iOS device has none to turn off");
    }
    if (rc == SIM_OK)
        rc = load_measured(root, dev, err);
    return rc;
}

/* measured: {VALUE: "SOURCE"}: the phone figures taken from a capture or a
 * public source, each with it ("fitted: ..." for a fitted one); every
 * figure not named is assumed (docs/devices.md). */
static int load_measured(const scn__node *root, mdl_device *dev, sim_error *err)
{
    scn__node m;
    scn__get(root, "measured", &m);
    if (m.n == NULL)
        return SIM_OK;
    int rc = scn__expect_mapping(&m, err);
    unsigned nv;
    const char *const *values = mdl_device_values(dev->os, &nv);
    if (rc == SIM_OK)
        rc = scn__check_keys(&m, values, nv, err);
    if (rc != SIM_OK)
        return rc;
    dev->measured = calloc(1, sizeof *dev->measured);
    if (dev->measured == NULL)
        return sim_error_set(err, SIM_ENOMEM, "out of memory");
    for (unsigned k = 0; k < nv; k++) {
        scn__node v;
        scn__get(&m, values[k], &v);
        if (v.n == NULL)
            continue;
        const char *t;
        size_t len;
        rc = scn__scalar(&v, &t, &len, err);
        if (rc == SIM_OK && (len == 0 || len >= MDL_SOURCE_MAX))
            rc = scn__fail(&v, err, SIM_EINPUT, "a source of 1 to %d characters (the file and "
                           "line, or the document, it came from)", MDL_SOURCE_MAX - 1);
        if (rc != SIM_OK)
            return rc;
        mdl_provenance *p = dev->measured;
        int fitted = len > 8 && memcmp(t, "fitted: ", 8) == 0;
        p->value[p->n] = (unsigned char)k;
        p->fitted[p->n] = (unsigned char)fitted;
        memcpy(p->src[p->n], t, len);
        p->src[p->n++][len] = '\0';
    }
    return SIM_OK;
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
    for (size_t i = 0; i < sizeof dev->owned / sizeof *dev->owned; i++) {
        free(dev->owned[i]);
        dev->owned[i] = NULL;
    }
    free(dev->measured);
    dev->measured = NULL;
}
