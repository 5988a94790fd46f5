/* device_yaml.c - one device profile written from the captures of one
 * phone (docs/devices.md): every value derived carries a comment naming
 * the file and line it came from and how; every value not derived is the
 * catalog's figure for the phone's RAM class, marked
 * `# assumed: not in these captures`; the `measured` map lists the values
 * derived with their source, which `validate`, `run` and the result
 * document report.  Several captures: each value over them (sizes the
 * loader takes as a distribution fitted, the rest their median, counts
 * their range), with the number of captures it rests on. */
#include "capture_int.h"

#include "traces/traces.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>

#define MIB 1048576.0
#define VALUES_MAX 32
#define SRC_MAX 400
/* iOS: what the model holds of the others (models/device.h) */
#define GROUPS_MAX MDL_OTHER_GROUPS_MAX
#define PROCS_MAX MDL_OTHERS_MAX

typedef struct wr {
    sim_text t;
    const cap_phone *const *c;
    unsigned m;
    char mkey[VALUES_MAX][32];
    char msrc[VALUES_MAX][SRC_MAX];
    unsigned nm;
    char akey[VALUES_MAX][32];
    unsigned na;
    int oom;                     /* an allocation failed: the profile is not written */
    const char *cat_name, *cat;  /* the catalog's profile for the class */
    size_t cat_len;
} wr;

#define put(w, ...) sim_text_printf(&(w)->t, __VA_ARGS__)

static void measured(wr *w, const char *key, const char *src)
{
    if (w->nm == VALUES_MAX)
        return;
    snprintf(w->mkey[w->nm], sizeof w->mkey[0], "%s", key);
    snprintf(w->msrc[w->nm++], sizeof w->msrc[0], "%.*s", SRC_MAX - 1, src);
}

static void assumed(wr *w, const char *key)
{
    if (w->na < VALUES_MAX)
        snprintf(w->akey[w->na++], sizeof w->akey[0], "%s", key);
}

static long long kib(double bytes)
{
    return (long long)llround(bytes / 1024.0);
}

/* ---- one figure over the captures ----------------------------------------- */

/* Samples one figure rests on: one per capture, or a trace's series. */
#define OVER_MAX 1024

typedef struct over {
    unsigned n;          /* samples */
    unsigned captures;   /* captures that give it */
    double median, lo, hi;
    double v[OVER_MAX];
    char src[SRC_MAX]; /* where: "file:line: how" of the first, and the count */
} over;

/* "file:line: how", or "file: how" for a capture whose figures name no
 * line (a binary trace). */
static void where(char *out, size_t n, const cap_phone *c, cap_key k)
{
    if (c->no_lines)
        snprintf(out, n, "%.127s: %.199s", c->file, c->f[k].how);
    else
        snprintf(out, n, "%.127s:%u: %.199s", c->file, c->f[k].line, c->f[k].how);
}

static int figure(const wr *w, cap_key k, over *o)
{
    memset(o, 0, sizeof *o);
    const cap_phone *first = NULL;
    unsigned traces = 0, series = 0;
    for (unsigned i = 0; i < w->m; i++)
        traces += w->c[i]->f[k].line > 0 && w->c[i]->nseries[k] > 0;
    /* each trace's share of the room the captures' own values leave */
    unsigned share = traces > 0 ? (OVER_MAX - w->m) / traces : 0;
    for (unsigned i = 0; i < w->m; i++) {
        const cap_phone *c = w->c[i];
        if (c->f[k].line == 0)
            continue;
        o->captures++;
        if (first == NULL)
            first = c;
        unsigned ns = c->nseries[k];
        if (ns == 0) {
            o->v[o->n++] = c->f[k].v;
            continue;
        }
        unsigned take = ns < share ? ns : share;
        for (unsigned j = 0; j < take; j++)
            o->v[o->n++] = c->series[k][(size_t)j * ns / take];
        series += take;
    }
    if (o->n == 0)
        return 0;
    double s[OVER_MAX];
    memcpy(s, o->v, o->n * sizeof *s);
    gsl_sort(s, 1, o->n);
    o->median = gsl_stats_median_from_sorted_data(s, 1, o->n);
    o->lo = s[0];
    o->hi = s[o->n - 1];
    char at[SRC_MAX];
    where(at, sizeof at, first, k);
    if (o->captures == 1)
        snprintf(o->src, sizeof o->src, "%s", at);
    else if (series > 0)
        snprintf(o->src, sizeof o->src, "the median of %u samples from %u captures, %u of them "
                 "a trace's polls (from %.300s)", o->n, o->captures, series, at);
    else
        snprintf(o->src, sizeof o->src, "the median of %u captures (from %.340s)", o->n, at);
    return 1;
}

