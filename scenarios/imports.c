/* imports.c - `oomsim import KIND FILE...` (docs/imports.md): what teams
 * already measure, written as YAML the loader accepts, each value with a
 * comment naming the input line it came from and what was assumed.
 *
 * Every importer first reads its input into a small struct of measured
 * values, each with the line it came from, then writes the YAML from that
 * struct; the text formats are matched by their fixed phrases anywhere in
 * a line, so prefixes (logcat's date, pid and tag, "INFO: ") do not
 * matter.  An input that holds none of a format's phrases is refused,
 * naming its first line. */
#include "scenarios.h"

#include <jansson.h>

#include <ctype.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#define MIB 1048576.0

/* ------------------------------------------------------------------ lines */

typedef struct line_iter {
    const char *p, *end;
    unsigned no;            /* the current line's number, from 1 */
    const char *s;          /* the current line (not NUL-terminated) */
    size_t n;
} line_iter;

static void lines_of(line_iter *it, const char *text, size_t len)
{
    it->p = text;
    it->end = text + len;
    it->no = 0;
}

static int next_line(line_iter *it)
{
    if (it->p >= it->end)
        return 0;
    const char *nl = memchr(it->p, '\n', (size_t)(it->end - it->p));
    it->s = it->p;
    it->n = nl != NULL ? (size_t)(nl - it->p) : (size_t)(it->end - it->p);
    if (it->n > 0 && it->s[it->n - 1] == '\r')
        it->n--;
    it->p = nl != NULL ? nl + 1 : it->end;
    it->no++;
    return 1;
}

/* Where `what` starts in the line, or NULL. */
static const char *find(const line_iter *it, const char *what)
{
    size_t w = strlen(what);
    for (size_t i = 0; i + w <= it->n; i++)
        if (it->s[i] == what[0] && memcmp(it->s + i, what, w) == 0)
            return it->s + i;
    return NULL;
}

/* A decimal number (with an exponent, as C++ streams print 2.71985e+06)
 * at *s before end: 1 and *v, *s past it; 0 when there is none. */
static int number_at(const char **s, const char *end, double *v)
{
    char buf[64];
    size_t k = 0;
    const char *p = *s;
    while (p < end && *p == ' ')
        p++;
    while (p < end && k + 1 < sizeof buf &&
           (isdigit((unsigned char)*p) || *p == '.' || *p == '-' || *p == '+' ||
            ((*p == 'e' || *p == 'E') && k > 0)))
        buf[k++] = *p++;
    buf[k] = '\0';
    if (k == 0 || !isdigit((unsigned char)buf[k - 1]))
        return 0;
    char *stop;
    double d = strtod(buf, &stop);
    if (*stop != '\0' || !isfinite(d))
        return 0;
    *v = d == 0 ? 0 : d; /* "-0" is 0: never a "-0us" in the YAML */
    *s = p;
    return 1;
}

/* The number after `key` in the line: 1 and *v; 0 when the key is absent;
 * an error naming the line when the key is there without a number. */
static int number_after(const line_iter *it, const char *key, double *v, int *bad)
{
    const char *at = find(it, key);
    if (at == NULL)
        return 0;
    const char *p = at + strlen(key);
    if (!number_at(&p, it->s + it->n, v) || *v < 0) {
        *bad = 1;
        return 0;
    }
    return 1;
}

/* A measured value and the line it came from (0: not measured). */
typedef struct measure {
    double v;
    unsigned line;
} measure;

static void set(measure *m, double v, unsigned line)
{
    m->v = v;
    m->line = line;
}

/* ------------------------------------------------------------------- yaml */

typedef struct out {
    sim_text t;
    const char *name; /* the input's name in comments */
} out;

/* Appends to the YAML (sim_text_printf: no length limit). */
#define put(o, ...) sim_text_printf(&(o)->t, __VA_ARGS__)

/* "  # NAME:LINE: what" at the end of a value's line. */
static void from(out *o, unsigned line, const char *what)
{
    if (line > 0)
        put(o, "  # %s:%u: %s\n", o->name, line, what);
    else
        put(o, "  # %s\n", what);
}

/* Text from an input that goes into a comment: printable ASCII only (a
 * control character or a newline would end the comment; the YAML must stay
 * UTF-8), others as '?'. */
static void clean_copy(char *dst, size_t n, const char *src, size_t len)
{
    size_t k = 0;
    for (size_t i = 0; i < len && k + 1 < n; i++)
        dst[k++] = src[i] >= 0x20 && src[i] < 0x7f ? src[i] : '?';
    dst[k] = '\0';
}

static int64_t kib_of(double bytes)
{
    return (int64_t)ceil(bytes / 1024.0);
}

static int fail_at(sim_error *err, const char *name, unsigned line, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;
static int fail_at(sim_error *err, const char *name, unsigned line, const char *fmt, ...)
{
    char what[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return sim_error_set(err, SIM_EINPUT, "%s:%u: %s", name, line, what);
}

/* What an input may say of one phone: a size up to 256 GiB, a time up to a
 * week (so that the sums an importer makes stay within the loader's 1 TiB
 * and 30 days); beyond is a corrupt or misread line, refused. */
#define SIZE_BOUND (256.0 * 1073741824.0)
#define TIME_BOUND_US (7.0 * 86400e6)

static int bounded(sim_error *err, const char *name, const measure *m, double scale,
                   int is_time, const char *what)
{
    if (m->line == 0 || m->v * scale <= (is_time ? TIME_BOUND_US : SIZE_BOUND))
        return SIM_OK;
    return fail_at(err, name, m->line, "%s of %.6g: more than %s", what, m->v,
                   is_time ? "a week" : "256 GiB");
}

/* A time distribution from what a log gives: its median and p95 when
 * printed, else a lognormal fitted to the mean and standard deviation (the
 * lognormal with that mean and variance: sigma^2 = ln(1 + cv^2), median =
 * mean / sqrt(1 + cv^2)), else the mean as a plain value. */
static void time_dist(out *o, double mean_us, double sd_us, double median_us, double p95_us,
                      unsigned line, const char *what)
{
    /* whole microseconds, a median of at least 1 and a p95 above it: the
     * loader's rules for a lognormal */
    median_us = round(median_us);
    p95_us = round(p95_us);
    if (median_us >= 1 && p95_us > median_us) {
        put(o, "{dist: lognormal, median: %.0fus, p95: %.0fus}", median_us, p95_us);
        char c[600];
        snprintf(c, sizeof c, "%s: its median and p95 as measured", what);
        from(o, line, c);
    } else if (sd_us > 0 && mean_us > 0) {
        double cv = sd_us / mean_us, s2 = log1p(cv * cv);
        double med = round(mean_us / sqrt(1 + cv * cv)), p95 = round(med * exp(1.6448536 * sqrt(s2)));
        if (med < 1)
            med = 1;
        put(o, "{dist: lognormal, median: %.0fus, p95: %.0fus}", med, p95 > med ? p95 : med + 1);
        char c[600];
        snprintf(c, sizeof c, "%s: a lognormal fitted to mean %.0f us and sd %.0f us "
                 "(assumed lognormal)", what, mean_us, sd_us);
        from(o, line, c);
    } else {
        put(o, "%.0fus", mean_us);
        from(o, line, what);
    }
}

/* -------------------------------------------------------- benchmark_model */

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
    if (find(it, "kTfLiteArenaRwPersistent Info:"))
        return &l->arena_persistent;
    if (find(it, "kTfLiteArenaRw Info:"))
        return &l->arena_rw;
    if (find(it, "kTfLiteMmapRo Info:"))
        return &l->mmap_ro;
    return NULL;
}

static int read_tflite(const char *text, size_t len, const char *name, tflite_log *l,
                       sim_error *err)
{
    memset(l, 0, sizeof *l);
    line_iter it;
    lines_of(&it, text, len);
    measure *arena = NULL;
    int bad = 0;
    while (next_line(&it)) {
        double v;
        if (number_after(&it, "The input model file size (MB):", &v, &bad))
            set(&l->file_mb, v, it.no);
        if (find(&it, "Inference timings in us:")) {
            double a, b, c, d;
            if (!number_after(&it, "Init:", &a, &bad) ||
                !number_after(&it, "First inference:", &b, &bad) ||
                !number_after(&it, "Inference (avg):", &d, &bad))
                return fail_at(err, name, it.no, "an 'Inference timings in us' line without "
                               "its Init, First inference and Inference (avg) numbers");
            set(&l->init_us, a, it.no);
            set(&l->first_us, b, it.no);
            set(&l->avg_us, d, it.no);
            if (number_after(&it, "Warmup (avg):", &c, &bad))
                set(&l->warmup_us, c, it.no);
        }
        if (find(&it, "count=") && find(&it, " avg=")) {
            double c, a, s = 0, md = 0, p = 0;
            if (!number_after(&it, "count=", &c, &bad) || !number_after(&it, " avg=", &a, &bad))
                return fail_at(err, name, it.no, "a 'count=' line without its count and avg");
            number_after(&it, " std=", &s, &bad);
            number_after(&it, " median=", &md, &bad);
            number_after(&it, " p95=", &p, &bad);
            set(&l->count, c, it.no);
            set(&l->mean, a, it.no);
            set(&l->sd, s, it.no);
            set(&l->median, md, it.no);
            set(&l->p95, p, it.no);
        }
        if (find(&it, "Memory footprint delta from the start of the tool (MB):")) {
            double a, b;
            if (!number_after(&it, "init=", &a, &bad) || !number_after(&it, "overall=", &b, &bad))
                return fail_at(err, name, it.no, "a memory footprint line without init= and "
                               "overall=");
            set(&l->mem_init, a, it.no);
            set(&l->mem_overall, b, it.no);
        }
        if (number_after(&it, "Overall peak memory footprint (MB) via periodic monitoring:", &v,
                         &bad))
            set(&l->peak, v, it.no);
        measure *a = arena_of(l, &it);
        if (a != NULL)
            arena = find(&it, "not holding any allocation") ? NULL : a;
        if (arena != NULL && find(&it, "This memory arena is estimated as")) {
            const char *t = find(&it, "taking ");
            const char *p = t != NULL ? t + 7 : NULL;
            if (p == NULL || !number_at(&p, it.s + it.n, &v))
                return fail_at(err, name, it.no, "an arena line without its size");
            int mb = p + 3 <= it.s + it.n && memcmp(p, " MB", 3) == 0;
            set(arena, arena->v + (mb ? v * MIB : v), it.no);
            arena = NULL;
        }
        static const struct {
            const char *phrase, *kind;
        } delegates[] = {{"XNNPACK delegate", "xnnpack"},     {"delegate for GPU", "gpu"},
                         {"GPU delegate created", "gpu"},     {"NNAPI delegate", "nnapi"},
                         {"Hexagon delegate", "hexagon"},     {"Core ML delegate", "coreml"}};
        for (size_t k = 0; k < sizeof delegates / sizeof *delegates; k++)
            if (find(&it, delegates[k].phrase) && strcmp(l->delegate, "gpu") != 0) {
                snprintf(l->delegate, sizeof l->delegate, "%s", delegates[k].kind);
                l->delegate_line = it.no;
            }
        if (bad)
            return fail_at(err, name, it.no, "a number that cannot be read");
    }
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
        int rc = bounded(err, name, checks[k].m, checks[k].scale, checks[k].time,
                         checks[k].what);
        if (rc != SIM_OK)
            return rc;
    }
    if (l->avg_us.line == 0)
        return fail_at(err, name, 1, "not a benchmark_model log: no line 'Inference timings in "
                       "us: Init: ..., Inference (avg): ...' in its %u lines", it.no);
    return SIM_OK;
}

