/* calibrate.c - `oomsim calibrate PLAN [-o DIR] [-j N] [-r N] [--seed S]
 * [--max-replications N] [--max-evaluations N] [--holdout]` (docs/calibration.md): the unknowns of the plan's
 * `calibrate` block fitted to its field block (results/calibrate.c), and
 * the fit told as a table: each unknown with its interval, each field entry
 * before and after beside the observed rate, the likelihood and the
 * goodness of fit.
 *
 * In an MPI job every rank runs the same fit (each plan run's replications
 * spread over the ranks, results/calibrate_run.c); rank 0 alone reads the
 * checkpoint, writes it and the -o files, and speaks: the other ranks'
 * output goes to /dev/null, and they hear of every failure
 * (sim_ranks_agree). */
#include "cli.h"
#include "results/calibrate.h"
#include "scenarios/scenarios.h"

#include <fcntl.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef struct cal_opts {
    const char *scenario, *dir, *checkpoint, *resume;
    unsigned long long threads, reps, seed, budget, max_reps;
    int has_reps, has_seed, holdout;
} cal_opts;

#define CO(field) offsetof(cal_opts, field)
static const cli_opt cal_table[] = {
    {"-o", NULL, CLI_OPT_FILE, CO(dir), CLI_NOWHERE, 0, 0, NULL, NULL, 0,
     "  -o DIR     also write DIR/calibration.json, DIR/report.html with the plot, and each\n"
     "             fitted phone as DIR/devices/NAME.yaml for the next plan\n"},
    {"-j", NULL, CLI_OPT_COUNT, CO(threads), CLI_NOWHERE, 1, 256, NULL,
     "-j needs a thread count from 1 to 256, got '%s'", 0,
     "  -j N       threads (1 to 256); the fit is the same for any N\n"},
    {"-r", NULL, CLI_OPT_COUNT, CO(reps), CO(has_reps), 1, 10000000, NULL,
     "-r needs a count from 1 to 10000000, got '%s'", 0,
     "  -r N       replications of the first evaluations (default: the plan's); they grow\n"
     "             as the fit needs, up to --max-replications\n"},
    {"--seed", NULL, CLI_OPT_COUNT, CO(seed), CO(has_seed), 0, ~0ull, NULL,
     "--seed needs a non-negative integer, got '%s'", 0,
     "  --seed S   the seed of every evaluation (default: the plan's)\n"},
    {"--max-replications", NULL, CLI_OPT_COUNT, CO(max_reps), CLI_NOWHERE, 1, 160000000ull,
     NULL, "--max-replications needs a count from 1 to 160000000, got '%s'", 0,
     "  --max-replications N  the most the replications grow to (default 16 times\n"
                    "             the first)\n"},
    {"--checkpoint", NULL, CLI_OPT_FILE, CO(checkpoint), CLI_NOWHERE, 0, 0, NULL,
     "--checkpoint needs a file", 0,
     "  --checkpoint FILE  write the plan runs done to FILE after each one\n"},
    {"--resume", NULL, CLI_OPT_FILE, CO(resume), CLI_NOWHERE, 0, 0, NULL,
     "--resume needs a file", 0,
     "  --resume FILE  replay the plan runs of that checkpoint, then go on: the same fit,\n"
     "             to the byte, as the command uninterrupted\n"},
    {"--holdout", NULL, CLI_OPT_FLAG, CO(holdout), CLI_NOWHERE, 0, 0, NULL, NULL, 0,
     "  --holdout  then refit leaving out each field entry in turn and predict it: did its\n"
     "             observed rate fall inside the prediction's interval?\n"},
    {"--max-evaluations", NULL, CLI_OPT_COUNT, CO(budget), CLI_NOWHERE, 10, 100000, NULL,
     "--max-evaluations needs a count from 10 to 100000, got '%s'", 0,
     "  --max-evaluations N  points run at most (default 400; a stage's design is one\n"
        "             plan run of its points); a fit that needs more stops,\n"
        "             says where, and exits 3\n"},
    CLI_HELP_OPT,
};

