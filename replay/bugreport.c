/* bugreport.c - an Android bugreport's main text as one phone's figures
 * (`oomsim import device`, docs/devices.md "Android bugreports").
 *
 * dumpstate (frameworks/native/cmds/dumpstate/dumpstate.cpp) writes each
 * file and command between a title line "------ TITLE (WHAT) ------" and a
 * closing "------ 0.012s was the duration of 'TITLE' ------"; dumpsys's
 * services follow a line of dashes and "DUMP OF SERVICE [PRIORITY] NAME:".
 * The sections read:
 *   MEMORY INFO (/proc/meminfo), VIRTUAL MEMORY STATS (/proc/vmstat),
 *   ZONEINFO (/proc/zoneinfo), PSI memory (/proc/pressure/memory) and
 *   SYSTEM PROPERTIES (getprop), each by the reader `oomsim lmkd` uses
 *   (snapshot.c), and dumpsys meminfo's system-wide part: "Total PSS by
 *   OOM adjustment" (or RSS), "Total RAM", "Free RAM", "Used RAM", "Lost
 *   RAM" and "ZRAM".
 * A section missing or cut is said in the profile's header with what could
 * then not be derived; the rest is still read. */
#include "capture_int.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KIB 1024.0

typedef struct text_line {
    const char *s;
    size_t n;
    unsigned no;
} text_line;

static int starts(const text_line *l, const char *p)
{
    size_t k = strlen(p);
    return l->n >= k && memcmp(l->s, p, k) == 0;
}

static const char *find_in(const text_line *l, const char *p)
{
    size_t k = strlen(p);
    for (size_t i = 0; i + k <= l->n; i++)
        if (memcmp(l->s + i, p, k) == 0)
            return l->s + i;
    return NULL;
}

int rpl__bugreport_detect(const char *data, size_t len)
{
    size_t n = len < 8192 ? len : 8192;
    static const char mark[] = "== dumpstate: ";
    for (size_t i = 0; i + sizeof mark - 1 <= n; i++)
        if (memcmp(data + i, mark, sizeof mark - 1) == 0 && (i == 0 || data[i - 1] == '\n'))
            return 1;
    return 0;
}

/* ---- the sections ------------------------------------------------------ */

/* The dumpstate sections read, by the start of their title. */
static const struct {
    const char *title, *file, *what;
} sections[] = {
    {"MEMORY INFO (/proc/meminfo)", "meminfo",
     "RAM (MemTotal), the kernel's share, the page cache"},
    {"VIRTUAL MEMORY STATS (/proc/vmstat)", "vmstat.1", "the page counters"},
    {"ZONEINFO (/proc/zoneinfo)", "zoneinfo", "the watermarks"},
    {"PSI memory (/proc/pressure/memory)", "pressure_memory", "the memory pressure"},
    {"SYSTEM PROPERTIES", "props",
     "the model, the SDK level, the Java heap limit, lmkd's mode and properties"},
};
enum { NSECTIONS = sizeof sections / sizeof *sections };

typedef struct br {
    cap_phone *p;
    const char *name;
    rpl_lmkd_snapshot snap;
    rpl_kvs *kv;
    int seen[NSECTIONS];
    int cut[NSECTIONS];
    unsigned title[NSECTIONS];          /* the line of its title */
    unsigned kv_from[NSECTIONS], kv_to[NSECTIONS]; /* its values in kv */
    sim_error *err;
} br;

/* One section's text, read by snapshot.c's reader of its file.  A section
 * cut short that its reader refuses is said and left out: the rest of the
 * bugreport is still read. */
static int read_section(br *b, int k, const char *text, size_t len, unsigned base, int cut)
{
    char label[192];
    snprintf(label, sizeof label, "%s: the %s section (line %u)", b->name, sections[k].title,
             base);
    b->seen[k] = 1;
    b->cut[k] = cut;
    b->title[k] = base;
    b->kv_from[k] = b->kv->n;
    int rc = rpl__snapshot_section(&b->snap, sections[k].file, b->name, label, base, b->kv,
                                   text, len, b->err);
    b->kv_to[k] = b->kv->n;
    if (rc == SIM_EINPUT && cut) {
        cap__missing(b->p, "the %s section is cut and unreadable (%s): %s not derived",
                     sections[k].title, b->err->msg, sections[k].what);
        b->seen[k] = 0;
        b->cut[k] = 2;
        sim_error_clear(b->err);
        return SIM_OK;
    }
    return rc;
}

/* The title of a dumpstate line "------ TITLE ------", or NULL; *closing
 * set when it is the closing "... was the duration of ..." line. */
