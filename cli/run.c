/* run.c - `oomsim run [SCENARIO.yaml] [-o DIR] [-r N] [--seed S] [-j THREADS]
 * [--format table|json|csv]` (docs/results.md). */
#define _GNU_SOURCE /* sched_getaffinity */
#include "cli.h"
#include "results/results.h"
#include "replay/replay.h"
#include "scenarios/scenarios.h"

#include <errno.h>
#include <stddef.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

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

double cli_run_seconds(const scn_scenario *s, unsigned threads)
{
    return scn_events_total(s) / (CLI_EVENTS_PER_SECOND * (threads > 0 ? threads : 1));
}

/* The default -j: the CPUs this process may run on (taskset, cgroups, an
 * MPI launcher's binding), and in an MPI job no more than its share of the
 * machine's online CPUs among the job's ranks there. */
unsigned long long cli_default_threads(void)
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

static const char *const formats[] = {"table", "json", "csv", NULL};

/* The messages name the limits. */
_Static_assert(SCN_REPLICATIONS_MAX == 10000000, "-r's message names 10000000");

#define RUN(field) offsetof(cli_run_opts, field)
static const cli_opt run_opts[] = {
    {"-o", NULL, CLI_OPT_TEXT, RUN(dir), CLI_NOWHERE, 0, 0, NULL, "-o needs a directory", 0,
     "  -o DIR     also write DIR/results.json, DIR/cells.csv, the SVG plots and\n"
     "             DIR/report.html (docs/reports.md)\n"},
    {"--timeline", NULL, CLI_OPT_COUNT, RUN(timeline), RUN(has_timeline), 0,
     SCN_REPLICATIONS_MAX - 1, NULL, "--timeline needs a replication number, got '%s'", 0,
     "  --timeline K  the replication the timeline plots show (default: the first)\n"},
    {"-r", NULL, CLI_OPT_COUNT, RUN(reps), RUN(has_reps), 1, SCN_REPLICATIONS_MAX, NULL,
     "-r needs a count from 1 to 10000000, got '%s'", 0,
     "  -r N       replications per cell (overrides the scenario's)\n"},
    {"--seed", NULL, CLI_OPT_COUNT, RUN(seed), RUN(has_seed), 0, INT64_MAX, NULL,
     "--seed needs a non-negative integer, got '%s'", 0,
     "  --seed S   seed (overrides the scenario's)\n"},
    {"-j", NULL, CLI_OPT_COUNT, RUN(threads), CLI_NOWHERE, 1, 256, NULL,
     "-j needs a thread count from 1 to 256, got '%s'", 0,
     "  -j N       threads (default: the CPUs it may use; results do not depend on it)\n"},
    {"--format", NULL, CLI_OPT_CHOICE, RUN(format), CLI_NOWHERE, 0, 0, formats,
     "--format is table, json or csv, got '%s'", 0,
     "  --format   what to print: table (default), json or csv\n"},
    {"--checkpoint", NULL, CLI_OPT_FILE, RUN(checkpoint), CLI_NOWHERE, 0, 0, NULL,
     "--checkpoint needs a file", 0,
     "  --checkpoint FILE  write the run's state to FILE every 60 s and when\n"
     "             SIGINT, SIGTERM or SIGUSR1 comes (then stop); removed once the\n"
     "             results are written (docs/results.md, checkpoints)\n"},
    {"--checkpoint-period", NULL, CLI_OPT_SECONDS, RUN(period), RUN(has_period), 0, 1000000,
     NULL, "--checkpoint-period needs seconds from 0 to 1000000, got '%s'", 0,
     "  --checkpoint-period S  seconds between checkpoints (default 60; 0: after\n"
     "             every round of replications)\n"},
    {"--headroom", NULL, CLI_OPT_FLAG, RUN(headroom), CLI_NOWHERE, 0, 0, NULL, NULL, 0,
     "  --headroom  also find, per cell, how much more memory the candidate may take\n"
     "             and still meet the target: 10 more runs of the plan, each cell's\n"
     "             memory scaled, the same draws at every scale (docs/devices.md)\n"},
    {"--resume", NULL, CLI_OPT_FILE, RUN(resume), CLI_NOWHERE, 0, 0, NULL,
     "--resume needs a file", 0,
     "  --resume FILE  continue from that checkpoint: the same results, to the\n"
     "             byte, as the run uninterrupted\n"},
    CLI_HELP_OPT,
};

const cli_cmd cli_run_cmd = {
    .name = "run",
    .usage = "usage: oomsim run [SCENARIO.yaml | CATALOG-NAME] [-o DIR] [-r N] [--seed S]\n"
        "                  [-j THREADS] [--format table|json|csv]\n"
        "                  [--checkpoint FILE [--checkpoint-period S]] [--resume FILE]\n"
        "  With no scenario, runs the shipped default capacity plan.\n",
    .opts = run_opts,
    .nopts = sizeof run_opts / sizeof *run_opts,
    .unexpected = "unknown option '%s'",
    .extra = "one scenario at a time; '%s' is extra",
    .positional = RUN(scenario),
    .positionals = 1,
    .dash_is_positional = 1,
    .speaks = speaks,
    .message_max = 256,
};

