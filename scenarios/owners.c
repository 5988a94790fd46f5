/* owners.c - a scenario's `owners` (docs/scenarios.md "Owners"): who holds
 * sessions of the model, a page while the user is on it, a background task
 * while it runs, a service while its process lives; and the `owner` of a
 * requests step.  Loaded before the workload (whose requests name owners),
 * their pages resolved after it (a page owner's page must be entered on
 * the path). */
#include "scenario_int.h"

#include <stdlib.h>
#include <string.h>

static const char *const kinds[] = {"page", "task", "service"};

/* The keys each kind takes besides kind, sessions, needs and releases. */
static int kind_keys(const scn__node *v, mdl_holder_kind k, sim_error *err)
{
    static const char *const page[] = {"kind", "page", "sessions", "needs", "releases"};
    static const char *const task[] = {"kind", "every", "runs", "sessions", "needs", "releases"};
    static const char *const service[] = {"kind", "process", "sessions", "needs", "releases"};
    return k == MDL_HOLDER_PAGE ? scn__check_keys(v, page, 5, err)
           : k == MDL_HOLDER_TASK ? scn__check_keys(v, task, 6, err)
                                  : scn__check_keys(v, service, 5, err);
}

/* A task's runs: every (a duration distribution) and runs (a duration). */
static int load_task(scn_scenario *s, const scn__node *v, mdl_holder *h, sim_error *err)
{
    scn__node x;
    int rc = scn__require(v, "every", &x, err);
    if (rc == SIM_OK)
        rc = scn__owned_dist(&s->workload.owned, &x, SCN__UNIT_DURATION, &h->every, err);
    if (rc == SIM_OK)
        rc = scn__require(v, "runs", &x, err);
    if (rc == SIM_OK)
        rc = scn__duration(&x, &h->runs, err);
    if (rc == SIM_OK && h->runs < 1)
        rc = scn__fail(&x, err, SIM_EINPUT, "a task's run must last longer than 0");
    return rc;
}

/* A service owner lives in the process the model runs in: the main one,
 * or the service process `processes` declares, which it must then name. */
static int service_process(const scn_scenario *s, const scn__node *v, const mdl_holder *h,
                           sim_error *err)
{
    const mdl_workload *wl = &s->workload;
    scn__node x;
    char name[MDL_NAME_MAX];
    scn__get(v, "process", &x);
    if (x.n == NULL)
        return wl->has_proc ? scn__fail(v, err, SIM_EINPUT, "owner %s: the model runs in "
                                        "process %s, where its service lives: add `process: %s`",
                                        h->name, wl->proc.name, wl->proc.name)
                            : SIM_OK;
    int rc = scn__name(&x, name, err);
    if (rc != SIM_OK)
        return rc;
    if (!wl->has_proc || strcmp(name, wl->proc.name) != 0)
        return scn__fail(&x, err, SIM_EINPUT, "owner %s: no process named '%s'%s", h->name,
                         name, wl->has_proc ? "" : " (the scenario has no `processes`)");
    return SIM_OK;
}

static int load_holder(scn_scenario *s, const scn__node *v, mdl_holder *h, sim_error *err)
{
    scn__node x;
    int k = 0;
    int rc = scn__expect_mapping(v, err);
    if (rc == SIM_OK)
        rc = scn__require(v, "kind", &x, err);
    if (rc == SIM_OK)
        rc = scn__enum(&x, kinds, 3, &k, err);
    if (rc == SIM_OK)
        rc = kind_keys(v, (mdl_holder_kind)k, err);
    if (rc != SIM_OK)
        return rc;
    h->kind = (mdl_holder_kind)k;
    if (h->kind == MDL_HOLDER_PAGE) {
        const char *t;
        size_t len;
        if ((rc = scn__require(v, "page", &x, err)) != SIM_OK ||
            (rc = scn__scalar(&x, &t, &len, err)) != SIM_OK)
            return rc;
        if (len == 0 || len >= MDL_NAME_MAX)
            return scn__fail(&x, err, SIM_EINPUT, "expected a page of the path");
        memcpy(h->page_name, t, len); /* checked against the path's pages later */
    } else if (h->kind == MDL_HOLDER_TASK && (rc = load_task(s, v, h, err)) != SIM_OK) {
        return rc;
    }
    if (h->kind == MDL_HOLDER_SERVICE && (rc = service_process(s, v, h, err)) != SIM_OK)
        return rc;
    h->sessions = 1;
    scn__get(v, "sessions", &x);
    int64_t n;
    if (x.n != NULL) {
        if ((rc = scn__int(&x, 1, MDL_HOLDER_SESSIONS_MAX, &n, err)) != SIM_OK)
            return rc;
        h->sessions = (uint32_t)n;
    }
    scn__get(v, "needs", &x);
    if (x.n != NULL && (rc = scn__part_names(s, &x, h->needs, &h->nneeds, err)) != SIM_OK)
        return rc;
    if (x.n != NULL && h->nneeds == 0)
        return scn__fail(&x, err, SIM_EINPUT, "expected at least one part");
    static const char *const bools[] = {"false", "true"};
    h->releases = 1;
    scn__get(v, "releases", &x);
    return x.n != NULL ? scn__enum(&x, bools, 2, &h->releases, err) : SIM_OK;
}

int scn__load_owners(scn_scenario *s, const scn__node *root, sim_error *err)
{
    scn__node m;
    int count;
    int rc = scn__named_map(root, "owners", "owner", MDL_HOLDERS_MAX, &m, &count, err);
    if (rc != SIM_OK || m.n == NULL)
        return rc;
    mdl_workload *wl = &s->workload;
    wl->holders = calloc((size_t)count, sizeof *wl->holders);
    if (wl->holders == NULL)
        return scn__fail(&m, err, SIM_ENOMEM, "out of memory");
    void *it = NULL;
    struct fy_node_pair *pair;
    while ((pair = fy_node_mapping_iterate(m.n, &it)) != NULL) {
        scn__node v;
        mdl_holder *h = &wl->holders[wl->nholders];
        if ((rc = scn__map_name(&m, pair, wl->nholders, h->name, err)) != SIM_OK)
            return rc;
        scn__get(&m, h->name, &v);
        if ((rc = load_holder(s, &v, h, err)) != SIM_OK)
            return rc;
        wl->nholders++;
    }
    return SIM_OK;
}

int scn__resolve_owners(scn_scenario *s, const scn__node *root, sim_error *err)
{
    mdl_workload *wl = &s->workload;
    scn__node m;
    scn__get(root, "owners", &m);
    for (uint32_t k = 0; k < wl->nholders; k++) {
        mdl_holder *h = &wl->holders[k];
        if (h->kind != MDL_HOLDER_PAGE)
            continue;
        uint32_t p = 0;
        while (p < wl->npages && strcmp(wl->pages[p], h->page_name) != 0)
            p++;
        if (p == wl->npages) {
            scn__node v, x;
            scn__get(&m, h->name, &v);
            scn__get(&v, "page", &x);
            return scn__fail(&x, err, SIM_EINPUT, "owner %s: the path never enters page '%s'",
                             h->name, h->page_name);
        }
        h->page = p;
    }
    return SIM_OK;
}
