/* event.c - the trace event: names, the allow-list of fields, and the
 * typed setter every reader feeds (docs/traces.md "Event fields").
 *
 * Readers turn their encoding's values into a trc__value and call
 * trc__set() for each key; values of keys outside the allow-list never
 * leave the reader, and no message ever quotes a value. */
#include "traces_int.h"

#include <stdarg.h>
#include <string.h>

static const char *const stage_names[TRC_STAGE_COUNT] = {
    "download", "load", "runtime_prepare", "delegate_prepare", "inference", "cache", "release",
    "exit"};
static const char *const kind_names[TRC_KIND_COUNT] = {"sample", "begin", "end", "exit",
                                                       "recovery"};
static const char *const payload_names[TRC_PAYLOAD_COUNT] = {"image", "audio", "text",
                                                             "tensor", "other"};
static const char *const reason_names[TRC_EXIT_REASON_COUNT] = {
    "none", "low_memory", "anr", "native_crash", "java_crash", "system_reclaim", "unknown"};
static const char *const mem_names[TRC_MEM_COUNT] = {"java", "native", "gpu", "file"};
static const char *const exit_names[TRC_EXIT_FIELDS] = {
    "reason_code", "importance", "pss_kb", "rss_kb", "status", "timestamp_ms", "pid"};

const char *trc_stage_name(trc_stage s)
{
    return (unsigned)s < TRC_STAGE_COUNT ? stage_names[s] : "?";
}
const char *trc_kind_name(trc_kind k) { return (unsigned)k < TRC_KIND_COUNT ? kind_names[k] : "?"; }
const char *trc_payload_name(trc_payload p)
{
    return (unsigned)p < TRC_PAYLOAD_COUNT ? payload_names[p] : "?";
}
const char *trc_exit_reason_name(trc_exit_reason r)
{
    return (unsigned)r < TRC_EXIT_REASON_COUNT ? reason_names[r] : "?";
}
static const char *const page_names[TRC_PG_COUNT] = {
    "free", "low", "file_lru", "swap_used", "thrashing", "psi_some_us", "dropped", "refault", "adj",
    "kv", "weights_mapped", "weights_repacked", "weights_gpu", "successor"};

const char *trc__mem_name(int k) { return mem_names[k]; }
const char *trc__page_name(int k) { return page_names[k]; }
const char *trc__exit_name(int k) { return exit_names[k]; }

const char *trc_format_name(trc_format f)
{
    static const char *const n[TRC_FORMAT_COUNT] = {"json", "jsonl", "msgpack"};
    return (unsigned)f < TRC_FORMAT_COUNT ? n[f] : "?";
}

static int ends_with(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && strcmp(s + a - b, suffix) == 0;
}

int trc_format_of_path(const char *path)
{
    if (ends_with(path, ".jsonl"))
        return TRC_JSONL;
    if (ends_with(path, ".json"))
        return TRC_JSON;
    if (ends_with(path, ".msgpack") || ends_with(path, ".mp"))
        return TRC_MSGPACK;
    return -1;
}

void trc_event_clear(trc_event *e)
{
    memset(e, 0, sizeof *e);
    e->stage = TRC_LOAD;
    e->kind = TRC_SAMPLE;
}