static int parse(int argc, char **argv, cli_run_opts *o)
{
    memset(o, 0, sizeof *o);
    o->format = "table";
    o->threads = cli_default_threads();
    o->period = 60;
    int rc = cli_parse(&cli_run_cmd, argc, argv, o);
    if (rc == CLI_OK && o->headroom && sim_ranks_size() > 1)
        return speaks() ? cli_usage_error("run", "--headroom runs on one rank, not over MPI")
                        : CLI_USAGE;
    if (rc != CLI_OK || !o->has_period || o->checkpoint != NULL)
        return rc;
    return speaks() ? cli_usage_error("run", "--checkpoint-period goes with --checkpoint FILE")
                    : CLI_USAGE;
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
        return sim_error_set(err, SIM_ENOTFOUND, "%s: no such file, and no catalog scenario "
                             "of that name (oomsim catalog lists them)", arg);
    }
    /* a missing file is invalid input, as a missing catalog name is */
    int rc = scn_scenario_load(arg, s, err);
    if (rc == SIM_EIO && stat(arg, &st) != 0 && errno == ENOENT)
        err->code = rc = SIM_ENOTFOUND;
    return rc;
}

/* The results of a run or a replay: printed as --format says and, with
 * -o, written with the plots and the report, all the files or none. */
int cli__emit(const cli_run_opts *o, const res_plan *plan, const res_result *r)
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
        sim_error err;
        sim_error_clear(&err);
        uint64_t rep = o->has_timeline ? o->timeline : plan->first_replication;
        if (res_figures(plan, r, rep, &figs, &nfigs, &err) != SIM_OK)
            status = err.code == SIM_ENOMEM ? (fprintf(stderr, "oomsim: %s\n", err.msg),
                                               CLI_FAILURE)
                                            : cli_report(&err);
        if (status == CLI_OK && (html = res_report_html(plan, r, figs, nfigs)) == NULL) {
            fprintf(stderr, "oomsim: out of memory writing the report\n");
            status = CLI_FAILURE;
        }
    }
    int written = CLI_OK;
    if (status == CLI_OK && o->dir != NULL) {
        /* all the files or none: an interruption or a failure leaves none */
        unsigned njson = 0;
        for (unsigned k = 0; k < nfigs; k++)
            njson += figs[k].json != NULL;
        unsigned nfiles = nfigs + njson + 3;
        cli_file *files = malloc(sizeof *files * nfiles);
        if (files == NULL) {
            fprintf(stderr, "oomsim: out of memory writing the results\n");
            status = CLI_FAILURE;
        } else {
            files[0] = (cli_file){"results.json", json, strlen(json)};
            files[1] = (cli_file){"cells.csv", csv, strlen(csv)};
            unsigned at = 2;
            for (unsigned k = 0; k < nfigs; k++) {
                files[at++] = (cli_file){figs[k].name, figs[k].svg, figs[k].len};
                if (figs[k].json != NULL) /* the timeline for the Perfetto UI */
                    files[at++] = (cli_file){figs[k].json_name, figs[k].json, figs[k].json_len};
            }
            files[nfiles - 1] = (cli_file){"report.html", html, strlen(html)};
            written = cli_write_files(o->dir, files, nfiles, cli_interrupt_flag());
            free(files);
        }
    }
    /* a run whose files could not be written still shows its results */
    if (status == CLI_OK && written != CLI_INTERRUPTED) {
        const char *text = strcmp(o->format, "json") == 0  ? json
                           : strcmp(o->format, "csv") == 0 ? csv
                                                           : table;
        status = cli_write_stdout(text, strlen(text));
    }
    if (written != CLI_OK)
        status = written;
    free(json);
    free(csv);
    free(table);
    free(html);
    res_figures_free(figs, nfigs);
    return status;
}

