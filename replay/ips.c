/* ips.c - iOS's JetsamEvent reports (`.ips`, bug_type "298") as exit
 * records for `oomsim diagnose` (docs/on-call.md "JetsamEvent reports").
 *
 * The layout, as iOS 11 to 18 write it: a one-line JSON header
 * ({"bug_type":"298","timestamp":"2025-05-28 01:35:47.00 -0500",
 * "os_version":...,"incident_id":...}), then the report, one JSON object:
 * `largestProcess`, `memoryStatus` {`pageSize`, `compressorSize` (pages),
 * `memoryPages` {`free`, `wired`, ...}}, and `processes`, each with `name`
 * (cut to 32 characters), `pid`, `rpages`, `lifetimeMax`, `states`,
 * `priority` and, only on a process the event killed, `reason` (XNU's
 * kill cause: per-process-limit, vm-pageshortage, idle-exit, fc-thrashing,
 * ...).  Keys the reader does not use are ignored; keys it uses must have
 * their type. */
#include "capture_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "traces/json.h"

/* The longest name a report writes: the jetsam snapshot's entry holds
 * 2 x MAXCOMLEN characters (kern_memorystatus.h,
 * memorystatus_jetsam_snapshot_entry_t.name). */
#define NAME_CUT 32

/* Leading white space and a UTF-8 byte order mark, as both the detection
 * and the parse skip them. */
static size_t skip_lead(const char *data, size_t len)
{
    size_t k = 0;
    if (len >= 3 && memcmp(data, "\xEF\xBB\xBF", 3) == 0)
        k = 3;
    while (k < len && (data[k] == ' ' || data[k] == '\t' || data[k] == '\r' || data[k] == '\n'))
        k++;
    return k;
}

int rpl_ips_detect(const char *data, size_t len)
{
    size_t k = skip_lead(data, len);
    if (k == len || data[k] != '{')
        return 0;
    const char *nl = memchr(data + k, '\n', len - k);
    size_t n = nl != NULL ? (size_t)(nl - (data + k)) : len - k;
    int found = 0;
    for (size_t i = 0; i + 10 <= n && !found; i++)
        found = memcmp(data + k + i, "\"bug_type\"", 10) == 0;
    if (!found)
        return 0;
    for (size_t i = 0; i + 5 <= n; i++) /* "298", or the number after a colon */
        if (memcmp(data + k + i, "\"298\"", 5) == 0 || memcmp(data + k + i, ":298", 4) == 0)
            return 1;
    return 2;
}

typedef struct ips_ctx {
    const char *name;
    sim_error *err;
    int64_t page; /* pageSize, bytes */
    int64_t time_ms;
    int64_t free_kb, compressor_kb;
    char largest[RPL_TEXT_MAX];
    char product[64]; /* the header's model identifier ("iPhone12,1"), "" none */
} ips_ctx;

static int bad(const ips_ctx *c, const char *what)
{
    return sim_error_set(c->err, SIM_EINPUT, "%s: not a JetsamEvent report: %s", c->name, what);
}

/* o[key] as an integer >= 0 into *v: 1 read, 0 absent; -1 (error set) of
 * another type or negative. */
static int get_count(const ips_ctx *c, const json_t *o, const char *key, const char *where,
                     int64_t *v)
{
    const json_t *j = json_object_get(o, key);
    if (j == NULL || json_is_null(j))
        return 0;
    if (!json_is_integer(j) || json_integer_value(j) < 0) {
        char what[160];
        snprintf(what, sizeof what, "%s: `%s` must be a whole number of 0 or more", where, key);
        bad(c, what);
        return -1;
    }
    *v = (int64_t)json_integer_value(j);
    return 1;
}

/* Pages to kB, saturating (a report's counts are bounded by RAM; a forged
 * one must not overflow). */
static int64_t pages_kb(const ips_ctx *c, int64_t pages)
{
    int64_t per = c->page / 1024;
    return per > 0 && pages > INT64_MAX / per ? INT64_MAX : pages * per;
}

/* s into dst, control characters as spaces, cut on a UTF-8 character's
 * start so that the text stays valid. */
void rpl__utf8_copy(char *dst, size_t cap, const char *s)
{
    size_t k = 0;
    for (; s[k] != '\0' && k + 1 < cap; k++)
        dst[k] = (unsigned char)s[k] < 0x20 ? ' ' : s[k];
    /* s[k], the first byte left out, continues a character: that
     * character's bytes kept so far go too */
    while (k > 0 && ((unsigned char)s[k] & 0xC0) == 0x80)
        k--;
    dst[k] = '\0';
}