const cli_cmd cli_calibrate_cmd = {
    .name = "calibrate",
    .usage = "usage: oomsim calibrate PLAN [-o DIR] [-j N] [-r N] [--seed S]\n"
             "                        [--max-replications N] [--max-evaluations N] [--holdout]\n"
             "                        [--checkpoint FILE] [--resume FILE]\n"
             "  the device values the plan's calibrate block names, fitted to its field\n"
             "  block's observed rates (docs/calibration.md)\n",
    .opts = cal_table,
    .nopts = sizeof cal_table / sizeof *cal_table,
    .unexpected = "unexpected argument '%s'",
    .positional = CO(scenario),
    .positionals = 1,
};

/* The entries' column: as wide as the longest name, 20 at least. */
static int label_width(const res_calibration *c)
{
    int w = 20;
    for (unsigned e = 0; e < c->nentries; e++) {
        char name[MDL_NAME_MAX + 16];
        res_cal_entry_label(&c->e[e], name, sizeof name);
        w = (int)strlen(name) > w ? (int)strlen(name) : w;
    }
    return w;
}

static void print_fit(const scn_scenario *s, const res_calibration *c)
{
    unsigned bg = 0, w = (unsigned)label_width(c);
    for (unsigned e = 0; e < c->nentries; e++)
        bg += c->e[e].background != 0;
    printf("calibrate %s: %u unknown%s against %u field entr%s", s->name, c->nu,
           c->nu == 1 ? "" : "s", c->nentries - bg, c->nentries - bg == 1 ? "y" : "ies");
    if (bg > 0)
        printf(" (%u rates: %u background)", c->nentries, bg);
    printf(", %u points in %u plan runs, the last at %llu replications\n", c->evaluations,
           c->plan_runs, (unsigned long long)c->replications);
    printf("\n%-44s %12s %12s %27s\n", "unknown", "start", "fitted", "95 % interval");
    for (unsigned j = 0; j < c->nu; j++) {
        const res_cal_unknown *u = &c->u[j];
        mdl_knob_unit unit = mdl_knob_unit_of(s->fit[j].knob);
        char a[32], b[32], lo[32], hi[32];
        res_cal_value(a, sizeof a, unit, u->start);
        res_cal_value(b, sizeof b, unit, u->fitted);
        res_cal_value(lo, sizeof lo, unit, u->lo);
        res_cal_value(hi, sizeof hi, unit, u->hi);
        if (!u->identifiable)
            printf("%-44s %12s %12s   not identifiable from these rates (left at its start)\n",
                   s->fit[j].key, a, "-");
        else
            printf("%-44s %12s %12s %12s .. %-12s%s\n", s->fit[j].key, a, b, lo, hi,
                   u->at_bound < 0   ? " at its lower bound: the rates ask for less"
                   : u->at_bound > 0 ? " at its upper bound: the rates ask for more"
                                     : "");
    }
    for (unsigned i = 0; i < c->nu; i++)
        for (unsigned k = i + 1; k < c->nu; k++)
            if (c->u[i].identifiable && c->u[k].identifiable && fabs(c->corr[i][k]) >= 0.9)
                printf("  %s and %s trade off (a ridge: correlation %.2f): the rates fix a "
                       "combination of the two, not each\n", s->fit[i].key, s->fit[k].key,
                       c->corr[i][k]);
    printf("\n%-*s %22s %28s %28s\n", (int)w, "field entry", "observed (per day)", "before",
           "after");
    for (unsigned e = 0; e < c->nentries; e++) {
        const res_cal_entry *x = &c->e[e];
        char name[MDL_NAME_MAX + 16];
        res_cal_entry_label(x, name, sizeof name);
        printf("%-*s %6.2f%% [%5.2f, %5.2f] %8.2f%% [%5.2f, %5.2f]     %8.2f%% [%5.2f, %5.2f]\n",
               (int)w, name, 100 * x->observed, 100 * x->observed_ci.lo, 100 * x->observed_ci.hi,
               100 * x->before, 100 * x->before_ci.lo, 100 * x->before_ci.hi, 100 * x->after,
               100 * x->after_ci.lo, 100 * x->after_ci.hi);
    }
    printf("\nlog-likelihood %.2f at the start, %.2f at the fit; deviance %.2f on %u degree%s "
           "of freedom", c->loglik_start, c->loglik, c->deviance, c->df, c->df == 1 ? "" : "s");
    if (isnan(c->gof_p))
        printf(" (no degree left for a goodness-of-fit test)\n");
    else
        printf(", p = %.3g%s\n", c->gof_p, c->gof_p < 0.05 ? ": the model does not fit these "
                                                             "rates at any value in the bounds"
                                                           : "");
    printf("the simulation's noise on the predicted rates: %.2f of the observed rates' (target "
           "0.1%s)\n", c->noise_share, c->noise_share > 0.1 ? "; more replications (-r, "
                                                             "--max-replications) would narrow "
                                                             "the fit" : "");
}

