/* chrome.c - the timeline of one replication in the JSON trace event
 * format (the "Trace Event Format" that the Perfetto UI and
 * chrome://tracing open; docs/perfetto.md, "Export").
 *
 * From the world's trace events, in order: counters for the memory by
 * category, the counted total and the kill line in force (each written
 * when it changes, so counters never go back in time), one complete slice
 * ("X") per stage and part on the part's thread, one per request on its
 * session slot's thread, instants for deaths (the exit record in args),
 * warnings, cached-app kills, pressure spikes, the other notes and the
 * recovery actions, and the process and thread names as metadata.  Every
 * event has a pid and a tid; every counter has args. */
#include "results.h"
#include "internal.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define CH_OPEN 256  /* slices open at once */
#define CH_LANES 64  /* parts and session slots named as threads */
#define TID_NOTES 1  /* deaths, warnings, notes */
#define TID_PART 10  /* + the part's index */
#define TID_SLOT 100 /* + the session slot */

typedef struct ch_open {
    int stage;
    char part[TRC_TEXT_MAX];
    int64_t session, request;
    int64_t t0;
} ch_open;

struct res_chrome {
    sim_text out;
    unsigned counted;                 /* 1 << TRC_MEM_* the device counts */
    int64_t line[2];                  /* the kill line: background, foreground */
    int fg;
    res__memfollow follow;
    int64_t last_mem[TRC_MEM_COUNT], last_counted, last_line;
    int wrote_mem;
    int64_t last_t;
    int64_t last_pages[5];            /* the page counters written last, -1: none */
    ch_open open[CH_OPEN];
    unsigned nopen;
    char parts[CH_LANES][TRC_TEXT_MAX];
    unsigned nparts;
    uint64_t slots;                   /* session slots used (bit k: slot k) */
    uint64_t events;
    int oom;
};

static void str(sim_text *o, const char *s)
{
    sim_text_put(o, "\"", 1);
    for (; *s != '\0'; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            sim_text_printf(o, "\\%c", c);
        else if (c < 0x20)
            sim_text_printf(o, "\\u%04x", c);
        else
            sim_text_put(o, s, 1);
    }
    sim_text_put(o, "\"", 1);
}

/* The start of an event: ph, name, ts, pid, tid (the caller adds the rest
 * and the closing brace). */
static void head(res_chrome *c, char ph, const char *name, int64_t ts, int tid)
{
    sim_text_str(&c->out, c->events++ == 0 ? "\n" : ",\n");
    sim_text_printf(&c->out, "{\"ph\":\"%c\",\"name\":", ph);
    str(&c->out, name);
    sim_text_printf(&c->out, ",\"ts\":%" PRId64 ",\"pid\":1,\"tid\":%d", ts, tid);
}

void res_chrome_lines(res_chrome *c, const mdl_cell *cell)
{
    if (c == NULL)
        return;
    c->line[0] = mdl_cell_model_line(cell, 0);
    c->line[1] = mdl_cell_model_line(cell, 1);
}

res_chrome *res_chrome_create(const mdl_device *dev)
{
    res_chrome *c = calloc(1, sizeof *c);
    if (c == NULL)
        return NULL;
    static const int cat_of[TRC_MEM_COUNT] = {MDL_CAT_JAVA, MDL_CAT_NATIVE, MDL_CAT_GPU,
                                              MDL_CAT_FILE};
    for (int k = 0; k < TRC_MEM_COUNT; k++)
        if (dev->counts_mask & MDL_CAT_BIT(cat_of[k]))
            c->counted |= 1u << k;
    c->line[0] = mdl_kill_line(dev, 0);
    c->line[1] = mdl_kill_line(dev, 1);
    c->fg = 1;
    c->last_counted = c->last_line = -1;
    for (int k = 0; k < 5; k++)
        c->last_pages[k] = -1;
    sim_text_str(&c->out, "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[");
    return c;
}

void res_chrome_free(res_chrome *c)
{
    if (c == NULL)
        return;
    free(sim_text_done(&c->out));
    free(c);
}

static void counter(res_chrome *c, int64_t at, const char *name, const char *key, int64_t v)
{
    head(c, 'C', name, at, 0);
    sim_text_printf(&c->out, ",\"args\":{\"%s\":%" PRId64 "}}", key, v);
}

static const char *const mem_names[TRC_MEM_COUNT] = {"java", "native", "gpu", "file"};

/* The memory is m from `at` on. */
static void record(void *ctx, sim_time at, const int64_t m[TRC_MEM_COUNT])
{
    res_chrome *c = ctx;
    if (at < c->last_t)
        at = c->last_t; /* never back in time */
    c->last_t = at;
    if (!c->wrote_mem || memcmp(m, c->last_mem, sizeof c->last_mem) != 0) {
        head(c, 'C', "memory", at, 0);
        sim_text_str(&c->out, ",\"args\":{");
        for (int k = 0; k < TRC_MEM_COUNT; k++)
            sim_text_printf(&c->out, "%s\"%s\":%" PRId64, k ? "," : "", mem_names[k], m[k]);
        sim_text_str(&c->out, "}}");
        memcpy(c->last_mem, m, sizeof c->last_mem);
        c->wrote_mem = 1;
    }
    int64_t total = 0;
    for (int k = 0; k < TRC_MEM_COUNT; k++)
        if (c->counted >> k & 1u)
            total += m[k];
    if (total != c->last_counted) {
        counter(c, at, "counted", "bytes", total);
        c->last_counted = total;
    }
}