/* A size written with its comment and recorded as measured. */
static void size_line(wr *w, const char *key, const char *yaml_key, const over *o, int indent)
{
    put(w, "%*s%s: %lldKiB   # %s", indent, "", yaml_key, kib(o->median), o->src);
    if (o->n > 1 && o->hi > o->lo)
        put(w, " (min %.0f MiB, max %.0f MiB)", o->lo / MIB, o->hi / MIB);
    put(w, "\n");
    measured(w, key, o->src);
}

/* ---- a fitted distribution ------------------------------------------------ */

/* Sizes as a lognormal fitted by their logs' mean and sd, with the
 * Kolmogorov-Smirnov distance of the fit; 0 when they cannot be (fewer than
 * 3, or all equal). */
static int lognormal(wr *w, const double *x, unsigned n, char *yaml, size_t ny, char *fit,
                     size_t nf)
{
    if (n < 3)
        return 0;
    double *l = malloc(n * sizeof *l), *s = malloc(n * sizeof *s);
    if (l == NULL || s == NULL) {
        free(l);
        free(s);
        w->oom = 1;
        return 0;
    }
    for (unsigned k = 0; k < n; k++) {
        s[k] = x[k] > 4096.0 ? x[k] : 4096.0;
        l[k] = log(s[k]);
    }
    double mu = gsl_stats_mean(l, 1, n), sd = gsl_stats_sd_m(l, 1, n, mu);
    int ok = sd > 1e-9;
    if (ok) {
        gsl_sort(s, 1, n);
        double d = 0;
        for (unsigned k = 0; k < n; k++) {
            double f = gsl_cdf_lognormal_P(s[k], mu, sd);
            double a = fabs(f - (double)k / n), b = fabs((double)(k + 1) / n - f);
            d = fmax(d, fmax(a, b));
        }
        double median = exp(mu), p95 = exp(mu + 1.6448536 * sd);
        snprintf(yaml, ny, "{dist: lognormal, median: %lldKiB, p95: %lldKiB}", kib(median),
                 kib(p95));
        snprintf(fit, nf, "a lognormal fitted to %u values by their logs' mean and sd "
                 "(Kolmogorov-Smirnov D = %.3f)", n, d);
        ok = kib(p95) > kib(median) && kib(median) > 0;
    }
    free(l);
    free(s);
    return ok;
}

/* ---- the catalog's blocks ---------------------------------------------------- */

/* The catalog profile's top-level block for `key` (its lines, comments
 * taken out), written marked assumed; 0 when the catalog has none. */
static int catalog_block(wr *w, const char *key, const char *value)
{
    const char *p = w->cat, *end = w->cat + w->cat_len;
    size_t kl = strlen(key);
    int in = 0, found = 0;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *e = nl != NULL ? nl : end;
        const char *s = p;
        p = nl != NULL ? nl + 1 : end;
        int top = s < e && *s != ' ' && *s != '#' && *s != '-';
        if (top) {
            in = (size_t)(e - s) > kl && memcmp(s, key, kl) == 0 && s[kl] == ':';
            found |= in;
        }
        if (!in)
            continue;
        const char *t = s;
        while (t < e && *t == ' ')
            t++;
        if (t == e || *t == '#')
            continue; /* a comment line of the catalog's */
        /* the line without its comment: a '#' after a space, outside quotes */
        const char *cut = e;
        int quoted = 0;
        for (const char *q = s; q < e; q++) {
            if (*q == '"')
                quoted = !quoted;
            if (!quoted && *q == '#' && q > s && (q[-1] == ' ' || q[-1] == '\t')) {
                cut = q;
                break;
            }
        }
        while (cut > s && (cut[-1] == ' ' || cut[-1] == '\t'))
            cut--;
        put(w, "%.*s", (int)(cut - s), s);
        put(w, top ? "   # assumed: not in these captures (the catalog's %s)\n" : "\n",
            w->cat_name);
    }
    if (found && value != NULL)
        assumed(w, value);
    return found;
}

/* ---- Android -------------------------------------------------------------------- */

