/* diagnose.c - `oomsim diagnose [TRACE] [--exits FILE]... [--process NAME]
 * [--tz ZONE] [--format text|json]` (docs/traces.md): every exit record of the --exits
 * files (dumpsys exit-info output, lmkd lines in a log, iOS JetsamEvent
 * reports; a directory stands for its .ips files), or without them the
 * trace's own exit records, classified with an evidence level and matched
 * to the trace when one is given. */
#include "cli.h"
#include "replay/replay.h"

#include "traces/json.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_FILES 64

typedef rpl_record item;
typedef rpl_others others;

static json_t *int_or_null(int has, int64_t v) { return has ? json_integer(v) : json_null(); }

/* A time before this (1973-03-03) is a trace's own clock, not the wall
 * clock: a trace without a REALTIME clock snapshot (or a simulated one)
 * counts from its start. */
#define WALL_CLOCK_FROM_MS INT64_C(100000000000)

/* Which clock a record's time is on: the phone's own (dumpsys and logcat
 * print it without a zone), UTC, a trace's start, or none. */
static const char *clock_of(const rpl_exit *x)
{
    if (x->timestamp_ms < 0)
        return x->yearless_ms >= 0 ? "phone-local" : "none";
    if (x->timestamp_ms < WALL_CLOCK_FROM_MS)
        return "trace start";
    return x->local_clock ? "phone-local" : "UTC";
}

/* The recovery ladder as JSON: step and action null when none applies. */
static json_t *ladder_json(const rpl_ladder *l, int *failed)
{
    json_t *o = json_object();
    trc_json_set(o, "step", int_or_null(l->step != RPL_STEP_NONE, (int64_t)l->step), failed);
    trc_json_set(o, "action", l->step != RPL_STEP_NONE ? json_string(rpl_step_name(l->step))
                                                        : json_null(), failed);
    trc_json_set(o, "why", json_string(l->why), failed);
    trc_json_set(o, "fix", json_string(l->fix), failed);
    return o;
}

