/* processes.c - a scenario's `processes` (docs/scenarios.md "Processes"):
 * the app's processes besides its main one.  A service bound by the main
 * process is modelled, one: the model runs in it, and the owners' sessions
 * live there.  Loaded after the profiles (a service is refused on an iOS
 * device) and before the owners (a service owner names its process). */
#include "scenario_int.h"

#include <string.h>

static const char *const proc_kinds[] = {"service", "extension"};

typedef struct declared {
    char name[MDL_NAME_MAX];
    char bound_by[MDL_NAME_MAX];
    uint32_t by;                 /* index among the declared, UINT32_MAX: main */
} declared;

/* The binding of every declared process resolved, and refused when it
 * names no process or goes round without reaching the main process. */
static int check_bindings(const scn__node *m, declared *d, uint32_t n, sim_error *err)
{
    for (uint32_t k = 0; k < n; k++) {
        d[k].by = UINT32_MAX;
        if (strcmp(d[k].bound_by, "main") == 0)
            continue;
        uint32_t j = 0;
        while (j < n && strcmp(d[j].name, d[k].bound_by) != 0)
            j++;
        scn__node v, x;
        scn__get(m, d[k].name, &v);
        scn__get(&v, "bound_by", &x);
        if (j == n)
            return scn__fail(&x, err, SIM_EINPUT, "process %s: no process named '%s' binds it "
                             "(main, or one of `processes`)", d[k].name, d[k].bound_by);
        d[k].by = j;
    }
    for (uint32_t k = 0; k < n; k++) {
        uint32_t at = k, steps = 0;
        while (at != UINT32_MAX && steps <= n) {
            at = d[at].by;
            steps++;
        }
        if (at == UINT32_MAX)
            continue;
        char chain[4 * MDL_NAME_MAX] = "";
        at = k;
        for (uint32_t s = 0; s <= n && strlen(chain) + MDL_NAME_MAX + 4 < sizeof chain; s++) {
            strcat(chain, d[at].name);
            if (s > 0 && at == k)
                break;
            strcat(chain, " -> ");
            at = d[at].by;
        }
        scn__node v, x;
        scn__get(m, d[k].name, &v);
        scn__get(&v, "bound_by", &x);
        return scn__fail(&x, err, SIM_EINPUT, "a cycle of bindings: %s (every service is bound, "
                         "in the end, by the main process)", chain);
    }
    return SIM_OK;
}

/* One entry: its kind and keys; the service's restart and binding flag
 * stored in *p when it is the first service. */
static int load_one(scn_scenario *s, const scn__node *v, declared *d, mdl_process *p,
                    sim_error *err)
{
    static const char *const keys[] = {"kind", "bound_by", "restart", "waive_priority",
                                       "important"};
    static const char *const bools[] = {"false", "true"};
    scn__node x;
    int kind = 0;
    int rc = scn__expect_mapping(v, err);
    if (rc == SIM_OK)
        rc = scn__check_keys(v, keys, 5, err);
    if (rc == SIM_OK)
        rc = scn__require(v, "kind", &x, err);
    if (rc == SIM_OK)
        rc = scn__enum(&x, proc_kinds, 2, &kind, err);
    if (rc != SIM_OK)
        return rc;
    if (kind == 1)
        return scn__fail(&x, err, SIM_EINPUT, "an app extension (an iOS process of its own, "
                         "with its own memory limit) is not modelled by this version of oomsim");
    strcpy(d->bound_by, "main");
    scn__get(v, "bound_by", &x);
    if (x.n != NULL && (rc = scn__name(&x, d->bound_by, err)) != SIM_OK)
        return rc;
    if ((rc = scn__require(v, "restart", &x, err)) != SIM_OK ||
        (rc = scn__owned_dist(&s->workload.owned, &x, SCN__UNIT_DURATION, &p->restart, err)) !=
            SIM_OK)
        return rc;
    scn__get(v, "waive_priority", &x);
    if (x.n != NULL && (rc = scn__enum(&x, bools, 2, &p->waive_priority, err)) != SIM_OK)
        return rc;
    scn__get(v, "important", &x);
    if (x.n != NULL && (rc = scn__enum(&x, bools, 2, &p->important, err)) != SIM_OK)
        return rc;
    if (p->important && p->waive_priority)
        return scn__fail(&x, err, SIM_EINPUT, "a binding that waives priority lends none: "
                         "`important` and `waive_priority` exclude each other");
    return SIM_OK;
}

