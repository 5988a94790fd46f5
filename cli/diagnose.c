/* diagnose.c - `oomsim diagnose [TRACE] [--exits FILE]... [--process NAME]
 * [--format text|json]` (docs/traces.md): every exit record of the --exits
 * files (dumpsys exit-info output, lmkd lines in a log, iOS JetsamEvent
 * reports; a directory stands for its .ips files), or without them the
 * trace's own exit records, classified with an evidence level and matched
 * to the trace when one is given. */
#include "cli.h"
#include "replay/replay.h"

#include "traces/json.h"

#include <dirent.h>
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#define MAX_FILES 64

typedef struct item {
    rpl_exit x;
    const char *source;
} item;

static json_t *int_or_null(int has, int64_t v) { return has ? json_integer(v) : json_null(); }

static void add_json(json_t *arr, const item *it, const rpl_verdict *v, int *failed)
{
    const rpl_exit *x = &it->x;
    json_t *o = json_object();
    int has_reason = x->source == RPL_EXIT_INFO && x->reason_code >= 0;
    trc_json_set(o, "source", json_string(it->source), failed);
    trc_json_set(o, "process", x->process[0] ? json_string(x->process) : json_null(), failed);
    trc_json_set(o, "timestamp_ms", int_or_null(x->timestamp_ms >= 0, x->timestamp_ms), failed);
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
    json_t *ladder = json_object();
    trc_json_set(ladder, "step", v->ladder.step != RPL_STEP_NONE
                                     ? json_integer((json_int_t)v->ladder.step) : json_null(),
                 failed);
    trc_json_set(ladder, "action", v->ladder.step != RPL_STEP_NONE
                                       ? json_string(rpl_step_name(v->ladder.step))
                                       : json_null(), failed);
    trc_json_set(ladder, "why", json_string(v->ladder.why), failed);
    trc_json_set(ladder, "fix", json_string(v->ladder.fix), failed);
    trc_json_set(o, "ladder", ladder, failed);
    trc_json_append(arr, o, failed);
}

/* What `oomsim diagnose` was asked. */
typedef struct diag_args {
    const char *trace, *format, *process;
    const char *files[MAX_FILES];
    unsigned nfiles;
} diag_args;

static const char *const formats[] = {"text", "json", NULL};

#define DA(field) offsetof(diag_args, field)
static const cli_opt diagnose_opts[] = {
    {"--exits", NULL, CLI_OPT_LIST, DA(files), DA(nfiles), 0, MAX_FILES, NULL, NULL, 0, "  --exits FILE       exit records: dumpsys exit-info, logcat with kill lines, .ips\n"
    "                     reports or a directory of them; may be given several times\n"},
    {"--format", NULL, CLI_OPT_CHOICE, DA(format), CLI_NOWHERE, 0, 0, formats, NULL, 0, "  --format F         text (default) or json\n"},
    {"--process", NULL, CLI_OPT_TEXT, DA(process), CLI_NOWHERE, 0, 0, NULL, NULL, 0, "  --process NAME     the app's process: its entry in a JetsamEvent; in\n"
     "                     exit-info records, the deaths of its other processes\n"
     "                     (NAME:ml) are left out, counted by name\n"},
    CLI_HELP_OPT,
};

const cli_cmd cli_diagnose_cmd = {
    .name = "diagnose",
    .usage = "usage: oomsim diagnose [TRACE] [--exits FILE]... [--process NAME]\n"
        "                       [--format text|json]\n"
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
    return rc;
}

/* Where a record came from, as the output names it. */
static const char *source_name(const rpl_exit *x)
{
    return x->source == RPL_IOS ? "JetsamEvent" : x->source == RPL_LMKD ? "lmkd"
           : x->source == RPL_KERNEL ? "kernel" : "exit-info";
}

/* The kill lines joined to the exit records of the same deaths, across
 * every file given (a logcat beside a dumpsys dump). */
