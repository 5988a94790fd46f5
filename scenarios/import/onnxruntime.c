/* onnxruntime.c - `oomsim import onnxruntime` (docs/imports/onnxruntime.md):
 * an ONNX Runtime profiling file (JSON) to a candidate: session load and
 * initialisation, each run's time, the nodes' output, activation and
 * parameter sizes, the execution provider. */
#include "import_int.h"

#include <ctype.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "traces/json.h"

typedef struct ort_span {
    double ts, dur, out, act, param;
} ort_span;

typedef struct ort_profile {
    double load_us, init_us;
    size_t load_ev, init_ev, run_ev, param_ev; /* the events they came from, + 1 (0: none) */
    ort_span *runs, *nodes;
    size_t nruns, nnodes;
    char provider[64];
    int param_given;   /* a node gave parameter_size (even "0") */
    int repaired;      /* 1: the enclosing [ ] added, 2: a trailing comma left out, 3: both */
    scn_tally *ignored; /* events read and not used, by category and kind (the driver's) */
} ort_profile;

static int span_cmp(const void *a, const void *b)
{
    double x = ((const ort_span *)a)->ts, y = ((const ort_span *)b)->ts;
    return x < y ? -1 : x > y;
}

static int dbl_cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* A profile field that ORT writes as a string of digits ("602112"). */
static double size_arg(json_t *args, const char *key, int *given)
{
    if (given != NULL && json_object_get(args, key) != NULL)
        *given = 1;
    json_t *v = json_object_get(args, key);
    if (json_is_string(v)) {
        char *end;
        double d = strtod(json_string_value(v), &end);
        return *end == '\0' && isfinite(d) && d >= 0 ? d : 0;
    }
    return json_is_number(v) && json_number_value(v) >= 0 ? json_number_value(v) : 0;
}

static void ort_free(ort_profile *p)
{
    free(p->runs);
    free(p->nodes);
    p->runs = p->nodes = NULL; /* the driver's release may follow a failed read */
}

/* An event not used, by its category and kind: a node's by what its
 * name ends with ("Node fence_before"), others by their name ("Session
 * SequentialExecutor::Execute"). */
static void ignore_event(ort_profile *p, const char *cat, const char *nm)
{
    char kind[SCN_TALLY_KIND];
    const char *tail = nm;
    if (cat != NULL && strcmp(cat, "Node") == 0) {
        const char *fence = strstr(nm, "_fence_"), *u = strrchr(nm, '_');
        tail = fence != NULL ? fence + 1 : u != NULL ? u + 1 : nm;
    }
    snprintf(kind, sizeof kind, "%s %s", cat != NULL ? cat : "uncategorised", tail);
    scn__tally(p->ignored, kind, strlen(kind));
}

/* Event i of the profile: a session's load, initialisation or run, or a
 * node's kernel time.  1 when it is a session event. */
static int profile_event(ort_profile *p, json_t *e, size_t i)
{
    int session = 0, used = 1;
    const char *nm = json_string_value(json_object_get(e, "name"));
    const char *cat = json_string_value(json_object_get(e, "cat"));
    json_t *dur = json_object_get(e, "dur"), *ts = json_object_get(e, "ts");
    if (nm == NULL || cat == NULL || !json_is_number(dur) || !json_is_number(ts)) {
        ignore_event(p, cat, nm != NULL ? nm : "without name, dur or ts");
        return 0;
    }
    double d = json_number_value(dur), t = json_number_value(ts);
    if (!isfinite(d) || !isfinite(t) || d < 0) {
        ignore_event(p, cat, "with an unreadable dur or ts");
        return 0;
    }
    if (strcmp(cat, "Session") == 0) {
        if (strncmp(nm, "model_loading", 13) == 0)
            p->load_us += d, session = 1, p->load_ev = p->load_ev ? p->load_ev : i + 1;
        else if (strcmp(nm, "session_initialization") == 0)
            p->init_us += d, session = 1, p->init_ev = p->init_ev ? p->init_ev : i + 1;
        else if (strcmp(nm, "model_run") == 0)
            p->runs[p->nruns++] = (ort_span){t, d, 0, 0, 0}, session = 1,
            p->run_ev = p->run_ev ? p->run_ev : i + 1;
        else
            used = 0;
    } else if (strcmp(cat, "Node") == 0) {
        size_t nl = strlen(nm);
        if (nl < 12 || strcmp(nm + nl - 12, "_kernel_time") != 0) {
            ignore_event(p, cat, nm);
            return 0;
        }
        json_t *args = json_object_get(e, "args");
        p->nodes[p->nnodes++] = (ort_span){t, d, size_arg(args, "output_size", NULL),
                                           size_arg(args, "activation_size", NULL),
                                           size_arg(args, "parameter_size", &p->param_given)};
        const char *prov = json_string_value(json_object_get(args, "provider"));
        if (prov != NULL && strcmp(prov, "CPUExecutionProvider") != 0 && !p->provider[0])
            /* it goes into a comment: printable ASCII only (a newline would
             * end the comment; found by fuzz_import_onnxruntime) */
            scn__clean_copy(p->provider, sizeof p->provider, prov, strlen(prov));
    } else {
        used = 0;
    }
    if (!used)
        ignore_event(p, cat, nm);
    return session;
}