static void add_json(json_t *arr, const item *it, const rpl_verdict *v, int *failed)
{
    const rpl_exit *x = &it->x;
    json_t *o = json_object();
    int has_reason = x->source == RPL_EXIT_INFO && x->reason_code >= 0;
    trc_json_set(o, "source", json_string(it->source), failed);
    trc_json_set(o, "process", x->process[0] ? json_string(x->process) : json_null(), failed);
    trc_json_set(o, "timestamp_ms", int_or_null(x->timestamp_ms >= 0, x->timestamp_ms), failed);
    trc_json_set(o, "clock", json_string(clock_of(x)), failed);
    trc_json_set(o, "reason_code", int_or_null(has_reason, x->reason_code), failed);
    trc_json_set(o, "reason", has_reason ? json_string(rpl_reason_name(x->reason_code))
                                         : json_null(), failed);
    trc_json_set(o, "importance", int_or_null(x->has_importance, x->importance), failed);
    char report[64];
    snprintf(report, sizeof report, x->cause[0] ? "JetsamEvent (%s)" : "JetsamEvent", x->cause);
    trc_json_set(o, "report", x->source != RPL_IOS ? json_null()
                              : json_string(x->jetsam_event || x->cause[0] ? report
                                                            : rpl_ios_report_name(x->ios)),
                 failed);
    if (x->jetsam_event) { /* a JetsamEvent report's entry */
        trc_json_set(o, "jetsam_reason", x->cause[0] ? json_string(x->cause) : json_null(),
                     failed);
        trc_json_set(o, "listed", json_boolean(x->jetsam_listed), failed);
        trc_json_set(o, "states", json_string(x->states), failed);
        trc_json_set(o, "priority", int_or_null(x->priority >= 0, x->priority), failed);
        trc_json_set(o, "largest_process", x->largest[0] ? json_string(x->largest)
                                                         : json_null(), failed);
        trc_json_set(o, "lifetime_max_kb", int_or_null(x->lifetime_max_kb >= 0,
                                                       x->lifetime_max_kb), failed);
        trc_json_set(o, "free_kb", int_or_null(x->free_kb >= 0, x->free_kb), failed);
        trc_json_set(o, "compressor_kb", int_or_null(x->compressor_kb >= 0, x->compressor_kb),
                     failed);
    }
    trc_json_set(o, "pid", int_or_null(x->pid >= 0, x->pid), failed);
    trc_json_set(o, "uid", int_or_null(x->uid >= 0, x->uid), failed);
    trc_json_set(o, "package", x->package[0] ? json_string(x->package) : json_null(), failed);
    trc_json_set(o, "oom_score_adj", int_or_null(x->has_adj, x->adj), failed);
    trc_json_set(o, "status", int_or_null(x->has_status, x->status), failed);
    trc_json_set(o, "pss_kb", int_or_null(x->source != RPL_LMKD && x->pss_kb >= 0, x->pss_kb),
                 failed);
    trc_json_set(o, "rss_kb", int_or_null(x->rss_kb >= 0, x->rss_kb), failed);
    trc_json_set(o, "description", x->description[0] ? json_string(x->description) : json_null(),
                 failed);
    trc_json_set(o, "subreason", x->subreason[0] ? json_string(x->subreason) : json_null(),
                 failed);
    trc_json_set(o, "isolated", json_boolean(rpl_exit_isolated(x)), failed);
    trc_json_set(o, "class", json_string(v->cls), failed);
    trc_json_set(o, "evidence", json_string(v->evidence), failed);
    trc_json_set(o, "matched_stage",
                 v->matched_stage[0] ? json_string(v->matched_stage) : json_null(), failed);
    trc_json_set(o, "matched", json_boolean(v->matched), failed);
    trc_json_set(o, "matched_on", v->matched ? json_string(v->matched_on) : json_null(), failed);
    trc_json_set(o, "own_record", json_boolean(v->own_record), failed);
    trc_json_set(o, "outbid", json_boolean(v->outbid), failed);
    trc_json_set(o, "lmkd_reason", x->lmkd != MDL_LMKD_NONE
                                       ? json_string(mdl_lmkd_reason_name(x->lmkd)) : json_null(),
                 failed);
    trc_json_set(o, "swap_kb", int_or_null(x->swap_kb >= 0, x->swap_kb), failed);
    trc_json_set(o, "joined_line", int_or_null(x->joined_line > 0, (int64_t)x->joined_line),
                 failed);
    trc_json_set(o, "joined_source", x->joined_line == 0 ? json_null()
                 : json_string(x->joined_source == RPL_KERNEL ? "kernel" : "lmkd"), failed);
    trc_json_set(o, "supports", json_string(v->supports), failed);
    trc_json_set(o, "missing", json_string(v->missing), failed);
    trc_json_set(o, "recovery", json_string(v->recovery), failed);
    trc_json_set(o, "ladder", ladder_json(&v->ladder, failed), failed);
    trc_json_append(arr, o, failed);
}

/* What `oomsim diagnose` was asked. */
typedef struct diag_args {
    const char *trace, *format, *process, *tz;
    const char *files[MAX_FILES];
    unsigned nfiles;
} diag_args;

static const char *const formats[] = {"text", "json", NULL};

#define DA(field) offsetof(diag_args, field)
static const cli_opt diagnose_opts[] = {
    {"--exits", NULL, CLI_OPT_LIST, DA(files), DA(nfiles), 0, MAX_FILES, NULL, NULL, 0, "  --exits FILE       exit records: dumpsys exit-info, logcat with kill lines, .ips\n"
    "                     reports or a directory of them; may be given several times\n"},
    {"--format", NULL, CLI_OPT_CHOICE, DA(format), CLI_NOWHERE, 0, 0, formats,
     "--format is text or json, got '%s'", 0, "  --format F         text (default) or json\n"},
    {"--process", NULL, CLI_OPT_TEXT, DA(process), CLI_NOWHERE, 0, 0, NULL, NULL, 0, "  --process NAME     the app's process: its entry in a JetsamEvent; in\n"
     "                     exit-info records, the deaths of its other processes\n"
     "                     (NAME:ml) are left out, counted by name\n"},
    {"--tz", NULL, CLI_OPT_TEXT, DA(tz), CLI_NOWHERE, 0, 0, NULL, NULL, 0, "  --tz ZONE          the phone's offset from UTC when the records were written\n"
     "                     (+08:00, -0500, UTC): dumpsys and logcat times with a\n"
     "                     date, printed on the phone's clock, are put on UTC\n"},
    CLI_HELP_OPT,
};