static int join(item *items, size_t *n)
{
    rpl_exit *xs = malloc((*n + 1) * sizeof *xs);
    if (xs == NULL)
        return cli_report(&(sim_error){SIM_ENOMEM, "oomsim: out of memory"});
    for (size_t k = 0; k < *n; k++)
        xs[k] = items[k].x;
    *n = rpl_exits_join(xs, *n);
    for (size_t k = 0; k < *n; k++)
        items[k] = (item){xs[k], source_name(&xs[k])};
    free(xs);
    return CLI_OK;
}

/* One file's records appended to *items: dumpsys or lmkd lines, or a
 * JetsamEvent report (found by its header line).  in_dir: the file is one
 * of a directory's, where a report of another kind (a crash report) and a
 * JetsamEvent that killed nothing are skipped with a note, not refused. */
static int gather_file(const char *file, const char *process, int hinted, int in_dir,
                       item **items, size_t *n)
{
    sim_error err;
    sim_error_clear(&err);
    char *text = NULL;
    size_t len = 0;
    rpl_exit *xs = NULL;
    size_t nx = 0;
    int status = CLI_OK, ips = 0;
    if (sim_read_file(file, (size_t)256 << 20, &text, &len, &err) != SIM_OK)
        status = cli_report(&err);
    else if ((ips = rpl_ips_detect(text, len)) != 1 && in_dir)
        fprintf(stderr, "oomsim: %s: skipped, %s\n", file,
                ips == 0 ? "not an iOS report" : "not a JetsamEvent report");
    else if (ips != 0
                 ? rpl_ips_parse(text, len, file, process, &xs, &nx, &err) != SIM_OK
                 : rpl_exits_parse(text, len, file, &xs, &nx, &err) != SIM_OK)
        status = cli_report(&err);
    else if (ips != 0 && hinted && nx == 1 && xs[0].jetsam_event && !xs[0].jetsam_listed) {
        /* the trace's process is not in this report (a generated trace names
         * its candidate): read every process it killed, as with no name */
        free(xs);
        xs = NULL;
        nx = 0;
        if (rpl_ips_parse(text, len, file, NULL, &xs, &nx, &err) != SIM_OK)
            status = cli_report(&err);
    }
    int skipped = status != CLI_OK || (ips != 1 && in_dir);
    if (skipped) {
        /* refused or skipped: said above */
    } else if (nx == 0 && in_dir && ips) {
        fprintf(stderr, "oomsim: %s: skipped, the JetsamEvent killed no process (--process "
                "NAME shows the app's entry)\n", file);
    } else if (nx == 0) {
        if (ips)
            fprintf(stderr, "oomsim: %s: the JetsamEvent killed no process: give --process NAME "
                    "to see the app's entry\n", file);
        else
            fprintf(stderr, "oomsim: no exit record found in %s: expected dumpsys exit-info, "
                    "lmkd lines or a JetsamEvent report\n", file);
        status = CLI_INPUT;
    } else {
        item *ni = realloc(*items, (*n + nx + 1) * sizeof *ni);
        if (ni == NULL) {
            status = cli_report(&(sim_error){SIM_ENOMEM, "oomsim: out of memory"});
        } else {
            *items = ni;
            for (size_t k = 0; k < nx; k++)
                ni[(*n)++] = (item){xs[k], source_name(&xs[k])};
        }
    }
    free(text);
    free(xs);
    return status;
}

/* A directory's *.ips names, not hidden ones (a copy from a Mac brings
 * "._NAME.ips" resource files). */
static int ips_entry(const struct dirent *d)
{
    size_t n = strlen(d->d_name);
    return d->d_name[0] != '.' && n > 4 && strcmp(d->d_name + n - 4, ".ips") == 0;
}

/* A directory's .ips files in name order (JetsamEvent-YYYY-MM-DD-...: time
 * order), or the file itself. */