static void android_kill(wr *w)
{
    over mode, wm[3];
    int has_mode = figure(w, CAP_MINFREE_MODE, &mode);
    int has_wm = figure(w, CAP_WMARK_MIN, &wm[0]) && figure(w, CAP_WMARK_LOW, &wm[1]) &&
                 figure(w, CAP_WMARK_HIGH, &wm[2]);
    const cap_phone *lv = NULL; /* the first capture that gives minfree levels */
    for (unsigned i = 0; i < w->m && lv == NULL; i++)
        if (w->c[i]->nminfree > 0)
            lv = w->c[i];
    int minfree = has_mode && mode.median >= 0.5;
    if ((minfree && lv == NULL) || (!minfree && !has_wm)) {
        catalog_block(w, "kill", "kill.watermarks");
        return;
    }
    put(w, "kill:\n  rule: lmk\n");
    if (has_mode && w->c[0]->f[CAP_MINFREE_MODE].line > 1)
        put(w, "  mode: %s   # %s\n", minfree ? "minfree" : "psi", mode.src);
    else
        put(w, "  mode: psi   # no ro.lmk.use_minfree_levels nor ro.lmk.use_psi set: lmkd's "
               "defaults (use_psi true, use_minfree_levels false: lmkd.cpp, 18578a5)\n");
    if (minfree) {
        put(w, "  minfree:   # %s:%u: sys.lmk.minfree_levels, pages of 4 KiB\n", lv->file,
            lv->minfree_line);
        for (unsigned k = 0; k < lv->nminfree; k++)
            put(w, "    - {adj: %d, free: %lldKiB}\n", lv->minfree_adj[k],
                kib(lv->minfree_bytes[k]));
        char src[CAP_HOW];
        snprintf(src, sizeof src, "%s:%u: sys.lmk.minfree_levels", lv->file, lv->minfree_line);
        measured(w, "kill.minfree", src);
    }
    if (has_wm) {
        put(w, "  watermarks: {min: %lldKiB, low: %lldKiB, high: %lldKiB}   # %s\n",
            kib(wm[0].median), kib(wm[1].median), kib(wm[2].median), wm[0].src);
        measured(w, "kill.watermarks", wm[0].src);
    }
}

static void android_lmkd(wr *w)
{
    const cap_phone *c = w->c[0];
    if (c->nprops == 0) {
        catalog_block(w, "lmkd", "lmkd");
        return;
    }
    put(w, "lmkd:   # %s: the ro.lmk properties the phone sets (the rest lmkd's defaults)\n",
        c->file);
    for (unsigned k = 0; k < c->nprops; k++) {
        const mdl_lmkd_prop *pr = mdl_lmkd_prop_named(c->prop_name[k]);
        if (pr != NULL && pr->is_bool)
            put(w, "  %s: %s   # %s:%u\n", c->prop_name[k], c->prop_value[k] ? "true" : "false",
                c->file, c->prop_line[k]);
        else
            put(w, "  %s: %lld   # %s:%u\n", c->prop_name[k], (long long)c->prop_value[k],
                c->file, c->prop_line[k]);
    }
    char src[CAP_HOW];
    snprintf(src, sizeof src, "%s: SYSTEM PROPERTIES (ro.lmk.*, ro.config.low_ram)", c->file);
    measured(w, "lmkd", src);
}

