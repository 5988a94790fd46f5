/* scenario.c - scenario files: YAML to scn_scenario (spec/SCENARIO.md
 * "Top level", "Workload", "Policies"); includes, catalog names and grid
 * axes (docs/scenario-loader.md).
 *
 * A device or candidate entry is an inline mapping, a relative path to a
 * .yaml/.yml file, or a catalog name.  An included file whose root is a
 * sequence is a set of further entries; the include stack is checked for
 * cycles.  Once every part is loaded, the grid is built: devices x
 * candidates x the product of the policy axes, in file order. */
#define _XOPEN_SOURCE 700 /* realpath */
#include "yaml_int.h"
#include "catalog_int.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define INCLUDE_DEPTH_MAX 16
#define AXIS_VALUES_MAX 256u
#define ABOUT_MAX 2000

/* ---------------------------------------------------------- includes */

/* Where a document came from: a file on disk or a catalog entry. */
typedef struct source {
    char id[PATH_MAX + 32];   /* "disk:<realpath>" or "catalog:<path>" */
    char name[PATH_MAX + 32]; /* what messages call it */
    int embedded;
} source;

typedef struct loader {
    scn_scenario *s;
    source stack[INCLUDE_DEPTH_MAX];
    unsigned depth;
} loader;

static const scn__catalog_file *catalog_find(const char *path)
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
        if (catalog_find(path) == NULL)
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
            !normalize(joined) || catalog_find(joined) == NULL)
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
    /* spec/SCENARIO.md writes catalog entries as catalog/devices/x.yaml:
     * a path that is not on disk and starts so names the embedded entry */
    char cpath[PATH_MAX];
    if (strncmp(ref, "catalog/", 8) == 0) {
        snprintf(cpath, sizeof cpath, "%s", ref + 8);
        if (normalize(cpath) && catalog_find(cpath) != NULL) {
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
static void digest_add(scn_scenario *s, const scn__doc *doc)
{
    s->digest = sim_digest(s->digest, doc->text, doc->len);
}

static int open_source(scn_scenario *s, const source *src, scn__doc *doc, sim_error *err)
{
    int rc;
    if (!src->embedded) {
        rc = scn__doc_load(doc, src->name, err);
    } else {
        const scn__catalog_file *f = catalog_find(src->id + strlen("catalog:"));
        if (f == NULL)
            return sim_error_set(err, SIM_ENOTFOUND, "%s: no such catalog file", src->name);
        rc = scn__doc_parse(doc, f->text, f->len, src->name, err);
    }
    if (rc == SIM_OK)
        digest_add(s, doc);
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
    if ((rc = open_source(ld->s, &src, &doc, err)) != SIM_OK)
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

static int entries(loader *ld, const scn__node *list, const char *kind_dir, profile_fn add,
                   sim_error *err)
{
    int rc = scn__expect_sequence(list, err);
    if (rc != SIM_OK)
        return rc;
    if (fy_node_sequence_item_count(list->n) < 1)
        return scn__fail(list, err, SIM_EINPUT, "expected at least one entry");
    void *it = NULL;
    struct fy_node *item;
    size_t i = 0;
    while (rc == SIM_OK && (item = fy_node_sequence_iterate(list->n, &it)) != NULL) {
        scn__node v;
        scn__item(list, i++, item, &v);
        rc = entry(ld, &v, kind_dir, add, err);
    }
    return rc;
}

/* ------------------------------------------------------------ workload */

typedef struct steps_buf {
    mdl_step *v;
    uint32_t n, cap;
} steps_buf;

static int push_step(steps_buf *b, const scn__node *at, mdl_step st, sim_error *err)
{
    if (b->n == MDL_STEPS_MAX)
        return scn__fail(at, err, SIM_ELIMIT, "the path holds more than %u steps once repeat "
                         "is unrolled", MDL_STEPS_MAX);
    if (b->n == b->cap) {
        uint32_t cap = b->cap == 0 ? 16 : b->cap * 2;
        mdl_step *v = realloc(b->v, sizeof *v * cap);
        if (v == NULL)
            return scn__fail(at, err, SIM_ENOMEM, "out of memory");
        b->v = v;
        b->cap = cap;
    }
    b->v[b->n++] = st;
    return SIM_OK;
}

static int part_of(const mdl_candidate *c, const char *name)
{
    for (unsigned k = 0; k < c->nparts; k++)
        if (strcmp(c->parts[k].name, name) == 0)
            return 1;
    return 0;
}

/* A list of part names that every candidate must have (needs, prewarm). */
static int part_names(const scn_scenario *s, const scn__node *v, char (*out)[MDL_NAME_MAX],
                      unsigned *n, sim_error *err)
{
    int rc = scn__expect_sequence(v, err);
    if (rc != SIM_OK)
        return rc;
    int count = fy_node_sequence_item_count(v->n);
    if (count > MDL_PARTS_MAX)
        return scn__fail(v, err, SIM_ELIMIT, "%d parts exceed the limit of %d", count,
                         MDL_PARTS_MAX);
    void *it = NULL;
    struct fy_node *item;
    unsigned i = 0;
    while ((item = fy_node_sequence_iterate(v->n, &it)) != NULL) {
        scn__node x;
        scn__item(v, i, item, &x);
        if ((rc = scn__name(&x, out[i], err)) != SIM_OK)
            return rc;
        for (unsigned k = 0; k < i; k++)
            if (strcmp(out[k], out[i]) == 0)
                return scn__fail(&x, err, SIM_EINPUT, "part '%s' is listed twice", out[i]);
        for (unsigned c = 0; c < s->ncandidates; c++) {
            const mdl_candidate *cand = &s->candidates[c];
            if (part_of(cand, out[i]))
                continue;
            char list[512];
            size_t len = 0;
            list[0] = '\0';
            for (unsigned k = 0; k < cand->nparts && len < sizeof list - 80; k++)
                len += (size_t)snprintf(list + len, sizeof list - len, "%s%s", k ? ", " : "",
                                        cand->parts[k].name);
            return scn__fail(&x, err, SIM_EINPUT, "candidate %s has no part '%s' (its parts: "
                             "%s)", cand->id, out[i], list);
        }
        i++;
    }
    *n = i;
    return SIM_OK;
}

static int load_requests(scn_scenario *s, const scn__node *v, uint32_t *index, sim_error *err)
{
    static const char *const keys[] = {"rate", "every", "for", "count", "needs", "payload"};
    mdl_workload *wl = &s->workload;
    int rc = scn__expect_mapping(v, err);
    if (rc == SIM_OK)
        rc = scn__check_keys(v, keys, sizeof keys / sizeof *keys, err);
    if (rc != SIM_OK)
        return rc;
    if (wl->nrequests == MDL_STEPS_MAX)
        return scn__fail(v, err, SIM_ELIMIT, "more than %u requests steps", MDL_STEPS_MAX);
    mdl_requests *grown = realloc(wl->requests, sizeof *grown * (wl->nrequests + 1));
    if (grown == NULL)
        return scn__fail(v, err, SIM_ENOMEM, "out of memory");
    wl->requests = grown;
    mdl_requests *rq = &wl->requests[wl->nrequests];
    memset(rq, 0, sizeof *rq);
    scn__node rate, every, dur, count, x;
    scn__get(v, "rate", &rate);
    scn__get(v, "every", &every);
    scn__get(v, "for", &dur);
    scn__get(v, "count", &count);
    if ((rate.n == NULL) == (every.n == NULL))
        return scn__fail(v, err, SIM_EINPUT, "give exactly one of rate (Poisson arrivals) and "
                         "every (a fixed interval)");
    if ((dur.n == NULL) == (count.n == NULL))
        return scn__fail(v, err, SIM_EINPUT, "give exactly one of for (a duration) and count");
    if (rate.n != NULL) {
        double per_s;
        if ((rc = scn__rate(&rate, &per_s, err)) != SIM_OK)
            return rc;
        if (per_s > 1e6)
            return scn__fail(&rate, err, SIM_ELIMIT, "a rate above 1000000/s is beyond the "
                             "model's microsecond clock");
        rq->poisson = 1;
        rq->mean_gap_us = 1e6 / per_s;
    } else {
        if ((rc = scn__duration(&every, &rq->every, err)) != SIM_OK)
            return rc;
        if (rq->every < 1)
            return scn__fail(&every, err, SIM_EINPUT, "expected a positive interval");
    }
    if (dur.n != NULL) {
        if ((rc = scn__duration(&dur, &rq->duration, err)) != SIM_OK)
            return rc;
    } else {
        int64_t n;
        if ((rc = scn__int(&count, 1, 100000000, &n, err)) != SIM_OK)
            return rc;
        rq->count = (uint64_t)n;
        if (!rq->poisson) {
            if ((double)rq->every * (double)n > (double)SCN_DURATION_MAX)
                return scn__fail(&count, err, SIM_ELIMIT, "count x every exceeds 30 days");
            rq->duration = rq->every * (sim_time)n;
        }
    }
    scn__get(v, "needs", &x);
    if (x.n != NULL && (rc = part_names(s, &x, rq->needs, &rq->nneeds, err)) != SIM_OK)
        return rc;
    if (x.n != NULL && rq->nneeds == 0)
        return scn__fail(&x, err, SIM_EINPUT, "expected at least one part");
    scn__get(v, "payload", &x);
    if (x.n != NULL && (rc = scn__amounts(&wl->owned, &x, &rq->payload, err)) != SIM_OK)
        return rc;
    *index = wl->nrequests++;
    return SIM_OK;
}

static int page_index(mdl_workload *wl, const scn__node *v, uint32_t *out, sim_error *err)
{
    /* a page marker: [a-z0-9_-]+ (the spec writes ocr_page) */
    char name[MDL_NAME_MAX];
    const char *t;
    size_t len;
    int rc = scn__scalar(v, &t, &len, err);
    if (rc != SIM_OK)
        return rc;
    int ok = len > 0 && len < MDL_NAME_MAX;
    for (size_t i = 0; ok && i < len; i++)
        ok = (t[i] >= 'a' && t[i] <= 'z') || (t[i] >= '0' && t[i] <= '9') || t[i] == '_' ||
             t[i] == '-';
    if (!ok)
        return scn__fail(v, err, SIM_EINPUT, "expected a page name of 1 to %d characters from "
                         "[a-z0-9_-], got \"%.*s\"", MDL_NAME_MAX - 1,
                         (int)(len > 40 ? 40 : len), t);
    memcpy(name, t, len);
    name[len] = '\0';
    for (uint32_t k = 0; k < wl->npages; k++)
        if (strcmp(wl->pages[k], name) == 0) {
            *out = k;
            return SIM_OK;
        }
    if (wl->npages == 1000)
        return scn__fail(v, err, SIM_ELIMIT, "more than 1000 page names");
    char (*p)[MDL_NAME_MAX] = realloc(wl->pages, sizeof *p * (wl->npages + 1));
    if (p == NULL)
        return scn__fail(v, err, SIM_ENOMEM, "out of memory");
    wl->pages = p;
    memcpy(wl->pages[wl->npages], name, sizeof name);
    *out = wl->npages++;
    return SIM_OK;
}

static int load_steps(scn_scenario *s, const scn__node *list, steps_buf *b, int depth,
                      sim_error *err);

static int load_step(scn_scenario *s, const scn__node *v, steps_buf *b, int depth,
                     sim_error *err)
{
    static const char *const kinds[] = {"cold_start", "enter", "leave", "requests",
                                        "background", "repeat"};
    mdl_step st;
    memset(&st, 0, sizeof st);
    int rc;
    if (fy_node_is_scalar(v->n)) {
        const char *t;
        size_t len;
        if ((rc = scn__scalar(v, &t, &len, err)) != SIM_OK)
            return rc;
        if (len != 10 || memcmp(t, "cold_start", 10) != 0)
            return scn__fail(v, err, SIM_EINPUT, "expected cold_start or a one-key mapping "
                             "(enter, leave, requests, background, repeat), got \"%.*s\"",
                             (int)(len > 40 ? 40 : len), t);
        st.kind = MDL_STEP_COLD_START;
        return push_step(b, v, st, err);
    }
    if ((rc = scn__expect_mapping(v, err)) != SIM_OK)
        return rc;
    if ((rc = scn__check_keys(v, kinds + 1, 5, err)) != SIM_OK)
        return rc;
    if (fy_node_mapping_item_count(v->n) != 1)
        return scn__fail(v, err, SIM_EINPUT, "a step is one key: enter, leave, requests, "
                         "background or repeat");
    scn__node x;
    scn__get(v, "enter", &x);
    if (x.n != NULL) {
        st.kind = MDL_STEP_ENTER;
        rc = page_index(&s->workload, &x, &st.index, err);
        return rc != SIM_OK ? rc : push_step(b, &x, st, err);
    }
    scn__get(v, "leave", &x);
    if (x.n != NULL) {
        st.kind = MDL_STEP_LEAVE;
        rc = page_index(&s->workload, &x, &st.index, err);
        return rc != SIM_OK ? rc : push_step(b, &x, st, err);
    }
    scn__get(v, "background", &x);
    if (x.n != NULL) {
        st.kind = MDL_STEP_BACKGROUND;
        rc = scn__duration(&x, &st.duration, err);
        return rc != SIM_OK ? rc : push_step(b, &x, st, err);
    }
    scn__get(v, "requests", &x);
    if (x.n != NULL) {
        int started = 0;
        for (uint32_t k = 0; k < b->n; k++)
            started |= b->v[k].kind == MDL_STEP_COLD_START;
        if (!started)
            return scn__fail(&x, err, SIM_EINPUT, "requests before the first cold_start: the "
                             "app is not running yet");
        st.kind = MDL_STEP_REQUESTS;
        rc = load_requests(s, &x, &st.index, err);
        return rc != SIM_OK ? rc : push_step(b, &x, st, err);
    }
    scn__get(v, "repeat", &x);
    static const char *const rkeys[] = {"times", "steps"};
    if ((rc = scn__expect_mapping(&x, err)) != SIM_OK ||
        (rc = scn__check_keys(&x, rkeys, 2, err)) != SIM_OK)
        return rc;
    if (depth >= 8)
        return scn__fail(&x, err, SIM_ELIMIT, "repeat nested deeper than 8");
    scn__node times, body;
    int64_t n;
    if ((rc = scn__require(&x, "times", &times, err)) != SIM_OK ||
        (rc = scn__int(&times, 1, MDL_STEPS_MAX, &n, err)) != SIM_OK ||
        (rc = scn__require(&x, "steps", &body, err)) != SIM_OK)
        return rc;
    uint32_t first = b->n;
    if ((rc = load_steps(s, &body, b, depth + 1, err)) != SIM_OK)
        return rc;
    uint32_t len = b->n - first;
    if ((uint64_t)len * (uint64_t)(n - 1) + b->n > MDL_STEPS_MAX)
        return scn__fail(&times, err, SIM_ELIMIT, "the path holds more than %u steps once "
                         "repeat is unrolled (%u steps x %lld)", MDL_STEPS_MAX, len,
                         (long long)n);
    for (int64_t r = 1; r < n; r++)
        for (uint32_t k = 0; k < len; k++)
            if ((rc = push_step(b, &times, b->v[first + k], err)) != SIM_OK)
                return rc;
    return SIM_OK;
}

static int load_steps(scn_scenario *s, const scn__node *list, steps_buf *b, int depth,
                      sim_error *err)
{
    int rc = scn__expect_sequence(list, err);
    if (rc != SIM_OK)
        return rc;
    if (fy_node_sequence_item_count(list->n) < 1)
        return scn__fail(list, err, SIM_EINPUT, "expected at least one step");
    void *it = NULL;
    struct fy_node *item;
    size_t i = 0;
    while (rc == SIM_OK && (item = fy_node_sequence_iterate(list->n, &it)) != NULL) {
        scn__node v;
        scn__item(list, i++, item, &v);
        rc = load_step(s, &v, b, depth, err);
    }
    return rc;
}

static int not_modelled(const scn__node *v, sim_error *err, const char *what)
{
    return scn__fail(v, err, SIM_EINPUT, "%s is not modelled by this version of oomsim; "
                     "remove the key", what);
}

static int load_workload(scn_scenario *s, const scn__node *root, sim_error *err)
{
    static const char *const keys[] = {"path", "timeout", "relaunch", "trace"};
    scn__node wl, v;
    int rc = scn__require(root, "workload", &wl, err);
    if (rc == SIM_OK)
        rc = scn__expect_mapping(&wl, err);
    if (rc == SIM_OK)
        rc = scn__check_keys(&wl, keys, sizeof keys / sizeof *keys, err);
    if (rc != SIM_OK)
        return rc;
    scn__get(&wl, "trace", &v);
    if (v.n != NULL)
        return not_modelled(&v, err, "a trace-driven workload");
    scn__get(&wl, "timeout", &v);
    if (v.n != NULL) {
        if ((rc = scn__duration(&v, &s->workload.timeout, err)) != SIM_OK)
            return rc;
        if (s->workload.timeout <= 0)
            return scn__fail(&v, err, SIM_EINPUT, "a timeout must be longer than 0");
    }
    scn__get(&wl, "relaunch", &v);
    if (v.n != NULL) {
        if ((rc = scn__owned_dist(&s->workload.owned, &v, SCN__UNIT_DURATION,
                                  &s->workload.relaunch, err)) != SIM_OK)
            return rc;
        s->workload.has_relaunch = 1;
    }
    steps_buf b = {NULL, 0, 0};
    if ((rc = scn__require(&wl, "path", &v, err)) == SIM_OK)
        rc = load_steps(s, &v, &b, 0, err);
    s->workload.steps = b.v;
    s->workload.nsteps = b.n;
    return rc;
}

/* ------------------------------------------------------------ policies */

typedef int (*apply_fn)(const scn_scenario *s, const scn__node *v, mdl_policy *p,
                        sim_error *err);

static int p_sessions(const scn_scenario *s, const scn__node *v, mdl_policy *p, sim_error *err)
{
    (void)s;
    int64_t n;
    if (fy_node_is_scalar(v->n)) {
        const char *t;
        size_t len;
        int rc = scn__scalar(v, &t, &len, err);
        if (rc != SIM_OK)
            return rc;
        int digits = len > 0;
        for (size_t i = 0; i < len; i++)
            digits &= t[i] >= '0' && t[i] <= '9';
        if (!digits)
            return scn__fail(v, err, SIM_EINPUT, "expected a positive integer, got \"%.*s\"",
                             (int)(len > 40 ? 40 : len), t);
    }
    int rc = scn__int(v, 1, MDL_SESSIONS_MAX, &n, err);
    if (rc == SIM_OK)
        p->sessions = (uint32_t)n;
    return rc;
}

static int p_queue(const scn_scenario *s, const scn__node *v, mdl_policy *p, sim_error *err)
{
    (void)s;
    const char *t;
    size_t len;
    int rc = scn__scalar(v, &t, &len, err);
    if (rc != SIM_OK)
        return rc;
    if (len == 9 && memcmp(t, "unbounded", 9) == 0) {
        p->queue = MDL_QUEUE_UNBOUNDED;
        return SIM_OK;
    }
    int64_t n;
    rc = scn__int(v, 0, MDL_QUEUE_MAX, &n, err);
    if (rc == SIM_OK)
        p->queue = (uint32_t)n;
    return rc;
}

static int p_residency(const scn_scenario *s, const scn__node *v, mdl_policy *p,
                       sim_error *err)
{
    (void)s;
    const char *t;
    size_t len;
    int rc = scn__scalar(v, &t, &len, err);
    if (rc != SIM_OK)
        return rc;
    static const char *const names[] = {"preload", "on_demand_overlap",
                                        "on_demand_release_first"};
    for (int k = 0; k < 3; k++)
        if (strlen(names[k]) == len && memcmp(names[k], t, len) == 0) {
            p->residency = (mdl_residency)k;
            return SIM_OK;
        }
    if (len > 4 && memcmp(t, "lru:", 4) == 0) {
        int64_t k = 0;
        size_t i = 4;
        for (; i < len && t[i] >= '0' && t[i] <= '9' && k <= MDL_PARTS_MAX; i++)
            k = k * 10 + (t[i] - '0');
        if (i == len && k >= 1 && k <= MDL_PARTS_MAX) {
            p->residency = MDL_RES_LRU;
            p->lru_k = (uint32_t)k;
            return SIM_OK;
        }
        return scn__fail(v, err, SIM_EINPUT, "lru:K needs K from 1 to %d, got \"%.*s\"",
                         MDL_PARTS_MAX, (int)(len > 40 ? 40 : len), t);
    }
    return scn__fail(v, err, SIM_EINPUT, "expected preload, on_demand_overlap, "
                     "on_demand_release_first or lru:K, got \"%.*s\"",
                     (int)(len > 40 ? 40 : len), t);
}

static int p_prewarm(const scn_scenario *s, const scn__node *v, mdl_policy *p, sim_error *err)
{
    return part_names(s, v, p->prewarm, &p->nprewarm, err);
}

static int p_bool(const scn__node *v, int *out, sim_error *err)
{
    static const char *const names[] = {"false", "true"};
    return scn__enum(v, names, 2, out, err);
}

static int p_copy_runtime(const scn_scenario *s, const scn__node *v, mdl_policy *p,
                          sim_error *err)
{
    (void)s;
    return p_bool(v, &p->copy_runtime, err);
}

static int p_cancel(const scn_scenario *s, const scn__node *v, mdl_policy *p, sim_error *err)
{
    (void)s;
    return p_bool(v, &p->cancel_on_timeout, err);
}

/* A real number in [min, max] (the backoff factor). */
static int p_real(const scn__node *v, double min, double max, double *out, sim_error *err)
{
    const char *t;
    size_t len;
    int rc = scn__scalar(v, &t, &len, err);
    if (rc != SIM_OK)
        return rc;
    char buf[64];
    char *end = NULL;
    if (len > 0 && len < sizeof buf) {
        memcpy(buf, t, len);
        buf[len] = '\0';
        *out = strtod(buf, &end);
    }
    if (len == 0 || len >= sizeof buf || end == NULL || *end != '\0' || !(*out == *out))
        return scn__fail(v, err, SIM_EINPUT, "expected a number, got \"%.*s\"",
                         (int)(len > 40 ? 40 : len), t);
    if (*out < min || *out > max)
        return scn__fail(v, err, SIM_ERANGE, "%.*s is outside [%g, %g]",
                         (int)(len > 40 ? 40 : len), t, min, max);
    return SIM_OK;
}

static int p_retry(const scn_scenario *s, const scn__node *v, mdl_policy *p, sim_error *err)
{
    (void)s;
    static const char *const kinds[] = {"none", "fixed", "backoff", "on_new_condition"};
    static const char *const keys_none[] = {"kind"};
    static const char *const keys_fixed[] = {"kind", "delay", "max"};
    static const char *const keys_backoff[] = {"kind", "base", "factor", "cap", "jitter", "max"};
    static const char *const keys_cond[] = {"kind", "max"};
    int rc = scn__expect_mapping(v, err);
    scn__node k, x;
    if (rc == SIM_OK)
        rc = scn__require(v, "kind", &k, err);
    int kind = 0;
    if (rc == SIM_OK)
        rc = scn__enum(&k, kinds, 4, &kind, err);
    if (rc != SIM_OK)
        return rc;
    mdl_retry *r = &p->retry;
    memset(r, 0, sizeof *r);
    r->kind = (mdl_retry_kind)kind;
    switch (r->kind) {
    case MDL_RETRY_NONE:
        return scn__check_keys(v, keys_none, 1, err);
    case MDL_RETRY_FIXED:
        if ((rc = scn__check_keys(v, keys_fixed, 3, err)) == SIM_OK &&
            (rc = scn__require(v, "delay", &x, err)) == SIM_OK)
            rc = scn__duration(&x, &r->delay, err);
        break;
    case MDL_RETRY_BACKOFF:
        if ((rc = scn__check_keys(v, keys_backoff, 6, err)) == SIM_OK &&
            (rc = scn__require(v, "base", &x, err)) == SIM_OK)
            rc = scn__duration(&x, &r->base, err);
        r->factor = 2.0;
        r->cap = SCN_DURATION_MAX;
        if (rc == SIM_OK) {
            scn__get(v, "factor", &x);
            if (x.n != NULL)
                rc = p_real(&x, 1.0, 1000.0, &r->factor, err);
        }
        if (rc == SIM_OK) {
            scn__get(v, "cap", &x);
            if (x.n != NULL)
                rc = scn__duration(&x, &r->cap, err);
        }
        if (rc == SIM_OK) {
            scn__get(v, "jitter", &x);
            if (x.n != NULL)
                rc = scn__probability(&x, &r->jitter, err);
        }
        break;
    case MDL_RETRY_ON_NEW_CONDITION:
        rc = scn__check_keys(v, keys_cond, 2, err);
        break;
    }
    if (rc != SIM_OK)
        return rc;
    int64_t n;
    if ((rc = scn__require(v, "max", &x, err)) == SIM_OK &&
        (rc = scn__int(&x, 1, MDL_RETRIES_MAX, &n, err)) == SIM_OK)
        r->max = (uint32_t)n;
    return rc;
}

static int p_on_warning(const scn_scenario *s, const scn__node *v, mdl_policy *p,
                        sim_error *err)
{
    (void)s;
    static const char *const names[] = {"reject_new", "release_idle", "clear_rebuildable_cache",
                                        "reduce_concurrency"};
    static const char *const later[] = {"stop_prewarm", "degrade_cpu", "fallback_lkg"};
    int rc = scn__expect_sequence(v, err);
    if (rc != SIM_OK)
        return rc;
    p->on_warning = 0;
    void *it = NULL;
    struct fy_node *item;
    size_t i = 0;
    while ((item = fy_node_sequence_iterate(v->n, &it)) != NULL) {
        scn__node a;
        scn__item(v, i++, item, &a);
        const char *t;
        size_t len;
        if ((rc = scn__scalar(&a, &t, &len, err)) != SIM_OK)
            return rc;
        for (size_t k = 0; k < sizeof later / sizeof *later; k++)
            if (strlen(later[k]) == len && memcmp(later[k], t, len) == 0)
                return not_modelled(&a, err, "this action on a memory warning");
        int bit = 0;
        if ((rc = scn__enum(&a, names, 4, &bit, err)) != SIM_OK)
            return rc;
        if (p->on_warning & (1u << bit))
            return scn__fail(&a, err, SIM_EINPUT, "%s is listed twice", names[bit]);
        p->on_warning |= 1u << bit;
    }
    return SIM_OK;
}

static int p_recovery(const scn_scenario *s, const scn__node *v, mdl_policy *p,
                      sim_error *err)
{
    (void)s;
    static const char *const kinds[] = {"naive", "safe_mode", "fallback_lkg"};
    int rc;
    p->nladder = 0;
    if (!fy_node_is_mapping(v->n)) {
        int k = 0;
        if ((rc = scn__enum(v, kinds, 3, &k, err)) != SIM_OK)
            return rc;
        p->recovery = (mdl_recovery)k;
        return SIM_OK;
    }
    static const char *const keys[] = {"ladder"};
    scn__node l;
    if ((rc = scn__check_keys(v, keys, 1, err)) != SIM_OK ||
        (rc = scn__require(v, "ladder", &l, err)) != SIM_OK ||
        (rc = scn__expect_sequence(&l, err)) != SIM_OK)
        return rc;
    if (fy_node_sequence_item_count(l.n) < 1)
        return scn__fail(&l, err, SIM_EINPUT, "expected at least one action");
    const char *names[MDL_ACT_COUNT];
    for (int a = 0; a < MDL_ACT_COUNT; a++)
        names[a] = mdl_action_name((mdl_action)a);
    void *it = NULL;
    struct fy_node *item;
    size_t i = 0;
    int last = -1;
    while ((item = fy_node_sequence_iterate(l.n, &it)) != NULL) {
        scn__node a;
        scn__item(&l, i++, item, &a);
        int k = 0;
        if ((rc = scn__enum(&a, names, MDL_ACT_COUNT, &k, err)) != SIM_OK)
            return rc;
        if (k <= last)
            return scn__fail(&a, err, SIM_EINPUT, "%s is out of order: a ladder lists actions "
                             "in order of reversibility (reject_new, stop_prewarm, "
                             "reduce_concurrency, release_idle, clear_rebuildable_cache, "
                             "degrade_cpu, fallback_lkg), each once", names[k]);
        last = k;
        p->ladder[p->nladder++] = (mdl_action)k;
    }
    p->recovery = MDL_RECOVERY_LADDER;
    return SIM_OK;
}

static int p_safe_mode_after(const scn_scenario *s, const scn__node *v, mdl_policy *p,
                             sim_error *err)
{
    (void)s;
    int64_t n;
    int rc = scn__int(v, 1, 1000, &n, err);
    if (rc == SIM_OK)
        p->safe_mode_after = (uint32_t)n;
    return rc;
}

static int p_stable_after(const scn_scenario *s, const scn__node *v, mdl_policy *p,
                          sim_error *err)
{
    (void)s;
    return scn__duration(v, &p->stable_after, err);
}

typedef struct policy_key {
    const char *name;
    int list_valued; /* prewarm, on_warning: an axis is a list of lists */
    apply_fn apply;
} policy_key;

static const policy_key policy_keys[] = {
    {"sessions", 0, p_sessions},       {"queue", 0, p_queue},
    {"copy_runtime", 0, p_copy_runtime}, {"cancel_on_timeout", 0, p_cancel},
    {"retry", 0, p_retry},             {"residency", 0, p_residency},
    {"prewarm", 1, p_prewarm},         {"on_warning", 1, p_on_warning},
    {"recovery", 0, p_recovery},       {"safe_mode_after", 0, p_safe_mode_after},
    {"stable_after", 0, p_stable_after},
};
#define NPOLICY_KEYS (sizeof policy_keys / sizeof *policy_keys)

/* ------------------------------------------------------ JSON rendering */

typedef struct sbuf {
    char *v;
    size_t n, cap;
    int oom;
} sbuf;

static void sb_put(sbuf *b, const char *s, size_t len)
{
    if (b->oom)
        return;
    if (b->n + len + 1 > b->cap) {
        size_t cap = b->cap == 0 ? 64 : b->cap;
        while (cap < b->n + len + 1)
            cap *= 2;
        char *v = realloc(b->v, cap);
        if (v == NULL) {
            b->oom = 1;
            return;
        }
        b->v = v;
        b->cap = cap;
    }
    memcpy(b->v + b->n, s, len);
    b->n += len;
    b->v[b->n] = '\0';
}

static void sb_str(sbuf *b, const char *s) { sb_put(b, s, strlen(s)); }

static int json_number(const char *t, size_t len)
{
    size_t i = 0;
    if (i < len && t[i] == '-')
        i++;
    size_t d = i;
    while (i < len && t[i] >= '0' && t[i] <= '9')
        i++;
    if (i == d || (t[d] == '0' && i - d > 1))
        return 0;
    if (i < len && t[i] == '.') {
        size_t f = ++i;
        while (i < len && t[i] >= '0' && t[i] <= '9')
            i++;
        if (i == f)
            return 0;
    }
    return i == len;
}

static void sb_json_string(sbuf *b, const char *t, size_t len)
{
    sb_str(b, "\"");
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)t[i];
        char esc[8];
        if (c == '"' || c == '\\') {
            esc[0] = '\\';
            esc[1] = (char)c;
            sb_put(b, esc, 2);
        } else if (c < 0x20) {
            snprintf(esc, sizeof esc, "\\u%04x", c);
            sb_str(b, esc);
        } else {
            sb_put(b, (const char *)&t[i], 1);
        }
    }
    sb_str(b, "\"");
}

/* A policy value as JSON: plain integers and booleans stay what they are,
 * every other scalar is a string. */
static void sb_json(sbuf *b, struct fy_node *n, int depth)
{
    if (depth > 16) {
        sb_str(b, "null");
        return;
    }
    if (fy_node_is_scalar(n)) {
        size_t len;
        const char *t = fy_node_get_scalar(n, &len);
        int plain = fy_node_get_style(n) == FYNS_PLAIN;
        if (t != NULL && plain && (json_number(t, len) || (len == 4 && !memcmp(t, "true", 4)) ||
                                   (len == 5 && !memcmp(t, "false", 5))))
            sb_put(b, t, len);
        else
            sb_json_string(b, t != NULL ? t : "", t != NULL ? len : 0);
        return;
    }
    void *it = NULL;
    if (fy_node_is_sequence(n)) {
        struct fy_node *x;
        sb_str(b, "[");
        for (int i = 0; (x = fy_node_sequence_iterate(n, &it)) != NULL; i++) {
            if (i)
                sb_str(b, ", ");
            sb_json(b, x, depth + 1);
        }
        sb_str(b, "]");
        return;
    }
    struct fy_node_pair *pr;
    sb_str(b, "{");
    for (int i = 0; (pr = fy_node_mapping_iterate(n, &it)) != NULL; i++) {
        if (i)
            sb_str(b, ", ");
        size_t len;
        const char *k = fy_node_get_scalar(fy_node_pair_key(pr), &len);
        sb_json_string(b, k != NULL ? k : "", k != NULL ? len : 0);
        sb_str(b, ": ");
        sb_json(b, fy_node_pair_value(pr), depth + 1);
    }
    sb_str(b, "}");
}

/* ---------------------------------------------------------------- grid */

typedef struct axis {
    const policy_key *key;
    scn__node values[AXIS_VALUES_MAX]; /* only the first n are used */
    unsigned n;
} axis;

static int is_axis(const policy_key *k, const scn__node *v)
{
    if (!fy_node_is_sequence(v->n))
        return 0;
    if (!k->list_valued)
        return 1;
    void *it = NULL;
    struct fy_node *x = fy_node_sequence_iterate(v->n, &it);
    return x != NULL && fy_node_is_sequence(x);
}

static int load_policies(scn_scenario *s, const scn__node *root, sim_error *err)
{
    mdl_policy base;
    memset(&base, 0, sizeof base);
    base.sessions = 1;
    base.queue = MDL_QUEUE_UNBOUNDED;
    base.residency = MDL_RES_PRELOAD;
    base.safe_mode_after = 1;
    base.stable_after = 60 * (sim_time)1000000;
    scn__node pol;
    scn__get(root, "policies", &pol);
    axis *axes = NULL;
    unsigned naxes = 0;
    int rc = SIM_OK;
    if (pol.n != NULL) {
        const char *names[NPOLICY_KEYS];
        for (unsigned k = 0; k < NPOLICY_KEYS; k++)
            names[k] = policy_keys[k].name;
        if ((rc = scn__expect_mapping(&pol, err)) != SIM_OK ||
            (rc = scn__check_keys(&pol, names, NPOLICY_KEYS, err)) != SIM_OK)
            return rc;
        axes = calloc(NPOLICY_KEYS, sizeof *axes);
        if (axes == NULL)
            return scn__fail(&pol, err, SIM_ENOMEM, "out of memory");
        /* keys in file order: the axes' order */
        void *it = NULL;
        struct fy_node_pair *pr;
        while (rc == SIM_OK && (pr = fy_node_mapping_iterate(pol.n, &it)) != NULL) {
            size_t len;
            const char *kname = fy_node_get_scalar(fy_node_pair_key(pr), &len);
            const policy_key *key = NULL;
            for (unsigned k = 0; k < NPOLICY_KEYS && kname != NULL; k++)
                if (strlen(policy_keys[k].name) == len && !memcmp(policy_keys[k].name, kname, len))
                    key = &policy_keys[k];
            if (key == NULL)
                continue;
            scn__node v;
            scn__get(&pol, key->name, &v);
            if (!is_axis(key, &v)) {
                rc = key->apply(s, &v, &base, err);
                continue;
            }
            axis *a = &axes[naxes++];
            a->key = key;
            void *jt = NULL;
            struct fy_node *x;
            while (rc == SIM_OK && (x = fy_node_sequence_iterate(v.n, &jt)) != NULL) {
                if (a->n == AXIS_VALUES_MAX) {
                    rc = scn__fail(&v, err, SIM_ELIMIT, "more than %u values on one axis",
                                   AXIS_VALUES_MAX);
                    break;
                }
                scn__item(&v, a->n, x, &a->values[a->n]);
                mdl_policy scratch = base;
                if (key->list_valued && !fy_node_is_sequence(x))
                    rc = scn__fail(&a->values[a->n], err, SIM_EINPUT, "expected a list: an "
                                   "axis of %s is a list of lists", key->name);
                else
                    rc = key->apply(s, &a->values[a->n], &scratch, err);
                a->n++;
            }
            if (rc == SIM_OK && a->n == 0)
                rc = scn__fail(&v, err, SIM_EINPUT, "an axis needs at least one value");
        }
    }
    uint64_t combos = 1;
    for (unsigned k = 0; k < naxes && rc == SIM_OK; k++) {
        combos *= axes[k].n;
        if (combos * s->ndevices * s->ncandidates > SCN_CELLS_MAX)
            rc = scn__fail(&pol, err, SIM_ELIMIT, "the grid holds more than %u cells",
                           SCN_CELLS_MAX);
    }
    if (rc == SIM_OK) {
        s->policies = calloc(combos, sizeof *s->policies);
        s->policy_json = calloc(combos, sizeof *s->policy_json);
        s->axes = calloc(naxes > 0 ? naxes : 1, sizeof *s->axes);
        if (s->policies == NULL || s->policy_json == NULL || s->axes == NULL)
            rc = sim_error_set(err, SIM_ENOMEM, "out of memory");
    }
    for (unsigned k = 0; k < naxes && rc == SIM_OK; k++)
        snprintf(s->axes[k], MDL_NAME_MAX, "%s", axes[k].key->name);
    s->naxes = rc == SIM_OK ? naxes : 0;
    /* the first axis varies slowest */
    for (uint64_t c = 0; c < combos && rc == SIM_OK; c++) {
        mdl_policy p = base;
        sbuf b = {NULL, 0, 0, 0};
        sb_str(&b, "{");
        uint64_t rest = c;
        unsigned pick[NPOLICY_KEYS];
        for (unsigned k = naxes; k-- > 0;) {
            pick[k] = (unsigned)(rest % axes[k].n);
            rest /= axes[k].n;
        }
        for (unsigned k = 0; k < naxes && rc == SIM_OK; k++) {
            const scn__node *v = &axes[k].values[pick[k]];
            rc = axes[k].key->apply(s, v, &p, err);
            if (k)
                sb_str(&b, ", ");
            sb_json_string(&b, axes[k].key->name, strlen(axes[k].key->name));
            sb_str(&b, ": ");
            sb_json(&b, v->n, 0);
        }
        sb_str(&b, "}");
        if (b.oom && rc == SIM_OK)
            rc = sim_error_set(err, SIM_ENOMEM, "out of memory");
        s->policies[c] = p;
        s->policy_json[c] = b.v;
        s->npolicies = (unsigned)c + 1;
    }
    free(axes);
    return rc;
}

/* ----------------------------------------------------------- top level */

/* Each candidate's last_known_good: another candidate of the scenario,
 * else the catalog's candidate of that name, else none (fallback_lkg
 * then acts as safe_mode, docs/model.md). */
static int resolve_lkg(scn_scenario *s, const scn__node *root, sim_error *err)
{
    for (unsigned k = 0; k < s->ncandidates; k++) {
        const char *id = s->candidates[k].last_known_good;
        s->lkg[k] = NULL;
        if (id[0] == '\0')
            continue;
        for (unsigned j = 0; j < s->ncandidates && s->lkg[k] == NULL; j++)
            if (j != k && strcmp(s->candidates[j].id, id) == 0)
                s->lkg[k] = &s->candidates[j];
        for (unsigned j = 0; j < s->nextras && s->lkg[k] == NULL; j++)
            if (strcmp(s->extras[j].id, id) == 0)
                s->lkg[k] = &s->extras[j];
        char path[MDL_NAME_MAX + 32];
        snprintf(path, sizeof path, "candidates/%s.yaml", id);
        const scn__catalog_file *f = s->lkg[k] == NULL ? catalog_find(path) : NULL;
        if (f == NULL)
            continue;
        if (s->extras == NULL &&
            (s->extras = calloc(SCN_PROFILES_MAX, sizeof *s->extras)) == NULL)
            return sim_error_set(err, SIM_ENOMEM, "out of memory");
        mdl_candidate *x = &s->extras[s->nextras];
        char name[MDL_NAME_MAX + 40];
        snprintf(name, sizeof name, "catalog/%s", path);
        int rc = scn_candidate_parse(f->text, f->len, name, x, err);
        if (rc != SIM_OK)
            return rc;
        s->nextras++;
        s->lkg[k] = x;
    }
    (void)root;
    return SIM_OK;
}

/* Refuses a scenario whose replications would need more engine events
 * than MDL_EVENTS_MAX (the largest cell's estimate, given). */
unsigned scn_largest_estimate(const scn_scenario *s, mdl_estimate *out)
{
    unsigned worst = 0;
    mdl_estimate e;
    *out = (mdl_estimate){0};
    for (unsigned i = 0; i < s->ncells; i++) {
        mdl_events_estimate(&s->cells[i], &e);
        if (i == 0 || e.total > out->total) {
            *out = e;
            worst = i;
        }
    }
    return worst;
}

static int check_events(const scn_scenario *s, const scn__node *root, sim_error *err)
{
    mdl_estimate most;
    unsigned worst = scn_largest_estimate(s, &most);
    if (most.total <= MDL_EVENTS_MAX)
        return SIM_OK;
    scn__node at;
    scn__get(root, "workload", &at);
    const mdl_cell *c = &s->cells[worst];
    return scn__fail(at.n != NULL ? &at : root, err, SIM_ELIMIT,
                     "a replication would need about %.3g events (cell %u, %s / %s: %.3g request "
                     "arrivals x %.3g events each, %.3g launches x %.3g, %.3g memory samples, "
                     "%.3g pressure spikes), more than the limit of %.0f per replication: "
                     "shorten the horizon or the request steps, or lower their rate",
                     most.total, worst, c->device->name, c->candidate->id, most.arrivals,
                     most.per_request, most.launches, most.per_launch, most.samples,
                     most.pressure, MDL_EVENTS_MAX);
}

static int load_top(loader *ld, const scn__node *root, sim_error *err)
{
    static const char *const keys[] = {"name",       "about",    "seed",     "replications",
                                       "horizon",    "devices",  "candidates", "workload",
                                       "policies"};
    scn_scenario *s = ld->s;
    scn__node v;
    int rc = scn__check_keys(root, keys, sizeof keys / sizeof *keys, err);
    if (rc == SIM_OK)
        rc = scn__require(root, "name", &v, err);
    if (rc == SIM_OK)
        rc = scn__name(&v, s->name, err);
    if (rc != SIM_OK)
        return rc;
    scn__get(root, "about", &v);
    const char *t = "";
    size_t len = 0;
    if (v.n != NULL && (rc = scn__scalar(&v, &t, &len, err)) != SIM_OK)
        return rc;
    if (len > ABOUT_MAX)
        return scn__fail(&v, err, SIM_ELIMIT, "about: %zu bytes exceed the limit of %d", len,
                         ABOUT_MAX);
    if ((s->about = malloc(len + 1)) == NULL)
        return sim_error_set(err, SIM_ENOMEM, "out of memory");
    memcpy(s->about, t, len);
    s->about[len] = '\0';
    int64_t n;
    s->seed = 1;
    scn__get(root, "seed", &v);
    if (v.n != NULL) {
        if ((rc = scn__int(&v, 0, INT64_MAX, &n, err)) != SIM_OK)
            return rc;
        s->seed = (uint64_t)n;
    }
    s->replications = 1000;
    scn__get(root, "replications", &v);
    if (v.n != NULL) {
        if ((rc = scn__int(&v, 1, SCN_REPLICATIONS_MAX, &n, err)) != SIM_OK)
            return rc;
        s->replications = (uint64_t)n;
    }
    if ((rc = scn__require(root, "horizon", &v, err)) != SIM_OK ||
        (rc = scn__duration(&v, &s->horizon, err)) != SIM_OK)
        return rc;
    if (s->horizon < 1)
        return scn__fail(&v, err, SIM_EINPUT, "expected a positive horizon");
    s->devices = calloc(SCN_PROFILES_MAX, sizeof *s->devices);
    s->candidates = calloc(SCN_PROFILES_MAX, sizeof *s->candidates);
    if (s->devices == NULL || s->candidates == NULL)
        return sim_error_set(err, SIM_ENOMEM, "out of memory");
    if ((rc = scn__require(root, "devices", &v, err)) != SIM_OK ||
        (rc = entries(ld, &v, "devices", add_device, err)) != SIM_OK)
        return rc;
    if ((rc = scn__require(root, "candidates", &v, err)) != SIM_OK ||
        (rc = entries(ld, &v, "candidates", add_candidate, err)) != SIM_OK)
        return rc;
    if ((rc = load_workload(s, root, err)) != SIM_OK)
        return rc;
    if ((rc = load_policies(s, root, err)) != SIM_OK)
        return rc;
    if ((uint64_t)s->ndevices * s->ncandidates * s->npolicies > SCN_CELLS_MAX)
        return scn__fail(root, err, SIM_ELIMIT, "the grid holds more than %u cells",
                         SCN_CELLS_MAX);
    if ((rc = resolve_lkg(s, root, err)) != SIM_OK)
        return rc;
    s->ncells = s->ndevices * s->ncandidates * s->npolicies;
    if ((s->cells = calloc(s->ncells, sizeof *s->cells)) == NULL)
        return sim_error_set(err, SIM_ENOMEM, "out of memory");
    unsigned c = 0;
    for (unsigned d = 0; d < s->ndevices; d++)
        for (unsigned k = 0; k < s->ncandidates; k++)
            for (unsigned p = 0; p < s->npolicies; p++, c++) {
                mdl_cell *cell = &s->cells[c];
                cell->device = &s->devices[d];
                cell->candidate = &s->candidates[k];
                cell->workload = &s->workload;
                cell->policy = s->policies[p];
                cell->horizon = s->horizon;
                cell->seed = s->seed;
                cell->lkg = s->lkg[k];
                if ((rc = mdl_cell_check(cell, err)) != SIM_OK) {
                    char msg[SIM_ERROR_MSG_MAX];
                    snprintf(msg, sizeof msg, "%s", err->msg);
                    return scn__fail(root, err, rc, "%s", msg);
                }
            }
    return check_events(s, root, err);
}

static int load_source(const source *src, scn_scenario *s, sim_error *err)
{
    memset(s, 0, sizeof *s);
    loader ld;
    memset(&ld, 0, sizeof ld);
    ld.s = s;
    scn__doc doc;
    int rc = open_source(s, src, &doc, err);
    if (rc != SIM_OK)
        return rc;
    ld.stack[ld.depth++] = *src;
    scn__node root;
    rc = scn__doc_root(&doc, &root, err);
    if (rc == SIM_OK)
        rc = load_top(&ld, &root, err);
    scn__doc_free(&doc);
    if (rc != SIM_OK)
        scn_scenario_release(s);
    return rc;
}

int scn_scenario_load(const char *path, scn_scenario *s, sim_error *err)
{
    source src;
    memset(&src, 0, sizeof src);
    char real[PATH_MAX];
    if (strlen(path) >= sizeof src.name) {
        memset(s, 0, sizeof *s);
        return sim_error_set(err, SIM_ELIMIT, "scenario path too long");
    }
    snprintf(src.name, sizeof src.name, "%s", path);
    snprintf(src.id, sizeof src.id, "disk:%s", realpath(path, real) != NULL ? real : path);
    return load_source(&src, s, err);
}

int scn_scenario_load_catalog(const char *path, scn_scenario *s, sim_error *err)
{
    source src;
    memset(&src, 0, sizeof src);
    if (catalog_find(path) == NULL) {
        memset(s, 0, sizeof *s);
        return sim_error_set(err, SIM_ENOTFOUND, "no catalog entry %.200s", path);
    }
    snprintf(src.name, sizeof src.name, "catalog/%s", path);
    snprintf(src.id, sizeof src.id, "catalog:%s", path);
    src.embedded = 1;
    return load_source(&src, s, err);
}

/* From memory: includes resolve as for a file of that name (the tests and
 * the fuzz target use it). */
int scn_scenario_parse(const char *text, size_t len, const char *file, scn_scenario *s,
                       sim_error *err)
{
    memset(s, 0, sizeof *s);
    loader ld;
    memset(&ld, 0, sizeof ld);
    ld.s = s;
    snprintf(ld.stack[0].name, sizeof ld.stack[0].name, "%s", file);
    snprintf(ld.stack[0].id, sizeof ld.stack[0].id, "memory:%s", file);
    ld.depth = 1;
    scn__doc doc;
    int rc = scn__doc_parse(&doc, text, len, file, err);
    if (rc != SIM_OK)
        return rc;
    digest_add(s, &doc);
    scn__node root;
    rc = scn__doc_root(&doc, &root, err);
    if (rc == SIM_OK)
        rc = load_top(&ld, &root, err);
    scn__doc_free(&doc);
    if (rc != SIM_OK)
        scn_scenario_release(s);
    return rc;
}

void scn_scenario_release(scn_scenario *s)
{
    free(s->about);
    for (unsigned k = 0; s->devices != NULL && k < SCN_PROFILES_MAX; k++)
        scn_device_release(&s->devices[k]);
    for (unsigned k = 0; s->candidates != NULL && k < SCN_PROFILES_MAX; k++)
        scn_candidate_release(&s->candidates[k]);
    for (unsigned k = 0; k < s->nextras; k++)
        scn_candidate_release(&s->extras[k]);
    free(s->extras);
    free(s->devices);
    free(s->candidates);
    free(s->workload.steps);
    free(s->workload.requests);
    free(s->workload.pages);
    scn__owned_free(&s->workload.owned);
    for (unsigned k = 0; s->policy_json != NULL && k < s->npolicies; k++)
        free(s->policy_json[k]);
    free(s->policy_json);
    free(s->policies);
    free(s->axes);
    free(s->cells);
    memset(s, 0, sizeof *s);
}
