/* levers.c - `oomsim explain`'s last words on an LLM's death: the same
 * replication run again in each cell of the grid that changes one of the
 * LLM's levers (the context, the KV's precision, how the weights are held)
 * and nothing else, and which of those would have lived (docs/on-call.md
 * "What would have saved it").  The advice then names the lever the grid
 * shows, not a generic one. */
#include "cli.h"
#include "scenarios/scenarios.h"

#include <jansson.h>
#include <stdio.h>
#include <string.h>

/* The levers, as the policy axes name them, and what each is to a team. */
static const struct {
    const char *axis, *lever;
} levers[] = {{"context", "the context"},
              {"kv_precision", "the KV's precision"},
              {"weights", "how the weights are held (mmap or a copy)"}};
#define NLEVERS (sizeof levers / sizeof *levers)

/* The lever by which policy b differs from policy a, the only axis that
 * does; -1 when none or more than one differ, or another axis does. */
static int one_lever(json_t *a, json_t *b)
{
    if (json_object_size(a) != json_object_size(b))
        return -1;
    int which = -1;
    const char *key;
    json_t *va;
    json_object_foreach(a, key, va) {
        json_t *vb = json_object_get(b, key);
        if (vb == NULL)
            return -1;
        if (json_equal(va, vb))
            continue;
        int k = -1;
        for (size_t i = 0; i < NLEVERS; i++)
            if (strcmp(key, levers[i].axis) == 0)
                k = (int)i;
        if (k < 0 || which >= 0)
            return -1;
        which = k;
    }
    return which;
}

/* The axis value of policy p as the grid writes it ("4096", "q8_0"). */
static void value_of(json_t *p, const char *axis, char *buf, size_t n)
{
    json_t *v = json_object_get(p, axis);
    if (json_is_integer(v))
        snprintf(buf, n, "%lld", (long long)json_integer_value(v));
    else if (json_is_string(v))
        snprintf(buf, n, "%s", json_string_value(v));
    else
        snprintf(buf, n, "?");
}

/* The same replication in cell j; its line; 1 when it lived, 0 when it
 * died, -1 on an error (reported). */
static int again(const scn_scenario *s, unsigned j, uint64_t rep, const char *axis,
                 const char *v, int *status)
{
    sim_error err;
    sim_error_clear(&err);
    mdl_rep r;
    if (mdl_run_replication(&s->cells[j], rep, NULL, NULL, &r, &err) != SIM_OK) {
        *status = cli_report(&err);
        return -1;
    }
    if (r.deaths_total == 0)
        printf("  %s=%s: lives\n", axis, v);
    else
        printf("  %s=%s: dies too (%s at %.3f s)\n", axis, v, mdl_exit_name(r.first_death),
               (double)r.first_death_time / 1e6);
    return r.deaths_total == 0;
}

int cli_explain_levers(const scn_scenario *s, unsigned cell, uint64_t rep)
{
    const mdl_cell *c = &s->cells[cell];
    if (!mdl_candidate_generates(c->candidate) || s->npolicies < 2)
        return CLI_OK;
    json_t *mine = json_loads(s->policy_json[cell % s->npolicies], 0, NULL);
    if (mine == NULL)
        return CLI_OK;
    unsigned group = cell / s->npolicies, tried = 0;
    char saved[512] = "";
    int status = CLI_OK;
    for (size_t k = 0; k < NLEVERS && status == CLI_OK; k++)
        for (unsigned p = 0; p < s->npolicies && status == CLI_OK; p++) {
            unsigned j = group * s->npolicies + p;
            json_t *other = j == cell ? NULL : json_loads(s->policy_json[p], 0, NULL);
            if (other != NULL && one_lever(mine, other) == (int)k) {
                char v[64];
                value_of(other, levers[k].axis, v, sizeof v);
                if (tried++ == 0)
                    printf("\nthe grid's levers: this replication again, one setting "
                           "changed:\n");
                if (again(s, j, rep, levers[k].axis, v, &status) == 1) {
                    size_t n = strlen(saved);
                    snprintf(saved + n, sizeof saved - n, "%s%s (%s=%s)", n ? "; or " : "",
                             levers[k].lever, levers[k].axis, v);
                }
            }
            json_decref(other);
        }
    json_decref(mine);
    if (status != CLI_OK || tried == 0)
        return status;
    if (saved[0] == '\0')
        printf("  no single lever of the grid saves it: change two at once, or the model\n");
    else
        printf("  what would have saved it: %s\n", saved);
    return CLI_OK;
}
