/* gather.c - the exit records `oomsim diagnose` reads (docs/traces.md
 * "oomsim diagnose"): every file's (dumpsys exit-info output, lmkd and
 * kernel kill lines in a log, iOS JetsamEvent reports; a directory stands
 * for its .ips files), the kill lines joined to the records of the same
 * deaths, or without files the trace's own records; the deaths of the
 * app's other processes left out; runs of identical records found; the
 * verdicts, one record per death.  It prints nothing: a file skipped is
 * told through the caller's note function, a refusal through err (its
 * message whole, "oomsim: " first, as the command prints it). */
#include "exits_int.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const char *source_name(const rpl_exit *x)
{
    return x->source == RPL_IOS && x->ios == RPL_IOS_METRICKIT ? "MetricKit"
           : x->source == RPL_IOS ? "JetsamEvent" : x->source == RPL_LMKD ? "lmkd"
           : x->source == RPL_KERNEL ? "kernel" : "exit-info";
}

static int out_of_memory(sim_error *err)
{
    return sim_error_set(err, SIM_ENOMEM, "out of memory");
}

/* The kill lines joined to the exit records of the same deaths, across
 * every file given (a logcat beside a dumpsys dump). */
static int join(rpl_record *items, size_t *n, sim_error *err)
{
    rpl_exit *xs = malloc((*n + 1) * sizeof *xs);
    if (xs == NULL)
        return out_of_memory(err);
    for (size_t k = 0; k < *n; k++)
        xs[k] = items[k].x;
    *n = rpl_exits_join(xs, *n);
    for (size_t k = 0; k < *n; k++)
        items[k] = (rpl_record){xs[k], source_name(&xs[k])};
    free(xs);
    return SIM_OK;
}

/* Where notes go, and the records gathered so far. */
typedef struct gathering {
    const char *process;
    int hinted;          /* the name is the trace's, not --process: a report may not list it */
    rpl_note_fn note;
    void *ctx;
    rpl_record *items;
    size_t n;
    uint32_t files;      /* the files read so far: each record's file */
    sim_error *err;
} gathering;

static void note(const gathering *g, const char *fmt, const char *file)
{
    char text[4096 + 160]; /* a path as long as the system allows, and the sentence */
    snprintf(text, sizeof text, fmt, file);
    if (g->note != NULL)
        g->note(g->ctx, text);
}

/* A file's records appended to g->items: n of them, from xs. */
static int append(gathering *g, const rpl_exit *xs, size_t nx)
{
    rpl_record *ni = realloc(g->items, (g->n + nx + 1) * sizeof *ni);
    if (ni == NULL)
        return out_of_memory(g->err);
    g->items = ni;
    for (size_t k = 0; k < nx; k++) {
        ni[g->n] = (rpl_record){xs[k], source_name(&xs[k])};
        ni[g->n++].x.file = g->files;
    }
    g->files++;
    return SIM_OK;
}

/* The kill lines cut short (no oom_score_adj, nothing after them to join)
 * left out, each said with its line: an adj guessed would decide the
 * death's class.  Returns how many records are left. */
static size_t leave_out_cut(const gathering *g, const char *file, rpl_exit *xs, size_t nx)
{
    size_t kept = 0;
    for (size_t k = 0; k < nx; k++) {
        if (!xs[k].cut) {
            xs[kept++] = xs[k];
            continue;
        }
        char text[4096 + 200];
        snprintf(text, sizeof text, "%s:%llu: an lmkd kill line cut short before its "
                 "oom_score_adj, and the next line does not go on with it: not read (join the "
                 "wrapped line)", file, (unsigned long long)xs[k].line);
        if (g->note != NULL)
            g->note(g->ctx, text);
    }
    return kept;
}

/* One file's records appended: dumpsys or lmkd lines, or a JetsamEvent
 * report (found by its header line).  in_dir: the file is one of a
 * directory's, where a report of another kind (a crash report) and a
 * JetsamEvent that killed nothing are skipped with a note, not refused. */
