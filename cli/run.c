/* run.c - `oomsim run [SCENARIO.yaml] [-o DIR] [-r N] [--seed S] [-j THREADS]
 * [--format table|json|csv]` (spec/RESULTS.md). */
#define _GNU_SOURCE /* sched_getaffinity */
#include "cli.h"
#include "results/results.h"
#include "replay/replay.h"
#include "scenarios/scenarios.h"

#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static const char usage_text[] =
    "usage: oomsim run [SCENARIO.yaml | CATALOG-NAME] [-o DIR] [-r N] [--seed S]\n"
    "                  [-j THREADS] [--format table|json|csv]\n"
    "  With no scenario, runs the shipped default capacity plan.\n"
    "  -o DIR     also write DIR/results.json, DIR/cells.csv, the SVG plots and\n"
    "             DIR/report.html (docs/reports.md)\n"
    "  --timeline K  the replication the timeline plots show (default: the first)\n"
    "  -r N       replications per cell (overrides the scenario's)\n"
    "  --seed S   seed (overrides the scenario's)\n"
    "  -j N       threads (default: the CPUs it may use; results do not depend on it)\n"
    "  --format   what to print: table (default), json or csv\n";

/* In an MPI job only rank 0 speaks: the others parse the same arguments
 * and hear of every failure (sim_ranks_agree), so they would only repeat
 * it. */
static int speaks(void)
{
    return sim_ranks_rank() == 0;
}

/* cli_report on rank 0; the status alone elsewhere. */
static int report_once(const sim_error *err)
{
    return speaks() ? cli_report(err) : cli_status(err->code);
}

static int usage_error(const char *fmt, const char *arg)
{
    if (!speaks())
        return CLI_USAGE;
    fprintf(stderr, "oomsim run: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\n%s", usage_text);
    return CLI_USAGE;
}

/* A decimal integer in [min, max]. */
int cli_number(const char *s, unsigned long long min, unsigned long long max,
               unsigned long long *out)
{
    if (s == NULL || *s < '0' || *s > '9')
        return 0;
    errno = 0;
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno != 0 || *end != '\0' || v < min || v > max)
        return 0;
    *out = v;
    return 1;
}

typedef struct run_opts {
    const char *scenario, *dir, *format;
    int has_reps, has_seed, has_timeline;
    unsigned long long reps, seed, threads, timeline;
} run_opts;

/* The default -j: the CPUs this process may run on (taskset, cgroups, an
 * MPI launcher's binding), and in an MPI job no more than its share of the
 * machine's online CPUs among the job's ranks there. */
static unsigned long long default_threads(void)
{
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    unsigned long long n = online > 0 ? (unsigned long long)online : 1;
    cpu_set_t mask;
    if (sched_getaffinity(0, sizeof mask, &mask) == 0 && CPU_COUNT(&mask) > 0 &&
        (unsigned long long)CPU_COUNT(&mask) < n)
        n = (unsigned long long)CPU_COUNT(&mask);
    unsigned long long share = online > 0 ? (unsigned long long)online / sim_ranks_local() : 1;
    if (share < n)
        n = share;
    return n < 1 ? 1 : n > 256 ? 256 : n;
}

