/* benchmark_model.c - `oomsim import benchmark-model` (docs/imports/
 * benchmark-model.md): TensorFlow Lite's benchmark_model log to a
 * candidate: the model file, init and inference times, the arenas, the
 * delegate. */
#include "import_int.h"

#include <ctype.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct tflite_log {
    measure file_mb, init_us, first_us, warmup_us, avg_us;
    measure count, mean, sd, median, p95;          /* the last count= line: the benchmark's */
    measure mem_init, mem_overall, peak;           /* MiB */
    measure arena_rw, arena_persistent, mmap_ro;   /* bytes, summed over subgraphs */
    char delegate[32];
    unsigned delegate_line;
} tflite_log;

/* "kTfLiteArenaRw Info:" ... "taking N bytes" (or "taking X MB" in older
 * versions): which arena the next "taking" line belongs to. */
static measure *arena_of(tflite_log *l, const line_iter *it)
{
    if (scn__find(it, "kTfLiteArenaRwPersistent Info:"))
        return &l->arena_persistent;
    if (scn__find(it, "kTfLiteArenaRw Info:"))
        return &l->arena_rw;
    if (scn__find(it, "kTfLiteMmapRo Info:"))
        return &l->mmap_ro;
    return NULL;
}

/* The timing and footprint lines: Init, first and average inference,
 * the benchmark's count= line, the footprint delta. */
static int timing_line(tflite_log *l, const line_iter *it, const char *name, int *bad,
                       sim_error *err)
{
    if (scn__find(it, "Inference timings in us:")) {
        double a, b, c, d;
        if (!scn__number_after(it, "Init:", &a, bad) ||
            !scn__number_after(it, "First inference:", &b, bad) ||
            !scn__number_after(it, "Inference (avg):", &d, bad))
            return scn__fail_at(err, name, it->no, "an 'Inference timings in us' line without "
                           "its Init, First inference and Inference (avg) numbers");
        scn__set(&l->init_us, a, it->no);
        scn__set(&l->first_us, b, it->no);
        scn__set(&l->avg_us, d, it->no);
        if (scn__number_after(it, "Warmup (avg):", &c, bad))
            scn__set(&l->warmup_us, c, it->no);
    }
    if (scn__find(it, "count=") && scn__find(it, " avg=")) {
        double c, a, s = 0, md = 0, p = 0;
        if (!scn__number_after(it, "count=", &c, bad) || !scn__number_after(it, " avg=", &a, bad))
            return scn__fail_at(err, name, it->no, "a 'count=' line without its count and avg");
        scn__number_after(it, " std=", &s, bad);
        scn__number_after(it, " median=", &md, bad);
        scn__number_after(it, " p95=", &p, bad);
        scn__set(&l->count, c, it->no);
        scn__set(&l->mean, a, it->no);
        scn__set(&l->sd, s, it->no);
        scn__set(&l->median, md, it->no);
        scn__set(&l->p95, p, it->no);
    }
    if (scn__find(it, "Memory footprint delta from the start of the tool (MB):")) {
        double a, b;
        if (!scn__number_after(it, "init=", &a, bad) || !scn__number_after(it, "overall=", &b, bad))
            return scn__fail_at(err, name, it->no, "a memory footprint line without init= and "
                           "overall=");
        scn__set(&l->mem_init, a, it->no);
        scn__set(&l->mem_overall, b, it->no);
    }
    return SIM_OK;
}

/* An arena's "This memory arena is estimated as ... taking N bytes" line,
 * for the arena named on the line before (*arena). */
static int arena_line(tflite_log *l, const line_iter *it, measure **arena, const char *name,
                      sim_error *err)
{
    double v;
    measure *a = arena_of(l, it);
    if (a != NULL)
        *arena = scn__find(it, "not holding any allocation") ? NULL : a;
    if (*arena != NULL && scn__find(it, "This memory arena is estimated as")) {
        const char *t = scn__find(it, "taking ");
        const char *p = t != NULL ? t + 7 : NULL;
        if (p == NULL || !scn__number_at(&p, it->s + it->n, &v))
            return scn__fail_at(err, name, it->no, "an arena line without its size");
        int mb = p + 3 <= it->s + it->n && memcmp(p, " MB", 3) == 0;
        scn__set(*arena, (*arena)->v + (mb ? v * MIB : v), it->no);
        *arena = NULL;
    }
    return SIM_OK;
}

