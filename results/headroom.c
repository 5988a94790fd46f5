/* headroom.c - `oomsim run --headroom` (docs/devices.md "Headroom"): per
 * cell, the largest factor on the candidate's memory (every stage's
 * resident and transient memory, working sets, session states: models/
 * scale.c) at which the cell still meets the plan's target.  Every step
 * runs the whole plan once, each cell at its own factor, with the plan's
 * seeds: the same draws at every factor (common random numbers), so a
 * cell's deaths move with the factor alone.  From 1 the factor doubles
 * while the target holds (up to 16), then halves the interval between the
 * last factor that met it and the first that did not. */
#include "results.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define FACTOR_MAX 16.0

/* One step: the plan run with cell i's candidate scaled by f[i]. */
static int step(const res_plan *plan, unsigned threads, const double *f, res_result *r,
                sim_error *err)
{
    unsigned n = plan->ncells;
    mdl_cell *cells = malloc(n * sizeof *cells);
    mdl_candidate *cands = calloc(n, sizeof *cands);
    int rc = cells == NULL || cands == NULL ? sim_error_set(err, SIM_ENOMEM, "out of memory")
                                            : SIM_OK;
    unsigned made = 0;
    for (; rc == SIM_OK && made < n; made++) {
        cells[made] = plan->cells[made];
        rc = mdl_candidate_scaled(plan->cells[made].candidate, f[made], &cands[made], err);
        cells[made].candidate = &cands[made];
    }
    if (rc == SIM_OK) {
        res_plan p = *plan;
        p.cells = cells;
        p.checkpoint = NULL;
        rc = res_run(&p, threads, NULL, NULL, r, err);
    }
    for (unsigned k = 0; cands != NULL && k < made; k++)
        mdl_candidate_scaled_free(&cands[k]);
    free(cells);
    free(cands);
    return rc;
}

int res_headroom_find(const res_plan *plan, unsigned threads, unsigned steps, res_headroom *out,
                      sim_error *err)
{
    if (!plan->target.set)
        return sim_error_set(err, SIM_EINPUT, "--headroom needs the plan's target (what must "
                             "still hold): the scenario has none");
    unsigned n = plan->ncells;
    double *f = malloc(n * sizeof *f), *lo = malloc(n * sizeof *lo), *hi = malloc(n * sizeof *hi);
    int rc = f == NULL || lo == NULL || hi == NULL
                 ? sim_error_set(err, SIM_ENOMEM, "out of memory") : SIM_OK;
    for (unsigned i = 0; rc == SIM_OK && i < n; i++) {
        f[i] = 1.0, lo[i] = 0.0, hi[i] = INFINITY;
        memset(&out[i], 0, sizeof out[i]);
        out[i].memory = mdl_candidate_memory(plan->cells[i].candidate);
    }
    for (unsigned s = 0; rc == SIM_OK && s < steps; s++) {
        res_result r;
        if ((rc = step(plan, threads, f, &r, err)) != SIM_OK)
            break;
        for (unsigned i = 0; i < n; i++) {
            res_verdict v;
            res_cell_verdict(&plan->target, &r.cells[i], &v);
            if (v.meets) {
                lo[i] = f[i];
                out[i].factor = f[i];
                out[i].deaths = r.cells[i].any_rate;
                out[i].deaths_ci = r.cells[i].any_ci;
            } else {
                hi[i] = f[i];
                out[i].deaths_miss = !v.deaths_ok;
                out[i].latency_miss = !v.latency_ok || !v.completed_ok;
            }
            /* the next factor: double while it holds, then halve the gap */
            f[i] = isinf(hi[i]) ? fmin(2 * lo[i], FACTOR_MAX) : (lo[i] + hi[i]) / 2;
            out[i].capped = isinf(hi[i]) && lo[i] >= FACTOR_MAX;
            out[i].upper = hi[i];
        }
        res_result_free(&r);
        out[0].runs = s + 1;
    }
    free(f);
    free(lo);
    free(hi);
    return rc;
}