/* One field entry refitted without it and predicted: SIM_OK with
 * *fitted 0 when nothing was left to fit on, else its rates (visible,
 * background) and their intervals. */
static int refit_without(const res_cal_ctl *ctl, const scn_scenario *s, const res_plan *plan,
                         const res_calibration *whole, const res_cal_entry *x,
                         res_calibration *c, int *fitted, double rate[2], res_interval ci[2],
                         sim_error *err)
{
    const mdl_field *e = &plan->field[x->field];
    sim_error why;
    sim_error_clear(&why);
    int frc = res_calibrate_without(plan, e, s->fit, s->nfit, ctl, c, &why);
    *fitted = 0;
    if (frc == SIM_EINPUT && c->nentries == 0)
        return SIM_OK;
    if (frc != SIM_OK)
        return sim_error_set(err, frc, "%s", why.msg);
    if (!c->converged)
        return sim_error_set(err, SIM_ELIMIT, "--holdout: the refit without %s %s", x->device,
                             c->missed >= 0 ? "is not a fit (a check run at it missed the "
                                              "fit's surface)"
                                            : "did not finish");
    *fitted = 1;
    return res_calibrate_predict(plan, s->fit, c, e, ctl, whole->replications, rate, ci, err);
}

/* --holdout: each entry the plan's devices are held against, left out of a
 * refit (its two rates at once), then predicted at the refit's values (at
 * the fit's final replications). */
static int holdout(const res_cal_ctl *ctl, const scn_scenario *s, const res_plan *plan,
                   const res_calibration *whole, res_cal_holdout *rows, unsigned *nrows,
                   sim_error *err)
{
    int wd = label_width(whole);
    printf("\nheld out: each entry refitted without it, then predicted\n%-*s %22s %28s  %s\n",
           wd, "field entry", "observed (per day)", "predicted without it", "inside");
    res_calibration *c = calloc(1, sizeof *c);
    if (c == NULL)
        return sim_error_set(err, SIM_ENOMEM, "out of memory");
    int rc = SIM_OK, fitted = 0;
    double rate[2] = {0, 0};
    res_interval ci[2];
    for (unsigned k = 0; rc == SIM_OK && k < whole->nentries; k++) {
        const res_cal_entry *x = &whole->e[k];
        if (k == 0 || whole->e[k - 1].field != x->field) /* the entry's rates follow it */
            rc = refit_without(ctl, s, plan, whole, x, c, &fitted, rate, ci, err);
        if (rc != SIM_OK)
            break;
        res_cal_holdout *h = &rows[(*nrows)++];
        char name[MDL_NAME_MAX + 16];
        res_cal_entry_label(x, name, sizeof name);
        *h = (res_cal_holdout){.entry = k};
        if (!fitted) {
            printf("%-*s   nothing left to fit on without it\n", wd, name);
            continue;
        }
        const res_interval *w = &ci[x->background];
        int inside = x->observed >= w->lo && x->observed <= w->hi;
        h->fitted = 1, h->predicted = rate[x->background], h->ci = *w, h->inside = inside;
        printf("%-*s %6.2f%% [%5.2f, %5.2f] %8.2f%% [%5.2f, %5.2f]     %s\n", wd, name,
               100 * x->observed, 100 * x->observed_ci.lo, 100 * x->observed_ci.hi,
               100 * h->predicted, 100 * w->lo, 100 * w->hi, inside ? "yes" : "no");
    }
    free(c);
    return rc;
}