static int write_tflite(const tflite_log *l, const scn_import_opts *o, out *w)
{
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
        from(w, l->delegate_line, "the delegate the tool applied");
        put(w, "fallback: cpu  # assumed\n");
    } else if (l->delegate[0] != '\0') {
        put(w, "delegate: none");
        from(w, l->delegate_line, "XNNPACK runs inside the interpreter's prepare here: no "
             "delegate stage of its own");
    }
    put(w, "parts:\n  %s:\n", part);
    put(w, "    file: %" PRId64 "KiB", kib_of(file));
    snprintf(c, sizeof c, l->mmap_ro.line ? "the read-only (mmapped) tensors, summed over "
             "subgraphs" : "the model file size, %.6g MB", l->file_mb.v);
    from(w, file_line, c);
    put(w, "    load:\n      mode: mmap  # assumed: the interpreter maps the model file\n"
           "      time: 0us  # not timed apart: the load is inside Init (prepare, below)\n");
    put(w, "    prepare:\n      time: %.0fus", l->init_us.v);
    from(w, l->init_us.line, "Init: the interpreter, its tensors and the delegate");
    if (resident > 0) {
        put(w, "      resident: {native: %" PRId64 "KiB}", kib_of(resident));
        if (l->arena_persistent.line)
            from(w, l->arena_persistent.line, "the persistent arena, summed over subgraphs");
        else {
            snprintf(c, sizeof c, "init=%.6g MiB less the file (assumed: the file's pages "
                     "were touched at init)", l->mem_init.v);
            from(w, l->mem_init.line, c);
        }
    }
    if (l->delegate[0] != '\0' && strcmp(l->delegate, "xnnpack") != 0)
        put(w, "    delegate_prepare:\n      time: 0us  # not timed apart: inside Init "
               "(prepare); its failure rates are not in the log\n");
    put(w, "    inference:\n      time: ");
    if (l->count.line)
        time_dist(w, l->mean.v, l->sd.v, l->median.v, l->p95.v, l->count.line,
                  "the benchmark runs");
    else
        time_dist(w, l->avg_us.v, 0, 0, 0, l->avg_us.line, "Inference (avg)");
    if (ws > 0) {
        put(w, "      working_set: {native: %" PRId64 "KiB}", kib_of(ws));
        if (l->arena_rw.line)
            from(w, l->arena_rw.line, "the read-write arena, summed over subgraphs");
        else {
            snprintf(c, sizeof c, "overall=%.6g less init=%.6g MiB", l->mem_overall.v,
                     l->mem_init.v);
            from(w, l->mem_overall.line, c);
        }
    }
    if (l->first_us.line && l->first_us.v > l->avg_us.v)
        put(w, "    # %s:%u: the first inference took %.0f us more than the average (kernel "
               "and delegate warm-up): not modelled\n",
            w->name, l->first_us.line, l->first_us.v - l->avg_us.v);
    return SIM_OK;
}


/* ------------------------------------------------------- dumpsys meminfo */

/* The App Summary's rows (KB), PSS and, from Android 10 on, RSS. */
enum { MI_JAVA = 0, MI_NATIVE, MI_CODE, MI_STACK, MI_GRAPHICS, MI_OTHER, MI_SYSTEM,
       MI_UNKNOWN, MI_TOTAL, MI_ROWS };

typedef struct meminfo {
    measure pss[MI_ROWS], rss[MI_ROWS];
    char process[128];
    unsigned summary_line;
} meminfo;