static int section_line(const text_line *l, int *closing)
{
    if (!starts(l, "------ ") || l->n < 14)
        return 0;
    size_t n = l->n;
    while (n > 0 && l->s[n - 1] == '\r')
        n--;
    if (n < 14 || memcmp(l->s + n - 7, " ------", 7) != 0)
        return 0;
    *closing = find_in(l, "was the duration of") != NULL;
    return 1;
}

/* ---- dumpsys meminfo's system-wide part --------------------------------- */

/* "1,234,567K", "1234567 kB", "12.5M": bytes, and where the number ends. */
static int size_of(const char *s, const char *end, double *bytes, const char **after)
{
    while (s < end && *s == ' ')
        s++;
    double v = 0;
    int digits = 0, dot = 0;
    double scale = 1;
    for (; s < end && ((*s >= '0' && *s <= '9') || *s == ',' || *s == '.'); s++) {
        if (*s == ',')
            continue;
        if (*s == '.') {
            if (dot++)
                return -1;
            continue;
        }
        if (dot)
            scale /= 10;
        v = v * 10 + (*s - '0');
        digits++;
        if (digits > 15)
            return -1;
    }
    if (digits == 0)
        return -1;
    v *= scale;
    while (s < end && *s == ' ')
        s++;
    double unit = KIB; /* dumpsys meminfo counts in kB */
    if (s < end && (*s == 'K' || *s == 'k'))
        s++;
    else if (s < end && *s == 'M')
        unit = KIB * KIB, s++;
    else if (s < end && *s == 'G')
        unit = KIB * KIB * KIB, s++;
    if (s < end && (*s == 'B' || *s == 'b'))
        s++;
    *bytes = v * unit;
    *after = s;
    return 0;
}

typedef struct meminfo_sys {
    int in_table;        /* 1: inside "Total PSS/RSS by OOM adjustment" */
    int table_pss;       /* the table read is PSS's (RSS's only when PSS's is absent) */
    int tables;
    double lost, zram_phys, zram_swap, zram_total, total_ram;
    unsigned lost_line, zram_line, total_line;
    unsigned other_lines;
} meminfo_sys;

/* "    123,456K: Native" or "        45,678K: surfaceflinger (pid 512)". */
static int oom_line(br *b, meminfo_sys *m, const text_line *l)
{
    const char *end = l->s + l->n, *after;
    double bytes;
    if (size_of(l->s, end, &bytes, &after) < 0 || after >= end || *after != ':')
        return 0; /* the table has ended */
    if (!m->table_pss)
        return 1; /* RSS's table beside PSS's: counted, not used */
    const char *label = after + 1;
    while (label < end && *label == ' ')
        label++;
    cap_phone *p = b->p;
    if (find_in(l, "(pid ") != NULL) { /* a process of the last group */
        if (p->ngroups > 0)
            p->group[p->ngroups - 1].count++;
        return 1;
    }
    const char *cut = label;
    while (cut < end && *cut != '(' && *cut != '\r')
        cut++;
    while (cut > label && cut[-1] == ' ')
        cut--;
    size_t n = (size_t)(cut - label);
    char name[40];
    int role = n < sizeof name ? (snprintf(name, sizeof name, "%.*s", (int)n, label),
                                  rpl__oom_role(name)) : -1;
    if (role < 0) {
        cap__ignored(p, "OOM groups of other names", 1);
        return 1;
    }
    if (p->ngroups == CAP_GROUPS_MAX)
        return 1;
    cap_group *g = &p->group[p->ngroups++];
    snprintf(g->label, sizeof g->label, "%.*s", (int)n, label);
    g->pss = bytes;
    g->count = 0;
    g->line = l->no;
    g->role = role;
    return 1;
}