int trc_event_equal(const trc_event *a, const trc_event *b)
{
    /* time_ms and time_us are two spellings of one time: compare the time */
    unsigned mask = ~(unsigned)TRC_F_TIME_MS;
    if ((a->has & mask) != (b->has & mask) || a->time_us != b->time_us || a->stage != b->stage)
        return 0;
    unsigned h = a->has;
#define SAME_INT(f, x) if ((h & (f)) && a->x != b->x) return 0
#define SAME_STR(f, x) if ((h & (f)) && strcmp(a->x, b->x) != 0) return 0
    SAME_INT(TRC_F_KIND, kind);
    SAME_STR(TRC_F_PART, part);
    SAME_STR(TRC_F_CANDIDATE, candidate);
    SAME_STR(TRC_F_RUNTIME, runtime);
    SAME_STR(TRC_F_DELEGATE, delegate);
    SAME_INT(TRC_F_SESSION, session);
    SAME_INT(TRC_F_SESSIONS, sessions);
    SAME_INT(TRC_F_QUEUE, queue);
    SAME_INT(TRC_F_IN_FLIGHT, in_flight);
    SAME_INT(TRC_F_PAYLOAD, payload);
    SAME_INT(TRC_F_RSS_MB, rss_mb);
    SAME_INT(TRC_F_BUDGET_MB, budget_mb);
    SAME_INT(TRC_F_EXIT_REASON, exit_reason);
    SAME_STR(TRC_F_ERROR, error);
    SAME_STR(TRC_F_ACTION, action);
    SAME_STR(TRC_F_APP_VERSION, app_version);
    SAME_STR(TRC_F_PROCESS, process);
    SAME_INT(TRC_F_REQUEST, request);
    SAME_INT(TRC_F_STEP, step);
    SAME_INT(TRC_F_DURATION, duration_us);
    SAME_STR(TRC_F_NEEDS, needs);
    SAME_STR(TRC_F_LOG, log);
    SAME_STR(TRC_F_OWNER, owner);
#undef SAME_INT
#undef SAME_STR
    if (h & TRC_F_MEM) {
        if (a->mem_has != b->mem_has)
            return 0;
        for (int k = 0; k < TRC_MEM_COUNT; k++)
            if ((a->mem_has >> k & 1u) && a->mem[k] != b->mem[k])
                return 0;
    }
    if (h & TRC_F_PAGES) {
        if (a->pages_has != b->pages_has)
            return 0;
        for (int k = 0; k < TRC_PG_COUNT; k++)
            if ((a->pages_has >> k & 1u) && a->pages[k] != b->pages[k])
                return 0;
    }
    if (h & TRC_F_ALLOC) {
        if (a->alloc_has != b->alloc_has)
            return 0;
        for (int k = 0; k < TRC_MEM_COUNT; k++)
            if ((a->alloc_has >> k & 1u) && a->alloc[k] != b->alloc[k])
                return 0;
    }
    if (h & TRC_F_KEEP) {
        if (a->keep_has != b->keep_has)
            return 0;
        for (int k = 0; k < TRC_MEM_COUNT; k++)
            if ((a->keep_has >> k & 1u) && a->keep[k] != b->keep[k])
                return 0;
    }
    if (h & TRC_F_EXIT) {
        const trc_exit_record *x = &a->exit, *y = &b->exit;
        if (x->has != y->has || x->reason_code != y->reason_code ||
            x->importance != y->importance || x->pss_kb != y->pss_kb ||
            x->rss_kb != y->rss_kb || x->status != y->status ||
            x->timestamp_ms != y->timestamp_ms || x->pid != y->pid)
            return 0;
    }
    return 1;
}

/* ------------------------------------------------------------- the setter */