/* Each run's nodes: output and parameters summed, activations at their
 * largest. */
static void nodes_to_runs(ort_profile *p)
{
    size_t k = 0;
    for (size_t r = 0; r < p->nruns; r++) {
        ort_span *run = &p->runs[r];
        while (k < p->nnodes && p->nodes[k].ts < run->ts)
            k++;
        for (; k < p->nnodes && p->nodes[k].ts <= run->ts + run->dur; k++) {
            run->out += p->nodes[k].out;
            if (p->nodes[k].act + p->nodes[k].out > run->act)
                run->act = p->nodes[k].act + p->nodes[k].out;
            run->param += p->nodes[k].param;
        }
    }
}

/* The forms a profile takes when pasted into a bug report: its events
 * without the enclosing [ ] (a list cut from the file), or with a comma
 * after the last one.  The repaired text, parsed, or NULL; *p->repaired
 * says what was done.  Line numbers stay the input's: '[' is put on the
 * first line, ']' after the last. */
static json_t *repaired(ort_profile *p, const char *text, size_t len, int *oom)
{
    size_t a = 0, b = len;
    while (a < b && isspace((unsigned char)text[a]))
        a++;
    while (b > a && isspace((unsigned char)text[b - 1]))
        b--;
    if (a == b || (text[a] != '{' && text[a] != '['))
        return NULL;
    int wrap = text[a] == '{';
    size_t end = wrap ? b : b - 1; /* before the closing ']' */
    if (!wrap && text[b - 1] != ']')
        return NULL;
    size_t c = end;
    while (c > a && isspace((unsigned char)text[c - 1]))
        c--;
    int comma = c > a && text[c - 1] == ',';
    if (!wrap && !comma)
        return NULL;
    char *buf = malloc(len + 3);
    if (buf == NULL) {
        *oom = 1;
        return NULL;
    }
    size_t n = 0;
    memcpy(buf, text, a);
    n = a;
    if (wrap)
        buf[n++] = '[';
    size_t body_end = comma ? c - 1 : end;
    memcpy(buf + n, text + a, body_end - a);
    n += body_end - a;
    buf[n++] = ']';
    json_error_t je;
    json_t *doc = trc_json_loadb(buf, n, 0, &je, oom);
    free(buf);
    if (doc != NULL)
        p->repaired = (wrap ? 1 : 0) | (comma ? 2 : 0);
    return doc;
}