/* One line of dumpsys meminfo's output. */
static void meminfo_line(br *b, meminfo_sys *m, const text_line *l)
{
    const char *end = l->s + l->n, *after;
    if (m->in_table) {
        if (oom_line(b, m, l))
            return;
        m->in_table = 0;
    }
    if (find_in(l, "Total PSS by OOM adjustment:") != NULL ||
        find_in(l, "Total RSS by OOM adjustment:") != NULL) {
        int pss = find_in(l, "Total PSS") != NULL;
        /* PSS's table is the one used; RSS's only where there is no PSS's */
        m->table_pss = pss || (m->tables == 0);
        if (m->table_pss && pss && m->tables > 0 && !m->in_table)
            b->p->ngroups = 0; /* a PSS table after an RSS one replaces it */
        m->tables++;
        m->in_table = 1;
        return;
    }
    const char *at;
    double v;
    if ((at = find_in(l, "Total RAM:")) != NULL &&
        size_of(at + 10, end, &v, &after) == 0) {
        m->total_ram = v, m->total_line = l->no;
    } else if ((at = find_in(l, "Lost RAM:")) != NULL &&
               size_of(at + 9, end, &v, &after) == 0) {
        m->lost = v, m->lost_line = l->no;
    } else if ((at = find_in(l, "ZRAM:")) != NULL && size_of(at + 5, end, &v, &after) == 0) {
        /* "ZRAM: P physical used for S in swap (T total swap)" */
        const char *f = find_in(l, "used for ");
        const char *t = find_in(l, "(");
        double s, tot;
        if (f != NULL && t != NULL && size_of(f + 9, end, &s, &after) == 0 &&
            size_of(t + 1, end, &tot, &after) == 0) {
            m->zram_phys = v, m->zram_swap = s, m->zram_total = tot;
            m->zram_line = l->no;
        }
    } else if (find_in(l, "Free RAM:") != NULL || find_in(l, "Used RAM:") != NULL) {
        cap__ignored(b->p, "Free RAM and Used RAM lines", 1);
    } else if (l->n > 0) {
        m->other_lines++;
    }
}

/* ---- the figures -------------------------------------------------------- */

static double kv_kb(const rpl_kvs *kv, const char *name, unsigned *line)
{
    const rpl_kv *e = rpl__kv(kv, name);
    if (e == NULL)
        return -1;
    if (line != NULL && e->line > *line)
        *line = e->line;
    return strtod(e->text, NULL);
}

/* "256m", "512k", "1g", "268435456": bytes, or -1. */
static double heap_size(const char *t)
{
    char *end;
    errno = 0;
    double v = strtod(t, &end);
    if (end == t || errno == ERANGE || v < 0)
        return -1;
    double unit = 1;
    if (*end == 'k' || *end == 'K')
        unit = KIB, end++;
    else if (*end == 'm' || *end == 'M')
        unit = KIB * KIB, end++;
    else if (*end == 'g' || *end == 'G')
        unit = KIB * KIB * KIB, end++;
    return *end == '\0' ? v * unit : -1;
}

static int prop_true(const char *t)
{
    return strcmp(t, "true") == 0 || strcmp(t, "1") == 0 || strcmp(t, "y") == 0 ||
           strcmp(t, "yes") == 0 || strcmp(t, "on") == 0;
}

/* meminfo's figures: RAM, the kernel's share, the page cache. */
static double from_meminfo(br *b, unsigned *kline)
{
    cap_phone *p = b->p;
    unsigned line = 0;
    double total = kv_kb(b->kv, "MemTotal", &line);
    if (total > 0)
        cap__set(p, CAP_RAM, total * KIB, line, "MemTotal, %.0f kB", total);
    /* the kernel's own memory, as ActivityManagerService counts it in
     * "Used RAM" (MemInfoReader.getKernelUsedSizeKb): Shmem, SUnreclaim,
     * VmallocUsed, PageTables and KernelStack */
    static const char *const kernel[] = {"Shmem", "SUnreclaim", "VmallocUsed", "PageTables",
                                         "KernelStack"};
    double k = 0;
    *kline = 0;
    for (size_t i = 0; i < sizeof kernel / sizeof *kernel; i++) {
        double v = kv_kb(b->kv, kernel[i], kline);
        if (v > 0)
            k += v;
    }
    unsigned fl = 0;
    double act = kv_kb(b->kv, "Active(file)", &fl), inact = kv_kb(b->kv, "Inactive(file)", &fl);
    if (act >= 0 && inact >= 0) {
        cap__set(p, CAP_PAGE_CACHE, (act + inact) * KIB, fl,
                 "Active(file) + Inactive(file): %.0f + %.0f kB, the file LRU", act, inact);
        cap__set(p, CAP_PAGE_CACHE_WS, act * KIB, fl,
                 "Active(file), %.0f kB: file pages referenced again since they were read "
                 "(mm/workingset.c's active list), the part reclaim keeps", act);
    }
    unsigned sl = 0;
    double swap = kv_kb(b->kv, "SwapTotal", &sl);
    if (swap > 0 && p->f[CAP_ZRAM_SIZE].line == 0)
        cap__set(p, CAP_ZRAM_SIZE, swap * KIB, sl, "SwapTotal, %.0f kB (zram's disk size)", swap);
    return k * KIB;
}

