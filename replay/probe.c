/* probe.c - the lifecycle probe, matching the reference implementation.
 *
 * The checks run in the reference's order, event by event, and its
 * rejections carry its exact messages.  Where the reference crashes (a
 * non-object event, an unhashable stage, a BOM, bytes that are not JSON)
 * or accepts by accident (booleans, which Python counts as integers), the
 * probe rejects with a clean message.  docs/probe.md lists each case. */
#include "replay.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "traces/json.h"

static const char *const stages[] = {"download", "load", "runtime_prepare",
                                     "delegate_prepare", "inference", "cache", "exit"};
static const char *const reasons[] = {"none", "low_memory", "anr", "native_crash",
                                      "java_crash", "system_reclaim", "unknown"};

/* True when v is a JSON string equal to one of names (embedded NULs never
 * match, as in the reference's set lookup). */
static int in_set(const json_t *v, const char *const *names, size_t count)
{
    if (!json_is_string(v))
        return 0;
    const char *s = json_string_value(v);
    size_t len = json_string_length(v);
    for (size_t i = 0; i < count; i++)
        if (strlen(names[i]) == len && memcmp(names[i], s, len) == 0)
            return 1;
    return 0;
}

/* Integers only: jansson keeps booleans and reals apart from integers. */
static int get_int(const json_t *obj, const char *key, json_int_t *out)
{
    const json_t *v = json_object_get(obj, key);
    if (!json_is_integer(v))
        return 0;
    *out = json_integer_value(v);
    return 1;
}

/* The reference probe's own advice (not the diagnosis's: the probe must
 * print what the reference prints). */
static const char *recovery_for(const char *reason)
{
    switch (rpl_class_parse(reason, 0)) {
    case RPL_CLASS_LOW_MEMORY: return "stop new inference and isolate the candidate";
    case RPL_CLASS_ANR: return "inspect main-thread and lock evidence";
    case RPL_CLASS_NATIVE_CRASH: return "preserve native evidence and isolate the execution path";
    default: return "keep the cause unconfirmed and collect more evidence";
    }
}

typedef struct peak {
    const char *stage;
    json_int_t rss, sessions;
} peak;

/* Builds the report object; NULL when jansson runs out of memory. */
static json_t *build_report(const peak *pk, json_t *over, const char *reason)
{
    json_t *root = json_object();
    json_t *jp = json_object();
    int bad = root == NULL || jp == NULL;
    bad |= json_object_set_new(jp, "stage", json_string(pk->stage));
    bad |= json_object_set_new(jp, "rss_mb", json_integer(pk->rss));
    bad |= json_object_set_new(jp, "sessions", json_integer(pk->sessions));
    bad |= json_object_set_new(root, "peak", jp);
    bad |= json_object_set(root, "over_budget", over);
    bad |= json_object_set_new(root, "exit_reason", json_string(reason));
    bad |= json_object_set_new(root, "recovery", json_string(recovery_for(reason)));
    if (bad) {
        json_decref(root);
        return NULL;
    }
    return root;
}

static int append_over(json_t *over, size_t index, const char *stage, json_int_t rss)
{
    json_t *o = json_object();
    int bad = o == NULL;
    bad |= json_object_set_new(o, "index", json_integer((json_int_t)index));
    bad |= json_object_set_new(o, "stage", json_string(stage));
    bad |= json_object_set_new(o, "rss_mb", json_integer(rss));
    if (bad) {
        json_decref(o);
        return SIM_ENOMEM;
    }
    return json_array_append_new(over, o) == 0 ? SIM_OK : SIM_ENOMEM;
}

