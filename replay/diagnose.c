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

/* The names live with the exit records the model writes (models/names.c). */
const char *rpl_reason_name(int code) { return mdl_aei_reason_name(code); }

/* ------------------------------------------------------------ values */

void rpl__copy_text(char *dst, const char *s, size_t n)
{
    size_t k = 0;
    for (; k < n && k + 1 < RPL_TEXT_MAX; k++)
        dst[k] = (unsigned char)s[k] < 0x20 ? ' ' : s[k];
    dst[k] = '\0';
}

int rpl__parse_int(const char *s, size_t n, int64_t *out)
{
    size_t k = 0;
    int neg = 0;
    if (k < n && s[k] == '-')
        neg = 1, k++;
    if (k == n || !isdigit((unsigned char)s[k]))
        return 0;
    int64_t v = 0;
    for (; k < n && isdigit((unsigned char)s[k]); k++) {
        if (v > (INT64_MAX - 9) / 10)
            return 0;
        v = v * 10 + (s[k] - '0');
    }
    *out = neg ? -v : v;
    return 1;
}

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

/* Days from 1970-01-01 to y-m-d (proleptic Gregorian). */
int64_t rpl__days_from_civil(int64_t y, unsigned m, unsigned d)
{
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    unsigned yoe = (unsigned)(y - era * 400);
    unsigned doy = (153 * (m + (m > 2 ? (unsigned)-3 : 9)) + 2) / 5 + d - 1;
    unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + (int64_t)doe - 719468;
}

/* "2024-04-28 19:27:47.967" (UTC, no zone), the same with a zone offset
 * after a space ("2025-05-28 01:35:47.00 -0500", as iOS's reports write
 * it), or epoch milliseconds; -1 when not readable unambiguously (a
 * locale-formatted date). */
