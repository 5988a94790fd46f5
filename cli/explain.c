/* explain.c - `oomsim explain SCENARIO [--replication K] [--cell N]`: one
 * replication told as a timeline, for teaching on-call staff: each stage,
 * allocation, warning, cached-app kill, retry, death and recovery action
 * at its time with the memory at that moment and, at a death, the exit
 * record the system writes; then what that evidence supports
 * (docs/on-call.md). */
#include "cli.h"
#include "models/models.h"
#include "results/results.h"
#include "replay/replay.h"
#include "scenarios/scenarios.h"
#include "traces/traces.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage_text[] =
    "usage: oomsim explain SCENARIO.yaml [--replication K] [--cell N] [-o DIR]\n"
    "  tells replication K (default 0) of cell N (default 0) as a timeline: stages,\n"
    "  allocations, warnings, cached-app kills, retries, deaths with their exit\n"
    "  records, recovery actions; then what the evidence supports.\n"
    "  -o DIR   also draw the same timeline as DIR/timeline.svg\n";

#define MIB(x) ((double)(x) / (1 << 20))
#define DEATHS_TOLD 64

typedef struct teller {
    FILE *out;
    int ios;
    trc_pairs *open;
    uint64_t index;
    rpl_exit deaths[DEATHS_TOLD];
    char death_stage[DEATHS_TOLD][32];
    unsigned ndeaths;
    uint64_t more_deaths;
} teller;

static double total(const int64_t v[TRC_MEM_COUNT], unsigned has)
{
    double s = 0;
    for (int c = 0; c < TRC_MEM_COUNT; c++)
        if (has >> c & 1u)
            s += (double)v[c];
    return s;
}

/* The stage still open most recently begun (the stage running), or "-". */
static const char *running(teller *t)
{
    size_t n = 0;
    const trc_unpaired *u = trc_pairs_report(t->open, &n);
    const trc_unpaired *best = NULL;
    for (size_t k = 0; k < n; k++)
        if (!u[k].is_end && (best == NULL || u[k].index > best->index))
            best = &u[k];
    return best != NULL ? trc_stage_name(best->stage) : "-";
}

static void tell_exit(teller *t, const trc_event *e)
{
    FILE *o = t->out;
    const char *stage = running(t);
    fprintf(o, "the process dies: %s, during %s\n", trc_exit_reason_name(e->exit_reason), stage);
    const trc_exit_record *x = &e->exit;
    if (t->ios)
        fprintf(o, "%14s   the system's report: %s, footprint %lld kB at the kill\n", "",
                e->exit_reason == TRC_LOW_MEMORY
                    ? (x->importance == 100 ? "EXC_RESOURCE RESOURCE_TYPE_MEMORY"
                                            : "JetsamEvent (per-process-limit)")
                : e->exit_reason == TRC_UNKNOWN ? "watchdog termination (0x8badf00d)"
                                                : "crash report (EXC_BAD_ACCESS)",
                (long long)x->pss_kb);
    else
        fprintf(o, "%14s   ApplicationExitInfo: reason=%lld (%s) status=%lld importance=%lld "
                "pss=%lldkB rss=%lldkB (the last periodic sample%s)\n", "",
                (long long)x->reason_code, rpl_reason_name((int)x->reason_code),
                (long long)x->status, (long long)x->importance, (long long)x->pss_kb,
                (long long)x->rss_kb, x->pss_kb == 0 ? ": none before the death" : "");
    if (t->ndeaths == DEATHS_TOLD) {
        t->more_deaths++;
        return;
    }
    rpl_exit *r = &t->deaths[t->ndeaths];
    memset(r, 0, sizeof *r);
    r->source = RPL_EXIT_INFO;
    r->timestamp_ms = x->timestamp_ms;
    r->reason_code = (x->has & TRC_X_REASON_CODE) ? (int)x->reason_code : -1;
    if (t->ios) /* iOS reports: the class from the model's own reason */
        r->reason_code = e->exit_reason == TRC_LOW_MEMORY ? 3 : e->exit_reason == TRC_NATIVE_CRASH ? 5 : 0;
    r->has_status = 1;
    r->status = (int)x->status;
    r->has_importance = 1;
    r->importance = (int)x->importance;
    r->pss_kb = x->pss_kb;
    r->rss_kb = x->rss_kb;
    if (e->exit_reason == TRC_JAVA_CRASH)
        snprintf(r->description, sizeof r->description, "java.lang.OutOfMemoryError");
    snprintf(t->death_stage[t->ndeaths], sizeof t->death_stage[0], "%s", stage);
    t->ndeaths++;
}

