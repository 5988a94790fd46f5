/* diagnose.c - `oomsim diagnose`: exit records from dumpsys and lmkd,
 * matched to a stage trace, classified with an evidence level
 * (docs/traces.md "oomsim diagnose").
 *
 * Parsing: a dumpsys record's fields are `key=value` with values that may
 * hold spaces (a timestamp, a description, "3 (LOW_MEMORY)"), several to a
 * line or one per line, or all on one line in the toString form.  The
 * fields are found by their known keys, and a value runs to the next known
 * key.  An lmkd kill line is found by its "Kill '" / "Killing '" prefix;
 * its field list differs by version, so each field is looked for by name. */
#include "exits_int.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "traces/traces.h"

/* ------------------------------------------------------------ values */



/* "75MB", "1.2GB", "512KB", "0.00" (MB), "123456kB" -> kB; -1 unreadable. */
static int64_t parse_size_kb(const char *s, size_t n)
{
    size_t k = 0;
    double v = 0, scale = 1;
    int digits = 0, dot = 0;
    for (; k < n && (isdigit((unsigned char)s[k]) || (s[k] == '.' && !dot)); k++) {
        if (s[k] == '.') {
            dot = 1;
            continue;
        }
        digits = 1;
        if (dot)
            scale /= 10, v += (s[k] - '0') * scale;
        else
            v = v * 10 + (s[k] - '0');
        if (v > 1e15)
            return -1;
    }
    if (!digits)
        return -1;
    const char *u = s + k;
    size_t un = n - k;
    double mult = 1024; /* a bare number: MB, as dumpsys prints 0.00 */
    if (un >= 2 && (u[0] == 'G' || u[0] == 'g'))
        mult = 1024.0 * 1024.0;
    else if (un >= 2 && (u[0] == 'K' || u[0] == 'k'))
        mult = 1;
    else if (un >= 2 && (u[0] == 'M' || u[0] == 'm'))
        mult = 1024;
    else if (un >= 1 && u[0] == 'B')
        mult = 1.0 / 1024;
    if (v * mult > 1e18) /* past any memory, and near int64's end: unreadable */
        return -1;
    return (int64_t)(v * mult + 0.5);
}



/* The first space-separated word of v[0..n) into dst (a process name, a
 * version). */
static void copy_word(char *dst, const char *v, size_t n)
{
    size_t e = 0;
    while (e < n && v[e] != ' ')
        e++;
    rpl__copy_text(dst, v, e);
}

/* ----------------------------------------------------------- dumpsys */

static const char *const kv_keys[] = {
    "timestamp", "pid",    "realUid", "packageUid", "definingUid", "user",  "process",
    "reason",    "subreason", "status", "importance", "pss",       "rss",   "description",
    "state",     "trace",  "package", "processName", "version", "versionCode"};
#define NKV (sizeof kv_keys / sizeof *kv_keys)

/* The known key starting at s[i] (after a space, '(' or the line start),
 * or -1. */
static int key_at(const char *s, size_t n, size_t i)
{
    if (i > 0 && s[i - 1] != ' ' && s[i - 1] != '\t' && s[i - 1] != '(' && s[i - 1] != ',')
        return -1;
    for (unsigned k = 0; k < NKV; k++) {
        size_t kl = strlen(kv_keys[k]);
        if (i + kl < n && memcmp(s + i, kv_keys[k], kl) == 0 && s[i + kl] == '=')
            return (int)k;
    }
    return -1;
}

