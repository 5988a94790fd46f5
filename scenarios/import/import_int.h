/* import_int.h - what the importers of scenarios/import/ share: the line
 * reader (lines.c), measured values with the line they came from, the YAML
 * being written and its helpers (yamlout.c), and the table each format
 * fills in (import.c).
 *
 * Every importer first reads its input into a small struct of measured
 * values, each with the line it came from, then writes the YAML from that
 * struct; the text formats are matched by their fixed phrases anywhere in
 * a line, so prefixes (logcat's date, pid and tag, "INFO: ") do not
 * matter.  An input that holds none of a format's phrases is refused,
 * naming its first line. */
#ifndef OOMSIM_IMPORT_INT_H
#define OOMSIM_IMPORT_INT_H

#include "scenarios/scenarios.h"

#include <stddef.h>
#include <stdint.h>

#define MIB 1048576.0

typedef struct line_iter {
    const char *p, *end;
    unsigned no;            /* the current line's number, from 1 */
    const char *s;          /* the current line (not NUL-terminated) */
    size_t n;
} line_iter;

/* A measured value and the line it came from (0: not measured). */
typedef struct measure {
    double v;
    unsigned line;
} measure;

/* Lines, events or keys an importer read but did not use, by kind (the
 * driver's, handed to read and written by write with scn__tally_put):
 * every output says what it dropped. */
#define SCN_TALLY_KINDS 32
#define SCN_TALLY_KIND 64
struct scn_tally {
    char kind[SCN_TALLY_KINDS][SCN_TALLY_KIND];
    unsigned count[SCN_TALLY_KINDS];
    unsigned kinds, other; /* other: of kinds past the table */
};

struct scn_import_out {
    sim_text t;
    const char *name; /* the input's name in comments */
    scn_tally ignored;
};
typedef struct scn_import_out out;

/* Appends to the YAML (sim_text_printf: no length limit). */
#define put(o, ...) sim_text_printf(&(o)->t, __VA_ARGS__)

/* What an input may say of one phone: a size up to 256 GiB, a time up to a
 * week (so that the sums an importer makes stay within the loader's 1 TiB
 * and 30 days); beyond is a corrupt or misread line, refused. */
#define SIZE_BOUND (256.0 * 1073741824.0)
#define TIME_BOUND_US (7.0 * 86400e6)

/* Reports "NAME:LINE: what" as SIM_EINPUT. */
int scn__fail_at(sim_error *err, const char *name, unsigned line, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

/* lines.c */
void scn__lines_of(line_iter *it, const char *text, size_t len);
int scn__next_line(line_iter *it);
const char *scn__find(const line_iter *it, const char *what);
int scn__number_at(const char **s, const char *end, double *v);
int scn__number_after(const line_iter *it, const char *key, double *v, int *bad);
void scn__set(measure *m, double v, unsigned line);
void scn__tally(scn_tally *t, const char *kind, size_t n);
void scn__tally_line(scn_tally *t, const line_iter *it);
/* "# ignored (read, not used): 14 print_info lines, 3 ..." of o->ignored
 * (nothing when none); unit names what was counted: "line", "event", "key" */
void scn__tally_put(out *o, const char *unit);

/* yamlout.c */
/* An empty output naming `name` in its comments, nothing ignored yet. */
void scn__out_init(out *o, const char *name);
void scn__from(out *o, unsigned line, const char *what);
void scn__clean_copy(char *dst, size_t n, const char *src, size_t len);
int64_t scn__kib_of(double bytes);
int scn__bounded(sim_error *err, const char *name, const measure *m, double scale,
                   int is_time, const char *what);
void scn__values(out *o, const double *v, size_t n, const char *unit, const char *close,
                 unsigned line, const char *what);
void scn__time_dist(out *o, double mean_us, double sd_us, double median_us, double p95_us,
                      unsigned line, const char *what);

/* The importers, one a file (the table of import.c). */
extern const scn_importer scn__import_benchmark_model, scn__import_meminfo,
    scn__import_llama_cpp, scn__import_onnxruntime, scn__import_metrickit,
    scn__import_play_vitals;

#endif /* OOMSIM_IMPORT_INT_H */
