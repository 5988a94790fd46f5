/* write.c - trace writers: JSON arrays and JSON Lines with jansson (one
 * event object at a time), msgpack with msgpack-c's packer.  Keys are
 * written in the allow-list's order, only those the event has. */
#include "traces_int.h"

#include <stdlib.h>
#include <string.h>

#include <jansson.h>
#include <msgpack.h>
#include <msgpack/fbuffer.h>

struct trc_writer {
    trc_format fmt;
    FILE *out;
    uint64_t written;
    int failed;
    msgpack_packer pk;
};

/* One field of an event, in writing order: an integer, a string or a map. */
typedef struct field {
    const char *key;
    int type; /* 0 integer, 1 string, 2 mem map, 3 exit map, 4 alloc map, 5 keep map */
    int64_t i;
    const char *s;
} field;

static unsigned fields_of(const trc_event *e, field *f)
{
    unsigned n = 0;
    unsigned h = e->has;
    if (h & TRC_F_TIME_MS)
        f[n++] = (field){"time_ms", 0, e->time_us / 1000, NULL};
    else
        f[n++] = (field){"time_us", 0, e->time_us, NULL};
    f[n++] = (field){"stage", 1, 0, trc_stage_name(e->stage)};
    if (h & TRC_F_KIND)
        f[n++] = (field){"kind", 1, 0, trc_kind_name(e->kind)};
#define STR(flag, k, x) if (h & (flag)) f[n++] = (field){k, 1, 0, e->x}
#define INT(flag, k, x) if (h & (flag)) f[n++] = (field){k, 0, e->x, NULL}
    STR(TRC_F_PART, "part", part);
    STR(TRC_F_CANDIDATE, "candidate", candidate);
    STR(TRC_F_RUNTIME, "runtime", runtime);
    STR(TRC_F_DELEGATE, "delegate", delegate);
    INT(TRC_F_SESSION, "session", session);
    INT(TRC_F_SESSIONS, "sessions", sessions);
    INT(TRC_F_QUEUE, "queue", queue);
    INT(TRC_F_IN_FLIGHT, "in_flight", in_flight);
    if (h & TRC_F_PAYLOAD)
        f[n++] = (field){"payload", 1, 0, trc_payload_name(e->payload)};
    INT(TRC_F_RSS_MB, "rss_mb", rss_mb);
    INT(TRC_F_BUDGET_MB, "budget_mb", budget_mb);
    if (h & TRC_F_MEM)
        f[n++] = (field){"mem", 2, 0, NULL};
    if (h & TRC_F_EXIT_REASON)
        f[n++] = (field){"exit_reason", 1, 0, trc_exit_reason_name(e->exit_reason)};
    if (h & TRC_F_EXIT)
        f[n++] = (field){"exit", 3, 0, NULL};
    STR(TRC_F_ERROR, "error", error);
    STR(TRC_F_ACTION, "action", action);
    STR(TRC_F_APP_VERSION, "app_version", app_version);
    STR(TRC_F_PROCESS, "process", process);
    INT(TRC_F_REQUEST, "request", request);
    INT(TRC_F_STEP, "step", step);
    STR(TRC_F_NEEDS, "needs", needs);
    INT(TRC_F_DURATION, "duration_us", duration_us);
    if (h & TRC_F_ALLOC)
        f[n++] = (field){"alloc", 4, 0, NULL};
    if (h & TRC_F_KEEP)
        f[n++] = (field){"keep", 5, 0, NULL};
    if (h & TRC_F_PAGES)
        f[n++] = (field){"pages", 6, 0, NULL};
    STR(TRC_F_LOG, "log", log);
    STR(TRC_F_OWNER, "owner", owner);
#undef STR
#undef INT
    return n;
}

/* The entries of map field f of e: how many, their names and values. */
static int map_of(const trc_event *e, int type, unsigned *mask, const char **names,
                  int64_t *vals)
{
    if (type == 6) {
        for (int j = 0; j < TRC_PG_COUNT; j++) {
            names[j] = trc__page_name(j);
            vals[j] = e->pages[j];
        }
        *mask = e->pages_has;
        return TRC_PG_COUNT;
    }
    if (type == 3) {
        const int64_t *s[TRC_EXIT_FIELDS] = {&e->exit.reason_code, &e->exit.importance,
                                             &e->exit.pss_kb,      &e->exit.rss_kb,
                                             &e->exit.status,      &e->exit.timestamp_ms,
                                             &e->exit.pid};
        for (int j = 0; j < TRC_EXIT_FIELDS; j++) {
            names[j] = trc__exit_name(j);
            vals[j] = *s[j];
        }
        *mask = e->exit.has;
        return TRC_EXIT_FIELDS;
    }
    const int64_t *v = type == 2 ? e->mem : type == 4 ? e->alloc : e->keep;
    *mask = type == 2 ? e->mem_has : type == 4 ? e->alloc_has : e->keep_has;
    for (int j = 0; j < TRC_MEM_COUNT; j++) {
        names[j] = trc__mem_name(j);
        vals[j] = v[j];
    }
    return TRC_MEM_COUNT;
}


