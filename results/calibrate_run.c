/* calibrate_run.c - the plan runs of `oomsim calibrate` (calibrate.h):
 * each through the command's log (replayed from a checkpoint, or run and
 * appended), over the threads and the ranks of an MPI job, and the one
 * cell's run that predicts a held-out entry.
 *
 * In an MPI job every rank runs the same fit: res_run spreads each plan
 * run's replications over the ranks and gives the counts to rank 0, which
 * passes them on (the others contribute 0 to a maximum), so that every
 * rank takes the same next step.  Rank 0 alone holds the log: it replays
 * and writes it, and the ranks agree on each run's status. */
#include "calibrate.h"
#include "internal.h"
#include "sim/sim.h"

#include <stdlib.h>
#include <string.h>

/* Rank 0's log run: checked against what the fit asks for, copied. */
static int replayed(res_cal_log *log, const res_plan *p, uint64_t digest, uint64_t *k,
                    sim_error *err)
{
    const res_cal_run *r = &log->run[log->next];
    if (r->digest != digest || r->reps != p->replications || r->m != p->ncells)
        return sim_error_set(err, SIM_EINPUT, "calibrate: the checkpoint's run %u is not "
                             "the one this fit asks for (another plan, seed or option): "
                             "start again without --resume", log->next + 1);
    memcpy(k, r->k, 2 * (size_t)p->ncells * sizeof *k);
    log->next++;
    return SIM_OK;
}

/* A run appended to rank 0's log, and the log handed to ctl->logged. */
static int append(const res_cal_ctl *ctl, const res_plan *p, uint64_t digest,
                  const uint64_t *k, sim_error *err)
{
    res_cal_log *log = ctl->log;
    if (log->n == log->cap) {
        unsigned cap = log->cap ? 2 * log->cap : 64;
        res_cal_run *grown = realloc(log->run, cap * sizeof *grown);
        if (grown == NULL)
            return sim_error_set(err, SIM_ENOMEM, "calibrate: out of memory");
        log->run = grown, log->cap = cap;
    }
    res_cal_run *r = &log->run[log->n];
    r->k = malloc(2 * (size_t)p->ncells * sizeof *r->k);
    if (r->k == NULL)
        return sim_error_set(err, SIM_ENOMEM, "calibrate: out of memory");
    memcpy(r->k, k, 2 * (size_t)p->ncells * sizeof *k);
    r->reps = p->replications, r->digest = digest, r->m = p->ncells;
    log->next = ++log->n;
    return ctl->logged != NULL ? ctl->logged(ctl->ctx, log, err) : SIM_OK;
}

int res__cal_run(const res_cal_ctl *ctl, const res_plan *p, uint64_t digest, uint64_t *k,
                 sim_error *err)
{
    unsigned m = p->ncells;
    res_cal_log *log = sim_ranks_rank() == 0 ? ctl->log : NULL;
    uint64_t replay = log != NULL && log->next < log->n;
    int rc = sim_ranks_max(&replay, 1, err);
    if (rc != SIM_OK)
        return rc;
    memset(k, 0, 2 * (size_t)m * sizeof *k);
    if (replay) {
        rc = log != NULL ? replayed(log, p, digest, k, err) : SIM_OK;
        if ((rc = sim_ranks_agree(rc, err)) != SIM_OK)
            return rc;
        return sim_ranks_max(k, 2 * (size_t)m, err);
    }
    res_result res;
    if ((rc = res_run(p, ctl->threads, ctl->progress, ctl->ctx, &res, err)) != SIM_OK)
        return rc;
    if (sim_ranks_rank() == 0)
        for (unsigned c = 0; c < m; c++) {
            k[c] = res.cells[c].with_visible_death;
            k[m + c] = res.cells[c].with_background_death;
        }
    res_result_free(&res);
    if ((rc = sim_ranks_max(k, 2 * (size_t)m, err)) != SIM_OK)
        return rc;
    rc = log != NULL ? append(ctl, p, digest, k, err) : SIM_OK;
    return sim_ranks_agree(rc, err);
}

int res_calibrate_predict(const res_plan *plan, const mdl_unknown *u, const res_calibration *c,
                          const mdl_field *e, const res_cal_ctl *ctl, uint64_t reps,
                          double rate[2], res_interval ci[2], sim_error *err)
{
    unsigned i = 0;
    while (i < plan->ncells && res__field_entry(plan, plan->cells[i].device) != e)
        i++;
    if (i == plan->ncells)
        return sim_error_set(err, SIM_EINPUT, "calibrate: no device of the plan is held "
                             "against that field entry");
    mdl_device d = *plan->cells[i].device;
    uint64_t digest = sim_digest(0, &reps, sizeof reps);
    digest = sim_digest(digest, &i, sizeof i);
    for (unsigned j = 0; j < c->nu; j++) {
        digest = sim_digest(digest, &c->u[j].fitted, sizeof c->u[j].fitted);
        if (u[j].device[0] != '\0' && strcmp(u[j].device, d.name) != 0)
            continue;
        sim_error why;
        sim_error_clear(&why);
        if (mdl_knob_set(&d, u[j].knob, c->u[j].fitted, &why) != SIM_OK)
            return sim_error_set(err, SIM_EINPUT, "calibrate: %s: %s", u[j].key, why.msg);
    }
    mdl_cell cell = plan->cells[i];
    cell.device = &d;
    const char *json = "{}";
    res_plan p = *plan;
    p.cells = &cell;
    p.policy_json = &json;
    p.ncells = 1;
    p.replications = reps;
    p.checkpoint = NULL;
    uint64_t k[2];
    int rc = res__cal_run(ctl, &p, digest, k, err);
    if (rc != SIM_OK)
        return rc;
    for (int b = 0; b < 2; b++) {
        res_interval w = res_wilson95(k[b], reps);
        rate[b] = res__day_rate((double)k[b] / (double)reps, e->sessions_per_day);
        ci[b].lo = res__day_rate(w.lo, e->sessions_per_day);
        ci[b].hi = res__day_rate(w.hi, e->sessions_per_day);
    }
    return SIM_OK;
}
