/* fitted.c - a calibrated device profile (`oomsim calibrate -o DIR` writes
 * DIR/devices/NAME.yaml, docs/calibration.md): the device's YAML as the
 * plan loaded it, each fitted value put in place in its unit and marked in
 * `measured` as fitted, with what the fit said of it.  The text is loaded
 * back before it is handed out, and each value read back as written: a
 * profile that would not load, or would load another value, is never
 * written. */
#include "scenario_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Knob k's value as YAML in its unit; the rounding step, in that unit. */
static double format(unsigned k, double v, char *out, size_t n)
{
    mdl_knob_unit unit = mdl_knob_unit_of(k);
    if (unit == MDL_KNOB_BYTES || unit == MDL_KNOB_RATE) {
        snprintf(out, n, "%.3fMiB%s", v / 1048576.0, unit == MDL_KNOB_RATE ? "/s" : "");
        return 0.0005 * 1048576.0;
    }
    if (unit == MDL_KNOB_TIME) {
        snprintf(out, n, "%.3fs", v / 1e6);
        return 0.0005 * 1e6;
    }
    snprintf(out, n, "%.4f", v);
    return 0.00005;
}

/* The figure of `measured` a knob's path belongs to (its longest name
 * that is the path or a prefix of it ending at a dot), or -1: iOS names
 * no figure for some values a plan may still fit. */
static int figure_of(mdl_os os, const char *path)
{
    unsigned n;
    const char *const *names = mdl_device_values(os, &n);
    int best = -1;
    size_t longest = 0;
    for (unsigned k = 0; k < n; k++) {
        size_t len = strlen(names[k]);
        if (len > longest && strncmp(path, names[k], len) == 0 &&
            (path[len] == '\0' || path[len] == '.'))
            best = (int)k, longest = len;
    }
    return best;
}

/* Sets the scalar at a dotted path under mapping `map`, making the
 * mappings on the way that the profile left to their defaults. */
static int set_at(struct fy_document *fyd, struct fy_node *map, const char *path,
                  const char *value)
{
    const char *dot = strchr(path, '.');
    size_t n = dot != NULL ? (size_t)(dot - path) : strlen(path);
    if (map == NULL || !fy_node_is_mapping(map))
        return -1;
    struct fy_node_pair *p = fy_node_mapping_lookup_pair_by_string(map, path, n);
    struct fy_node *next = p != NULL ? fy_node_pair_value(p) : NULL;
    if (dot == NULL)
        next = fy_node_create_scalar_copy(fyd, value, strlen(value));
    else if (next == NULL)
        next = fy_node_create_mapping(fyd);
    if (next == NULL)
        return -1;
    if (p == NULL || dot == NULL) {
        int rc = p != NULL ? fy_node_pair_set_value(p, next)
                           : fy_node_mapping_append(map, fy_node_create_scalar_copy(fyd, path, n),
                                                    next);
        if (rc != 0)
            return -1;
    }
    return dot != NULL ? set_at(fyd, next, dot + 1, value) : 0;
}

/* page_cache is written whole or not at all: a fitted size (or working
 * set) on a profile that left the cache to its default takes the other at
 * the value the device has. */
static int whole_pair(struct fy_document *fyd, struct fy_node *root, const mdl_device *d,
                      unsigned knob)
{
    static const char *const pair[2] = {"page_cache.size", "page_cache.working_set"};
    for (int i = 0; i < 2; i++) {
        if (strcmp(mdl_knob_path(knob), pair[i]) != 0)
            continue;
        const char *other = pair[1 - i];
        if (fy_node_by_path(root, i ? "/page_cache/size" : "/page_cache/working_set",
                            (size_t)-1, FYNWF_DONT_FOLLOW) != NULL)
            return 0;
        double v;
        sim_error why;
        char text[64];
        if (mdl_knob_get(d, (unsigned)mdl_knob_find(other), &v, &why) != SIM_OK)
            return -1;
        format((unsigned)mdl_knob_find(other), v, text, sizeof text);
        return set_at(fyd, root, other, text);
    }
    return 0;
}

/* `measured`'s entry for figure k: "fitted: " and every fitted value's
 * source of that figure, joined, cut to what the loader takes. */
static void source_of(const mdl_device *d, const scn_fitted *v, unsigned n, int k, char *out)
{
    size_t len = (size_t)snprintf(out, MDL_SOURCE_MAX, "fitted: ");
    for (unsigned i = 0; i < n; i++) {
        if (figure_of(d->os, mdl_knob_path(v[i].knob)) != k)
            continue;
        int w = snprintf(out + len, MDL_SOURCE_MAX - len, "%s%s", len > 8 ? "; " : "",
                         v[i].source);
        len = w < 0 || (size_t)w >= MDL_SOURCE_MAX - len ? MDL_SOURCE_MAX - 1 : len + (size_t)w;
    }
}

