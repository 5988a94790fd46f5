/* calibrate.c - the scenario's `calibrate` block (docs/calibration.md):
 *
 *   calibrate:
 *     fit:
 *       - {key: devices.NAME.PATH, min: X, max: Y}   # NAME: a device, or * for all
 *     against: field
 *
 * Each key resolved to a knob of the device (models/knobs.c) that its
 * profile has, its bounds read in the knob's unit and checked against the
 * knob's own range; the field block must hold an entry for every device
 * fitted.  Loaded after the devices and the field block. */
#include "scenario_int.h"

#include <stdio.h>
#include <string.h>

#define KNOBS_MAX 64

/* The device the key names ("*": every one, device ""), and the path after
 * it. */
static int device_of(const scn_scenario *s, const scn__node *at, const char *key,
                     mdl_unknown *u, const char **path, sim_error *err)
{
    if (strncmp(key, "devices.", 8) != 0)
        return scn__fail(at, err, SIM_EINPUT, "a key to fit is devices.NAME.PATH (NAME a device "
                         "of the plan, or * for one value every device shares)");
    const char *rest = key + 8;
    if (strncmp(rest, "*.", 2) == 0) {
        u->device[0] = '\0';
        *path = rest + 2;
        return SIM_OK;
    }
    size_t best = 0;
    for (unsigned d = 0; d < s->ndevices; d++) {
        size_t n = strlen(s->devices[d].name);
        if (n > best && strncmp(rest, s->devices[d].name, n) == 0 && rest[n] == '.')
            best = n;
    }
    if (best == 0) {
        const char *names[SCN_PROFILES_MAX];
        char word[MDL_NAME_MAX];
        const char *dot = strchr(rest, '.');
        size_t n = dot != NULL ? (size_t)(dot - rest) : strlen(rest);
        snprintf(word, sizeof word, "%.*s", (int)(n < sizeof word ? n : sizeof word - 1), rest);
        for (unsigned d = 0; d < s->ndevices; d++)
            names[d] = s->devices[d].name;
        int near = scn__nearest(word, names, s->ndevices);
        if (near >= 0)
            return scn__fail(at, err, SIM_EINPUT, "no device \"%s\" in the plan (did you mean "
                             "\"%s\"?)", word, names[near]);
        return scn__fail(at, err, SIM_EINPUT, "no device \"%s\" in the plan", word);
    }
    if (best >= sizeof u->device)
        return scn__fail(at, err, SIM_ELIMIT, "a device name of %zu bytes", best);
    memcpy(u->device, rest, best); /* rest lies in u->key */
    u->device[best] = '\0';
    *path = rest + best + 1;
    return SIM_OK;
}

/* A bound in the knob's unit. */
static int bound(const scn__node *v, mdl_knob_unit unit, double *out, sim_error *err)
{
    int rc;
    if (unit == MDL_KNOB_RATIO)
        return scn__real(v, 0, 1e12, out, err);
    if (unit == MDL_KNOB_TIME) {
        sim_time t;
        rc = scn__duration(v, &t, err);
        *out = (double)t;
        return rc;
    }
    int64_t b;
    rc = unit == MDL_KNOB_RATE ? scn__bandwidth(v, &b, err) : scn__size(v, &b, err);
    *out = (double)b;
    return rc;
}

static const char *unit_words(mdl_knob_unit unit)
{
    return unit == MDL_KNOB_BYTES   ? "bytes"
           : unit == MDL_KNOB_TIME  ? "microseconds"
           : unit == MDL_KNOB_RATE  ? "bytes a second"
                                    : "a ratio";
}

/* Has the field block an entry the device's cells are held against? */
static int has_field(const scn_scenario *s, const mdl_device *d)
{
    for (unsigned i = 0; i < s->nfield; i++)
        if (strcmp(s->field[i].device, d->name) == 0 ||
            (s->field[i].device[0] == '\0' && s->field[i].ram == d->ram))
            return 1;
    return 0;
}

/* The knob on every device it names: each has it, its bounds within the
 * knob's range there, and a field entry. */
static int check_devices(const scn_scenario *s, const scn__node *e, const mdl_unknown *u,
                         sim_error *err)
{
    for (unsigned d = 0; d < s->ndevices; d++) {
        const mdl_device *dev = &s->devices[d];
        if (u->device[0] != '\0' && strcmp(u->device, dev->name) != 0)
            continue;
        double v, lo, hi;
        sim_error why;
        sim_error_clear(&why);
        if (mdl_knob_get(dev, u->knob, &v, &why) != SIM_OK)
            return scn__fail(e, err, SIM_EINPUT, "%s: %s: %s", u->key, dev->name, why.msg);
        mdl_knob_range(dev, u->knob, &lo, &hi);
        if (u->lo < lo || u->hi > hi)
            return scn__fail(e, err, SIM_EINPUT, "%s: the bounds [%g, %g] leave the value's own "
                             "range on %s, [%g, %g] (%s)", u->key, u->lo, u->hi, dev->name, lo,
                             hi, unit_words(mdl_knob_unit_of(u->knob)));
        if (!has_field(s, dev))
            return scn__fail(e, err, SIM_EINPUT, "%s: the field block has no entry for %s (by "
                             "its name or its RAM bucket): nothing to fit it against", u->key,
                             dev->name);
    }
    return SIM_OK;
}

