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
    char library[64];       /* an external delegate's library, its file name only */
    unsigned library_line, start_line, unused_line; /* unused: the delegate took no node */
    int old_form;           /* "Average inference timings in us" (before 2020) */
    int profiling;          /* in --enable_op_profiling's summary, to the run's end */
} tflite_log;

/* The runs of a log (each from a "STARTING!" line) and what was dropped. */
typedef struct tflite_logs {
    tflite_log *run;
    size_t n, cap;
    unsigned skipped[8], nskipped; /* runs without timings, by their first line */
    unsigned before;               /* lines before the first STARTING!: not a run's */
} tflite_logs;

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
    if (scn__find(it, "Average inference timings in us:")) {
        /* before 2020: "Warmup: X, Init: Y, no stats: Z" (Android's JNI
         * variant "Inference: Z") */
        double a, b, c;
        if (!scn__number_after(it, "Warmup:", &a, bad) || !scn__number_after(it, "Init:", &b, bad) ||
            !(scn__number_after(it, "no stats:", &c, bad) ||
              scn__number_after(it, "Inference:", &c, bad)))
            return scn__fail_at(err, name, it->no, "an 'Average inference timings in us' line "
                                "without its Warmup, Init and no stats numbers");
        scn__set(&l->warmup_us, a, it->no);
        scn__set(&l->init_us, b, it->no);
        scn__set(&l->avg_us, c, it->no);
        l->old_form = 1;
        return SIM_OK;
    }
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
    /* the benchmark's own count= line; --enable_op_profiling's summaries
     * ("Timings (microseconds): count=...", "Memory (bytes): count=...")
     * are the profiler's, over the operators, and come after it */
    if (scn__find(it, "count=") && scn__find(it, " avg=") &&
        !scn__find(it, "Timings (microseconds):") && !scn__find(it, "Memory (bytes):")) {
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
    if (scn__find(it, "Memory footprint delta from the start of the tool (MB):") ||
        scn__find(it, "Peak memory footprint (MB):")) { /* the second: 2020's, max RSS */
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

/* "Applied NAME delegate." (benchmark_model before "Explicitly applied",
 * and label_image) and "Explicitly applied NAME delegate": the kind of
 * the delegate provider's name, NULL when the line has none. */
static const char *applied_kind(const line_iter *it)
{
    static const struct {
        const char *name, *kind;
    } names[] = {{"GPU", "gpu"},         {"NNAPI", "nnapi"},     {"Hexagon", "hexagon"},
                 {"XNNPACK", "xnnpack"}, {"CoreML", "coreml"},   {"COREML", "coreml"},
                 {"EXTERNAL", "npu"}};
    const char *a = scn__find(it, "pplied ");
    if (a == NULL || a == it->s || (a[-1] != 'A' && a[-1] != 'a'))
        return NULL;
    const char *w = a + 7, *end = it->s + it->n;
    for (size_t k = 0; k < sizeof names / sizeof *names; k++) {
        size_t n = strlen(names[k].name);
        if ((size_t)(end - w) >= n + 9 && memcmp(w, names[k].name, n) == 0 &&
            memcmp(w + n, " delegate", 9) == 0)
            return names[k].kind;
    }
    return NULL;
}

/* The delegate a line names (a GPU or external delegate, once seen,
 * stays), an external delegate's library, a delegate that took no node.
 * 1 when the line said one. */
static int delegate_line(tflite_log *l, const line_iter *it)
{
    static const struct {
        const char *phrase, *kind;
    } delegates[] = {{"XNNPACK delegate", "xnnpack"},     {"delegate for GPU", "gpu"},
                     {"GPU delegate created", "gpu"},     {"NNAPI delegate", "nnapi"},
                     {"Hexagon delegate", "hexagon"},     {"Core ML delegate", "coreml"},
                     {"COREML delegate", "coreml"},       {"EXTERNAL delegate", "npu"}};
    const char *lib = scn__find(it, "External delegate path: [");
    if (lib != NULL) { /* the library's file name, never its path */
        const char *p = lib + 25, *end = it->s + it->n, *rb = memchr(p, ']', (size_t)(end - p));
        const char *base = p;
        for (const char *q = p; rb != NULL && q < rb; q++)
            if (*q == '/')
                base = q + 1;
        if (rb != NULL && rb > base) {
            scn__clean_copy(l->library, sizeof l->library, base, (size_t)(rb - base));
            l->library_line = it->no;
        }
        return 1;
    }
    if (scn__find(it, "will not be") && scn__find(it, "executed by the delegate")) {
        l->unused_line = it->no; /* "Though X delegate is explicitly applied, ... not" */
        return 1;
    }
    int used = 0;
    const char *applied = applied_kind(it);
    for (size_t k = 0; k <= sizeof delegates / sizeof *delegates; k++) {
        const char *kind = k < sizeof delegates / sizeof *delegates
                               ? (scn__find(it, delegates[k].phrase) ? delegates[k].kind : NULL)
                               : applied;
        if (kind == NULL)
            continue;
        used = 1;
        if (strcmp(l->delegate, "gpu") != 0 && strcmp(l->delegate, "npu") != 0) {
            snprintf(l->delegate, sizeof l->delegate, "%s", kind);
            l->delegate_line = it->no;
        }
    }
    return used;
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

/* Whether the line gave one of the run's values. */
static int line_used(const tflite_log *l, unsigned no)
{
    const measure *m[] = {&l->file_mb, &l->init_us, &l->first_us, &l->warmup_us, &l->avg_us,
                          &l->count, &l->mem_init, &l->peak, &l->arena_rw,
                          &l->arena_persistent, &l->mmap_ro};
    for (size_t k = 0; k < sizeof m / sizeof *m; k++)
        if (m[k]->line == no)
            return 1;
    return 0;
}

/* One line into the current run *l. */
static int run_line(tflite_log *l, const line_iter *it, measure **arena, scn_tally *ignored,
                    const char *name, sim_error *err)
{
    double v;
    int bad = 0, rc;
    if (scn__number_after(it, "The input model file size (MB):", &v, &bad))
        scn__set(&l->file_mb, v, it->no);
    if ((rc = timing_line(l, it, name, &bad, err)) != SIM_OK)
        return rc;
    if (scn__number_after(it, "Overall peak memory footprint (MB) via periodic monitoring:", &v,
                          &bad))
        scn__set(&l->peak, v, it->no);
    int arena_head = arena_of(l, it) != NULL;
    if ((rc = arena_line(l, it, arena, name, err)) != SIM_OK)
        return rc;
    int said = delegate_line(l, it);
    if (bad)
        return scn__fail_at(err, name, it->no, "a number that cannot be read");
    if (scn__find(it, "Profiling Info for"))
        l->profiling = 1; /* the op profiler's tables: one tally, not a line each */
    if (!said && !arena_head && !line_used(l, it->no)) {
        if (l->profiling)
            scn__tally(ignored, "op profiler summary", strlen("op profiler summary"));
        else
            scn__tally_line(ignored, it);
    }
    return SIM_OK;
}

/* A new run, at a "STARTING!" line. */
static tflite_log *new_run(tflite_logs *g, unsigned line)
{
    if (g->n == g->cap) {
        size_t nc = g->cap ? g->cap * 2 : 4;
        tflite_log *nr = realloc(g->run, nc * sizeof *nr);
        if (nr == NULL)
            return NULL;
        g->run = nr;
        g->cap = nc;
    }
    tflite_log *l = &g->run[g->n++];
    memset(l, 0, sizeof *l);
    l->start_line = line;
    return l;
}

static int read_tflite(const scn_import_input *in, unsigned n, const char *name, void *state,
                       scn_tally *ignored, sim_error *err)
{
    (void)n; /* one input */
    tflite_logs *g = state;
    memset(g, 0, sizeof *g);
    line_iter it;
    /* benchmark_model prints STARTING! first: what comes before it in the
     * file (another tool's output, label_image's "Applied GPU delegate.")
     * is no run's; a log without the line is one run from its first line */
    scn__lines_of(&it, in[0].text, in[0].len);
    while (scn__next_line(&it) && !scn__find(&it, "STARTING!"))
        g->before = it.no;
    if (g->before == it.no) /* no STARTING! at all */
        g->before = 0;
    scn__lines_of(&it, in[0].text, in[0].len);
    for (unsigned k = 0; k < g->before; k++)
        scn__next_line(&it);
    measure *arena = NULL;
    tflite_log *l = new_run(g, g->before + 1);
    int started = 0, rc;
    while (l != NULL && scn__next_line(&it)) {
        if (scn__find(&it, "STARTING!")) {
            if (started)
                l = new_run(g, it.no);
            started = 1;
            arena = NULL;
            continue;
        }
        if ((rc = run_line(l, &it, &arena, ignored, name, err)) != SIM_OK)
            return rc;
    }
    if (l == NULL)
        return sim_error_set(err, SIM_ENOMEM, "out of memory");
    size_t kept = 0;
    for (size_t k = 0; k < g->n; k++) {
        if ((rc = check_bounds(&g->run[k], name, err)) != SIM_OK)
            return rc;
        if (g->run[k].avg_us.line == 0) { /* a run that ended before its timings */
            if (g->nskipped < 8)
                g->skipped[g->nskipped] = g->run[k].start_line;
            g->nskipped++;
            continue;
        }
        g->run[kept++] = g->run[k];
    }
    g->n = kept;
    if (g->n == 0)
        return scn__fail_at(err, name, 1, "not a benchmark_model log: no line 'Inference timings in "
                       "us: Init: ..., Inference (avg): ...' in its %u lines", it.no);
    return SIM_OK;
}

static void release_tflite(void *state)
{
    tflite_logs *g = state;
    free(g->run);
    g->run = NULL;
}

/* The delegate the run applied: its kind (an external one's library by
 * its file name), none for XNNPACK inside the interpreter, none when it
 * took no node. */
static void write_delegate(const tflite_log *l, out *w)
{
    char c[200];
    if (l->unused_line)
        put(w, "# %s:%u: the delegate was applied but took no node: the CPU ran the model\n",
            w->name, l->unused_line);
    if (l->delegate[0] != '\0' && strcmp(l->delegate, "xnnpack") != 0 && !l->unused_line) {
        put(w, "delegate: %s", l->delegate);
        if (l->library[0] != '\0') {
            snprintf(c, sizeof c, "the external delegate the tool applied, %s (line %u)",
                     l->library, l->library_line);
            scn__from(w, l->delegate_line, c);
        } else {
            scn__from(w, l->delegate_line, "the delegate the tool applied");
        }
        put(w, "fallback: cpu  # assumed\n");
    } else if (l->delegate[0] != '\0' && !l->unused_line) {
        put(w, "delegate: none");
        scn__from(w, l->delegate_line, "XNNPACK runs inside the interpreter's prepare here: no "
             "delegate stage of its own");
    }
}

/* One run as a candidate, from its id on. */
static void write_run(const tflite_log *l, const char *id, const char *part, out *w)
{
    char c[400];
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
    put(w, "id: %s\n", id);
    if (l->peak.line)
        put(w, "# %s:%u: the tool's peak footprint was %.1f MiB (its own memory included).\n",
            w->name, l->peak.line, l->peak.v);
    put(w, "about: \"measured by benchmark_model\"\ndigest: \"0\"\nruntime: litert\n");
    write_delegate(l, w);
    put(w, "parts:\n  %s:\n", part);
    if (file_line == 0) {
        put(w, "    # file: REQUIRED, not in the log (no 'The input model file size' line): the "
               "model file's size, to fill in\n");
    } else {
        put(w, "    file: %" PRId64 "KiB", scn__kib_of(file));
        snprintf(c, sizeof c, l->mmap_ro.line ? "the read-only (mmapped) tensors, summed over "
                 "subgraphs" : "the model file size, %.6g MB", l->file_mb.v);
        scn__from(w, file_line, c);
    }
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
    if (l->delegate[0] != '\0' && strcmp(l->delegate, "xnnpack") != 0 && !l->unused_line)
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
    if (l->old_form)
        put(w, "    # %s:%u: the form before 2020 (Average inference timings): the first "
               "inference is not printed apart\n", w->name, l->avg_us.line);
}

/* The runs as a list of candidates: each one's YAML, indented as an item. */
static int write_list(const tflite_logs *g, const char *id, const char *part, out *w)
{
    put(w, "candidates:\n");
    for (size_t k = 0; k < g->n; k++) {
        char rid[80];
        snprintf(rid, sizeof rid, "%s-%zu", id, k + 1);
        out one;
        scn__out_init(&one, w->name);
        write_run(&g->run[k], rid, part, &one);
        char *text = sim_text_done(&one.t);
        if (text == NULL)
            return SIM_ENOMEM;
        int first = 1;
        for (char *p = text, *nl; *p != '\0'; p = nl + 1) {
            nl = strchr(p, '\n');
            if (nl == NULL) { /* a last line without its newline */
                put(w, "%s%s\n", first ? "  - " : "    ", p);
                break;
            }
            put(w, "%s%.*s\n", first ? "  - " : "    ", (int)(nl - p), p);
            first = 0;
        }
        free(text);
    }
    return SIM_OK;
}

static int write_tflite(void *state, const scn_import_opts *o, out *w, sim_error *err)
{
    const tflite_logs *g = state;
    const char *id = o->id != NULL ? o->id : "imported";
    const char *part = o->part != NULL ? o->part : "model";
    if (o->run > g->n)
        return sim_error_set(err, SIM_EINPUT, "%s: --run %llu: the log holds %zu run%s with "
                             "timings", w->name, o->run, g->n, g->n == 1 ? "" : "s");
    put(w, "# oomsim import benchmark-model: a candidate measured by TensorFlow Lite's\n"
           "# benchmark_model, from %s.\n"
           "# benchmark_model prints memory in MiB (kB / 1024) and the model file in MB\n"
           "# (10^6 bytes). Not in the log, to fill in: the runtime version, the digest,\n"
           "# the fallback, and the delegate's failure rates.\n",
        w->name);
    if (g->n > 1 && o->run == 0)
        put(w, "# %zu runs in the log (each from a STARTING! line): each its own candidate,\n"
               "# %s-1 to %s-%zu, to compare side by side; --run K imports run K alone.\n",
            g->n, id, id, g->n);
    else if (g->n > 1)
        put(w, "# run %llu of the log's %zu (from line %u).\n", o->run, g->n,
            g->run[o->run - 1].start_line);
    if (g->before > 0)
        put(w, "# lines 1 to %u come before the first STARTING!: another tool's output, not "
               "read.\n", g->before);
    for (unsigned k = 0; k < g->nskipped && k < 8; k++)
        put(w, "# the run from line %u has no timings (it ended early): not imported.\n",
            g->skipped[k]);
    if (g->nskipped > 8)
        put(w, "# ... and %u more runs without timings.\n", g->nskipped - 8);
    scn__tally_put(w, "line");
    if (g->n > 1 && o->run == 0)
        return write_list(g, id, part, w) == SIM_OK
                   ? SIM_OK : sim_error_set(err, SIM_ENOMEM, "out of memory");
    write_run(&g->run[o->run ? o->run - 1 : 0], id, part, w);
    return SIM_OK;
}


_Static_assert(sizeof(tflite_logs) <= SCN_IMPORT_STATE_MAX, "the state fits the driver's buffer");

const scn_importer scn__import_benchmark_model = {"benchmark-model", "TensorFlow Lite's benchmark_model log: a candidate",
    1, sizeof(tflite_logs), read_tflite, write_tflite, release_tflite};