static int tell(void *ctx, const trc_event *e, sim_error *err)
{
    teller *t = ctx;
    FILE *o = t->out;
    uint64_t index = t->index++;
    int rc = trc_pairs_add(t->open, e, index, err);
    if (rc != SIM_OK)
        return rc;
    double mem = (double)e->rss_mb;
    int kind = (e->has & TRC_F_KIND) ? (int)e->kind : TRC_SAMPLE;
    const char *part = (e->has & TRC_F_PART) ? e->part : "";
    char head[64];
    snprintf(head, sizeof head, "%10.3f s  %6.0f MiB  ", (double)e->time_us / 1e6, mem);
    if (kind == TRC_SAMPLE && (e->has & TRC_F_ERROR)) {
        static const struct {
            const char *error, *text;
        } notes[] = {
            {"memory_warning", "a memory warning (onTrimMemory / didReceiveMemoryWarning)"},
            {"cached_app_killed", "lmk kills a cached app to make room"},
            {"retry", "the client retries a request that timed out"},
            {"retry_duplicate", "the client retries while the earlier attempt still runs: a "
                                "second working set for one request"},
            {"timeout", "a request times out: the client gives up on it"},
            {"rejected", "a request is rejected: the queue is full or the app refuses work"},
            {"background", "the user switches away: the app is in the background (importance "
                           "400: the background kill limits apply)"},
            {"foreground", "the user returns: the app is in the foreground again"},
            {"pressure_spike", "other apps' memory spikes for an instant: the kill rules check "
                               "the app against it"}};
        for (size_t k = 0; k < sizeof notes / sizeof *notes; k++)
            if (strcmp(e->error, notes[k].error) == 0)
                fprintf(o, "%s%s\n", head, notes[k].text);
        return SIM_OK;
    }
    switch (kind) {
    case TRC_BEGIN:
        if (e->stage == TRC_INFERENCE)
            fprintf(o, "%s%s: request %lld runs (session %lld), working set %.1f MiB\n", head,
                    part, (long long)e->request, (long long)e->session,
                    MIB(total(e->alloc, e->alloc_has)));
        else if (e->stage == TRC_CACHE)
            fprintf(o, "%s%s: the compiled cache is not valid: rebuilding, %.1f MiB more\n",
                    head, part, MIB(total(e->alloc, e->alloc_has)));
        else
            fprintf(o, "%s%s: %s begins, %.1f MiB (%.1f MiB of it stays)\n", head, part,
                    trc_stage_name(e->stage), MIB(total(e->alloc, e->alloc_has)),
                    MIB(total(e->keep, e->keep_has)));
        break;
    case TRC_END:
        if ((e->has & TRC_F_ERROR) && strcmp(e->error, "delegate_failed") == 0)
            fprintf(o, "%s%s: the delegate fails to prepare: the fallback takes over\n", head,
                    part);
        else if (e->stage != TRC_INFERENCE && e->stage != TRC_CACHE)
            fprintf(o, "%s%s: %s ends\n", head, part, trc_stage_name(e->stage));
        break;
    case TRC_EXIT_EVENT:
        fputs(head, o);
        tell_exit(t, e);
        break;
    case TRC_RECOVERY:
        fprintf(o, "%srecovery in force for this start: %s\n", head, e->action);
        break;
    default:
        if (e->stage == TRC_RELEASE)
            fprintf(o, "%s%s is released\n", head, part);
        else if (e->stage == TRC_EXIT && (e->has & TRC_F_DURATION))
            fprintf(o, "%sthe user reopens the app %.1f s later\n", head,
                    (double)e->duration_us / 1e6);
        else if (e->has & TRC_F_NEEDS)
            fprintf(o, "%srequest %lld arrives: needs %s, payload %.1f MiB, %lld queued\n",
                    head, (long long)e->request, e->needs, MIB(total(e->alloc, e->alloc_has)),
                    (long long)e->queue);
        break;
    }
    return SIM_OK;
}

/* The narration and, with -o, the plot, from one run. */
typedef struct tee {
    teller *t;
    res_timeline *plot;
} tee;

static int tell_and_plot(void *ctx, const trc_event *e, sim_error *err)
{
    tee *x = ctx;
    int rc = tell(x->t, e, err);
    if (rc == SIM_OK && x->plot != NULL)
        rc = res_timeline_add(x->plot, e, err);
    return rc;
}

static int draw(const char *dir, res_timeline *plot, const scn_scenario *s, unsigned long long rep,
                const mdl_cell *c)
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
    cli_file file = {"timeline.svg", svg, len};
    int status = cli_write_files(dir, &file, 1, NULL);
    free(svg);
    return status;
}