/* The date of the run (UTC) for the profiles' comments; SOURCE_DATE_EPOCH's
 * when it is set, for files that are the same bytes from run to run. */
static void run_date(char *out, size_t n)
{
    const char *epoch = getenv("SOURCE_DATE_EPOCH");
    char *end = NULL;
    long long e = epoch != NULL ? strtoll(epoch, &end, 10) : 0;
    time_t now = epoch != NULL && end != epoch && *end == '\0' && e >= 0 ? (time_t)e
                                                                         : time(NULL);
    struct tm tm;
    if (gmtime_r(&now, &tm) == NULL || strftime(out, n, "%Y-%m-%d", &tm) == 0)
        snprintf(out, n, "an unknown date");
}

/* Device d's calibrated profile: the plan's text with each identifiable
 * unknown that names it (or every device) at its fit, the fit told in the
 * comments above it and in `measured`.  *yaml NULL when nothing on it was
 * fitted. */
static int profile(const scn_scenario *s, const res_calibration *c, unsigned d,
                   const char *date, char **yaml, sim_error *err)
{
    const mdl_device *dev = &s->devices[d];
    scn_fitted v[MDL_UNKNOWNS_MAX];
    char src[MDL_UNKNOWNS_MAX][200];
    unsigned n = 0;
    sim_text h = SIM_TEXT_INIT;
    sim_text_printf(&h, "# %s, calibrated: oomsim calibrate on %s fitted the values below to "
                    "the rates\n# the fleet observed (plan %s, its field block:", dev->name, date,
                    s->name);
    for (unsigned e = 0; e < c->nentries; e++)
        if (!c->e[e].background) /* its visible rate's row: the entry once */
            sim_text_printf(&h, "%s %s, %llu users", e ? ";" : "", c->e[e].device,
                            (unsigned long long)c->e[e].users);
    sim_text_printf(&h, "),\n# the last evaluations at %llu replications.\n",
                    (unsigned long long)c->replications);
    for (unsigned j = 0; j < c->nu; j++) {
        const mdl_unknown *u = &s->fit[j];
        const res_cal_unknown *x = &c->u[j];
        if (u->device[0] != '\0' && strcmp(u->device, dev->name) != 0)
            continue;
        mdl_knob_unit unit = mdl_knob_unit_of(u->knob);
        char was[32], fit[32], lo[32], hi[32];
        double start = x->start;
        mdl_knob_get(dev, u->knob, &start, err); /* this device's own: the loader checked it */
        res_cal_value(was, sizeof was, unit, start);
        res_cal_value(fit, sizeof fit, unit, x->fitted);
        res_cal_value(lo, sizeof lo, unit, x->lo);
        res_cal_value(hi, sizeof hi, unit, x->hi);
        if (!x->identifiable) {
            sim_text_printf(&h, "# %s: not identifiable from these rates, left at %s\n",
                            mdl_knob_path(u->knob), was);
            continue;
        }
        sim_text_printf(&h, "# %s: %s, 95 %% interval [%s, %s] (was %s)%s\n",
                        mdl_knob_path(u->knob), fit, lo, hi, was,
                        x->at_bound ? ", at a bound of the fit: the rates ask for a value past it"
                                    : "");
        snprintf(src[n], sizeof src[n], "%s %s, 95 %% interval [%s, %s], oomsim calibrate %s",
                 mdl_knob_path(u->knob), fit, lo, hi, date);
        v[n] = (scn_fitted){u->knob, x->fitted, src[n]};
        n++;
    }
    sim_text_printf(&h, "# Every other value is as the plan loaded it (docs/calibration.md).\n");
    char *header = sim_text_done(&h);
    *yaml = NULL;
    int rc = SIM_OK;
    if (header == NULL)
        rc = sim_error_set(err, SIM_ENOMEM, "out of memory");
    else if (n > 0)
        rc = scn_device_fitted(s, d, v, n, header, yaml, err);
    free(header);
    return rc;
}