static void from_props(br *b)
{
    cap_phone *p = b->p;
    const rpl_kv *e;
    if ((e = rpl__kv(b->kv, "ro.product.model")) != NULL) {
        rpl__utf8_copy(p->model, sizeof p->model, e->text);
        p->model_line = e->line;
    }
    if ((e = rpl__kv(b->kv, "ro.product.manufacturer")) != NULL)
        rpl__utf8_copy(p->maker, sizeof p->maker, e->text);
    if ((e = rpl__kv(b->kv, "ro.build.version.sdk")) != NULL && atoi(e->text) > 0)
        cap__set(p, CAP_SDK, atoi(e->text), e->line, "ro.build.version.sdk = %s", e->text);
    if ((e = rpl__kv(b->kv, "dalvik.vm.heapgrowthlimit")) != NULL && heap_size(e->text) > 0)
        cap__set(p, CAP_JAVA_HEAP, heap_size(e->text), e->line,
                 "dalvik.vm.heapgrowthlimit = %s", e->text);
    const rpl_kv *mf = rpl__kv(b->kv, "ro.lmk.use_minfree_levels");
    const rpl_kv *psi = rpl__kv(b->kv, "ro.lmk.use_psi");
    int minfree = (mf != NULL && prop_true(mf->text)) || (psi != NULL && !prop_true(psi->text));
    if (mf != NULL || psi != NULL)
        cap__set(p, CAP_MINFREE_MODE, minfree, (mf != NULL ? mf : psi)->line, "%s = %s",
                 (mf != NULL ? mf : psi)->name, (mf != NULL ? mf : psi)->text);
    else if (b->seen[4])
        cap__set(p, CAP_MINFREE_MODE, 0, 0, "-");
    /* sys.lmk.minfree_levels: "PAGES:ADJ,PAGES:ADJ,..." (lmkd writes it) */
    if ((e = rpl__kv(b->kv, "sys.lmk.minfree_levels")) != NULL) {
        const char *s = e->text;
        while (*s != '\0' && p->nminfree < CAP_MINFREE_MAX) {
            char *end;
            long pages = strtol(s, &end, 10);
            if (*end != ':')
                break;
            long adj = strtol(end + 1, &end, 10);
            if (pages < 0 || adj < -1000 || adj > 1000 ||
                (p->nminfree > 0 && adj <= p->minfree_adj[p->nminfree - 1]))
                break;
            p->minfree_adj[p->nminfree] = (int)adj;
            p->minfree_bytes[p->nminfree++] = (double)pages * 4096.0;
            s = *end == ',' ? end + 1 : end;
        }
        p->minfree_line = e->line;
    }
    /* lmkd's properties as its reader resolved them (an experiment's
     * persist.device_config.lmkd_native value over ro.lmk's) */
    for (const mdl_lmkd_prop *pr = mdl_lmkd_prop_table; pr->name != NULL; pr++) {
        int64_t v = mdl_lmkd_prop_get(&b->snap.props, pr);
        if (v < 0 || p->nprops == CAP_PROPS_MAX)
            continue;
        char ro[96], ex[128];
        snprintf(ro, sizeof ro, "ro.lmk.%s", pr->name);
        snprintf(ex, sizeof ex, "persist.device_config.lmkd_native.%s", pr->name);
        const rpl_kv *at = rpl__kv(b->kv, ex);
        if (at == NULL)
            at = rpl__kv(b->kv, strcmp(pr->name, "low_ram") == 0 ? "ro.config.low_ram" : ro);
        snprintf(p->prop_name[p->nprops], sizeof p->prop_name[0], "%s", pr->name);
        p->prop_value[p->nprops] = v;
        p->prop_line[p->nprops++] = at != NULL ? at->line : 0;
    }
}