/* Reads the key=value fields of s[0..n) into x; returns how many. */
static int read_fields(const char *s, size_t n, rpl_exit *x)
{
    int found = 0;
    size_t i = 0;
    int key = -1;
    size_t vstart = 0;
    for (;;) {
        int k = i < n ? key_at(s, n, i) : -1;
        if (k >= 0 || i >= n) {
            if (key >= 0) {
                size_t vend = i;
                /* blanks and commas go; a ')' only when it closes the one-line
                 * layout's "ApplicationExitInfo(", not one of the value's own
                 * ("subreason=0 (UNKNOWN)") */
                int depth = 0;
                for (size_t q = vstart; q < vend; q++)
                    depth += s[q] == '(' ? 1 : s[q] == ')' ? -1 : 0;
                while (vend > vstart && (s[vend - 1] == ' ' || s[vend - 1] == '\t' ||
                                         (s[vend - 1] == ')' && depth < 0) || s[vend - 1] == ','))
                    depth += s[--vend] == ')' ? 1 : 0;
                const char *v = s + vstart;
                size_t vn = vend - vstart;
                int64_t num;
                found++;
                switch (key) {
                case 0: x->timestamp_ms = rpl__timestamp_ms(v, vn);
                    x->local_clock = x->timestamp_ms >= 0 && rpl__timestamp_local(v, vn);
                    break;
                case 1: if (rpl__parse_int(v, vn, &num)) x->pid = num; break;
                case 2: if (rpl__parse_int(v, vn, &num) && num >= 0) x->uid = num; break;
                case 8: rpl__copy_text(x->subreason, v, vn); break;
                case 16: copy_word(x->package, v, vn); break;
                case 6:
                case 17: copy_word(x->process, v, vn); break;
                case 7: if (rpl__parse_int(v, vn, &num) && num >= 0 && num < 1000)
                        x->reason_code = (int)num;
                    break;
                case 9: if (rpl__parse_int(v, vn, &num) && num > INT32_MIN && num < INT32_MAX)
                        x->has_status = 1, x->status = (int)num;
                    break;
                case 10: if (rpl__parse_int(v, vn, &num) && num >= 0 && num < 100000)
                        x->has_importance = 1, x->importance = (int)num;
                    break;
                case 11: x->pss_kb = parse_size_kb(v, vn); break;
                case 12: x->rss_kb = parse_size_kb(v, vn); break;
                case 13: rpl__copy_text(x->description, v, vn); break;
                case 18:
                case 19: copy_word(x->app_version, v, vn); break;
                default: break;
                }
            }
            if (i >= n)
                break;
            key = k;
            vstart = i + strlen(kv_keys[k]) + 1;
            i = vstart;
            continue;
        }
        i++;
    }
    return found;
}



/* ----------------------------------------------------------- records */

/* A kill line that goes on in the lines after it (lmkd's and the kernel
 * driver's two-line forms, or a line cut by whoever posted the log): up
 * to three of them joined to it and the whole read again; *pos and *line
 * move past what was joined.  One still without its oom_score_adj is cut:
 * gather leaves it out with a note rather than guess its adj. */
static int continue_kill_line(const char *data, size_t len, size_t *pos, uint64_t *line,
                              const char *t, size_t tn, rpl_exit *x)
{
    char *joined = NULL;
    const char *cur = t;
    size_t curn = tn;
    for (int k = 0; k < 3 && *pos < len && rpl__kill_line_open(cur, curn, x); k++) {
        const char *next = data + *pos;
        const char *nl = memchr(next, '\n', len - *pos);
        size_t nn = nl != NULL ? (size_t)(nl - next) : len - *pos, mn = 0;
        const char *more = rpl__kill_line_more(cur, curn, next, nn, &mn);
        if (more == NULL)
            break;
        char *j = malloc(curn + mn + 2);
        if (j == NULL) {
            free(joined);
            return SIM_ENOMEM;
        }
        memcpy(j, cur, curn);
        j[curn] = ' ';
        memcpy(j + curn + 1, more, mn);
        j[curn + 1 + mn] = '\0';
        free(joined);
        joined = j;
        cur = j;
        curn += mn + 1;
        uint64_t first = x->line;
        rpl__read_kill_line(cur, curn, first, x);
        *pos += nn + (nl != NULL);
        (*line)++;
    }
    free(joined);
    x->cut = x->source == RPL_LMKD && !x->killinfo && !x->has_adj;
    return SIM_OK;
}

int rpl_exits_parse(const char *data, size_t len, const char *name, rpl_exit **out, size_t *n,
                    sim_error *err)
{
    rpl_exit *v = NULL;
    size_t cnt = 0, cap = 0;
    int open = 0; /* a multi-line dumpsys record is being read */
    uint64_t line = 0;
    size_t pos = 0;
    while (pos < len) {
        const char *s = data + pos;
        const char *nl = memchr(s, '\n', len - pos);
        size_t ln = nl != NULL ? (size_t)(nl - s) : len - pos;
        pos += ln + (nl != NULL);
        line++;
        size_t a = 0;
        while (a < ln && (s[a] == ' ' || s[a] == '\t'))
            a++;
        const char *t = s + a;
        size_t tn = ln - a;
        while (tn > 0 && (t[tn - 1] == '\r' || t[tn - 1] == ' '))
            tn--;
        int header = tn >= 21 && memcmp(t, "ApplicationExitInfo #", 21) == 0;
        const char *one = rpl__find(t, tn, "ApplicationExitInfo(");
        rpl_exit x;
        int lmkd = !header && one == NULL && rpl__read_kill_line(t, tn, line, &x);
        if (lmkd && continue_kill_line(data, len, &pos, &line, t, tn, &x) != SIM_OK) {
            free(v);
            return sim_error_set(err, SIM_ENOMEM, "out of memory");
        }
        if (header || one != NULL || lmkd) {
            if (cnt == cap) {
                if (cnt == RPL_EXITS_MAX) {
                    free(v);
                    return sim_error_set(err, SIM_ELIMIT, "%s:%llu: more than %d exit records",
                                         name, (unsigned long long)line, RPL_EXITS_MAX);
                }
                size_t nc = cap ? cap * 2 : 16;
                rpl_exit *nv = realloc(v, nc * sizeof *nv);
                if (nv == NULL) {
                    free(v);
                    return sim_error_set(err, SIM_ENOMEM, "out of memory");
                }
                v = nv;
                cap = nc;
            }
            if (lmkd) {
                v[cnt++] = x;
                open = 0;
            } else if (one != NULL) {
                rpl__exit_init(&v[cnt], RPL_EXIT_INFO, line);
                const char *body = one + 20;
                read_fields(body, (size_t)(t + tn - body), &v[cnt++]);
                open = 0;
            } else {
                rpl__exit_init(&v[cnt++], RPL_EXIT_INFO, line);
                open = 1;
            }
            continue;
        }
        if (open) {
            if (tn == 0 || read_fields(t, tn, &v[cnt - 1]) == 0)
                open = 0; /* the record's fields ended */
        }
    }
    *out = v;
    *n = cnt;
    return SIM_OK;
}