/* -o DIR: calibration.json, report.html with the plot (calibration.svg
 * too), and each device's calibrated profile as devices/NAME.yaml; all or
 * nothing. */
static int write_dir(const char *dir, const scn_scenario *s, const res_calibration *c,
                     const res_cal_holdout *rows, unsigned nrows)
{
    cli_file f[3 + SCN_PROFILES_MAX];
    char names[SCN_PROFILES_MAX][MDL_NAME_MAX + 16];
    unsigned nf = 0;
    sim_error err;
    sim_error_clear(&err);
    size_t svg_len = 0;
    char *svg = res_plot_available(&err) == SIM_OK ? res_plot_calibration(c, &svg_len) : NULL;
    sim_error_clear(&err); /* no plot: the page without it */
    char *doc = res_calibration_json(c, s->fit, rows, nrows);
    char *page = res_calibration_html(s->name, c, s->fit, rows, nrows, svg, svg_len);
    int rc = doc != NULL && page != NULL ? SIM_OK
                                         : sim_error_set(&err, SIM_ENOMEM, "out of memory");
    f[nf++] = (cli_file){"calibration.json", doc, doc != NULL ? strlen(doc) : 0};
    f[nf++] = (cli_file){"report.html", page, page != NULL ? strlen(page) : 0};
    if (svg != NULL)
        f[nf++] = (cli_file){"calibration.svg", svg, svg_len};
    char date[32];
    run_date(date, sizeof date);
    for (unsigned d = 0; rc == SIM_OK && d < s->ndevices; d++) {
        char *yaml;
        if ((rc = profile(s, c, d, date, &yaml, &err)) != SIM_OK || yaml == NULL)
            continue;
        snprintf(names[d], sizeof names[d], "devices/%s.yaml", s->devices[d].name);
        f[nf++] = (cli_file){names[d], yaml, strlen(yaml)};
    }
    int status = rc == SIM_OK ? cli_write_files(dir, f, nf, cli_interrupt_flag())
                              : cli_report(&err);
    for (unsigned k = 0; k < nf; k++)
        free((char *)(uintptr_t)f[k].text);
    return status;
}

/* What the fits report to as they run: the progress bar, and the
 * checkpoint (calibrate.h's log) with the file it is written to. */
typedef struct cal_run {
    cli_progress bar;
    uint64_t bar_total;         /* the replications of the plan run the bar shows */
    const char *checkpoint;     /* NULL: none */
    unsigned written;           /* the runs the checkpoint file holds */
    uint64_t digest;            /* the plan and the options the runs depend on */
    res_cal_log log;
} cal_run;

/* Each plan run its own bar, as `run` shows one: a run that starts
 * restarts it (its rate and time left, its second before it shows). */
static void cal_progress(void *ctx, uint64_t done, uint64_t total)
{
    cal_run *r = ctx;
    if (done < r->bar.done || total != r->bar_total) {
        cli_progress_erase(&r->bar);
        cli_progress_start(&r->bar, sim_ranks_size());
        r->bar_total = total;
    }
    cli_progress_show(&r->bar, done, total);
}

/* After each plan run: the log written to the checkpoint file, whole or
 * not at all (a temporary name, then renamed). */
static int cal_logged(void *ctx, const res_cal_log *log, sim_error *err)
{
    cal_run *r = ctx;
    char *text = res_cal_log_json(log, r->digest);
    if (text == NULL)
        return sim_error_set(err, SIM_ENOMEM, "out of memory writing the checkpoint");
    sim_out *o = NULL;
    int rc = cli_put_text(r->checkpoint, text, strlen(text), &o, err);
    if (rc == SIM_OK)
        rc = sim_out_commit(&o, 1, err);
    sim_out_free(o);
    free(text);
    if (rc == SIM_OK)
        r->written = log->n;
    return rc == SIM_OK ? SIM_OK : SIM_EIO;
}

