/* gen.c - `oomsim gen SCENARIO -o TRACE.(json|jsonl|msgpack) [--replication K]
 * [--cell N] [--trace-format F]`: the event timeline of one replication of
 * one cell, written as a trace (docs/traces.md), to a temporary name and
 * renamed, so a failed run leaves no half-written trace. */
#include "cli.h"
#include "models/models.h"
#include "results/results.h"
#include "scenarios/scenarios.h"
#include "traces/traces.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { FORMAT_PERFETTO = TRC_FORMAT_COUNT };

/* The timeline in the JSON trace event format, into f. */
static int write_perfetto(const scn_scenario *s, const mdl_cell *c, unsigned long long rep,
                          FILE *f, mdl_rep *r, sim_error *err)
{
    mdl_device dv;
    mdl_device_in_force(c->device, &c->policy, &dv);
    res_chrome *ch = res_chrome_create(&dv);
    if (ch == NULL)
        return sim_error_set(err, SIM_ENOMEM, "out of memory");
    res_chrome_lines(ch, c);
    mdl_trace_sink sink = {res_chrome_add, ch, NULL};
    int rc = mdl_run_replication_traced(c, rep, NULL, NULL, &sink, r, err);
    char *text = NULL;
    size_t len = 0;
    if (rc == SIM_OK) {
        char title[512];
        snprintf(title, sizeof title, "%s, replication %llu: %s / %s", s->name, rep,
                 c->device->name, c->candidate->id);
        rc = res_chrome_finish(ch, c->horizon, title, &text, &len, err);
    }
    res_chrome_free(ch);
    if (rc == SIM_OK && (fwrite(text, 1, len, f) != len || fputc('\n', f) == EOF))
        rc = sim_error_set(err, SIM_EIO, "cannot write the timeline");
    free(text);
    return rc;
}

/* What `oomsim gen` was asked. */
typedef struct gen_args {
    const char *scenario, *out, *format_name, *exits, *exits_format;
    unsigned long long rep, cell;
    int format;
} gen_args;

/* The JetsamEvents of the replication (--exits DIR), kept until the run
 * succeeded, then written whole or not at all. */
#define REPORTS_MAX 1000
typedef struct reports {
    const scn_scenario *s;
    const mdl_cell *cell;
    uint64_t rep;
    cli_file files[REPORTS_MAX];
    char names[REPORTS_MAX][64];
    unsigned n;
    sim_time last;   /* the last report's second, and how many before it had it */
    unsigned same;
} reports;

static int keep_report(void *ctx, const mdl_jetsam_event *ev, sim_error *err)
{
    reports *r = ctx;
    if (r->n == REPORTS_MAX)
        return sim_error_set(err, SIM_ELIMIT, "more than %d JetsamEvents in one replication: "
                             "nothing written", REPORTS_MAX);
    char *text;
    size_t len;
    int rc = res_ips_format(ev, r->cell->workload->executable, r->cell->device->name, r->rep,
                            r->n, &text, &len, err);
    if (rc != SIM_OK)
        return rc;
    /* the reports of one second: the first as iOS names it, then -1, -2, ... */
    sim_time second = ev->time / 1000000;
    r->same = r->n > 0 && second == r->last ? r->same + 1 : 0;
    r->last = second;
    res_ips_name(ev->time, r->same, r->names[r->n], sizeof r->names[r->n]);
    r->files[r->n] = (cli_file){r->names[r->n], text, len};
    r->n++;
    return SIM_OK;
}

typedef struct gen_sink {
    trc_writer *w;
    reports *r;
} gen_sink;

static int both_event(void *ctx, const trc_event *e, sim_error *err)
{
    return trc_write(((gen_sink *)ctx)->w, e, err);
}

static int both_report(void *ctx, const mdl_jetsam_event *ev, sim_error *err)
{
    return keep_report(((gen_sink *)ctx)->r, ev, err);
}

static void reports_free(reports *r)
{
    for (unsigned k = 0; r != NULL && k < r->n; k++)
        free((char *)r->files[k].text);
    free(r);
}

static const char *const formats[] = {"json", "jsonl", "msgpack", "perfetto", NULL};
static const char *const exits_formats[] = {"ips", NULL};

