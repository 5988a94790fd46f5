/* workload.c - the scenario's workload: the user path (cold start, pages,
 * requests steps, the background, `repeat` blocks unrolled), each requests
 * step's arrivals, needs and payload, the relaunch delay and the client's
 * timeout (docs/scenario-loader.md). */
#include "scenario_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
int scn__part_names(const scn_scenario *s, const scn__node *v, char (*out)[MDL_NAME_MAX],
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
    static const char *const keys[] = {"rate", "every", "after_answer", "for", "count",
                                       "needs", "payload", "owner"};
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
    rq->holder = MDL_NO_HOLDER;
    scn__node rate, every, after, dur, count, x;
    scn__get(v, "rate", &rate);
    scn__get(v, "every", &every);
    scn__get(v, "after_answer", &after);
    scn__get(v, "for", &dur);
    scn__get(v, "count", &count);
    if ((rate.n != NULL) + (every.n != NULL) + (after.n != NULL) != 1)
        return scn__fail(v, err, SIM_EINPUT, "give exactly one of rate (Poisson arrivals), "
                         "every (a fixed interval) and after_answer (each request a think time "
                         "after the previous one's answer)");
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
    } else if (after.n != NULL) {
        if ((rc = scn__owned_dist(&wl->owned, &after, SCN__UNIT_DURATION, &rq->think, err)) !=
            SIM_OK)
            return rc;
        rq->closed = 1;
        rq->mean_gap_us = mdl_dist_mean(&rq->think);
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
        if (!rq->poisson && !rq->closed) {
            if ((double)rq->every * (double)n > (double)SCN_DURATION_MAX)
                return scn__fail(&count, err, SIM_ELIMIT, "count x every exceeds 30 days");
            rq->duration = rq->every * (sim_time)n;
        }
    }
    scn__get(v, "needs", &x);
    if (x.n != NULL && (rc = scn__part_names(s, &x, rq->needs, &rq->nneeds, err)) != SIM_OK)
        return rc;
    if (x.n != NULL && rq->nneeds == 0)
        return scn__fail(&x, err, SIM_EINPUT, "expected at least one part");
    scn__get(v, "payload", &x);
    if (x.n != NULL && (rc = scn__amounts(&wl->owned, &x, &rq->payload, err)) != SIM_OK)
        return rc;
    scn__get(v, "owner", &x);
    if (x.n != NULL && (rc = scn__holder_of(s, &x, &rq->holder, err)) != SIM_OK)
        return rc;
    *index = wl->nrequests++;
    return SIM_OK;
}