/* Validates every event in order and fills the peak and the over list. */
static int check_events(const json_t *events, const char *name, peak *pk, json_t *over,
                        const char **last_reason, sim_error *err)
{
    json_int_t previous_time = -1;
    int have_peak = 0;
    size_t count = json_array_size(events);
    for (size_t i = 0; i < count; i++) {
        const json_t *ev = json_array_get(events, i);
        if (!json_is_object(ev))
            return sim_error_set(err, SIM_EINPUT, "%s: event at index %zu is not an object",
                                 name, i);
        json_int_t t, rss, budget, sessions;
        if (!get_int(ev, "time_ms", &t) || t < previous_time)
            return sim_error_set(err, SIM_EINPUT, "invalid event time at index %zu", i);
        const json_t *stage = json_object_get(ev, "stage");
        const json_t *reason = json_object_get(ev, "exit_reason");
        if (!in_set(stage, stages, sizeof stages / sizeof *stages) ||
            (reason != NULL && !in_set(reason, reasons, sizeof reasons / sizeof *reasons)))
            return sim_error_set(err, SIM_EINPUT, "invalid stage or reason at index %zu", i);
        if (!get_int(ev, "rss_mb", &rss) || !get_int(ev, "budget_mb", &budget) || budget < 1)
            return sim_error_set(err, SIM_EINPUT, "invalid memory sample at index %zu", i);
        if (!get_int(ev, "sessions", &sessions) || sessions < 0)
            return sim_error_set(err, SIM_EINPUT, "invalid session count at index %zu", i);
        previous_time = t;
        const char *stage_name = json_string_value(stage);
        if (!have_peak || rss > pk->rss) {
            pk->stage = stage_name;
            pk->rss = rss;
            pk->sessions = sessions;
            have_peak = 1;
        }
        if (rss > budget && append_over(over, i, stage_name, rss) != SIM_OK)
            return sim_error_set(err, SIM_ENOMEM, "probe: out of memory");
        *last_reason = reason != NULL ? json_string_value(reason) : "none";
    }
    return SIM_OK;
}

static int parse(const char *data, size_t len, const char *name, json_t **out,
                 sim_error *err)
{
    if (len >= 3 && memcmp(data, "\xEF\xBB\xBF", 3) == 0)
        return sim_error_set(err, SIM_EINPUT,
                             "%s:1:1: invalid JSON: unexpected UTF-8 byte order mark", name);
    json_error_t je;
    int oom;
    json_t *root = trc_json_loadb(data, len, JSON_DECODE_ANY | JSON_ALLOW_NUL, &je, &oom);
    if (root == NULL) {
        if (oom)
            return sim_error_set(err, SIM_ENOMEM, "%s: out of memory", name);
        return sim_error_set(err, SIM_EINPUT, "%s:%d:%d: invalid JSON: %s", name, je.line,
                             je.column, je.text);
    }
    *out = root;
    return SIM_OK;
}

int rpl_probe_buffer(const char *data, size_t len, const char *name, char **report,
                     sim_error *err)
{
    json_t *root = NULL;
    int rc = parse(data, len, name, &root, err);
    if (rc != SIM_OK)
        return rc;
    if (!json_is_array(root) || json_array_size(root) == 0) {
        json_decref(root);
        return sim_error_set(err, SIM_EINPUT, "events must be a nonempty list");
    }
    json_t *over = json_array();
    peak pk = {NULL, 0, 0};
    const char *reason = "none";
    rc = over != NULL ? check_events(root, name, &pk, over, &reason, err)
                      : sim_error_set(err, SIM_ENOMEM, "probe: out of memory");
    char *text = NULL;
    if (rc == SIM_OK) {
        json_t *doc = build_report(&pk, over, reason);
        text = doc != NULL ? trc_json_dumps(doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER) : NULL;
        json_decref(doc);
        if (text == NULL)
            rc = sim_error_set(err, SIM_ENOMEM, "probe: out of memory");
    }
    json_decref(over);
    json_decref(root);
    if (rc == SIM_OK)
        *report = text;
    return rc;
}

int rpl_probe_file(const char *path, char **report, sim_error *err)
{
    struct stat st;
    /* The reference's Path.is_file(): follows links, wants a regular file. */
    if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
        return sim_error_set(err, SIM_EINPUT, "event file does not exist");
    char *data = NULL;
    size_t len = 0;
    int rc = sim_read_file(path, RPL_PROBE_MAX_BYTES, &data, &len, err);
    if (rc != SIM_OK)
        return rc;
    rc = rpl_probe_buffer(data, len, path, report, err);
    free(data);
    return rc;
}

void rpl_probe_free(char *report) { free(report); }