#define GA(field) offsetof(gen_args, field)
static const cli_opt gen_opts[] = {
    {"-o", NULL, CLI_OPT_TEXT, GA(out), CLI_NOWHERE, 0, 0, NULL, NULL, 0, "  -o TRACE           the trace to write; its name ends .json, .jsonl or .msgpack\n"},
    {"--replication", NULL, CLI_OPT_COUNT, GA(rep), CLI_NOWHERE, 0, SCN_REPLICATIONS_MAX - 1,
     NULL, "--replication needs an integer from 0", 1, NULL},
    {"--cell", NULL, CLI_OPT_COUNT, GA(cell), CLI_NOWHERE, 0, SCN_CELLS_MAX - 1, NULL,
     "--cell needs an integer from 0", 1, NULL},
    {"--trace-format", NULL, CLI_OPT_CHOICE, GA(format_name), CLI_NOWHERE, 0, 0, formats,
     "--trace-format is json, jsonl, msgpack or perfetto", 1, NULL},
    {"--exits", NULL, CLI_OPT_TEXT, GA(exits), CLI_NOWHERE, 0, 0, NULL, NULL, 0, "  --exits DIR        also the JetsamEvent .ips reports of an iOS device, into DIR\n"},
    {"--exits-format", NULL, CLI_OPT_CHOICE, GA(exits_format), CLI_NOWHERE, 0, 0, exits_formats,
     "--exits-format is ips (iOS's JetsamEvent reports)", 1, NULL},
    CLI_HELP_OPT,
};

const cli_cmd cli_gen_cmd = {
    .name = "gen",
    .usage = "usage: oomsim gen SCENARIO.yaml -o TRACE.(json|jsonl|msgpack) [--replication K]\n"
        "                  [--cell N] [--trace-format json|jsonl|msgpack|perfetto]\n"
        "                  [--exits DIR [--exits-format ips]]\n"
        "  writes the event timeline of replication K (default 0) of cell N (default 0:\n"
        "  the first device, candidate and policy) as a trace; perfetto: the JSON trace\n"
        "  event format the Perfetto UI and chrome://tracing open (not readable by replay).\n"
        "  --exits DIR: also each JetsamEvent of an iOS device that gives others, as the\n"
        "  .ips file iOS keeps (ips, the only exits format)\n",
    .opts = gen_opts,
    .nopts = sizeof gen_opts / sizeof *gen_opts,
    .unexpected = "unexpected argument '%s'",
    .positional = GA(scenario),
    .positionals = 1,
};

/* CLI_OK, CLI_DONE (help printed) or CLI_USAGE (said why). */
static int parse_gen(int argc, char **argv, gen_args *g)
{
    memset(g, 0, sizeof *g);
    g->format = -1;
    int rc = cli_parse(&cli_gen_cmd, argc, argv, g);
    if (rc != CLI_OK)
        return rc;
    if (g->format_name != NULL) {
        g->format = FORMAT_PERFETTO;
        for (int f = 0; f < TRC_FORMAT_COUNT; f++)
            if (strcmp(g->format_name, trc_format_name((trc_format)f)) == 0)
                g->format = f;
    }
    if (g->scenario == NULL || g->out == NULL)
        return cli_usage_error("gen", "a scenario and -o TRACE are needed");
    if (g->exits_format != NULL && g->exits == NULL)
        return cli_usage_error("gen", "--exits-format needs --exits DIR");
    if (g->exits != NULL && g->format == FORMAT_PERFETTO)
        return cli_usage_error("gen", "--exits goes with a json, jsonl or msgpack trace");
    if (g->format < 0 && (g->format = trc_format_of_path(g->out)) < 0)
        return cli_usage_error("gen", "the trace's name must end in .json, .jsonl, .msgpack or "
                               ".mp (or give --trace-format)");
    return CLI_OK;
}

/* The replication's events, as the format asks, into f (and its
 * JetsamEvents into *reps, when asked). */
