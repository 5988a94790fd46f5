/* explain.c - `oomsim explain SCENARIO [--replication K] [--cell N] [--full]
 * [--quiz [--answers FILE]] [-o DIR]`: one replication told as a timeline,
 * for teaching on-call staff.  It starts with the scenario's about; then
 * each stage, allocation, request and attempt, warning, cached-app kill,
 * retry, death and recovery action at its time with the memory at that
 * moment; at a death, the limit crossed and the exit record the system
 * writes.  Deaths that repeat the same way (a boot loop), and requests
 * that do, are told once with their count.  It ends with what the evidence supports,
 * classified as `diagnose` classifies the same record (docs/on-call.md).
 * --quiz shows the evidence without the cause and asks for it.  What is
 * said is replay/'s (the teller, rpl_tell*, and the drill, rpl_drill_*):
 * this file parses, reads the drill's answers and prints. */
#include "cli.h"
#include "replay/replay.h"
#include "results/results.h"
#include "scenarios/scenarios.h"

#include <ctype.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The narration and, with -o, the plot, from one run. */
typedef struct tee {
    rpl_teller *t;
    res_timeline *plot;
    res_chrome *json;
} tee;

/* Prints what the teller told since the last call. */
static int put(rpl_teller *t, sim_error *err)
{
    size_t len;
    int rc;
    const char *text = rpl_teller_text(t, &len, &rc);
    if (text != NULL)
        fwrite(text, 1, len, stdout);
    return rc == SIM_OK ? SIM_OK : sim_error_set(err, rc, "explain: out of memory");
}

static int tell_and_plot(void *ctx, const trc_event *e, sim_error *err)
{
    tee *x = ctx;
    int rc = rpl_tell(x->t, e, err);
    if (rc == SIM_OK)
        rc = put(x->t, err);
    if (rc == SIM_OK && x->plot != NULL)
        rc = res_timeline_add(x->plot, e, err);
    if (rc == SIM_OK && x->json != NULL)
        rc = res_chrome_add(x->json, e, err);
    return rc;
}

static int draw(const char *dir, res_timeline *plot, res_chrome *json, const scn_scenario *s,
                unsigned long long rep, const mdl_cell *c)
{
    sim_error err;
    sim_error_clear(&err);
    if (res_plot_available(&err) != SIM_OK)
        return cli_report(&err);
    res_timeline_finish(plot);
    char title[512];
    snprintf(title, sizeof title, "%s, replication %llu: %s / %s", s->name, rep,
             c->device->name, c->candidate->id);
    size_t len;
    char *svg = res_plot_timeline(plot, title, &len);
    if (svg == NULL) {
        fprintf(stderr, "oomsim: out of memory drawing the timeline\n");
        return CLI_FAILURE;
    }
    char *text;
    size_t tlen;
    if (res_chrome_finish(json, c->horizon, title, &text, &tlen, &err) != SIM_OK) {
        free(svg);
        return cli_report(&err);
    }
    cli_file files[2] = {{"timeline.svg", svg, len}, {"timeline.json", text, tlen}};
    int status = cli_write_files(dir, files, 2, NULL);
    free(svg);
    free(text);
    return status;
}

typedef struct opts {
    const char *scenario, *dir, *answers;
    unsigned long long rep, cell, death, seed;
    int full, quiz, drill, has_death, has_seed, first_death;
} opts;

/* The message names the limit. */
_Static_assert(SCN_REPLICATIONS_MAX - 1 == 9999999, "--replication's message names 9999999");