/* The header line: bug_type "298", and its timestamp. */
static int read_header(ips_ctx *c, const char *data, size_t n)
{
    json_error_t je;
    int oom = 0;
    json_t *h = trc_json_loadb(data, n, JSON_REJECT_DUPLICATES, &je, &oom);
    if (h == NULL) {
        if (oom)
            return sim_error_set(c->err, SIM_ENOMEM, "%s: out of memory", c->name);
        return sim_error_set(c->err, SIM_EINPUT, "%s:1:%d: the header line is not JSON: %s",
                             c->name, je.column, je.text);
    }
    const json_t *bt = json_object_get(h, "bug_type");
    int rc = SIM_OK;
    if (!json_is_string(bt) && !json_is_integer(bt))
        rc = bad(c, "the header line has no bug_type");
    else if (json_is_string(bt) ? strcmp(json_string_value(bt), "298") != 0
                                : json_integer_value(bt) != 298) {
        char what[96];
        snprintf(what, sizeof what, "bug_type %.20s (a JetsamEvent is 298)",
                 json_is_string(bt) ? json_string_value(bt) : "other than 298");
        rc = bad(c, what);
    }
    const json_t *pr = json_object_get(h, "product");
    if (json_is_string(pr))
        rpl__utf8_copy(c->product, sizeof c->product, json_string_value(pr));
    const json_t *ts = json_object_get(h, "timestamp");
    if (rc == SIM_OK && json_is_string(ts))
        c->time_ms = rpl__timestamp_ms(json_string_value(ts), strlen(json_string_value(ts)));
    json_decref(h);
    return rc;
}

/* memoryStatus (and a top-level pageSize, as older reports write it). */
static int read_status(ips_ctx *c, const json_t *body)
{
    const json_t *ms = json_object_get(body, "memoryStatus");
    if (ms != NULL && !json_is_object(ms))
        return bad(c, "`memoryStatus` must be an object");
    int64_t page = 0, v = 0;
    int got = ms != NULL ? get_count(c, ms, "pageSize", "memoryStatus", &page) : 0;
    if (got == 0)
        got = get_count(c, body, "pageSize", "the report", &page);
    if (got < 0)
        return SIM_EINPUT;
    if (got == 0)
        return bad(c, "no `pageSize` (memoryStatus.pageSize)");
    if (page < 4096 || page > 65536 || (page & (page - 1)) != 0)
        return bad(c, "`pageSize` must be a power of two from 4096 to 65536");
    c->page = page;
    const json_t *pages = ms != NULL ? json_object_get(ms, "memoryPages") : NULL;
    if (pages != NULL && !json_is_object(pages))
        return bad(c, "`memoryStatus.memoryPages` must be an object");
    if (pages != NULL && (got = get_count(c, pages, "free", "memoryPages", &v)) < 0)
        return SIM_EINPUT;
    if (pages != NULL && got == 1)
        c->free_kb = pages_kb(c, v);
    if (ms != NULL && (got = get_count(c, ms, "compressorSize", "memoryStatus", &v)) < 0)
        return SIM_EINPUT;
    if (ms != NULL && got == 1)
        c->compressor_kb = pages_kb(c, v);
    const json_t *lp = json_object_get(body, "largestProcess");
    if (lp != NULL && !json_is_string(lp))
        return bad(c, "`largestProcess` must be a string");
    if (lp != NULL)
        rpl__utf8_copy(c->largest, sizeof c->largest, json_string_value(lp));
    return SIM_OK;
}