/* ------------------------------------------------------------- trace */

void rpl_exit_of_event(const trc_event *e, uint64_t index, rpl_exit *x)
{
    rpl__exit_init(x, RPL_EXIT_INFO, index);
    int has = (e->has & TRC_F_EXIT) != 0;
    if (has && (e->exit.has & TRC_X_REASON_CODE) && e->exit.reason_code < 1000) {
        x->reason_code = (int)e->exit.reason_code;
        /* an lmkd kill's reason, as its kill line names it (LOW_MEM_AND_SWAP, ...) */
        mdl_lmkd_reason why;
        if ((e->has & TRC_F_ERROR) && mdl_lmkd_reason_parse(e->error, &why) == SIM_OK &&
            why != MDL_LMKD_NONE)
            snprintf(x->description, sizeof x->description, "lmkd: %s", e->error);
        if ((e->has & TRC_F_ERROR) && strcmp(e->error, "kernel_oom") == 0)
            x->kernel_oom = 1; /* the kernel's OOM killer: the trace's own name for it */
    } else if (e->has & TRC_F_ERROR) {
        /* the report's kind, and after a colon a JetsamEvent's cause
         * ("jetsam_system:fc-thrashing") */
        const char *colon = strchr(e->error, ':');
        size_t kind = colon != NULL ? (size_t)(colon - e->error) : strlen(e->error);
        for (int k = 0; k < RPL_IOS_COUNT; k++)
            if (strlen(rpl__ios_report_key((rpl_ios_report)k)) == kind &&
                strncmp(e->error, rpl__ios_report_key((rpl_ios_report)k), kind) == 0) {
                x->source = RPL_IOS;
                x->ios = (rpl_ios_report)k;
                /* MetricKit's count names no cause: the one after the colon
                 * is the simulator's, not the record's */
                if (colon != NULL && x->ios != RPL_IOS_METRICKIT)
                    rpl__copy_text(x->cause, colon + 1, strlen(colon + 1));
            }
    }
    if (has && (e->exit.has & TRC_X_IMPORTANCE) && e->exit.importance < 100000)
        x->has_importance = 1, x->importance = (int)e->exit.importance;
    if (has && (e->exit.has & TRC_X_STATUS))
        x->has_status = 1, x->status = (int)e->exit.status;
    if (has && (e->exit.has & TRC_X_PSS_KB))
        x->pss_kb = e->exit.pss_kb;
    if (has && (e->exit.has & TRC_X_RSS_KB))
        x->rss_kb = e->exit.rss_kb;
    if (has && (e->exit.has & TRC_X_TIMESTAMP_MS))
        x->timestamp_ms = e->exit.timestamp_ms;
    if (has && (e->exit.has & TRC_X_PID))
        x->pid = e->exit.pid;
    if (e->exit_reason == TRC_JAVA_CRASH)
        snprintf(x->description, sizeof x->description, "java.lang.OutOfMemoryError");
    /* the page model's exit: the process's oom_score_adj, as lmkd's kill line
     * gives it, so a simulated kill is read as a logged one */
    if ((e->has & TRC_F_PAGES) && (e->pages_has >> TRC_PG_ADJ & 1u))
        x->has_adj = 1, x->adj = (int)e->pages[TRC_PG_ADJ];
    /* ... and lmkd's kill line, read as a logged one is */
    rpl_exit line;
    if ((e->has & TRC_F_LOG) && rpl__read_kill_line(e->log, strlen(e->log), index, &line)) {
        if (line.pid >= 0)
            x->pid = line.pid;
        if (line.uid >= 0)
            x->uid = line.uid;
        if (line.lmkd != MDL_LMKD_NONE)
            x->lmkd = line.lmkd;
        x->swap_kb = line.swap_kb;
        if (line.has_adj)
            x->has_adj = 1, x->adj = line.adj;
    }
    if (e->has & TRC_F_PROCESS)
        rpl__copy_text(x->process, e->process, strlen(e->process));
}