static int gather_file(gathering *g, const char *file, int in_dir)
{
    char *text = NULL;
    size_t len = 0;
    rpl_exit *xs = NULL;
    size_t nx = 0;
    int rc = SIM_OK, ips = 0, skipped = 0;
    if ((rc = sim_read_file(file, (size_t)256 << 20, &text, &len, g->err)) != SIM_OK) {
        /* refused: err says why */
    } else if ((ips = rpl_ips_detect(text, len)) != 1 && in_dir) {
        note(g, ips == 0 ? "%s: skipped, not an iOS report"
                         : "%s: skipped, not a JetsamEvent report", file);
        skipped = 1;
    } else if ((rc = ips != 0 ? rpl_ips_parse(text, len, file, g->process, &xs, &nx, g->err)
                              : rpl_exits_parse(text, len, file, &xs, &nx, g->err)) != SIM_OK) {
        /* refused: err says why */
    } else if (ips != 0 && g->hinted && nx == 1 && xs[0].jetsam_event && !xs[0].jetsam_listed) {
        /* the trace's process is not in this report (a generated trace names
         * its candidate): read every process it killed, as with no name */
        free(xs);
        xs = NULL;
        nx = 0;
        rc = rpl_ips_parse(text, len, file, NULL, &xs, &nx, g->err);
    }
    if (rc != SIM_OK || skipped) {
        /* refused or skipped: said above */
    } else if (nx == 0 && in_dir && ips) {
        note(g, "%s: skipped, the JetsamEvent killed no process (--process NAME shows the "
                "app's entry)", file);
    } else if (nx == 0) {
        rc = sim_error_set(g->err, SIM_EINPUT, ips != 0
                               ? "oomsim: %s: the JetsamEvent killed no process: give "
                                 "--process NAME to see the app's entry"
                               : "oomsim: no exit record found in %s: expected dumpsys "
                                 "exit-info, lmkd lines or a JetsamEvent report", file);
    } else {
        nx = leave_out_cut(g, file, xs, nx);
        rc = nx > 0 ? append(g, xs, nx)
                    : sim_error_set(g->err, SIM_EINPUT, "oomsim: %s: every kill line in it is "
                                    "cut short before its oom_score_adj: join the wrapped lines",
                                    file);
    }
    free(text);
    free(xs);
    return rc;
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
static int gather_path(gathering *g, const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISDIR(st.st_mode))
        return gather_file(g, path, 0);
    struct dirent **names = NULL;
    int count = scandir(path, &names, ips_entry, alphasort);
    if (count < 0)
        return sim_error_set(g->err, SIM_EINPUT, "oomsim: cannot read the directory %s: %s",
                             path, strerror(errno));
    int rc = SIM_OK;
    size_t before = g->n;
    if (count == 0)
        rc = sim_error_set(g->err, SIM_EINPUT, "oomsim: %s holds no .ips report", path);
    for (int k = 0; k < count; k++) {
        if (rc == SIM_OK) {
            size_t len = strlen(path) + strlen(names[k]->d_name) + 2;
            char *file = malloc(len);
            if (file == NULL) {
                rc = out_of_memory(g->err);
            } else {
                snprintf(file, len, "%s/%s", path, names[k]->d_name);
                struct stat fs;
                if (stat(file, &fs) == 0 && S_ISREG(fs.st_mode))
                    rc = gather_file(g, file, 1);
            }
            free(file);
        }
        free(names[k]);
    }
    free(names);
    if (rc == SIM_OK && g->n == before)
        rc = sim_error_set(g->err, SIM_EINPUT,
                           "oomsim: %s: no record to diagnose in its .ips reports", path);
    return rc;
}

int rpl_gather(const char *const *files, int nfiles, const char *process,
               const rpl_trace_exits *t, rpl_note_fn note_fn, void *ctx, rpl_record **out,
               size_t *nout, sim_error *err)
{
    gathering g = {process, 0, note_fn, ctx, NULL, 0, 0, err};
    int rc = SIM_OK;
    if (process == NULL && t != NULL && rpl_trace_exits_count(t) > 0 &&
        rpl_trace_exit_record(t, 0)->process[0] != '\0')
        g.process = rpl_trace_exit_record(t, 0)->process, g.hinted = 1;
    for (int f = 0; f < nfiles && rc == SIM_OK; f++)
        rc = gather_path(&g, files[f]);
    if (rc == SIM_OK && g.n > 0)
        rc = join(g.items, &g.n, err);
    if (rc == SIM_OK && nfiles == 0 && t != NULL) {
        size_t nt = rpl_trace_exits_count(t);
        g.items = malloc((nt + 1) * sizeof *g.items);
        if (g.items == NULL)
            rc = out_of_memory(err);
        for (size_t k = 0; g.items != NULL && k < nt; k++)
            g.items[g.n++] = (rpl_record){*rpl_trace_exit_record(t, k), "trace"};
    }
    if (rc != SIM_OK) { /* nothing half-gathered reaches the caller */
        free(g.items);
        g.items = NULL;
        g.n = 0;
    }
    *out = g.items;
    *nout = g.n;
    return rc;
}

