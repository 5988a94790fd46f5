/* explain.c - `oomsim explain SCENARIO [--replication K] [--cell N] [--full]
 * [--quiz [--answers FILE]] [-o DIR]`: one replication told as a timeline,
 * for teaching on-call staff.  It starts with the scenario's about; then
 * each stage, allocation, request and attempt, warning, cached-app kill,
 * retry, death and recovery action at its time with the memory at that
 * moment; at a death, the limit crossed and the exit record the system
 * writes.  Start-up deaths that repeat the same way are told once with
 * their count (a boot loop).  It ends with what the evidence supports,
 * classified as `diagnose` classifies the same record (docs/on-call.md).
 * --quiz shows the evidence without the cause and asks for it. */
#include "explain_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage_text[] =
    "usage: oomsim explain SCENARIO.yaml [--replication K] [--cell N] [--full] [-o DIR]\n"
    "                      [--quiz [--answers FILE]]\n"
    "  tells replication K (default 0) of cell N (default 0) as a timeline: stages,\n"
    "  allocations, requests and their attempts, warnings, cached-app kills, retries,\n"
    "  deaths with the limit crossed and their exit records, recovery actions; then\n"
    "  what the evidence supports.\n"
    "  --full          every line: do not collapse a death that repeats the same way\n"
    "  --quiz          an on-call drill: the evidence without the cause, then two\n"
    "                  questions (the class, the recovery), then the answer\n"
    "  --answers FILE  the quiz's answers, one per line, instead of the terminal\n"
    "  -o DIR          also draw the same timeline as DIR/timeline.svg, and write it\n"
    "                  as DIR/timeline.json for the Perfetto UI\n";

/* The narration and, with -o, the plot, from one run. */
typedef struct tee {
    teller *t;
    res_timeline *plot;
    res_chrome *json;
} tee;

static int tell_and_plot(void *ctx, const trc_event *e, sim_error *err)
{
    tee *x = ctx;
    int rc = xp_tell(x->t, e, err);
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
    unsigned long long rep, cell;
    int full, quiz;
} opts;

/* The command line: CLI_OK, CLI_USAGE, or CLI_DONE after --help. */
static int parse(int argc, char **argv, opts *o)
{
    memset(o, 0, sizeof *o);
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            fputs(usage_text, stdout);
            return CLI_DONE;
        } else if (strcmp(a, "--replication") == 0) {
            if (v == NULL || cli_number(v, 0, SCN_REPLICATIONS_MAX - 1, &o->rep) != SIM_OK)
                return cli_usage_error("explain", "--replication needs an integer from 0 to "
                                       "%u", SCN_REPLICATIONS_MAX - 1);
            i++;
        } else if (strcmp(a, "--cell") == 0) {
            if (v == NULL || cli_number(v, 0, SCN_CELLS_MAX - 1, &o->cell) != SIM_OK)
                return cli_usage_error("explain", "--cell needs an integer from 0 (oomsim "
                                       "explain SCENARIO --cell 999 lists the cells)");
            i++;
        } else if (strcmp(a, "-o") == 0 && v != NULL) {
            o->dir = v;
            i++;
        } else if (strcmp(a, "--answers") == 0 && v != NULL) {
            o->answers = v;
            i++;
        } else if (strcmp(a, "--full") == 0) {
            o->full = 1;
        } else if (strcmp(a, "--quiz") == 0) {
            o->quiz = 1;
        } else if (a[0] != '-' && o->scenario == NULL) {
            o->scenario = a;
        } else {
            return cli_usage_error("explain", "unexpected argument '%s'", a);
        }
    }
    if (o->scenario == NULL)
        return cli_usage_error("explain", "a scenario is needed");
    if (o->answers != NULL && !o->quiz)
        return cli_usage_error("explain", "--answers goes with --quiz");
    return CLI_OK;
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

/* Runs the replication, telling it; then the summary and the verdicts (or
 * the quiz). */
static int narrate(const opts *o, const scn_scenario *s, teller *t, tee *both)
{
    const mdl_cell *c = &s->cells[o->cell];
    if (s->about != NULL && s->about[0] != '\0' && !o->quiz) /* the quiz would give it away */
        printf("%s\n\n", s->about);
    printf("%s, replication %llu: %s running %s (%s)\n\n", s->name, o->rep, c->device->name,
           c->candidate->id, s->policy_json[o->cell % s->npolicies]);
    printf("%10s    %6s   %s\n", "time", "counted", "what happens");
    mdl_trace_sink sink = {tell_and_plot, both};
    mdl_rep r;
    sim_error err;
    sim_error_clear(&err);
    int rc = mdl_run_replication_traced(c, o->rep, NULL, NULL, &sink, &r, &err);
    if (rc != SIM_OK)
        return cli_report(&err);
    xp_finish(t);
    printf("\npeak %.1f MiB during %s; %u death%s; %llu request%s, %llu completed\n",
           XP_MIB(r.peak), r.peak_stage < MDL_STAGE_COUNT ? mdl_stage_name(r.peak_stage) : "-",
           r.deaths_total, r.deaths_total == 1 ? "" : "s", (unsigned long long)r.arrived,
           r.arrived == 1 ? "" : "s", (unsigned long long)r.completed);
    if (o->quiz) {
        int status = xp_quiz(t, o->answers);
        if (status == CLI_OK && t->ndeaths > 0 && s->about != NULL && s->about[0] != '\0')
            printf("\nthe scenario: %s\n", s->about);
        return status;
    }
    if (t->ndeaths == 0)
        printf("\nno death, so no exit record: nothing to classify\n");
    else
        printf("\nwhat the evidence supports:\n");
    xp_verdicts(t);
    return CLI_OK;
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
    const mdl_cell *c = &s.cells[o.cell];
    teller *t = xp_teller_create(c, o.full, o.quiz);
    mdl_device dv;
    mdl_device_in_force(c->device, &c->policy, &dv);
    tee both = {t, o.dir != NULL ? res_timeline_create(&dv, c->horizon) : NULL,
                o.dir != NULL ? res_chrome_create(&dv) : NULL};
    if (t == NULL || (o.dir != NULL && (both.plot == NULL || both.json == NULL))) {
        xp_teller_free(t);
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
    xp_teller_free(t);
    scn_scenario_release(&s);
    return status;
}
