/* calibrate.h - `oomsim calibrate` (docs/calibration.md): the device
 * values a plan's `calibrate` block names, fitted to its field block's
 * observed rates by the binomial likelihood of the observed users, the plan
 * re-run at each point with the same seeds (common random numbers). */
#ifndef OOMSIM_RESULTS_CALIBRATE_H
#define OOMSIM_RESULTS_CALIBRATE_H

#include "results.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One unknown's fit: in its unit (bytes, microseconds, a ratio). */
typedef struct res_cal_unknown {
    double start, fitted;
    double lo, hi;          /* the 95 % interval (the bounds when the likelihood is flat) */
    int identifiable;       /* 0: no predicted rate moves across its bounds: left at start */
    int interval_exact;     /* 1: the profile likelihood on the surrogate */
    int at_bound;           /* -1, 1: the fit is at the lower, upper bound (the rates ask
                               for a value past it) */
} res_cal_unknown;

/* One rate of a field entry: observed against predicted, per user and
 * day.  An entry gives its visible rate (lmk_rate, memory_exit_rate), and
 * its background rate when it has background_rate: a second binomial. */
typedef struct res_cal_entry {
    char device[MDL_NAME_MAX];
    unsigned field;         /* its index in the plan's field block */
    int background;         /* 0: the visible rate; 1: the background rate */
    uint64_t users, observed_users;
    double observed;
    res_interval observed_ci;
    double before, after;   /* predicted at the start and at the fit */
    res_interval before_ci, after_ci;
} res_cal_entry;

#define RES_CAL_ENTRIES_MAX (2 * MDL_FIELD_MAX) /* each entry's two rates */
typedef struct res_calibration {
    unsigned nu, nentries;
    res_cal_unknown u[MDL_UNKNOWNS_MAX];
    res_cal_entry e[RES_CAL_ENTRIES_MAX];
    double loglik_start, loglik;  /* binomial log-likelihood of the observed users */
    double deviance, gof_p;       /* against the saturated model; gof_p NaN: no degree left */
    unsigned df;
    double corr[MDL_UNKNOWNS_MAX][MDL_UNKNOWNS_MAX]; /* of the fitted unknowns */
    uint64_t replications;        /* what the last evaluations used */
    double noise_share;           /* the simulation's noise over the observed rates' (target 0.1) */
    unsigned evaluations;         /* points run (a design's points, the checks), within
                                     the budget but for the two checks */
    unsigned plan_runs;           /* the plan runs they took (a design's points run as one) */
    int converged;                /* 0: the budget ran out, or the check missed */
    int missed;                   /* the entry whose check run at the fit is far from the
                                     surface the fit was found on (a jump it did not
                                     follow), else -1 */
    double missed_rate;           /* what the surface predicted for it, per user and day */
} res_calibration;

/* The plan runs of a command's fits, in order (`calibrate --checkpoint`):
 * each its replications, a digest of what it ran (the points' values,
 * which of them could be set, the cells), and each cell's count of
 * replications with a visible memory death, then each cell's count of
 * those with a background memory death.  A fit is deterministic, so a
 * resumed command asks for the same runs in the same order: the first
 * `n` are replayed from the log (each checked against its digest), the
 * rest run and appended. */
typedef struct res_cal_run {
    uint64_t reps, digest;
    unsigned m;             /* cells */
    uint64_t *k;            /* 2m counts: the visible deaths', the background deaths' */
} res_cal_run;
#define RES_CAL_RUNS_MAX 100000
#define RES_CAL_DESIGN_MAX 96 /* points in a stage's design */
#define RES_CAL_CELLS_MAX (RES_CAL_DESIGN_MAX * MDL_FIELD_MAX)
typedef struct res_cal_log {
    res_cal_run *run;
    unsigned n, cap;
    unsigned next;          /* the next run to replay or append */
} res_cal_log;
void res_cal_log_free(res_cal_log *l);
/* The log as a checkpoint file's text (JSON, docs/calibration.md): the
 * plan's digest (what the runs are of) and the runs.  Malloc'd, or NULL. */
char *res_cal_log_json(const res_cal_log *l, uint64_t plan_digest);
/* Reads that text into *l (empty before); SIM_EINPUT naming `file` and
 * the field when it is not one, or is of another plan. */
int res_cal_log_parse(const char *text, size_t len, const char *file, uint64_t plan_digest,
                      res_cal_log *l, sim_error *err);