static int gather_path(const char *path, const char *process, int hinted, item **items,
                       size_t *n)
{
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISDIR(st.st_mode))
        return gather_file(path, process, hinted, 0, items, n);
    struct dirent **names = NULL;
    int count = scandir(path, &names, ips_entry, alphasort);
    if (count < 0) {
        fprintf(stderr, "oomsim: cannot read the directory %s: %s\n", path, strerror(errno));
        return CLI_INPUT;
    }
    int status = count == 0 ? CLI_INPUT : CLI_OK;
    size_t before = *n;
    if (count == 0)
        fprintf(stderr, "oomsim: %s holds no .ips report\n", path);
    for (int k = 0; k < count; k++) {
        if (status == CLI_OK) {
            size_t len = strlen(path) + strlen(names[k]->d_name) + 2;
            char *file = malloc(len);
            if (file == NULL)
                status = cli_report(&(sim_error){SIM_ENOMEM, "oomsim: out of memory"});
            else {
                snprintf(file, len, "%s/%s", path, names[k]->d_name);
                struct stat fs;
                if (stat(file, &fs) == 0 && S_ISREG(fs.st_mode))
                    status = gather_file(file, process, hinted, 1, items, n);
            }
            free(file);
        }
        free(names[k]);
    }
    free(names);
    if (status == CLI_OK && *n == before) {
        fprintf(stderr, "oomsim: %s: no record to diagnose in its .ips reports\n", path);
        status = CLI_INPUT;
    }
    return status;
}

/* The records to diagnose: every --exits file's, else the trace's.  In a
 * JetsamEvent, the app is `process`, else the process of the trace's
 * first exit (the app's executable name on iOS). */
static int gather(const char *const *files, int nfiles, const char *process,
                  const rpl_trace_exits *t, item **out, size_t *nout)
{
    item *items = NULL;
    size_t n = 0;
    int status = CLI_OK;
    int hinted = 0; /* the name is the trace's, not --process: a report may not list it */
    if (process == NULL && t != NULL && rpl_trace_exits_count(t) > 0 &&
        rpl_trace_exit_record(t, 0)->process[0] != '\0')
        process = rpl_trace_exit_record(t, 0)->process, hinted = 1;
    for (int f = 0; f < nfiles && status == CLI_OK; f++)
        status = gather_path(files[f], process, hinted, &items, &n);
    if (status == CLI_OK && n > 0)
        status = join(items, &n);
    if (status == CLI_OK && nfiles == 0 && t != NULL) {
        size_t nt = rpl_trace_exits_count(t);
        items = malloc((nt + 1) * sizeof *items);
        if (items == NULL)
            status = CLI_FAILURE;
        for (size_t k = 0; items != NULL && k < nt; k++)
            items[n++] = (item){*rpl_trace_exit_record(t, k), "trace"};
    }
    *out = items;
    *nout = n;
    return status;
}

/* A time before this (1973-03-03) is a trace's own clock, not the wall
 * clock: a trace without a REALTIME clock snapshot (or a simulated one)
 * counts from its start. */
#define WALL_CLOCK_FROM_MS INT64_C(100000000000)

/* "2024-04-28 19:27:47.967 UTC", or "+12.345 s from the trace's start". */
static void utc_text(int64_t ms, char *buf, size_t n)
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
    snprintf(buf, n, "%s.%03d UTC", day, (int)(ms % 1000));
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