static int write_trace(const scn_scenario *s, const gen_args *g, FILE *f, reports *reps,
                       mdl_rep *r, sim_error *err)
{
    if (g->format == FORMAT_PERFETTO)
        return write_perfetto(s, &s->cells[g->cell], g->rep, f, r, err);
    trc_writer *w = trc_writer_create(f, (trc_format)g->format, err);
    int rc = w != NULL ? SIM_OK : err->code;
    if (rc == SIM_OK) {
        /* the events to the writer, the JetsamEvents to reps */
        gen_sink both = {w, reps};
        mdl_trace_sink sink = {both_event, &both, reps != NULL ? both_report : NULL};
        rc = mdl_run_replication_traced(&s->cells[g->cell], g->rep, NULL, NULL, &sink, r, err);
    }
    if (rc == SIM_OK)
        rc = trc_writer_finish(w, err);
    trc_writer_destroy(w);
    return rc;
}

int cli_gen(int argc, char **argv)
{
    gen_args g;
    int rc = parse_gen(argc, argv, &g);
    if (rc != CLI_OK)
        return rc == CLI_DONE ? CLI_OK : rc;
    const char *out = g.out;
    unsigned long long rep = g.rep, cell = g.cell;
    sim_error err;
    sim_error_clear(&err);
    scn_scenario s;
    rc = cli_load_scenario(g.scenario, &s, &err);
    if (rc != SIM_OK)
        return cli_report(&err);
    if (cell >= s.ncells) {
        scn_scenario_release(&s);
        fprintf(stderr, "oomsim gen: --cell %llu: the scenario has %u cell%s\n", cell, s.ncells,
                SIM_S(s.ncells));
        return CLI_USAGE;
    }
    reports *reps = NULL;
    if (g.exits != NULL && !s.cells[cell].device->xnu_pages) {
        fprintf(stderr, "oomsim gen: --exits: device %s writes no JetsamEvent (an ios device "
                "that gives others does)\n", s.cells[cell].device->name);
        scn_scenario_release(&s);
        return CLI_USAGE;
    }
    if (g.exits != NULL && (reps = calloc(1, sizeof *reps)) == NULL) {
        scn_scenario_release(&s);
        fprintf(stderr, "oomsim gen: out of memory\n");
        return CLI_FAILURE;
    }
    if (reps != NULL)
        *reps = (reports){.s = &s, .cell = &s.cells[cell], .rep = rep};
    sim_out *o = NULL;
    FILE *f = NULL;
    int io = rc = sim_out_open(out, &o, &err); /* io: the output failed, err says how */
    if (rc == SIM_OK && (f = sim_out_stream(o)) == NULL)
        io = rc = sim_error_set(&err, SIM_ENOMEM, "cannot write %s: out of memory", out);
    mdl_rep r;
    if (rc == SIM_OK)
        rc = write_trace(&s, &g, f, reps, &r, &err);
    /* a failed write of the stream: the output's own error says why */
    sim_error ioerr;
    sim_error_clear(&ioerr);
    int closed = o != NULL ? sim_out_close(o, &ioerr) : SIM_OK;
    if (closed != SIM_OK && (rc == SIM_OK || rc == SIM_EIO))
        rc = closed, err = ioerr, io = 1;
    /* the reports first: when they cannot be written, neither is the trace */
    int wrote = CLI_OK;
    if (rc == SIM_OK && reps != NULL && reps->n > 0)
        wrote = cli_write_files(g.exits, reps->files, reps->n, NULL);
    if (rc == SIM_OK && wrote == CLI_OK)
        io = rc = sim_out_commit(&o, 1, &err);
    sim_out_free(o);
    unsigned nreports = reps != NULL ? reps->n : 0;
    reports_free(reps);
    scn_scenario_release(&s);
    if (wrote != CLI_OK)
        return wrote;
    if (rc != SIM_OK && io)
        return cli_output_failed(&err);
    if (rc != SIM_OK)
        return cli_report(&err);
    if (g.exits != NULL)
        fprintf(stderr, "oomsim gen: %s: %u JetsamEvent report%s%s\n", g.exits, nreports,
                SIM_S(nreports), nreports == 0 ? " (nothing written)" : "");
    fprintf(stderr, "oomsim gen: %s: replication %llu of cell %llu: peak %.1f MiB, %u death%s\n",
            out, rep, cell, (double)r.peak / (1 << 20), r.deaths_total, SIM_S(r.deaths_total));
    return CLI_OK;
}