int64_t rpl__timestamp_ms(const char *s, size_t n)
{
    int64_t v;
    size_t k = 0;
    while (k < n && isdigit((unsigned char)s[k]))
        k++;
    if (k == n && n >= 10 && rpl__parse_int(s, n, &v))
        return v <= INT64_C(253402300799999) ? v : -1; /* epoch ms, to the year 9999 */
    int Y, M, D, h, mi, sec, ms = 0, used = 0;
    char buf[64];
    if (n >= sizeof buf)
        return -1;
    memcpy(buf, s, n);
    buf[n] = '\0';
    if (sscanf(buf, "%4d-%2d-%2d %2d:%2d:%2d%n", &Y, &M, &D, &h, &mi, &sec, &used) != 6)
        return -1;
    if (buf[used] == '.') {
        int frac = 0, digits = 0;
        for (int j = used + 1; isdigit((unsigned char)buf[j]) && digits < 3; j++, digits++)
            frac = frac * 10 + (buf[j] - '0');
        while (digits < 3)
            frac *= 10, digits++;
        ms = frac;
        while (isdigit((unsigned char)buf[++used]))
            ;
    }
    int64_t zone = 0; /* minutes east of UTC */
    const char *z = buf + used;
    if (z[0] == ' ' && (z[1] == '+' || z[1] == '-') && isdigit((unsigned char)z[2]) &&
        isdigit((unsigned char)z[3]) && isdigit((unsigned char)z[4]) &&
        isdigit((unsigned char)z[5]) && z[6] == '\0') {
        zone = ((z[2] - '0') * 10 + (z[3] - '0')) * 60 + (z[4] - '0') * 10 + (z[5] - '0');
        if (z[1] == '-')
            zone = -zone;
    }
    if (M < 1 || M > 12 || D < 1 || D > 31 || h > 23 || mi > 59 || sec > 60)
        return -1;
    int64_t days = rpl__days_from_civil(Y, (unsigned)M, (unsigned)D);
    return ((days * 24 + h) * 60 + mi - zone) * 60000 + (int64_t)sec * 1000 + ms;
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
                case 0: x->timestamp_ms = rpl__timestamp_ms(v, vn); break;
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

void rpl__exit_init(rpl_exit *x, rpl_source src, uint64_t line)
{
    memset(x, 0, sizeof *x);
    x->source = src;
    x->timestamp_ms = -1;
    x->reason_code = -1;
    x->pss_kb = x->rss_kb = -1;
    x->pid = -1;
    x->uid = -1;
    x->line = line;
    x->priority = -1;
    x->lifetime_max_kb = x->free_kb = x->compressor_kb = -1;
    x->lmkd = MDL_LMKD_NONE;
    x->swap_kb = x->yearless_ms = x->joined_gap_ms = -1;
}

const char *rpl__find(const char *s, size_t n, const char *what)
{
    size_t w = strlen(what);
    for (size_t i = 0; i + w <= n; i++)
        if (memcmp(s + i, what, w) == 0)
            return s + i;
    return NULL;
}

/* ----------------------------------------------------------- records */

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

static const char *const ios_names[RPL_IOS_COUNT][2] = {
    {"jetsam", "JetsamEvent (per-process-limit)"},
    {"exc_resource", "EXC_RESOURCE RESOURCE_TYPE_MEMORY report"},
    {"watchdog", "watchdog termination (0x8badf00d)"},
    {"crash", "crash report (EXC_BAD_ACCESS)"},
    {"jetsam_pageshortage", "JetsamEvent (vm-pageshortage)"},
    {"jetsam_system", "JetsamEvent (the system's memory health)"}};

const char *rpl_ios_report_name(rpl_ios_report r)
{
    return (unsigned)r < RPL_IOS_COUNT ? ios_names[r][1] : "?";
}

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
            if (strlen(ios_names[k][0]) == kind && strncmp(e->error, ios_names[k][0], kind) == 0) {
                x->source = RPL_IOS;
                x->ios = (rpl_ios_report)k;
                if (colon != NULL)
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

int rpl_exit_isolated(const rpl_exit *x)
{
    return strstr(x->process, ":sandboxed_process") != NULL ||
           strstr(x->process, ":isolated") != NULL || (x->uid >= 99000 && x->uid <= 99999);
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

void rpl_life_init(rpl_life *l)
{
    l->from = 0;
    l->ran_request = 0;
    l->last_end_us = -1;
    l->signs = 0;
    l->delegate_held = 0;
}

/* The signs of the failure mode in force after event e (RPL_SIGN_*): each
 * holds while what it names does, so a death reads only the ones alive at
 * it: a cache rebuild until it ends; a failed delegate until the fallback's
 * prepare ends or its memory is released; a duplicate attempt until nothing
 * is in flight; a long queue while it is long. */
static unsigned signs_after(rpl_life *l, const trc_event *e)
{
    unsigned s = l->signs;
    int kind = (e->has & TRC_F_KIND) ? (int)e->kind : TRC_SAMPLE;
    const char *err = (e->has & TRC_F_ERROR) ? e->error : "";
    if (kind == TRC_BEGIN && e->stage == TRC_DELEGATE_PREPARE) {
        l->delegate_held = 0; /* a delegate refused at once makes nothing */
        for (int c = 0; (e->has & TRC_F_ALLOC) && c < TRC_MEM_COUNT; c++)
            l->delegate_held |= (e->alloc_has >> c & 1u) && e->alloc[c] > 0;
    }
    if (strcmp(err, "retry_duplicate") == 0)
        s |= RPL_SIGN_RETRY_DUPLICATE;
    else if ((e->has & TRC_F_IN_FLIGHT) && e->in_flight == 0)
        s &= ~(unsigned)RPL_SIGN_RETRY_DUPLICATE;
    /* failed, or denied the GPU in the background while it prepared: the
     * fallback then prepares beside its memory (delegate_held) */
    if (strcmp(err, "delegate_failed") == 0 ||
        (strcmp(err, "delegate_held") == 0 && l->delegate_held))
        s |= RPL_SIGN_DELEGATE_FAILED;
    else if (strcmp(err, "delegate_released") == 0 ||
             (kind == TRC_END && e->stage == TRC_RUNTIME_PREPARE))
        s &= ~(unsigned)RPL_SIGN_DELEGATE_FAILED;
    if (e->has & TRC_F_QUEUE)
        s = e->queue >= RPL_QUEUE_SIGN ? s | RPL_SIGN_QUEUE : s & ~(unsigned)RPL_SIGN_QUEUE;
    if (kind == TRC_BEGIN && e->stage == TRC_CACHE)
        s |= RPL_SIGN_CACHE_REBUILD;
    else if (kind == TRC_END && e->stage == TRC_CACHE)
        s &= ~(unsigned)RPL_SIGN_CACHE_REBUILD;
    return s;
}

int rpl_update_of(const trc_event *e)
{
    if (!(e->has & TRC_F_ERROR) || ((e->has & TRC_F_KIND) && e->kind != TRC_SAMPLE))
        return 0;
    return strcmp(e->error, "os_update") == 0 ? 1 : strcmp(e->error, "runtime_update") == 0 ? 2 : 0;
}

void rpl_life_event(rpl_life *l, const trc_event *e, uint64_t index)
{
    if (!(e->has & TRC_F_KIND) || e->kind != TRC_EXIT_EVENT)
        l->signs = signs_after(l, e);
    if (!(e->has & TRC_F_KIND))
        return;
    if (e->kind == TRC_BEGIN && e->stage == TRC_INFERENCE)
        l->ran_request = 1;
    else if (e->kind == TRC_END)
        l->last_end_us = e->time_us;
    else if (e->kind == TRC_EXIT_EVENT || rpl_update_of(e)) {
        rpl_life_init(l); /* a death, or an update's stop: the next life starts anew */
        l->from = index + 1;
    }
}

int rpl_life_at_exit(const rpl_life *l, trc_pairs *open, const trc_event *e, char *stage,
                     size_t n)
{
    size_t nu = 0;
    const trc_unpaired *u = trc_pairs_report(open, &nu);
    const trc_unpaired *best = NULL;
    for (size_t k = 0; k < nu; k++) /* a begin of an earlier life died with it */
        if (!u[k].is_end && u[k].index >= l->from && (best == NULL || u[k].index > best->index))
            best = &u[k];
    snprintf(stage, n, "%s", best != NULL ? trc_stage_name(best->stage) : "");
    return l->ran_request || (best == NULL && l->last_end_us >= 0 &&
                              l->last_end_us < e->time_us);
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
        if (e.has & TRC_F_APP_VERSION)
            memcpy(version, e.app_version, sizeof version);
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

/* ------------------------------------------------------- the verdict */

static int contains(const char *s, const char *what) { return strstr(s, what) != NULL; }

/* XNU's kill causes by class: over the process's own limit, the system
 * reclaiming memory (its pages, its compressor, its file cache), or not
 * memory at all. */
static rpl_class class_of_cause(const char *cause)
{
    static const char *const own[] = {"per-process-limit", "highwater"};
    static const char *const other[] = {"vnode-limit", "disk-space-shortage", "jettisoned"};
    for (size_t k = 0; k < sizeof own / sizeof *own; k++)
        if (strcmp(cause, own[k]) == 0)
            return RPL_CLASS_LOW_MEMORY;
    for (size_t k = 0; k < sizeof other / sizeof *other; k++)
        if (strcmp(cause, other[k]) == 0)
            return RPL_CLASS_OTHER;
    mdl_jetsam_cause c;
    return mdl_jetsam_cause_parse(cause, &c) == SIM_OK ? RPL_CLASS_SYSTEM_RECLAIM
                                                       : RPL_CLASS_UNKNOWN;
}

/* An entry of a JetsamEvent report (.ips): killed with a cause, or listed
 * only (not killed in this event), or not listed at all. */
static rpl_class classify_jetsam_event(const rpl_exit *x, rpl_verdict *v, int *level)
{
    /* the names cut to 40 bytes on a character's start: the sentence fits */
    char name[41], big[41], states[41], largest[96] = "";
    rpl__utf8_copy(name, sizeof name, x->process);
    rpl__utf8_copy(big, sizeof big, x->largest);
    rpl__utf8_copy(states, sizeof states, x->states[0] ? x->states : "in no state given");
    if (x->largest[0] != '\0' && strcmp(x->largest, x->process) != 0)
        snprintf(largest, sizeof largest, "; another process was the largest (%s)", big);
    else if (x->largest[0] != '\0')
        snprintf(largest, sizeof largest, "; it was the largest process");
    if (!x->jetsam_listed) {
        *level = 0;
        snprintf(v->supports, sizeof v->supports, "nothing: the JetsamEvent does not list %s "
                 "(not running when the event was written)%s", name, largest);
        return RPL_CLASS_UNKNOWN;
    }
    if (x->cause[0] == '\0') {
        *level = 0;
        snprintf(v->supports, sizeof v->supports, "nothing: %s is listed in the JetsamEvent "
                 "(%s) but not killed in this event%s", name, states, largest);
        return RPL_CLASS_UNKNOWN;
    }
    rpl_class cls = class_of_cause(x->cause);
    const char *what = cls == RPL_CLASS_LOW_MEMORY ? "over its own footprint limit"
                       : cls == RPL_CLASS_SYSTEM_RECLAIM
                           ? "the system reclaiming memory, the cause named"
                       : cls == RPL_CLASS_OTHER ? "a cause that is not memory"
                                                : "a cause this version does not know";
    if (cls == RPL_CLASS_UNKNOWN)
        *level = 0;
    snprintf(v->supports, sizeof v->supports, "a JetsamEvent with reason %s (%s), the process "
             "%s%s", x->cause, what, states, largest);
    return cls;
}

/* An iOS report's class: its cause is named (an EXC_RESOURCE report alone
 * proves no death: *level 0). */
static rpl_class classify_ios(const rpl_exit *x, rpl_verdict *v, int *level)
{
    if (x->jetsam_event)
        return classify_jetsam_event(x, v, level);
    /* iOS reports name their cause: a per-process-limit kill is
     * low_memory in the foreground and the background alike, a
     * page-shortage kill of the idle band is system_reclaim; an
     * EXC_RESOURCE report alone proves no death */
    static const rpl_class cls_of[RPL_IOS_COUNT] = {
        RPL_CLASS_LOW_MEMORY, RPL_CLASS_UNKNOWN, RPL_CLASS_WATCHDOG, RPL_CLASS_NATIVE_CRASH,
        RPL_CLASS_SYSTEM_RECLAIM, RPL_CLASS_SYSTEM_RECLAIM};
    static const char *const what[RPL_IOS_COUNT] = {
        "jetsam ended the process over its per-process footprint limit",
        ("the footprint crossed a memory threshold; that report is a diagnostic, not a "
         "kill: the death needs its JetsamEvent"),
        "the launch took longer than the watchdog allows",
        "the process crashed",
        "memorystatus killed processes up the bands until available pages were above "
        "critical",
        "memorystatus killed the process for the system's memory health"};
    rpl_class cls = cls_of[x->ios];
    if (x->ios == RPL_IOS_EXC_RESOURCE)
        *level = 0;
    const char *name = rpl_ios_report_name(x->ios);
    if (x->ios == RPL_IOS_JETSAM_SYSTEM && x->cause[0] != '\0') {
        snprintf(v->supports, sizeof v->supports, "a JetsamEvent with reason %.31s: %s",
                 x->cause, what[x->ios]);
        return class_of_cause(x->cause) == RPL_CLASS_UNKNOWN ? cls : class_of_cause(x->cause);
    }
    snprintf(v->supports, sizeof v->supports, "%s %s: %s",
             strchr("AEIOU", name[0]) != NULL ? "an" : "a", name,
             what[x->ios]);
    return cls;
}

/* An ApplicationExitInfo record's class, by its reason (bg: importance
 * 400 or more, the app in the background). */
static rpl_class classify_exit_info(const rpl_exit *x, rpl_verdict *v, int *level, int bg)
{
    rpl_class cls = RPL_CLASS_UNKNOWN;
    switch (x->reason_code) {
    case 3:
        cls = bg ? RPL_CLASS_SYSTEM_RECLAIM : RPL_CLASS_LOW_MEMORY;
        snprintf(v->supports, sizeof v->supports, "a LOW_MEMORY exit record%s",
                 bg ? " while the app was in the background (importance >= 400)" : "");
        break;
    case 2:
        if (x->has_status && x->status == 9) {
            cls = bg ? RPL_CLASS_SYSTEM_RECLAIM : RPL_CLASS_LOW_MEMORY;
            snprintf(v->supports, sizeof v->supports, "SIGNALED with status 9: a kill, "
                     "maybe for memory (other killers send signal 9 too)");
            *level = 1;
        } else {
            cls = RPL_CLASS_OTHER;
            snprintf(v->supports, sizeof v->supports, "SIGNALED: a signal that is not a "
                     "memory kill");
        }
        break;
    case 4:
        if (contains(x->description, "OutOfMemoryError")) {
            cls = RPL_CLASS_JAVA_CRASH;
            snprintf(v->supports, sizeof v->supports, "a CRASH with OutOfMemoryError: the "
                     "Java heap was full");
        } else {
            cls = RPL_CLASS_OTHER;
            snprintf(v->supports, sizeof v->supports, "a Java CRASH that is not an "
                     "OutOfMemoryError: not a memory class");
        }
        break;
    case 5:
        cls = RPL_CLASS_NATIVE_CRASH;
        snprintf(v->supports, sizeof v->supports, "a CRASH_NATIVE record");
        break;
    case 6:
        cls = RPL_CLASS_ANR;
        snprintf(v->supports, sizeof v->supports, "an ANR record: the main thread was "
                 "blocked");
        break;
    case -1:
    case 0:
        cls = RPL_CLASS_UNKNOWN;
        *level = 0;
        snprintf(v->supports, sizeof v->supports, "nothing: the record gives no reason");
        break;
    default:
        cls = RPL_CLASS_OTHER;
        snprintf(v->supports, sizeof v->supports, "reason %s: the process ended for a "
                 "reason that is not memory", rpl_reason_name(x->reason_code));
        break;
    }
    return cls;
}

/* The class the record supports (docs/traces.md "oomsim diagnose"), with what
 * supports it in v->supports; *level: 1 supported, 0 unconfirmed. */
static rpl_class classify(const rpl_exit *x, rpl_verdict *v, int *level)
{
    int bg = x->has_importance && x->importance >= 400;
    if (x->source == RPL_IOS)
        return classify_ios(x, v, level);
    char name[41];
    rpl__utf8_copy(name, sizeof name, x->process);
    if (x->source == RPL_KERNEL) {
        snprintf(v->supports, sizeof v->supports, "the kernel's OOM killer killed %s (pid %lld): "
                 "lmkd did not free memory in time", name, (long long)x->pid);
        return RPL_CLASS_KERNEL_OOM;
    }
    if (x->source == RPL_LMKD) {
        snprintf(v->supports, sizeof v->supports, "an lmkd kill of %s at oom_score_adj %d%s%s%s",
                 name, x->adj, x->has_adj ? "" : " (adj not given)",
                 x->lmkd != MDL_LMKD_NONE ? ", reason " : "",
                 x->lmkd != MDL_LMKD_NONE ? mdl_lmkd_reason_name(x->lmkd) : "");
        return x->has_adj && x->adj >= 700 ? RPL_CLASS_SYSTEM_RECLAIM : RPL_CLASS_LOW_MEMORY;
    }
    rpl_class c = classify_exit_info(x, v, level, bg);
    if (x->kernel_oom && rpl_class_is_memory(c)) {
        c = RPL_CLASS_KERNEL_OOM;
        *level = 1;
        snprintf(v->supports, sizeof v->supports, "SIGNALED with status 9 and the kernel's OOM "
                 "killer named for it: lmkd did not free memory in time");
    }
    if (x->joined_line > 0 && rpl_class_is_memory(c)) {
        /* the kill line is the system's own account of the same death */
        char gap[48] = "the line has no time";
        if (x->joined_gap_ms >= 0)
            snprintf(gap, sizeof gap, "%.1f s apart", (double)x->joined_gap_ms / 1e3);
        size_t used = strlen(v->supports);
        snprintf(v->supports + used, sizeof v->supports - used, "; %s line %llu, the same pid "
                 "(%s)%s%s", x->joined_source == RPL_KERNEL ? "the kernel's OOM kill" :
                 "lmkd's kill", (unsigned long long)x->joined_line, gap,
                 x->lmkd != MDL_LMKD_NONE ? ": " : "",
                 x->lmkd != MDL_LMKD_NONE ? mdl_lmkd_reason_name(x->lmkd) : "");
        *level = 2;
    }
    return c;
}

/* What is missing to confirm the class. */
static void missing(const rpl_exit *x, const rpl_trace_exits *t, const trace_exit *m,
                    rpl_class cls, rpl_verdict *v)
{
    int memory = rpl_class_is_memory(cls);
    if (x->source == RPL_IOS && x->ios == RPL_IOS_EXC_RESOURCE)
        snprintf(v->missing, sizeof v->missing, "the JetsamEvent written at the death: an "
                 "EXC_RESOURCE report does not end the process");
    else if (x->jetsam_event && x->cause[0] == '\0')
        snprintf(v->missing, sizeof v->missing, "a record of a death: this JetsamEvent did not "
                 "kill the process (look for the report written when it died)");
    else if (cls == RPL_CLASS_UNKNOWN)
        snprintf(v->missing, sizeof v->missing, "everything: no record names a reason");
    else if (m == NULL && t == NULL)
        snprintf(v->missing, sizeof v->missing, "%s", memory
                 ? "a stage trace of the same process and time: the stage and the allocation "
                   "that raised memory are not known"
                 : "a stage trace of the same process and time: the stage that was running is "
                   "not known");
    else if (m == NULL)
        snprintf(v->missing, sizeof v->missing, "a trace exit of the same process within 5 s: "
                 "the record does not match the timeline");
    else if (cls == RPL_CLASS_WATCHDOG)
        snprintf(v->missing, sizeof v->missing, "the main-thread work of the launch that took "
                 "the time");
    else if (cls == RPL_CLASS_JAVA_CRASH)
        snprintf(v->missing, sizeof v->missing, "the device's heap growth limit");
    else if (cls == RPL_CLASS_NATIVE_CRASH)
        snprintf(v->missing, sizeof v->missing, "the tombstone: the delegate or path that "
                 "crashed");
    else if (cls == RPL_CLASS_ANR)
        snprintf(v->missing, sizeof v->missing, "the main-thread trace of the blocking stage");
    else if (memory && x->source == RPL_EXIT_INFO && x->reason_code == 2)
        snprintf(v->missing, sizeof v->missing, "a LOW_MEMORY record or an lmkd line: signal 9 "
                 "alone does not name memory");
    else
        snprintf(v->missing, sizeof v->missing, "nothing for the class");
}

void rpl__verdict_of(const rpl_exit *x, const rpl_trace_exits *t, const trace_exit *m,
                     const char *on, int own, const rpl__outbid *closer, rpl_verdict *v)
{
    memset(v, 0, sizeof *v);
    v->matched_on = "";
    int level = 1; /* 2 confirmed, 1 supported, 0 unconfirmed */
    rpl_class cls = classify(x, v, &level);
    v->own_record = own;
    if (m != NULL) {
        v->matched = 1;
        v->matched_on = own ? "the simulator's own record of this death" : on;
        snprintf(v->matched_stage, sizeof v->matched_stage, "%s", m->stage);
        /* SIGNALED 9 stays "supported" even when it matches: it does not
         * name memory (docs/traces.md "oomsim diagnose") */
        if (level == 1 && (!(x->source == RPL_EXIT_INFO && x->reason_code == 2) ||
                           cls == RPL_CLASS_KERNEL_OOM))
            level = 2;
    }
    v->kind = cls;
    v->cls = rpl_class_name(cls);
    v->evidence = level == 2 ? "confirmed" : level == 1 ? "supported" : "unconfirmed";
    missing(x, t, m, cls, v);
    /* a death this record would match but for the app version */
    const trace_exit *other = m == NULL && closer == NULL && t != NULL
                                  ? rpl__match_any_version(x, t) : NULL;
    if (closer != NULL) {
        v->outbid = 1;
        snprintf(v->missing, sizeof v->missing, "a death of its own in the trace: the death "
                 "nearest to it (%.3f s away) is matched by a record nearer to it (%.3f s "
                 "away), and no other death fits it; one record per death",
                 (double)closer->mine_ms / 1e3, (double)closer->theirs_ms / 1e3);
    } else if (other != NULL) {
        snprintf(v->missing, sizeof v->missing, "a trace of the same app version: the trace "
                 "has a death of this process at this time, of another version (%.40s here, "
                 "%.40s in the trace)", x->app_version, other->app_version);
    }
    /* the one source of advice (docs/model.md "Recovery"): the stage and
     * the start from the matching timeline, when there is one */
    v->started = m != NULL ? m->started : -1;
    v->rec = rpl_advise(cls, x, v->started);
    rpl_ladder_of(v->rec, m != NULL ? m->signs : 0, &v->ladder);
    v->recovery = v->ladder.fix; /* one advice: the ladder's, the mode's own fix */
}

void rpl_diagnose_told(const rpl_exit *x, const char *stage, int started, unsigned signs,
                       rpl_verdict *v)
{
    rpl_diagnose(x, NULL, v);
    snprintf(v->matched_stage, sizeof v->matched_stage, "%s", stage);
    v->started = started;
    v->rec = rpl_advise(v->kind, x, v->started);
    rpl_ladder_of(v->rec, signs, &v->ladder);
    v->recovery = v->ladder.fix;
}