const cli_cmd cli_diagnose_cmd = {
    .name = "diagnose",
    .usage = "usage: oomsim diagnose [TRACE] [--exits FILE]... [--process NAME]\n"
        "                       [--tz ZONE] [--format text|json]\n"
        "  classifies each exit record (dumpsys activity exit-info output, lmkd kill\n"
        "  lines, iOS JetsamEvent .ips reports; a directory: its .ips files) with an\n"
        "  evidence level, matched to the trace by process, app version and time;\n"
        "  without --exits, the trace's own exit records.  --process NAME: in a\n"
        "  JetsamEvent, the app's entry (else the trace's process, else every\n"
        "  process the event killed); in exit-info records, the deaths of the\n"
        "  app's other processes (NAME:ml) are left out and counted by name\n",
    .opts = diagnose_opts,
    .nopts = sizeof diagnose_opts / sizeof *diagnose_opts,
    .unexpected = "unexpected argument '%s'",
    .positional = DA(trace),
    .positionals = 1,
};

/* "+08:00", "+0800", "-5", "+5:30", "UTC", "Z": minutes east of UTC, a
 * whole number of quarter hours from -12:00 to +14:00 (the zones that
 * exist); 0 and *min, or -1. */
static int zone_minutes(const char *s, int *min)
{
    if (strcmp(s, "UTC") == 0 || strcmp(s, "Z") == 0 || strcmp(s, "utc") == 0) {
        *min = 0;
        return 0;
    }
    if (s[0] != '+' && s[0] != '-')
        return -1;
    int h = 0, m = 0, k = 1, digits = 0;
    while (s[k] >= '0' && s[k] <= '9' && digits < 2)
        h = h * 10 + (s[k++] - '0'), digits++;
    if (digits == 0)
        return -1;
    if (s[k] == ':' && s[k + 1] == '\0')
        return -1; /* "+1:": the minutes cut off */
    if (s[k] == ':')
        k++;
    if (s[k] != '\0') {
        if (!(s[k] >= '0' && s[k] <= '5' && s[k + 1] >= '0' && s[k + 1] <= '9' &&
              s[k + 2] == '\0'))
            return -1;
        m = (s[k] - '0') * 10 + (s[k + 1] - '0');
    }
    int v = (h * 60 + m) * (s[0] == '-' ? -1 : 1);
    if (v < -12 * 60 || v > 14 * 60 || v % 15 != 0)
        return -1;
    *min = v;
    return 0;
}

/* The command line: CLI_OK, CLI_USAGE, or CLI_DONE after --help. */
static int parse(int argc, char **argv, diag_args *a)
{
    memset(a, 0, sizeof *a);
    a->format = "text";
    int rc = cli_parse(&cli_diagnose_cmd, argc, argv, a);
    if (rc == CLI_OK && a->trace == NULL && a->nfiles == 0)
        return cli_usage_error("diagnose", "give a trace, --exits files, or both");
    if (rc == CLI_OK && a->process != NULL && a->process[0] == '\0')
        return cli_usage_error("diagnose", "--process needs a name");
    int zone;
    if (rc == CLI_OK && a->tz != NULL && zone_minutes(a->tz, &zone) != 0)
        return cli_usage_error("diagnose", "--tz is the phone's offset from UTC as +08:00, "
                               "-0500 or UTC (a whole number of quarter hours, -12:00 to "
                               "+14:00), got '%s'", a->tz);
    return rc;
}

/* "2024-04-28 19:27:47.967 UTC" (or "phone-local": the phone's clock, its
 * zone not known), or "+12.345 s from the trace's start". */
