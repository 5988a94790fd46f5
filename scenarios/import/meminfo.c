/* meminfo.c - `oomsim import meminfo` (docs/imports/meminfo.md): dumpsys
 * meminfo PACKAGE's App Summary to the scenario's app: baseline block,
 * less a candidate's parts when the dump was taken with the model loaded. */
#include "import_int.h"

#include <ctype.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The App Summary's rows (KB), PSS and, from Android 10 on, RSS. */
enum { MI_JAVA = 0, MI_NATIVE, MI_CODE, MI_STACK, MI_GRAPHICS, MI_OTHER, MI_SYSTEM,
       MI_UNKNOWN, MI_TOTAL, MI_ROWS };

typedef struct meminfo {
    measure pss[MI_ROWS], rss[MI_ROWS];
    /* swapped out (SwapPss, KB): the whole app's (TOTAL SWAP PSS) and the
     * Java heap's (the Dalvik Heap row's SwapPss column) */
    measure swap_total, swap_java;
    int swap_column; /* the table's SwapPss column, from 1 (0: none) */
    char process[128];
    unsigned summary_line;
} meminfo;

/* The App Summary's rows (KB), PSS and, from Android 10 on, RSS. */
static const char *const rows[MI_ROWS] = {"Java Heap:", "Native Heap:", "Code:", "Stack:",
                                          "Graphics:", "Private Other:", "System:",
                                          "Unknown:", "TOTAL"};

/* Row r of the App Summary when the line holds it: its PSS and RSS. */
static int summary_row(meminfo *mi, const line_iter *it, int r, const char *name,
                       sim_error *err)
{
    const char *k = scn__find(it, rows[r]);
    if (k == NULL)
        return SIM_OK;
    /* "TOTAL PSS:" (Android 10 on) or "TOTAL:" (before) */
    const char *p = k + strlen(rows[r]);
    if (r == MI_TOTAL) {
        if (scn__find(it, "TOTAL PSS:"))
            p = scn__find(it, "TOTAL PSS:") + 10;
        else if (scn__find(it, "TOTAL:"))
            p = scn__find(it, "TOTAL:") + 6;
        else
            return SIM_OK;
    } else if (k != it->s && k[-1] != ' ') {
        return SIM_OK; /* "Java Heap:" inside another word */
    }
    const char *end = it->s + it->n;
    double v;
    int got = scn__number_at(&p, end, &v);
    if (r == MI_UNKNOWN && !got) {
        /* Android 10 prints Unknown's RSS only */
        if (scn__number_at(&p, end, &v))
            scn__set(&mi->rss[r], v, it->no);
        return SIM_OK;
    }
    if (!got)
        return scn__fail_at(err, name, it->no, "%s without a number", rows[r]);
    scn__set(&mi->pss[r], v, it->no);
    if (r == MI_TOTAL) {
        const char *t = scn__find(it, "TOTAL RSS:");
        if (t != NULL) {
            p = t + 10;
            if (scn__number_at(&p, end, &v))
                scn__set(&mi->rss[r], v, it->no);
        }
    } else if (scn__number_at(&p, end, &v)) {
        scn__set(&mi->rss[r], v, it->no);
    }
    return SIM_OK;
}

/* The per-heap table: its header's SwapPss column, and the Dalvik Heap
 * row's number in it.  1 when the line was one of them. */
static int table_line(meminfo *mi, const line_iter *it)
{
    const char *sw = scn__find(it, "SwapPss");
    if (sw != NULL && scn__find(it, "Pss") < sw) { /* "Pss  Private  Private  SwapPss ..." */
        int col = 1;
        for (const char *p = scn__find(it, "Pss") + 3; p < sw; p++)
            col += p[0] != ' ' && p[-1] == ' ';
        mi->swap_column = col + 1; /* the words between Pss and SwapPss, then SwapPss */
        return 1;
    }
    const char *row = scn__find(it, "Dalvik Heap");
    if (row == NULL || mi->swap_column == 0)
        return 0;
    const char *p = row + 11, *end = it->s + it->n;
    double v = 0;
    for (int k = 0; k < mi->swap_column; k++)
        if (!scn__number_at(&p, end, &v))
            return 0;
    scn__set(&mi->swap_java, v, it->no);
    return 1;
}

/* A line that holds a letter: blank lines and rules ("------") hold no data. */
static int has_letter(const line_iter *it)
{
    for (size_t k = 0; k < it->n; k++)
        if (isalpha((unsigned char)it->s[k]))
            return 1;
    return 0;
}

/* A section's heading after the App Summary (" Objects", " SQL",
 * " DATABASES", " Asset Allocations"): after a blank line, words alone, no
 * number, no colon (a table's column header follows its heading at once). */
static int heading(const line_iter *it, int after_blank)
{
    if (!after_blank)
        return 0;
    for (size_t k = 0; k < it->n; k++)
        if (isdigit((unsigned char)it->s[k]) || it->s[k] == ':')
            return 0;
    return has_letter(it);
}