/* The figures from what was read. */
static void derive(br *b, const meminfo_sys *m, int meminfo_seen)
{
    cap_phone *p = b->p;
    unsigned kline = 0;
    double kernel = b->seen[0] ? from_meminfo(b, &kline) : -1;
    if (p->f[CAP_RAM].line == 0 && m->total_line > 0)
        cap__set(p, CAP_RAM, m->total_ram, m->total_line, "dumpsys meminfo's Total RAM");
    from_props(b);
    if (b->seen[2] && !b->cut[2]) {
        /* pages of 4 KiB: Android's page size on every phone before the
         * 16 KiB builds of Android 15, which say so in this property */
        const rpl_kv *ps = rpl__kv(b->kv, "ro.boot.hardware.cpu.pagesize");
        double page = ps != NULL && atoi(ps->text) > 0 ? atoi(ps->text) : 4096.0;
        static const char *const which[3] = {"min", "low", "high"};
        int64_t v[3] = {b->snap.wake.wmark_min, b->snap.wake.wmark_low, b->snap.wake.wmark_high};
        for (int w = 0; w < 3; w++)
            cap__set(p, (cap_key)(CAP_WMARK_MIN + w), (double)v[w] * page, b->title[2],
                     "the zones' %s watermarks, each with its zone's largest protection, summed "
                     "as lmkd's zoneinfo_parse does (the reader of oomsim lmkd): %lld pages of "
                     "%.0f KiB", which[w], (long long)v[w], page / KIB);
    } else if (b->cut[2] == 1) {
        cap__missing(p, "the ZONEINFO section is cut: the watermarks are not derived");
    }
    if (!meminfo_seen)
        cap__missing(p, "no dumpsys meminfo (DUMP OF SERVICE meminfo): the system's processes, "
                        "the other apps and zram's ratio are not derived");
    double sys = 0, cached = 0;
    unsigned ncached = 0, sys_line = 0, cached_line = 0, nsys = 0;
    for (unsigned k = 0; k < p->ngroups; k++) {
        const cap_group *g = &p->group[k];
        if (g->role == CAP_ROLE_SYSTEM)
            sys += g->pss, sys_line = g->line, nsys++;
        else
            cached += g->pss, ncached += g->count, cached_line = g->line;
    }
    if (nsys > 0 && kernel >= 0) {
        double lost = m->lost_line > 0 ? m->lost : 0;
        cap__set(p, CAP_SYSTEM, kernel + sys + lost, sys_line,
                 "the kernel (meminfo's Shmem + SUnreclaim + VmallocUsed + PageTables + "
                 "KernelStack, line %u: %.0f MiB) + the OOM groups marked system above "
                 "(%.0f MiB)%s%.0f MiB", kline,
                 kernel / (KIB * KIB), sys / (KIB * KIB),
                 m->lost_line > 0 ? " + Lost RAM: " : "", lost / (KIB * KIB));
    }
    if (p->ngroups > 0) {
        cap__set(p, CAP_CACHED_APPS, cached, cached_line,
                 "the OOM table's Foreground, Previous, B Services and Cached: the processes "
                 "lmkd kills before the app (%u processes)", ncached);
        cap__set(p, CAP_CACHED_COUNT, ncached, cached_line, "the processes listed under them");
    }
    if (m->zram_line > 0) {
        cap__set(p, CAP_ZRAM_SIZE, m->zram_total, m->zram_line, "ZRAM's total swap");
        if (m->zram_phys >= KIB * KIB && m->zram_swap > m->zram_phys)
            cap__set(p, CAP_ZRAM_RATIO, m->zram_swap / m->zram_phys, m->zram_line,
                     "ZRAM's in swap / physical used: %.0f / %.0f MiB", m->zram_swap / (KIB * KIB),
                     m->zram_phys / (KIB * KIB));
        else
            cap__missing(p, "zram held under 1 MiB: its compression ratio is not measured");
    }
}

/* The values read and not used, by section. */
static void tally_values(br *b)
{
    static const char *const used[] = {"MemTotal", "Shmem", "SUnreclaim", "VmallocUsed",
                                       "PageTables", "KernelStack", "Active(file)",
                                       "Inactive(file)", "SwapTotal"};
    static const char *const kinds[NSECTIONS] = {
        "meminfo lines", "vmstat counters", NULL, NULL,
        "properties"};
    for (int k = 0; k < NSECTIONS; k++) {
        unsigned n = 0;
        for (unsigned i = b->kv_from[k]; kinds[k] != NULL && i < b->kv_to[k]; i++) {
            int is_used = k == 4 ? strcmp(b->kv->e[i].name, "ro.product.manufacturer") != 0 &&
                                       strcmp(b->kv->e[i].name, "ro.product.device") != 0 &&
                                       strcmp(b->kv->e[i].name, "ro.build.id") != 0 &&
                                       strcmp(b->kv->e[i].name, "ro.build.version.release") != 0
                                 : 0;
            for (size_t u = 0; k == 0 && u < sizeof used / sizeof *used; u++)
                is_used |= strcmp(b->kv->e[i].name, used[u]) == 0;
            n += !is_used;
        }
        if (n > 0)
            cap__ignored(b->p, kinds[k], n);
    }
    if (b->seen[3])
        cap__ignored(b->p, "PSI memory lines", 1);
    if (b->kv->over > 0)
        cap__ignored(b->p, "values past the reader's table", b->kv->over);
}