static void time_text(int64_t ms, int local, char *buf, size_t n)
{
    time_t sec = (time_t)(ms / 1000);
    struct tm tm;
    if (ms >= 0 && ms < WALL_CLOCK_FROM_MS) {
        snprintf(buf, n, "+%.3f s from the trace's start (no wall clock)", (double)ms / 1e3);
        return;
    }
    if (ms < 0 || gmtime_r(&sec, &tm) == NULL) {
        snprintf(buf, n, "-");
        return;
    }
    char day[32];
    strftime(day, sizeof day, "%Y-%m-%d %H:%M:%S", &tm);
    snprintf(buf, n, "%s.%03d %s", day, (int)(ms % 1000), local ? "phone-local" : "UTC");
}

/* The record's heading: where it came from and what it names. */
static void print_heading(const item *it)
{
    const rpl_exit *x = &it->x;
    if (x->source == RPL_LMKD || x->source == RPL_KERNEL) {
        printf("%s of %s", x->source == RPL_LMKD ? "lmkd kill" : "kernel OOM kill",
               x->process[0] ? x->process : "an unnamed process");
        if (x->has_adj)
            printf(", oom_score_adj %d", x->adj);
        return;
    }
    if (x->jetsam_event) {
        printf("JetsamEvent entry of %s", x->process);
        if (x->cause[0])
            printf(", reason %s", x->cause);
        else
            printf(x->jetsam_listed ? ", not killed" : ", not listed");
        if (x->priority >= 0)
            printf(", priority %d", x->priority);
        return;
    }
    printf("%s exit of %s", it->source, x->process[0] ? x->process : "an unnamed process");
    if (x->source == RPL_IOS && x->cause[0])
        printf(", JetsamEvent (%s)", x->cause);
    else if (x->source == RPL_IOS)
        printf(", %s", rpl_ios_report_name(x->ios));
    if (x->source == RPL_EXIT_INFO && x->reason_code >= 0)
        printf(", reason %d (%s)", x->reason_code, rpl_reason_name(x->reason_code));
    if (x->has_importance)
        printf(", importance %d", x->importance);
}

/* A record's time as the output prints it (a logcat time without its year
 * as the log gives it). */
static void when_text(const rpl_exit *x, char *when, size_t n)
{
    time_text(x->timestamp_ms, x->local_clock, when, n);
    if (x->timestamp_ms < 0 && x->yearless_ms >= 0) { /* a logcat time: no year */
        int64_t md = x->yearless_ms / 86400000, ms = x->yearless_ms % 86400000;
        snprintf(when, n, "%02d-%02d %02d:%02d:%02d.%03d phone-local (no year)",
                 (int)(md / 32), (int)(md % 32), (int)(ms / 3600000), (int)(ms / 60000 % 60),
                 (int)(ms / 1000 % 60), (int)(ms % 1000));
    }
}

/* The evidence the verdict used, field by field (what the record gave). */
static void print_evidence(const rpl_exit *x)
{
    char when[64];
    when_text(x, when, sizeof when);
    printf("  evidence:  %s", when);
    if (x->pid >= 0)
        printf(", pid %lld", (long long)x->pid);
    if (x->uid >= 0)
        printf(", uid %lld", (long long)x->uid);
    if (x->package[0])
        printf(", package %s", x->package);
    if (x->source == RPL_LMKD || x->source == RPL_KERNEL) {
        if (x->rss_kb >= 0)
            printf(x->source == RPL_LMKD ? ", to free %lldkB rss (the victim's own size)"
                                         : ", anon-rss %lldkB", (long long)x->rss_kb);
        if (x->swap_kb >= 0)
            printf(", %lldkB swap", (long long)x->swap_kb);
    } else {
        if (x->pss_kb >= 0)
            printf(", pss %lldkB", (long long)x->pss_kb);
        if (x->rss_kb >= 0)
            printf(", rss %lldkB", (long long)x->rss_kb);
        if (x->has_status)
            printf(", status %d", x->status);
    }
    if (x->description[0])
        printf(", %s \"%s\"", x->source == RPL_LMKD ? "reason" : "description", x->description);
    if (x->subreason[0])
        printf(", subreason %s", x->subreason);
    if (x->joined_line > 0) {
        printf(", joined with %s line %llu (the same pid", x->joined_source == RPL_KERNEL
               ? "the kernel OOM killer's" : "lmkd's kill", (unsigned long long)x->joined_line);
        if (x->joined_gap_ms >= 0)
            printf(", %.1f s apart", (double)x->joined_gap_ms / 1e3);
        printf(")");
        if (x->lmkd != MDL_LMKD_NONE)
            printf(", lmkd's reason %s", mdl_lmkd_reason_name(x->lmkd));
        if (x->swap_kb >= 0)
            printf(", %lldkB swap", (long long)x->swap_kb);
    }
    if (x->states[0])
        printf(", states %s", x->states);
    if (x->lifetime_max_kb >= 0)
        printf(", lifetime max %lldkB", (long long)x->lifetime_max_kb);
    if (x->free_kb >= 0)
        printf(", free pages %lldkB", (long long)x->free_kb);
    if (x->compressor_kb >= 0)
        printf(", compressor %lldkB", (long long)x->compressor_kb);
    if (x->largest[0])
        printf(", largest process %s", x->largest);
    printf("\n");
    if (rpl_exit_isolated(x))
        printf("  isolated:  an isolated process (a sandboxed WebView or an isolated service), "
               "not the app's own process: its death does not end the app\n");
}