static int page_index(mdl_workload *wl, const scn__node *v, uint32_t *out, sim_error *err)
{
    /* a page marker: [a-z0-9_-]+ (docs/scenarios.md writes ocr_page) */
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

/* `enter: NAME`, or `enter: {page: NAME, holds: {gpu: 48MiB, ...}}`: what
 * the page holds from its enter to its leave. */
static int load_enter(mdl_workload *wl, const scn__node *x, mdl_step *st, sim_error *err)
{
    if (fy_node_is_scalar(x->n))
        return page_index(wl, x, &st->index, err);
    static const char *const keys[] = {"page", "holds"};
    scn__node page, holds;
    int rc = scn__expect_mapping(x, err);
    if (rc == SIM_OK)
        rc = scn__check_keys(x, keys, 2, err);
    if (rc == SIM_OK)
        rc = scn__require(x, "page", &page, err);
    if (rc == SIM_OK)
        rc = page_index(wl, &page, &st->index, err);
    if (rc != SIM_OK)
        return rc;
    scn__get(x, "holds", &holds);
    if (holds.n == NULL)
        return SIM_OK;
    if (wl->nholds == MDL_HOLDS_MAX)
        return scn__fail(&holds, err, SIM_ELIMIT, "more than %u page holds", MDL_HOLDS_MAX);
    mdl_amounts *h = realloc(wl->holds, sizeof *h * (wl->nholds + 1));
    if (h == NULL)
        return scn__fail(&holds, err, SIM_ENOMEM, "out of memory");
    wl->holds = h;
    if ((rc = scn__amounts(&wl->owned, &holds, &h[wl->nholds], err)) != SIM_OK)
        return rc;
    st->hold = wl->nholds++;
    return SIM_OK;
}

/* The one step written as a scalar: cold_start. */
static int load_cold_start(const scn__node *v, steps_buf *b, sim_error *err)
{
    mdl_step st;
    memset(&st, 0, sizeof st);
    const char *t;
    size_t len;
    int rc;
    if ((rc = scn__scalar(v, &t, &len, err)) != SIM_OK)
        return rc;
    if (len != 10 || memcmp(t, "cold_start", 10) != 0)
        return scn__fail(v, err, SIM_EINPUT, "expected cold_start or a one-key mapping "
                         "(enter, leave, requests, background, update, repeat), got \"%.*s\"",
                         (int)(len > 40 ? 40 : len), t);
    st.kind = MDL_STEP_COLD_START;
    return push_step(b, v, st, err);
}

/* `update: os` or `update: runtime`. */
static int load_update(const scn__node *v, mdl_step *st, sim_error *err)
{
    const char *t;
    size_t len;
    int rc = scn__scalar(v, &t, &len, err);
    if (rc != SIM_OK)
        return rc;
    if (len == 2 && memcmp(t, "os", 2) == 0)
        st->index = MDL_UPDATE_OS;
    else if (len == 7 && memcmp(t, "runtime", 7) == 0)
        st->index = MDL_UPDATE_RUNTIME;
    else
        return scn__fail(v, err, SIM_EINPUT, "expected os or runtime, got \"%.*s\"",
                         (int)(len > 40 ? 40 : len), t);
    return SIM_OK;
}

/* `repeat: {times, steps}`: the steps, unrolled times times. */
static int load_repeat(scn_scenario *s, const scn__node *at, steps_buf *b, int depth,
                       sim_error *err)
{
    int rc;
    scn__node x = *at;
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

static int load_step(scn_scenario *s, const scn__node *v, steps_buf *b, int depth,
                     sim_error *err)
{
    static const char *const kinds[] = {"cold_start", "enter", "leave", "requests",
                                        "background", "update", "repeat"};
    mdl_step st;
    memset(&st, 0, sizeof st);
    int rc;
    if (fy_node_is_scalar(v->n))
        return load_cold_start(v, b, err);
    if ((rc = scn__expect_mapping(v, err)) != SIM_OK)
        return rc;
    if ((rc = scn__check_keys(v, kinds + 1, 6, err)) != SIM_OK)
        return rc;
    if (fy_node_mapping_item_count(v->n) != 1)
        return scn__fail(v, err, SIM_EINPUT, "a step is one key: enter, leave, requests, "
                         "background, update or repeat");
    scn__node x;
    st.hold = MDL_NO_HOLD;
    scn__get(v, "enter", &x);
    if (x.n != NULL) {
        st.kind = MDL_STEP_ENTER;
        rc = load_enter(&s->workload, &x, &st, err);
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
    scn__get(v, "update", &x);
    if (x.n != NULL) {
        st.kind = MDL_STEP_UPDATE;
        rc = load_update(&x, &st, err);
        return rc != SIM_OK ? rc : push_step(b, &x, st, err);
    }
    scn__get(v, "requests", &x);
    if (x.n != NULL) {
        int state = 0; /* 0: never started, 1: started, 2: stopped by an update since */
        for (uint32_t k = 0; k < b->n; k++)
            state = b->v[k].kind == MDL_STEP_COLD_START ? 1
                    : b->v[k].kind == MDL_STEP_UPDATE && state ? 2 : state;
        if (state == 0)
            return scn__fail(&x, err, SIM_EINPUT, "requests before the first cold_start: the "
                             "app is not running yet");
        if (state == 2)
            return scn__fail(&x, err, SIM_EINPUT, "requests after an update with no cold_start "
                             "since: the update stopped the app");
        st.kind = MDL_STEP_REQUESTS;
        rc = load_requests(s, &x, &st.index, err);
        return rc != SIM_OK ? rc : push_step(b, &x, st, err);
    }
    scn__get(v, "repeat", &x);
    return load_repeat(s, &x, b, depth, err);
}

/* The scenario, the steps so far and the repeat depth of a list of steps. */
typedef struct steps_ctx {
    scn_scenario *s;
    steps_buf *b;
    int depth;
} steps_ctx;

static int step_of(void *ctx, const scn__node *v, sim_error *err)
{
    const steps_ctx *c = ctx;
    return load_step(c->s, v, c->b, c->depth, err);
}

static int load_steps(scn_scenario *s, const scn__node *list, steps_buf *b, int depth,
                      sim_error *err)
{
    steps_ctx c = {s, b, depth};
    return scn__each(list, "step", step_of, &c, err);
}

int scn__not_modelled(const scn__node *v, sim_error *err, const char *what)
{
    return scn__fail(v, err, SIM_EINPUT, "%s is not modelled by this version of oomsim; "
                     "remove the key", what);
}

/* `app.processes.NAME.baseline`: the service process's own memory. */
static int load_proc_app(scn_scenario *s, const scn__node *app, sim_error *err)
{
    static const char *const keys[] = {"baseline"};
    scn__node m, v, base;
    scn__get(app, "processes", &m);
    if (m.n == NULL)
        return SIM_OK;
    int rc = scn__expect_mapping(&m, err);
    if (rc != SIM_OK)
        return rc;
    mdl_process *p = &s->workload.proc;
    void *it = NULL;
    struct fy_node_pair *pair;
    for (uint32_t n = 0; (pair = fy_node_mapping_iterate(m.n, &it)) != NULL; n++) {
        char name[MDL_NAME_MAX];
        if ((rc = scn__map_name(&m, pair, n, name, err)) != SIM_OK)
            return rc;
        scn__get(&m, name, &v);
        if (!s->workload.has_proc || strcmp(name, p->name) != 0)
            return scn__fail(&v, err, SIM_EINPUT, "no process named '%s'%s", name,
                             s->workload.has_proc ? "" : " (the scenario has no `processes`)");
    }
    scn__get(&m, p->name, &v);
    if ((rc = scn__expect_mapping(&v, err)) == SIM_OK &&
        (rc = scn__check_keys(&v, keys, 1, err)) == SIM_OK &&
        (rc = scn__require(&v, "baseline", &base, err)) == SIM_OK)
        rc = scn__amounts(&s->workload.owned, &base, &p->baseline, err);
    if (rc == SIM_OK && p->baseline.mask == 0)
        rc = scn__fail(&base, err, SIM_EINPUT, "expected at least one of java, native, gpu, "
                       "file");
    p->has_baseline = rc == SIM_OK;
    return rc;
}

/* `app.package`: a name Android's package parser accepts (frameworks/base
 * ParsingPackageUtils.validateName with a separator required: letters
 * anywhere, digits and '_' after a segment's first character, at least one
 * '.'), of at most 40 characters so that PACKAGE:NAME fits a record.
 * `app.executable` (iOS): a token of at most 40 characters. */
static int app_name(const scn__node *v, int package, char out[MDL_PACKAGE_MAX], sim_error *err)
{
    const char *s;
    size_t len;
    int rc = scn__scalar(v, &s, &len, err);
    int ok = len > 0 && len < MDL_PACKAGE_MAX, sep = 0, front = 1;
    for (size_t i = 0; rc == SIM_OK && ok && i < len; i++) {
        char c = s[i];
        int letter = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
        int tail = (c >= '0' && c <= '9') || c == '_' || (!package && (c == '.' || c == '-'));
        if (package && c == '.')
            sep = front = 1;
        else if (letter)
            front = 0;
        else
            ok = tail && (!package || !front);
    }
    if (rc != SIM_OK)
        return rc;
    if (!ok || (package && !sep))
        return scn__fail(v, err, SIM_EINPUT, "expected %s of 1 to %d characters, got \"%.*s\"",
                         package ? "an Android package name (letters, digits, '_' and '.', "
                                   "at least one '.', no digit or '_' first or after a '.')"
                                 : "a name from [A-Za-z0-9._-]",
                         MDL_PACKAGE_MAX - 1, (int)(len > 40 ? 40 : len), s);
    memcpy(out, s, len);
    out[len] = '\0';
    return SIM_OK;
}

int scn__load_app(scn_scenario *s, const scn__node *root, sim_error *err)
{
    static const char *const keys[] = {"baseline", "processes", "version", "package",
                                       "executable"};
    scn__node app, base, procs, version, package, executable;
    /* a scenario that names no version: "1"; no package: com.example.app;
     * no executable: ExampleApp (assumptions: the records of every run
     * then name the same) */
    snprintf(s->workload.version, sizeof s->workload.version, "1");
    snprintf(s->workload.package, sizeof s->workload.package, "com.example.app");
    snprintf(s->workload.executable, sizeof s->workload.executable, "ExampleApp");
    scn__get(root, "app", &app);
    if (app.n == NULL)
        return SIM_OK;
    int rc = scn__expect_mapping(&app, err);
    if (rc == SIM_OK)
        rc = scn__check_keys(&app, keys, 5, err);
    scn__get(&app, "version", &version);
    if (rc == SIM_OK && version.n != NULL)
        rc = scn__token(&version, 0, s->workload.version, err);
    scn__get(&app, "package", &package);
    if (rc == SIM_OK && package.n != NULL)
        rc = app_name(&package, 1, s->workload.package, err);
    scn__get(&app, "executable", &executable);
    if (rc == SIM_OK && executable.n != NULL)
        rc = app_name(&executable, 0, s->workload.executable, err);
    scn__get(&app, "processes", &procs);
    if (rc == SIM_OK && procs.n != NULL)
        rc = load_proc_app(s, &app, err);
    scn__get(&app, "baseline", &base);
    if (rc != SIM_OK || (base.n == NULL && (procs.n != NULL || version.n != NULL ||
                                            package.n != NULL || executable.n != NULL)))
        return rc;
    if (rc == SIM_OK)
        rc = scn__require(&app, "baseline", &base, err);
    if (rc == SIM_OK)
        rc = scn__amounts(&s->workload.owned, &base, &s->workload.app, err);
    if (rc == SIM_OK && s->workload.app.mask == 0)
        rc = scn__fail(&base, err, SIM_EINPUT, "expected at least one of java, native, gpu, "
                       "file");
    s->workload.has_app = rc == SIM_OK;
    return rc;
}

/* `paths: {NAME: [steps], ...}`: each its own steps; the requests, pages
 * and holds their steps name go into the shared arrays. */
static int load_paths(scn_scenario *s, const scn__node *wl, sim_error *err)
{
    scn__node m;
    int count;
    int rc = scn__named_map(wl, "paths", "path", SCN_PATHS_MAX, &m, &count, err);
    if (rc != SIM_OK)
        return rc;
    s->paths = calloc((size_t)count, sizeof *s->paths);
    s->path_names = calloc((size_t)count, sizeof *s->path_names);
    if (s->paths == NULL || s->path_names == NULL)
        return sim_error_set(err, SIM_ENOMEM, "out of memory");
    void *it = NULL;
    struct fy_node_pair *pair;
    while ((pair = fy_node_mapping_iterate(m.n, &it)) != NULL) {
        unsigned k = s->npaths;
        if ((rc = scn__map_name(&m, pair, k, s->path_names[k], err)) != SIM_OK)
            return rc;
        scn__node v;
        scn__get(&m, s->path_names[k], &v);
        steps_buf b = {NULL, 0, 0};
        rc = load_steps(s, &v, &b, 0, err);
        s->paths[k].steps = b.v;
        s->paths[k].nsteps = b.n;
        s->npaths++;
        if (rc != SIM_OK)
            return rc;
    }
    return SIM_OK;
}

void scn__paths_finish(scn_scenario *s)
{
    for (unsigned k = 0; k < s->npaths; k++) {
        mdl_step *steps = s->paths[k].steps;
        uint32_t n = s->paths[k].nsteps;
        s->paths[k] = s->workload; /* what the paths share, as loaded in full */
        s->paths[k].steps = steps;
        s->paths[k].nsteps = n;
    }
}

int scn__load_workload(scn_scenario *s, const scn__node *root, sim_error *err)
{
    static const char *const keys[] = {"path", "paths", "timeout", "relaunch", "trace"};
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
        return scn__not_modelled(&v, err, "a trace-driven workload");
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
    scn__node one;
    scn__get(&wl, "path", &one);
    scn__get(&wl, "paths", &v);
    if (one.n != NULL && v.n != NULL)
        return scn__fail(&v, err, SIM_EINPUT, "one of path or paths, not both");
    if (v.n != NULL)
        return load_paths(s, &wl, err);
    steps_buf b = {NULL, 0, 0};
    if ((rc = scn__require(&wl, "path", &v, err)) == SIM_OK)
        rc = load_steps(s, &v, &b, 0, err);
    s->workload.steps = b.v;
    s->workload.nsteps = b.n;
    return rc;
}

int scn__holder_of(const scn_scenario *s, const scn__node *v, uint32_t *out, sim_error *err)
{
    char name[MDL_NAME_MAX];
    int rc = scn__name(v, name, err);
    if (rc != SIM_OK)
        return rc;
    for (uint32_t k = 0; k < s->workload.nholders; k++)
        if (strcmp(s->workload.holders[k].name, name) == 0) {
            *out = k;
            return SIM_OK;
        }
    return scn__fail(v, err, SIM_EINPUT, "no owner named '%s'%s", name,
                     s->workload.nholders == 0 ? " (the scenario has no `owners`)" : "");
}