/* The delegate a line names (a GPU delegate, once seen, stays). */
static void delegate_line(tflite_log *l, const line_iter *it)
{
    static const struct {
        const char *phrase, *kind;
    } delegates[] = {{"XNNPACK delegate", "xnnpack"},     {"delegate for GPU", "gpu"},
                     {"GPU delegate created", "gpu"},     {"NNAPI delegate", "nnapi"},
                     {"Hexagon delegate", "hexagon"},     {"Core ML delegate", "coreml"}};
    for (size_t k = 0; k < sizeof delegates / sizeof *delegates; k++)
        if (scn__find(it, delegates[k].phrase) && strcmp(l->delegate, "gpu") != 0) {
            snprintf(l->delegate, sizeof l->delegate, "%s", delegates[k].kind);
            l->delegate_line = it->no;
        }
}

/* Every value within what one phone can say. */
static int check_bounds(const tflite_log *l, const char *name, sim_error *err)
{
    const struct {
        const measure *m;
        double scale;
        int time;
        const char *what;
    } checks[] = {{&l->file_mb, 1e6, 0, "a model file size (MB)"},
                  {&l->mem_init, MIB, 0, "a footprint (MiB)"},
                  {&l->mem_overall, MIB, 0, "a footprint (MiB)"},
                  {&l->peak, MIB, 0, "a peak footprint (MiB)"},
                  {&l->arena_rw, 1, 0, "an arena (bytes)"},
                  {&l->arena_persistent, 1, 0, "an arena (bytes)"},
                  {&l->mmap_ro, 1, 0, "an arena (bytes)"},
                  {&l->init_us, 1, 1, "an Init time (us)"},
                  {&l->avg_us, 1, 1, "an inference time (us)"},
                  {&l->mean, 1, 1, "an average (us)"},
                  {&l->sd, 1, 1, "a standard deviation (us)"},
                  {&l->median, 1, 1, "a median (us)"},
                  {&l->p95, 1, 1, "a p95 (us)"}};
    for (size_t k = 0; k < sizeof checks / sizeof *checks; k++) {
        int rc = scn__bounded(err, name, checks[k].m, checks[k].scale, checks[k].time,
                         checks[k].what);
        if (rc != SIM_OK)
            return rc;
    }
    return SIM_OK;
}

static int read_tflite(const scn_import_input *in, unsigned n, const char *name, void *state,
                       sim_error *err)
{
    (void)n; /* one input */
    tflite_log *l = state;
    const char *text = in[0].text;
    size_t len = in[0].len;
    memset(l, 0, sizeof *l);
    line_iter it;
    scn__lines_of(&it, text, len);
    measure *arena = NULL;
    int bad = 0, rc;
    while (scn__next_line(&it)) {
        double v;
        if (scn__number_after(&it, "The input model file size (MB):", &v, &bad))
            scn__set(&l->file_mb, v, it.no);
        if ((rc = timing_line(l, &it, name, &bad, err)) != SIM_OK)
            return rc;
        if (scn__number_after(&it, "Overall peak memory footprint (MB) via periodic monitoring:",
                              &v, &bad))
            scn__set(&l->peak, v, it.no);
        if ((rc = arena_line(l, &it, &arena, name, err)) != SIM_OK)
            return rc;
        delegate_line(l, &it);
        if (bad)
            return scn__fail_at(err, name, it.no, "a number that cannot be read");
    }
    if ((rc = check_bounds(l, name, err)) != SIM_OK)
        return rc;
    if (l->avg_us.line == 0)
        return scn__fail_at(err, name, 1, "not a benchmark_model log: no line 'Inference timings in "
                       "us: Init: ..., Inference (avg): ...' in its %u lines", it.no);
    return SIM_OK;
}