#define XO(field) offsetof(opts, field)
static const cli_opt explain_opts[] = {
    {"--replication", NULL, CLI_OPT_COUNT, XO(rep), CLI_NOWHERE, 0, SCN_REPLICATIONS_MAX - 1,
     NULL, "--replication needs an integer from 0 to 9999999", 0, NULL},
    {"--cell", NULL, CLI_OPT_COUNT, XO(cell), CLI_NOWHERE, 0, SCN_CELLS_MAX - 1, NULL,
     "--cell needs an integer from 0 (oomsim explain SCENARIO --cell 999 lists the cells)", 0,
     NULL},
    {"--first-death", NULL, CLI_OPT_FLAG, XO(first_death), CLI_NOWHERE, 0, 0, NULL, NULL, 0,
     "  --first-death   tell the first replication of the cell (from 0, up to the\n"
     "                  scenario's replications) in which a process died\n"},
    {"--full", NULL, CLI_OPT_FLAG, XO(full), CLI_NOWHERE, 0, 0, NULL, NULL, 0,
     "  --full          every line: do not collapse a death or a request that repeats\n"
     "                  the same way\n"},
    {"--quiz", NULL, CLI_OPT_FLAG, XO(quiz), CLI_NOWHERE, 0, 0, NULL, NULL, 0,
     "  --quiz          an on-call drill: the evidence without the cause, then two\n"
     "                  questions (the class, the recovery), then the answer\n"},
    {"--drill", NULL, CLI_OPT_FLAG, XO(drill), CLI_NOWHERE, 0, 0, NULL, NULL, 0,
     "  --drill         the quiz as a drill: the reason codes, importance and class\n"
     "                  words hidden too; eight questions (the class, front or\n"
     "                  background, the process, the stage, the evidence level, the\n"
     "                  ladder's step, the fix, what changes if one fact does)\n"},
    {"--seed", NULL, CLI_OPT_COUNT, XO(seed), XO(has_seed), 0, ~0ull, NULL,
     "--seed needs an integer from 0 to 18446744073709551615", 0,
     "  --seed N        the drill's choices shuffled by N (default: the scenario's\n"
     "                  seed): the same N, the same drill\n"},
    {"--death", NULL, CLI_OPT_COUNT, XO(death), XO(has_death), 1, RPL_TELL_DEATHS, NULL,
     "--death needs an integer from 1 to 64", 0,
     "  --death K       the quiz or drill asks about death K (from 1) of the\n"
     "                  replication, not the first\n"},
    {"--answers", NULL, CLI_OPT_TEXT, XO(answers), CLI_NOWHERE, 0, 0, NULL, NULL, 0,
     "  --answers FILE  the quiz's answers, one per line, instead of the terminal;\n"
     "                  an answer of the wrong form is refused (exit 2), where at a\n"
     "                  terminal it is asked again\n"},
    {"-o", NULL, CLI_OPT_TEXT, XO(dir), CLI_NOWHERE, 0, 0, NULL, NULL, 0,
     "  -o DIR          also draw the same timeline as DIR/timeline.svg, and write it\n"
     "                  as DIR/timeline.json for the Perfetto UI\n"},
    CLI_HELP_OPT,
};

const cli_cmd cli_explain_cmd = {
    .name = "explain",
    .usage = "usage: oomsim explain SCENARIO.yaml [--replication K | --first-death] [--cell N]\n"
        "                      [--full] [-o DIR]\n"
        "                      [--quiz|--drill [--death K] [--seed N] [--answers FILE]]\n"
        "  tells replication K (default 0) of cell N (default 0) as a timeline: stages,\n"
        "  allocations, requests and their attempts, warnings, cached-app kills, retries,\n"
        "  deaths with the limit crossed and their exit records, recovery actions; then\n"
        "  what the evidence supports.\n",
    .opts = explain_opts,
    .nopts = sizeof explain_opts / sizeof *explain_opts,
    .unexpected = "unexpected argument '%s'",
    .positional = XO(scenario),
    .positionals = 1,
};

/* The command line: CLI_OK, CLI_USAGE, or CLI_DONE after --help. */
static int parse(int argc, char **argv, opts *o)
{
    memset(o, 0, sizeof *o);
    int rc = cli_parse(&cli_explain_cmd, argc, argv, o);
    if (rc != CLI_OK)
        return rc;
    if (o->scenario == NULL)
        return cli_usage_error("explain", "a scenario is needed");
    if (o->drill)
        o->quiz = 1;
    if (o->answers != NULL && !o->quiz)
        return cli_usage_error("explain", "--answers goes with --quiz or --drill");
    if (o->has_death && !o->quiz)
        return cli_usage_error("explain", "--death goes with --quiz or --drill");
    if (o->has_seed && !o->drill)
        return cli_usage_error("explain", "--seed goes with --drill");
    if (o->first_death && o->rep != 0)
        return cli_usage_error("explain", "--first-death chooses the replication: not with "
                               "--replication");
    return CLI_OK;
}

/* --first-death: the first replication of the cell with a death, into
 * o->rep (said on stderr); CLI_INPUT when none of the scenario's
 * replications has one. */
