/* replay.c - `oomsim replay TRACE --scenario S`: a trace-driven run, with
 * request arrivals, needs and measured stage costs from a recorded session
 * and device, policies and strategies from the scenario (docs/traces.md). */
#include "cli.h"
#include "replay/replay.h"
#include "results/results.h"
#include "scenarios/scenarios.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What `oomsim replay` was asked. */
typedef struct replay_args {
    cli_run_opts o;
    const char *trace, *scenario;
    unsigned long long rep;
} replay_args;

static const char *const formats[] = {"table", "json", "csv", NULL};

#define RA(field) offsetof(replay_args, field)
static const cli_opt replay_opts[] = {
    {"--scenario", NULL, CLI_OPT_TEXT, RA(scenario), CLI_NOWHERE, 0, 0, NULL, NULL, 0, "  --scenario S       the scenario whose devices, policies and strategies run the trace\n"},
    {"--replication", NULL, CLI_OPT_COUNT, RA(rep), CLI_NOWHERE, 0, SCN_REPLICATIONS_MAX - 1,
     NULL, NULL, 0, "  --replication K    the device's draws of replication K (default 0)\n"},
    {"--timeline", NULL, CLI_OPT_COUNT, RA(o.timeline), RA(o.has_timeline), 0,
     SCN_REPLICATIONS_MAX - 1, NULL, "--timeline needs a replication number, got '%s'", 0,
     "  --timeline K       with -o, the replication the timeline plots show (default: the\n"
     "                     replayed one)\n"},
    {"-o", NULL, CLI_OPT_TEXT, RA(o.dir), CLI_NOWHERE, 0, 0, NULL, NULL, 0, "  -o DIR             also write the result document and report files into DIR\n"},
    {"-j", NULL, CLI_OPT_COUNT, RA(o.threads), CLI_NOWHERE, 1, 256, NULL, NULL, 0, "  -j N               threads (1 to 256); the result is the same for any N\n"},
    {"--format", NULL, CLI_OPT_CHOICE, RA(o.format), CLI_NOWHERE, 0, 0, formats,
     "--format is table, json or csv, got '%s'", 0,
     "  --format F         table (default), json or csv on standard output\n"},
    CLI_HELP_OPT,
};

const cli_cmd cli_replay_cmd = {
    .name = "replay",
    .usage = "usage: oomsim replay TRACE --scenario SCENARIO.yaml [--replication K] [-o DIR]\n"
        "                     [--timeline K] [-j THREADS] [--format table|json|csv]\n"
        "  a trace-driven run: request arrivals, needs and measured stage costs from the\n"
        "  trace (written by `oomsim gen`), device, policies and strategies from the\n"
        "  scenario; every cell of the trace's candidate runs once, with the device's\n"
        "  draws of replication K (default 0: use the trace's --replication)\n",
    .opts = replay_opts,
    .nopts = sizeof replay_opts / sizeof *replay_opts,
    .unexpected = "unexpected argument '%s'",
    .positional = RA(trace),
    .positionals = 1,
};

/* The command line: CLI_OK, CLI_USAGE, or CLI_DONE after --help. */
static int parse(int argc, char **argv, replay_args *a)
{
    memset(a, 0, sizeof *a);
    a->o.format = "table";
    a->o.threads = 1;
    int rc = cli_parse(&cli_replay_cmd, argc, argv, a);
    if (rc == CLI_OK && (a->trace == NULL || a->scenario == NULL))
        return cli_usage_error("replay", "a trace and --scenario are needed");
    return rc;
}

/* Every cell of the recording's candidate, run once on the recording
 * with the device's draws of replication rep. */
static int run_recorded(const scn_scenario *s, const mdl_candidate *cand, const mdl_replay *rp,
                        uint64_t rep, const cli_run_opts *o)
{
    sim_error err;
    sim_error_clear(&err);
    res_plan plan;
    const char **labels = NULL;
    mdl_cell *cells = calloc(s->ncells, sizeof *cells);
    if (cells == NULL || cli_plan_of(s, &plan, &labels, &err) != SIM_OK) {
        free(cells);
        fprintf(stderr, "oomsim: out of memory\n");
        return CLI_FAILURE;
    }
    if (s->npaths > 1) /* a recording is of one path: the others' cells replay it on theirs */
        fprintf(stderr, "oomsim replay: the scenario names %u paths and the recording is "
                "replayed on each; read the cells of the path it was recorded on\n", s->npaths);
    unsigned n = 0;
    for (unsigned i = 0; i < s->ncells; i++)
        if (s->cells[i].candidate == cand) {
            cells[n] = s->cells[i];
            cells[n].replay = rp;
            labels[n++] = s->policy_json[i % s->npolicies];
        }
    plan.cells = cells;
    plan.ncells = n;
    plan.replications = 1;
    plan.first_replication = rep;
    res_result r;
    int status;
    if (res_run(&plan, (unsigned)o->threads, NULL, NULL, &r, &err) != SIM_OK) {
        status = cli_report(&err);
    } else {
        status = cli__emit(o, &plan, &r);
        res_result_free(&r);
    }
    free(cells);
    free(labels);
    return status;
}

int cli_replay(int argc, char **argv)
{
    replay_args a;
    int status = parse(argc, argv, &a);
    if (status != CLI_OK)
        return status == CLI_DONE ? CLI_OK : status;
    const char *trace = a.trace, *scenario = a.scenario;
    unsigned long long rep = a.rep;
    cli_run_opts o = a.o;
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
        sim_error_set(&err, SIM_EINPUT, "%s: the trace's candidate '%s' is not a candidate of %s",
                      trace, id, scenario);
        scn_scenario_release(&s);
        return cli_report(&err);
    }
    mdl_replay rp;
    int rc = rpl_replay_load(trace, cand, &rp, NULL, &err);
    if (rc != SIM_OK) {
        scn_scenario_release(&s);
        return cli_report(&err);
    }
    status = run_recorded(&s, cand, &rp, rep, &o);
    rpl_replay_free(&rp);
    scn_scenario_release(&s);
    return status;
}