static int fit_entry(void *ctx, const scn__node *e, sim_error *err)
{
    static const char *const keys[] = {"key", "min", "max"};
    scn_scenario *s = ctx;
    int rc = scn__expect_mapping(e, err);
    if (rc == SIM_OK)
        rc = scn__check_keys(e, keys, 3, err);
    if (rc != SIM_OK)
        return rc;
    if (s->nfit == MDL_UNKNOWNS_MAX)
        return scn__fail(e, err, SIM_ELIMIT, "more than %d unknowns to fit", MDL_UNKNOWNS_MAX);
    mdl_unknown *u = &s->fit[s->nfit];
    memset(u, 0, sizeof *u);
    scn__node k, lo, hi;
    const char *t, *path = NULL;
    size_t len;
    if ((rc = scn__require(e, "key", &k, err)) != SIM_OK ||
        (rc = scn__scalar(&k, &t, &len, err)) != SIM_OK)
        return rc;
    if (len >= sizeof u->key)
        return scn__fail(&k, err, SIM_ELIMIT, "a key of %zu bytes", len);
    memcpy(u->key, t, len);
    if ((rc = device_of(s, &k, u->key, u, &path, err)) != SIM_OK)
        return rc;
    int knob = mdl_knob_find(path);
    if (knob < 0) {
        const char *names[KNOBS_MAX];
        unsigned n = mdl_knob_count();
        for (unsigned i = 0; i < n && i < KNOBS_MAX; i++)
            names[i] = mdl_knob_path(i);
        int near = scn__nearest(path, names, n < KNOBS_MAX ? n : KNOBS_MAX);
        if (near >= 0)
            return scn__fail(&k, err, SIM_EINPUT, "\"%s\" is no value calibrate can set (did "
                             "you mean \"%s\"?)", path, names[near]);
        return scn__fail(&k, err, SIM_EINPUT, "\"%s\" is no value calibrate can set "
                         "(docs/calibration.md lists them)", path);
    }
    u->knob = (unsigned)knob;
    for (unsigned i = 0; i < s->nfit; i++)
        if (s->fit[i].knob == u->knob && strcmp(s->fit[i].device, u->device) == 0)
            return scn__fail(&k, err, SIM_EINPUT, "%s is named twice", u->key);
    mdl_knob_unit unit = mdl_knob_unit_of(u->knob);
    if ((rc = scn__require(e, "min", &lo, err)) != SIM_OK ||
        (rc = bound(&lo, unit, &u->lo, err)) != SIM_OK ||
        (rc = scn__require(e, "max", &hi, err)) != SIM_OK ||
        (rc = bound(&hi, unit, &u->hi, err)) != SIM_OK)
        return rc;
    if (!(u->hi > u->lo))
        return scn__fail(&hi, err, SIM_EINPUT, "max must be above min");
    if ((rc = check_devices(s, e, u, err)) != SIM_OK)
        return rc;
    s->nfit++;
    return SIM_OK;
}

int scn__load_calibrate(scn_scenario *s, const scn__node *root, sim_error *err)
{
    static const char *const keys[] = {"fit", "against"};
    scn__node c, v;
    scn__get(root, "calibrate", &c);
    if (c.n == NULL)
        return SIM_OK;
    int rc = scn__expect_mapping(&c, err);
    if (rc == SIM_OK)
        rc = scn__check_keys(&c, keys, 2, err);
    if (rc != SIM_OK)
        return rc;
    static const char *const against[] = {"field"};
    int which = 0;
    scn__get(&c, "against", &v);
    if (v.n != NULL && (rc = scn__enum(&v, against, 1, &which, err)) != SIM_OK)
        return rc;
    if (s->nfield == 0)
        return scn__fail(&c, err, SIM_EINPUT, "calibrate fits against the plan's field block, "
                         "and the plan has none (docs/field.md)");
    if ((rc = scn__require(&c, "fit", &v, err)) != SIM_OK ||
        (rc = scn__each(&v, "unknown", fit_entry, s, err)) != SIM_OK)
        return rc;
    if (s->nfit == 0)
        return scn__fail(&v, err, SIM_EINPUT, "calibrate: fit names no unknown");
    s->calibrate = 1;
    return SIM_OK;
}