/* One entry of `processes` into x. */
static int read_process(const ips_ctx *c, const json_t *p, size_t k, rpl_exit *x)
{
    char where[48];
    snprintf(where, sizeof where, "processes[%zu]", k);
    char what[160];
    if (!json_is_object(p)) {
        snprintf(what, sizeof what, "%s must be an object", where);
        return bad(c, what);
    }
    const json_t *nm = json_object_get(p, "name");
    const json_t *rs = json_object_get(p, "reason");
    const json_t *st = json_object_get(p, "states");
    if (!json_is_string(nm) || (rs != NULL && !json_is_string(rs)) ||
        (st != NULL && !json_is_array(st))) {
        snprintf(what, sizeof what, "%s: `name` must be a string, `reason` a string and "
                 "`states` a list", where);
        return bad(c, what);
    }
    rpl__exit_init(x, RPL_IOS, 2);
    x->ios = RPL_IOS_JETSAM;
    x->jetsam_event = x->jetsam_listed = 1;
    x->timestamp_ms = c->time_ms;
    x->free_kb = c->free_kb;
    x->compressor_kb = c->compressor_kb;
    rpl__utf8_copy(x->largest, sizeof x->largest, c->largest);
    rpl__utf8_copy(x->process, sizeof x->process, json_string_value(nm));
    /* "vm-thrashing", the name older reports write: kern_memorystatus.h keeps
     * kMemorystatusKilledVMThrashing as kMemorystatusKilledVMCompressorThrashing
     * (xnu-11417.101.15), so it is read under that name */
    if (rs != NULL && strcmp(json_string_value(rs), "vm-thrashing") == 0)
        snprintf(x->cause, sizeof x->cause, "%s",
                 mdl_jetsam_cause_name(MDL_JETSAM_COMPRESSOR_THRASHING));
    else if (rs != NULL)
        rpl__utf8_copy(x->cause, sizeof x->cause, json_string_value(rs));
    int64_t v = 0;
    int got;
    if ((got = get_count(c, p, "pid", where, &v)) < 0)
        return SIM_EINPUT;
    if (got)
        x->pid = v;
    if ((got = get_count(c, p, "rpages", where, &v)) < 0)
        return SIM_EINPUT;
    if (got)
        x->rss_kb = pages_kb(c, v);
    if ((got = get_count(c, p, "lifetimeMax", where, &v)) < 0)
        return SIM_EINPUT;
    if (got)
        x->lifetime_max_kb = pages_kb(c, v);
    if ((got = get_count(c, p, "priority", where, &v)) < 0)
        return SIM_EINPUT;
    if (got)
        x->priority = v > 100000 ? 100000 : (int)v;
    size_t i;
    const json_t *s;
    json_array_foreach(st, i, s) {
        if (!json_is_string(s)) {
            snprintf(what, sizeof what, "%s: `states` must list strings", where);
            return bad(c, what);
        }
        size_t used = strlen(x->states), w = strlen(json_string_value(s));
        if (used + w + 2 < sizeof x->states) {
            if (used > 0)
                x->states[used++] = ',';
            rpl__utf8_copy(x->states + used, sizeof x->states - used, json_string_value(s));
        }
        if (strcmp(json_string_value(s), "frontmost") == 0)
            x->has_importance = 1, x->importance = 100;
    }
    if (!x->has_importance && st != NULL)
        x->has_importance = 1, x->importance = 400; /* listed, not frontmost */
    return SIM_OK;
}

/* The name as the report writes it: cut to NAME_CUT characters. */
static int same_name(const char *listed, const char *wanted)
{
    size_t n = strlen(wanted);
    return strncmp(listed, wanted, n < NAME_CUT ? n + 1 : NAME_CUT) == 0;
}

static int read_processes(ips_ctx *c, const json_t *body, const char *process, rpl_exit **out,
                          size_t *n)
{
    const json_t *ps = json_object_get(body, "processes");
    if (!json_is_array(ps))
        return bad(c, "no `processes` list");
    size_t np = json_array_size(ps);
    rpl_exit *v = malloc(sizeof *v); /* grown as entries are kept: most are not */
    if (v == NULL)
        return sim_error_set(c->err, SIM_ENOMEM, "%s: out of memory", c->name);
    size_t cnt = 0, cap = 1;
    for (size_t k = 0; k < np; k++) {
        rpl_exit x;
        int rc = read_process(c, json_array_get(ps, k), k, &x);
        if (rc == SIM_OK && cnt == cap) {
            rpl_exit *nv = realloc(v, 2 * cap * sizeof *nv);
            if (nv == NULL)
                rc = sim_error_set(c->err, SIM_ENOMEM, "%s: out of memory", c->name);
            else
                v = nv, cap *= 2;
        }
        if (rc != SIM_OK) {
            free(v);
            return rc;
        }
        if (process != NULL ? same_name(x.process, process) : x.cause[0] != '\0')
            v[cnt++] = x;
    }
    if (cnt == 0 && process != NULL) { /* the report says nothing of the app */
        rpl__exit_init(&v[0], RPL_IOS, 2);
        v[0].ios = RPL_IOS_JETSAM;
        v[0].jetsam_event = 1;
        v[0].timestamp_ms = c->time_ms;
        v[0].free_kb = c->free_kb;
        v[0].compressor_kb = c->compressor_kb;
        rpl__utf8_copy(v[0].process, sizeof v[0].process, process);
        rpl__utf8_copy(v[0].largest, sizeof v[0].largest, c->largest);
        cnt = 1;
    }
    *out = v;
    *n = cnt;
    return SIM_OK;
}