/* An exit event of the trace as a record, with the process and app
 * version last seen before it. */
static void fill_exit(trace_exit *x, const trc_event *e, uint64_t idx, const char *process,
                      const char *version)
{
    rpl_exit_of_event(e, idx, &x->record);
    rpl__copy_text(x->record.process, process, strlen(process));
    memcpy(x->process, process, TRC_TEXT_MAX);
    memcpy(x->app_version, version, TRC_TEXT_MAX);
    x->timestamp_ms = x->record.timestamp_ms;
}

int rpl_trace_exits_load(const char *path, rpl_trace_exits **out, sim_error *err)
{
    trc_reader *r = trc_open(path, -1, NULL, err);
    if (r == NULL)
        return err->code;
    rpl_trace_exits *t = calloc(1, sizeof *t);
    trc_pairs *p = trc_pairs_create(err);
    if (t == NULL || p == NULL) {
        free(t);
        trc_pairs_destroy(p);
        trc_close(r);
        return sim_error_set(err, SIM_ENOMEM, "out of memory");
    }
    size_t cap = 0;
    trc_event e;
    char process[TRC_TEXT_MAX] = "", version[TRC_TEXT_MAX] = "";
    int rc;
    rpl_life life;
    rpl_life_init(&life);
    while ((rc = trc_next(r, &e, err)) == 1) {
        uint64_t idx = trc_events_read(r) - 1;
        if (e.has & TRC_F_PROCESS)
            memcpy(process, e.process, sizeof process);
        if (e.has & TRC_F_APP_VERSION) {
            memcpy(version, e.app_version, sizeof version);
            if (t->builds == 0 && e.app_version[0] != '\0')
                memcpy(t->build, e.app_version, sizeof t->build), t->builds = 1;
            else if (t->builds == 1 && strcmp(t->build, e.app_version) != 0)
                t->builds = 2;
        }
        if ((rc = trc_pairs_add(p, &e, idx, err)) != SIM_OK)
            break;
        if (e.has & TRC_F_ERROR) {
            t->stale += strcmp(e.error, "cache_stale") == 0;
            t->failed += strcmp(e.error, "part_failed") == 0;
        }
        if (e.kind != TRC_EXIT_EVENT || !(e.has & TRC_F_KIND)) {
            rpl_life_event(&life, &e, idx);
            continue;
        }
        if (t->n == cap) {
            size_t nc = cap ? cap * 2 : 8;
            if (nc > RPL_EXITS_MAX) {
                rc = sim_error_set(err, SIM_ELIMIT, "%s: more than %d exit events", path,
                                   RPL_EXITS_MAX);
                break;
            }
            trace_exit *nv = realloc(t->v, nc * sizeof *nv);
            if (nv == NULL) {
                rc = sim_error_set(err, SIM_ENOMEM, "out of memory");
                break;
            }
            t->v = nv;
            cap = nc;
        }
        trace_exit *x = &t->v[t->n++];
        fill_exit(x, &e, idx, process, version);
        x->started = rpl_life_at_exit(&life, p, &e, x->stage, sizeof x->stage);
        x->signs = life.signs;
        rpl_life_event(&life, &e, idx); /* the next life starts anew */
    }
    trc_pairs_destroy(p);
    trc_close(r);
    if (rc != 0) {
        rpl_trace_exits_free(t);
        return rc;
    }
    *out = t;
    return SIM_OK;
}

size_t rpl_trace_exits_count(const rpl_trace_exits *t) { return t->n; }

void rpl_trace_failures(const rpl_trace_exits *t, uint64_t *stale, uint64_t *failed)
{
    *stale = t != NULL ? t->stale : 0;
    *failed = t != NULL ? t->failed : 0;
}
const rpl_exit *rpl_trace_exit_record(const rpl_trace_exits *t, size_t k)
{
    return &t->v[k].record;
}

void rpl_trace_exits_free(rpl_trace_exits *t)
{
    if (t == NULL)
        return;
    free(t->v);
    free(t);
}