/* cached_apps, and cached_app_size: its average process */
static void android_cached(wr *w)
{
    over o, cnt;
    if (figure(w, CAP_CACHED_APPS, &o)) {
        char dist[160], fit[200];
        if (o.n >= 3 && lognormal(w, o.v, o.n, dist, sizeof dist, fit, sizeof fit)) {
            put(w, "cached_apps: %s   # the processes lmkd kills before the app, over %u "
                   "samples from %u captures (from %.300s): %s\n", dist, o.n, o.captures, o.src,
                fit);
            measured(w, "cached_apps", fit);
        } else if (o.n == 2 && o.hi > o.lo) {
            put(w, "cached_apps: {dist: uniform, min: %lldKiB, max: %lldKiB}   # the two "
                   "captures' figures: %s\n", kib(o.lo), kib(o.hi), o.src);
            measured(w, "cached_apps", o.src);
        } else {
            size_line(w, "cached_apps", "cached_apps", &o, 0);
        }
        over size;
        if (figure(w, CAP_CACHED_COUNT, &cnt) && cnt.median >= 1) {
            /* each capture's average process, their median */
            double avg[RPL_CAPTURES_MAX];
            unsigned n = 0;
            for (unsigned i = 0; i < w->m; i++)
                if (w->c[i]->f[CAP_CACHED_COUNT].v >= 1)
                    avg[n++] = w->c[i]->f[CAP_CACHED_APPS].v / w->c[i]->f[CAP_CACHED_COUNT].v;
            gsl_sort(avg, 1, n);
            memset(&size, 0, sizeof size);
            size.n = n;
            size.median = gsl_stats_median_from_sorted_data(avg, 1, n);
            size.lo = avg[0];
            size.hi = avg[n - 1];
            snprintf(size.src, sizeof size.src, "cached_apps over the processes it counts%s "
                     "(%.300s)", n == 1 ? "" : ", the median of the captures'", cnt.src);
            size_line(w, "cached_app_size", "cached_app_size", &size, 0);
        } else {
            catalog_block(w, "cached_app_size", "cached_app_size");
        }
    } else {
        catalog_block(w, "cached_apps", "cached_apps");
        catalog_block(w, "cached_app_size", "cached_app_size");
    }
}

/* pressure and pressure_size: the foreground's rises in the traces' polls,
 * when they cover 5 minutes or more; else the catalog's. */
static void android_pressure(wr *w)
{
    double span = 0, sizes[4096];
    unsigned n = 0, traces = 0;
    const cap_phone *first = NULL;
    for (unsigned i = 0; i < w->m; i++) {
        const cap_phone *c = w->c[i];
        if (c->polls < 2)
            continue;
        span += c->span_s;
        traces++;
        first = first != NULL ? first : c;
        for (unsigned k = 0; k < c->nspikes && n < 4096; k++)
            sizes[n++] = c->spike[k];
    }
    if (span < 300) {
        catalog_block(w, "pressure", "pressure");
        catalog_block(w, "pressure_size", "pressure_size");
        return;
    }
    char src[SRC_MAX];
    snprintf(src, sizeof src, "%.127s%s: %u rises of a foreground (adj 0) process's memory by "
             "%d MiB or more over consecutive polls, in %.1f min of polls", first->file,
             traces > 1 ? " and the other traces" : "", n, TRC_PF_SPIKE_MIN_KB / 1024,
             span / 60);
    if (n == 0) {
        put(w, "# pressure: none   # %s: no spike\n", src);
        measured(w, "pressure", src);
        return;
    }
    put(w, "pressure: {dist: exponential, mean: %.0fs}   # %s: their mean interval\n",
        span / n > 1 ? span / n : 1, src);
    measured(w, "pressure", src);
    char dist[200], fit[200];
    if (n > 100 && lognormal(w, sizes, n, dist, sizeof dist, fit, sizeof fit)) {
        put(w, "pressure_size: %s   # %s\n", dist, fit);
    } else {
        put(w, "pressure_size: {dist: empirical, values: [");
        for (unsigned k = 0; k < n; k++)
            put(w, "%s%lldKiB", k ? ", " : "", kib(sizes[k]));
        put(w, "]}   # the rises themselves\n");
    }
    measured(w, "pressure_size", src);
}

/* zram and the page cache */
static void android_pages(wr *w, double ram, double system)
{
    over zs, zr;
    int has_zs = figure(w, CAP_ZRAM_SIZE, &zs), has_zr = figure(w, CAP_ZRAM_RATIO, &zr);
    if (has_zs && zs.median > 0) {
        put(w, "zram:\n");
        size_line(w, "zram.size", "size", &zs, 2);
        if (has_zr) {
            put(w, "  ratio: %.2f   # %s\n", zr.median, zr.src);
            measured(w, "zram.ratio", zr.src);
        } else {
            put(w, "  ratio: 2.5   # assumed: not in these captures (zram held too little to "
                   "measure; lz4 on app memory gives 2-3)\n");
            assumed(w, "zram.ratio");
        }
    } else if (!catalog_block(w, "zram", "zram.size")) {
        assumed(w, "zram.size");
    } else {
        assumed(w, "zram.ratio");
    }
    over pc, ws;
    if (figure(w, CAP_PAGE_CACHE, &pc) && figure(w, CAP_PAGE_CACHE_WS, &ws) &&
        pc.median < ram - system && ws.median <= pc.median) {
        put(w, "page_cache:\n");
        size_line(w, "page_cache.size", "size", &pc, 2);
        size_line(w, "page_cache.working_set", "working_set", &ws, 2);
    } else {
        catalog_block(w, "page_cache", "page_cache.size");
        assumed(w, "page_cache.working_set");
    }
}