static int parse(int argc, char **argv, run_opts *o)
{
    memset(o, 0, sizeof *o);
    o->format = "table";
    o->threads = default_threads();
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            if (speaks())
                fputs(usage_text, stdout);
            return -1;
        } else if (strcmp(a, "-o") == 0) {
            if (v == NULL)
                return usage_error("%s needs a directory", a);
            o->dir = v;
            i++;
        } else if (strcmp(a, "-r") == 0) {
            if (!cli_number(v, 1, SCN_REPLICATIONS_MAX, &o->reps))
                return usage_error("-r needs a count from 1 to 10000000, got '%s'",
                                   v != NULL ? v : "");
            o->has_reps = 1;
            i++;
        } else if (strcmp(a, "--seed") == 0) {
            if (!cli_number(v, 0, INT64_MAX, &o->seed))
                return usage_error("--seed needs a non-negative integer, got '%s'",
                                   v != NULL ? v : "");
            o->has_seed = 1;
            i++;
        } else if (strcmp(a, "--timeline") == 0) {
            if (!cli_number(v, 0, SCN_REPLICATIONS_MAX - 1, &o->timeline))
                return usage_error("--timeline needs a replication number, got '%s'",
                                   v != NULL ? v : "");
            o->has_timeline = 1;
            i++;
        } else if (strcmp(a, "-j") == 0) {
            if (!cli_number(v, 1, 256, &o->threads))
                return usage_error("-j needs a thread count from 1 to 256, got '%s'",
                                   v != NULL ? v : "");
            i++;
        } else if (strcmp(a, "--format") == 0) {
            if (v == NULL || (strcmp(v, "table") && strcmp(v, "json") && strcmp(v, "csv")))
                return usage_error("--format is table, json or csv, got '%s'",
                                   v != NULL ? v : "");
            o->format = v;
            i++;
        } else if (a[0] == '-' && a[1] != '\0') {
            return usage_error("unknown option '%s'", a);
        } else if (o->scenario != NULL) {
            return usage_error("one scenario at a time; '%s' is extra", a);
        } else {
            o->scenario = a;
        }
    }
    return CLI_OK;
}

/* A path on disk, else a catalog scenario by name, else the default. */
int cli_load_scenario(const char *arg, scn_scenario *s, sim_error *err)
{
    if (arg == NULL)
        return scn_scenario_load_catalog(SCN_DEFAULT_SCENARIO, s, err);
    struct stat st;
    int is_name = strchr(arg, '/') == NULL && strchr(arg, '.') == NULL;
    if (stat(arg, &st) != 0 && is_name && strlen(arg) < 200) {
        char path[256];
        snprintf(path, sizeof path, "scenarios/%s.yaml", arg);
        int rc = scn_scenario_load_catalog(path, s, err);
        if (rc != SIM_ENOTFOUND)
            return rc;
        snprintf(path, sizeof path, "teach/%s.yaml", arg); /* a teaching scenario */
        rc = scn_scenario_load_catalog(path, s, err);
        if (rc != SIM_ENOTFOUND)
            return rc;
        return sim_error_set(err, SIM_EIO, "%s: no such file, and no catalog scenario of that "
                             "name (oomsim catalog lists them)", arg);
    }
    return scn_scenario_load(arg, s, err);
}

static void plan_of(const scn_scenario *s, res_plan *p)
{
    memset(p, 0, sizeof *p);
    p->name = s->name;
    p->about = s->about;
    p->seed = s->seed;
    p->replications = s->replications;
    p->horizon = s->horizon;
    p->cells = s->cells;
    p->ncells = s->ncells;
    p->digest = s->digest;
}

/* SIGINT or SIGTERM during a run: the flag stops the replications
 * (res_plan.stop) and the writing of files; a second signal ends the
 * process at once.  A signal ignored when oomsim started (nohup, a
 * background job) stays ignored.  SIGTERM is what an MPI launcher sends
 * its ranks when it aborts a job. */
static volatile sig_atomic_t interrupted;

static void on_interrupt(int sig)
{
    (void)sig;
    interrupted = 1;
}

static void catch_interrupt(void)
{
    const int sigs[] = {SIGINT, SIGTERM};
    for (size_t i = 0; i < sizeof sigs / sizeof *sigs; i++) {
        struct sigaction old;
        if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler == SIG_IGN)
            continue;
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_interrupt;
        sigemptyset(&sa.sa_mask);
        sa.sa_flags = (int)SA_RESETHAND;
        sigaction(sigs[i], &sa, NULL);
    }
}

/* Timelines are drawn for every cell of a plan of up to this many cells,
 * else for the first cell of each device and candidate. */
#define TIMELINE_CELLS_ALL 16

static int timeline_cell(const res_plan *plan, unsigned i)
{
    if (plan->ncells <= TIMELINE_CELLS_ALL || i == 0)
        return 1;
    const mdl_cell *a = &plan->cells[i - 1], *b = &plan->cells[i];
    return a->device != b->device || a->candidate != b->candidate;
}

static void free_figures(res_figure *f, unsigned n)
{
    for (unsigned i = 0; i < n; i++)
        free(f[i].svg);
    free(f);
}