/* ---- the walk ----------------------------------------------------------- */

/* The walk's state between lines, so that the text may come in pieces. */
typedef struct walk {
    br b;
    meminfo_sys m;
    int open, in_meminfo, meminfo_seen, rc;
    unsigned body_line, no;
    sim_text body;   /* the open section's text */
    sim_text carry;  /* a line cut by the end of a piece */
    size_t seen;     /* bytes fed */
} walk;

static int walk_start(walk *w, const char *name, cap_phone *p, sim_error *err)
{
    memset(w, 0, sizeof *w);
    w->b.p = p;
    w->b.name = name;
    w->b.err = err;
    w->open = -1;
    w->b.kv = calloc(1, sizeof *w->b.kv);
    if (w->b.kv == NULL)
        return sim_error_set(err, SIM_ENOMEM, "%s: out of memory", name);
    rpl_lmkd_snapshot_init(&w->b.snap);
    p->os = MDL_OS_ANDROID;
    return SIM_OK;
}

/* The open section ends (cut: without its closing line). */
static void close_section(walk *w, int cut)
{
    const char *text = w->body.v != NULL ? w->body.v : "";
    if (w->body.oom)
        w->rc = sim_error_set(w->b.err, SIM_ENOMEM, "%s: out of memory", w->b.name);
    else
        w->rc = read_section(&w->b, w->open, text, w->body.n, w->body_line, cut);
    free(w->body.v);
    w->body = (sim_text)SIM_TEXT_INIT;
    w->open = -1;
}

/* One line of the text (without its newline). */
static void walk_line(walk *w, const char *s, size_t n)
{
    text_line l = {s, n, ++w->no};
    int closing = 0;
    int is_section = section_line(&l, &closing);
    if (is_section || starts(&l, "DUMP OF SERVICE ") || starts(&l, "---------")) {
        if (w->open >= 0)
            close_section(w, !closing);
        w->in_meminfo = 0;
    }
    if (is_section && !closing) {
        for (int k = 0; k < NSECTIONS; k++)
            if (find_in(&l, sections[k].title) == l.s + 7 && !w->b.seen[k]) {
                w->open = k;
                w->body_line = l.no;
            }
        if (w->open < 0)
            cap__ignored(w->b.p, "sections", 1);
    } else if (w->open >= 0) {
        sim_text_put(&w->body, s, n);
        sim_text_put(&w->body, "\n", 1);
    } else if (starts(&l, "DUMP OF SERVICE ") && find_in(&l, " meminfo:") != NULL &&
               !w->meminfo_seen) {
        w->in_meminfo = w->meminfo_seen = 1;
    } else if (w->in_meminfo) {
        meminfo_line(&w->b, &w->m, &l);
    }
}

/* A piece of the text: its whole lines walked, the rest carried. */
static int walk_feed(walk *w, const char *data, size_t len)
{
    const char *q = data, *end = data + len;
    w->seen += len;
    while (w->rc == SIM_OK && q < end) {
        const char *nl = memchr(q, '\n', (size_t)(end - q));
        if (nl == NULL) {
            sim_text_put(&w->carry, q, (size_t)(end - q));
            break;
        }
        if (w->carry.n > 0) {
            sim_text_put(&w->carry, q, (size_t)(nl - q));
            if (!w->carry.oom)
                walk_line(w, w->carry.v, w->carry.n);
            w->carry.n = 0;
        } else {
            walk_line(w, q, (size_t)(nl - q));
        }
        q = nl + 1;
    }
    if (w->rc == SIM_OK && w->carry.oom)
        w->rc = sim_error_set(w->b.err, SIM_ENOMEM, "%s: out of memory", w->b.name);
    return w->rc;
}

/* The end of the text: the last line, a section cut, the figures. */
static int walk_end(walk *w)
{
    cap_phone *p = w->b.p;
    if (w->rc == SIM_OK && w->carry.n > 0)
        walk_line(w, w->carry.v, w->carry.n);
    if (w->rc == SIM_OK && w->open >= 0) /* the text ends inside a section: cut */
        close_section(w, 1);
    if (w->rc == SIM_OK) {
        for (int k = 0; k < NSECTIONS; k++) {
            if (!w->b.seen[k] && w->b.cut[k] == 0)
                cap__missing(p, "no %s section: %s not derived", sections[k].title,
                             sections[k].what);
            else if (w->b.cut[k] == 1 && k != 2)
                cap__missing(p, "the %s section (line %u) is cut (no closing line): read as "
                             "far as it goes", sections[k].title, w->b.title[k]);
        }
        derive(&w->b, &w->m, w->meminfo_seen);
        if (w->m.other_lines > 0)
            cap__ignored(p, "dumpsys meminfo lines", w->m.other_lines);
        tally_values(&w->b);
    }
    free(w->b.kv);
    free(w->body.v);
    free(w->carry.v);
    return w->rc;
}