/* The run failed or was interrupted: says so (rank 0), returns the status. */
static int run_failed(int rc, const sim_error *err, const cli_progress *shown,
                      const res_plan *plan)
{
    unsigned long long total = (unsigned long long)plan->replications * plan->ncells;
    if (!speaks())
        return cli_status(rc); /* rank 0 says what happened */
    const res_checkpoint *ck = plan->checkpoint;
    if (rc == SIM_EINTR && ck != NULL && ck->path != NULL) {
        if (*cli_interrupt_flag() == 0) /* the signal came to another rank */
            *cli_interrupt_flag() = ck->signal;
        fprintf(stderr, "oomsim: interrupted by %s: checkpoint written to %s after %llu of %llu "
                "replications; continue with --resume %s\n", cli_signal_name(*cli_interrupt_flag()),
                ck->path, (unsigned long long)ck->done, total, ck->path);
        return CLI_INTERRUPTED;
    }
    if (rc == SIM_EIO) /* a checkpoint that could not be written */
        return cli_output_failed(err);
    if (rc == SIM_EINTR && shown->ranks > 1) {
        /* where: "rank R: cell C (...): replication K: interrupted" */
        char where[SIM_ERROR_MSG_MAX];
        snprintf(where, sizeof where, "%s", err->msg);
        size_t n = strlen(where), tail = strlen(": interrupted");
        if (n > tail && strcmp(where + n - tail, ": interrupted") == 0)
            where[n - tail] = '\0';
        fprintf(stderr, "oomsim: interrupted: %llu of %llu replications gathered, nothing "
                "written (the first to stop: %s)\n", (unsigned long long)shown->done, total,
                where);
        return CLI_INTERRUPTED;
    }
    if (rc == SIM_EINTR) {
        fprintf(stderr, "oomsim: interrupted: %llu of %llu replications done, nothing "
                "written\n", (unsigned long long)shown->done, total);
        return CLI_INTERRUPTED;
    }
    return cli_report(err);
}

/* The plan run again at scaled memory (--headroom): *room (ncells) set on
 * r for the outputs; the exit status. */
#define HEADROOM_STEPS 10
static int headroom(const cli_run_opts *o, const res_plan *plan, res_result *r,
                    res_headroom **room)
{
    sim_error err;
    sim_error_clear(&err);
    *room = calloc(plan->ncells, sizeof **room);
    if (*room == NULL) {
        sim_error_set(&err, SIM_ENOMEM, "out of memory");
        return cli_report(&err);
    }
    if (speaks())
        fprintf(stderr, "oomsim: --headroom: %d more runs of the plan, each cell's candidate "
                "memory scaled\n", HEADROOM_STEPS);
    int rc = res_headroom_find(plan, (unsigned)o->threads, HEADROOM_STEPS, *room, &err);
    if (rc != SIM_OK)
        return cli_report(&err);
    r->headroom = *room;
    return CLI_OK;
}

/* The largest context per phone (results/context.c): for a plan with a
 * target and a candidate that generates, on one rank; *found (ncells) set
 * on r for the outputs; the exit status. */
#define CONTEXT_STEPS 12
static int largest_context(const cli_run_opts *o, const res_plan *plan, res_result *r,
                           res_context **found)
{
    int generates = 0;
    for (unsigned i = 0; i < plan->ncells && !generates; i++)
        generates = res_cell_context(&plan->cells[i]) > 0;
    if (!plan->target.set || !generates)
        return CLI_OK;
    if (sim_ranks_size() > 1) {
        if (speaks())
            fprintf(stderr, "oomsim: the largest context per phone is searched on one rank: "
                    "run without mpirun to have it\n");
        return CLI_OK;
    }
    sim_error err;
    sim_error_clear(&err);
    *found = calloc(plan->ncells, sizeof **found);
    if (*found == NULL) {
        sim_error_set(&err, SIM_ENOMEM, "out of memory");
        return cli_report(&err);
    }
    fprintf(stderr, "oomsim: the largest context meeting the target, per phone: up to %d more "
            "runs of one cell per phone\n", CONTEXT_STEPS);
    unsigned n = 0;
    int rc = res_context_find(plan, r, (unsigned)o->threads, CONTEXT_STEPS, *found, &n, &err);
    if (rc != SIM_OK) { /* the plan's own results stand: written without it */
        fprintf(stderr, "oomsim: the largest context per phone was not found (%s); the "
                "results follow without it\n", err.msg);
        return CLI_OK;
    }
    r->contexts = *found;
    r->ncontexts = n;
    return CLI_OK;
}

/* The scenario of the command line with its -r and --seed, agreed by
 * every rank of a job. */
static int load(const cli_run_opts *o, scn_scenario *s, sim_error *err)
{
    int rc = cli_load_scenario(o->scenario, s, err);
    /* an MPI job goes on only if every rank has the scenario */
    int agreed = sim_ranks_agree(rc, err);
    if (agreed != SIM_OK) {
        if (rc == SIM_OK)
            scn_scenario_release(s);
        return agreed;
    }
    if (o->has_reps)
        s->replications = o->reps;
    if (o->has_seed) {
        s->seed = o->seed;
        for (unsigned i = 0; i < s->ncells; i++)
            s->cells[i].seed = o->seed;
    }
    return SIM_OK;
}

/* A checkpoint to continue from (rank 0 reads it), and checkpoints to
 * write: then a signal asks for one rather than stopping at once.
 * SIM_OK (every rank agreed), or the error in err. */