void rpl_exits_to_utc(rpl_record *items, size_t n, int zone_min)
{
    for (size_t k = 0; k < n; k++) {
        rpl_exit *x = &items[k].x;
        if (!x->local_clock || x->timestamp_ms < 0)
            continue;
        x->timestamp_ms -= (int64_t)zone_min * 60000;
        x->local_clock = 0;
    }
}

int rpl_same_record(const rpl_record *a, const rpl_record *b, const rpl_verdict *va,
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
           x->pss_kb == y->pss_kb && x->rss_kb == y->rss_kb && x->joined_line == 0 &&
           x->local_clock == y->local_clock &&
           y->joined_line == 0;
}

/* The package of a process name: up to its ':' (PACKAGE:NAME). */
static size_t package_len(const char *p)
{
    size_t k = 0;
    while (p[k] != '\0' && p[k] != ':')
        k++;
    return k;
}

/* One more left out of process p. */
static void tally_other(rpl_others *o, const char *p)
{
    unsigned j = 0;
    while (j < o->n && strcmp(o->name[j], p) != 0)
        j++;
    if (j == o->n && o->n == RPL_OTHERS_MAX) {
        o->more++;
        return;
    }
    if (j == o->n)
        snprintf(o->name[o->n++], RPL_TEXT_MAX, "%s", p);
    o->count[j]++;
}

/* Whether a record of the package gives uid (a killinfo names its victim
 * by pid and uid alone). */
static int package_uid(const rpl_record *items, size_t n, const char *process, size_t len,
                       int64_t uid)
{
    for (size_t k = 0; uid >= 0 && k < n; k++) {
        const char *p = items[k].x.process;
        if (package_len(p) == len && strncmp(p, process, len) == 0 && items[k].x.uid == uid)
            return 1;
    }
    return 0;
}

void rpl_leave_out_others(rpl_record *items, size_t *n, const char *process, rpl_others *o,
                          rpl_others *apps)
{
    memset(o, 0, sizeof *o);
    memset(apps, 0, sizeof *apps);
    size_t len = process != NULL ? package_len(process) : 0, kept = 0;
    /* decided on the whole list first: the loop below compacts it */
    unsigned char *mine = calloc(*n + 1, 1);
    for (size_t k = 0; mine != NULL && k < *n; k++)
        mine[k] = items[k].x.killinfo && items[k].x.process[0] == '\0' && len > 0 &&
                  package_uid(items, *n, process, len, items[k].x.uid);
    for (size_t k = 0; k < *n; k++) {
        const rpl_exit *x = &items[k].x;
        const char *p = x->process;
        int same_package = len > 0 && package_len(p) == len && strncmp(p, process, len) == 0;
        if (len > 0 && x->killinfo && p[0] == '\0' && (mine == NULL || !mine[k])) {
            tally_other(apps, "(a killinfo of a uid no record of the app gives)");
            continue;
        }
        /* another process of the same package: PACKAGE or PACKAGE:NAME */
        if (same_package && strcmp(p, process) != 0)
            tally_other(o, p);
        /* a kill line of another app: the system freeing memory, logged for
         * every process it kills (an exit record is the app's own) */
        else if (len > 0 && !same_package && p[0] != '\0' &&
                 (x->source == RPL_LMKD || x->source == RPL_KERNEL))
            tally_other(apps, p);
        else
            items[kept++] = items[k];
    }
    *n = kept;
    free(mine);
}

int rpl_verdicts(const rpl_record *items, size_t n, const rpl_trace_exits *t, int own,
                 rpl_verdict **out, sim_error *err)
{
    rpl_exit *xs = malloc((n + 1) * sizeof *xs);
    rpl_verdict *vs = malloc((n + 1) * sizeof *vs);
    for (size_t k = 0; xs != NULL && k < n; k++)
        xs[k] = items[k].x;
    if (xs == NULL || vs == NULL || rpl_diagnose_all(xs, n, t, own, vs) != SIM_OK) {
        free(xs);
        free(vs);
        return out_of_memory(err);
    }
    free(xs);
    *out = vs;
    return SIM_OK;
}