/* Every plot of the report, drawn before anything is written. */
static int figures(const run_opts *o, const res_plan *plan, const res_result *r,
                   res_figure **out, unsigned *nout)
{
    sim_error err;
    sim_error_clear(&err);
    *out = NULL;
    *nout = 0;
    if (res_plot_available(&err) != SIM_OK)
        return cli_report(&err);
    unsigned pages = (plan->ncells + RES_PLOT_SERIES - 1) / RES_PLOT_SERIES;
    unsigned cap = 1 + pages + plan->ncells;
    res_figure *f = calloc(cap, sizeof *f);
    if (f == NULL) {
        fprintf(stderr, "oomsim: out of memory drawing the plots\n");
        return CLI_FAILURE;
    }
    unsigned n = 0;
    snprintf(f[n].name, sizeof f[n].name, "comparison.svg");
    snprintf(f[n].caption, sizeof f[n].caption,
             "Each cell: its peak p95, the share of replications with a process death and "
             "its Wilson 95%% interval, its latency p95.");
    f[n].svg = res_plot_comparison(plan, r, &f[n].len);
    int ok = f[n++].svg != NULL;
    for (unsigned pg = 0; ok && pg < pages; pg++) {
        unsigned first = pg * RES_PLOT_SERIES;
        unsigned count = plan->ncells - first < RES_PLOT_SERIES ? plan->ncells - first
                                                                : RES_PLOT_SERIES;
        if (pages == 1)
            snprintf(f[n].name, sizeof f[n].name, "peak-cdf.svg");
        else
            snprintf(f[n].name, sizeof f[n].name, "peak-cdf-%u.svg", pg + 1);
        snprintf(f[n].caption, sizeof f[n].caption,
                 "The distribution of the peak counted memory of cells %u to %u over %llu "
                 "replications, as a CDF (each cell's quantile at every percent).", first,
                 first + count - 1, (unsigned long long)plan->replications);
        f[n].svg = res_plot_peak_cdf(plan, r, first, count, &f[n].len);
        ok = f[n++].svg != NULL;
    }
    uint64_t rep = o->has_timeline ? o->timeline : plan->first_replication;
    int status = CLI_OK;
    for (unsigned i = 0; ok && status == CLI_OK && i < plan->ncells; i++) {
        if (!timeline_cell(plan, i))
            continue;
        res_timeline *t;
        mdl_rep m;
        if (res_timeline_run(&plan->cells[i], rep, &t, &m, &err) != SIM_OK) {
            status = cli_report(&err);
            break;
        }
        res_timeline_info info;
        res_timeline_info_get(t, &info);
        char label[256], title[600], policy[256];
        if (res_cell_label(plan, i, label, sizeof label) != SIM_OK ||
            res_policy_label(plan->policy_json[i], policy, sizeof policy) != SIM_OK) {
            res_timeline_free(t);
            ok = 0;
            break;
        }
        snprintf(title, sizeof title, "replication %llu: %s / %s / %s", (unsigned long long)rep,
                 plan->cells[i].device->name, plan->cells[i].candidate->id, policy);
        snprintf(f[n].name, sizeof f[n].name, "timeline-cell-%u.svg", i);
        snprintf(f[n].caption, sizeof f[n].caption,
                 "Cell %u (%s), replication %llu: memory by category (each column at its "
                 "highest counted moment), the kill line, stage bands, deaths and warnings. "
                 "Peak %.1f MiB counted at %.3f s; %u deaths, %llu memory warnings.",
                 i, label, (unsigned long long)rep, (double)m.peak / (1 << 20),
                 (double)info.peak_time / 1e6, m.deaths_total,
                 (unsigned long long)info.warnings);
        f[n].svg = res_plot_timeline(t, title, &f[n].len);
        res_timeline_free(t);
        ok = f[n++].svg != NULL;
    }
    if (status == CLI_OK && !ok) {
        fprintf(stderr, "oomsim: out of memory drawing the plots\n");
        status = CLI_FAILURE;
    }
    if (status != CLI_OK) {
        free_figures(f, n);
        return status;
    }
    *out = f;
    *nout = n;
    return CLI_OK;
}

