/* perfetto.c - the candidate skeleton `oomsim import perfetto --candidate`
 * writes (docs/perfetto.md): each stage's median time and memory over the
 * occurrences a Perfetto trace recorded (traces/perfetto/ reads the trace
 * into a trc_pf_summary), the rest left to fill in and said so. */
#include "scenarios/scenarios.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

/* The median of field `what` over a stage's occurrences (0: time, 1:
 * alloc, 2: keep; category c). */
static int64_t median_of(const trc_pf_stage *st, int what, int c, int64_t *scratch)
{
    for (size_t i = 0; i < st->n; i++)
        scratch[i] = what == 0   ? st->occ[i].duration_us
                     : what == 1 ? st->occ[i].alloc[c]
                                 : st->occ[i].keep[c];
    qsort(scratch, st->n, sizeof *scratch, cmp_i64);
    return scratch[st->n / 2];
}

static void amounts(FILE *f, const char *key, int64_t native, int64_t file_)
{
    if (native <= 0 && file_ <= 0)
        return;
    fprintf(f, ", %s: {", key);
    if (native > 0)
        fprintf(f, "native: %" PRId64 "KiB", (native + 1023) / 1024);
    if (file_ > 0)
        fprintf(f, "%sfile: %" PRId64 "KiB", native > 0 ? ", " : "", (file_ + 1023) / 1024);
    fputs("}", f);
}

/* The skeleton's opening comment: what was measured, what was not, and
 * the app's own memory before its first stage when the trace shows it. */
static void comment_head(FILE *f, const trc_pf_summary *sum, const char *about)
{
    fprintf(f, "# Candidate skeleton written by `oomsim import perfetto`, measured on one trace:\n"
               "# %s.\n"
               "# Every time and amount below is MEASURED on that trace: the median of the\n"
               "# stage's occurrences (their count is in each part's comment); a stage never\n"
               "# recorded is 0 and says so. Not measured, to fill in before a decision rests\n"
               "# on it: the runtime and digest, the delegate's kind and its failure and crash\n"
               "# rates, the Java share (Java is counted as native without a heap profile), GPU\n"
               "# memory, the load mode (mmap is assumed) and the file size when the load did\n"
               "# not touch every page.\n",
            about);
    if (sum->has_baseline)
        fprintf(f, "# The app's own memory before its first stage (for the scenario's\n"
                   "# `app: {baseline: {native: %" PRId64 "KiB, file: %" PRId64 "KiB}}`).\n",
                (sum->baseline[TRC_MEM_NATIVE] + 1023) / 1024,
                (sum->baseline[TRC_MEM_FILE] + 1023) / 1024);
}

/* One part: its file size and the median of each stage it recorded. */
static void write_part(FILE *f, const trc_pf_summary *sum, unsigned p, int has_delegate,
                       int64_t *scratch)
{
    const trc_pf_stage *st = sum->stages[p];
    fprintf(f, "  %s:\n", sum->parts[p]);
    fprintf(f, "    # occurrences: load %zu, runtime_prepare %zu, delegate_prepare %zu, "
               "inference %zu\n",
            st[TRC_LOAD].n, st[TRC_RUNTIME_PREPARE].n, st[TRC_DELEGATE_PREPARE].n,
            st[TRC_INFERENCE].n);
    const trc_pf_stage *ld = &st[TRC_LOAD];
    int64_t file_ = ld->n ? median_of(ld, 2, TRC_MEM_FILE, scratch) : 0;
    fprintf(f, "    file: %" PRId64 "KiB\n", (file_ + 1023) / 1024);
    static const struct {
        int stage;
        const char *key;
    } stages[] = {{TRC_LOAD, "load"},
                  {TRC_RUNTIME_PREPARE, "prepare"},
                  {TRC_DELEGATE_PREPARE, "delegate_prepare"},
                  {TRC_INFERENCE, "inference"}};
    for (size_t k = 0; k < sizeof stages / sizeof *stages; k++) {
        const trc_pf_stage *x = &st[stages[k].stage];
        if (stages[k].stage == TRC_DELEGATE_PREPARE && !has_delegate)
            continue;
        fprintf(f, "    %s: {", stages[k].key);
        if (stages[k].stage == TRC_LOAD)
            fputs("mode: mmap, ", f);
        fprintf(f, "time: %" PRId64 "us", x->n ? median_of(x, 0, 0, scratch) : 0);
        if (x->n == 0) {
            fputs("}  # not recorded\n", f);
            continue;
        }
        int64_t an = median_of(x, 1, TRC_MEM_NATIVE, scratch);
        int64_t af = median_of(x, 1, TRC_MEM_FILE, scratch);
        if (stages[k].stage == TRC_INFERENCE) {
            amounts(f, "working_set", an, 0);
        } else {
            int64_t kn = median_of(x, 2, TRC_MEM_NATIVE, scratch);
            int64_t kf = stages[k].stage == TRC_LOAD ? 0 : median_of(x, 2, TRC_MEM_FILE,
                                                                    scratch);
            int64_t tf = stages[k].stage == TRC_LOAD ? 0 : af - kf;
            amounts(f, "transient", an - kn, tf);
            amounts(f, "resident", kn, kf);
        }
        fputs("}\n", f);
    }
}

char *scn_import_perfetto_candidate(const trc_pf_summary *sum, const char *id, const char *about)
{
    size_t most = 1;
    for (unsigned p = 0; p < sum->nparts; p++)
        for (int s = 0; s < TRC_STAGE_COUNT; s++)
            if (sum->stages[p][s].n > most)
                most = sum->stages[p][s].n;
    int64_t *scratch = malloc(most * sizeof *scratch);
    char *text = NULL;
    size_t len = 0;
    FILE *f = scratch != NULL ? open_memstream(&text, &len) : NULL;
    if (f == NULL) {
        free(scratch);
        return NULL;
    }
    int has_delegate = 0;
    for (unsigned p = 0; p < sum->nparts; p++)
        has_delegate |= sum->stages[p][TRC_DELEGATE_PREPARE].n > 0;
    comment_head(f, sum, about);
    fprintf(f, "id: %s\nabout: \"measured on a Perfetto trace (oomsim import perfetto)\"\n"
               "digest: \"0\"\nruntime: unknown\n", id);
    if (has_delegate)
        fputs("delegate: recorded\nfallback: cpu\n", f);
    fputs("parts:\n", f);
    for (unsigned p = 0; p < sum->nparts; p++)
        write_part(f, sum, p, has_delegate, scratch);
    int bad = ferror(f);
    bad |= fclose(f) != 0;
    free(scratch);
    if (bad) {
        free(text);
        return NULL;
    }
    return text;
}
