/* bench_calibrate.c - what a fit costs (docs/calibration.md, "Cost"): the
 * time of `oomsim calibrate` on a plan against the time of one run of the
 * same plan at the replications the fit ended with, at each thread count
 * given.  The target: within 60 times.
 *
 *   bench_calibrate PLAN THREADS...  */
#include "bench_clock.h"
#include "cli/cli.h"
#include "results/calibrate.h"
#include "scenarios/scenarios.h"

#include <stdio.h>
#include <stdlib.h>

static int one(const res_plan *plan, const scn_scenario *s, unsigned threads)
{
    sim_error err;
    sim_error_clear(&err);
    res_calibration *c = calloc(1, sizeof *c);
    if (c == NULL)
        return 1;
    double t0 = now_s();
    res_cal_ctl ctl = {threads, 400, 0, NULL, NULL, NULL, NULL};
    int rc = res_calibrate(plan, s->fit, s->nfit, &ctl, c, &err);
    double fit_s = now_s() - t0;
    if (rc != SIM_OK || !c->converged) {
        fprintf(stderr, "bench_calibrate: the fit failed: %s\n", rc != SIM_OK ? err.msg
                                                                         : "not converged");
        free(c);
        return 1;
    }
    res_plan at = *plan;
    at.replications = c->replications;
    res_result r;
    t0 = now_s();
    rc = res_run(&at, threads, NULL, NULL, &r, &err);
    double run_s = now_s() - t0;
    if (rc != SIM_OK) {
        fprintf(stderr, "bench_calibrate: the run failed: %s\n", err.msg);
        free(c);
        return 1;
    }
    res_result_free(&r);
    printf("-j %u: fit %.2f s (%u points in %u plan runs, %u entries, the last at %llu replications); one "
           "run at %llu replications %.3f s; ratio %.1f (target at most 60)\n", threads, fit_s,
           c->evaluations, c->plan_runs, c->nentries, (unsigned long long)c->replications,
           (unsigned long long)c->replications, run_s, fit_s / run_s);
    free(c);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: bench_calibrate PLAN THREADS...\n");
        return 2;
    }
    scn_scenario s;
    sim_error err;
    sim_error_clear(&err);
    if (cli_load_scenario(argv[1], &s, &err) != SIM_OK) {
        fprintf(stderr, "bench_calibrate: %s\n", err.msg);
        return 1;
    }
    if (!s.calibrate) {
        fprintf(stderr, "bench_calibrate: %s has no calibrate block\n", argv[1]);
        scn_scenario_release(&s);
        return 1;
    }
    res_plan plan;
    const char **labels = NULL;
    int status = cli_plan_of(&s, &plan, &labels, &err) == SIM_OK ? 0 : 1;
    for (int k = 2; status == 0 && k < argc; k++)
        status = one(&plan, &s, (unsigned)atoi(argv[k]));
    free(labels);
    scn_scenario_release(&s);
    return status;
}