static int read_meminfo(const char *text, size_t len, const char *name, meminfo *mi,
                        sim_error *err)
{
    static const char *const rows[MI_ROWS] = {"Java Heap:", "Native Heap:", "Code:", "Stack:",
                                              "Graphics:", "Private Other:", "System:",
                                              "Unknown:", "TOTAL"};
    memset(mi, 0, sizeof *mi);
    line_iter it;
    lines_of(&it, text, len);
    int in_summary = 0, sections = 0;
    while (next_line(&it)) {
        const char *at = find(&it, "** MEMINFO in pid ");
        if (at != NULL) {
            if (++sections > 1)
                break; /* the first process's only: the app's main process comes first */
            const char *lb = find(&it, "[");
            const char *rb = lb != NULL ? memchr(lb, ']', (size_t)(it.s + it.n - lb)) : NULL;
            if (lb != NULL && rb != NULL)
                clean_copy(mi->process, sizeof mi->process, lb + 1, (size_t)(rb - lb - 1));
            continue;
        }
        if (find(&it, "App Summary")) {
            in_summary = 1;
            mi->summary_line = it.no;
            continue;
        }
        if (!in_summary)
            continue;
        for (int r = 0; r < MI_ROWS; r++) {
            const char *k = find(&it, rows[r]);
            if (k == NULL)
                continue;
            /* "TOTAL PSS:" (Android 10 on) or "TOTAL:" (before) */
            const char *p = k + strlen(rows[r]);
            if (r == MI_TOTAL) {
                if (find(&it, "TOTAL PSS:"))
                    p = find(&it, "TOTAL PSS:") + 10;
                else if (find(&it, "TOTAL:"))
                    p = find(&it, "TOTAL:") + 6;
                else
                    continue;
            } else if (k != it.s && k[-1] != ' ') {
                continue; /* "Java Heap:" inside another word */
            }
            const char *end = it.s + it.n;
            double v;
            int got = number_at(&p, end, &v);
            if (r == MI_UNKNOWN && !got) {
                /* Android 10 prints Unknown's RSS only */
                if (number_at(&p, end, &v))
                    set(&mi->rss[r], v, it.no);
                continue;
            }
            if (!got)
                return fail_at(err, name, it.no, "%s without a number", rows[r]);
            set(&mi->pss[r], v, it.no);
            if (r == MI_TOTAL) {
                const char *t = find(&it, "TOTAL RSS:");
                if (t != NULL) {
                    p = t + 10;
                    if (number_at(&p, end, &v))
                        set(&mi->rss[r], v, it.no);
                }
            } else if (number_at(&p, end, &v)) {
                set(&mi->rss[r], v, it.no);
            }
        }
        if (mi->pss[MI_TOTAL].line)
            break;
    }
    for (int r = 0; r < MI_ROWS; r++) {
        int rc = bounded(err, name, &mi->pss[r], 1024, 0, "a row (KB)");
        if (rc == SIM_OK)
            rc = bounded(err, name, &mi->rss[r], 1024, 0, "a row (KB)");
        if (rc != SIM_OK)
            return rc;
    }
    if (!mi->summary_line)
        return fail_at(err, name, 1, "not dumpsys meminfo output: no 'App Summary' in its %u "
                       "lines (dumpsys meminfo PACKAGE prints one per process)", it.no);
    if (!mi->pss[MI_JAVA].line || !mi->pss[MI_NATIVE].line)
        return fail_at(err, name, mi->summary_line, "an App Summary without its Java Heap and "
                       "Native Heap rows");
    return SIM_OK;
}

/* What the candidate's parts hold once loaded and prepared, by category
 * (bytes, their means): the model's own share of a dump taken with the
 * model loaded. */
static void candidate_resident(const mdl_candidate *c, double cat[MDL_CAT_COUNT])
{
    for (int k = 0; k < MDL_CAT_COUNT; k++)
        cat[k] = 0;
    for (unsigned p = 0; p < c->nparts; p++) {
        const mdl_part *pt = &c->parts[p];
        cat[pt->load_mode == MDL_LOAD_MMAP ? MDL_CAT_FILE : MDL_CAT_NATIVE] += (double)pt->file;
        const mdl_phase *ph[3] = {&pt->load, &pt->prepare, &pt->delegate_prepare};
        for (int k = 0; k < 3; k++)
            for (int c2 = 0; c2 < MDL_CAT_COUNT; c2++)
                if ((k < 2 || pt->has_delegate_prepare) && (ph[k]->resident.mask >> c2 & 1u))
                    cat[c2] += mdl_dist_mean(&ph[k]->resident.cat[c2]);
    }
}

static void baseline_row(out *w, const char *key, double kb, double minus, const char *what,
                         unsigned line)
{
    double v = kb * 1024.0 - minus;
    char c[400];
    if (minus > 0 && v < 0)
        snprintf(c, sizeof c, "%s, less the candidate's %.0f KiB: below 0, so 0 (the candidate "
                 "holds more than the dump shows: check it)", what, minus / 1024.0);
    else if (minus > 0)
        snprintf(c, sizeof c, "%s, less the candidate's %.0f KiB", what, minus / 1024.0);
    else
        snprintf(c, sizeof c, "%s", what);
    put(w, "    %s: %" PRId64 "KiB", key, v > 0 ? kib_of(v) : 0);
    from(w, line, c);
}

static int write_meminfo(const meminfo *mi, const scn_import_opts *o, out *w)
{
    const measure *m = mi->pss;
    double minus[MDL_CAT_COUNT] = {0};
    static const char note[] = "Private Other holds what is not Java, native heap, code, stack "
                               "or graphics: a model file mapped by the app (\"Other mmap\") "
                               "is there";
    if (o->minus != NULL) {
        candidate_resident(o->minus, minus);
        /* mapped weights show under Code only when they are an .so or a
         * .dex; a model file maps as "Other mmap", inside Private Other:
         * what Code cannot hold comes out of native */
        double code = m[MI_CODE].v * 1024.0;
        if (minus[MDL_CAT_FILE] > code) {
            minus[MDL_CAT_NATIVE] += minus[MDL_CAT_FILE] - code;
            minus[MDL_CAT_FILE] = code;
        }
    }
    put(w, "# oomsim import meminfo: the app's own memory from `dumpsys meminfo` (%s),\n"
           "# process %s, the App Summary's PSS column in KB (dumpsys counts 1024 bytes).\n",
        w->name, mi->process[0] ? mi->process : "(unnamed)");
    if (o->minus != NULL)
        put(w, "# The model's own parts (candidate %s: its files and resident memory, their\n"
               "# means) are subtracted: the dump was taken with the model loaded.\n",
            o->minus->id);
    else
        put(w, "# Taken with the model loaded? Give --minus CANDIDATE to subtract its parts.\n");
    put(w, "app:\n  baseline:\n");
    char c[300];
    baseline_row(w, "java", m[MI_JAVA].v, minus[MDL_CAT_JAVA], "Java Heap", m[MI_JAVA].line);
    double native = m[MI_NATIVE].v + m[MI_STACK].v + m[MI_OTHER].v;
    snprintf(c, sizeof c, "Native Heap %.0f + Stack %.0f + Private Other %.0f KB",
             m[MI_NATIVE].v, m[MI_STACK].v, m[MI_OTHER].v);
    put(w, "    # %s\n", note);
    baseline_row(w, "native", native, minus[MDL_CAT_NATIVE], c, m[MI_NATIVE].line);
    baseline_row(w, "gpu", m[MI_GRAPHICS].v, minus[MDL_CAT_GPU],
                 "Graphics (GL and EGL memory tracked for the app)", m[MI_GRAPHICS].line);
    baseline_row(w, "file", m[MI_CODE].v, minus[MDL_CAT_FILE],
                 "Code (mapped .so, .dex, .oat, .apk: file pages)", m[MI_CODE].line);
    if (m[MI_SYSTEM].line)
        put(w, "# %s:%u: System %.0f KB left out: shared system pages, not the app's own.\n",
            w->name, m[MI_SYSTEM].line, m[MI_SYSTEM].v);
    if (m[MI_TOTAL].line)
        put(w, "# %s:%u: TOTAL PSS %.0f KB%s.\n", w->name, m[MI_TOTAL].line, m[MI_TOTAL].v,
            mi->rss[MI_TOTAL].line ? "" : " (the layout before Android 10: no RSS column)");
    if (mi->rss[MI_TOTAL].line)
        put(w, "# %s:%u: TOTAL RSS %.0f KB (RSS counts shared pages whole; PSS shares them).\n",
            w->name, mi->rss[MI_TOTAL].line, mi->rss[MI_TOTAL].v);
    return SIM_OK;
}


/* ---------------------------------------------------------------- llama.cpp */

/* Where a llama.cpp buffer lives, by its backend's name: a "_Mapped"
 * buffer is the mmapped GGUF file; CPU, CPU_REPACK and the Host are
 * native memory; every other backend (CUDA0, Vulkan0, Metal, MTL0,
 * OpenCL, HTP0, ...) is the accelerator's, gpu. */
static int cat_of_backend(const char *b, size_t n)
{
    if (n >= 7 && memcmp(b + n - 7, "_Mapped", 7) == 0)
        return MDL_CAT_FILE;
    if ((n >= 3 && memcmp(b, "CPU", 3) == 0) || (n >= 4 && memcmp(b, "Host", 4) == 0) ||
        (n >= 9 && memcmp(b + n - 9, "CUDA_Host", 9) == 0))
        return MDL_CAT_NATIVE;
    return MDL_CAT_GPU;
}