int scn__named_map(const scn__node *root, const char *key, const char *what, unsigned max,
                   scn__node *m, int *count, sim_error *err)
{
    *count = 0;
    scn__get(root, key, m);
    if (m->n == NULL)
        return SIM_OK;
    int rc = scn__expect_mapping(m, err);
    if (rc != SIM_OK)
        return rc;
    *count = fy_node_mapping_item_count(m->n);
    if (*count < 1)
        return scn__fail(m, err, SIM_EINPUT, "expected at least one %s", what);
    if (*count > (int)max)
        return scn__fail(m, err, SIM_ELIMIT, "%d %s entries exceed the limit of %u", *count,
                         what, max);
    return SIM_OK;
}

int scn__map_name(const scn__node *m, struct fy_node_pair *pair, size_t i, char *name,
                  sim_error *err)
{
    scn__node key;
    scn__item(m, i, fy_node_pair_key(pair), &key);
    memcpy(key.path, m->path, sizeof key.path);
    return scn__name(&key, name, err);
}

int scn__load_processes(scn_scenario *s, const scn__node *root, sim_error *err)
{
    scn__node m;
    int count;
    int rc = scn__named_map(root, "processes", "process", MDL_PROCS_MAX, &m, &count, err);
    if (rc != SIM_OK || m.n == NULL)
        return rc;
    for (unsigned k = 0; k < s->ndevices; k++)
        if (s->devices[k].os == MDL_OS_IOS)
            return scn__fail(&m, err, SIM_EINPUT, "device %s runs iOS, which has no app-owned "
                             "service processes: run `processes` on Android devices only (the "
                             "iOS devices in a scenario of their own, without `processes`)",
                             s->devices[k].name);
    declared d[MDL_PROCS_MAX];
    mdl_process p[MDL_PROCS_MAX];
    memset(d, 0, sizeof d);
    memset(p, 0, sizeof p);
    uint32_t n = 0;
    void *it = NULL;
    struct fy_node_pair *pair;
    while ((pair = fy_node_mapping_iterate(m.n, &it)) != NULL) {
        scn__node v;
        if ((rc = scn__map_name(&m, pair, n, d[n].name, err)) != SIM_OK)
            return rc;
        scn__get(&m, d[n].name, &v);
        if (strcmp(d[n].name, "main") == 0)
            return scn__fail(&v, err, SIM_EINPUT, "`main` is the app's main process: name "
                             "the others");
        /* records name it PACKAGE:NAME (android:process=":NAME", which the
         * package parser's validateName reads: a letter first, no '-'), in
         * 63 bytes with a package of up to 40 */
        const char *nm = d[n].name;
        if (strlen(nm) > 22 || nm[0] < 'a' || nm[0] > 'z' || strchr(nm, '-') != NULL)
            return scn__fail(&v, err, SIM_EINPUT, "process '%s': expected a name of at most 22 "
                             "characters from [a-z0-9], begun by a letter (the phone names "
                             "it PACKAGE:%s)", nm, nm);
        if ((rc = load_one(s, &v, &d[n], &p[n], err)) != SIM_OK)
            return rc;
        n++;
    }
    if ((rc = check_bindings(&m, d, n, err)) != SIM_OK)
        return rc;
    if (n > 1) {
        scn__node v;
        scn__get(&m, d[1].name, &v);
        return scn__fail(&v, err, SIM_EINPUT, "this version of oomsim models one service "
                         "process, the one the model runs in (%s)", d[0].name);
    }
    memcpy(p[0].name, d[0].name, sizeof p[0].name);
    s->workload.proc = p[0];
    s->workload.has_proc = 1;
    return SIM_OK;
}