static void android_body(wr *w, double ram, double system)
{
    over o;
    android_cached(w);
    android_pressure(w);
    android_kill(w);
    android_lmkd(w);
    catalog_block(w, "counts", NULL);
    if (figure(w, CAP_JAVA_HEAP, &o))
        size_line(w, "java_heap_limit", "java_heap_limit", &o, 0);
    else
        catalog_block(w, "java_heap_limit", "java_heap_limit");
    catalog_block(w, "anr_timeout", NULL);
    catalog_block(w, "warning_at", "warning_at");
    catalog_block(w, "speed", "speed");
    catalog_block(w, "delegates", "delegates");
    catalog_block(w, "successor", "successor");
    catalog_block(w, "previous_ttl", NULL);
    if (figure(w, CAP_SDK, &o)) {
        put(w, "exit_info: %s   # %s: ApplicationExitInfo came with API level 30\n",
            o.lo >= 30 ? "true" : "false", o.src);
        measured(w, "exit_info", o.src);
    } else if (!catalog_block(w, "exit_info", "exit_info")) {
        assumed(w, "exit_info");
    }
    android_pages(w, ram, system);
    catalog_block(w, "storage_read", "storage_read");
    catalog_block(w, "reclaim_rate", "reclaim_rate");
    if (!catalog_block(w, "swappiness", "swappiness"))
        assumed(w, "swappiness");
}

/* ---- iOS ---------------------------------------------------------------------------- */

typedef struct band_sum {
    int band;
    unsigned lo, hi;       /* processes per capture */
    double *pool;          /* every capture's sizes */
    unsigned npool;
} band_sum;

/* The bands over the captures, ascending, each with its counts' range
 * and every capture's sizes (in pool, band after band). */
static unsigned ios_bands(const wr *w, band_sum *b, double *pool)
{
    unsigned nb = 0;
    /* the bands, ascending */
    for (unsigned i = 0; i < w->m; i++)
        for (unsigned k = 0; k < w->c[i]->nbands; k++) {
            int band = w->c[i]->band[k].band;
            unsigned j = 0;
            while (j < nb && b[j].band != band)
                j++;
            if (j == nb && nb < CAP_BANDS_MAX)
                b[nb++].band = band;
        }
    for (unsigned x = 1; x < nb; x++)
        for (unsigned y = x; y > 0 && b[y - 1].band > b[y].band; y--) {
            band_sum t = b[y];
            b[y] = b[y - 1];
            b[y - 1] = t;
        }
    unsigned used = 0;
    for (unsigned j = 0; j < nb; j++) {
        b[j].pool = pool + used;
        b[j].lo = UINT32_MAX;
        for (unsigned i = 0; i < w->m; i++) {
            unsigned cnt = 0;
            for (unsigned k = 0; k < w->c[i]->nbands; k++)
                if (w->c[i]->band[k].band == b[j].band) {
                    cnt = w->c[i]->band[k].count;
                    memcpy(b[j].pool + b[j].npool, w->c[i]->band[k].size, cnt * sizeof *pool);
                    b[j].npool += cnt;
                }
            b[j].lo = cnt < b[j].lo ? cnt : b[j].lo;
            b[j].hi = cnt > b[j].hi ? cnt : b[j].hi;
        }
        used += b[j].npool;
    }
    return nb;
}