static int read_ort(const scn_import_input *in, unsigned nin, const char *name, void *state,
                    scn_tally *ignored, sim_error *err)
{
    (void)nin; /* one input */
    ort_profile *p = state;
    const char *text = in[0].text;
    size_t len = in[0].len;
    memset(p, 0, sizeof *p);
    p->ignored = ignored;
    json_error_t je;
    int oom = 0;
    json_t *doc = trc_json_loadb(text, len, 0, &je, &oom);
    if (doc == NULL && !oom)
        doc = repaired(p, text, len, &oom); /* a profile pasted into a bug report */
    if (doc == NULL && oom)
        return sim_error_set(err, SIM_ENOMEM, "out of memory");
    if (doc == NULL)
        return scn__fail_at(err, name, (unsigned)(je.line > 0 ? je.line : 1),
                       "not an ONNX Runtime profile: not JSON (column %d)", je.column);
    if (!json_is_array(doc)) {
        json_decref(doc);
        return scn__fail_at(err, name, 1, "not an ONNX Runtime profile: expected a JSON array of "
                       "trace events");
    }
    size_t n = json_array_size(doc);
    p->runs = calloc(n ? n : 1, sizeof *p->runs);
    p->nodes = calloc(n ? n : 1, sizeof *p->nodes);
    if (p->runs == NULL || p->nodes == NULL) {
        json_decref(doc);
        ort_free(p);
        return sim_error_set(err, SIM_ENOMEM, "out of memory");
    }
    int found = 0;
    for (size_t i = 0; i < n; i++)
        found |= profile_event(p, json_array_get(doc, i), i);
    json_decref(doc);
    if (!found) {
        ort_free(p);
        return scn__fail_at(err, name, 1, "not an ONNX Runtime profile: no model_loading, "
                       "session_initialization or model_run event among its %zu", n);
    }
    /* a week of time and 256 GiB of memory at most, in any sum made below */
    double total_out = 0, total_param = 0;
    for (size_t i = 0; i < p->nnodes; i++)
        total_out += p->nodes[i].out + p->nodes[i].act, total_param += p->nodes[i].param;
    double longest = p->load_us > p->init_us ? p->load_us : p->init_us;
    for (size_t r = 0; r < p->nruns; r++)
        longest = p->runs[r].dur > longest ? p->runs[r].dur : longest;
    if (total_out > SIZE_BOUND || total_param > SIZE_BOUND || longest > TIME_BOUND_US) {
        ort_free(p);
        return scn__fail_at(err, name, 1, "an ONNX Runtime profile whose sizes or durations are "
                       "beyond a phone's (more than 256 GiB, or a week)");
    }
    qsort(p->runs, p->nruns, sizeof *p->runs, span_cmp);
    qsort(p->nodes, p->nnodes, sizeof *p->nodes, span_cmp);
    nodes_to_runs(p);
    return SIM_OK;
}

/* "  # NAME: event N: what" (N from 0, in the profile's array). */
static void from_event(out *o, size_t ev, const char *what)
{
    if (ev > 0)
        put(o, "  # %s: event %zu: %s\n", o->name, ev - 1, what);
    else
        put(o, "  # %s\n", what);
}

/* The header and the candidate's keys before its parts: what the profile
 * is, what was repaired and dropped, the provider as the delegate.  The
 * delegate's kind, NULL without one. */
static const char *write_head(const ort_profile *p, const scn_import_opts *o, out *w)
{
    char c[200];
    put(w, "# oomsim import onnxruntime: a candidate from an ONNX Runtime profile (%s):\n"
           "# %zu runs, %zu node kernels. Durations in us as ORT writes them; sizes in\n"
           "# bytes. Not in the profile, to fill in: the digest, the runtime version, the\n"
           "# model file's load mode, the delegate's failure rates.\n",
        w->name, p->nruns, p->nnodes);
    if (p->repaired)
        put(w, "# Read as pasted into a report:%s%s.\n",
            p->repaired & 1 ? " the events without their enclosing [ ] (added)" : "",
            p->repaired & 2 ? (p->repaired & 1 ? "; a comma after the last event (left out)"
                                               : " a comma after the last event (left out)")
                            : "");
    scn__tally_put(w, "event");
    put(w, "id: %s\nabout: \"measured from an ONNX Runtime profile\"\ndigest: \"0\"\n"
           "runtime: onnxruntime\n", o->id != NULL ? o->id : "imported");
    static const struct {
        const char *ep, *kind;
    } eps[] = {{"NnapiExecutionProvider", "nnapi"},     {"CoreMLExecutionProvider", "coreml"},
               {"QNNExecutionProvider", "qnn"},         {"CUDAExecutionProvider", "gpu"},
               {"XnnpackExecutionProvider", "xnnpack"}, {"WebGpuExecutionProvider", "gpu"},
               {"DmlExecutionProvider", "gpu"},         {"ROCMExecutionProvider", "gpu"},
               {"MIGraphXExecutionProvider", "gpu"},    {"JsExecutionProvider", "gpu"}};
    const char *kind = p->provider[0] ? "npu" : NULL;
    for (size_t k = 0; k < sizeof eps / sizeof *eps && p->provider[0]; k++)
        if (strcmp(p->provider, eps[k].ep) == 0)
            kind = eps[k].kind;
    if (kind != NULL) {
        snprintf(c, sizeof c, "the nodes ran on %s", p->provider);
        put(w, "delegate: %s", kind);
        scn__from(w, 0, c);
        put(w, "fallback: cpu  # assumed\n");
    }
    return kind;
}