static void print_text(const item *it, const rpl_verdict *v, int first, size_t count,
                       const rpl_exit *last_x)
{
    const rpl_exit *x = &it->x;
    printf("%s", first ? "" : "\n");
    print_heading(it);
    if (count > 1) {
        char last[96];
        when_text(last_x, last, sizeof last);
        printf(" (%zu identical records, the last at %s)", count, last);
    }
    printf("\n");
    print_evidence(x);
    printf("  class:     %s (%s%s)\n", v->cls, v->evidence,
           v->own_record && strcmp(v->evidence, "confirmed") == 0
               ? " by the simulator's own record: evidence of the simulation, not of a phone"
               : "");
    if (v->matched_stage[0])
        printf("  stage:     %s\n", v->matched_stage);
    else if (v->matched)
        printf("  stage:     no stage running\n");
    else
        printf("  stage:     - (no matching trace)\n");
    if (v->matched && v->own_record)
        printf("  matched:   %s\n", v->matched_on);
    else if (v->matched && v->matched_on[0])
        printf("  matched:   the trace's exit, on %s\n", v->matched_on);
    printf("  supports:  %s\n  missing:   %s\n  recovery:  %s\n", v->supports, v->missing,
           v->recovery);
    sim_text ladder = SIM_TEXT_INIT;
    rpl_ladder_text(&v->ladder, RPL_LADDER_INDENT, &ladder);
    char *lines = sim_text_done(&ladder);
    printf("%s", lines != NULL ? lines : "  (the recovery ladder: out of memory)\n");
    free(lines);
}

/* The deaths left out (rpl_leave_out_others): the app's other processes',
 * or (apps) other apps' kill lines. */
static void print_others(const others *o, int after, int apps)
{
    size_t total = o->more;
    for (unsigned j = 0; j < o->n; j++)
        total += o->count[j];
    if (total == 0)
        return;
    if (apps)
        printf("%s%zu kill line%s of other apps' processes %s not read (--process names this "
               "app's; the phone freeing memory, not this app's deaths):", after ? "\n" : "",
               total, total == 1 ? "" : "s", total == 1 ? "was" : "were");
    else
        printf("%s%zu death%s of other processes of this app %s not read (--process names "
               "one):", after ? "\n" : "", total, total == 1 ? "" : "s",
               total == 1 ? "was" : "were");
    for (unsigned j = 0; j < o->n; j++)
        printf("%s %s (%zu)", j ? "," : "", o->name[j], o->count[j]);
    if (o->more > 0)
        printf(", and %zu of other processes", o->more);
    printf("\n");
}

static json_t *others_json(const others *o, const char *count, int *failed)
{
    json_t *arr = json_array();
    for (unsigned j = 0; arr != NULL && j < o->n; j++) {
        json_t *e = json_object();
        trc_json_set(e, "process", json_string(o->name[j]), failed);
        trc_json_set(e, count, json_integer((json_int_t)o->count[j]), failed);
        if (e == NULL || json_array_append_new(arr, e) != 0)
            *failed = 1;
    }
    if (arr != NULL && o->more > 0) { /* past the table: not named */
        json_t *e = json_object();
        trc_json_set(e, "process", json_null(), failed);
        trc_json_set(e, count, json_integer((json_int_t)o->more), failed);
        if (e == NULL || json_array_append_new(arr, e) != 0)
            *failed = 1;
    }
    if (arr == NULL)
        *failed = 1;
    return arr;
}