static void ios_others(wr *w)
{
    band_sum b[CAP_BANDS_MAX];
    memset(b, 0, sizeof b);
    unsigned total_pool = 0;
    for (unsigned i = 0; i < w->m; i++)
        for (unsigned k = 0; k < w->c[i]->nbands; k++)
            total_pool += w->c[i]->band[k].count;
    double *pool = malloc((total_pool + 1) * sizeof *pool);
    w->oom |= pool == NULL;
    if (pool == NULL || w->c[0]->f[CAP_SYSTEM].line == 0) {
        free(pool);
        catalog_block(w, "others", "others");
        return;
    }
    unsigned nb = ios_bands(w, b, pool);
    /* the model holds 8 groups: the highest bands beyond go into the 8th */
    unsigned ng = nb < GROUPS_MAX ? nb : GROUPS_MAX;
    if (nb > GROUPS_MAX) {
        put(w, "# bands %d to %d are written as band %d: the model holds %d groups\n",
            b[GROUPS_MAX - 1].band, b[nb - 1].band, b[GROUPS_MAX - 1].band, GROUPS_MAX);
        for (unsigned j = GROUPS_MAX; j < nb; j++) {
            b[GROUPS_MAX - 1].lo += b[j].lo;
            b[GROUPS_MAX - 1].hi += b[j].hi;
            b[GROUPS_MAX - 1].npool += b[j].npool; /* contiguous in pool */
        }
    }
    /* and 64 processes: counts scaled down, each process's size up */
    unsigned most = 0;
    for (unsigned j = 0; j < ng; j++)
        most += b[j].hi;
    double f = most > PROCS_MAX ? (double)PROCS_MAX / most : 1.0;
    if (f < 1.0)
        put(w, "# %u processes below the foreground band at most: the model holds %d, so each "
               "band's count is scaled by %.3f and each process's size by its inverse (the "
               "band's memory kept, in fewer, larger kills)\n", most, PROCS_MAX, f);
    put(w, "others:   # the processes below the foreground band (the app in front and the "
           "bands from %d up are the system's), by band: %s\n", MDL_BAND_FOREGROUND,
        w->m == 1 ? "counts and footprints (rpages) as the report lists them"
                  : "counts over the captures, footprints fitted over them");
    for (unsigned j = 0; j < ng; j++) {
        unsigned lo = (unsigned)floor(b[j].lo * f), hi = (unsigned)floor(b[j].hi * f);
        if (hi == 0)
            hi = 1;
        double scale = f < 1.0 && b[j].hi > 0 ? (double)b[j].hi / hi : 1.0;
        for (unsigned k = 0; k < b[j].npool; k++)
            b[j].pool[k] *= scale;
        put(w, "  - {band: %d, count: ", b[j].band);
        if (lo == hi)
            put(w, "%u", hi);
        else
            put(w, "{min: %u, max: %u}", lo, hi);
        char dist[160], fit[200] = "";
        if (w->m > 1 && lognormal(w, b[j].pool, b[j].npool, dist, sizeof dist, fit, sizeof fit)) {
            put(w, ", size: %s}   # %s\n", dist, fit);
        } else if (b[j].npool > 0) {
            put(w, ", size: {dist: empirical, values: [");
            for (unsigned k = 0; k < b[j].npool; k++)
                put(w, "%s%lldKiB", k ? ", " : "", kib(b[j].pool[k] > 0 ? b[j].pool[k] : 0));
            put(w, "]}}   # the footprints listed\n");
        } else {
            put(w, ", size: 0KiB}\n");
        }
    }
    char src[CAP_HOW];
    snprintf(src, sizeof src, "%s: processes (priority, rpages)%s", w->c[0]->file,
             w->m > 1 ? ", and the other captures'" : "");
    measured(w, "others", src);
    free(pool);
}

static void ios_body(wr *w, double ram, double system)
{
    catalog_block(w, "kill", "kill.limit");
    catalog_block(w, "counts", NULL);
    catalog_block(w, "launch_watchdog", NULL);
    catalog_block(w, "warning_at", "warning_at");
    catalog_block(w, "pageshortage", "pageshortage");
    ios_others(w);
    over comp;
    if (figure(w, CAP_COMPRESSED, &comp))
        put(w, "# the compressor occupied %.0f MiB (%s)\n", comp.median / MIB, comp.src);
    over cr;
    if (figure(w, CAP_COMP_RATIO, &cr)) {
        put(w, "compressor: {ratio: %.2f}   # %s\n", cr.median, cr.src);
        measured(w, "compressor.ratio", cr.src);
    } else {
        catalog_block(w, "compressor", "compressor.ratio");
    }
    over pc;
    /* the working set: the catalog's share of the file pages (assumed) */
    if (figure(w, CAP_PAGE_CACHE, &pc) && pc.median < ram - system) {
        put(w, "page_cache:\n");
        size_line(w, "page_cache.size", "size", &pc, 2);
        put(w, "  working_set: %lldKiB   # assumed: not in these captures (half the file "
               "pages, the catalog's share)\n", kib(pc.median / 2));
        assumed(w, "page_cache.working_set");
    } else {
        catalog_block(w, "page_cache", "page_cache.size");
        assumed(w, "page_cache.working_set");
    }
    catalog_block(w, "storage_read", "storage_read");
    catalog_block(w, "background_gpu", NULL);
    catalog_block(w, "speed", "speed");
    catalog_block(w, "delegates", "delegates");
    catalog_block(w, "successor", "successor");
}