static int first_death(opts *o, const scn_scenario *s)
{
    const mdl_cell *c = &s->cells[o->cell];
    for (uint64_t rep = 0; rep < s->replications; rep++) {
        sim_error err;
        sim_error_clear(&err);
        mdl_rep r;
        if (mdl_run_replication(c, rep, NULL, NULL, &r, &err) != SIM_OK)
            return cli_report(&err);
        uint64_t died = 0;
        for (int x = 0; x < MDL_EXIT_COUNT; x++)
            died += r.deaths[x];
        if (died > 0) {
            o->rep = rep;
            fprintf(stderr, "oomsim explain: --first-death: replication %llu of cell %llu\n",
                    (unsigned long long)rep, o->cell);
            return CLI_OK;
        }
    }
    fprintf(stderr, "oomsim explain: --first-death: no process died in the cell's %llu "
            "replications (cell %llu)\n", (unsigned long long)s->replications, o->cell);
    return CLI_INPUT;
}

/* A cell out of range: the error, and the cells there are. */
static int no_such_cell(const scn_scenario *s, unsigned long long cell)
{
    fprintf(stderr, "oomsim explain: --cell %llu: the scenario has %u cell%s:\n", cell,
            s->ncells, s->ncells == 1 ? "" : "s");
    for (unsigned i = 0; i < s->ncells; i++) {
        char label[256];
        if (res_policy_label(s->policy_json[i % s->npolicies], label, sizeof label) != SIM_OK)
            snprintf(label, sizeof label, "?");
        fprintf(stderr, "  %u  %s / %s  %s\n", i, s->cells[i].device->name,
                s->cells[i].candidate->id, label);
    }
    fprintf(stderr, "see oomsim explain --help\n");
    return CLI_USAGE;
}

/* The next answer, trimmed, into buf ("" at the end of the input). */
static void answer(FILE *in, char *buf, size_t n)
{
    buf[0] = '\0';
    if (in == NULL || fgets(buf, (int)n, in) == NULL) {
        buf[0] = '\0';
        return;
    }
    size_t len = strlen(buf);
    while (len > 0 && isspace((unsigned char)buf[len - 1]))
        buf[--len] = '\0';
    size_t lead = 0;
    while (isspace((unsigned char)buf[lead]))
        lead++;
    memmove(buf, buf + lead, len - lead + 1);
}

/* One answer, its form checked: asked again on a terminal; from a file
 * (--answers, or a pipe) a wrong form is refused.  CLI_OK or CLI_USAGE. */
static int ask(const rpl_teller *t, FILE *in, char *buf, size_t n, unsigned q)
{
    int tty = isatty(fileno(in));
    for (;;) {
        answer(in, buf, n);
        char given[RPL_ANSWER_MAX];
        snprintf(given, sizeof given, "%s", buf);
        const char *form = "";
        if (rpl_quiz_form(t, q, buf, n, &form))
            return CLI_OK;
        if (given[0] == '\0' && (feof(in) || ferror(in)))
            return cli_usage_error("explain", "%s: the answers ended before answer %u (%s)",
                                   rpl_quiz_questions(t) == 2 ? "--quiz" : "--drill", q + 1,
                                   form);
        if (!tty || feof(in) || ferror(in))
            return cli_usage_error("explain", "%s: answer %u '%s' is not %s",
                                   rpl_quiz_questions(t) == 2 ? "--quiz" : "--drill", q + 1,
                                   given, form);
        printf("'%s' is not %s; again:\n> ", given, form);
        fflush(stdout);
    }
}

/* The quiz over death `death` (from 0): its questions, the answers read
 * from the terminal or from `answers` (one per line), each checked (ask),
 * then the answer.  CLI_OK, CLI_USAGE for an answer of the wrong form from
 * a file or a death the replication does not have, or CLI_INPUT for an
 * unreadable answers file. */
static int quiz(rpl_teller *t, unsigned death, const char *answers, uint64_t seed,
                sim_error *err)
{
    unsigned deaths = rpl_teller_deaths(t);
    if (deaths == 0) {
        rpl_drill_none(t);
        return put(t, err) == SIM_OK ? CLI_OK : cli_report(err);
    }
    if (death >= deaths) {
        int rc = put(t, err);
        fflush(stdout);
        return rc != SIM_OK ? cli_report(err)
               : cli_usage_error("explain", "--death %u: this replication told %u death%s",
                                 death + 1, deaths, deaths == 1 ? "" : "s");
    }
    if (rpl_quiz_questions(t) == RPL_DRILL_QUESTIONS && rpl_drill_prepare(t, death, seed)) {
        fprintf(stderr, "oomsim: out of memory\n");
        return CLI_FAILURE;
    }
    FILE *in = stdin;
    if (answers != NULL && (in = fopen(answers, "r")) == NULL) {
        fprintf(stderr, "oomsim: %s: cannot read the answers\n", answers);
        return CLI_INPUT;
    }
    char a[RPL_DRILL_QUESTIONS][RPL_ANSWER_MAX];
    unsigned nq = rpl_quiz_questions(t);
    int rc = SIM_OK, status = CLI_OK;
    for (unsigned q = 0; q < nq && status == CLI_OK; q++) {
        rpl_quiz_ask(t, death, q, q > 0 ? a[q - 1] : "");
        if (rc == SIM_OK)
            rc = put(t, err);
        fflush(stdout);
        status = ask(t, in, a[q], sizeof a[q], q);
    }
    if (in != stdin)
        fclose(in);
    if (status != CLI_OK)
        return status;
    rpl_quiz_grade(t, death, a);
    if (rc == SIM_OK)
        rc = put(t, err);
    return rc == SIM_OK ? CLI_OK : cli_report(err);
}