typedef struct llama_log {
    measure model[MDL_CAT_COUNT], kv[MDL_CAT_COUNT], compute[MDL_CAT_COUNT]; /* MiB */
    measure file_gib, load_ms, prompt_ms, eval_ms, eval_runs;
    int from_table; /* the sizes came from the memory breakdown table */
} llama_log;

/* "BACKEND <what> buffer size = X MiB": the backend is the word before
 * <what>. */
static int buffer_line(const line_iter *it, const char *what, measure *m, int *bad)
{
    const char *at = find(it, what);
    if (at == NULL)
        return 0;
    const char *e = at;
    while (e > it->s && e[-1] == ' ')
        e--;
    const char *b = e;
    while (b > it->s && b[-1] != ' ' && b[-1] != ':')
        b--;
    if (b == e)
        return 0;
    double v;
    if (!number_after(it, "buffer size =", &v, bad))
        return 0;
    int c = cat_of_backend(b, (size_t)(e - b));
    set(&m[c], m[c].v + v, it->no);
    return 1;
}

/* "| - NAME | total = free + (self = model + context + compute) +
 * unaccounted |", or for the host "| - Host | self = model + context +
 * compute |": the last three numbers before the closing of the self
 * sum. */
static int breakdown_row(const line_iter *it, llama_log *l)
{
    const char *dash = find(it, "|   - ");
    if (dash == NULL || find(it, "memory breakdown"))
        return 0;
    const char *name = dash + 6, *bar = memchr(name, '|', (size_t)(it->s + it->n - name));
    if (bar == NULL)
        return 0;
    size_t nl = 0;
    while (name + nl < bar && name[nl] != ' ')
        nl++;
    double nums[8];
    int k = 0;
    const char *p = bar + 1, *end = it->s + it->n;
    while (p < end && k < 8) {
        if (isdigit((unsigned char)*p)) {
            if (!number_at(&p, end, &nums[k]))
                return 0;
            k++;
        } else {
            p++;
        }
    }
    /* device rows: total, free, self, model, context, compute, unaccounted;
     * host rows: self, model, context, compute */
    int at = k == 7 ? 3 : k == 4 ? 1 : -1;
    if (at < 0)
        return 0;
    int c = cat_of_backend(name, nl);
    if (c == MDL_CAT_FILE)
        c = MDL_CAT_NATIVE;
    set(&l->model[c], l->model[c].v + nums[at], it->no);
    set(&l->kv[c], l->kv[c].v + nums[at + 1], it->no);
    set(&l->compute[c], l->compute[c].v + nums[at + 2], it->no);
    return 1;
}

static int read_llama(const char *text, size_t len, const char *name, llama_log *l,
                      sim_error *err)
{
    memset(l, 0, sizeof *l);
    llama_log table;
    memset(&table, 0, sizeof table);
    line_iter it;
    lines_of(&it, text, len);
    int bad = 0, any_buffer = 0, any_table = 0;
    while (next_line(&it)) {
        double v;
        any_buffer |= buffer_line(&it, "model buffer size", l->model, &bad);
        any_buffer |= buffer_line(&it, "KV buffer size", l->kv, &bad);
        any_buffer |= buffer_line(&it, "compute buffer size", l->compute, &bad);
        if (!find(&it, "model buffer size") && !find(&it, "KV buffer size") &&
            !find(&it, "compute buffer size") && find(&it, "load_tensors:") &&
            find(&it, " buffer size ="))
            any_buffer |= buffer_line(&it, "buffer size =", l->model, &bad);
        if ((find(&it, "file size") || find(&it, "model size")) &&
            (find(&it, " GiB") || find(&it, " MiB")) &&
            (number_after(&it, "file size   =", &v, &bad) ||
             number_after(&it, "model size       =", &v, &bad) ||
             number_after(&it, "file size =", &v, &bad) ||
             number_after(&it, "model size =", &v, &bad)))
            set(&l->file_gib, find(&it, " GiB") ? v : v / 1024.0, it.no);
        if (find(&it, "load time =") && number_after(&it, "load time =", &v, &bad))
            set(&l->load_ms, v, it.no);
        if (find(&it, "prompt eval time =")) {
            if (number_after(&it, "prompt eval time =", &v, &bad))
                set(&l->prompt_ms, v, it.no);
        } else if (find(&it, "eval time =") && number_after(&it, "eval time =", &v, &bad)) {
            set(&l->eval_ms, v, it.no);
            double r;
            const char *slash = find(&it, "/");
            if (slash != NULL) {
                const char *p = slash + 1;
                if (number_at(&p, it.s + it.n, &r))
                    set(&l->eval_runs, r, it.no);
            }
        }
        any_table |= breakdown_row(&it, &table);
        if (bad)
            return fail_at(err, name, it.no, "a number that cannot be read");
    }
    for (int c = 0; c < MDL_CAT_COUNT; c++) {
        const measure *ms[6] = {&l->model[c], &l->kv[c], &l->compute[c],
                                &table.model[c], &table.kv[c], &table.compute[c]};
        for (int k = 0; k < 6; k++) {
            int rc = bounded(err, name, ms[k], MIB, 0, "buffers (MiB)");
            if (rc != SIM_OK)
                return rc;
        }
    }
    const measure *ts[3] = {&l->load_ms, &l->prompt_ms, &l->eval_ms};
    for (int k = 0; k < 3; k++) {
        int rc = bounded(err, name, ts[k], 1000, 1, "a time (ms)");
        if (rc != SIM_OK)
            return rc;
    }
    int rcf = bounded(err, name, &l->file_gib, 1073741824.0, 0, "a file size (GiB)");
    if (rcf != SIM_OK)
        return rcf;
    if (!any_buffer && any_table) { /* the table alone: a log cut to its end */
        memcpy(l->model, table.model, sizeof l->model);
        memcpy(l->kv, table.kv, sizeof l->kv);
        memcpy(l->compute, table.compute, sizeof l->compute);
        l->from_table = 1;
    }
    if (!any_buffer && !any_table)
        return fail_at(err, name, 1, "not a llama.cpp log: no 'model buffer size' line and no "
                       "memory breakdown table in its %u lines", it.no);
    return SIM_OK;
}

static void amounts_row(out *w, const char *key, const measure *m, const char *what)
{
    int any = 0;
    unsigned line = 0;
    for (int c = 0; c < MDL_CAT_COUNT; c++)
        if (m[c].v > 0 && c != MDL_CAT_FILE)
            any = 1, line = line ? line : m[c].line;
    if (!any)
        return;
    put(w, "%s{", key);
    int first = 1;
    static const char *const cats[MDL_CAT_COUNT] = {"java", "native", "gpu", "file"};
    for (int c = 0; c < MDL_CAT_COUNT; c++)
        if (m[c].v > 0 && c != MDL_CAT_FILE) {
            put(w, "%s%s: %" PRId64 "KiB", first ? "" : ", ", cats[c], kib_of(m[c].v * MIB));
            first = 0;
        }
    put(w, "}");
    from(w, line, what);
}