/* What a loop calls for, by what its deaths were: a boot loop, a service
 * restarted into its death, reclaims in the background, or deaths after
 * each restart (docs/on-call.md "Loops"). */
static const char *loop_advice(const rpl_loop *l)
{
    if (l->start_up == l->deaths)
        return "every one during start-up: a boot loop; the recovery state read at start must "
               "count consecutive failures by class and stop the model work (safe mode) before "
               "the next start, never retry the same start";
    if (strchr(l->process, ':') != NULL)
        return "a service process restarted into the same death, each restart waiting longer: "
               "the app's requests fail meanwhile (service_died); run less in the service or "
               "bind it with BIND_IMPORTANT";
    if (l->background == l->deaths)
        return "each a reclaim in the background, the system's right: not one bad moment but "
               "the app's habit of keeping its models when it leaves; release them in the "
               "background, and check that the state is restored each time";
    return "the app dies again after it comes back: the recovery state read at start must "
           "count consecutive failures by class and change something (fewer resident models, "
           "the last known good) before the next start, never retry it as it was";
}

/* The loops: repeated deaths of one process, named as such. */
static void print_loops(const rpl_loop *l, size_t n)
{
    for (size_t k = 0; k < n; k++)
        printf("a loop: %zu deaths of %.63s, each within an hour of the one before (%.1f s "
               "from the first to the last), %s\n", l[k].deaths, l[k].process,
               (double)(l[k].last_ms - l[k].first_ms) / 1e3, loop_advice(&l[k]));
}

static json_t *loops_json(const rpl_loop *l, size_t n, int *failed)
{
    json_t *a = json_array();
    for (size_t k = 0; k < n; k++)
        trc_json_append(a, json_pack("{sssIsIsIsIsI}", "process", l[k].process, "deaths",
                                     (json_int_t)l[k].deaths, "start_up",
                                     (json_int_t)l[k].start_up, "background",
                                     (json_int_t)l[k].background, "first_ms",
                                     (json_int_t)l[k].first_ms, "last_ms",
                                     (json_int_t)l[k].last_ms),
                        failed);
    return a;
}

/* The verdicts as one JSON document on stdout (arr is taken; failed: an
 * allocation failed while it was built). */