int rpl__bugreport_read(const char *data, size_t len, const char *name, cap_phone *p,
                        sim_error *err)
{
    walk *w = malloc(sizeof *w);
    if (w == NULL)
        return sim_error_set(err, SIM_ENOMEM, "%s: out of memory", name);
    int rc = walk_start(w, name, p, err);
    if (rc == SIM_OK) {
        walk_feed(w, data, len);
        rc = walk_end(w);
    }
    free(w);
    return rc;
}

/* The pieces a file is read in: small enough to stay in the cache. */
#define PIECE ((size_t)1 << 20)

int rpl__bugreport_file(FILE *f, const char *name, cap_phone *p, sim_error *err)
{
    walk *w = malloc(sizeof *w);
    char *buf = malloc(PIECE);
    int rc = w == NULL || buf == NULL ? sim_error_set(err, SIM_ENOMEM, "%s: out of memory", name)
                                      : walk_start(w, name, p, err);
    int started = rc == SIM_OK;
    size_t got;
    while (rc == SIM_OK && (got = fread(buf, 1, PIECE, f)) > 0)
        rc = walk_feed(w, buf, got);
    if (rc == SIM_OK && ferror(f))
        rc = w->rc = sim_error_set(err, SIM_EIO, "cannot read %s: %s", name, strerror(errno));
    if (started)
        rc = walk_end(w);
    free(buf);
    free(w);
    return rc;
}

/* ---- the zip ------------------------------------------------------------ */

/* libarchive, opened when the first zip is read (dlopen by soname, as
 * PLplot is), so that no other command loads it and the libraries it
 * brings.  The functions used, with archive.h's types. */
#include <archive.h>
#include <archive_entry.h>
#include <dlfcn.h>
#include <pthread.h>

#define AR_SYMBOLS(X)                                                                       \
    X(archive_read_new) X(archive_read_support_format_zip) X(archive_read_support_filter_all) \
    X(archive_read_open_memory) X(archive_read_open_filename) X(archive_read_next_header) X(archive_entry_pathname)       \
    X(archive_entry_size) X(archive_read_data) X(archive_read_free) X(archive_error_string)

static struct ar_api {
#define AR_MEMBER(f) __typeof__(f) *f;
    AR_SYMBOLS(AR_MEMBER)
#undef AR_MEMBER
} ar;
static int ar_loaded;
static char ar_why[200];
static pthread_once_t ar_once = PTHREAD_ONCE_INIT;