static int write_llama(const llama_log *l, const scn_import_opts *o, out *w)
{
    char c[400];
    int mapped = l->model[MDL_CAT_FILE].v > 0;
    int gpu = l->model[MDL_CAT_GPU].v > 0 || l->compute[MDL_CAT_GPU].v > 0;
    put(w, "# oomsim import llama-cpp: a candidate from llama.cpp's load log (%s).\n"
           "# Buffers by backend: a _Mapped buffer is the mmapped GGUF file (file pages),\n"
           "# CPU and Host buffers native memory, any other backend's gpu. llama.cpp\n"
           "# prints MiB. Not in the log, to fill in: the digest, the runtime version,\n"
           "# the delegate's failure rates; the KV cache is taken at the context size the\n"
           "# log ran with.\n", w->name);
    if (l->from_table)
        put(w, "# The sizes come from the memory breakdown table (model, context,\n"
               "# compute per device); the table does not tell mapped from copied weights.\n");
    put(w, "id: %s\nabout: \"measured from a llama.cpp load log\"\ndigest: \"0\"\n"
           "runtime: llama.cpp\n", o->id != NULL ? o->id : "imported");
    if (gpu)
        put(w, "delegate: gpu  # an accelerator backend holds buffers\nfallback: cpu  # "
               "assumed\n");
    put(w, "parts:\n  %s:\n", o->part != NULL ? o->part : "model");
    double file = mapped ? l->model[MDL_CAT_FILE].v * MIB : l->file_gib.v * 1073741824.0;
    int host_copy = !mapped && !l->file_gib.line && l->model[MDL_CAT_NATIVE].v > 0;
    if (host_copy)
        file = l->model[MDL_CAT_NATIVE].v * MIB;
    put(w, "    file: %" PRId64 "KiB", kib_of(file));
    if (mapped)
        from(w, l->model[MDL_CAT_FILE].line, "the mapped model buffer (the GGUF pages the "
             "CPU layers read)");
    else if (l->file_gib.line)
        from(w, l->file_gib.line, "the GGUF file size");
    else if (host_copy)
        from(w, l->model[MDL_CAT_NATIVE].line, "the host's model buffer (assumed copied: the "
             "table does not tell mapped from copied weights)");
    else
        from(w, 0, "not in the log: fill in the GGUF file size");
    put(w, "    load:\n      mode: %s", mapped ? "mmap" : "copy");
    from(w, mapped ? l->model[MDL_CAT_FILE].line : 0,
         mapped ? "the weights are mapped (use_mmap)" : "no mapped buffer: the weights are "
                                                        "read into memory");
    put(w, "      time: %.0fus", l->load_ms.v * 1000.0);
    from(w, l->load_ms.line, l->load_ms.line ? "load time" : "not in the log");
    measure resident[MDL_CAT_COUNT];
    memset(resident, 0, sizeof resident);
    resident[MDL_CAT_GPU] = l->model[MDL_CAT_GPU];
    if (!mapped)
        resident[MDL_CAT_NATIVE] = (measure){0, 0}; /* copied weights: the load's own */
    else
        resident[MDL_CAT_NATIVE] = l->model[MDL_CAT_NATIVE]; /* repacked weights */
    put(w, "    prepare:\n      time: 0us  # not timed apart: inside the load time\n");
    amounts_row(w, "      resident: ", resident, "the model buffers the backends hold "
                "(offloaded or repacked weights)");
    if (gpu)
        put(w, "    delegate_prepare:\n      time: 0us  # not timed apart: inside the load "
               "time; its failure rates are not in the log\n");
    put(w, "    inference:\n      time: ");
    double req_us = (l->prompt_ms.v + l->eval_ms.v) * 1000.0;
    snprintf(c, sizeof c, "one request: prompt eval %.0f ms + eval %.0f ms (%.0f tokens) "
             "as the log ran it", l->prompt_ms.v, l->eval_ms.v, l->eval_runs.v);
    time_dist(w, req_us, 0, 0, 0, l->eval_ms.line ? l->eval_ms.line : l->prompt_ms.line,
              req_us > 0 ? c : "not in the log");
    amounts_row(w, "      working_set: ", l->compute, "the compute buffers");
    amounts_row(w, "    session: ", l->kv, "the KV cache (a session's state)");
    return SIM_OK;
}


/* ------------------------------------------------------------ onnxruntime */

typedef struct ort_span {
    double ts, dur, out, act, param;
} ort_span;

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
static double size_arg(json_t *args, const char *key)
{
    json_t *v = json_object_get(args, key);
    if (json_is_string(v)) {
        char *end;
        double d = strtod(json_string_value(v), &end);
        return *end == '\0' && isfinite(d) && d >= 0 ? d : 0;
    }
    return json_is_number(v) && json_number_value(v) >= 0 ? json_number_value(v) : 0;
}

typedef struct ort_profile {
    double load_us, init_us;
    size_t load_ev, init_ev, run_ev, param_ev; /* the events they came from, + 1 (0: none) */
    ort_span *runs, *nodes;
    size_t nruns, nnodes;
    char provider[64];
} ort_profile;

static void ort_free(ort_profile *p)
{
    free(p->runs);
    free(p->nodes);
}