static int emit(const run_opts *o, const res_plan *plan, const res_result *r)
{
    char *json = res_document_json(plan, r);
    char *csv = res_document_csv(plan, r);
    char *table = strcmp(o->format, "table") == 0 ? res_document_table(plan, r) : NULL;
    res_figure *figs = NULL;
    unsigned nfigs = 0;
    char *html = NULL;
    int status = CLI_OK;
    if (json == NULL || csv == NULL || (strcmp(o->format, "table") == 0 && table == NULL)) {
        fprintf(stderr, "oomsim: out of memory writing the results\n");
        status = CLI_FAILURE;
    }
    if (status == CLI_OK && o->dir != NULL) {
        status = figures(o, plan, r, &figs, &nfigs);
        if (status == CLI_OK && (html = res_report_html(plan, r, figs, nfigs)) == NULL) {
            fprintf(stderr, "oomsim: out of memory writing the report\n");
            status = CLI_FAILURE;
        }
    }
    if (status == CLI_OK && o->dir != NULL) {
        /* all the files or none: an interruption or a failure leaves none */
        unsigned nfiles = nfigs + 3;
        cli_file *files = malloc(sizeof *files * nfiles);
        if (files == NULL) {
            fprintf(stderr, "oomsim: out of memory writing the results\n");
            status = CLI_FAILURE;
        } else {
            files[0] = (cli_file){"results.json", json, strlen(json)};
            files[1] = (cli_file){"cells.csv", csv, strlen(csv)};
            for (unsigned k = 0; k < nfigs; k++)
                files[2 + k] = (cli_file){figs[k].name, figs[k].svg, figs[k].len};
            files[nfiles - 1] = (cli_file){"report.html", html, strlen(html)};
            status = cli_write_files(o->dir, files, nfiles, &interrupted);
            free(files);
        }
    }
    if (status == CLI_OK) {
        const char *text = strcmp(o->format, "json") == 0  ? json
                           : strcmp(o->format, "csv") == 0 ? csv
                                                           : table;
        status = cli_write_stdout(text, strlen(text));
    }
    free(json);
    free(csv);
    free(table);
    free(html);
    free_figures(figs, nfigs);
    return status;
}

/* A progress bar on stderr, only when stderr is a terminal and the run
 * has lasted a second (spec/RESULTS.md; OOMSIM_PROGRESS_AFTER sets that
 * delay in seconds): replications done, their rate and the time left;
 * redrawn when the percentage changes, erased at the end.  In an MPI job
 * rank 0 reports instead, and its stderr is the launcher's pipe, never a
 * terminal: a line at every tenth of the run past that delay. */
typedef struct bar {
    int shown;      /* percentage on screen, -1: nothing yet */
    double t0, after;
    int tty;        /* draw it (else only count) */
    unsigned ranks; /* > 1: an MPI job, progress as lines */
    uint64_t done;  /* replications done so far */
} bar;

static double seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void progress(void *ctx, uint64_t done, uint64_t total)
{
    bar *b = ctx;
    b->done = done;
    int pct = total > 0 ? (int)(done * 100 / total) : 100;
    double dt = seconds() - b->t0;
    if (b->ranks > 1) {
        if (pct / 10 == b->shown / 10 || dt < b->after || done >= total)
            return;
        b->shown = pct;
        double rate = dt > 0 ? (double)done / dt : 0;
        fprintf(stderr, "oomsim: %3d%%  %llu/%llu replications on %u ranks, %.0f/s, ETA %.0f s\n",
                pct, (unsigned long long)done, (unsigned long long)total, b->ranks, rate,
                rate > 0 ? (double)(total - done) / rate : 0.0);
        fflush(stderr);
        return;
    }
    if (!b->tty)
        return;
    if (pct == b->shown || (b->shown < 0 && dt < b->after && done < total))
        return;
    if (done >= total) {
        if (b->shown >= 0)
            fputs("\r\033[K", stderr);
        b->shown = pct;
    } else {
        b->shown = pct;
        char cells[41];
        int fill = pct * 40 / 100;
        memset(cells, '#', (size_t)fill);
        memset(cells + fill, '.', (size_t)(40 - fill));
        cells[40] = '\0';
        double rate = dt > 0 ? (double)done / dt : 0;
        fprintf(stderr, "\r[%s] %3d%%  %llu/%llu replications, %.0f/s, ETA %.0f s\033[K",
                cells, pct, (unsigned long long)done, (unsigned long long)total, rate,
                rate > 0 ? (double)(total - done) / rate : 0.0);
    }
    fflush(stderr);
}