/* The plan with the command's options, its calibrate block checked. */
static int load(const cal_opts *o, scn_scenario *s, sim_error *err)
{
    /* before the fit, not after */
    int rc = o->dir != NULL && sim_ranks_rank() == 0 ? cli_check_dir(o->dir, err) : SIM_OK;
    if ((rc = sim_ranks_agree(rc, err)) != SIM_OK)
        return rc;
    int mine = cli_load_scenario(o->scenario, s, err);
    if ((rc = sim_ranks_agree(mine, err)) != SIM_OK) {
        if (mine == SIM_OK)
            scn_scenario_release(s);
        return rc;
    }
    if (!s->calibrate)
        rc = sim_error_set(err, SIM_EINPUT, "%s: the plan has no calibrate block: nothing to "
                           "fit (docs/calibration.md)", o->scenario != NULL ? o->scenario
                                                                             : "the plan");
    if ((rc = sim_ranks_agree(rc, err)) != SIM_OK) {
        scn_scenario_release(s);
        return rc;
    }
    if (o->has_reps)
        s->replications = o->reps;
    if (o->has_seed)
        for (unsigned i = 0; i < s->ncells; i++)
            s->cells[i].seed = o->seed;
    return SIM_OK;
}

/* The checkpoint to go on from (--resume) into r->log. */
static int resume(const cal_opts *o, cal_run *r, sim_error *err)
{
    char *text = NULL;
    size_t len = 0;
    int rc = sim_read_file(o->resume, (size_t)32 << 20, &text, &len, err);
    if (rc == SIM_OK)
        rc = res_cal_log_parse(text, len, o->resume, r->digest, &r->log, err);
    free(text);
    return rc;
}

/* The fit printed and, as asked, held out and written; or why it is not a
 * fit (exit 3). */
static int report(const cal_opts *o, const scn_scenario *s, const res_plan *plan,
                  const res_cal_ctl *ctl, const res_calibration *c, sim_error *err)
{
    res_cal_holdout rows[RES_CAL_ENTRIES_MAX];
    unsigned nrows = 0;
    print_fit(s, c);
    if (c->missed >= 0) {
        const res_cal_entry *x = &c->e[c->missed];
        char name[MDL_NAME_MAX + 16];
        res_cal_entry_label(x, name, sizeof name);
        fprintf(stderr, "oomsim calibrate: at the fitted values a check run gives %s %.2f%% a "
                "day where the fit's smooth surface predicted %.2f%%: the rate jumps with "
                "these unknowns faster than the fit can follow; the figures above are not a "
                "fit (narrow the bounds to one side of the jump, or fit another value)\n",
                name, 100 * x->after, 100 * c->missed_rate);
        return CLI_FAILURE;
    }
    if (!c->converged) {
        fprintf(stderr, "oomsim calibrate: the fit did not finish within %llu points: the "
                "figures above are where it stopped, not a fit (--max-evaluations)\n",
                o->budget);
        return CLI_FAILURE;
    }
    int rc = o->holdout ? holdout(ctl, s, plan, c, rows, &nrows, err) : SIM_OK;
    if (rc == SIM_ELIMIT) { /* a refit that is not a fit: as the fit's own, exit 3 */
        fprintf(stderr, "oomsim calibrate: %s\n", err->msg);
        return CLI_FAILURE;
    }
    if (rc != SIM_OK)
        return rc == SIM_EINTR ? CLI_INTERRUPTED : cli_report(err);
    return o->dir != NULL && sim_ranks_rank() == 0 ? write_dir(o->dir, s, c, rows, nrows) : CLI_OK;
}