/* The command line: CLI_OK, CLI_USAGE, or CLI_DONE after --help. */
static int parse(int argc, char **argv, const char **scenario, const char **dir,
                 unsigned long long *rep, unsigned long long *cell)
{
    *scenario = *dir = NULL;
    *rep = *cell = 0;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            fputs(usage_text, stdout);
            return CLI_DONE;
        } else if (strcmp(a, "--replication") == 0 && v != NULL &&
                   cli_number(v, 0, SCN_REPLICATIONS_MAX - 1, rep) == SIM_OK) {
            i++;
        } else if (strcmp(a, "--cell") == 0 && v != NULL &&
                   cli_number(v, 0, SCN_CELLS_MAX, cell) == SIM_OK) {
            i++;
        } else if (strcmp(a, "-o") == 0 && v != NULL) {
            *dir = v;
            i++;
        } else if (a[0] != '-' && *scenario == NULL) {
            *scenario = a;
        } else {
            return cli_usage_error("explain", "unexpected argument");
        }
    }
    if (*scenario == NULL) {
        return cli_usage_error("explain", "a scenario is needed");
    }
    return CLI_OK;
}

/* One verdict per distinct kind of death, in the order they came. */
static void tell_verdicts(const teller *t)
{
    for (unsigned k = 0; k < t->ndeaths; k++) {
        int seen = 0;
        for (unsigned j = 0; j < k && !seen; j++)
            seen = t->deaths[j].reason_code == t->deaths[k].reason_code &&
                   t->deaths[j].importance == t->deaths[k].importance &&
                   strcmp(t->death_stage[j], t->death_stage[k]) == 0;
        if (seen)
            continue;
        rpl_verdict v;
        rpl_diagnose(&t->deaths[k], NULL, &v);
        printf("- the death at %.3f s in %s: %s. The record supports %s (%s: the timeline "
               "above is the evidence it needs). Recovery: %s.\n",
               (double)t->deaths[k].timestamp_ms / 1e3, t->death_stage[k], v.supports, v.cls,
               v.cls[0] == 'u' ? "unconfirmed" : "confirmed here", v.recovery);
    }
}

int cli_explain(int argc, char **argv)
{
    const char *scenario, *dir;
    unsigned long long rep, cell;
    int status = parse(argc, argv, &scenario, &dir, &rep, &cell);
    if (status != CLI_OK)
        return status == CLI_DONE ? CLI_OK : status;
    sim_error err;
    sim_error_clear(&err);
    scn_scenario s;
    if (cli_load_scenario(scenario, &s, &err) != SIM_OK)
        return cli_report(&err);
    if (cell >= s.ncells) {
        fprintf(stderr, "oomsim explain: --cell %llu: the scenario has %u cells\n", cell,
                s.ncells);
        scn_scenario_release(&s);
        return CLI_USAGE;
    }
    const mdl_cell *c = &s.cells[cell];
    static teller t; /* large: the deaths told at the end */
    memset(&t, 0, sizeof t);
    t.out = stdout;
    t.ios = c->device->os == MDL_OS_IOS;
    t.open = trc_pairs_create(&err);
    tee both = {&t, dir != NULL ? res_timeline_create(c->device, c->horizon) : NULL};
    if (t.open == NULL || (dir != NULL && both.plot == NULL)) {
        trc_pairs_destroy(t.open);
        scn_scenario_release(&s);
        if (t.open == NULL)
            return cli_report(&err);
        fprintf(stderr, "oomsim: out of memory\n");
        return CLI_FAILURE;
    }
    printf("%s, replication %llu: %s running %s (%s)\n\n", s.name, rep, c->device->name,
           c->candidate->id, s.policy_json[cell % s.npolicies]);
    printf("%10s    %6s   %s\n", "time", "counted", "what happens");
    mdl_trace_sink sink = {tell_and_plot, &both};
    mdl_rep r;
    int rc = mdl_run_replication_traced(c, rep, NULL, NULL, &sink, &r, &err);
    if (rc != SIM_OK) {
        status = cli_report(&err);
    } else {
        printf("\npeak %.1f MiB during %s; %u deaths; %llu requests, %llu completed\n",
               MIB(r.peak), r.peak_stage < MDL_STAGE_COUNT ? mdl_stage_name(r.peak_stage) : "-",
               r.deaths_total, (unsigned long long)r.arrived, (unsigned long long)r.completed);
        if (t.ndeaths == 0)
            printf("\nno death, so no exit record: nothing to classify\n");
        else
            printf("\nwhat the evidence supports:\n");
        tell_verdicts(&t);
        if (t.more_deaths > 0)
            printf("(%llu more deaths not listed)\n", (unsigned long long)t.more_deaths);
    }
    if (status == CLI_OK && fflush(stdout) != 0)
        status = CLI_FAILURE;
    if (status == CLI_OK && both.plot != NULL)
        status = draw(dir, both.plot, &s, rep, c);
    res_timeline_free(both.plot);
    trc_pairs_destroy(t.open);
    scn_scenario_release(&s);
    return status;
}