static int write_tflite(void *state, const scn_import_opts *o, out *w, sim_error *err)
{
    (void)err;
    const tflite_log *l = state;
    char c[400];
    const char *part = o->part != NULL ? o->part : "model";
    double file = l->mmap_ro.line ? l->mmap_ro.v : l->file_mb.v * 1e6;
    unsigned file_line = l->mmap_ro.line ? l->mmap_ro.line : l->file_mb.line;
    /* without the arenas: what init added beyond the mapped file stays
     * (prepare's resident), what the runs added on top is the working set */
    double init_b = l->mem_init.v * MIB, overall_b = l->mem_overall.v * MIB;
    double resident = l->arena_persistent.line ? l->arena_persistent.v
                      : init_b > file                ? init_b - file
                                                     : 0;
    double ws = l->arena_rw.line ? l->arena_rw.v
                : overall_b > init_b ? overall_b - init_b
                                     : 0;
    put(w, "# oomsim import benchmark-model: a candidate measured by TensorFlow Lite's\n"
           "# benchmark_model (%s). benchmark_model prints memory in MiB (kB / 1024) and\n"
           "# the model file in MB (10^6 bytes). Not in the log, to fill in: the runtime\n"
           "# version, the digest, the fallback, and the delegate's failure rates.\n",
        w->name);
    if (l->peak.line)
        put(w, "# %s:%u: the tool's peak footprint was %.1f MiB (its own memory included).\n",
            w->name, l->peak.line, l->peak.v);
    put(w, "id: %s\n", o->id != NULL ? o->id : "imported");
    put(w, "about: \"measured by benchmark_model\"\ndigest: \"0\"\nruntime: litert\n");
    if (l->delegate[0] != '\0' && strcmp(l->delegate, "xnnpack") != 0) {
        put(w, "delegate: %s", l->delegate);
        scn__from(w, l->delegate_line, "the delegate the tool applied");
        put(w, "fallback: cpu  # assumed\n");
    } else if (l->delegate[0] != '\0') {
        put(w, "delegate: none");
        scn__from(w, l->delegate_line, "XNNPACK runs inside the interpreter's prepare here: no "
             "delegate stage of its own");
    }
    put(w, "parts:\n  %s:\n", part);
    put(w, "    file: %" PRId64 "KiB", scn__kib_of(file));
    snprintf(c, sizeof c, l->mmap_ro.line ? "the read-only (mmapped) tensors, summed over "
             "subgraphs" : "the model file size, %.6g MB", l->file_mb.v);
    scn__from(w, file_line, c);
    put(w, "    load:\n      mode: mmap  # assumed: the interpreter maps the model file\n"
           "      time: 0us  # not timed apart: the load is inside Init (prepare, below)\n");
    put(w, "    prepare:\n      time: %.0fus", l->init_us.v);
    scn__from(w, l->init_us.line, "Init: the interpreter, its tensors and the delegate");
    if (resident > 0) {
        put(w, "      resident: {native: %" PRId64 "KiB}", scn__kib_of(resident));
        if (l->arena_persistent.line)
            scn__from(w, l->arena_persistent.line, "the persistent arena, summed over subgraphs");
        else {
            snprintf(c, sizeof c, "init=%.6g MiB less the file (assumed: the file's pages "
                     "were touched at init)", l->mem_init.v);
            scn__from(w, l->mem_init.line, c);
        }
    }
    if (l->delegate[0] != '\0' && strcmp(l->delegate, "xnnpack") != 0)
        put(w, "    delegate_prepare:\n      time: 0us  # not timed apart: inside Init "
               "(prepare); its failure rates are not in the log\n");
    put(w, "    inference:\n      time: ");
    if (l->count.line)
        scn__time_dist(w, l->mean.v, l->sd.v, l->median.v, l->p95.v, l->count.line,
                  "the benchmark runs");
    else
        scn__time_dist(w, l->avg_us.v, 0, 0, 0, l->avg_us.line, "Inference (avg)");
    if (ws > 0) {
        put(w, "      working_set: {native: %" PRId64 "KiB}", scn__kib_of(ws));
        if (l->arena_rw.line)
            scn__from(w, l->arena_rw.line, "the read-write arena, summed over subgraphs");
        else {
            snprintf(c, sizeof c, "overall=%.6g less init=%.6g MiB", l->mem_overall.v,
                     l->mem_init.v);
            scn__from(w, l->mem_overall.line, c);
        }
    }
    if (l->first_us.line && l->first_us.v > l->avg_us.v)
        put(w, "    # %s:%u: the first inference took %.0f us more than the average (kernel "
               "and delegate warm-up): not modelled\n",
            w->name, l->first_us.line, l->first_us.v - l->avg_us.v);
    return SIM_OK;
}

_Static_assert(sizeof(tflite_log) <= SCN_IMPORT_STATE_MAX, "the state fits the driver's buffer");

const scn_importer scn__import_benchmark_model = {"benchmark-model", "TensorFlow Lite's benchmark_model log: a candidate",
    1, sizeof(tflite_log), read_tflite, write_tflite, NULL};