/* The fit failed or was interrupted: says so; the status. */
static int failed(int rc, const sim_error *err, const cal_opts *o, const cal_run *r)
{
    if (rc != SIM_EINTR)
        return cli_report(err);
    const char *sig = cli_signal_name(*cli_interrupt_flag());
    if (r->written > 0)
        fprintf(stderr, "oomsim: interrupted by %s: %s holds the first %u plan runs; continue "
                "with --resume %s\n", sig, r->checkpoint, r->written, r->checkpoint);
    else if (o->resume != NULL)
        fprintf(stderr, "oomsim: interrupted by %s before a new plan run was written: %s is "
                "still where to go on from\n", sig, o->resume);
    else
        fprintf(stderr, "oomsim: interrupted by %s: nothing written\n", sig);
    return CLI_INTERRUPTED;
}

/* A rank other than 0: its output to /dev/null (were that not open, it
 * would only repeat rank 0's). */
static void quiet(void)
{
    int fd = open("/dev/null", O_WRONLY);
    if (fd < 0)
        return;
    fflush(stdout);
    fflush(stderr);
    dup2(fd, STDOUT_FILENO);
    dup2(fd, STDERR_FILENO);
    close(fd);
}

int cli_calibrate(int argc, char **argv)
{
    if (sim_ranks_rank() != 0)
        quiet();
    cal_opts o = {NULL, NULL, NULL, NULL, cli_default_threads(), 0, 0, 400, 0, 0, 0, 0};
    int status = cli_parse(&cli_calibrate_cmd, argc, argv, &o);
    if (status != CLI_OK)
        return status == CLI_DONE ? CLI_OK : status;
    sim_error err;
    sim_error_clear(&err);
    scn_scenario s;
    if (load(&o, &s, &err) != SIM_OK)
        return cli_report(&err);
    cal_run *r = calloc(1, sizeof *r);
    res_calibration *c = calloc(1, sizeof *c);
    res_plan plan;
    const char **labels = NULL;
    int rc = r != NULL && c != NULL ? cli_plan_of(&s, &plan, &labels, &err)
                                    : sim_error_set(&err, SIM_ENOMEM, "out of memory");
    rc = sim_ranks_agree(rc, &err);
    if (rc == SIM_OK) {
        /* what the runs depend on beyond the plan's files */
        uint64_t opts[4] = {s.replications, o.has_seed ? o.seed : ~0ull, o.max_reps, o.budget};
        r->digest = sim_digest(s.digest, opts, sizeof opts);
        r->checkpoint = o.checkpoint;
        /* an MPI job's ranks ask for the same runs, or none runs */
        rc = sim_ranks_same(sim_digest(r->digest, &o.holdout, sizeof o.holdout),
                            "the plan (scenario text, its includes) or the fit's options (-r, "
                            "--seed, --max-replications, --max-evaluations, --holdout)", &err);
    }
    if (rc == SIM_OK) {
        cli_progress_start(&r->bar, sim_ranks_size());
        cli_interrupt_catch(0);
        plan.stop = cli_interrupt_flag();
    }
    if (rc == SIM_OK && o.resume != NULL) /* rank 0 reads it, and replays it to the others */
        rc = sim_ranks_agree(sim_ranks_rank() == 0 ? resume(&o, r, &err) : SIM_OK, &err);
    res_cal_ctl ctl = {(unsigned)o.threads, (unsigned)o.budget, o.max_reps, cal_progress, r,
                       NULL, o.checkpoint != NULL ? cal_logged : NULL};
    if (rc == SIM_OK) {
        ctl.log = o.checkpoint != NULL || o.resume != NULL ? &r->log : NULL;
        rc = res_calibrate(&plan, s.fit, s.nfit, &ctl, c, &err);
        cli_progress_erase(&r->bar);
    }
    status = rc == SIM_OK ? report(&o, &s, &plan, &ctl, c, &err) : failed(rc, &err, &o, r);
    if (status == CLI_INTERRUPTED && rc == SIM_OK)
        status = failed(SIM_EINTR, &err, &o, r);
    if (r != NULL)
        res_cal_log_free(&r->log);
    free(r);
    free(c);
    free(labels);
    scn_scenario_release(&s);
    return cli_interrupted_status(status);
}