/* Runs the replication, telling it; then the summary and the verdicts (or
 * the drill). */
static int narrate(const opts *o, const scn_scenario *s, rpl_teller *t, tee *both)
{
    const mdl_cell *c = &s->cells[o->cell];
    sim_error err;
    sim_error_clear(&err);
    rpl_tell_header(t, s->name, s->about, s->policy_json[o->cell % s->npolicies], o->rep);
    mdl_trace_sink sink = {tell_and_plot, both, NULL};
    mdl_rep r;
    int rc = put(t, &err);
    if (rc == SIM_OK)
        rc = mdl_run_replication_traced(c, o->rep, NULL, NULL, &sink, &r, &err);
    if (rc != SIM_OK)
        return cli_report(&err);
    rpl_tell_finish(t);
    rpl_tell_summary(t, &r);
    if (o->quiz) {
        if (put(t, &err) != SIM_OK)
            return cli_report(&err);
        int status = quiz(t, o->has_death ? (unsigned)o->death - 1 : 0, o->answers,
                          o->has_seed ? o->seed : s->seed, &err);
        if (status == CLI_OK) {
            rpl_drill_reveal(t, s->about);
            status = put(t, &err) == SIM_OK ? CLI_OK : cli_report(&err);
        }
        return status;
    }
    rpl_tell_verdicts(t);
    if (put(t, &err) != SIM_OK)
        return cli_report(&err);
    fflush(stdout);
    return r.deaths_total > 0 ? cli_explain_levers(s, (unsigned)o->cell, o->rep) : CLI_OK;
}

int cli_explain(int argc, char **argv)
{
    opts o;
    int status = parse(argc, argv, &o);
    if (status != CLI_OK)
        return status == CLI_DONE ? CLI_OK : status;
    sim_error err;
    sim_error_clear(&err);
    scn_scenario s;
    if (cli_load_scenario(o.scenario, &s, &err) != SIM_OK)
        return cli_report(&err);
    if (o.cell >= s.ncells) {
        status = no_such_cell(&s, o.cell);
        scn_scenario_release(&s);
        return status;
    }
    if (o.first_death && (status = first_death(&o, &s)) != CLI_OK) {
        scn_scenario_release(&s);
        return status;
    }
    const mdl_cell *c = &s.cells[o.cell];
    rpl_teller *t = rpl_teller_create(c, o.full, o.drill ? 2 : o.quiz);
    mdl_device dv;
    mdl_device_in_force(c->device, &c->policy, &dv);
    tee both = {t, o.dir != NULL ? res_timeline_create(&dv, c->horizon) : NULL,
                o.dir != NULL ? res_chrome_create(&dv) : NULL};
    res_timeline_lines(both.plot, c);
    res_chrome_lines(both.json, c);
    if (t == NULL || (o.dir != NULL && (both.plot == NULL || both.json == NULL))) {
        rpl_teller_free(t);
        res_timeline_free(both.plot);
        res_chrome_free(both.json);
        scn_scenario_release(&s);
        fprintf(stderr, "oomsim: out of memory\n");
        return CLI_FAILURE;
    }
    status = narrate(&o, &s, t, &both);
    if (status == CLI_OK && fflush(stdout) != 0)
        status = CLI_FAILURE;
    if (status == CLI_OK && both.plot != NULL)
        status = draw(o.dir, both.plot, both.json, &s, o.rep, c);
    res_timeline_free(both.plot);
    res_chrome_free(both.json);
    rpl_teller_free(t);
    scn_scenario_release(&s);
    return status;
}
