/* plan.c - the plan `oomsim run` makes of a scenario: every cell, its
 * seed, replications and horizon, and each cell's policy label (cells
 * cycle through the scenario's policies). */
#include "cli.h"
#include "results/results.h"
#include "scenarios/scenarios.h"

#include <stdlib.h>
#include <string.h>

int cli_plan_of(const scn_scenario *s, res_plan *p, const char ***labels, sim_error *err)
{
    memset(p, 0, sizeof *p);
    *labels = NULL;
    const char **pj = malloc(sizeof *pj * (s->ncells > 0 ? s->ncells : 1));
    if (pj == NULL)
        return sim_error_set(err, SIM_ENOMEM, "oomsim: out of memory");
    for (unsigned i = 0; i < s->ncells; i++)
        pj[i] = s->policy_json[i % s->npolicies];
    p->name = s->name;
    p->about = s->about;
    p->target = s->target;
    p->seed = s->seed;
    p->replications = s->replications;
    p->horizon = s->horizon;
    p->cells = s->cells;
    p->ncells = s->ncells;
    p->paths = s->npaths;
    p->digest = s->digest;
    p->field = s->field;
    p->nfield = s->nfield;
    p->policy_json = pj;
    *labels = pj;
    return SIM_OK;
}
