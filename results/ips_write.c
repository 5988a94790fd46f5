/* ips_write.c - a simulated JetsamEvent as iOS keeps it: the two-part
 * `.ips` file, a one-line JSON header (bug_type "298", timestamp,
 * os_version, incident_id), then the report (docs/traces.md "JetsamEvent
 * reports out").  The field names are those of the reports iOS writes
 * (Apple's "Identifying high-memory use with jetsam event reports" and the
 * reports the project's reader takes, replay/ips.c); the figures are the
 * model's, in pages of 16 KiB.  `oomsim diagnose --exits` reads it back. */
#include "results.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "traces/json.h"

/* The simulated clock starts at the epoch, as the trace's exit records'
 * timestamp_ms do (so a report and its trace line up in diagnose). */
#define EPOCH ((time_t)0)

static json_t *pages_of(int64_t bytes)
{
    return json_integer((json_int_t)((bytes > 0 ? bytes : 0) / MDL_XNU_PAGE));
}

/* The second of t on the reports' clock, as strftime's `format` writes it. */
static void second_of(sim_time t, const char *format, char *buf, size_t n)
{
    time_t s = EPOCH + (time_t)(t / 1000000);
    struct tm tm;
    gmtime_r(&s, &tm);
    strftime(buf, n, format, &tm);
}

/* "1970-01-01 00:05:02.00 +0000" */
static void stamp(sim_time t, char *buf, size_t n)
{
    char day[32];
    second_of(t, "%Y-%m-%d %H:%M:%S", day, sizeof day);
    snprintf(buf, n, "%s.%02d +0000", day, (int)(t % 1000000 / 10000));
}

void res_ips_name(sim_time t, unsigned same, char *buf, size_t n)
{
    char second[32];
    second_of(t, "%Y-%m-%d-%H%M%S", second, sizeof second);
    if (same == 0)
        snprintf(buf, n, "JetsamEvent-%s.ips", second);
    else
        snprintf(buf, n, "JetsamEvent-%s-%u.ips", second, same);
}

/* A process's name: the app's own, "successor-app", or "band<N>-<k>" (k
 * the other's number, the same in every report). */
static void name_of(const mdl_jetsam_proc *p, const char *app, char *buf, size_t n)
{
    if (p->app)
        snprintf(buf, n, "%.32s", app); /* XNU keeps 2 x MAXCOMLEN */
    else if (p->successor)
        snprintf(buf, n, "successor-app");
    else
        snprintf(buf, n, "band%d-%u", p->band, p->pid - 2000u);
}

static json_t *process(const mdl_jetsam_proc *p, const char *name, int *failed)
{
    json_t *o = json_object();
    if (o == NULL) {
        *failed = 1;
        return NULL;
    }
    trc_json_set(o, "name", json_string(name), failed);
    trc_json_set(o, "pid", json_integer(p->pid), failed);
    trc_json_set(o, "rpages", pages_of(p->footprint), failed); /* phys_footprint */
    trc_json_set(o, "lifetimeMax", pages_of(p->lifetime_max), failed);
    json_t *st = json_array();
    trc_json_append(st, json_string(p->band >= MDL_BAND_FOREGROUND ? "frontmost" : "suspended"),
                    failed);
    trc_json_set(o, "states", st, failed);
    trc_json_set(o, "priority", json_integer(p->band), failed);
    if (p->killed != MDL_JETSAM_NONE)
        trc_json_set(o, "reason", json_string(mdl_jetsam_cause_name(p->killed)), failed);
    return o;
}

int res_ips_format(const mdl_jetsam_event *ev, const char *app, const char *device, uint64_t rep,
                   unsigned k, char **text, size_t *len, sim_error *err)
{
    int failed = 0;
    char when[48], id[48];
    stamp(ev->time, when, sizeof when);
    snprintf(id, sizeof id, "00000000-0000-4000-8000-%012llx",
             (unsigned long long)(((rep & 0xffffffffULL) << 16) | (k & 0xffffu)));
    json_t *head = json_object(), *body = json_object(), *ms = json_object(),
           *mp = json_object(), *procs = json_array();
    trc_json_set(head, "bug_type", json_string("298"), &failed);
    trc_json_set(head, "timestamp", json_string(when), &failed);
    trc_json_set(head, "os_version", json_string("iPhone OS (simulated by oomsim, "
                                                 MDL_XNU_VERSION " rules)"), &failed);
    trc_json_set(head, "incident_id", json_string(id), &failed);
    trc_json_set(body, "bug_type", json_string("298"), &failed);
    trc_json_set(body, "incident", json_string(id), &failed);
    trc_json_set(body, "date", json_string(when), &failed);
    trc_json_set(body, "product", json_string(device), &failed);
    /* memoryPages: the model keeps no active/inactive split: all pageable
     * pages are written active (docs/traces.md) */
    trc_json_set(mp, "active", pages_of(ev->anonymous + ev->file), &failed);
    trc_json_set(mp, "inactive", json_integer(0), &failed);
    trc_json_set(mp, "free", pages_of(ev->free), &failed);
    trc_json_set(mp, "fileBacked", pages_of(ev->file), &failed);
    trc_json_set(mp, "anonymous", pages_of(ev->anonymous), &failed);
    trc_json_set(mp, "wired", pages_of(ev->wired), &failed);
    trc_json_set(mp, "purgeable", json_integer(0), &failed);
    trc_json_set(mp, "speculative", json_integer(0), &failed);
    trc_json_set(mp, "throttled", json_integer(0), &failed);
    trc_json_set(ms, "pageSize", json_integer(MDL_XNU_PAGE), &failed);
    trc_json_set(ms, "compressorSize", pages_of(ev->compressor), &failed);
    trc_json_set(ms, "uncompressed", pages_of(ev->compressed), &failed);
    trc_json_set(ms, "memoryPages", mp, &failed);
    trc_json_set(body, "memoryStatus", ms, &failed);
    char largest[48] = "";
    int64_t most = -1;
    for (unsigned i = 0; i < ev->nprocs; i++) {
        const mdl_jetsam_proc *p = &ev->procs[i];
        char name[48];
        name_of(p, app, name, sizeof name);
        if (p->resident > most) {
            most = p->resident;
            snprintf(largest, sizeof largest, "%s", name);
        }
        trc_json_append(procs, process(p, name, &failed), &failed);
    }
    trc_json_set(body, "largestProcess", json_string(largest), &failed);
    trc_json_set(body, "processes", procs, &failed);
    char *h = failed ? NULL : trc_json_dumps(head, JSON_COMPACT | JSON_PRESERVE_ORDER);
    char *b = failed || h == NULL ? NULL : trc_json_dumps(body, JSON_INDENT(2) |
                                                                JSON_PRESERVE_ORDER);
    json_decref(head);
    json_decref(body);
    int rc = SIM_OK;
    if (h == NULL || b == NULL)
        rc = sim_error_set(err, SIM_ENOMEM, "JetsamEvent: out of memory");
    size_t hl = h != NULL ? strlen(h) : 0, bl = b != NULL ? strlen(b) : 0;
    char *out = rc == SIM_OK ? malloc(hl + bl + 2) : NULL;
    if (rc == SIM_OK && out == NULL)
        rc = sim_error_set(err, SIM_ENOMEM, "JetsamEvent: out of memory");
    if (rc == SIM_OK) {
        memcpy(out, h, hl);
        out[hl] = '\n';
        memcpy(out + hl + 1, b, bl);
        out[hl + 1 + bl] = '\0';
        *text = out;
        *len = hl + 1 + bl;
    }
    free(h);
    free(b);
    return rc;
}