/* One line of the App Summary: its rows read.  1 when the line held one. */
static int summary_line(meminfo *mi, const line_iter *it, const char *name, int *rc,
                        sim_error *err)
{
    double sw;
    int badsw = 0, used = 0;
    if (scn__number_after(it, "TOTAL SWAP PSS:", &sw, &badsw)) {
        scn__set(&mi->swap_total, sw, it->no);
        used = 1;
    }
    for (int r = 0; r < MI_ROWS && *rc == SIM_OK; r++) {
        *rc = summary_row(mi, it, r, name, err);
        used |= (mi->pss[r].line == it->no || mi->rss[r].line == it->no) && r != MI_UNKNOWN;
    }
    return used;
}

/* Reads the first process's section (the app's main process comes first);
 * every other line with a letter is counted in `ignored` by where it is:
 * the per-heap table's rows but the Dalvik Heap's (its SwapPss is read),
 * the App Summary's Unknown row, the sections after the summary by their
 * heading, and the other processes' sections. */
static int read_meminfo(const scn_import_input *in, unsigned n, const char *name, void *state,
                        scn_tally *ignored, sim_error *err)
{
    (void)n; /* one input */
    meminfo *mi = state;
    memset(mi, 0, sizeof *mi);
    line_iter it;
    scn__lines_of(&it, in[0].text, in[0].len);
    int in_summary = 0, after = 0, sections = 0, blank = 1, was_blank;
    char section[SCN_TALLY_KIND] = "preamble";
    while (scn__next_line(&it)) {
        was_blank = blank;
        blank = 1;
        for (size_t k = 0; k < it.n && blank; k++)
            blank = it.s[k] == ' ' || it.s[k] == '\r' || it.s[k] == '\t';
        const char *at = scn__find(&it, "** MEMINFO in pid ");
        if (at != NULL && ++sections == 1) {
            const char *lb = scn__find(&it, "[");
            const char *rb = lb != NULL ? memchr(lb, ']', (size_t)(it.s + it.n - lb)) : NULL;
            if (lb != NULL && rb != NULL)
                scn__clean_copy(mi->process, sizeof mi->process, lb + 1, (size_t)(rb - lb - 1));
            snprintf(section, sizeof section, "per-heap table");
            continue;
        }
        if (sections > 1) {
            if (has_letter(&it))
                scn__tally(ignored, "other processes'", 16);
            continue;
        }
        if (!after && scn__find(&it, "App Summary")) {
            in_summary = 1;
            mi->summary_line = it.no;
            continue;
        }
        int used = 0, rc = SIM_OK;
        if (in_summary && !after) {
            used = summary_line(mi, &it, name, &rc, err) || scn__find(&it, "Pss(KB)") != NULL;
            if (rc != SIM_OK)
                return rc;
            after = mi->pss[MI_TOTAL].line != 0;
            snprintf(section, sizeof section, "App Summary");
        } else if (after && heading(&it, was_blank)) {
            const char *h = it.s, *e = it.s + it.n;
            while (h < e && *h == ' ')
                h++;
            while (e > h && (e[-1] == ' ' || e[-1] == '\r'))
                e--;
            scn__clean_copy(section, sizeof section, h, (size_t)(e - h));
            continue;
        } else if (!in_summary) {
            if (scn__find(&it, "Pss") != NULL && scn__find(&it, "Private") != NULL)
                snprintf(section, sizeof section, "per-heap table"); /* a dump without its ** line */
            used = table_line(mi, &it);
        }
        if (!used && has_letter(&it)) {
            const char *kind = in_summary && !after && scn__find(&it, "Unknown:") != NULL
                                   ? "App Summary Unknown" : section;
            scn__tally(ignored, kind, strlen(kind));
        }
    }
    for (int r = 0; r < MI_ROWS; r++) {
        int rc = scn__bounded(err, name, &mi->pss[r], 1024, 0, "a row (KB)");
        if (rc == SIM_OK && r == 0)
            rc = scn__bounded(err, name, &mi->swap_total, 1024, 0, "a swap (KB)");
        if (rc == SIM_OK && r == 0)
            rc = scn__bounded(err, name, &mi->swap_java, 1024, 0, "a swap (KB)");
        if (rc == SIM_OK)
            rc = scn__bounded(err, name, &mi->rss[r], 1024, 0, "a row (KB)");
        if (rc != SIM_OK)
            return rc;
    }
    if (!mi->summary_line)
        return scn__fail_at(err, name, 1, "not dumpsys meminfo output: no 'App Summary' in its %u "
                       "lines (dumpsys meminfo PACKAGE prints one per process)", it.no);
    if (!mi->pss[MI_JAVA].line || !mi->pss[MI_NATIVE].line)
        return scn__fail_at(err, name, mi->summary_line, "an App Summary without its Java Heap and "
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
    put(w, "    %s: %" PRId64 "KiB", key, v > 0 ? scn__kib_of(v) : 0);
    scn__from(w, line, c);
}

/* What the dump says of the app's swapped-out memory: its split, or that
 * the split or the whole is not given (never written as 0 KB). */
static void swap_comment(const meminfo *mi, double sj, double sn, out *w)
{
    if (mi->swap_total.line && mi->swap_java.line)
        put(w, "    # %s:%u: TOTAL SWAP PSS %.0f KB: the app's memory swapped out (zram keeps it "
               "in RAM, compressed), counted below: %.0f KB of the Java heap's (the Dalvik Heap "
               "row's SwapPss), %.0f KB in native\n", w->name, mi->swap_total.line,
            mi->swap_total.v, sj, sn);
    else if (mi->swap_total.line) /* no per-heap SwapPss: the Java heap's share not given */
        put(w, "    # %s:%u: TOTAL SWAP PSS %.0f KB: the app's memory swapped out (zram keeps it "
               "in RAM, compressed), counted below with the native memory, as the dump has no "
               "Dalvik Heap SwapPss (the Java heap's share is not known)\n", w->name,
            mi->swap_total.line, mi->swap_total.v);
    else
        put(w, "    # no TOTAL SWAP PSS in the dump: what the app had swapped out is not known "
               "(not taken as 0 KB)\n");
}

static int write_meminfo(void *state, const scn_import_opts *o, out *w, sim_error *err)
{
    (void)err;
    const meminfo *mi = state;
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
    scn__tally_put(w, "line");
    put(w, "app:\n  baseline:\n");
    char c[300];
    /* swapped out: the app's own anonymous memory (on a zram phone it stays
     * in RAM, compressed), the Java heap's to java, the rest to native */
    double sj = mi->swap_java.v > mi->swap_total.v ? mi->swap_total.v : mi->swap_java.v;
    double sn = mi->swap_total.v - sj;
    swap_comment(mi, sj, sn, w);
    snprintf(c, sizeof c, sj > 0 ? "Java Heap %.0f + its swapped %.0f KB" : "Java Heap", m[MI_JAVA].v, sj);
    baseline_row(w, "java", m[MI_JAVA].v + sj, minus[MDL_CAT_JAVA], c, m[MI_JAVA].line);
    double native = m[MI_NATIVE].v + m[MI_STACK].v + m[MI_OTHER].v + sn;
    snprintf(c, sizeof c, sn > 0 ? "Native Heap %.0f + Stack %.0f + Private Other %.0f KB + "
             "swapped %.0f KB" : "Native Heap %.0f + Stack %.0f + Private Other %.0f KB",
             m[MI_NATIVE].v, m[MI_STACK].v, m[MI_OTHER].v, sn);
    put(w, "    # %s\n", note);
    baseline_row(w, "native", native, minus[MDL_CAT_NATIVE], c, m[MI_NATIVE].line);
    baseline_row(w, "gpu", m[MI_GRAPHICS].v, minus[MDL_CAT_GPU],
                 "Graphics (GL and EGL memory tracked for the app)", m[MI_GRAPHICS].line);
    baseline_row(w, "file", m[MI_CODE].v, minus[MDL_CAT_FILE],
                 "Code (mapped .so, .dex, .oat, .apk: file pages)", m[MI_CODE].line);
    /* System is TOTAL PSS less the private pages (Debug.MemoryInfo's
     * getSummarySystem), and TOTAL PSS adds the swapped-out PSS
     * (getTotalPss): the app's own swap is inside System */
    if (m[MI_SYSTEM].line && mi->swap_total.line && mi->swap_total.v > 0)
        put(w, "# %s:%u: System %.0f KB left out: TOTAL PSS less the app's private pages, so "
               "the pages it shares (libraries, fonts, the zygote's heap) and its own swapped-out "
               "%.0f KB (TOTAL SWAP PSS, counted above); the shared part, %.0f KB, is not the "
               "app's own.\n", w->name, m[MI_SYSTEM].line, m[MI_SYSTEM].v, mi->swap_total.v,
            m[MI_SYSTEM].v > mi->swap_total.v ? m[MI_SYSTEM].v - mi->swap_total.v : 0.0);
    else if (m[MI_SYSTEM].line)
        put(w, "# %s:%u: System %.0f KB left out: TOTAL PSS less the app's private pages, the "
               "pages it shares (libraries, fonts, the zygote's heap)%s.\n", w->name,
            m[MI_SYSTEM].line, m[MI_SYSTEM].v, mi->swap_total.line ? ""
            : "; with swap, also the app's own swapped-out PSS, which this dump does not give");
    if (m[MI_TOTAL].line)
        put(w, "# %s:%u: TOTAL PSS %.0f KB%s.\n", w->name, m[MI_TOTAL].line, m[MI_TOTAL].v,
            mi->rss[MI_TOTAL].line ? "" : " (the layout before Android 10: no RSS column)");
    if (mi->rss[MI_TOTAL].line)
        put(w, "# %s:%u: TOTAL RSS %.0f KB (RSS counts shared pages whole; PSS shares them).\n",
            w->name, mi->rss[MI_TOTAL].line, mi->rss[MI_TOTAL].v);
    return SIM_OK;
}

_Static_assert(sizeof(meminfo) <= SCN_IMPORT_STATE_MAX, "the state fits the driver's buffer");

const scn_importer scn__import_meminfo = {"meminfo", "dumpsys meminfo PACKAGE: the scenario's app: baseline block",
    1, sizeof(meminfo), read_meminfo, write_meminfo, NULL};