static void line_now(res_chrome *c, int64_t at)
{
    int64_t line = c->line[c->fg];
    if (line >= 0 && line != c->last_line) {
        if (at < c->last_t)
            at = c->last_t;
        c->last_t = at;
        counter(c, at, "kill line", "bytes", line);
        c->last_line = line;
    }
}

/* The phone's pages (Android, PSI mode: an event's `pages` map), one
 * counter each, written when it changes. */
static void pages_now(res_chrome *c, const trc_event *e)
{
    static const struct {
        int key;
        const char *name, *unit;
    } pc[5] = {{TRC_PG_FREE, "free pages", "bytes"},
               {TRC_PG_FILE_LRU, "file LRU", "bytes"},
               {TRC_PG_SWAP_USED, "swap used", "bytes"},
               {TRC_PG_THRASHING, "thrashing %", "percent"},
               {TRC_PG_PSI_SOME_US, "psi some", "us"}};
    if (!(e->has & TRC_F_PAGES))
        return;
    int64_t at = e->time_us < c->last_t ? c->last_t : e->time_us;
    for (int k = 0; k < 5; k++) {
        if (!(e->pages_has >> pc[k].key & 1u) || e->pages[pc[k].key] == c->last_pages[k])
            continue;
        c->last_t = at;
        counter(c, at, pc[k].name, pc[k].unit, e->pages[pc[k].key]);
        c->last_pages[k] = e->pages[pc[k].key];
    }
}

static int lane_of_part(res_chrome *c, const char *part)
{
    for (unsigned k = 0; k < c->nparts; k++)
        if (strcmp(c->parts[k], part) == 0)
            return TID_PART + (int)k;
    if (c->nparts == CH_LANES)
        return TID_PART + CH_LANES - 1; /* more parts share the last lane */
    snprintf(c->parts[c->nparts], sizeof c->parts[0], "%s", part);
    return TID_PART + (int)c->nparts++;
}

/* A slice from its begin to `t1`. */
static void slice(res_chrome *c, const ch_open *o, int64_t t1, const char *ended_by)
{
    char name[96];
    int tid;
    if (o->stage == TRC_INFERENCE && o->request >= 0) {
        snprintf(name, sizeof name, "request %" PRId64, o->request);
        int64_t slot = o->session >= 0 && o->session < 64 ? o->session : 63;
        c->slots |= 1ull << slot;
        tid = TID_SLOT + (int)slot;
    } else {
        snprintf(name, sizeof name, "%s", trc_stage_name((trc_stage)o->stage));
        tid = lane_of_part(c, o->part);
    }
    head(c, 'X', name, o->t0, tid);
    sim_text_printf(&c->out, ",\"dur\":%" PRId64 ",\"args\":{\"stage\":",
                    t1 > o->t0 ? t1 - o->t0 : 0);
    str(&c->out, trc_stage_name((trc_stage)o->stage));
    sim_text_str(&c->out, ",\"part\":");
    str(&c->out, o->part);
    if (ended_by != NULL) {
        sim_text_str(&c->out, ",\"ended_by\":");
        str(&c->out, ended_by);
    }
    sim_text_str(&c->out, "}}");
}

static void close_all(res_chrome *c, int64_t t1, const char *why)
{
    for (unsigned k = 0; k < c->nopen; k++)
        slice(c, &c->open[k], t1, why);
    c->nopen = 0;
}

static void instant(res_chrome *c, const trc_event *e, const char *name)
{
    head(c, 'i', name, e->time_us, TID_NOTES);
    sim_text_str(&c->out, ",\"s\":\"p\"");
}

static void death(res_chrome *c, const trc_event *e)
{
    char name[96];
    snprintf(name, sizeof name, "death: %s",
             (e->has & TRC_F_EXIT_REASON) ? trc_exit_reason_name(e->exit_reason) : "unknown");
    instant(c, e, name);
    sim_text_str(&c->out, ",\"args\":{\"stage\":");
    str(&c->out, trc_stage_name(e->stage));
    if (e->has & TRC_F_ERROR) {
        sim_text_str(&c->out, ",\"report\":");
        str(&c->out, e->error);
    }
    static const struct {
        unsigned bit;
        const char *key;
    } x[] = {{TRC_X_REASON_CODE, "reason_code"}, {TRC_X_IMPORTANCE, "importance"},
             {TRC_X_PSS_KB, "pss_kb"},           {TRC_X_RSS_KB, "rss_kb"},
             {TRC_X_STATUS, "status"},           {TRC_X_TIMESTAMP_MS, "timestamp_ms"},
             {TRC_X_PID, "pid"}};
    const int64_t v[] = {e->exit.reason_code, e->exit.importance, e->exit.pss_kb,
                         e->exit.rss_kb,      e->exit.status,     e->exit.timestamp_ms,
                         e->exit.pid};
    for (size_t k = 0; k < sizeof x / sizeof *x; k++)
        if ((e->has & TRC_F_EXIT) && (e->exit.has & x[k].bit))
            sim_text_printf(&c->out, ",\"%s\":%" PRId64, x[k].key, v[k]);
    sim_text_str(&c->out, "}}");
}