/* How a command's fits run. */
typedef struct res_cal_ctl {
    unsigned threads;
    unsigned max_evals;     /* plan runs per fit at most */
    uint64_t max_reps;      /* replications at most; 0: 16 times the plan's */
    res_progress_fn progress; /* each plan run's progress (NULL: none), with ctx */
    void *ctx;
    res_cal_log *log;       /* NULL: none */
    /* after each run appended to the log (NULL: none), with ctx: SIM_OK, or
     * an error that stops the fit (a checkpoint that could not be written) */
    int (*logged)(void *ctx, const res_cal_log *log, sim_error *err);
} res_cal_ctl;

/* Fits u[0..nu) on plan (its field block; the first cell of each device
 * that has a field entry: the plan's first candidate and policy), at most
 * ctl->max_evals plan runs, the replications growing from the plan's up
 * to ctl->max_reps.  SIM_OK (out->converged 0 when the budget ran out:
 * the fit's figures are then where it stopped), or the run's error
 * (SIM_EINTR when plan->stop was set). */
int res_calibrate(const res_plan *plan, const mdl_unknown *u, unsigned nu,
                  const res_cal_ctl *ctl, res_calibration *out, sim_error *err);

/* The same fit with one field entry left out (`--holdout`): its device's
 * cells are not fitted on. */
int res_calibrate_without(const res_plan *plan, const mdl_field *left_out, const mdl_unknown *u,
                          unsigned nu, const res_cal_ctl *ctl, res_calibration *out,
                          sim_error *err);

/* The per-user-day rates the plan predicts for field entry `e` at c's
 * fitted values (the first cell of a device it is held against, run at
 * reps replications), the visible [0] and the background [1], each with
 * its 95 % interval.  SIM_EINPUT when no device of the plan is held
 * against e. */
int res_calibrate_predict(const res_plan *plan, const mdl_unknown *u, const res_calibration *c,
                          const mdl_field *e, const res_cal_ctl *ctl, uint64_t reps,
                          double rate[2], res_interval ci[2], sim_error *err);

/* One plan run through ctl's log (calibrate_run.c, for calibrate.c): the
 * log's next run replayed when it holds one, else run and appended; in an
 * MPI job on every rank, each with the counts.  k: 2 * p->ncells counts,
 * each cell's replications with a visible memory death, then each cell's
 * with a background one.  `digest`: what the run is of. */
int res__cal_run(const res_cal_ctl *ctl, const res_plan *p, uint64_t digest, uint64_t *k,
                 sim_error *err);

/* One row of `--holdout`: an entry refitted without and predicted. */
typedef struct res_cal_holdout {
    unsigned entry;         /* its index in the calibration's entries */
    int fitted;             /* 0: nothing was left to fit on without it */
    double predicted;
    res_interval ci;
    int inside;             /* the observed rate inside ci */
} res_cal_holdout;

/* The calibration document (`calibrate -o DIR`: DIR/calibration.json,
 * docs/calibration.md): the unknowns (u: their keys), the entries, the
 * likelihood and the fit's cost, and the held-out rows (n 0: none).
 * Malloc'd text, or NULL when memory ran out. */
char *res_calibration_json(const res_calibration *c, const mdl_unknown *u,
                           const res_cal_holdout *h, unsigned n);

/* An entry's name in tables and plots: its device, "(background)" after
 * it for its background rate. */
void res_cal_entry_label(const res_cal_entry *e, char *out, size_t n);

/* A value in its unit, for tables and comments ("812 MiB", "224.0 s", "2.91"). */
void res_cal_value(char *out, size_t n, mdl_knob_unit unit, double v);

/* The plot of each entry's predicted rate against its observed one, before
 * and after the fit (plot.c): SVG text (malloc'd, *len bytes), or NULL. */
char *res_plot_calibration(const res_calibration *c, size_t *len);

/* report.html of `calibrate -o DIR`: the unknowns, the entries before and
 * after, the likelihood, the held-out rows (n 0: none), and the plot (svg
 * NULL: none) inline.  Malloc'd, NULL out of memory. */
char *res_calibration_html(const char *plan, const res_calibration *c, const mdl_unknown *u,
                           const res_cal_holdout *h, unsigned n, const char *svg, size_t len);

#ifdef __cplusplus
}
#endif

#endif /* OOMSIM_RESULTS_CALIBRATE_H */