static void ar_open(void)
{
    void *h = dlopen("libarchive.so.13", RTLD_NOW | RTLD_LOCAL);
    if (h == NULL) {
        snprintf(ar_why, sizeof ar_why, "%s", dlerror());
        return;
    }
#define AR_LOAD(f)                                                                          \
    if ((*(void **)&ar.f = dlsym(h, #f)) == NULL) {                                        \
        snprintf(ar_why, sizeof ar_why, "libarchive.so.13 has no %s", #f);                   \
        return;                                                                             \
    }
    AR_SYMBOLS(AR_LOAD)
#undef AR_LOAD
    ar_loaded = 1;
}

/* The archive opened on the zip's bytes (data) or its file (path);
 * NULL with err set. */
static struct archive *zip_open(const char *data, size_t len, const char *path,
                                const char *name, sim_error *err)
{
    struct archive *a = ar.archive_read_new();
    if (a == NULL) {
        sim_error_set(err, SIM_ENOMEM, "%s: out of memory", name);
        return NULL;
    }
    ar.archive_read_support_format_zip(a);
    int r = path != NULL ? ar.archive_read_open_filename(a, path, PIECE)
                         : ar.archive_read_open_memory(a, data, len);
    if (r != ARCHIVE_OK) {
        sim_error_set(err, SIM_EINPUT, "%s: not a zip libarchive reads: %s", name,
                      ar.archive_error_string(a));
        ar.archive_read_free(a);
        return NULL;
    }
    return a;
}

/* The archive moved to its entry `want` (or, want NULL, the first
 * bugreport-*.txt at its top): 1, its name in entry; 0 none; -1 damaged. */
static int zip_find(struct archive *a, const char *want, char *entry, size_t cap)
{
    struct archive_entry *e;
    int r;
    while ((r = ar.archive_read_next_header(a, &e)) == ARCHIVE_OK) {
        const char *path = ar.archive_entry_pathname(e);
        if (path == NULL)
            continue;
        size_t pl = strlen(path);
        int match = want != NULL ? strcmp(path, want) == 0
                                 : strncmp(path, "bugreport-", 10) == 0 && pl > 14 &&
                                       strcmp(path + pl - 4, ".txt") == 0 &&
                                       strchr(path, '/') == NULL;
        if (match) {
            snprintf(entry, cap, "%s", path);
            return 1;
        }
    }
    return r == ARCHIVE_EOF ? 0 : -1;
}

/* The current entry's next bytes, up to cap: how many (0 at its end), or
 * -1 when the zip is damaged. */
static long zip_read(struct archive *a, char *buf, size_t cap)
{
    size_t got = 0;
    while (got < cap) {
        la_ssize_t k = ar.archive_read_data(a, buf + got, cap - got);
        if (k < 0)
            return -1;
        if (k == 0)
            break;
        got += (size_t)k;
    }
    return (long)got;
}

/* main_entry.txt's one line: the main text's name (dumpstate, Android 9
 * and later), or "" when the zip has none. */
static int zip_main_name(const char *data, size_t len, const char *path, const char *name,
                         char *want, size_t cap, sim_error *err)
{
    want[0] = '\0';
    struct archive *a = zip_open(data, len, path, name, err);
    if (a == NULL)
        return err->code;
    char entry[256];
    int found = zip_find(a, "main_entry.txt", entry, sizeof entry);
    int rc = SIM_OK;
    long n = found == 1 ? zip_read(a, want, cap - 1) : 0;
    if (found < 0 || n < 0)
        rc = sim_error_set(err, SIM_EINPUT, "%s: the zip is damaged: %s", name,
                           ar.archive_error_string(a));
    want[n > 0 ? n : 0] = '\0';
    want[strcspn(want, "\r\n")] = '\0';
    ar.archive_read_free(a);
    return rc;
}

int rpl__bugreport_zip(const char *data, size_t len, const char *path, const char *name,
                       cap_phone *p, sim_error *err)
{
    pthread_once(&ar_once, ar_open);
    if (!ar_loaded)
        return sim_error_set(err, SIM_EIO, "%s: cannot open libarchive to read the zip (%s): "
                             "install Debian's libarchive13", name, ar_why);
    char want[256];
    int rc = zip_main_name(data, len, path, name, want, sizeof want, err);
    if (rc != SIM_OK)
        return rc;
    struct archive *a = zip_open(data, len, path, name, err);
    if (a == NULL)
        return err->code;
    char entry[256] = "", *buf = malloc(PIECE);
    walk *w = malloc(sizeof *w);
    int found = zip_find(a, want[0] != '\0' ? want : NULL, entry, sizeof entry);
    long n = found == 1 && buf != NULL ? zip_read(a, buf, PIECE) : 0;
    if (buf == NULL || w == NULL)
        rc = sim_error_set(err, SIM_ENOMEM, "%s: out of memory", name);
    else if (found < 0 || n < 0)
        rc = sim_error_set(err, SIM_EINPUT, "%s: the zip is damaged: %s", name,
                           ar.archive_error_string(a));
    else if (found == 0 || !rpl__bugreport_detect(buf, (size_t)n))
        rc = sim_error_set(err, SIM_EINPUT, "%s: a zip that is not a bugreport: %s", name,
                           found == 1 ? "its main text does not open with \"== dumpstate:\""
                           : want[0] != '\0' ? "main_entry.txt names an entry it does not hold"
                                             : "no main_entry.txt and no bugreport-*.txt in it");
    if (rc == SIM_OK) {
        /* the lines are the main entry's: comments name it inside the zip */
        char inner[400];
        snprintf(inner, sizeof inner, "%s:%s", name, entry);
        rpl__utf8_copy(p->file, sizeof p->file, inner);
        rc = walk_start(w, p->file, p, err);
        int started = rc == SIM_OK;
        while (rc == SIM_OK && n > 0) {
            rc = walk_feed(w, buf, (size_t)n);
            if (rc == SIM_OK && (n = zip_read(a, buf, PIECE)) < 0)
                rc = w->rc = sim_error_set(err, SIM_EINPUT, "%s: %s: the zip is damaged: %s",
                                           name, entry, ar.archive_error_string(a));
        }
        if (started)
            rc = walk_end(w);
    }
    ar.archive_read_free(a);
    free(buf);
    free(w);
    return rc;
}