/* The evidence the verdict used, field by field (what the record gave). */
static void print_evidence(const rpl_exit *x)
{
    char when[64];
    utc_text(x->timestamp_ms, when, sizeof when);
    if (x->timestamp_ms < 0 && x->yearless_ms >= 0) { /* a logcat time: no year */
        int64_t md = x->yearless_ms / 86400000, ms = x->yearless_ms % 86400000;
        snprintf(when, sizeof when, "%02d-%02d %02d:%02d:%02d.%03d (the log's time, no year)",
                 (int)(md / 32), (int)(md % 32), (int)(ms / 3600000), (int)(ms / 60000 % 60),
                 (int)(ms / 1000 % 60), (int)(ms % 1000));
    }
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
                       int64_t last_ms)
{
    const rpl_exit *x = &it->x;
    printf("%s", first ? "" : "\n");
    print_heading(it);
    if (count > 1) {
        char last[96];
        utc_text(last_ms, last, sizeof last);
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

/* Two records say the same thing (all but their time and pid). */
static int same_record(const item *a, const item *b, const rpl_verdict *va,
                       const rpl_verdict *vb)
{
    const rpl_exit *x = &a->x, *y = &b->x;
    return x->source == y->source && x->ios == y->ios && x->reason_code == y->reason_code &&
           !x->jetsam_event && !y->jetsam_event &&
           x->has_status == y->has_status && x->status == y->status &&
           x->has_importance == y->has_importance && x->importance == y->importance &&
           x->has_adj == y->has_adj && x->adj == y->adj && x->uid == y->uid &&
           strcmp(x->process, y->process) == 0 && strcmp(x->package, y->package) == 0 &&
           strcmp(x->description, y->description) == 0 &&
           strcmp(x->subreason, y->subreason) == 0 && strcmp(a->source, b->source) == 0 &&
           va->kind == vb->kind && strcmp(va->evidence, vb->evidence) == 0 &&
           strcmp(va->matched_stage, vb->matched_stage) == 0 && va->rec == vb->rec &&
           va->matched == vb->matched && va->outbid == vb->outbid &&
           va->ladder.step == vb->ladder.step && va->ladder.fix == vb->ladder.fix &&
           x->pss_kb == y->pss_kb && x->rss_kb == y->rss_kb && x->joined_line == 0 && y->joined_line == 0;
}

/* The deaths of the app's other processes (PACKAGE:ml, PACKAGE:remote)
 * when --process names the main one: left out of the diagnosis, and
 * counted by process to be said. */
#define OTHERS_MAX 16
typedef struct others {
    char name[OTHERS_MAX][RPL_TEXT_MAX];
    size_t count[OTHERS_MAX];
    unsigned n;
    size_t more; /* of processes past the table */
} others;

/* The package of a process name: up to its ':' (PACKAGE:NAME). */
static size_t package_len(const char *p)
{
    size_t k = 0;
    while (p[k] != '\0' && p[k] != ':')
        k++;
    return k;
}

static void leave_out_others(item *items, size_t *n, const char *process, others *o)
{
    memset(o, 0, sizeof *o);
    size_t len = process != NULL ? package_len(process) : 0, kept = 0;
    for (size_t k = 0; k < *n; k++) {
        const char *p = items[k].x.process;
        /* another process of the same package: PACKAGE or PACKAGE:NAME */
        int other = len > 0 && package_len(p) == len && strncmp(p, process, len) == 0 &&
                    strcmp(p, process) != 0;
        if (!other) {
            items[kept++] = items[k];
            continue;
        }
        unsigned j = 0;
        while (j < o->n && strcmp(o->name[j], p) != 0)
            j++;
        if (j == o->n && o->n == OTHERS_MAX) {
            o->more++;
            continue;
        }
        if (j == o->n)
            snprintf(o->name[o->n++], RPL_TEXT_MAX, "%s", p);
        o->count[j]++;
    }
    *n = kept;
}

static void print_others(const others *o, int after)
{
    size_t total = o->more;
    for (unsigned j = 0; j < o->n; j++)
        total += o->count[j];
    if (total == 0)
        return;
    printf("%s%zu death%s of other processes of this app %s not read (--process names one):",
           after ? "\n" : "", total, total == 1 ? "" : "s", total == 1 ? "was" : "were");
    for (unsigned j = 0; j < o->n; j++)
        printf("%s %s (%zu)", j ? "," : "", o->name[j], o->count[j]);
    if (o->more > 0)
        printf(", and %zu of other processes", o->more);
    printf("\n");
}

static json_t *others_json(const others *o, int *failed)
{
    json_t *arr = json_array();
    for (unsigned j = 0; arr != NULL && j < o->n; j++) {
        json_t *e = json_object();
        trc_json_set(e, "process", json_string(o->name[j]), failed);
        trc_json_set(e, "deaths", json_integer((json_int_t)o->count[j]), failed);
        if (e == NULL || json_array_append_new(arr, e) != 0)
            *failed = 1;
    }
    if (arr != NULL && o->more > 0) { /* past the table: not named */
        json_t *e = json_object();
        trc_json_set(e, "process", json_null(), failed);
        trc_json_set(e, "deaths", json_integer((json_int_t)o->more), failed);
        if (e == NULL || json_array_append_new(arr, e) != 0)
            *failed = 1;
    }
    if (arr == NULL)
        *failed = 1;
    return arr;
}

/* The verdicts as one JSON document on stdout (arr is taken; failed: an
 * allocation failed while it was built). */
static int print_json(json_t *arr, const others *o, const rpl_trace_exits *t, int failed)
{
    json_t *doc = json_object();
    trc_json_set(doc, "exits", arr, &failed);
    trc_json_set(doc, "other_processes", others_json(o, &failed), &failed);
    if (t != NULL) { /* what failed with no exit */
        uint64_t stale, req;
        rpl_trace_failures(t, &stale, &req);
        trc_json_set(doc, "failures", json_pack("{sIsI}", "cache_stale", (json_int_t)stale,
                                                "part_failed", (json_int_t)req), &failed);
    }
    char *s = failed ? NULL : trc_json_dumps(doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    json_decref(doc);
    if (s == NULL)
        fprintf(stderr, "oomsim: out of memory writing the exit records\n");
    int status = s != NULL ? cli_write_stdout(s, strlen(s)) : CLI_FAILURE;
    free(s);
    return status;
}

/* The verdicts on the n records against the trace t, one record per
 * death (own: the records are the trace's own). */
static int verdicts(const item *items, size_t n, const rpl_trace_exits *t, int own,
                    rpl_verdict **out)
{
    rpl_exit *xs = malloc((n + 1) * sizeof *xs);
    rpl_verdict *vs = malloc((n + 1) * sizeof *vs);
    for (size_t k = 0; xs != NULL && k < n; k++)
        xs[k] = items[k].x;
    if (xs == NULL || vs == NULL || rpl_diagnose_all(xs, n, t, own, vs) != SIM_OK) {
        free(xs);
        free(vs);
        return cli_report(&(sim_error){SIM_ENOMEM, "oomsim: out of memory"});
    }
    free(xs);
    *out = vs;
    return CLI_OK;
}

/* What failed without a death: a prepare that read an outdated compiled
 * cache, the requests that failed for want of the part (text mode). */
static void print_failures(const rpl_trace_exits *t)
{
    uint64_t stale, req;
    rpl_trace_failures(t, &stale, &req);
    if (stale > 0)
        printf("%llu runtime_prepare%s failed reading a compiled cache built for an earlier "
               "runtime or OS version (cache_stale): no death and no record; the fix is a cache "
               "key that names the model digest, the runtime and the OS version\n",
               (unsigned long long)stale, stale > 1 ? "s" : "");
    if (req > 0)
        printf("%llu request%s failed because a part could not be made ready (part_failed)\n",
               (unsigned long long)req, req > 1 ? "s" : "");
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
    status = gather(files, nfiles, a.process, t, &items, &n);
    others o;
    leave_out_others(items, &n, a.process, &o);
    rpl_verdict *vs = NULL;
    if (status == CLI_OK)
        status = verdicts(items, n, t, nfiles == 0, &vs);
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
        while (j < n && same_record(&items[k], &items[j], &vs[k], &vs[j]))
            j++;
        print_text(&items[k], &vs[k], k == 0, j - k, items[j - 1].x.timestamp_ms);
        k = j;
    }
    free(vs);
    if (status == CLI_OK && json) {
        status = print_json(arr, &o, t, failed);
        arr = NULL;
    }
    json_decref(arr);
    if (status == CLI_OK && !json && n == 0 && o.n + o.more == 0)
        printf("no exit records in the trace\n");
    if (status == CLI_OK && !json)
        print_failures(t);
    if (status == CLI_OK && !json)
        print_others(&o, n > 0);
    free(items);
    rpl_trace_exits_free(t);
    if (status == CLI_OK && fflush(stdout) != 0)
        status = CLI_FAILURE;
    return status;
}