int trc__fail(trc__ctx *cx, const char *key, int code, const char *fmt, ...)
{
    char what[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    char where[64] = "";
    if (cx->line > 0)
        snprintf(where, sizeof where, " (line %llu)", (unsigned long long)cx->line);
    return sim_error_set(cx->err, code, "%s: event %llu%s: %s%s%s", cx->name,
                         (unsigned long long)cx->index, where, key != NULL ? key : "",
                         key != NULL ? ": " : "", what);
}

static const char *type_name(trc__vtype t)
{
    static const char *const n[] = {"null", "a boolean", "an integer", "a real number",
                                    "a string", "a map", "a list"};
    return n[t];
}

static int want_int(trc__ctx *cx, const char *key, const trc__value *v, int64_t min, int64_t max,
                    int64_t *out)
{
    if (v->t != TRC_V_INT)
        return trc__fail(cx, key, SIM_EINPUT, "expected an integer, got %s", type_name(v->t));
    if (v->i < min || v->i > max)
        return trc__fail(cx, key, SIM_EINPUT, "%lld is out of range [%lld, %lld]", (long long)v->i,
                         (long long)min, (long long)max);
    *out = v->i;
    return SIM_OK;
}

int trc__utf8_valid(const char *s, size_t n)
{
    const unsigned char *p = (const unsigned char *)s, *end = p + n;
    while (p < end) {
        unsigned c = *p;
        size_t len = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4
                                                                                         : 0;
        if (len == 0 || (size_t)(end - p) < len)
            return 0;
        unsigned cp = len == 1 ? c : c & (0x7fu >> len);
        for (size_t k = 1; k < len; k++) {
            if ((p[k] & 0xc0) != 0x80)
                return 0;
            cp = cp << 6 | (p[k] & 0x3fu);
        }
        static const unsigned least[5] = {0, 0, 0x80, 0x800, 0x10000};
        if (cp < least[len] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
            return 0;
        p += len;
    }
    return 1;
}

static int want_text_n(trc__ctx *cx, const char *key, const trc__value *v, char *out,
                       size_t max)
{
    if (v->t != TRC_V_STR)
        return trc__fail(cx, key, SIM_EINPUT, "expected a string, got %s", type_name(v->t));
    if (v->len >= max)
        return trc__fail(cx, key, SIM_EINPUT, "a string of %zu bytes (at most %zu)", v->len,
                         max - 1);
    for (size_t i = 0; i < v->len; i++)
        if ((unsigned char)v->s[i] < 0x20 || v->s[i] == 0x7f)
            return trc__fail(cx, key, SIM_EINPUT, "a control character in a string");
    if (!trc__utf8_valid(v->s, v->len))
        return trc__fail(cx, key, SIM_EINPUT, "a string that is not UTF-8");
    memcpy(out, v->s, v->len);
    out[v->len] = '\0';
    return SIM_OK;
}

static int want_text(trc__ctx *cx, const char *key, const trc__value *v, char *out)
{
    return want_text_n(cx, key, v, out, TRC_TEXT_MAX);
}

/* An enum value: the names are the only accepted strings (the value is not
 * quoted back: it could be anything). */
static int want_enum(trc__ctx *cx, const char *key, const trc__value *v,
                     const char *const *names, int n, int *out)
{
    if (v->t == TRC_V_STR)
        for (int k = 0; k < n; k++)
            if (names[k][0] == v->s[0] && strncmp(names[k], v->s, v->len) == 0 &&
                names[k][v->len] == '\0') {
                *out = k;
                return SIM_OK;
            }
    char list[256];
    size_t len = 0;
    list[0] = '\0';
    for (int k = 0; k < n && len + 24 < sizeof list; k++)
        len += (size_t)snprintf(list + len, sizeof list - len, "%s%s", k ? ", " : "", names[k]);
    return trc__fail(cx, key, SIM_EINPUT, "expected one of %s", list);
}

#define TIME_MS_MAX (INT64_C(1) << 52) /* about 142,000 years: far beyond any device clock */

#define KEY(s) {s, sizeof(s) - 1}
static const struct {
    const char *name;
    size_t len;
} key_list[] = {
    KEY("time_ms"),   KEY("time_us"),  KEY("stage"),       KEY("kind"),     KEY("part"),
    KEY("candidate"), KEY("runtime"),  KEY("delegate"),    KEY("session"),  KEY("sessions"),
    KEY("queue"),     KEY("in_flight"), KEY("payload"),    KEY("rss_mb"),   KEY("budget_mb"),
    KEY("mem"),       KEY("exit_reason"), KEY("exit"),     KEY("error"),    KEY("action"),
    KEY("app_version"), KEY("process"),
    /* extensions (docs/traces.md) */
    KEY("request"),   KEY("step"),     KEY("needs"),       KEY("duration_us"), KEY("alloc"),
    KEY("keep"),      KEY("pages"),    KEY("log"),         KEY("owner")};
#undef KEY
#define NKEYS (sizeof key_list / sizeof *key_list)

/* By length and first byte: a few compares per key. */
int trc__key(const char *key, size_t len)
{
    for (unsigned k = 0; k < NKEYS; k++)
        if (key_list[k].len == len && key_list[k].name[0] == key[0] &&
            memcmp(key_list[k].name, key, len) == 0)
            return (int)k;
    return -1;
}

const char *trc__key_name(int k) { return key_list[k].name; }

int trc__unknown(trc__ctx *cx, const char *where)
{
    if (cx->drop_unknown) {
        cx->dropped++;
        return SIM_OK;
    }
    /* the key is named only when it is a short plain identifier: a key can
     * itself carry user data */
    return trc__fail(cx, NULL, SIM_EINPUT, "%s is not in the trace allow-list (docs/traces.md); "
                     "its value is not read (--drop-unknown drops such keys)", where);
}

/* Describes an unknown key for a message without copying arbitrary bytes:
 * "key \"prompt\"" for a short identifier, "a key of N bytes" otherwise. */
void trc__unknown_label(const char *key, size_t len, char *out, size_t n)
{
    int plain = len > 0 && len <= 32;
    for (size_t i = 0; plain && i < len; i++) {
        char c = key[i];
        plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                c == '_' || c == '-';
    }
    if (plain)
        snprintf(out, n, "key \"%.*s\"", (int)len, key);
    else
        snprintf(out, n, "a key of %zu bytes", len);
}

int trc__top_key(trc__ctx *cx, const char *key, size_t len, int *k)
{
    *k = trc__key(key, len);
    if (*k >= 0)
        return SIM_OK;
    char label[64];
    trc__unknown_label(key, len, label, sizeof label);
    return trc__unknown(cx, label);
}

int trc__set(trc__ctx *cx, trc_event *e, int k, const trc__value *v)
{
    const char *key = key_list[k].name;
    if (cx->seen >> k & 1u)
        return trc__fail(cx, key, SIM_EINPUT, "given twice");
    cx->seen |= 1u << k;
    int x = 0, rc = SIM_OK;
    int64_t n = 0;
    switch (k) {
    case 0: /* time_ms */
        if ((rc = want_int(cx, key, v, 0, TIME_MS_MAX, &n)) == SIM_OK) {
            e->time_us = n * 1000;
            e->has |= TRC_F_TIME_MS;
        }
        return rc;
    case 1: /* time_us */
        if ((rc = want_int(cx, key, v, 0, TIME_MS_MAX * 1000, &n)) == SIM_OK)
            e->time_us = n;
        return rc;
    case 2:
        if ((rc = want_enum(cx, key, v, stage_names, TRC_STAGE_COUNT, &x)) == SIM_OK)
            e->stage = (trc_stage)x;
        return rc;
    case 3:
        if ((rc = want_enum(cx, key, v, kind_names, TRC_KIND_COUNT, &x)) == SIM_OK) {
            e->kind = (trc_kind)x;
            e->has |= TRC_F_KIND;
        }
        return rc;
    case 4: e->has |= TRC_F_PART; return want_text(cx, key, v, e->part);
    case 5: e->has |= TRC_F_CANDIDATE; return want_text(cx, key, v, e->candidate);
    case 6: e->has |= TRC_F_RUNTIME; return want_text(cx, key, v, e->runtime);
    case 7: e->has |= TRC_F_DELEGATE; return want_text(cx, key, v, e->delegate);
    case 8: e->has |= TRC_F_SESSION; return want_int(cx, key, v, 0, INT32_MAX, &e->session);
    case 9: e->has |= TRC_F_SESSIONS; return want_int(cx, key, v, 0, INT32_MAX, &e->sessions);
    case 10: e->has |= TRC_F_QUEUE; return want_int(cx, key, v, 0, INT32_MAX, &e->queue);
    case 11: e->has |= TRC_F_IN_FLIGHT; return want_int(cx, key, v, 0, INT32_MAX, &e->in_flight);
    case 12:
        if ((rc = want_enum(cx, key, v, payload_names, TRC_PAYLOAD_COUNT, &x)) == SIM_OK) {
            e->payload = (trc_payload)x;
            e->has |= TRC_F_PAYLOAD;
        }
        return rc;
    case 13: e->has |= TRC_F_RSS_MB; return want_int(cx, key, v, 0, INT64_C(1) << 40, &e->rss_mb);
    case 14:
        e->has |= TRC_F_BUDGET_MB;
        return want_int(cx, key, v, 0, INT64_C(1) << 40, &e->budget_mb);
    case 15: /* mem: the reader walks the map and calls trc__set_mem */
    case 17: /* exit: trc__set_exit */
        if (v->t != TRC_V_MAP)
            return trc__fail(cx, key, SIM_EINPUT, "expected a map, got %s", type_name(v->t));
        e->has |= k == 15 ? TRC_F_MEM : TRC_F_EXIT;
        return SIM_OK;
    case 16:
        if ((rc = want_enum(cx, key, v, reason_names, TRC_EXIT_REASON_COUNT, &x)) == SIM_OK) {
            e->exit_reason = (trc_exit_reason)x;
            e->has |= TRC_F_EXIT_REASON;
        }
        return rc;
    case 18: e->has |= TRC_F_ERROR; return want_text(cx, key, v, e->error);
    case 19: e->has |= TRC_F_ACTION; return want_text(cx, key, v, e->action);
    case 20: e->has |= TRC_F_APP_VERSION; return want_text(cx, key, v, e->app_version);
    case 21: e->has |= TRC_F_PROCESS; return want_text(cx, key, v, e->process);
    case 22: e->has |= TRC_F_REQUEST; return want_int(cx, key, v, 0, INT64_C(1) << 48, &e->request);
    case 23: e->has |= TRC_F_STEP; return want_int(cx, key, v, 0, INT32_MAX, &e->step);
    case 24: e->has |= TRC_F_NEEDS; return want_text(cx, key, v, e->needs);
    case 25:
        e->has |= TRC_F_DURATION;
        return want_int(cx, key, v, 0, TIME_MS_MAX * 1000, &e->duration_us);
    case 26: case 27: case 28: /* alloc, keep, pages: trc__set_sub reads the map */
        if (v->t != TRC_V_MAP)
            return trc__fail(cx, key, SIM_EINPUT, "expected a map, got %s", type_name(v->t));
        e->has |= k == 26 ? TRC_F_ALLOC : k == 27 ? TRC_F_KEEP : TRC_F_PAGES;
        return SIM_OK;
    case 29: e->has |= TRC_F_LOG; return want_text_n(cx, key, v, e->log, TRC_LOG_MAX);
    case 30: e->has |= TRC_F_OWNER; return want_text(cx, key, v, e->owner);
    default:
        return trc__fail(cx, key, SIM_EINTERNAL, "no setter");
    }
}

/* A key of a category map: `mem` (which = 0), `alloc` (1) or `keep` (2). */
static int set_category(trc__ctx *cx, trc_event *e, int which, const char *key, size_t len,
                        const trc__value *v)
{
    static const char *const maps[3] = {"mem", "alloc", "keep"};
    static const char *const paths[3][TRC_MEM_COUNT] = {
        {"mem.java", "mem.native", "mem.gpu", "mem.file"},
        {"alloc.java", "alloc.native", "alloc.gpu", "alloc.file"},
        {"keep.java", "keep.native", "keep.gpu", "keep.file"}};
    unsigned *has = which == 0 ? &e->mem_has : which == 1 ? &e->alloc_has : &e->keep_has;
    int64_t *val = which == 0 ? e->mem : which == 1 ? e->alloc : e->keep;
    for (int k = 0; k < TRC_MEM_COUNT; k++)
        if (len > 0 && mem_names[k][0] == key[0] && strncmp(mem_names[k], key, len) == 0 &&
            mem_names[k][len] == '\0') {
            const char *path = paths[which][k];
            if (*has >> k & 1u)
                return trc__fail(cx, path, SIM_EINPUT, "given twice");
            *has |= 1u << k;
            return want_int(cx, path, v, 0, INT64_C(1) << 50, &val[k]);
        }
    char label[64], where[96];
    trc__unknown_label(key, len, label, sizeof label);
    snprintf(where, sizeof where, "%s: %s", maps[which], label);
    return trc__unknown(cx, where);
}

/* A key of the `pages` map: counts, at most 2^50 (adj -1000 to 1000). */
static int set_pages(trc__ctx *cx, trc_event *e, const char *key, size_t len,
                     const trc__value *v)
{
    for (int k = 0; k < TRC_PG_COUNT; k++)
        if (len > 0 && strlen(page_names[k]) == len && memcmp(page_names[k], key, len) == 0) {
            char path[40];
            snprintf(path, sizeof path, "pages.%s", page_names[k]);
            if (e->pages_has >> k & 1u)
                return trc__fail(cx, path, SIM_EINPUT, "given twice");
            e->pages_has |= 1u << k;
            return k == TRC_PG_ADJ ? want_int(cx, path, v, -1000, 1000, &e->pages[k])
                                   : want_int(cx, path, v, 0, INT64_C(1) << 50, &e->pages[k]);
        }
    char label[64], where[96];
    trc__unknown_label(key, len, label, sizeof label);
    snprintf(where, sizeof where, "pages: %s", label);
    return trc__unknown(cx, where);
}

int trc__set_sub(trc__ctx *cx, trc_event *e, int k, const char *key, size_t len,
                 const trc__value *v)
{
    if (k == TRC__KEY_EXIT)
        return trc__set_exit(cx, e, key, len, v);
    if (k == TRC__KEY_PAGES)
        return set_pages(cx, e, key, len, v);
    return set_category(cx, e, k == TRC__KEY_MEM ? 0 : k == TRC__KEY_ALLOC ? 1 : 2, key, len, v);
}

int trc__set_exit(trc__ctx *cx, trc_event *e, const char *key, size_t len, const trc__value *v)
{
    int64_t *slot[TRC_EXIT_FIELDS] = {&e->exit.reason_code, &e->exit.importance,
                                      &e->exit.pss_kb,      &e->exit.rss_kb,
                                      &e->exit.status,      &e->exit.timestamp_ms,
                                      &e->exit.pid};
    static const char *const paths[TRC_EXIT_FIELDS] = {
        "exit.reason_code", "exit.importance",   "exit.pss_kb", "exit.rss_kb",
        "exit.status",      "exit.timestamp_ms", "exit.pid"};
    for (int k = 0; k < TRC_EXIT_FIELDS; k++)
        if (len > 0 && exit_names[k][0] == key[0] && strncmp(exit_names[k], key, len) == 0 &&
            exit_names[k][len] == '\0') {
            const char *path = paths[k];
            if (e->exit.has >> k & 1u)
                return trc__fail(cx, path, SIM_EINPUT, "given twice");
            e->exit.has |= 1u << k;
            int64_t lo = k == 4 ? INT32_MIN : 0; /* a status may be negative */
            return want_int(cx, path, v, lo, INT64_C(1) << 52, slot[k]);
        }
    char label[64], where[96];
    trc__unknown_label(key, len, label, sizeof label);
    snprintf(where, sizeof where, "exit: %s", label);
    return trc__unknown(cx, where);
}

int trc__begin_event(trc__ctx *cx, trc_event *e)
{
    trc_event_clear(e);
    cx->seen = 0;
    return SIM_OK;
}

int trc__end_event(trc__ctx *cx, trc_event *e)
{
    if (!(cx->seen & 3u))
        return trc__fail(cx, NULL, SIM_EINPUT, "missing time_ms or time_us");
    if ((cx->seen & 3u) == 3u)
        return trc__fail(cx, "time_us", SIM_EINPUT, "give time_ms or time_us, not both");
    if (!(cx->seen >> 2 & 1u))
        return trc__fail(cx, NULL, SIM_EINPUT, "missing stage");
    if (cx->index > 0 && e->time_us < cx->last_time)
        return trc__fail(cx, (e->has & TRC_F_TIME_MS) ? "time_ms" : "time_us", SIM_EINPUT,
                         "time goes back (events are in time order)");
    cx->last_time = e->time_us;
    return SIM_OK;
}
