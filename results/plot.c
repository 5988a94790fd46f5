/* plot.c - the SVG plots, drawn with PLplot's svg device into memory
 * (open_memstream; PLplot closes the stream at plend): the memory
 * timeline of one replication, the peak distribution of each cell as a
 * CDF, and the comparison of the cells.
 *
 * The timeline is collected from the world's trace events (the sink of
 * mdl_run_replication_traced) into a fixed number of time columns, so its
 * memory does not grow with the horizon; docs/reports.md says what each
 * column shows.  PLplot keeps global state: plot from one thread. */
#include "results.h"
#include "internal.h"
#include "render_int.h"
#include "timeline_int.h"
#include "calibrate.h"

#include <dlfcn.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <plplot.h>

/* -------------------------------------------------------------- PLplot */

/* PLplot and the dozen libraries it brings are opened when the first plot
 * is drawn (dlopen by soname, which CMake reads from the library), so a
 * run without plots never loads them (docs/performance.md, "Start-up").
 * The functions used, by their symbols (plplot.h maps most pl* names to
 * c_pl* ones), with the types plplot.h declares. */
#define PL_SYMBOLS(X)                                                                       \
    X(c_pladv) X(c_plbox) X(c_plcol0) X(c_plend) X(c_plerrx) X(c_plerry) X(c_plfill) X(plgDevs)          \
    X(c_plinit) X(c_pljoin) X(c_pllab) X(c_pllegend) X(c_plline) X(c_pllsty) X(c_plmtex)     \
    X(c_plptex) X(c_plschr) X(c_plscmap0n) X(c_plscol0a) X(c_plsdev) X(plsexit) X(plsfile)   \
    X(c_plspage) X(c_plstring) X(c_plvpor) X(c_plwidth) X(c_plwind)

static struct pl_api {
#define PL_MEMBER(f) __typeof__(f) *f;
    PL_SYMBOLS(PL_MEMBER)
#undef PL_MEMBER
} pl;
static int pl_loaded;    /* 1 once every symbol is found */
static char pl_why[200]; /* why not */
static pthread_once_t pl_once = PTHREAD_ONCE_INIT;

