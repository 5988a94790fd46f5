/* include.c - the scenario's device and candidate entries: an inline
 * mapping, a relative path to a .yaml/.yml file, or a catalog name.  An
 * included file whose root is a sequence is a set of further entries; the
 * include stack is checked for cycles (docs/scenario-loader.md). */
#define _XOPEN_SOURCE 700 /* realpath */
#include "scenario_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------- includes */

const scn__catalog_file *scn__catalog_find(const char *path)
{
    for (unsigned i = 0; i < scn__catalog_nfiles; i++)
        if (strcmp(scn__catalog_files[i].path, path) == 0)
            return &scn__catalog_files[i];
    return NULL;
}

static int ends_with(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && strcmp(s + a - b, suffix) == 0;
}

/* Joins dir-of(base) and rel into out (lexically, for the catalog). */
static int join(const char *base, const char *rel, char *out, size_t n)
{
    const char *slash = strrchr(base, '/');
    int dir = slash != NULL ? (int)(slash - base) : 0;
    int w = dir > 0 ? snprintf(out, n, "%.*s/%s", dir, base, rel) : snprintf(out, n, "%s", rel);
    return w >= 0 && (size_t)w < n;
}

/* Collapses "a/../b" and "./" in a catalog path; fails on escaping it. */
static int normalize(char *p)
{
    char *parts[64];
    int np = 0;
    char buf[PATH_MAX];
    snprintf(buf, sizeof buf, "%s", p);
    for (char *t = strtok(buf, "/"); t != NULL; t = strtok(NULL, "/")) {
        if (strcmp(t, ".") == 0)
            continue;
        if (strcmp(t, "..") == 0) {
            if (np == 0)
                return 0;
            np--;
            continue;
        }
        if (np == 64)
            return 0;
        parts[np++] = t;
    }
    char out[PATH_MAX];
    size_t len = 0;
    out[0] = '\0';
    for (int i = 0; i < np; i++) {
        int w = snprintf(out + len, sizeof out - len, "%s%s", i ? "/" : "", parts[i]);
        if (w < 0 || (size_t)w >= sizeof out - len)
            return 0;
        len += (size_t)w;
    }
    memcpy(p, out, len + 1);
    return 1;
}

/* Resolves an include string written at `at` in the current document.
 * kind_dir: "devices" or "candidates", where a bare name is looked up. */