int res_chrome_add(void *ctx, const trc_event *e, sim_error *err)
{
    (void)err;
    res_chrome *c = ctx;
    int kind = (e->has & TRC_F_KIND) ? (int)e->kind : TRC_SAMPLE;
    if (c->events == 0)
        line_now(c, e->time_us);
    res__follow(&c->follow, e, record, c);
    pages_now(c, e);
    const char *part = (e->has & TRC_F_PART) ? e->part : "";
    int64_t session = (e->has & TRC_F_SESSION) ? e->session : -1;
    switch (kind) {
    case TRC_BEGIN:
        if (c->nopen < CH_OPEN) {
            ch_open *o = &c->open[c->nopen++];
            o->stage = (int)e->stage;
            snprintf(o->part, sizeof o->part, "%s", part);
            o->session = session;
            o->request = (e->has & TRC_F_REQUEST) ? e->request : -1;
            o->t0 = e->time_us;
        }
        break;
    case TRC_END:
        for (unsigned k = c->nopen; k-- > 0;)
            if (c->open[k].stage == (int)e->stage && strcmp(c->open[k].part, part) == 0 &&
                c->open[k].session == session) {
                slice(c, &c->open[k], e->time_us,
                      (e->has & TRC_F_ERROR) ? e->error : NULL);
                memmove(&c->open[k], &c->open[k + 1], (c->nopen - k - 1) * sizeof *c->open);
                c->nopen--;
                break;
            }
        break;
    case TRC_EXIT_EVENT:
        close_all(c, e->time_us, "death");
        death(c, e);
        c->fg = 1; /* the next life starts in the foreground */
        break;
    case TRC_RECOVERY: {
        char name[96];
        snprintf(name, sizeof name, "recovery: %s", (e->has & TRC_F_ACTION) ? e->action : "-");
        instant(c, e, name);
        sim_text_str(&c->out, "}");
        break;
    }
    default:
        if (e->has & TRC_F_ERROR) {
            if (strcmp(e->error, "background") == 0)
                c->fg = 0;
            else if (strcmp(e->error, "foreground") == 0)
                c->fg = 1;
            instant(c, e, e->error);
            sim_text_str(&c->out, ",\"args\":{\"stage\":");
            str(&c->out, trc_stage_name(e->stage));
            sim_text_str(&c->out, "}}");
        }
        break;
    }
    line_now(c, e->time_us);
    return c->out.oom ? sim_error_set(err, SIM_ENOMEM, "timeline: out of memory") : SIM_OK;
}

static void thread_name(res_chrome *c, int tid, const char *name)
{
    head(c, 'M', "thread_name", 0, tid);
    sim_text_str(&c->out, ",\"args\":{\"name\":");
    str(&c->out, name);
    sim_text_str(&c->out, "}}");
}

int res_chrome_finish(res_chrome *c, sim_time end, const char *title, char **text, size_t *len,
                      sim_error *err)
{
    *text = NULL;
    *len = 0;
    res__follow_flush(&c->follow, record, c);
    if (end < c->last_t)
        end = c->last_t;
    close_all(c, end, "end of the run");
    head(c, 'M', "process_name", 0, 0);
    sim_text_str(&c->out, ",\"args\":{\"name\":");
    str(&c->out, title);
    sim_text_str(&c->out, "}}");
    thread_name(c, 0, "memory");
    thread_name(c, TID_NOTES, "deaths and notes");
    for (unsigned k = 0; k < c->nparts; k++) {
        char name[TRC_TEXT_MAX + 16];
        snprintf(name, sizeof name, "part %s", c->parts[k][0] ? c->parts[k] : "-");
        thread_name(c, TID_PART + (int)k, name);
    }
    for (int k = 0; k < 64; k++)
        if (c->slots >> k & 1u) {
            char name[48];
            snprintf(name, sizeof name, "session slot %d", k);
            thread_name(c, TID_SLOT + k, name);
        }
    sim_text_str(&c->out, "\n]}");
    size_t n = c->out.n;
    char *t = sim_text_done(&c->out);
    memset(&c->out, 0, sizeof c->out);
    if (t == NULL)
        return sim_error_set(err, SIM_ENOMEM, "timeline: out of memory");
    *text = t;
    *len = n;
    return SIM_OK;
}