static int print_json(json_t *arr, const rpl_loop *loops, size_t nloops, const others *o,
                      const others *apps, const rpl_trace_exits *t, int failed)
{
    json_t *doc = json_object();
    trc_json_set(doc, "exits", arr, &failed);
    trc_json_set(doc, "loops", loops_json(loops, nloops, &failed), &failed);
    trc_json_set(doc, "other_processes", others_json(o, "deaths", &failed), &failed);
    trc_json_set(doc, "other_apps", others_json(apps, "kills", &failed), &failed);
    if (t != NULL) { /* what failed with no exit */
        uint64_t stale, req;
        rpl_trace_failures(t, &stale, &req);
        json_t *f = json_pack("{sIsI}", "cache_stale", (json_int_t)stale, "part_failed",
                              (json_int_t)req);
        if (stale > 0 && f != NULL) { /* an outage: its row of the verdict table */
            rpl_ladder l;
            rpl_ladder_of(RPL_REC_STALE_CACHE, 0, &l);
            trc_json_set(f, "ladder", ladder_json(&l, &failed), &failed);
        }
        trc_json_set(doc, "failures", f, &failed);
    }
    char *s = failed ? NULL : trc_json_dumps(doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    json_decref(doc);
    if (s == NULL)
        fprintf(stderr, "oomsim: out of memory writing the exit records\n");
    int status = s != NULL ? cli_write_stdout(s, strlen(s)) : CLI_FAILURE;
    free(s);
    return status;
}

/* What failed without a death: a prepare that read an outdated compiled
 * cache, the requests that failed for want of the part (text mode). */
static void print_failures(const rpl_trace_exits *t)
{
    uint64_t stale, req;
    rpl_trace_failures(t, &stale, &req);
    if (stale > 0)
        printf("%llu runtime_prepare%s failed reading a compiled cache built for an earlier "
               "runtime or OS version (cache_stale): no death and no record, an outage\n",
               (unsigned long long)stale, stale > 1 ? "s" : "");
    if (req > 0)
        printf("%llu request%s failed because a part could not be made ready (part_failed)\n",
               (unsigned long long)req, req > 1 ? "s" : "");
    if (stale > 0) { /* the outage's row of the verdict table */
        rpl_ladder l;
        rpl_ladder_of(RPL_REC_STALE_CACHE, 0, &l);
        sim_text out = SIM_TEXT_INIT;
        rpl_ladder_text(&l, RPL_LADDER_INDENT, &out);
        char *s = sim_text_done(&out);
        if (s != NULL)
            fputs(s, stdout);
        free(s);
    }
}

/* A file passed over while gathering, told as it is read. */
static void skipped(void *ctx, const char *text)
{
    (void)ctx;
    fprintf(stderr, "oomsim: %s\n", text);
}

int cli_diagnose(int argc, char **argv)
{
    diag_args a;
    int status = parse(argc, argv, &a);
    if (status != CLI_OK)
        return status == CLI_DONE ? CLI_OK : status;
    const char *trace = a.trace, *const *files = a.files;
    int nfiles = (int)a.nfiles, json = strcmp(a.format, "json") == 0;
    sim_error err;
    sim_error_clear(&err);
    rpl_trace_exits *t = NULL;
    if (trace != NULL && rpl_trace_exits_load(trace, &t, &err) != SIM_OK)
        return cli_report(&err);
    item *items = NULL;
    size_t n = 0;
    if (rpl_gather(files, nfiles, a.process, t, skipped, NULL, &items, &n, &err) != SIM_OK)
        status = cli_report(&err);
    int zone = 0;
    if (a.tz != NULL && zone_minutes(a.tz, &zone) == 0)
        rpl_exits_to_utc(items, n, zone);
    others o, apps;
    rpl_leave_out_others(items, &n, a.process, &o, &apps);
    rpl_verdict *vs = NULL;
    if (status == CLI_OK && rpl_verdicts(items, n, t, nfiles == 0, &vs, &err) != SIM_OK)
        status = cli_report(&err);
    rpl_loop *loops = NULL;
    size_t nloops = 0;
    if (status == CLI_OK && rpl_loops(items, vs, n, &loops, &nloops) != SIM_OK) {
        fprintf(stderr, "oomsim: out of memory\n");
        status = CLI_FAILURE;
    }
    json_t *arr = json_array();
    int failed = 0;
    for (size_t k = 0; status == CLI_OK && k < n;) {
        if (json) {
            add_json(arr, &items[k], &vs[k], &failed);
            k++;
            continue;
        }
        /* a run of identical records is told once, with its count */
        size_t j = k + 1;
        while (j < n && rpl_same_record(&items[k], &items[j], &vs[k], &vs[j]))
            j++;
        print_text(&items[k], &vs[k], k == 0, j - k, &items[j - 1].x);
        k = j;
    }
    free(vs);
    if (status == CLI_OK && json) {
        status = print_json(arr, loops, nloops, &o, &apps, t, failed);
        arr = NULL;
    }
    json_decref(arr);
    if (status == CLI_OK && !json && n == 0 && o.n + o.more + apps.n + apps.more == 0)
        printf("no exit records in the trace\n");
    if (status == CLI_OK && !json)
        print_loops(loops, nloops);
    free(loops);
    if (status == CLI_OK && !json)
        print_failures(t);
    if (status == CLI_OK && !json)
        print_others(&o, n > 0, 0);
    if (status == CLI_OK && !json)
        print_others(&apps, n > 0 || o.n + o.more > 0, 1);
    free(items);
    rpl_trace_exits_free(t);
    if (status == CLI_OK && fflush(stdout) != 0)
        status = CLI_FAILURE;
    return status;
}