static json_t *json_of(const trc_event *e)
{
    field f[32];
    unsigned n = fields_of(e, f);
    json_t *o = json_object();
    for (unsigned k = 0; k < n && o != NULL; k++) {
        json_t *v = NULL;
        if (f[k].type == 0) {
            v = json_integer((json_int_t)f[k].i);
        } else if (f[k].type == 1) {
            v = json_string(f[k].s);
        } else {
            v = json_object();
            unsigned mask;
            const char *names[TRC_PG_COUNT];
            int64_t vals[TRC_PG_COUNT];
            int count = map_of(e, f[k].type, &mask, names, vals);
            for (int j = 0; v != NULL && j < count; j++)
                if (mask >> j & 1u)
                    json_object_set_new(v, names[j], json_integer(vals[j]));
        }
        if (v == NULL || json_object_set_new(o, f[k].key, v) != 0) {
            json_decref(o);
            return NULL;
        }
    }
    return o;
}

static void mp_str(msgpack_packer *pk, const char *s)
{
    size_t n = strlen(s);
    msgpack_pack_str(pk, n);
    msgpack_pack_str_body(pk, s, n);
}

static int write_msgpack(trc_writer *w, const trc_event *e)
{
    field f[32];
    unsigned n = fields_of(e, f);
    msgpack_packer *pk = &w->pk;
    int rc = msgpack_pack_map(pk, n);
    for (unsigned k = 0; k < n && rc == 0; k++) {
        mp_str(pk, f[k].key);
        if (f[k].type == 0) {
            rc = msgpack_pack_int64(pk, f[k].i);
        } else if (f[k].type == 1) {
            mp_str(pk, f[k].s);
        } else {
            unsigned mask;
            const char *names[TRC_PG_COUNT];
            int64_t vals[TRC_PG_COUNT];
            int count = map_of(e, f[k].type, &mask, names, vals);
            rc = msgpack_pack_map(pk, (size_t)__builtin_popcount(mask));
            for (int j = 0; j < count && rc == 0; j++) {
                if (!(mask >> j & 1u))
                    continue;
                mp_str(pk, names[j]);
                rc = msgpack_pack_int64(pk, vals[j]);
            }
        }
    }
    return rc;
}

trc_writer *trc_writer_create(FILE *out, trc_format format, sim_error *err)
{
    trc_writer *w = calloc(1, sizeof *w);
    if (w == NULL) {
        sim_error_set(err, SIM_ENOMEM, "out of memory");
        return NULL;
    }
    w->fmt = format;
    w->out = out;
    if (format == TRC_MSGPACK) {
        msgpack_packer_init(&w->pk, out, msgpack_fbuffer_write);
        msgpack_pack_map(&w->pk, 1);
        mp_str(&w->pk, "oomsim_trace");
        msgpack_pack_int(&w->pk, 1);
    } else if (format == TRC_JSON) {
        fputs("[", out);
    }
    if (ferror(out)) {
        free(w);
        sim_error_set(err, SIM_EIO, "cannot write the trace");
        return NULL;
    }
    return w;
}

int trc_write(trc_writer *w, const trc_event *e, sim_error *err)
{
    if (w->failed)
        return sim_error_set(err, SIM_EIO, "cannot write the trace");
    /* text that is not UTF-8 cannot go into JSON (jansson refuses it): say
     * so, rather than let the refusal read as memory running out */
    field f[32];
    unsigned nf = fields_of(e, f);
    for (unsigned k = 0; k < nf; k++)
        if (f[k].type == 1 && !trc__utf8_valid(f[k].s, strlen(f[k].s)))
            return sim_error_set(err, SIM_EINPUT, "trace: %s: a string that is not UTF-8",
                                 f[k].key);
    int rc = 0;
    if (w->fmt == TRC_MSGPACK) {
        rc = write_msgpack(w, e);
    } else {
        json_t *o = json_of(e);
        if (o == NULL)
            return sim_error_set(err, SIM_ENOMEM, "out of memory");
        if (w->fmt == TRC_JSON)
            fputs(w->written ? ",\n" : "\n", w->out);
        rc = json_dumpf(o, w->out, JSON_COMPACT);
        if (w->fmt == TRC_JSONL)
            fputc('\n', w->out);
        json_decref(o);
    }
    w->written++;
    if (rc != 0 || ferror(w->out)) {
        w->failed = 1;
        return sim_error_set(err, SIM_EIO, "cannot write the trace");
    }
    return SIM_OK;
}

int trc_writer_finish(trc_writer *w, sim_error *err)
{
    if (w->fmt == TRC_JSON)
        fputs(w->written ? "\n]\n" : "]\n", w->out);
    if (fflush(w->out) != 0 || ferror(w->out) || w->failed)
        return sim_error_set(err, SIM_EIO, "cannot write the trace");
    return SIM_OK;
}

void trc_writer_destroy(trc_writer *w) { free(w); }