int cli_run(int argc, char **argv)
{
    run_opts o;
    int status = parse(argc, argv, &o);
    if (status != CLI_OK)
        return status < 0 ? CLI_OK : status;
    sim_error err;
    sim_error_clear(&err);
    scn_scenario s;
    int rc = cli_load_scenario(o.scenario, &s, &err);
    /* an MPI job goes on only if every rank has the scenario */
    int agreed = sim_ranks_agree(rc, &err);
    if (agreed != SIM_OK) {
        if (rc == SIM_OK)
            scn_scenario_release(&s);
        return report_once(&err);
    }
    if (o.has_reps)
        s.replications = o.reps;
    if (o.has_seed) {
        s.seed = o.seed;
        for (unsigned i = 0; i < s.ncells; i++)
            s.cells[i].seed = o.seed;
    }
    res_plan plan;
    plan_of(&s, &plan);
    plan.policy_json = (const char *const *)NULL;
    /* one policy JSON per cell: cells cycle through the policies */
    const char **pj = malloc(sizeof *pj * (s.ncells > 0 ? s.ncells : 1));
    rc = sim_ranks_agree(pj != NULL ? SIM_OK : sim_error_set(&err, SIM_ENOMEM, "oomsim: out "
                                                             "of memory"), &err);
    if (rc != SIM_OK) {
        free(pj);
        scn_scenario_release(&s);
        return report_once(&err);
    }
    for (unsigned i = 0; i < s.ncells; i++)
        pj[i] = s.policy_json[i % s.npolicies];
    plan.policy_json = pj;
    res_result r;
    bar shown = {-1, seconds(), 1.0, isatty(STDERR_FILENO), sim_ranks_size(), 0};
    const char *after = getenv("OOMSIM_PROGRESS_AFTER");
    if (after != NULL)
        shown.after = atof(after);
    catch_interrupt();
    plan.stop = &interrupted;
    rc = res_run(&plan, (unsigned)o.threads, progress, &shown, &r, &err);
    if (shown.tty && shown.ranks == 1 && shown.shown >= 0 && shown.shown < 100)
        fputs("\r\033[K", stderr); /* a failed run: erase the bar before the message */
    if (!speaks()) {
        status = cli_status(rc); /* rank 0 says what happened and writes the results */
    } else if (rc == SIM_EINTR && shown.ranks > 1) {
        /* where: "rank R: cell C (...): replication K: interrupted" */
        size_t n = strlen(err.msg), tail = strlen(": interrupted");
        if (n > tail && strcmp(err.msg + n - tail, ": interrupted") == 0)
            err.msg[n - tail] = '\0';
        fprintf(stderr, "oomsim: interrupted: %llu of %llu replications gathered, nothing "
                "written (the first to stop: %s)\n", (unsigned long long)shown.done,
                (unsigned long long)plan.replications * plan.ncells, err.msg);
        status = CLI_INTERRUPTED;
    } else if (rc == SIM_EINTR) {
        fprintf(stderr, "oomsim: interrupted: %llu of %llu replications done, nothing "
                "written\n", (unsigned long long)shown.done,
                (unsigned long long)plan.replications * plan.ncells);
        status = CLI_INTERRUPTED;
    } else if (rc != SIM_OK) {
        status = cli_report(&err);
    } else {
        status = emit(&o, &plan, &r);
        res_result_free(&r);
    }
    free(pj);
    scn_scenario_release(&s);
    return status;
}

/* --------------------------------------------------------------- replay */