static int write_ort(void *state, const scn_import_opts *o, out *w, sim_error *err)
{
    ort_profile *p = state;
    char c[400];
    const char *kind = write_head(p, o, w);
    /* the weights: the parameters of one run's nodes */
    double params = p->nruns ? p->runs[0].param : 0;
    put(w, "parts:\n  %s:\n", o->part != NULL ? o->part : "model");
    if (params > 0) {
        put(w, "    file: %" PRId64 "KiB", scn__kib_of(params));
        scn__from(w, 0, "the parameters (initializers) of the first run's nodes");
    } else {
        put(w, "    # file: REQUIRED, not in the profile (%s): the model's size, to fill in\n",
            p->nruns == 0 ? "no model_run event, and the parameters are counted over a run's "
                            "nodes"
            : p->param_given ? "its parameter_size is 0 for every node of the first run: the "
                               "provider does not count the initializers"
                             : "no node gives parameter_size");
    }
    put(w, "    load:\n      mode: copy  # assumed: ORT reads the model into memory\n");
    if (p->load_ev) {
        put(w, "      time: %.0fus", p->load_us);
        from_event(w, p->load_ev, "model_loading: its dur");
    } else {
        put(w, "      # time: REQUIRED, not in the profile (no model_loading event): to fill in\n");
    }
    if (p->init_ev) {
        put(w, "    prepare:\n      time: %.0fus", p->init_us);
        from_event(w, p->init_ev, "session_initialization: its dur (graph optimisation, "
                   "kernels, memory plan)");
    } else {
        put(w, "    prepare: {}  # time: REQUIRED, not in the profile (no session_initialization "
               "event): to fill in\n");
    }
    if (kind != NULL)
        put(w, "    delegate_prepare:\n      time: 0us  # inside session_initialization; its "
               "failure rates are not in the profile\n");
    if (p->nruns == 0) { /* no run, so no working set either */
        put(w, "    inference: {}  # time: REQUIRED, not in the profile (no model_run event): "
               "a run's time, to fill in\n");
        return SIM_OK;
    }
    put(w, "    inference:\n      time: ");
    double *d = malloc((p->nruns ? p->nruns : 1) * sizeof *d);
    double ws = 0, lower = 0;
    for (size_t r = 0; r < p->nruns; r++) {
        if (d != NULL)
            d[r] = p->runs[r].dur;
        ws = p->runs[r].out > ws ? p->runs[r].out : ws;
        lower = p->runs[r].act > lower ? p->runs[r].act : lower;
    }
    if (d == NULL)
        return sim_error_set(err, SIM_ENOMEM, "out of memory");
    if (p->nruns >= 5) {
        qsort(d, p->nruns, sizeof *d, dbl_cmp);
        double med = d[p->nruns / 2], p95 = d[(size_t)ceil(0.95 * (double)p->nruns) - 1];
        snprintf(c, sizeof c, "event %zu on: model_run over %zu runs", p->run_ev - 1, p->nruns);
        scn__time_dist(w, med, 0, med, p95, 0, c); /* all alike: the median as a plain value */
    } else if (p->nruns > 0) {
        double mean = 0;
        for (size_t r = 0; r < p->nruns; r++)
            mean += d[r] / (double)p->nruns;
        snprintf(c, sizeof c, "event %zu on: model_run, the mean of %zu run%s",
                 p->run_ev ? p->run_ev - 1 : 0, p->nruns, p->nruns == 1 ? "" : "s");
        scn__time_dist(w, mean, 0, 0, 0, 0, c);
    }
    free(d);
    if (ws > 0) {
        put(w, "      working_set: {native: %" PRId64 "KiB}", scn__kib_of(ws));
        snprintf(c, sizeof c, "the outputs of one run's nodes summed, an upper bound (no "
                 "buffer reuse assumed); the largest node's input and output, a lower bound, "
                 "is %.0f KiB", lower / 1024.0);
        scn__from(w, 0, c);
    }
    return SIM_OK;
}

static void release_ort(void *state)
{
    ort_free(state);
}

_Static_assert(sizeof(ort_profile) <= SCN_IMPORT_STATE_MAX, "the state fits the driver's buffer");

const scn_importer scn__import_onnxruntime = {"onnxruntime", "an ONNX Runtime profiling file (JSON): a candidate",
    1, sizeof(ort_profile), read_ort, write_ort, release_ort};