static int resolve(const loader *ld, const scn__node *at, const char *ref, const char *kind_dir,
                   source *src, sim_error *err)
{
    const source *cur = &ld->stack[ld->depth - 1];
    memset(src, 0, sizeof *src);
    int is_path = ends_with(ref, ".yaml") || ends_with(ref, ".yml");
    if (!is_path) {
        for (const char *c = ref; *c; c++)
            if (!((*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') || *c == '-'))
                return scn__fail(at, err, SIM_EINPUT, "expected a catalog name ([a-z0-9-]+), "
                                 "a relative path ending in .yaml, or a mapping; got \"%.40s\"",
                                 ref);
        char path[PATH_MAX];
        snprintf(path, sizeof path, "%s/%.500s.yaml", kind_dir, ref);
        if (scn__catalog_find(path) == NULL)
            return scn__fail(at, err, SIM_ENOTFOUND, "no %s named '%.40s' in the catalog "
                             "(oomsim catalog lists them)",
                             strcmp(kind_dir, "devices") == 0 ? "device" : "candidate", ref);
        snprintf(src->name, sizeof src->name, "catalog/%s", path);
        snprintf(src->id, sizeof src->id, "catalog:%s", path);
        src->embedded = 1;
        return SIM_OK;
    }
    if (ref[0] == '/')
        return scn__fail(at, err, SIM_EINPUT, "an include is a path relative to the including "
                         "file, not an absolute path");
    char joined[PATH_MAX];
    if (cur->embedded) {
        /* inside the catalog: paths stay inside it */
        if (!join(cur->name + strlen("catalog/"), ref, joined, sizeof joined) ||
            !normalize(joined) || scn__catalog_find(joined) == NULL)
            return scn__fail(at, err, SIM_ENOTFOUND, "include \"%.80s\": no such catalog file",
                             ref);
        snprintf(src->name, sizeof src->name, "catalog/%s", joined);
        snprintf(src->id, sizeof src->id, "catalog:%s", joined);
        src->embedded = 1;
        return SIM_OK;
    }
    if (!join(cur->name, ref, joined, sizeof joined))
        return scn__fail(at, err, SIM_ELIMIT, "include \"%.80s\": path too long", ref);
    char real[PATH_MAX];
    if (realpath(joined, real) != NULL) {
        snprintf(src->name, sizeof src->name, "%s", joined);
        snprintf(src->id, sizeof src->id, "disk:%s", real);
        return SIM_OK;
    }
    /* the scenario format writes catalog entries as catalog/devices/x.yaml:
     * a path that is not on disk and starts so names the embedded entry */
    char cpath[PATH_MAX];
    if (strncmp(ref, "catalog/", 8) == 0) {
        snprintf(cpath, sizeof cpath, "%s", ref + 8);
        if (normalize(cpath) && scn__catalog_find(cpath) != NULL) {
            snprintf(src->name, sizeof src->name, "catalog/%s", cpath);
            snprintf(src->id, sizeof src->id, "catalog:%s", cpath);
            src->embedded = 1;
            return SIM_OK;
        }
    }
    return scn__fail(at, err, SIM_ENOTFOUND, "include \"%.80s\": no such file (looked for %.120s)",
                     ref, joined);
}

/* Chains a document's text into the scenario's digest. */
void scn__digest_add(scn_scenario *s, const scn__doc *doc)
{
    s->digest = sim_digest(s->digest, doc->text, doc->len);
}

int scn__open_source(scn_scenario *s, const source *src, scn__doc *doc, sim_error *err)
{
    int rc;
    if (!src->embedded) {
        rc = scn__doc_load(doc, src->name, err);
    } else {
        const scn__catalog_file *f = scn__catalog_find(src->id + strlen("catalog:"));
        if (f == NULL)
            return sim_error_set(err, SIM_ENOTFOUND, "%s: no such catalog file", src->name);
        rc = scn__doc_parse(doc, f->text, f->len, src->name, err);
    }
    if (rc == SIM_OK)
        scn__digest_add(s, doc);
    return rc;
}

/* ------------------------------------------------------------ profiles */

typedef int (*profile_fn)(loader *ld, const scn__node *m, sim_error *err);

static int add_device(loader *ld, const scn__node *m, sim_error *err)
{
    scn_scenario *s = ld->s;
    if (s->ndevices == SCN_PROFILES_MAX)
        return scn__fail(m, err, SIM_ELIMIT, "more than %u devices", SCN_PROFILES_MAX);
    mdl_device *d = &s->devices[s->ndevices];
    memset(d, 0, sizeof *d);
    int rc = scn__device(m, d, err);
    if (rc != SIM_OK) {
        scn_device_release(d);
        return rc;
    }
    for (unsigned k = 0; k < s->ndevices; k++)
        if (strcmp(s->devices[k].name, d->name) == 0) {
            scn_device_release(d);
            return scn__fail(m, err, SIM_EINPUT, "device '%s' is listed twice", d->name);
        }
    /* its text, for a calibrated copy (scn_device_fitted), when the plan
     * calibrates: aliases and merges are resolved in the tree, so the node
     * stands alone */
    if (ld->keep_yaml &&
        (s->device_yaml[s->ndevices] = fy_emit_node_to_string(
             m->n, FYECF_MODE_BLOCK | FYECF_WIDTH_INF)) == NULL) {
        scn_device_release(d);
        return sim_error_set(err, SIM_ENOMEM, "out of memory");
    }
    s->ndevices++;
    return SIM_OK;
}

static int add_candidate(loader *ld, const scn__node *m, sim_error *err)
{
    scn_scenario *s = ld->s;
    if (s->ncandidates == SCN_PROFILES_MAX)
        return scn__fail(m, err, SIM_ELIMIT, "more than %u candidates", SCN_PROFILES_MAX);
    mdl_candidate *c = &s->candidates[s->ncandidates];
    memset(c, 0, sizeof *c);
    int rc = scn__candidate(m, c, err);
    if (rc != SIM_OK) {
        scn_candidate_release(c);
        return rc;
    }
    for (unsigned k = 0; k < s->ncandidates; k++)
        if (strcmp(s->candidates[k].id, c->id) == 0) {
            scn_candidate_release(c);
            return scn__fail(m, err, SIM_EINPUT, "candidate '%s' is listed twice", c->id);
        }
    s->ncandidates++;
    return SIM_OK;
}

static int entries(loader *ld, const scn__node *list, const char *kind_dir, profile_fn add,
                   sim_error *err);

/* One entry: a mapping (a profile), or a string (an include). */
static int entry(loader *ld, const scn__node *v, const char *kind_dir, profile_fn add,
                 sim_error *err)
{
    if (fy_node_is_mapping(v->n))
        return add(ld, v, err);
    const char *text;
    size_t len;
    int rc = scn__scalar(v, &text, &len, err);
    if (rc != SIM_OK)
        return rc;
    char ref[PATH_MAX];
    if (len == 0 || len >= 512)
        return scn__fail(v, err, SIM_EINPUT, "expected an include path or catalog name");
    memcpy(ref, text, len);
    ref[len] = '\0';
    source src;
    if ((rc = resolve(ld, v, ref, kind_dir, &src, err)) != SIM_OK)
        return rc;
    for (unsigned k = 0; k < ld->depth; k++)
        if (strcmp(ld->stack[k].id, src.id) == 0)
            return scn__fail(v, err, SIM_EINPUT, "include cycle: %.150s includes %.150s, "
                             "which is already being loaded", ld->stack[ld->depth - 1].name,
                             src.name);
    if (ld->depth == INCLUDE_DEPTH_MAX)
        return scn__fail(v, err, SIM_ELIMIT, "includes nested deeper than %d",
                         INCLUDE_DEPTH_MAX);
    scn__doc doc;
    if ((rc = scn__open_source(ld->s, &src, &doc, err)) != SIM_OK)
        return rc;
    ld->stack[ld->depth++] = src;
    scn__node root;
    scn__doc_top(&doc, &root);
    if (root.n != NULL && fy_node_is_sequence(root.n))
        rc = entries(ld, &root, kind_dir, add, err); /* a set of entries */
    else if ((rc = scn__doc_root(&doc, &root, err)) == SIM_OK)
        rc = add(ld, &root, err);
    ld->depth--;
    scn__doc_free(&doc);
    return rc;
}

/* The loader, the catalog folder and the adder of a list of entries. */
typedef struct entries_ctx {
    loader *ld;
    const char *kind_dir;
    profile_fn add;
} entries_ctx;

static int entry_of(void *ctx, const scn__node *v, sim_error *err)
{
    const entries_ctx *c = ctx;
    return entry(c->ld, v, c->kind_dir, c->add, err);
}

static int entries(loader *ld, const scn__node *list, const char *kind_dir, profile_fn add,
                   sim_error *err)
{
    entries_ctx c = {ld, kind_dir, add};
    return scn__each(list, "entry", entry_of, &c, err);
}


/* The scenario's devices and candidates: inline, included or from the
 * catalog. */
int scn__load_profiles(loader *ld, const scn__node *root, sim_error *err)
{
    scn_scenario *s = ld->s;
    scn__node v;
    int rc;
    s->devices = calloc(SCN_PROFILES_MAX, sizeof *s->devices);
    s->device_yaml = calloc(SCN_PROFILES_MAX, sizeof *s->device_yaml);
    s->candidates = calloc(SCN_PROFILES_MAX, sizeof *s->candidates);
    if (s->devices == NULL || s->device_yaml == NULL || s->candidates == NULL)
        return sim_error_set(err, SIM_ENOMEM, "out of memory");
    scn__get(root, "calibrate", &v);
    ld->keep_yaml = v.n != NULL;
    if ((rc = scn__require(root, "devices", &v, err)) != SIM_OK ||
        (rc = entries(ld, &v, "devices", add_device, err)) != SIM_OK)
        return rc;
    if ((rc = scn__require(root, "candidates", &v, err)) != SIM_OK ||
        (rc = entries(ld, &v, "candidates", add_candidate, err)) != SIM_OK)
        return rc;
    return SIM_OK;
}