static int setup_checkpoint(const cli_run_opts *o, res_plan *plan, res_checkpoint *ck,
                            res_resume **resume, sim_error *err)
{
    memset(ck, 0, sizeof *ck);
    *resume = NULL;
    plan->stop = cli_interrupt_flag();
    if (o->checkpoint != NULL || o->resume != NULL) {
        ck->path = o->checkpoint;
        ck->period = o->period;
        if (o->checkpoint != NULL) {
            ck->request = cli_interrupt_flag();
            plan->stop = NULL;
        }
        plan->checkpoint = ck;
    }
    if (o->resume == NULL)
        return SIM_OK;
    int rc = sim_ranks_rank() == 0 ? res_resume_load(plan, o->resume, resume, err) : SIM_OK;
    if ((rc = sim_ranks_agree(rc, err)) != SIM_OK)
        return rc;
    ck->resume = *resume;
    if (*resume != NULL && speaks()) {
        unsigned cell;
        uint64_t done;
        res_resume_where(*resume, &cell, &done);
        fprintf(stderr, "oomsim: resuming from %s: %llu of %llu replications done\n",
                o->resume, (unsigned long long)cell * plan->replications + done,
                (unsigned long long)plan->replications * plan->ncells);
    }
    return SIM_OK;
}

int cli_run(int argc, char **argv)
{
    cli_run_opts o;
    int status = parse(argc, argv, &o);
    if (status != CLI_OK)
        return status == CLI_DONE ? CLI_OK : status;
    /* caught from the start: a signal while the plan loads stops the run
     * before its first replication */
    cli_interrupt_catch(o.checkpoint != NULL);
    sim_error err;
    sim_error_clear(&err);
    scn_scenario s;
    if (load(&o, &s, &err) != SIM_OK)
        return report_once(&err);
    if (o.headroom && !s.target.set) { /* known before the run, said before it */
        sim_error_set(&err, SIM_EINPUT, "--headroom needs the plan's target (what must still "
                      "hold): the scenario has none");
        scn_scenario_release(&s);
        return report_once(&err);
    }
    /* -o DIR and the checkpoint are checked before the run, not found
     * unwritable after it */
    int dir_rc = o.dir != NULL && sim_ranks_rank() == 0 ? cli_check_dir(o.dir, &err) : SIM_OK;
    if (dir_rc == SIM_OK && o.checkpoint != NULL && sim_ranks_rank() == 0)
        dir_rc = cli_check_file("--checkpoint", o.checkpoint, &err);
    if (sim_ranks_agree(dir_rc, &err) != SIM_OK) {
        scn_scenario_release(&s);
        return report_once(&err);
    }
    res_plan plan;
    const char **labels = NULL;
    int rc = sim_ranks_agree(cli_plan_of(&s, &plan, &labels, &err), &err);
    if (rc != SIM_OK) {
        free(labels);
        scn_scenario_release(&s);
        return report_once(&err);
    }
    /* a checkpoint to continue from (rank 0 reads it), and checkpoints to
     * write: then a signal asks for one rather than stopping at once */
    res_checkpoint ck;
    res_resume *resume = NULL;
    if (setup_checkpoint(&o, &plan, &ck, &resume, &err) != SIM_OK) {
        free(labels);
        scn_scenario_release(&s);
        return report_once(&err);
    }
    /* a long run says so before it starts (an upper bound: the estimate is one) */
    double secs = cli_run_seconds(&s, (unsigned)o.threads * sim_ranks_size());
    if (secs > 10 && speaks())
        fprintf(stderr, "oomsim: this run may take up to about %.0f s on %llu thread%s (from "
                "the event estimate; most runs take less)\n", secs,
                o.threads * sim_ranks_size(), o.threads * sim_ranks_size() == 1 ? "" : "s");
    cli_progress shown;
    cli_progress_start(&shown, sim_ranks_size());
    res_result r;
    rc = res_run(&plan, (unsigned)o.threads, cli_progress_show, &shown, &r, &err);
    res_resume_free(resume);
    cli_progress_erase(&shown); /* a failed run: the bar goes before the message */
    if (rc != SIM_OK) {
        status = run_failed(rc, &err, &shown, &plan);
    } else {
        res_headroom *room = NULL;
        res_context *found = NULL;
        if (o.headroom)
            status = headroom(&o, &plan, &r, &room);
        if (status == CLI_OK)
            status = largest_context(&o, &plan, &r, &found);
        if (status == CLI_OK)
            status = speaks() ? cli__emit(&o, &plan, &r) : CLI_OK;
        free(room);
        free(found);
        res_result_free(&r);
        /* the results are out: the checkpoint has served */
        if (status == CLI_OK && o.checkpoint != NULL && speaks())
            unlink(o.checkpoint);
    }
    free(labels);
    scn_scenario_release(&s);
    return cli_interrupted_status(status);
}
