/* scenario.c - scenario files, top level: YAML to scn_scenario (name,
 * seed, replications, horizon; docs/scenario-loader.md), the last known
 * good of each candidate, the cells of the grid (devices x candidates x
 * policies, in file order) and the refusal of a scenario too large to run.
 * The parts: include.c (device and candidate entries), workload.c,
 * policies.c (policies and grid axes). */
#define _XOPEN_SOURCE 700 /* realpath */
#include "scenario_int.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ABOUT_MAX 2000

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
        const scn__catalog_file *f = s->lkg[k] == NULL ? scn__catalog_find(path) : NULL;
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

double scn_events_total(const scn_scenario *s)
{
    double total = 0;
    mdl_estimate e;
    for (unsigned i = 0; i < s->ncells; i++) {
        mdl_events_estimate(&s->cells[i], &e);
        total += (e.total - e.pages) * (double)s->replications;
    }
    return total;
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

/* The one key of mapping v, among names (its index in *which, its value
 * in *x). */
static int one_key(const scn__node *v, const char *const *names, size_t n, int *which,
                   scn__node *x, sim_error *err)
{
    int rc = scn__expect_mapping(v, err);
    if (rc == SIM_OK)
        rc = scn__check_keys(v, names, n, err);
    if (rc != SIM_OK)
        return rc;
    if (fy_node_mapping_item_count(v->n) != 1)
        return scn__fail(v, err, SIM_EINPUT, "expected one quantile and its bound, such as "
                         "{%s: ...}", names[n - 1]);
    for (size_t k = 0; k < n; k++) {
        scn__get(v, names[k], x);
        if (x->n != NULL) {
            *which = (int)k;
            return SIM_OK;
        }
    }
    return scn__fail(v, err, SIM_EINPUT, "expected one of its quantiles");
}

/* The LLM criteria of a target: ttft: {p50 | p95: DURATION}, tokens_per_s:
 * {p50 | p5: N}, overflow: SHARE; each needs a candidate that generates. */
static int llm_target(const scn_scenario *s, const scn__node *t, mdl_target *g, sim_error *err)
{
    static const char *const tq[] = {"p50", "p95"}, *const rq[] = {"p50", "p5"};
    scn__node v, x;
    int rc = SIM_OK, any = 0;
    scn__get(t, "ttft", &v);
    if (v.n != NULL) {
        rc = one_key(&v, tq, 2, &g->ttft_q, &x, err);
        if (rc == SIM_OK)
            rc = scn__duration(&x, &g->ttft, err);
        if (rc == SIM_OK && g->ttft <= 0)
            rc = scn__fail(&x, err, SIM_EINPUT, "a time-to-first-token target must be above 0");
        any = 1;
    }
    scn__get(t, "tokens_per_s", &v);
    if (rc == SIM_OK && v.n != NULL) {
        rc = one_key(&v, rq, 2, &g->tps_q, &x, err);
        if (rc == SIM_OK)
            rc = scn__real(&x, 1e-6, 1e9, &g->tokens_per_s, err);
        any = 1;
    }
    scn__get(t, "overflow", &v);
    if (rc == SIM_OK && v.n != NULL) {
        rc = scn__probability(&v, &g->overflow, err);
        g->has_overflow = 1;
        any = 1;
    }
    for (unsigned c = 0; rc == SIM_OK && any && c < s->ncandidates; c++)
        for (unsigned k = 0; k < s->candidates[c].nparts; k++)
            if (s->candidates[c].parts[k].has_generation)
                return SIM_OK;
    return rc != SIM_OK || !any ? rc : scn__fail(t, err, SIM_EINPUT, "ttft, tokens_per_s and "
                                                 "overflow need a candidate with a generation "
                                                 "part: no request of the plan has tokens");
}

/* target: {deaths: 0.1%, latency_p95: 2s, ...}, at least one criterion. */
static int load_target(scn_scenario *s, const scn__node *root, sim_error *err)
{
    static const char *const keys[] = {"deaths",   "latency_p95",  "completed",
                                       "ttft",     "tokens_per_s", "overflow"};
    scn__node t, v;
    scn__get(root, "target", &t);
    if (t.n == NULL)
        return SIM_OK;
    int rc = scn__expect_mapping(&t, err);
    if (rc == SIM_OK)
        rc = scn__check_keys(&t, keys, 6, err);
    mdl_target *g = &s->target;
    if (rc == SIM_OK)
        rc = llm_target(s, &t, g, err);
    if (rc != SIM_OK)
        return rc;
    scn__get(&t, "completed", &v);
    if (v.n != NULL) {
        if ((rc = scn__probability(&v, &g->completed, err)) != SIM_OK)
            return rc;
        if (!(g->completed > 0))
            return scn__fail(&v, err, SIM_EINPUT, "a completed-share target must be above 0");
        g->has_completed = 1;
    }
    scn__get(&t, "deaths", &v);
    if (v.n != NULL) {
        if ((rc = scn__probability(&v, &g->deaths, err)) != SIM_OK)
            return rc;
        if (!(g->deaths > 0))
            return scn__fail(&v, err, SIM_EINPUT, "a death-rate target must be above 0: no "
                             "number of replications can bound a rate to exactly 0");
        g->has_deaths = 1;
    }
    scn__get(&t, "latency_p95", &v);
    if (v.n != NULL) {
        if ((rc = scn__duration(&v, &g->latency_p95, err)) != SIM_OK)
            return rc;
        if (g->latency_p95 <= 0)
            return scn__fail(&v, err, SIM_EINPUT, "a latency target must be longer than 0");
    }
    if (!g->has_deaths && g->latency_p95 == 0 && !g->has_completed && g->ttft == 0 &&
        g->tokens_per_s == 0 && !g->has_overflow)
        return scn__fail(&t, err, SIM_EINPUT, "a target needs deaths, latency_p95, completed, "
                         "ttft, tokens_per_s or overflow, or several of them");
    g->set = 1;
    return SIM_OK;
}

/* field: {sessions_per_day: N, devices: [{device: NAME | ram: SIZE,
 * lmk_rate | memory_exit_rate: SHARE, background_rate: SHARE, users: N,
 * sessions_per_day: N, source: TEXT}, ...]} (docs/field.md). */
typedef struct field_ctx {
    scn_scenario *s;
    double sessions;   /* the block's sessions_per_day, 0: none */
} field_ctx;

static int field_entry(void *ctx, const scn__node *e, sim_error *err)
{
    static const char *const keys[] = {"device", "ram", "lmk_rate", "memory_exit_rate",
                                       "background_rate", "users", "sessions_per_day",
                                       "source"};
    field_ctx *fc = ctx;
    scn_scenario *s = fc->s;
    int rc = scn__expect_mapping(e, err);
    if (rc == SIM_OK)
        rc = scn__check_keys(e, keys, sizeof keys / sizeof *keys, err);
    if (rc != SIM_OK)
        return rc;
    if (s->nfield == MDL_FIELD_MAX)
        return scn__fail(e, err, SIM_ELIMIT, "more than %d field entries", MDL_FIELD_MAX);
    mdl_field *f = &s->field[s->nfield];
    memset(f, 0, sizeof *f);
    scn__node dev, ram, lmk, mem, v;
    scn__get(e, "device", &dev);
    scn__get(e, "ram", &ram);
    if ((dev.n == NULL) == (ram.n == NULL))
        return scn__fail(e, err, SIM_EINPUT, "a field entry names a device or a ram bucket, "
                         "one of the two");
    if (dev.n != NULL && (rc = scn__name(&dev, f->device, err)) != SIM_OK)
        return rc;
    if (ram.n != NULL) {
        if ((rc = scn__size(&ram, &f->ram, err)) != SIM_OK)
            return rc;
        if (f->ram <= 0)
            return scn__fail(&ram, err, SIM_EINPUT, "a RAM bucket must be larger than 0");
    }
    /* an entry for a device the plan does not run is kept (an imported
     * block lists every bucket the fleet reports): the run compares the
     * cells it has, and `oomsim validate` names the rest */
    scn__get(e, "lmk_rate", &lmk);
    scn__get(e, "memory_exit_rate", &mem);
    if ((lmk.n == NULL) == (mem.n == NULL))
        return scn__fail(e, err, SIM_EINPUT, "a field entry gives lmk_rate (Android) or "
                         "memory_exit_rate (iOS), one of the two");
    f->metric = lmk.n != NULL ? MDL_FIELD_LMK_RATE : MDL_FIELD_MEMORY_EXIT_RATE;
    if ((rc = scn__probability(lmk.n != NULL ? &lmk : &mem, &f->rate, err)) != SIM_OK)
        return rc;
    scn__get(e, "background_rate", &v);
    f->has_background = v.n != NULL;
    if (v.n != NULL && (rc = scn__probability(&v, &f->background_rate, err)) != SIM_OK)
        return rc;
    int64_t users;
    if ((rc = scn__require(e, "users", &v, err)) != SIM_OK ||
        (rc = scn__int(&v, 1, INT64_C(1) << 40, &users, err)) != SIM_OK)
        return rc;
    f->users = (uint64_t)users;
    f->sessions_per_day = fc->sessions;
    scn__get(e, "sessions_per_day", &v);
    if (v.n != NULL && (rc = scn__real(&v, 0.001, 10000, &f->sessions_per_day, err)) != SIM_OK)
        return rc;
    if (f->sessions_per_day <= 0)
        return scn__fail(e, err, SIM_EINPUT, "sessions_per_day is needed: in the entry or in "
                         "the field block");
    scn__get(e, "source", &v);
    if (v.n != NULL) {
        const char *t;
        size_t len;
        if ((rc = scn__scalar(&v, &t, &len, err)) != SIM_OK)
            return rc;
        if (len >= sizeof f->source)
            return scn__fail(&v, err, SIM_ELIMIT, "source: %zu bytes exceed the limit of %zu",
                             len, sizeof f->source - 1);
        memcpy(f->source, t, len);
        f->source[len] = '\0';
    }
    s->nfield++;
    return SIM_OK;
}

static int load_field(scn_scenario *s, const scn__node *root, sim_error *err)
{
    static const char *const keys[] = {"sessions_per_day", "devices"};
    scn__node f, v;
    scn__get(root, "field", &f);
    if (f.n == NULL)
        return SIM_OK;
    int rc = scn__expect_mapping(&f, err);
    if (rc == SIM_OK)
        rc = scn__check_keys(&f, keys, 2, err);
    if (rc != SIM_OK)
        return rc;
    field_ctx fc = {s, 0};
    scn__get(&f, "sessions_per_day", &v);
    if (v.n != NULL && (rc = scn__real(&v, 0.001, 10000, &fc.sessions, err)) != SIM_OK)
        return rc;
    if ((s->field = calloc(MDL_FIELD_MAX, sizeof *s->field)) == NULL)
        return sim_error_set(err, SIM_ENOMEM, "out of memory");
    if ((rc = scn__require(&f, "devices", &v, err)) != SIM_OK)
        return rc;
    return scn__each(&v, "field entry", field_entry, &fc, err);
}

/* The scenario's `about`, copied (at most ABOUT_MAX bytes). */
static int load_about(scn_scenario *s, const scn__node *root, sim_error *err)
{
    scn__node v;
    scn__get(root, "about", &v);
    const char *t = "";
    size_t len = 0;
    int rc;
    if (v.n != NULL && (rc = scn__scalar(&v, &t, &len, err)) != SIM_OK)
        return rc;
    if (len > ABOUT_MAX)
        return scn__fail(&v, err, SIM_ELIMIT, "about: %zu bytes exceed the limit of %d", len,
                         ABOUT_MAX);
    if ((s->about = malloc(len + 1)) == NULL)
        return sim_error_set(err, SIM_ENOMEM, "out of memory");
    memcpy(s->about, t, len);
    s->about[len] = '\0';
    return SIM_OK;
}

/* The grid: every device x candidate x policy (the path axis first among
 * the policy's), each cell checked. */
static int make_cells(scn_scenario *s, const scn__node *root, sim_error *err)
{
    int rc;
    scn__paths_finish(s);
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
                cell->workload = s->npaths > 0 ? &s->paths[s->path_of[p]] : &s->workload;
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
    return SIM_OK;
}

static int load_top(loader *ld, const scn__node *root, sim_error *err)
{
    static const char *const keys[] = {"name",       "about",    "seed",     "replications",
                                       "horizon",    "devices",  "candidates", "workload",
                                       "policies",   "target",  "app",      "field",
                                       "owners",     "processes", "calibrate"};
    scn_scenario *s = ld->s;
    scn__node v;
    int rc = scn__check_keys(root, keys, sizeof keys / sizeof *keys, err);
    if (rc == SIM_OK)
        rc = scn__require(root, "name", &v, err);
    if (rc == SIM_OK)
        rc = scn__name(&v, s->name, err);
    if (rc != SIM_OK)
        return rc;
    if ((rc = load_about(s, root, err)) != SIM_OK)
        return rc;
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
    if ((rc = scn__load_profiles(ld, root, err)) != SIM_OK)
        return rc;
    if ((rc = load_target(s, root, err)) != SIM_OK) /* its LLM criteria read the candidates */
        return rc;
    if ((rc = load_field(s, root, err)) != SIM_OK)
        return rc;
    if ((rc = scn__load_calibrate(s, root, err)) != SIM_OK)
        return rc;
    if ((rc = scn__load_processes(s, root, err)) != SIM_OK)
        return rc;
    if ((rc = scn__load_owners(s, root, err)) != SIM_OK)
        return rc;
    if ((rc = scn__load_workload(s, root, err)) != SIM_OK)
        return rc;
    if ((rc = scn__resolve_owners(s, root, err)) != SIM_OK)
        return rc;
    if ((rc = scn__load_app(s, root, err)) != SIM_OK)
        return rc;
    if ((rc = scn__load_policies(s, root, err)) != SIM_OK)
        return rc;
    if ((uint64_t)s->ndevices * s->ncandidates * s->npolicies > SCN_CELLS_MAX)
        return scn__fail(root, err, SIM_ELIMIT, "the grid holds more than %u cells",
                         SCN_CELLS_MAX);
    if ((rc = resolve_lkg(s, root, err)) != SIM_OK)
        return rc;
    if ((rc = make_cells(s, root, err)) != SIM_OK)
        return rc;
    return check_events(s, root, err);
}

static int load_source(const source *src, scn_scenario *s, sim_error *err)
{
    memset(s, 0, sizeof *s);
    loader ld;
    memset(&ld, 0, sizeof ld);
    ld.s = s;
    scn__doc doc;
    int rc = scn__open_source(s, src, &doc, err);
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
    if (scn__catalog_find(path) == NULL) {
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
    scn__digest_add(s, &doc);
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
    free(s->field);
    for (unsigned k = 0; s->devices != NULL && k < SCN_PROFILES_MAX; k++)
        scn_device_release(&s->devices[k]);
    for (unsigned k = 0; s->candidates != NULL && k < SCN_PROFILES_MAX; k++)
        scn_candidate_release(&s->candidates[k]);
    for (unsigned k = 0; k < s->nextras; k++)
        scn_candidate_release(&s->extras[k]);
    free(s->extras);
    free(s->devices);
    for (unsigned k = 0; s->device_yaml != NULL && k < SCN_PROFILES_MAX; k++)
        free(s->device_yaml[k]);
    free(s->device_yaml);
    free(s->candidates);
    free(s->workload.steps);
    for (unsigned k = 0; s->paths != NULL && k < s->npaths; k++)
        free(s->paths[k].steps);
    free(s->paths);
    free(s->path_names);
    free(s->path_of);
    free(s->workload.requests);
    free(s->workload.pages);
    free(s->workload.holds);
    free(s->workload.holders);
    scn__owned_free(&s->workload.owned);
    for (unsigned k = 0; s->policy_json != NULL && k < s->npolicies; k++)
        free(s->policy_json[k]);
    free(s->policy_json);
    free(s->policies);
    free(s->axes);
    free(s->cells);
    memset(s, 0, sizeof *s);
}