static const char replay_usage[] =
    "usage: oomsim replay TRACE --scenario SCENARIO.yaml [--replication K] [-o DIR]\n"
    "                     [-j THREADS] [--format table|json|csv]\n"
    "  a trace-driven run: request arrivals, needs and measured stage costs from the\n"
    "  trace (written by `oomsim gen`), device, policies and strategies from the\n"
    "  scenario; every cell of the trace's candidate runs once, with the device's\n"
    "  draws of replication K (default 0: use the trace's --replication)\n";

int cli_replay(int argc, char **argv)
{
    const char *trace = NULL, *scenario = NULL;
    unsigned long long rep = 0;
    run_opts o;
    memset(&o, 0, sizeof o);
    o.format = "table";
    o.threads = 1;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            fputs(replay_usage, stdout);
            return CLI_OK;
        } else if (strcmp(a, "--scenario") == 0 && v != NULL) {
            scenario = argv[++i];
        } else if (strcmp(a, "--replication") == 0 && v != NULL &&
                   cli_number(v, 0, SCN_REPLICATIONS_MAX - 1, &rep)) {
            i++;
        } else if (strcmp(a, "-o") == 0 && v != NULL) {
            o.dir = argv[++i];
        } else if (strcmp(a, "-j") == 0 && v != NULL && cli_number(v, 1, 256, &o.threads)) {
            i++;
        } else if (strcmp(a, "--format") == 0 && v != NULL &&
                   (strcmp(v, "table") == 0 || strcmp(v, "json") == 0 || strcmp(v, "csv") == 0)) {
            o.format = argv[++i];
        } else if (a[0] != '-' && trace == NULL) {
            trace = a;
        } else {
            fprintf(stderr, "oomsim replay: unexpected argument\n%s", replay_usage);
            return CLI_USAGE;
        }
    }
    if (trace == NULL || scenario == NULL) {
        fprintf(stderr, "oomsim replay: a trace and --scenario are needed\n%s", replay_usage);
        return CLI_USAGE;
    }
    sim_error err;
    sim_error_clear(&err);
    char id[TRC_TEXT_MAX] = "";
    mdl_replay probe;
    if (rpl_replay_load(trace, NULL, &probe, id, &err) != SIM_OK)
        return cli_report(&err);
    scn_scenario s;
    if (cli_load_scenario(scenario, &s, &err) != SIM_OK)
        return cli_report(&err);
    const mdl_candidate *cand = NULL;
    for (unsigned k = 0; k < s.ncandidates && cand == NULL; k++)
        if (strcmp(s.candidates[k].id, id) == 0)
            cand = &s.candidates[k];
    if (cand == NULL) {
        scn_scenario_release(&s);
        fprintf(stderr, "%s: the trace's candidate '%s' is not a candidate of %s\n", trace, id,
                scenario);
        return CLI_INPUT;
    }
    mdl_replay rp;
    int rc = rpl_replay_load(trace, cand, &rp, NULL, &err);
    if (rc != SIM_OK) {
        scn_scenario_release(&s);
        return cli_report(&err);
    }
    /* the cells of that candidate, each run once on the recording */
    mdl_cell *cells = calloc(s.ncells, sizeof *cells);
    const char **pj = calloc(s.ncells, sizeof *pj);
    unsigned n = 0;
    for (unsigned i = 0; cells != NULL && pj != NULL && i < s.ncells; i++)
        if (s.cells[i].candidate == cand) {
            cells[n] = s.cells[i];
            cells[n].replay = &rp;
            pj[n++] = s.policy_json[i % s.npolicies];
        }
    int status;
    if (cells == NULL || pj == NULL) {
        fprintf(stderr, "oomsim: out of memory\n");
        status = CLI_FAILURE;
    } else {
        res_plan plan;
        plan_of(&s, &plan);
        plan.cells = cells;
        plan.ncells = n;
        plan.policy_json = pj;
        plan.replications = 1;
        plan.first_replication = rep;
        res_result r;
        rc = res_run(&plan, (unsigned)o.threads, NULL, NULL, &r, &err);
        if (rc != SIM_OK) {
            status = cli_report(&err);
        } else {
            status = emit(&o, &plan, &r);
            res_result_free(&r);
        }
    }
    free(cells);
    free(pj);
    rpl_replay_free(&rp);
    scn_scenario_release(&s);
    return status;
}