static void pl_open(void)
{
    void *h = dlopen(OOMSIM_PLPLOT_SONAME, RTLD_NOW | RTLD_LOCAL);
    if (h == NULL) {
        snprintf(pl_why, sizeof pl_why, "%s", dlerror());
        return;
    }
#define PL_LOAD(f)                                                                          \
    if ((*(void **)&pl.f = dlsym(h, #f)) == NULL) {                                        \
        snprintf(pl_why, sizeof pl_why, "%s has no %s", OOMSIM_PLPLOT_SONAME, #f);            \
        return;                                                                             \
    }
    PL_SYMBOLS(PL_LOAD)
#undef PL_LOAD
    pl_loaded = 1; /* the handle stays open for the process's life */
}

/* Opens PLplot once; SIM_OK, or SIM_EIO with what is missing. */
static int pl_ready(sim_error *err)
{
    pthread_once(&pl_once, pl_open);
    if (pl_loaded)
        return SIM_OK;
    return sim_error_set(err, SIM_EIO, "plots: cannot open PLplot (%s): install Debian's "
                         "libplplot17", pl_why);
}

/* From here on, every PLplot call goes through the table. */
#define c_pladv (*pl.c_pladv)
#define c_plbox (*pl.c_plbox)
#define c_plcol0 (*pl.c_plcol0)
#define c_plend (*pl.c_plend)
#define c_plerrx (*pl.c_plerrx)
#define c_plerry (*pl.c_plerry)
#define c_plfill (*pl.c_plfill)
#define plgDevs (*pl.plgDevs)
#define c_plinit (*pl.c_plinit)
#define c_pljoin (*pl.c_pljoin)
#define c_pllab (*pl.c_pllab)
#define c_pllegend (*pl.c_pllegend)
#define c_plline (*pl.c_plline)
#define c_pllsty (*pl.c_pllsty)
#define c_plmtex (*pl.c_plmtex)
#define c_plptex (*pl.c_plptex)
#define c_plschr (*pl.c_plschr)
#define c_plscmap0n (*pl.c_plscmap0n)
#define c_plscol0a (*pl.c_plscol0a)
#define c_plsdev (*pl.c_plsdev)
#define plsexit (*pl.plsexit)
#define plsfile (*pl.plsfile)
#define c_plspage (*pl.c_plspage)
#define c_plstring (*pl.c_plstring)
#define c_plvpor (*pl.c_plvpor)
#define c_plwidth (*pl.c_plwidth)
#define c_plwind (*pl.c_plwind)

/* ------------------------------------------------------------- drawing */

/* Colour map 0: what each index draws. */
enum {
    C_BG = 0, C_FG, C_GRID, C_CAT, /* C_CAT + TRC_MEM_*: the categories */
    C_KILL = C_CAT + TRC_MEM_COUNT, C_JAVA_LIMIT, C_WARNING, C_CACHED, C_RECOVERY,
    C_PRESSURE, C_KV,
    C_BAND,                        /* C_BAND + stage: the stage bands, then background */
    C_SERIES = C_BAND + BAND_BACKGROUND + 1,
    C_COUNT = C_SERIES + 12
};
#define SERIES RES_PLOT_SERIES

static void palette(void)
{
    static const struct {
        unsigned rgb;
        double alpha;
    } c[C_COUNT] = {
        [C_BG] = {0xffffff, 1}, [C_FG] = {0x222222, 1}, [C_GRID] = {0xbbbbbb, 1},
        [C_CAT + TRC_MEM_JAVA] = {0xe69f00, 0.9}, [C_CAT + TRC_MEM_NATIVE] = {0x0072b2, 0.9},
        [C_CAT + TRC_MEM_GPU] = {0x009e73, 0.9}, [C_CAT + TRC_MEM_FILE] = {0xcc79a7, 0.9},
        [C_KILL] = {0xd55e00, 1}, [C_JAVA_LIMIT] = {0x8b4513, 1},
        [C_WARNING] = {0xb8860b, 1}, [C_CACHED] = {0x555555, 1},
        [C_RECOVERY] = {0x1f77b4, 1}, [C_PRESSURE] = {0x7b3294, 1}, [C_KV] = {0x000000, 1},
        [C_BAND + BAND_BACKGROUND] = {0x404040, 0.10},
        [C_BAND + TRC_DOWNLOAD] = {0x999999, 0.18}, [C_BAND + TRC_LOAD] = {0xf0e442, 0.30},
        [C_BAND + TRC_RUNTIME_PREPARE] = {0x56b4e9, 0.22},
        [C_BAND + TRC_DELEGATE_PREPARE] = {0xcc79a7, 0.22},
        [C_BAND + TRC_INFERENCE] = {0x000000, 0.10}, [C_BAND + TRC_CACHE] = {0xe69f00, 0.22},
        [C_BAND + TRC_RELEASE] = {0x000000, 0.10}, [C_BAND + TRC_EXIT] = {0x000000, 0.10},
        [C_SERIES + 0] = {0x1f77b4, 1}, [C_SERIES + 1] = {0xff7f0e, 1},
        [C_SERIES + 2] = {0x2ca02c, 1}, [C_SERIES + 3] = {0xd62728, 1},
        [C_SERIES + 4] = {0x9467bd, 1}, [C_SERIES + 5] = {0x8c564b, 1},
        [C_SERIES + 6] = {0xe377c2, 1}, [C_SERIES + 7] = {0x7f7f7f, 1},
        [C_SERIES + 8] = {0xbcbd22, 1}, [C_SERIES + 9] = {0x17becf, 1},
        [C_SERIES + 10] = {0x393b79, 1}, [C_SERIES + 11] = {0x637939, 1}};
    plscmap0n(C_COUNT);
    for (int i = 0; i < C_COUNT; i++)
        plscol0a(i, (PLINT)(c[i].rgb >> 16), (PLINT)(c[i].rgb >> 8 & 0xff),
                 (PLINT)(c[i].rgb & 0xff), c[i].alpha);
}

typedef struct plot {
    char *buf;
    size_t len;
    FILE *f;
    int failed; /* something to draw was lost to an allocation failure */
} plot;

/* PLplot ends the process on a fatal error (a missing driver); say whose
 * it was.  Nothing is written before every plot is drawn (cli/run.c). */
static int on_plplot_exit(PLCHAR_VECTOR msg)
{
    fprintf(stderr, "oomsim: PLplot: %s\n", msg);
    return 3; /* CLI_FAILURE */
}

int res_plot_available(sim_error *err)
{
    int rc = pl_ready(err);
    if (rc != SIM_OK)
        return rc;
    static const char *menu[128], *names[128];
    int n = 128;
    const char **pm = menu, **pn = names;
    plgDevs(&pm, &pn, &n);
    int found = 0;
    for (int i = 0; i < n; i++)
        found |= names[i] != NULL && strcmp(names[i], "svg") == 0;
    plend(); /* PLplot keeps its driver tables until plend */
    if (found)
        return SIM_OK;
    return sim_error_set(err, SIM_EIO, "plots: PLplot has no svg device (Debian's libplplot17 "
                         "ships it)");
}

static int plot_begin(plot *p, int width, int height)
{
    p->buf = NULL;
    p->len = 0;
    p->failed = 0;
    sim_error err;
    if (pl_ready(&err) != SIM_OK)
        return SIM_EIO;
    p->f = open_memstream(&p->buf, &p->len);
    if (p->f == NULL)
        return SIM_EIO;
    plsexit(on_plplot_exit);
    plsdev("svg");
    plsfile(p->f);
    plspage(0, 0, width, height, 0, 0);
    palette();
    plinit();
    pladv(0);
    plschr(0, 0.62);
    return SIM_OK;
}

/* Ends the plot: the SVG text (malloc'ed), or NULL out of memory. */
static char *plot_end(plot *p, size_t *len)
{
    int failed = ferror(p->f) || p->failed;
    plend(); /* closes p->f, which finishes p->buf */
    *len = p->len;
    if (failed || p->buf == NULL) {
        free(p->buf);
        return NULL;
    }
    return p->buf;
}

/* Copies text for PLplot, whose escape character '#' must be doubled. */
static void pl_text(const char *in, char *out, size_t n)
{
    size_t j = 0;
    for (; *in != '\0' && j + 2 < n; in++) {
        if (*in == '#')
            out[j++] = '#';
        out[j++] = *in;
    }
    out[j] = '\0';
}

/* Legend entries, drawn by pllegend at the right of the plot. */
#define LEGEND_MAX 24
typedef struct legend {
    int n;
    PLINT opt[LEGEND_MAX], colour[LEGEND_MAX], style[LEGEND_MAX], text_colour[LEGEND_MAX];
    PLINT pattern[LEGEND_MAX], symbols[LEGEND_MAX];
    PLFLT scale[LEGEND_MAX], width[LEGEND_MAX], sym_scale[LEGEND_MAX];
    char text[LEGEND_MAX][160];
    const char *texts[LEGEND_MAX], *symbol[LEGEND_MAX];
} legend;

static void legend_add(legend *l, PLINT opt, PLINT colour, PLINT style, const char *symbol,
                       const char *text)
{
    if (l->n == LEGEND_MAX)
        return;
    int i = l->n++;
    l->opt[i] = opt;
    l->colour[i] = colour;
    l->style[i] = style;
    l->text_colour[i] = C_FG;
    l->pattern[i] = 0;
    l->symbols[i] = 1;
    l->scale[i] = 0.8;
    l->width[i] = opt & PL_LEGEND_LINE ? 2.0 : 1.0;
    l->sym_scale[i] = 1.0;
    pl_text(text, l->text[i], sizeof l->text[i]);
    l->texts[i] = l->text[i];
    l->symbol[i] = symbol != NULL ? symbol : "";
}

static void legend_draw(legend *l)
{
    if (l->n == 0)
        return;
    PLFLT w, h;
    pllegend(&w, &h, PL_LEGEND_BACKGROUND, PL_POSITION_SUBPAGE | PL_POSITION_INSIDE | PL_POSITION_RIGHT |
             PL_POSITION_TOP, 0.01, 0.08, 0.04, C_BG, C_FG, 1, 0, 1, l->n, l->opt, 0.8, 0.5,
             1.8, 0.0, l->text_colour, l->texts, l->colour, l->pattern, l->scale, l->width,
             l->colour, l->style, l->width, l->colour, l->sym_scale, l->symbols, l->symbol);
}

static void rect(double x0, double x1, double y0, double y1)
{
    PLFLT x[4] = {x0, x1, x1, x0}, y[4] = {y0, y0, y1, y1};
    plfill(4, x, y);
}

static void hline(double x0, double x1, double y)
{
    PLFLT x[2] = {x0, x1}, v[2] = {y, y};
    plline(2, x, v);
}

#define MIB RES_MIB

/* The frame of a timeline: the time scale, the kill lines, the y range,
 * and the order the categories stack in. */
typedef struct tl_frame {
    int order[TRC_MEM_COUNT], n; /* counted categories at the bottom */
    int minutes;                 /* the time axis in minutes (a long horizon) */
    double xs, xmax, colw, ymax;
    int64_t lines[2];            /* kill lines: foreground, background */
} tl_frame;

static void frame_of(const res_timeline *t, tl_frame *f)
{
    /* counted categories at the bottom, so the kill line meets their top */
    f->n = 0;
    for (int pass = 0; pass < 2; pass++)
        for (int k = 0; k < TRC_MEM_COUNT; k++)
            if (((t->counted >> k & 1u) != 0) == (pass == 0))
                f->order[f->n++] = k;
    double secs = (double)t->horizon / 1e6;
    f->minutes = secs > 1200;
    f->xs = f->minutes ? 60.0 : 1.0;
    f->xmax = secs / f->xs;
    f->colw = f->xmax / RES_TIMELINE_COLUMNS;
    f->lines[0] = t->line[1];
    f->lines[1] = t->line[0];
    double ymax = 0;
    for (unsigned i = 0; i < t->filled; i++) {
        double s = 0;
        for (int k = 0; k < TRC_MEM_COUNT; k++)
            s += (double)t->col[i][k];
        ymax = fmax(ymax, s / MIB);
    }
    for (int k = 0; k < 2; k++)
        ymax = fmax(ymax, (double)f->lines[k] / MIB);
    for (unsigned i = 0; t->dev.java_heap_limit > 0 && i < t->filled; i++)
        if (t->col[i][0] != 0) {
            double base = 0;
            for (int o = 0; o < f->n && f->order[o] != 0; o++)
                base += (double)t->col[i][f->order[o]] / MIB;
            ymax = fmax(ymax, base + (double)t->dev.java_heap_limit / MIB);
        }
    f->ymax = ymax > 0 ? ymax * 1.12 : 1;
}

/* Stage bands behind everything; returns the stages seen (bits). */
static unsigned draw_bands(const res_timeline *t, const tl_frame *f)
{
    unsigned seen_stage = 0;
    for (unsigned b = 0; b < t->nband; b++) {
        const tl_band *band = &t->band[b];
        plcol0(C_BAND + (PLINT)band->stage);
        double x0 = (double)band->t0 / 1e6 / f->xs, x1 = (double)band->t1 / 1e6 / f->xs;
        rect(x0, fmax(x1, x0 + f->colw * 0.5), 0, f->ymax);
        seen_stage |= 1u << band->stage;
    }
    return seen_stage;
}

/* The stacked categories: one polygon each, a step per column.  Returns
 * SIM_OK or SIM_ENOMEM. */
static int draw_stack(const res_timeline *t, const tl_frame *f, legend *lg)
{
    static const char *const cat_name[TRC_MEM_COUNT] = {"java", "native", "gpu", "file"};
    size_t npts = 4 * (size_t)t->filled;
    PLFLT *x = malloc(npts * sizeof *x), *y = malloc(npts * sizeof *y);
    double *below = calloc(t->filled > 0 ? t->filled : 1, sizeof *below);
    int rc = x != NULL && y != NULL && below != NULL ? SIM_OK : SIM_ENOMEM;
    for (int o = 0; rc == SIM_OK && o < f->n && t->filled > 0; o++) {
        int k = f->order[o];
        int any = 0;
        size_t m = 0;
        for (unsigned i = 0; i < t->filled; i++) {
            double top = below[i] + (double)t->col[i][k] / MIB;
            any |= t->col[i][k] != 0;
            x[m] = i * f->colw;
            y[m++] = top;
            x[m] = (i + 1) * f->colw;
            y[m++] = top;
        }
        for (unsigned i = t->filled; i-- > 0;) {
            x[m] = (i + 1) * f->colw;
            y[m++] = below[i];
            x[m] = i * f->colw;
            y[m++] = below[i];
        }
        for (unsigned i = 0; i < t->filled; i++)
            below[i] += (double)t->col[i][k] / MIB;
        if (!any)
            continue;
        plcol0(C_CAT + k);
        plfill((PLINT)m, x, y);
        char text[64];
        snprintf(text, sizeof text, "%s%s", cat_name[k],
                 (t->counted >> k & 1u) ? "" : " (not counted)");
        legend_add(lg, PL_LEGEND_COLOR_BOX, C_CAT + k, 1, NULL, text);
    }
    free(x);
    free(y);
    free(below);
    return rc;
}

/* The kill lines, and the Java heap limit when java is counted. */
static void draw_limits(const res_timeline *t, const tl_frame *f, legend *lg)
{
    plwidth(2);
    const int ios = t->dev.rule == MDL_KILL_JETSAM;
    for (int k = 0; k < 2; k++) {
        if (f->lines[k] < 0 || (k == 1 && f->lines[1] == f->lines[0]))
            continue;
        plcol0(C_KILL);
        pllsty(k == 0 ? 1 : 2);
        hline(0, f->xmax, (double)f->lines[k] / MIB);
        char text[96];
        snprintf(text, sizeof text, "%s, %s", ios ? "jetsam limit" : "lmk kill line",
                 k == 0 ? "foreground" : "background");
        legend_add(lg, PL_LEGEND_LINE, C_KILL, k == 0 ? 1 : 2, NULL, text);
    }
    /* the Java heap limit bounds the java band alone: it is drawn from that
     * band's base, over the columns that hold Java memory, not across the
     * whole stack */
    int drawn = 0;
    for (unsigned i = 0; t->dev.java_heap_limit > 0 && i < t->filled; i++) {
        if (t->col[i][0] == 0)
            continue;
        double base = 0;
        for (int o = 0; o < f->n && f->order[o] != 0; o++)
            base += (double)t->col[i][f->order[o]] / MIB;
        double y = base + (double)t->dev.java_heap_limit / MIB;
        plcol0(C_JAVA_LIMIT);
        pllsty(3);
        pljoin(i * f->colw, y, (i + 1) * f->colw, y);
        drawn = 1;
    }
    if (drawn)
        legend_add(lg, PL_LEGEND_LINE, C_JAVA_LIMIT, 3, NULL, "Java heap limit, over the java band");
    pllsty(1);
    plwidth(1);
}

/* The marks: a death draws a line through the plot. */
static void draw_marks(const res_timeline *t, const tl_frame *f, legend *lg)
{
    static const struct {
        PLINT colour;
        double at;
        const char *glyph, *text;
    } mk[MARK_KINDS] = {{C_KILL, 0.965, "×", "death (at the memory the kill saw)"},
                        {C_WARNING, 0.925, "▼", "memory warning"},
                        {C_CACHED, 0.885, "•", "cached app killed"},
                        {C_PRESSURE, 0.845, "▲", "other apps' pressure spike"},
                        {C_RECOVERY, 0.805, "◆", "recovery action"}};
    unsigned seen_mark = 0;
    for (unsigned i = 0; i < t->nmark; i++) {
        const tl_mark *q = &t->mark[i];
        PLFLT mx = (double)q->t / 1e6 / f->xs, my = f->ymax * mk[q->kind].at;
        plcol0(mk[q->kind].colour);
        if (q->kind == MARK_DEATH) {
            my = (double)q->counted / MIB;
            PLFLT lx[2] = {mx, mx}, ly[2] = {0, my};
            pllsty(2);
            plline(2, lx, ly);
            pllsty(1);
        }
        plstring(1, &mx, &my, mk[q->kind].glyph);
        seen_mark |= 1u << q->kind;
    }
    for (int k = 0; k < MARK_KINDS; k++)
        if (seen_mark >> k & 1u)
            legend_add(lg, PL_LEGEND_SYMBOL, mk[k].colour, 1, mk[k].glyph, mk[k].text);
}

/* Axes, labels, what was not drawn, the legend. */
static void draw_frame(const res_timeline *t, const tl_frame *f, const char *title,
                       unsigned seen_stage, legend *lg)
{
    for (int s = 0; s <= BAND_BACKGROUND; s++)
        if (seen_stage >> s & 1u)
            legend_add(lg, PL_LEGEND_COLOR_BOX, C_BAND + s, 1, NULL,
                       s == BAND_BACKGROUND ? "in the background" : trc_stage_name((trc_stage)s));
    plcol0(C_FG);
    plbox("bcnst", 0, 0, "bcnstv", 0, 0);
    char ttl[512];
    pl_text(title, ttl, sizeof ttl);
    pllab(f->minutes ? "time (min)" : "time (s)", "memory (MiB)", ttl);
    if (t->info.bands_dropped > 0 || t->info.marks_dropped > 0) {
        char note[160];
        snprintf(note, sizeof note, "not drawn: %llu stage bands and %llu marks beyond the "
                 "first %d and %d", (unsigned long long)t->info.bands_dropped,
                 (unsigned long long)t->info.marks_dropped, RES_TIMELINE_BANDS,
                 RES_TIMELINE_MARKS);
        plmtex("b", 4.2, 0.0, 0.0, note);
    }
    legend_draw(lg);
}

/* An LLM's KV caches, a step line from 0 (they are within the native or
 * gpu band), and its weights by kind in the legend. */
static void draw_kv(const res_timeline *t, const tl_frame *f, legend *lg)
{
    if (t->info.kv_max > 0) {
        plwidth(2);
        plcol0(C_KV);
        pllsty(3);
        for (unsigned i = 0; i < t->kv_filled; i++) {
            double y = (double)t->kv[i] / MIB;
            if (y > 0)
                hline(i * f->colw, (i + 1) * f->colw, y);
            if (i + 1 < t->kv_filled && t->kv[i + 1] != t->kv[i]) {
                PLFLT x[2] = {(i + 1) * f->colw, (i + 1) * f->colw};
                PLFLT y2[2] = {y, (double)t->kv[i + 1] / MIB};
                plline(2, x, y2);
            }
        }
        pllsty(1);
        char text[96];
        snprintf(text, sizeof text, "KV cache, up to %.0f MiB", (double)t->info.kv_max / MIB);
        legend_add(lg, PL_LEGEND_LINE, C_KV, 3, NULL, text);
    }
    if (t->info.has_weights) {
        char text[128];
        snprintf(text, sizeof text, "weights (MiB): %.0f mapped, %.0f repacked, %.0f gpu",
                 (double)t->info.weights[0] / MIB, (double)t->info.weights[1] / MIB,
                 (double)t->info.weights[2] / MIB);
        legend_add(lg, PL_LEGEND_NONE, C_FG, 1, NULL, text);
    }
}

char *res_plot_timeline(const res_timeline *t, const char *title, size_t *len)
{
    tl_frame f;
    frame_of(t, &f);
    plot p;
    if (plot_begin(&p, 1100, 470) != SIM_OK)
        return NULL;
    plvpor(0.07, 0.70, 0.12, 0.86);
    plwind(0, f.xmax, 0, f.ymax);
    legend lg = {0};
    unsigned seen_stage = draw_bands(t, &f);
    if (draw_stack(t, &f, &lg) != SIM_OK) {
        char *s = plot_end(&p, len);
        free(s);
        return NULL;
    }
    draw_limits(t, &f, &lg);
    draw_kv(t, &f, &lg);
    draw_marks(t, &f, &lg);
    draw_frame(t, &f, title, seen_stage, &lg);
    return plot_end(&p, len);
}

/* ---------------------------------------------------- cells and labels */

int res_cell_label(const res_plan *plan, unsigned i, char *buf, size_t n)
{
    int devices = 0, candidates = 0, policies = 0;
    for (unsigned k = 0; k < plan->ncells; k++) {
        devices |= plan->cells[k].device != plan->cells[0].device;
        candidates |= plan->cells[k].candidate != plan->cells[0].candidate;
        policies |= strcmp(plan->policy_json[k], plan->policy_json[0]) != 0;
    }
    char policy[RES_TEXT_MAX];
    int rc = res_policy_label(plan->policy_json[i], policy, sizeof policy);
    const mdl_cell *c = &plan->cells[i];
    if (!devices && !candidates && !policies)
        snprintf(buf, n, "%s / %s", c->device->name, c->candidate->id);
    else
        snprintf(buf, n, "%s%s%s%s%s", devices ? c->device->name : "",
                 devices && (candidates || policies) ? " / " : "",
                 candidates ? c->candidate->id : "", candidates && policies ? " / " : "",
                 policies ? policy : "");
    return rc;
}

char *res_plot_peak_cdf(const res_plan *plan, const res_result *r, unsigned first,
                        unsigned count, size_t *len)
{
    if (first >= r->ncells)
        return NULL;
    if (count > SERIES || first + count > r->ncells)
        count = first + SERIES <= r->ncells ? SERIES : r->ncells - first;
    double lo = INFINITY, hi = -INFINITY;
    for (unsigned i = first; i < first + count; i++) {
        lo = fmin(lo, r->cells[i].peak_cdf[0] / MIB);
        hi = fmax(hi, r->cells[i].peak_cdf[RES_CDF_POINTS - 1] / MIB);
    }
    double pad = fmax((hi - lo) * 0.05, 1.0);
    lo = fmax(0, lo - pad);
    hi += pad;
    plot p;
    if (plot_begin(&p, 1100, 470) != SIM_OK)
        return NULL;
    plvpor(0.07, 0.56, 0.12, 0.86);
    plwind(lo, hi, 0, 1);
    plcol0(C_GRID);
    plbox("g", 0, 0, "g", 0, 0);
    legend lg = {0};
    PLFLT x[RES_CDF_POINTS], y[RES_CDF_POINTS];
    plwidth(2);
    for (unsigned i = first; i < first + count; i++) {
        for (int k = 0; k < RES_CDF_POINTS; k++) {
            x[k] = r->cells[i].peak_cdf[k] / MIB;
            y[k] = k / (double)(RES_CDF_POINTS - 1);
        }
        PLINT colour = C_SERIES + (PLINT)((i - first) % SERIES);
        plcol0(colour);
        plline(RES_CDF_POINTS, x, y);
        char label[RES_TEXT_MAX];
        if (res_cell_label(plan, i, label, sizeof label) != SIM_OK)
            p.failed = 1;
        /* a line drawn exactly over an earlier one says so */
        for (unsigned j = first; j < i; j++)
            if (memcmp(r->cells[j].peak_cdf, r->cells[i].peak_cdf,
                       sizeof r->cells[i].peak_cdf) == 0) {
                char same[RES_TEXT_MAX / 2];
                int sibling = plan->cells[j].device == plan->cells[i].device &&
                              plan->cells[j].candidate == plan->cells[i].candidate;
                if ((sibling ? res_policy_label(plan->policy_json[j], same, sizeof same)
                             : res_cell_label(plan, j, same, sizeof same)) != SIM_OK)
                    p.failed = 1;
                size_t at = strlen(label);
                if (at < sizeof label / 2)
                    snprintf(label + at, sizeof label - at, " (= %s)", same);
                break;
            }
        legend_add(&lg, PL_LEGEND_LINE, colour, 1, NULL, label);
    }
    plwidth(1);
    plcol0(C_FG);
    plbox("bcnst", 0, 0, "bcnstv", 0, 0);
    char title[160];
    if (first == 0 && count == r->ncells)
        snprintf(title, sizeof title, "peak counted memory over %llu replication%s, each cell",
                 (unsigned long long)plan->replications, SIM_S(plan->replications));
    else
        snprintf(title, sizeof title, "peak counted memory over %llu replication%s, cells %u to "
                 "%u", (unsigned long long)plan->replications, SIM_S(plan->replications), first,
                 first + count - 1);
    pllab("peak (MiB)", "share of replications at or below", title);
    legend_draw(&lg);
    return plot_end(&p, len);
}

/* One panel of the comparison: a value per cell, rows from the top. */
typedef struct panel {
    const char *title;
    double lo, hi, vpx0, vpx1;
} panel;

char *res_plot_comparison(const res_plan *plan, const res_result *r, size_t *len)
{
    unsigned n = r->ncells;
    int height = 130 + 26 * (int)n;
    plot p;
    if (plot_begin(&p, 1100, height) != SIM_OK)
        return NULL;
    double top = 1.0 - 50.0 / height, bottom = 60.0 / height;
    double peak_max = 0, rate_max = 0, lat_max = 0;
    for (unsigned i = 0; i < n; i++) {
        peak_max = fmax(peak_max, r->cells[i].peak.p95 / MIB);
        rate_max = fmax(rate_max, 100 * r->cells[i].any_ci.hi);
        lat_max = fmax(lat_max, r->cells[i].latency_us.p95 / 1000.0);
    }
    panel pn[3] = {{"peak p95 (MiB)", 0, peak_max > 0 ? peak_max * 1.1 : 1, 0.36, 0.54},
                   {"deaths: share of replications (%), 95% CI", 0,
                    rate_max > 0 ? fmin(100, rate_max * 1.1) : 1, 0.58, 0.77},
                   {"latency p95 (ms)", 0, lat_max > 0 ? lat_max * 1.1 : 1, 0.81, 0.98}};
    for (int k = 0; k < 3; k++) {
        plvpor(pn[k].vpx0, pn[k].vpx1, bottom, top);
        plwind(pn[k].lo, pn[k].hi, 0, n);
        plcol0(C_GRID);
        plbox("g", 0, 0, "", 0, 0);
        for (unsigned i = 0; i < n; i++) {
            const res_cell *c = &r->cells[i];
            double row = n - i - 0.5;
            plcol0(C_SERIES + (PLINT)(k == 0 ? 0 : 3));
            if (k == 0) {
                rect(0, c->peak.p95 / MIB, row - 0.3, row + 0.3);
            } else if (k == 1) {
                PLFLT lo = 100 * c->any_ci.lo, hi = 100 * c->any_ci.hi, y = row,
                      x = 100 * c->any_rate;
                plcol0(C_KILL);
                plwidth(2);
                plerrx(1, &lo, &hi, &y);
                plwidth(1);
                plstring(1, &x, &y, "●");
            } else if (c->completed > 0) {
                plcol0(C_SERIES + 2);
                rect(0, c->latency_us.p95 / 1000.0, row - 0.3, row + 0.3);
            } else {
                plcol0(C_FG);
                plptex(pn[k].hi * 0.02, row, 1, 0, 0, "no request completed");
            }
        }
        plcol0(C_FG);
        plbox("bcnst", 0, 0, "bc", 0, 0);
        plmtex("t", 1.0, 0.5, 0.5, pn[k].title);
        if (k == 0)
            for (unsigned i = 0; i < n; i++) {
                char label[RES_TEXT_MAX], text[2 * RES_TEXT_MAX];
                if (res_cell_label(plan, i, label, sizeof label) != SIM_OK)
                    p.failed = 1;
                pl_text(label, text, sizeof text);
                plmtex("lv", 1.0, (n - i - 0.5) / n, 1.0, text);
            }
    }
    return plot_end(&p, len);
}

char *res_plot_calibration(const res_calibration *c, size_t *len)
{
    double hi = 0;
    for (unsigned e = 0; e < c->nentries; e++) {
        const res_cal_entry *x = &c->e[e];
        hi = fmax(hi, 100 * fmax(x->observed_ci.hi, fmax(x->before_ci.hi, x->after_ci.hi)));
    }
    hi = hi > 0 ? fmin(100, hi * 1.08) : 1;
    plot p;
    if (plot_begin(&p, 900, 600) != SIM_OK)
        return NULL;
    plvpor(0.09, 0.62, 0.11, 0.9);
    plwind(0, hi, 0, hi);
    plcol0(C_GRID);
    plbox("g", 0, 0, "g", 0, 0);
    legend lg = {0};
    pllsty(2); /* agreement: predicted = observed */
    plcol0(C_FG);
    PLFLT dx[2] = {0, hi}, dy[2] = {0, hi};
    plline(2, dx, dy);
    pllsty(1);
    legend_add(&lg, PL_LEGEND_LINE, C_FG, 2, NULL, "predicted = observed");
    for (int after = 0; after < 2; after++) {
        PLINT colour = after ? C_SERIES : C_SERIES + 7;
        plcol0(colour);
        plwidth(after ? 2 : 1);
        for (unsigned e = 0; e < c->nentries; e++) {
            const res_cal_entry *x = &c->e[e];
            const res_interval *ci = after ? &x->after_ci : &x->before_ci;
            PLFLT ox = 100 * x->observed, oy = 100 * (after ? x->after : x->before);
            PLFLT xlo = 100 * x->observed_ci.lo, xhi = 100 * x->observed_ci.hi;
            PLFLT ylo = 100 * ci->lo, yhi = 100 * ci->hi;
            plerrx(1, &xlo, &xhi, &oy);
            plerry(1, &ox, &ylo, &yhi);
            plstring(1, &ox, &oy, after ? "●" : "○");
            if (after) {
                char name[MDL_NAME_MAX + 16], label[2 * MDL_NAME_MAX + 32];
                snprintf(name, sizeof name, "%s%s", x->device, x->background ? " (bg)" : "");
                pl_text(name, label, sizeof label);
                plptex(ox + hi * 0.015, oy - hi * 0.03, 1, 0, 0, label);
            }
        }
        legend_add(&lg, PL_LEGEND_SYMBOL, colour, 1, after ? "●" : "○",
                   after ? "after the fit (95% intervals)" : "before: at the plan's values");
    }
    plwidth(1);
    plcol0(C_FG);
    plbox("bcnst", 0, 0, "bcnstv", 0, 0);
    int bg = 0;
    for (unsigned e = 0; e < c->nentries; e++)
        bg |= c->e[e].background;
    pllab(bg ? "observed: users with a visible (or, bg, a background) memory death per day (%)"
             : "observed: users with a visible memory death per day (%)",
          "predicted (%)", "each field entry, predicted against observed");
    legend_draw(&lg);
    return plot_end(&p, len);
}