static int read_ort(const char *text, size_t len, const char *name, ort_profile *p,
                    sim_error *err)
{
    memset(p, 0, sizeof *p);
    json_error_t je;
    json_t *doc = json_loadb(text, len, 0, &je);
    if (doc == NULL)
        return fail_at(err, name, (unsigned)(je.line > 0 ? je.line : 1),
                       "not an ONNX Runtime profile: not JSON (column %d)", je.column);
    if (!json_is_array(doc)) {
        json_decref(doc);
        return fail_at(err, name, 1, "not an ONNX Runtime profile: expected a JSON array of "
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
    for (size_t i = 0; i < n; i++) {
        json_t *e = json_array_get(doc, i);
        const char *nm = json_string_value(json_object_get(e, "name"));
        const char *cat = json_string_value(json_object_get(e, "cat"));
        json_t *dur = json_object_get(e, "dur"), *ts = json_object_get(e, "ts");
        if (nm == NULL || cat == NULL || !json_is_number(dur) || !json_is_number(ts))
            continue;
        double d = json_number_value(dur), t = json_number_value(ts);
        if (!isfinite(d) || !isfinite(t) || d < 0)
            continue;
        if (strcmp(cat, "Session") == 0) {
            if (strncmp(nm, "model_loading", 13) == 0)
                p->load_us += d, found = 1, p->load_ev = p->load_ev ? p->load_ev : i + 1;
            else if (strcmp(nm, "session_initialization") == 0)
                p->init_us += d, found = 1, p->init_ev = p->init_ev ? p->init_ev : i + 1;
            else if (strcmp(nm, "model_run") == 0)
                p->runs[p->nruns++] = (ort_span){t, d, 0, 0, 0}, found = 1,
                p->run_ev = p->run_ev ? p->run_ev : i + 1;
        } else if (strcmp(cat, "Node") == 0) {
            size_t nl = strlen(nm);
            if (nl < 12 || strcmp(nm + nl - 12, "_kernel_time") != 0)
                continue;
            json_t *args = json_object_get(e, "args");
            p->nodes[p->nnodes++] = (ort_span){t, d, size_arg(args, "output_size"),
                                               size_arg(args, "activation_size"),
                                               size_arg(args, "parameter_size")};
            const char *prov = json_string_value(json_object_get(args, "provider"));
            if (prov != NULL && strcmp(prov, "CPUExecutionProvider") != 0 && !p->provider[0])
                snprintf(p->provider, sizeof p->provider, "%s", prov);
        }
    }
    json_decref(doc);
    if (!found) {
        ort_free(p);
        return fail_at(err, name, 1, "not an ONNX Runtime profile: no model_loading, "
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
        return fail_at(err, name, 1, "an ONNX Runtime profile whose sizes or durations are "
                       "beyond a phone's (more than 256 GiB, or a week)");
    }
    qsort(p->runs, p->nruns, sizeof *p->runs, span_cmp);
    qsort(p->nodes, p->nnodes, sizeof *p->nodes, span_cmp);
    /* each run's nodes: those that start inside it */
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

static int write_ort(ort_profile *p, const scn_import_opts *o, out *w)
{
    char c[400];
    put(w, "# oomsim import onnxruntime: a candidate from an ONNX Runtime profile (%s):\n"
           "# %zu runs, %zu node kernels. Durations in us as ORT writes them; sizes in\n"
           "# bytes. Not in the profile, to fill in: the digest, the runtime version, the\n"
           "# model file's load mode, the delegate's failure rates.\n",
        w->name, p->nruns, p->nnodes);
    put(w, "id: %s\nabout: \"measured from an ONNX Runtime profile\"\ndigest: \"0\"\n"
           "runtime: onnxruntime\n", o->id != NULL ? o->id : "imported");
    static const struct {
        const char *ep, *kind;
    } eps[] = {{"NnapiExecutionProvider", "nnapi"},     {"CoreMLExecutionProvider", "coreml"},
               {"QNNExecutionProvider", "qnn"},         {"CUDAExecutionProvider", "gpu"},
               {"XnnpackExecutionProvider", "xnnpack"}, {"WebGpuExecutionProvider", "gpu"}};
    const char *kind = p->provider[0] ? "npu" : NULL;
    for (size_t k = 0; k < sizeof eps / sizeof *eps && p->provider[0]; k++)
        if (strcmp(p->provider, eps[k].ep) == 0)
            kind = eps[k].kind;
    if (kind != NULL) {
        snprintf(c, sizeof c, "the nodes ran on %s", p->provider);
        put(w, "delegate: %s", kind);
        from(w, 0, c);
        put(w, "fallback: cpu  # assumed\n");
    }
    /* the weights: the parameters of one run's nodes */
    double params = p->nruns ? p->runs[0].param : 0;
    put(w, "parts:\n  %s:\n", o->part != NULL ? o->part : "model");
    put(w, "    file: %" PRId64 "KiB", kib_of(params));
    from(w, 0, params > 0 ? "the parameters (initializers) of the first run's nodes"
                          : "not in the profile (no parameter_size): fill in the model's size");
    put(w, "    load:\n      mode: copy  # assumed: ORT reads the model into memory\n");
    put(w, "      time: %.0fus", p->load_us);
    from_event(w, p->load_ev, p->load_ev ? "model_loading: its dur" : "not in the profile");
    put(w, "    prepare:\n      time: %.0fus", p->init_us);
    from_event(w, p->init_ev, p->init_ev ? "session_initialization: its dur (graph "
               "optimisation, kernels, memory plan)" : "not in the profile");
    if (kind != NULL)
        put(w, "    delegate_prepare:\n      time: 0us  # inside session_initialization; its "
               "failure rates are not in the profile\n");
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
        return SIM_ENOMEM;
    if (p->nruns >= 5) {
        qsort(d, p->nruns, sizeof *d, dbl_cmp);
        double med = d[p->nruns / 2], p95 = d[(size_t)ceil(0.95 * (double)p->nruns) - 1];
        snprintf(c, sizeof c, "event %zu on: model_run over %zu runs", p->run_ev - 1, p->nruns);
        time_dist(w, med, 0, med, p95, 0, c); /* all alike: the median as a plain value */
    } else {
        double mean = 0;
        for (size_t r = 0; r < p->nruns; r++)
            mean += d[r] / (double)p->nruns;
        snprintf(c, sizeof c, "event %zu on: model_run, the mean of %zu run%s",
                 p->run_ev ? p->run_ev - 1 : 0, p->nruns, p->nruns == 1 ? "" : "s");
        time_dist(w, mean, 0, 0, 0, 0, p->nruns ? c : "no model_run in the profile");
    }
    free(d);
    if (ws > 0) {
        put(w, "      working_set: {native: %" PRId64 "KiB}", kib_of(ws));
        snprintf(c, sizeof c, "the outputs of one run's nodes summed, an upper bound (no "
                 "buffer reuse assumed); the largest node's input and output, a lower bound, "
                 "is %.0f KiB", lower / 1024.0);
        from(w, 0, c);
    }
    return SIM_OK;
}


/* ----------------------------------------------------------- field blocks */

/* A device name from the fleet's label (a model "google/coral", an iOS
 * deviceType "iPhone13,2"): lowercase letters and digits, other runs as
 * one '-' (the loader's names). */
static void device_name(char *dst, size_t n, const char *label)
{
    size_t k = 0;
    int dash = 0;
    for (const char *p = label; *p != '\0' && k + 2 < n; p++) {
        unsigned char c = (unsigned char)*p;
        if (isalnum(c) && c < 0x80) {
            if (dash && k > 0)
                dst[k++] = '-';
            dst[k++] = (char)tolower(c);
            dash = 0;
        } else {
            dash = 1;
        }
    }
    if (k == 0)
        dst[k++] = 'x';
    dst[k] = '\0';
}

/* A JSON input as a list of objects: an array of them, or one object (or
 * the array under `key`, as an API response holds its rows). */
static json_t *load_list(const scn_import_input *in, const char *name, const char *key,
                         const char *what, sim_error *err)
{
    json_error_t je;
    json_t *doc = json_loadb(in->text, in->len, 0, &je);
    if (doc == NULL) {
        fail_at(err, name, (unsigned)(je.line > 0 ? je.line : 1), "not %s: not JSON (column %d)",
                what, je.column);
        return NULL;
    }
    json_t *list = NULL;
    if (json_is_array(doc)) {
        list = json_incref(doc);
    } else if (json_is_object(doc) && key != NULL && json_is_array(json_object_get(doc, key))) {
        list = json_incref(json_object_get(doc, key));
    } else if (json_is_object(doc)) {
        list = json_array();
        if (list != NULL && json_array_append(list, doc) != 0) {
            json_decref(list);
            list = NULL;
        }
        if (list == NULL)
            sim_error_set(err, SIM_ENOMEM, "out of memory");
    } else {
        fail_at(err, name, 1, "not %s: expected a JSON object or array", what);
    }
    json_decref(doc);
    return list;
}

/* A number that may be given as a JSON number or a string of one (the
 * Reporting API writes decimals and int64s as strings). */
static int json_num(json_t *v, double *got)
{
    if (json_is_number(v)) {
        *got = json_number_value(v);
        return isfinite(*got);
    }
    if (!json_is_string(v))
        return 0;
    char *end;
    double d = strtod(json_string_value(v), &end);
    if (*end != '\0' || end == json_string_value(v) || !isfinite(d))
        return 0;
    *got = d;
    return 1;
}

/* A measurement as MetricKit writes it, localised: "1,106,818 kB",
 * "1.106.818 kB", "1 106 818 Ko" (a no-break space), "1,5 MB", "812 КБ".
 * The grouping characters are ',', '.', '\'', spaces and the no-break,
 * narrow no-break and thin spaces; a ',' or '.' is the decimal separator
 * when it is the last separator and either both kinds occur or it occurs
 * once and is not followed by exactly three digits.  The unit's first
 * letter, in Latin or Cyrillic, gives its scale: k, M, G (10^3, 10^6,
 * 10^9 bytes: Foundation's information units are decimal), B, b or o
 * (octets) bytes.  1 and *bytes, or 0. */
static int parse_measure(const char *s, double *bytes)
{
    char digits[80];
    size_t nd = 0;
    long dec_at = -1; /* digits before the decimal separator, -1: none */
    int commas = 0, dots = 0;
    char last_sep = 0;
    size_t after_last = 0, last_sep_digits = 0;
    const unsigned char *p = (const unsigned char *)s;
    while (*p == ' ')
        p++;
    for (;;) {
        if (isdigit(*p)) {
            if (nd + 1 >= sizeof digits)
                return 0;
            digits[nd++] = (char)*p++;
            after_last++;
        } else {
            /* a separator between digits: one byte, or a no-break (U+00A0),
             * narrow no-break (U+202F) or thin (U+2009) space */
            size_t w = (*p == ',' || *p == '.' || *p == '\'' || *p == ' ') ? 1
                       : (p[0] == 0xc2 && p[1] == 0xa0)                         ? 2
                       : (p[0] == 0xe2 && p[1] == 0x80 && (p[2] == 0xaf || p[2] == 0x89))
                           ? 3
                           : 0;
            if (w == 0 || !isdigit(p[w]))
                break; /* the number ends: a space before the unit */
            if (*p == ',')
                commas++;
            if (*p == '.')
                dots++;
            last_sep = w == 1 ? (char)*p : ' ';
            last_sep_digits = nd;
            after_last = 0;
            p += w;
        }
        if (nd == 0 && last_sep != 0)
            return 0; /* a separator before any digit */
    }
    if (nd == 0)
        return 0;
    if ((last_sep == ',' || last_sep == '.') && after_last > 0 &&
        ((commas > 0 && dots > 0) ||
         ((last_sep == ',' ? commas : dots) == 1 && after_last != 3)))
        dec_at = (long)last_sep_digits;
    digits[nd] = '\0';
    double v = 0;
    for (size_t i = 0; i < nd; i++)
        v = v * 10 + (digits[i] - '0');
    if (dec_at >= 0)
        v /= pow(10, (double)(nd - (size_t)dec_at));
    while (*p == ' ' || (p[0] == 0xc2 && p[1] == 0xa0))
        p += *p == ' ' ? 1 : 2;
    double scale;
    if (*p == 'k' || *p == 'K' || (p[0] == 0xd0 && p[1] == 0x9a) || (p[0] == 0xd0 && p[1] == 0xba))
        scale = 1e3; /* k, K, К, к */
    else if (*p == 'M' || (p[0] == 0xd0 && p[1] == 0x9c))
        scale = 1e6; /* M, М */
    else if (*p == 'G' || (p[0] == 0xd0 && p[1] == 0x93))
        scale = 1e9; /* G, Г */
    else if (*p == 'B' || *p == 'b' || *p == 'o' || (p[0] == 0xd0 && p[1] == 0x91))
        scale = 1; /* bytes, octets, Б */
    else
        return 0;
    *bytes = v * scale;
    return isfinite(*bytes);
}

/* One group of the fleet (a device type, a RAM bucket, a model). */
typedef struct fleet_group {
    char label[64];         /* as the fleet names it */
    int64_t ram_mb;         /* a RAM bucket, MB; 0: by name */
    double hits, total;     /* MetricKit: payloads with an exit, payloads;
                               vitals: sum of rate x users, sum of users */
    size_t first, count;    /* the first record (payload or row) and how many */
    double peak, suspended; /* MetricKit: the largest peak and suspended memory, bytes */
    /* MetricKit: every exit count, foreground [0] and background [1], summed by kind
     * (the key without "cumulative" and "ExitCount") */
    char kinds[2][16][48];
    double counts[2][16];
    unsigned nkinds[2];
} fleet_group;

#define GROUPS_MAX 256

static fleet_group *group_of(fleet_group *g, unsigned *n, const char *label, int64_t ram_mb,
                             size_t rec)
{
    for (unsigned k = 0; k < *n; k++)
        if (g[k].ram_mb == ram_mb && strcmp(g[k].label, label) == 0)
            return &g[k];
    if (*n == GROUPS_MAX)
        return NULL;
    fleet_group *x = &g[(*n)++];
    memset(x, 0, sizeof *x);
    clean_copy(x->label, sizeof x->label, label, strlen(label));
    x->ram_mb = ram_mb;
    x->first = rec;
    return x;
}

static void field_header(out *w, const char *what)
{
    put(w, "%s", what);
    put(w, "field:\n  sessions_per_day: 1  # assumed: how many sessions a user has a day "
           "(fill in)\n  devices:\n");
}

static int read_metrickit(const scn_import_input *in, unsigned n, fleet_group *g, unsigned *ng,
                          size_t *payloads, sim_error *err)
{
    *ng = 0;
    *payloads = 0;
    for (unsigned f = 0; f < n; f++) {
        char name[128];
        clean_copy(name, sizeof name, in[f].name, strlen(in[f].name));
        json_t *list = load_list(&in[f], name, "payloads", "a MetricKit payload", err);
        if (list == NULL)
            return err->code;
        size_t i;
        json_t *p;
        json_array_foreach(list, i, p)
        {
            json_t *exits = json_object_get(p, "applicationExitMetrics");
            json_t *mem = json_object_get(p, "memoryMetrics");
            if (!json_is_object(exits) && !json_is_object(mem)) {
                json_decref(list);
                return fail_at(err, name, 1, "payload %zu: not a MetricKit payload: no "
                               "applicationExitMetrics or memoryMetrics", i);
            }
            const char *type = json_string_value(
                json_object_get(json_object_get(p, "metaData"), "deviceType"));
            fleet_group *x = group_of(g, ng, type != NULL ? type : "unknown", 0, *payloads);
            if (x == NULL) {
                json_decref(list);
                return fail_at(err, name, 1, "more than %d device types", GROUPS_MAX);
            }
            x->count++;
            x->total += 1;
            /* zero counts are absent, not written as 0 */
            double c = 0;
            json_t *fg = json_object_get(json_object_get(exits, "foregroundExitData"),
                                         "cumulativeMemoryResourceLimitExitCount");
            if (fg != NULL && (!json_num(fg, &c) || c < 0)) {
                json_decref(list);
                return fail_at(err, name, 1, "payload %zu: a foreground memory-limit exit count "
                               "that is not a count", i);
            }
            x->hits += c > 0;
            static const char *const sides[2] = {"foregroundExitData", "backgroundExitData"};
            for (int side = 0; side < 2; side++) {
                const char *key;
                json_t *v;
                json_object_foreach(json_object_get(exits, sides[side]), key, v)
                {
                    double cnt;
                    size_t kl = strlen(key);
                    if (!json_num(v, &cnt) || cnt < 0 || cnt > 1e12 || kl < 20 ||
                        strncmp(key, "cumulative", 10) != 0 ||
                        strcmp(key + kl - 9, "ExitCount") != 0)
                        continue;
                    char kind[48];
                    clean_copy(kind, sizeof kind, key + 10, kl - 19);
                    unsigned j = 0;
                    while (j < x->nkinds[side] && strcmp(x->kinds[side][j], kind) != 0)
                        j++;
                    if (j == x->nkinds[side] && j < 16)
                        snprintf(x->kinds[side][x->nkinds[side]++], 48, "%s", kind);
                    if (j < 16)
                        x->counts[side][j] += cnt;
                }
            }
            static const char *const mkeys[2] = {"peakMemoryUsage", "averageSuspendedMemory"};
            for (int k = 0; k < 2; k++) {
                json_t *m = json_object_get(mem, mkeys[k]);
                if (json_is_object(m))
                    m = json_object_get(m, "averageValue");
                double b;
                if (m == NULL)
                    continue;
                if (!(json_is_string(m) && parse_measure(json_string_value(m), &b)) &&
                    !(json_is_number(m) && (b = json_number_value(m) * 1e3, isfinite(b)))) {
                    json_decref(list);
                    return fail_at(err, name, 1, "payload %zu: %s: a measurement that cannot be "
                                   "read", i, mkeys[k]);
                }
                if (b > SIZE_BOUND) {
                    json_decref(list);
                    return fail_at(err, name, 1, "payload %zu: %s: more than 256 GiB", i,
                                   mkeys[k]);
                }
                double *slot = k == 0 ? &x->peak : &x->suspended;
                *slot = b > *slot ? b : *slot;
            }
            (*payloads)++;
        }
        json_decref(list);
    }
    if (*payloads == 0)
        return fail_at(err, in[0].name, 1, "no MetricKit payload in the input");
    return SIM_OK;
}

static int write_metrickit(const fleet_group *g, unsigned ng, size_t payloads, out *w)
{
    char head[600];
    snprintf(head, sizeof head,
             "# oomsim import metrickit: %zu MetricKit payloads (%s...), each one device's\n"
             "# day: per device type, the share of payloads with a foreground exit by the\n"
             "# memory resource limit (a count MetricKit leaves out when it is 0). Rename\n"
             "# each device to the plan's device of that class.\n",
             payloads, w->name);
    field_header(w, head);
    for (unsigned k = 0; k < ng; k++) {
        char dev[MDL_NAME_MAX], c[300];
        device_name(dev, sizeof dev, g[k].label);
        put(w, "    - device: %s", dev);
        snprintf(c, sizeof c, "metaData.deviceType \"%s\" (rename to the plan's device)",
                 g[k].label);
        from(w, 0, c);
        put(w, "      memory_exit_rate: %.6g%%", 100.0 * g[k].hits / g[k].total);
        snprintf(c, sizeof c, "%.0f of %.0f payload%s (device-days) had one", g[k].hits,
                 g[k].total, g[k].total == 1 ? "" : "s");
        from(w, 0, c);
        put(w, "      users: %.0f  # the payloads: device-days\n", g[k].total);
        put(w, "      source: \"MetricKit, %.0f payload%s\"\n", g[k].total,
            g[k].total == 1 ? "" : "s");
        if (g[k].peak > 0)
            put(w, "      # peak memory up to %.1f MiB, suspended memory up to %.1f MiB (MetricKit's "
                   "units are decimal: kB = 1000 bytes)\n",
                g[k].peak / MIB, g[k].suspended / MIB);
        static const char *const side_names[2] = {"foreground", "background"};
        for (int side = 0; side < 2; side++) {
            if (g[k].nkinds[side] == 0)
                continue;
            put(w, "      # %s exits over the payloads:", side_names[side]);
            for (unsigned j = 0; j < g[k].nkinds[side]; j++)
                put(w, "%s %s %.0f", j ? "," : "", g[k].kinds[side][j], g[k].counts[side][j]);
            put(w, "\n");
        }
    }
    return SIM_OK;
}

static int read_vitals(const scn_import_input *in, unsigned n, fleet_group *g, unsigned *ng,
                       size_t *rows, sim_error *err)
{
    *ng = 0;
    *rows = 0;
    for (unsigned f = 0; f < n; f++) {
        char name[128];
        clean_copy(name, sizeof name, in[f].name, strlen(in[f].name));
        json_t *list = load_list(&in[f], name, "rows", "a Play Developer Reporting response",
                                 err);
        if (list == NULL)
            return err->code;
        size_t i;
        json_t *row;
        json_array_foreach(list, i, row)
        {
            double rate = -1, users = -1, ram = 0;
            const char *model = NULL;
            size_t k;
            json_t *x;
            json_array_foreach(json_object_get(row, "metrics"), k, x)
            {
                const char *m = json_string_value(json_object_get(x, "metric"));
                json_t *v = json_object_get(json_object_get(x, "decimalValue"), "value");
                if (m == NULL)
                    continue;
                if (strcmp(m, "userPerceivedLmkRate") == 0 && !json_num(v, &rate))
                    rate = -2;
                else if (strcmp(m, "distinctUsers") == 0 && !json_num(v, &users))
                    users = -2;
            }
            json_array_foreach(json_object_get(row, "dimensions"), k, x)
            {
                const char *d = json_string_value(json_object_get(x, "dimension"));
                if (d != NULL && strcmp(d, "deviceRamBucket") == 0 &&
                    !json_num(json_object_get(x, "int64Value"), &ram))
                    ram = -1;
                else if (d != NULL && strcmp(d, "deviceModel") == 0)
                    model = json_string_value(json_object_get(x, "stringValue"));
            }
            if (rate == -1 && users == -1) {
                json_decref(list);
                return fail_at(err, name, 1, "row %zu: not an LMK-rate row: no "
                               "userPerceivedLmkRate or distinctUsers metric", i);
            }
            /* the RAM is written as MiB, which the loader takes up to 1 TiB */
            if (rate < 0 || rate > 1 || users < 1 || users > 1e12 || ram < 0 ||
                ram > 1048576) {
                json_decref(list);
                return fail_at(err, name, 1, "row %zu: userPerceivedLmkRate must be a fraction "
                               "from 0 to 1, distinctUsers a count from 1, deviceRamBucket "
                               "MB up to 1048576 (1 TiB)", i);
            }
            if (ram == 0 && model == NULL) {
                json_decref(list);
                return fail_at(err, name, 1, "row %zu: neither a deviceRamBucket nor a "
                               "deviceModel dimension: query the metric set by one of them", i);
            }
            fleet_group *gr = group_of(g, ng, model != NULL ? model : "", (int64_t)ram, *rows);
            if (gr == NULL) {
                json_decref(list);
                return fail_at(err, name, 1, "more than %d RAM buckets or models", GROUPS_MAX);
            }
            gr->count++;
            gr->hits += rate * users;
            gr->total += users;
            (*rows)++;
        }
        json_decref(list);
    }
    if (*rows == 0)
        return fail_at(err, in[0].name, 1, "no row in the input");
    return SIM_OK;
}

static int write_vitals(const fleet_group *g, unsigned ng, size_t rows, out *w)
{
    char head[600];
    snprintf(head, sizeof head,
             "# oomsim import play-vitals: %zu rows of the Play Developer Reporting API's LMK\n"
             "# rate metric set (%s...): per RAM bucket or model, userPerceivedLmkRate (a\n"
             "# fraction) weighted by distinctUsers over the rows (days), and the users\n"
             "# summed (device-days). Rename each model to the plan's device of that class.\n",
             rows, w->name);
    field_header(w, head);
    for (unsigned k = 0; k < ng; k++) {
        char c[300];
        if (g[k].ram_mb > 0) {
            put(w, "    - ram: %" PRId64 "MiB", g[k].ram_mb);
            from(w, 0, "deviceRamBucket (MB)");
        } else {
            char dev[MDL_NAME_MAX];
            device_name(dev, sizeof dev, g[k].label);
            put(w, "    - device: %s", dev);
            snprintf(c, sizeof c, "deviceModel \"%s\" (rename to the plan's device)", g[k].label);
            from(w, 0, c);
        }
        put(w, "      lmk_rate: %.6g%%", 100.0 * g[k].hits / g[k].total);
        snprintf(c, sizeof c, "userPerceivedLmkRate, users-weighted over %zu row%s from row %zu",
                 g[k].count, g[k].count == 1 ? "" : "s", g[k].first);
        from(w, 0, c);
        put(w, "      users: %.0f  # distinctUsers summed over the rows (device-days)\n",
            g[k].total);
        put(w, "      source: \"Play vitals, %zu row%s\"\n", g[k].count, g[k].count == 1 ? "" : "s");
    }
    return SIM_OK;
}

/* ------------------------------------------------------------------ driver */

const char *scn_import_kind_name(scn_import_kind k)
{
    static const char *const names[SCN_IMPORT_COUNT] = {"benchmark-model", "meminfo",
                                                         "llama-cpp", "onnxruntime",
                                                         "metrickit", "play-vitals"};
    return k < SCN_IMPORT_COUNT ? names[k] : "?";
}

int scn_import(scn_import_kind kind, const scn_import_input *in, unsigned n,
               const scn_import_opts *o, char **yaml, sim_error *err)
{
    *yaml = NULL;
    if (n == 0)
        return sim_error_set(err, SIM_EINVAL, "import: an input is needed");
    char name[128];
    clean_copy(name, sizeof name, in[0].name, strlen(in[0].name));
    out w = {SIM_TEXT_INIT, name};
    if (n != 1 && kind != SCN_IMPORT_METRICKIT && kind != SCN_IMPORT_PLAY_VITALS)
        return sim_error_set(err, SIM_EINVAL, "import %s: one input", scn_import_kind_name(kind));
    int rc = SIM_OK;
    switch (kind) {
    case SCN_IMPORT_BENCHMARK_MODEL: {
        tflite_log l;
        rc = read_tflite(in[0].text, in[0].len, name, &l, err);
        if (rc == SIM_OK)
            rc = write_tflite(&l, o, &w);
        break;
    }
    case SCN_IMPORT_MEMINFO: {
        meminfo mi;
        rc = read_meminfo(in[0].text, in[0].len, name, &mi, err);
        if (rc == SIM_OK)
            rc = write_meminfo(&mi, o, &w);
        break;
    }
    case SCN_IMPORT_LLAMA_CPP: {
        llama_log l;
        rc = read_llama(in[0].text, in[0].len, name, &l, err);
        if (rc == SIM_OK)
            rc = write_llama(&l, o, &w);
        break;
    }
    case SCN_IMPORT_ONNXRUNTIME: {
        ort_profile pr;
        rc = read_ort(in[0].text, in[0].len, name, &pr, err);
        if (rc == SIM_OK) {
            rc = write_ort(&pr, o, &w);
            if (rc == SIM_ENOMEM)
                sim_error_set(err, rc, "out of memory");
            ort_free(&pr);
        }
        break;
    }
    case SCN_IMPORT_METRICKIT:
    case SCN_IMPORT_PLAY_VITALS: {
        fleet_group *g = calloc(GROUPS_MAX, sizeof *g);
        if (g == NULL)
            return sim_error_set(err, SIM_ENOMEM, "out of memory");
        unsigned ng;
        size_t recs;
        rc = kind == SCN_IMPORT_METRICKIT ? read_metrickit(in, n, g, &ng, &recs, err)
                                          : read_vitals(in, n, g, &ng, &recs, err);
        if (rc == SIM_OK)
            rc = kind == SCN_IMPORT_METRICKIT ? write_metrickit(g, ng, recs, &w)
                                              : write_vitals(g, ng, recs, &w);
        free(g);
        break;
    }
    default:
        rc = sim_error_set(err, SIM_EINVAL, "import: no such kind");
        break;
    }
    char *text = sim_text_done(&w.t);
    if (rc != SIM_OK) {
        free(text);
        return rc;
    }
    if (text == NULL)
        return sim_error_set(err, SIM_ENOMEM, "import: out of memory");
    *yaml = text;
    return SIM_OK;
}