/* ---- the profile ---------------------------------------------------------------- */

/* The profile's name: --name, else the model's in lower case. */
static void profile_name(const rpl_device_opts *o, const cap_phone *c, int suffix, double cls,
                         char *out, size_t n)
{
    char model[64] = "";
    size_t k = 0;
    for (const char *s = c->model; *s != '\0' && k + 1 < sizeof model; s++)
        model[k++] = isalnum((unsigned char)*s) ? (char)tolower((unsigned char)*s) : '-';
    model[k] = '\0';
    if (o->name != NULL && suffix)
        snprintf(out, n, "%.30s-%.30s", o->name, model[0] != '\0' ? model : "phone");
    else if (o->name != NULL)
        snprintf(out, n, "%s", o->name);
    else if (model[0] != '\0')
        snprintf(out, n, "%.50s", model);
    else
        snprintf(out, n, "%s-%gg-measured", c->os == MDL_OS_IOS ? "iphone" : "android", cls);
}

/* The capture that names the phone: the first with a model (a trace names
 * none), else the first. */
static const cap_phone *lead(const cap_phone *const *c, unsigned m)
{
    for (unsigned i = 0; i < m; i++)
        if (c[i]->model[0] != '\0')
            return c[i];
    return c[0];
}

static void header(wr *w, const char *name, double cls)
{
    const cap_phone *c = lead(w->c, w->m);
    put(w, "# Device profile: %s, from %u capture%s of %s%s%s (the %g GB class), written by "
           "oomsim import device.\n", name, w->m, w->m == 1 ? "" : "s",
        c->model[0] != '\0' ? c->model : "a phone of unknown model", c->maker[0] ? ", made by " : "",
        c->maker, cls);
    for (unsigned i = 0; i < w->m; i++) {
        const cap_phone *x = w->c[i];
        put(w, "# capture %u: %s (%s%s%s)\n", i + 1, x->file, rpl_capture_kind_name(x->kind),
            x->device[0] != '\0' ? ", the build's device " : "", x->device);
        for (unsigned k = 0; k < x->nmissing; k++)
            put(w, "#   %s\n", x->missing[k]);
    }
    for (unsigned i = 0; i < w->m; i++) {
        const cap_phone *x = w->c[i];
        if (x->ngroups == 0)
            continue;
        if (x->no_lines)
            put(w, "# %s: by OOM adjustment, each group's median over %u polls:", x->file,
                x->polls);
        else
            put(w, "# %s: Total PSS by OOM adjustment (line %u):", x->file, x->group[0].line);
        for (unsigned k = 0; k < x->ngroups; k++)
            put(w, "%s %s %u processes %.0f MiB (%s)", k ? "," : "", x->group[k].label,
                x->group[k].count, x->group[k].pss / MIB,
                x->group[k].role == CAP_ROLE_SYSTEM ? "system" : "killed before the app");
        put(w, "\n");
        if (w->m > 3 && i >= 2) {
            put(w, "# (and the other captures' tables)\n");
            break;
        }
    }
    /* what was read and not used, over the captures */
    char kinds[32][48];
    unsigned counts[32], nk = 0, other = 0;
    for (unsigned i = 0; i < w->m; i++) {
        other += w->c[i]->ign_other;
        for (unsigned k = 0; k < w->c[i]->nign; k++) {
            unsigned j = 0;
            while (j < nk && strcmp(kinds[j], w->c[i]->ign_kind[k]) != 0)
                j++;
            if (j == nk && nk == 32) {
                other += w->c[i]->ign_count[k];
                continue;
            }
            if (j == nk) {
                snprintf(kinds[nk], sizeof kinds[0], "%s", w->c[i]->ign_kind[k]);
                counts[nk++] = 0;
            }
            counts[j] += w->c[i]->ign_count[k];
        }
    }
    if (nk > 0) {
        put(w, "# ignored (read, not used):");
        for (unsigned j = 0; j < nk; j++)
            put(w, "%s %u %s", j ? "," : "", counts[j], kinds[j]);
        if (other > 0)
            put(w, ", %u of other kinds", other);
        put(w, "\n");
    }
}