static int put_values(struct fy_document *fyd, const mdl_device *d, const scn_fitted *v,
                      unsigned n, double *step)
{
    struct fy_node *root = fy_document_root(fyd);
    for (unsigned i = 0; i < n; i++) {
        char text[64];
        step[i] = format(v[i].knob, v[i].value, text, sizeof text);
        if (set_at(fyd, root, mdl_knob_path(v[i].knob), text) != 0 ||
            whole_pair(fyd, root, d, v[i].knob) != 0)
            return -1;
        int k = figure_of(d->os, mdl_knob_path(v[i].knob));
        if (k < 0)
            continue;
        char src[MDL_SOURCE_MAX];
        unsigned nv;
        source_of(d, v, n, k, src);
        /* the figure's name may hold a dot (zram.ratio): one key, not two */
        const char *name = mdl_device_values(d->os, &nv)[k];
        struct fy_node *m = fy_node_mapping_lookup_by_string(root, "measured", 8);
        if (m == NULL) {
            m = fy_node_create_mapping(fyd);
            if (m == NULL || fy_node_mapping_append(root, fy_node_create_scalar_copy(
                                                        fyd, "measured", 8), m) != 0)
                return -1;
        }
        struct fy_node_pair *p = fy_node_mapping_lookup_pair_by_string(m, name, strlen(name));
        struct fy_node *s = fy_node_create_scalar_copy(fyd, src, strlen(src));
        if (s == NULL || (p != NULL ? fy_node_pair_set_value(p, s)
                                    : fy_node_mapping_append(m, fy_node_create_scalar_copy(
                                                                 fyd, name, strlen(name)), s)) != 0)
            return -1;
    }
    return 0;
}

/* The text loads, and each value reads back as written. */
static int read_back(const char *text, const char *name, const scn_fitted *v, unsigned n,
                     const double *step, sim_error *err)
{
    mdl_device d;
    sim_error why;
    sim_error_clear(&why);
    if (scn_device_parse(text, strlen(text), name, &d, &why) != SIM_OK)
        return sim_error_set(err, SIM_EINPUT, "the calibrated profile of %s does not load: %s",
                             name, why.msg);
    int rc = SIM_OK;
    for (unsigned i = 0; rc == SIM_OK && i < n; i++) {
        double got;
        if (mdl_knob_get(&d, v[i].knob, &got, &why) != SIM_OK ||
            fabs(got - v[i].value) > step[i] + 1e-9 * fabs(v[i].value))
            rc = sim_error_set(err, SIM_EINPUT, "the calibrated profile of %s reads %s back as "
                               "another value than the fit's", name, mdl_knob_path(v[i].knob));
    }
    scn_device_release(&d);
    return rc;
}

int scn_device_fitted(const scn_scenario *s, unsigned device, const scn_fitted *v, unsigned n,
                      const char *header, char **yaml, sim_error *err)
{
    *yaml = NULL;
    if (device >= s->ndevices || s->device_yaml == NULL || s->device_yaml[device] == NULL ||
        n > MDL_UNKNOWNS_MAX)
        return sim_error_set(err, SIM_EINVAL, "no profile text for device %u", device);
    const mdl_device *d = &s->devices[device];
    scn__doc doc;
    int rc = scn__doc_parse(&doc, s->device_yaml[device], strlen(s->device_yaml[device]),
                            d->name, err);
    if (rc != SIM_OK)
        return rc;
    double step[MDL_UNKNOWNS_MAX];
    char *body = NULL;
    if (put_values(doc.doc, d, v, n, step) != 0 ||
        (body = fy_emit_document_to_string(doc.doc, FYECF_MODE_BLOCK | FYECF_WIDTH_INF)) == NULL)
        rc = sim_error_set(err, SIM_ENOMEM, "out of memory writing the profile of %s", d->name);
    scn__doc_free(&doc);
    sim_text o = SIM_TEXT_INIT;
    if (rc == SIM_OK) {
        sim_text_printf(&o, "%s%s", header, body);
        *yaml = sim_text_done(&o);
        if (*yaml == NULL)
            rc = sim_error_set(err, SIM_ENOMEM, "out of memory writing the profile of %s",
                               d->name);
    }
    free(body);
    if (rc == SIM_OK && (rc = read_back(*yaml, d->name, v, n, step, err)) != SIM_OK) {
        free(*yaml);
        *yaml = NULL;
    }
    return rc;
}