/* The report opened: the header line read, the body parsed (*body, the
 * caller's to release) and its memoryStatus read. */
static int open_report(ips_ctx *c, const char *data, size_t len, json_t **body)
{
    *body = NULL;
    c->time_ms = c->free_kb = c->compressor_kb = -1;
    size_t lead = skip_lead(data, len);
    data += lead;
    len -= lead;
    const char *nl = memchr(data, '\n', len);
    if (nl == NULL)
        return bad(c, "one line only: the report follows the header line");
    int rc = read_header(c, data, (size_t)(nl - data));
    if (rc != SIM_OK)
        return rc;
    const char *b = nl + 1;
    json_error_t je;
    int oom = 0;
    *body = trc_json_loadb(b, len - (size_t)(b - data), JSON_REJECT_DUPLICATES, &je, &oom);
    if (*body == NULL) {
        if (oom)
            return sim_error_set(c->err, SIM_ENOMEM, "%s: out of memory", c->name);
        return sim_error_set(c->err, SIM_EINPUT, "%s:%d:%d: the report is not JSON: %s",
                             c->name, je.line + 1, je.column, je.text);
    }
    if (!json_is_object(*body))
        return bad(c, "the report after the header line must be a JSON object");
    return read_status(c, *body);
}

int rpl_ips_parse(const char *data, size_t len, const char *name, const char *process,
                  rpl_exit **out, size_t *n, sim_error *err)
{
    ips_ctx c;
    memset(&c, 0, sizeof c);
    c.name = name;
    c.err = err;
    *out = NULL;
    *n = 0;
    json_t *body;
    int rc = open_report(&c, data, len, &body);
    if (rc == SIM_OK)
        rc = read_processes(&c, body, process, out, n);
    json_decref(body);
    return rc;
}

/* ---- the whole phone (`oomsim import device`) ---------------------------- */

/* The band at and above which a process is the system's for a device
 * profile: the foreground band (kern_memorystatus.h's
 * JETSAM_PRIORITY_FOREGROUND): memorystatus kills every band below it
 * before the app in front. */
#define SYSTEM_BAND MDL_BAND_FOREGROUND

static cap_band *band_of(cap_phone *p, int band)
{
    for (unsigned k = 0; k < p->nbands; k++)
        if (p->band[k].band == band)
            return &p->band[k];
    if (p->nbands == CAP_BANDS_MAX)
        return NULL;
    cap_band *b = &p->band[p->nbands++];
    memset(b, 0, sizeof *b);
    b->band = band;
    b->size = malloc(CAP_BAND_PROCS_MAX * sizeof *b->size);
    return b;
}

/* memoryStatus.memoryPages: the RAM the VM manages, the wired and the
 * file-backed pages; compressorSize. */
static int phone_status(ips_ctx *c, const json_t *body, cap_phone *p, double *wired)
{
    const json_t *ms = json_object_get(body, "memoryStatus");
    const json_t *pages = ms != NULL ? json_object_get(ms, "memoryPages") : NULL;
    if (pages == NULL)
        return bad(c, "no `memoryStatus.memoryPages`: the phone's pages are not in it");
    static const char *const queues[] = {"free", "active", "inactive", "speculative",
                                         "throttled", "wired"};
    double pg = (double)c->page, total = 0;
    int64_t v, compressor = 0;
    char have[160] = "";
    for (size_t k = 0; k < sizeof queues / sizeof *queues; k++) {
        int got = get_count(c, pages, queues[k], "memoryPages", &v);
        if (got < 0)
            return SIM_EINPUT;
        if (got == 0) {
            char what[96];
            snprintf(what, sizeof what, "`memoryPages` has no `%s`", queues[k]);
            return bad(c, what);
        }
        total += (double)v * pg;
        if (k == 5)
            *wired = (double)v * pg;
    }
    int got = get_count(c, ms, "compressorSize", "memoryStatus", &compressor);
    if (got < 0)
        return SIM_EINPUT;
    total += (double)compressor * pg;
    snprintf(have, sizeof have, "%s", got ? " + compressorSize" : "");
    cap__set(p, CAP_RAM, total, 2,
             "memoryPages' free + active + inactive + speculative + throttled + wired%s, "
             "pages of %lld bytes: the RAM the VM manages", have, (long long)c->page);
    cap__set(p, CAP_COMPRESSED, (double)compressor * pg, got ? 2 : 0,
             "compressorSize: %lld pages the compressor occupies", (long long)compressor);
    /* the pages it holds, uncompressed: their ratio is the compressor's */
    int64_t unc = 0;
    if (got && (got = get_count(c, ms, "uncompressed", "memoryStatus", &unc)) < 0)
        return SIM_EINPUT;
    if (got && compressor > 0 && unc >= compressor && unc <= 10 * compressor)
        cap__set(p, CAP_COMP_RATIO, (double)unc / (double)compressor, 2,
                 "memoryStatus.uncompressed / compressorSize: %lld / %lld pages", (long long)unc,
                 (long long)compressor);
    if ((got = get_count(c, pages, "fileBacked", "memoryPages", &v)) < 0)
        return SIM_EINPUT;
    if (got)
        cap__set(p, CAP_PAGE_CACHE, (double)v * pg, 2, "memoryPages.fileBacked: %lld pages",
                 (long long)v);
    return SIM_OK;
}