static void quoted(wr *w, const char *s)
{
    put(w, "\"");
    for (; *s != '\0'; s++) {
        if (*s == '"' || *s == '\\')
            put(w, "\\%c", *s);
        else if ((unsigned char)*s >= 0x20)
            put(w, "%c", *s);
    }
    put(w, "\"");
}

/* name, about (the model and the maker) and os */
static void identity(wr *w, const char *name)
{
    const cap_phone *const c[1] = {lead(w->c, w->m)};
    put(w, "name: %s\n", name);
    put(w, "about: ");
    char about[256];
    snprintf(about, sizeof about, "%s%s%s, measured from %u capture%s (oomsim import device)",
             c[0]->maker, c[0]->maker[0] ? " " : "",
             c[0]->model[0] ? c[0]->model : c[0]->device[0] ? c[0]->device : "a phone",
             w->m, w->m == 1 ? "" : "s");
    quoted(w, about);
    if (c[0]->model_line > 0)
        put(w, "   # %s:%u: the model", c[0]->file, c[0]->model_line);
    put(w, "\nos: %s\n", c[0]->os == MDL_OS_IOS ? "ios" : "android");
}

int rpl__device_write(const cap_phone *const *c, unsigned m, const rpl_device_opts *o,
                      int suffix, rpl_device_yaml *out, sim_error *err)
{
    wr *w = calloc(1, sizeof *w);
    if (w == NULL)
        return sim_error_set(err, SIM_ENOMEM, "import device: out of memory");
    w->c = c;
    w->m = m;
    over ram, sys;
    figure(w, CAP_RAM, &ram);
    double cls = rpl__ram_class(ram.median);
    int rc = o->catalog(o->ctx, c[0]->os, ram.median, &w->cat_name, &w->cat, &w->cat_len, err);
    if (rc != SIM_OK) {
        free(w);
        return rc;
    }
    char name[64];
    profile_name(o, lead(c, m), suffix, cls, name, sizeof name);
    /* the body first: the header lists what it measured and assumed */
    sim_text body = {0};
    header(w, name, cls);
    sim_text head = w->t;
    memset(&w->t, 0, sizeof w->t);
    identity(w, name);
    char ramsrc[SRC_MAX];
    snprintf(ramsrc, sizeof ramsrc, "%.360s (the %g GB class)", ram.src, cls);
    memcpy(ram.src, ramsrc, sizeof ram.src);
    size_line(w, "ram", "ram", &ram, 0);
    double system = 0;
    if (figure(w, CAP_SYSTEM, &sys) && sys.median < ram.median) {
        size_line(w, "system", "system", &sys, 0);
        system = sys.median;
    } else {
        catalog_block(w, "system", "system");
        system = ram.median / 3;
    }
    if (c[0]->os == MDL_OS_IOS)
        ios_body(w, ram.median, system);
    else
        android_body(w, ram.median, system);
    put(w, "# where each measured value came from (oomsim validate and run report it)\n");
    put(w, "measured:\n");
    for (unsigned k = 0; k < w->nm; k++) {
        put(w, "  %s: ", w->mkey[k]);
        quoted(w, w->msrc[k]);
        put(w, "\n");
    }
    body = w->t;
    w->t = head;
    put(w, "# Measured (%u): ", w->nm);
    for (unsigned k = 0; k < w->nm; k++)
        put(w, "%s%s", k ? ", " : "", w->mkey[k]);
    put(w, "\n# Assumed, not in these captures (%u, the catalog's %s figures; docs/devices.md "
           "says how to measure each): ", w->na, w->cat_name);
    for (unsigned k = 0; k < w->na; k++)
        put(w, "%s%s", k ? ", " : "", w->akey[k]);
    put(w, "\n");
    char *b = sim_text_done(&body);
    int ok = b != NULL;
    if (ok)
        put(w, "%s", b);
    free(b);
    out->yaml = sim_text_done(&w->t);
    snprintf(out->name, sizeof out->name, "%s", name);
    int oom = w->oom;
    free(w);
    if (out->yaml == NULL || !ok || oom) {
        free(out->yaml);
        out->yaml = NULL;
        return sim_error_set(err, SIM_ENOMEM, "import device: out of memory");
    }
    return SIM_OK;
}