/* The processes beside the app: the system's (band 100 and above: *high
 * bytes in *nhigh), or the others' by band; the frontmost are the app. */
static int phone_processes(ips_ctx *c, const json_t *ps, cap_phone *p, double *high,
                           unsigned *nhigh)
{
    unsigned napp = 0;
    int rc = SIM_OK;
    for (size_t k = 0; rc == SIM_OK && k < json_array_size(ps); k++) {
        rpl_exit x;
        if ((rc = read_process(c, json_array_get(ps, k), k, &x)) != SIM_OK)
            break;
        if (strstr(x.states, "frontmost") != NULL) {
            napp++;
            continue;
        }
        double bytes = x.rss_kb > 0 ? (double)x.rss_kb * 1024.0 : 0;
        if (x.priority >= SYSTEM_BAND) {
            *high += bytes, (*nhigh)++;
            continue;
        }
        cap_band *bd = band_of(p, x.priority);
        if (bd == NULL || bd->size == NULL) {
            rc = bd == NULL ? bad(c, "more than 16 jetsam bands below the foreground")
                            : sim_error_set(c->err, SIM_ENOMEM, "%s: out of memory", c->name);
            break;
        }
        if (bd->count < CAP_BAND_PROCS_MAX)
            bd->size[bd->count++] = bytes;
        else
            cap__ignored(p, "processes past 512 in one band", 1);
        bd->line = 2;
    }
    if (napp > 0)
        cap__ignored(p, "frontmost processes", napp);
    return rc;
}

int rpl__ips_phone(const char *data, size_t len, const char *name, cap_phone *p,
                   sim_error *err)
{
    ips_ctx c;
    memset(&c, 0, sizeof c);
    c.name = name;
    c.err = err;
    p->os = MDL_OS_IOS;
    json_t *body;
    int rc = open_report(&c, data, len, &body);
    if (c.product[0] != '\0') {
        memcpy(p->model, c.product, sizeof p->model);
        p->model_line = 1;
    }
    const json_t *pr = body != NULL ? json_object_get(body, "product") : NULL;
    if (rc == SIM_OK && p->model[0] == '\0' && json_is_string(pr))
        rpl__utf8_copy(p->model, sizeof p->model, json_string_value(pr)), p->model_line = 2;
    double wired = 0, high = 0;
    if (rc == SIM_OK)
        rc = phone_status(&c, body, p, &wired);
    const json_t *ps = rc == SIM_OK ? json_object_get(body, "processes") : NULL;
    if (rc == SIM_OK && !json_is_array(ps))
        rc = bad(&c, "no `processes` list");
    unsigned nhigh = 0;
    if (rc == SIM_OK)
        rc = phone_processes(&c, ps, p, &high, &nhigh);
    json_decref(body);
    if (rc != SIM_OK)
        return rc;
    cap__set(p, CAP_SYSTEM, wired + high, 2,
             "memoryPages.wired (%.0f MiB) + the footprints (rpages) of the %u processes in "
             "bands %d and above, which memorystatus kills only after the app in front "
             "(%.0f MiB)", wired / 1048576.0, nhigh, SYSTEM_BAND, high / 1048576.0);
    return SIM_OK;
}
