/* snapshot.c - one lmkd wake-up read from the kernel's own files
 * (`oomsim lmkd SNAPSHOT_DIR`, docs/lmkd.md): /proc/meminfo,
 * /proc/zoneinfo, /proc/vmstat at the last reset and now,
 * /proc/pressure/memory, the PSI level that woke lmkd, the ro.lmk
 * properties and the page size.
 *
 * Each file is parsed the way lmkd.cpp (AOSP commit 18578a5) reads it:
 * meminfo_parse (kB divided by the page size in kB), zoneinfo_parse with
 * zoneinfo_parse_protection (a zone ends at "pagesets"; one whose present
 * is 0 is not populated; the watermarks summed by calc_zone_watermarks
 * with each zone's largest protection), vmstat_parse (workingset_refault,
 * or workingset_refault_file from kernel 5.9), psi_parse_mem.
 * zoneinfo_parse_node is followed line by line: where lmkd fails (no
 * per-node stats, a third node) there is no decision; where it reads less
 * than the file (a node's first zone before 4.8) a note says so.  Beyond
 * lmkd, a field the decision reads must be there, once, within what a
 * phone can have: an error naming the file, not a silent 0 or the last
 * of two. */
#include "capture_int.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define FILE_MAX ((size_t)4 << 20)

/* One line of a file: its text without the newline, its number. */
typedef struct line {
    const char *s;
    size_t len;
    unsigned no;
} line;

typedef struct cursor {
    const char *p, *end;
    unsigned no;
} cursor;

/* Where a file's text came from, for errors: the name a line is numbered
 * in, the line before the text's first, and the name of the whole text
 * (a file of a snapshot directory: both its name; a bugreport's section:
 * the bugreport, and the bugreport with the section's title). */
typedef struct src {
    const char *name, *label;
    unsigned base;
    rpl_kvs *kv; /* every value read, kept (NULL: not kept) */
} src;

static void keep(const src *f, const char *name, size_t n, const char *text, unsigned no)
{
    rpl_kvs *kv = f->kv;
    if (kv == NULL)
        return;
    if (kv->n == RPL_KVS_MAX) {
        kv->over++;
        return;
    }
    rpl_kv *e = &kv->e[kv->n++];
    snprintf(e->name, sizeof e->name, "%.*s", (int)n, name);
    snprintf(e->text, sizeof e->text, "%s", text);
    e->line = no;
}

static int next_line(cursor *c, line *l)
{
    if (c->p >= c->end)
        return 0;
    const char *nl = memchr(c->p, '\n', (size_t)(c->end - c->p));
    l->s = c->p;
    l->len = (size_t)((nl != NULL ? nl : c->end) - c->p);
    l->no = ++c->no;
    c->p = nl != NULL ? nl + 1 : c->end;
    return 1;
}

/* The line's words, at most max, each copied NUL-terminated (cut at 63). */
#define WORD_MAX 64
static unsigned words(const line *l, char w[][WORD_MAX], unsigned max)
{
    unsigned n = 0;
    size_t i = 0;
    while (i < l->len && n < max) {
        while (i < l->len && (l->s[i] == ' ' || l->s[i] == '\t' || l->s[i] == '\r'))
            i++;
        if (i >= l->len)
            break;
        size_t k = 0;
        while (i < l->len && l->s[i] != ' ' && l->s[i] != '\t' && l->s[i] != '\r') {
            if (k + 1 < WORD_MAX)
                w[n][k++] = l->s[i];
            i++;
        }
        w[n++][k] = '\0';
    }
    return n;
}

/* A non-negative decimal integer, the whole word. */
static int number(const char *s, int64_t *out)
{
    if (*s < '0' || *s > '9')
        return -1;
    errno = 0;
    char *end;
    long long v = strtoll(s, &end, 10);
    if (*end != '\0' || errno == ERANGE)
        return -1;
    *out = v;
    return 0;
}

static int bad(sim_error *err, const src *f, unsigned no, const char *what, const char *word)
{
    return sim_error_set(err, SIM_EINPUT, "%s:%u: %s%s%s%s", f->name, no, what,
                         word != NULL ? " \"" : "", word != NULL ? word : "",
                         word != NULL ? "\"" : "");
}

/* ---- meminfo ---------------------------------------------------------- */

/* No phone has a PiB: a size past it is not a phone's (SwapTotal at
 * INT64_MAX kB would make every threshold lmkd computes overflow). */
#define KB_MAX (INT64_C(1) << 40)

static const char *const meminfo_names[] = {"MemFree:", "CmaFree:", "SwapTotal:", "SwapFree:",
                                            "Inactive(file):", "Active(anon):",
                                            "Inactive(anon):", "Shmem:"};
enum { MEMINFO_N = sizeof meminfo_names / sizeof *meminfo_names };

static int parse_meminfo(const src *sf, const char *text, size_t len, int64_t page_kb,
                         mdl_lmkd_mem *m, sim_error *err)
{
    int64_t *at[MEMINFO_N] = {&m->free, &m->cma_free, &m->swap_total, &m->swap_free,
                              &m->inactive_file, &m->active_anon, &m->inactive_anon, &m->shmem};
    unsigned seen[MEMINFO_N] = {0};
    cursor c = {text, text + len, sf->base};
    line l;
    char w[3][WORD_MAX];
    while (next_line(&c, &l)) {
        unsigned n = words(&l, w, 3);
        size_t wl = n >= 2 ? strlen(w[0]) : 0;
        if (wl > 1 && w[0][wl - 1] == ':' && w[1][0] >= '0' && w[1][0] <= '9')
            keep(sf, w[0], wl - 1, w[1], l.no);
        for (int f = 0; n > 0 && f < MEMINFO_N; f++) {
            if (strcmp(w[0], meminfo_names[f]) != 0)
                continue;
            int64_t kb;
            if (seen[f])
                return sim_error_set(err, SIM_EINPUT, "%s:%u: a second %s line (the first at "
                                     "line %u): two files pasted together?", sf->name, l.no,
                                     meminfo_names[f], seen[f]);
            if (n < 2 || number(w[1], &kb) < 0)
                return bad(err, sf, l.no, "not a number of kB after", meminfo_names[f]);
            if (kb > KB_MAX)
                return bad(err, sf, l.no, "more than a phone has (over 1 PiB):", w[1]);
            if (n == 3 && strcmp(w[2], "kB") != 0)
                return bad(err, sf, l.no, "a unit other than kB:", w[2]);
            *at[f] = kb / page_kb; /* meminfo_parse_line: val / page_k */
            seen[f] = l.no;
        }
    }
    for (int f = 0; f < MEMINFO_N; f++)
        if (!seen[f] && f != 1) /* CmaFree: only kernels with CMA show it */
            return sim_error_set(err, SIM_EINPUT, "%s: no %s line", sf->label,
                                 meminfo_names[f]);
    return SIM_OK;
}

/* ---- vmstat ----------------------------------------------------------- */

static const char *const vmstat_names[] = {"nr_inactive_file", "nr_active_file",
                                           "workingset_refault", "workingset_refault_file",
                                           "pgscan_kswapd", "pgscan_direct", "pgrefill"};
enum { VMSTAT_N = sizeof vmstat_names / sizeof *vmstat_names };

static int parse_vmstat(const src *sf, const char *text, size_t len, mdl_lmkd_mem *m,
                        sim_error *err)
{
    int64_t v[VMSTAT_N] = {0};
    unsigned seen[VMSTAT_N] = {0};
    int zone_split = 0; /* pgscan_kswapd_normal and kin: a kernel before 4.8 */
    cursor c = {text, text + len, sf->base};
    line l;
    char w[2][WORD_MAX];
    while (next_line(&c, &l)) {
        unsigned n = words(&l, w, 2);
        if (n < 1)
            continue;
        if (n == 2 && w[1][0] >= '0' && w[1][0] <= '9')
            keep(sf, w[0], strlen(w[0]), w[1], l.no);
        zone_split |= strncmp(w[0], "pgscan_kswapd_", 14) == 0;
        for (int f = 0; f < VMSTAT_N; f++)
            if (strcmp(w[0], vmstat_names[f]) == 0) {
                if (seen[f])
                    return sim_error_set(err, SIM_EINPUT, "%s:%u: a second %s line (the first "
                                         "at line %u): two files pasted together?", sf->name,
                                         l.no, vmstat_names[f], seen[f]);
                if (number(w[1], &v[f]) < 0 || v[f] > (INT64_C(1) << 62))
                    return bad(err, sf, l.no, "not a count a kernel keeps after",
                               vmstat_names[f]);
                seen[f] = l.no;
            }
    }
    if (!seen[4] && !seen[2] && !seen[3])
        return sim_error_set(err, SIM_EINPUT, "%s: no pgscan_kswapd and no workingset_refault "
                             "line%s: this kernel predates the counters lmkd's PSI mode reads "
                             "(workingset_refault from 3.15, one pgscan_kswapd for the node "
                             "from 4.8, PSI itself from 4.20); on it lmkd runs its vmpressure "
                             "mode, which oomsim lmkd does not decide", sf->label,
                             zone_split ? " (only the per-zone pgscan_kswapd_* of kernels "
                                          "before 4.8)" : "");
    for (int f = 0; f < VMSTAT_N; f++)
        if (!seen[f] && f != 2 && f != 3)
            return sim_error_set(err, SIM_EINPUT, "%s: no %s line%s", sf->label, vmstat_names[f],
                                 zone_split && (f == 4 || f == 5)
                                     ? ": only the per-zone counters of a kernel before 4.8, "
                                       "whose vmstat lmkd's PSI mode does not read" : "");
    if (!seen[2] && !seen[3])
        return sim_error_set(err, SIM_EINPUT, "%s: no workingset_refault_file line (nor "
                             "workingset_refault, its name before kernel 5.9)", sf->label);
    m->nr_inactive_file = v[0];
    m->nr_active_file = v[1];
    m->refault = v[2] != 0 ? v[2] : v[3]; /* lmkd: workingset_refault ?: ..._file */
    m->pgscan_kswapd = v[4];
    m->pgscan_direct = v[5];
    m->pgrefill = v[6];
    return SIM_OK;
}

/* ---- zoneinfo --------------------------------------------------------- */

/* No phone has a PiB: a count past it is not a phone's (an overflowing
 * SwapTotal would turn every threshold to nonsense). */
#define PAGES_MAX (INT64_C(1) << 38) /* 1 PiB of 4 KiB pages */

typedef struct zone {
    unsigned header;         /* the line of "Node N, zone NAME" */
    char name[WORD_MAX];
    int node;
    int open;                /* before its pagesets */
    int lost;                /* lmkd's node parser read its first lines (no per-node stats) */
    int64_t v[4];            /* min, low, high, present */
    unsigned seen[4];        /* the line of each, 0: none */
    unsigned prot_line;      /* its protection: line, 0: none */
    int64_t max_protection;
} zone;

static const char *const zone_fields[4] = {"min", "low", "high", "present"};

static void note(rpl_lmkd_snapshot *s, const char *text)
{
    if (s->nnotes == RPL_LMKD_NOTES_MAX) {
        s->notes_over++;
        return;
    }
    snprintf(s->notes[s->nnotes++], sizeof s->notes[0], "%s", text);
}

/* "(0, 1234, 1234, 1234)": the largest value. */
static int protection(const line *l, int64_t *max)
{
    const char *p = memchr(l->s, '(', l->len);
    const char *end = l->s + l->len;
    if (p == NULL)
        return -1;
    *max = 0;
    p++;
    for (;;) {
        while (p < end && *p == ' ')
            p++;
        int64_t v = 0;
        const char *start = p;
        while (p < end && *p >= '0' && *p <= '9') {
            if (v > PAGES_MAX)
                return -1;
            v = v * 10 + (*p++ - '0');
        }
        if (p == start || v > PAGES_MAX)
            return -1;
        if (v > *max)
            *max = v;
        while (p < end && *p == ' ')
            p++;
        if (p < end && *p == ')')
            return 0;
        if (p >= end || *p != ',')
            return -1;
        p++;
    }
}

/* A zone ended: its watermarks summed when populated (calc_zone_watermarks). */
static int close_zone(const src *sf, const zone *z, rpl_lmkd_snapshot *s, sim_error *err)
{
    char text[600];
    if (z->lost && !z->seen[3]) { /* lmkd never read its present: 0, left out */
        snprintf(text, sizeof text, "%.200s:%u: zone %s of node %d left out, as lmkd leaves it out: "
                 "the file has no per-node stats (a kernel before 4.8), so lmkd's "
                 "zoneinfo_parse_node reads this zone's own lines up to nr_active_file and its "
                 "min, low, high and present are never read", sf->name, z->header, z->name,
                 z->node);
        note(s, text);
        return SIM_OK;
    }
    if (!z->seen[3])
        return bad(err, sf, z->header, "no present line in zone", z->name);
    if (z->v[3] == 0)
        return SIM_OK; /* not populated: lmkd skips it */
    for (int f = 0; f < 3; f++)
        if (!z->seen[f])
            return sim_error_set(err, SIM_EINPUT, "%s:%u: no %s line in zone %s of node %d",
                                 sf->name, z->header, zone_fields[f], z->name, z->node);
    if (z->prot_line == 0) {
        snprintf(text, sizeof text, "%.200s:%u: zone %s of node %d has no protection: line: its "
                 "protection taken as 0, as lmkd takes it", sf->name, z->header, z->name,
                 z->node);
        note(s, text);
    }
    mdl_lmkd_wake *w = &s->wake;
    w->wmark_min += z->max_protection + z->v[0];
    w->wmark_low += z->max_protection + z->v[1];
    w->wmark_high += z->max_protection + z->v[2];
    return SIM_OK;
}

static int zone_line(const src *sf, zone *z, const line *l, sim_error *err)
{
    char w[2][WORD_MAX];
    unsigned n = words(l, w, 2);
    if (n == 0)
        return SIM_OK;
    if (strcmp(w[0], "pagesets") == 0) {
        z->open = 0;
        return SIM_OK;
    }
    if (strcmp(w[0], "protection:") == 0) {
        if (z->prot_line != 0)
            return sim_error_set(err, SIM_EINPUT, "%s:%u: a second protection: line in zone %s "
                                 "(the first at line %u): two files pasted together?", sf->name,
                                 l->no, z->name, z->prot_line);
        z->prot_line = l->no;
        return protection(l, &z->max_protection) < 0
                   ? bad(err, sf, l->no, "not a protection array \"(a, b, ...)\" of page "
                         "counts a phone can have", NULL)
                   : SIM_OK;
    }
    for (int f = 0; f < 4; f++)
        if (strcmp(w[0], zone_fields[f]) == 0) {
            if (z->seen[f])
                return sim_error_set(err, SIM_EINPUT, "%s:%u: a second %s line in zone %s "
                                     "(the first at line %u): two files pasted together?",
                                     sf->name, l->no, zone_fields[f], z->name, z->seen[f]);
            if (n < 2 || number(w[1], &z->v[f]) < 0 || z->v[f] > PAGES_MAX)
                return bad(err, sf, l->no, "not a page count a phone can have after",
                           zone_fields[f]);
            z->seen[f] = l->no;
            if (f == 3 && z->v[3] == 0)
                z->open = 0; /* lmkd stops reading a zone that is not populated */
        }
    return SIM_OK;
}

/* lmkd's zoneinfo_parse_node from a node's first header on: every line,
 * headers too, until both nr_inactive_file and nr_active_file are read;
 * a line of one word (or blanks only) fails it.  0 when they were found,
 * with *fields set when the lines read held a zone's own fields (the
 * layout before 4.8, where those counts are a zone's, not a node's); -1
 * and *at the line where lmkd fails (0: the end of the file). */
static int node_stats(cursor *c, const char *cur_zone, int node, const src *sf,
                      rpl_lmkd_snapshot *s, int *fields, unsigned *at)
{
    line l;
    int found = 0;
    *fields = 0;
    while (next_line(c, &l)) {
        char w[2][WORD_MAX];
        size_t k = 0;
        while (k < l.len && l.s[k] == '\r')
            k++;
        if (k == l.len)
            continue; /* strtok skips an empty line */
        unsigned n = words(&l, w, 2);
        if (n < 2) {
            *at = l.no;
            return -1;
        }
        int64_t v;
        int dummy_node;
        char name[WORD_MAX], text[600];
        char buf[160];
        size_t m = l.len < sizeof buf - 1 ? l.len : sizeof buf - 1;
        memcpy(buf, l.s, m);
        buf[m] = '\0';
        if (sscanf(buf, "Node %d, zone %63s", &dummy_node, name) == 2) {
            snprintf(text, sizeof text, "%.200s:%u: zone %s of node %d is never read as a zone: "
                     "lmkd's zoneinfo_parse_node, still looking for node %d's nr_inactive_file "
                     "and nr_active_file after zone %s, reads it as node lines", sf->name,
                     l.no, name, dummy_node, node, cur_zone);
            note(s, text);
        }
        for (int f = 0; f < 4; f++)
            *fields |= strcmp(w[0], zone_fields[f]) == 0;
        for (int f = 0; f < 2; f++)
            if (strcmp(w[0], f == 0 ? "nr_inactive_file" : "nr_active_file") == 0) {
                if (number(w[1], &v) < 0) {
                    *at = l.no;
                    return -1;
                }
                found |= 1 << f;
            }
        if (found == 3)
            return 0;
    }
    *at = 0;
    return -1;
}

/* lmkd 18578a5 fails on this zoneinfo: no decision, said with why. */
static int lmkd_fails(sim_error *err, const src *sf, unsigned no, const char *why)
{
    return sim_error_set(err, SIM_EINPUT, "%s:%u: %s: lmkd 18578a5's zoneinfo_parse fails on "
                         "this file (\"%s parse error\") and makes no decision, so neither "
                         "does oomsim lmkd", sf->name, no, why, "/proc/zoneinfo");
}

static int parse_zoneinfo(const src *sf, const char *text, size_t len, rpl_lmkd_snapshot *s,
                          sim_error *err)
{
    cursor c = {text, text + len, sf->base};
    line l;
    zone z;
    int zones = 0, nodes = 0, cur_node = 0;
    /* lmkd's view (oomsim lmkd): the file as zoneinfo_parse reads it, or a
     * capture's (a device profile from a bugreport: sf->kv kept), every
     * zone as the kernel wrote it, for the phone's page model */
    int lmkd_view = sf->kv == NULL;
    mdl_lmkd_wake *w = &s->wake;
    w->wmark_min = w->wmark_low = w->wmark_high = 0;
    while (next_line(&c, &l)) {
        char buf[160];
        int node;
        char name[WORD_MAX];
        size_t k = l.len < sizeof buf - 1 ? l.len : sizeof buf - 1;
        memcpy(buf, l.s, k);
        buf[k] = '\0';
        if (sscanf(buf, "Node %d, zone %63s", &node, name) != 2) {
            if (zones > 0 && z.open && zone_line(sf, &z, &l, err) != SIM_OK)
                return err->code;
            continue;
        }
        if (zones > 0 && close_zone(sf, &z, s, err) != SIM_OK)
            return err->code;
        memset(&z, 0, sizeof z);
        z.header = l.no;
        z.node = node;
        z.open = 1;
        snprintf(z.name, sizeof z.name, "%s", name);
        zones++;
        if (!lmkd_view || (nodes > 0 && node == cur_node))
            continue; /* another zone of the same node; or the kernel's view */
        if (nodes == 2) /* MAX_NR_NODES */
            return lmkd_fails(err, sf, l.no, "a third node (lmkd reads at most two, "
                              "MAX_NR_NODES)");
        nodes++;
        cur_node = node;
        unsigned at = 0;
        char why[160];
        if (node_stats(&c, z.name, node, sf, s, &z.lost, &at) < 0) {
            snprintf(why, sizeof why, "node %d has no per-node stats lmkd can read (its "
                     "nr_inactive_file and nr_active_file %s)", node,
                     at == 0 ? "are not in the file" : "are not found before a line that is "
                                                       "not a name and a value");
            return lmkd_fails(err, sf, at != 0 ? at : l.no, why);
        }
    }
    if (zones == 0)
        return sim_error_set(err, SIM_EINPUT, "%s: no \"Node N, zone NAME\" line",
                             sf->label);
    if (close_zone(sf, &z, s, err) != SIM_OK)
        return err->code;
    if (!(w->wmark_min <= w->wmark_low && w->wmark_low <= w->wmark_high))
        return sim_error_set(err, SIM_EINPUT, "%s: the summed watermarks are out of "
                             "order (min %" PRId64 ", low %" PRId64 ", high %" PRId64 ")",
                             sf->label, w->wmark_min, w->wmark_low, w->wmark_high);
    return SIM_OK;
}

/* ---- pressure, event, page size --------------------------------------- */

/* /proc/pressure/memory: the "full" line's avg10 (psi_parse_mem). */
static int parse_pressure(const src *sf, const char *text, size_t len, mdl_lmkd_wake *w,
                          sim_error *err)
{
    cursor c = {text, text + len, sf->base};
    line l;
    char wd[6][WORD_MAX];
    int seen = 0;
    while (next_line(&c, &l)) {
        unsigned n = words(&l, wd, 6);
        if (n == 0)
            continue;
        if (strcmp(wd[0], "some") != 0 && strcmp(wd[0], "full") != 0)
            return bad(err, sf, l.no, "expected \"some\" or \"full\", not", wd[0]);
        if (n < 2 || strncmp(wd[1], "avg10=", 6) != 0)
            return bad(err, sf, l.no, "no avg10= after", wd[0]);
        char *end;
        errno = 0;
        double v = strtod(wd[1] + 6, &end);
        if (*end != '\0' || errno == ERANGE || !(v >= 0.0 && v <= 100.0))
            return bad(err, sf, l.no, "avg10 is not a percent:", wd[1] + 6);
        if (strcmp(wd[0], "full") == 0) {
            w->full_avg10 = v;
            seen = 1;
        }
    }
    if (!seen)
        return sim_error_set(err, SIM_EINPUT, "%s: no \"full avg10=...\" line",
                             sf->label);
    w->has_psi = 1;
    return SIM_OK;
}

/* One word in the whole file; its line for errors. */
static int only_word(const char *file, const char *text, size_t len, char out[WORD_MAX],
                     sim_error *err)
{
    cursor c = {text, text + len, 0};
    line l;
    char wd[2][WORD_MAX];
    int got = 0;
    while (next_line(&c, &l)) {
        unsigned n = words(&l, wd, 2);
        if (n == 0)
            continue;
        if (n > 1 || got)
        {
            src sf = {file, file, 0, NULL};
            return bad(err, &sf, l.no, "expected one word, found more:", wd[n > 1 ? 1 : 0]);
        }
        memcpy(out, wd[0], WORD_MAX);
        got = 1;
    }
    return got ? SIM_OK : sim_error_set(err, SIM_EINPUT, "%s: empty", file);
}

static int parse_event(const char *text, size_t len, mdl_lmkd_wake *w, sim_error *err)
{
    static const char *const levels[] = {"low", "medium", "critical"};
    char word[WORD_MAX];
    if (only_word("event", text, len, word, err) != SIM_OK)
        return err->code;
    for (int k = 0; k < 3; k++)
        if (strcmp(word, levels[k]) == 0) {
            w->level = (mdl_psi_level)k;
            return SIM_OK;
        }
    return sim_error_set(err, SIM_EINPUT, "event: \"%s\" is not a PSI level (low, medium or "
                         "critical)", word);
}

static int parse_page_size(const char *text, size_t len, int64_t *page_kb, sim_error *err)
{
    char word[WORD_MAX];
    int64_t bytes;
    if (only_word("page_size", text, len, word, err) != SIM_OK)
        return err->code;
    if (number(word, &bytes) < 0 || bytes < 4096 || bytes > (1 << 20) ||
        (bytes & (bytes - 1)) != 0)
        return sim_error_set(err, SIM_EINPUT, "page_size: \"%s\" is not a page size in bytes "
                             "(a power of two from 4096 to 1048576)", word);
    *page_kb = bytes / 1024;
    return SIM_OK;
}

/* ---- props ------------------------------------------------------------ */

/* property_get_bool's words. */
static int prop_bool(const char *v, int64_t *out)
{
    static const char *const yes[] = {"1", "y", "yes", "on", "true"};
    static const char *const no[] = {"0", "n", "no", "off", "false"};
    for (int k = 0; k < 5; k++) {
        if (strcmp(v, yes[k]) == 0)
            return (int)(*out = 1);
        if (strcmp(v, no[k]) == 0)
            return (int)(*out = 0) + 1;
    }
    return -1;
}

/* "NAME=VALUE" or getprop's "[NAME]: [VALUE]": 0, or -1 when neither.  A
 * value longer than WORD_MAX - 1 (a build fingerprint) is cut: no value
 * lmkd or a device profile reads is that long. */
static int prop_line(const line *l, char name[128], char value[WORD_MAX])
{
    const char *p = l->s, *end = l->s + l->len;
    while (p < end && (*p == ' ' || *p == '\t'))
        p++;
    while (end > p && (end[-1] == '\r' || end[-1] == ' '))
        end--;
    const char *n0, *n1, *v0, *v1;
    if (p < end && *p == '[') {
        n0 = p + 1;
        n1 = memchr(n0, ']', (size_t)(end - n0));
        if (n1 == NULL || end - n1 < 5 || memcmp(n1, "]: [", 4) != 0 || end[-1] != ']')
            return -1;
        v0 = n1 + 4;
        v1 = end - 1;
    } else {
        n0 = p;
        n1 = memchr(p, '=', (size_t)(end - p));
        if (n1 == NULL || n1 == p)
            return -1;
        v0 = n1 + 1;
        v1 = end;
    }
    if (n1 - n0 >= 128)
        return -1;
    memcpy(name, n0, (size_t)(n1 - n0));
    name[n1 - n0] = '\0';
    size_t vn = (size_t)(v1 - v0) < WORD_MAX - 1 ? (size_t)(v1 - v0) : WORD_MAX - 1;
    memcpy(value, v0, vn);
    value[vn] = '\0';
    return 0;
}

/* The properties a device profile reads besides lmkd's (kept when asked). */
static const char *const phone_props[] = {
    "ro.product.model", "ro.product.manufacturer", "ro.product.device",
    "ro.build.version.sdk", "ro.build.version.release", "ro.build.id",
    "dalvik.vm.heapgrowthlimit", "dalvik.vm.heapsize", "sys.lmk.minfree_levels",
    "ro.lmk.use_minfree_levels", "ro.lmk.use_psi", "ro.config.low_ram",
    "ro.product.cpu.abi", "ro.soc.model", "ro.boot.hardware",
    "ro.boot.hardware.cpu.pagesize"};

#define RO_LMK "ro.lmk."
#define EXPERIMENT "persist.device_config.lmkd_native."

/* The properties that pick lmkd's strategy (init_monitors, update_props):
 * they are kept to check that lmkd runs mp_event_psi at all. */
static int strategy_prop(rpl_lmkd_snapshot *s, const char *name, int64_t v)
{
    static const char *const names[] = {"use_minfree_levels", "use_new_strategy", "use_psi"};
    int *at[] = {&s->use_minfree_levels, &s->use_new_strategy, &s->use_psi};
    for (int k = 0; k < 3; k++)
        if (strcmp(name, names[k]) == 0) {
            *at[k] = (int)v;
            return 1;
        }
    return 0;
}

static int one_prop(const src *sf, rpl_lmkd_snapshot *s, mdl_lmkd_props *experiment, const line *l,
                    sim_error *err)
{
    char name[128], value[WORD_MAX];
    if (prop_line(l, name, value) < 0)
        return bad(err, sf, l->no, "expected NAME=VALUE or [NAME]: [VALUE]", NULL);
    int kept = strncmp(name, RO_LMK, strlen(RO_LMK)) == 0 ||
               strncmp(name, EXPERIMENT, strlen(EXPERIMENT)) == 0;
    for (size_t k = 0; !kept && k < sizeof phone_props / sizeof *phone_props; k++)
        kept = strcmp(name, phone_props[k]) == 0;
    if (kept)
        keep(sf, name, strlen(name), value, l->no);
    const char *short_name = NULL;
    mdl_lmkd_props *into = &s->props;
    if (strcmp(name, "ro.config.low_ram") == 0)
        short_name = "low_ram";
    else if (strncmp(name, RO_LMK, strlen(RO_LMK)) == 0)
        short_name = name + strlen(RO_LMK);
    else if (strncmp(name, EXPERIMENT, strlen(EXPERIMENT)) == 0) {
        short_name = name + strlen(EXPERIMENT);
        into = experiment; /* GET_LMK_PROPERTY: the experiment's value wins */
    }
    if (short_name == NULL)
        return SIM_OK; /* not lmkd's */
    /* low_ram is ro.config.low_ram's alone: update_props reads it with
     * property_get_bool, never through GET_LMK_PROPERTY (lmkd 18578a5), so
     * ro.lmk.low_ram and the experiment's low_ram are not lmkd's */
    if (strcmp(short_name, "low_ram") == 0 && strcmp(name, "ro.config.low_ram") != 0) {
        if (s->nignored < RPL_LMKD_IGNORED_MAX)
            snprintf(s->ignored[s->nignored++], sizeof s->ignored[0], "%s", name);
        return SIM_OK;
    }
    const mdl_lmkd_prop *prop = mdl_lmkd_prop_named(short_name);
    int64_t v;
    if (prop == NULL) { /* lmkd reads it, or a later lmkd does: not this decision */
        if (prop_bool(value, &v) >= 0 && strategy_prop(s, short_name, v))
            return SIM_OK;
        if (s->nignored < RPL_LMKD_IGNORED_MAX)
            snprintf(s->ignored[s->nignored++], sizeof s->ignored[0], "%s", name);
        return SIM_OK;
    }
    if (prop->is_bool ? prop_bool(value, &v) < 0 : number(value, &v) < 0)
        return bad(err, sf, l->no, prop->is_bool ? "not true or false:"
                                                      : "not a whole number:", value);
    if (!prop->is_64 && v > INT32_MAX)
        return bad(err, sf, l->no, "over 2147483647, lmkd's int32 property:", value);
    mdl_lmkd_prop_set(into, prop, v);
    return SIM_OK;
}

static int parse_props(const src *sf, const char *text, size_t len, rpl_lmkd_snapshot *s,
                       sim_error *err)
{
    mdl_lmkd_props experiment;
    mdl_lmkd_props_unset(&experiment);
    cursor c = {text, text + len, sf->base};
    line l;
    while (next_line(&c, &l)) {
        size_t i = 0;
        while (i < l.len && (l.s[i] == ' ' || l.s[i] == '\t' || l.s[i] == '\r'))
            i++;
        if (i == l.len || l.s[i] == '#')
            continue;
        if (one_prop(sf, s, &experiment, &l, err) != SIM_OK)
            return err->code;
    }
    for (const mdl_lmkd_prop *p = mdl_lmkd_prop_table; p->name != NULL; p++)
        if (mdl_lmkd_prop_get(&experiment, p) >= 0)
            mdl_lmkd_prop_set(&s->props, p, mdl_lmkd_prop_get(&experiment, p));
    return SIM_OK;
}

/* ---- the directory ---------------------------------------------------- */

int rpl__snapshot_section(rpl_lmkd_snapshot *s, const char *file, const char *name,
                          const char *label, unsigned base, rpl_kvs *kv, const char *text,
                          size_t len, sim_error *err)
{
    src sf = {name != NULL ? name : file, label != NULL ? label : file, base, kv};
    if (strcmp(file, "page_size") == 0)
        return parse_page_size(text, len, &s->wake.page_kb, err);
    if (strcmp(file, "meminfo") == 0)
        return parse_meminfo(&sf, text, len, s->wake.page_kb, &s->now, err);
    if (strcmp(file, "zoneinfo") == 0)
        return parse_zoneinfo(&sf, text, len, s, err);
    if (strcmp(file, "vmstat.0") == 0)
        return parse_vmstat(&sf, text, len, &s->reset, err);
    if (strcmp(file, "vmstat.1") == 0)
        return parse_vmstat(&sf, text, len, &s->now, err);
    if (strcmp(file, "pressure_memory") == 0)
        return parse_pressure(&sf, text, len, &s->wake, err);
    if (strcmp(file, "event") == 0)
        return parse_event(text, len, &s->wake, err);
    if (strcmp(file, "props") == 0)
        return parse_props(&sf, text, len, s, err);
    return sim_error_set(err, SIM_EINVAL, "%s: not a snapshot file", file);
}

int rpl_lmkd_snapshot_parse(rpl_lmkd_snapshot *s, const char *file, const char *text,
                            size_t len, sim_error *err)
{
    return rpl__snapshot_section(s, file, NULL, NULL, 0, NULL, text, len, err);
}

void rpl_lmkd_snapshot_init(rpl_lmkd_snapshot *s)
{
    memset(s, 0, sizeof *s);
    mdl_lmkd_props_unset(&s->props);
    s->wake.page_kb = 4;
    s->wake.level = MDL_PSI_LOW;
    s->wake.event = 1;
    s->use_minfree_levels = s->use_new_strategy = s->use_psi = -1;
}

/* The files in the order they are read: the page size before meminfo. */
static const struct {
    const char *name;
    int required;
} snapshot_files[] = {{"page_size", 0}, {"meminfo", 1},         {"zoneinfo", 1},
                      {"vmstat.0", 1},  {"vmstat.1", 1},        {"pressure_memory", 0},
                      {"event", 0},     {"props", 0}};

int rpl_lmkd_snapshot_read(const char *dir, rpl_lmkd_snapshot *s, sim_error *err)
{
    rpl_lmkd_snapshot_init(s);
    int rc = SIM_OK;
    struct stat st;
    if (stat(dir, &st) != 0)
        return sim_error_set(err, SIM_EINPUT, "%s: %s", dir, errno == ENOENT
                             ? "no such directory (a snapshot is a directory holding meminfo, "
                               "zoneinfo, vmstat.0 and vmstat.1)" : strerror(errno));
    if (!S_ISDIR(st.st_mode))
        return sim_error_set(err, SIM_EINPUT, "%s: not a directory (a snapshot is a directory "
                             "holding meminfo, zoneinfo, vmstat.0 and vmstat.1)", dir);
    for (size_t k = 0; rc == SIM_OK && k < sizeof snapshot_files / sizeof *snapshot_files; k++) {
        char path[PATH_MAX];
        if (snprintf(path, sizeof path, "%s/%s", dir, snapshot_files[k].name) >= (int)sizeof path)
            return sim_error_set(err, SIM_EINVAL, "%s: path too long", dir);
        if (stat(path, &st) != 0) {
            if (errno == ENOENT && !snapshot_files[k].required)
                continue;
            return sim_error_set(err, errno == ENOENT ? SIM_EINPUT : SIM_EIO, "%s: %s", path,
                                 errno == ENOENT ? "missing (a snapshot needs meminfo, zoneinfo, "
                                                   "vmstat.0 and vmstat.1)" : strerror(errno));
        }
        if (S_ISDIR(st.st_mode))
            return sim_error_set(err, SIM_EINPUT, "%s: a directory, not the file a snapshot "
                                 "needs", path);
        char *text = NULL;
        size_t len = 0;
        rc = sim_read_file(path, FILE_MAX, &text, &len, err);
        if (rc == SIM_OK && rpl_lmkd_snapshot_parse(s, snapshot_files[k].name, text, len, err) !=
                                SIM_OK) {
            /* the message names the file in the directory: name it by its path */
            char msg[SIM_ERROR_MSG_MAX];
            snprintf(msg, sizeof msg, "%s", err->msg);
            rc = sim_error_set(err, err->code, "%s/%s", dir, msg);
        }
        free(text);
    }
    if (rc != SIM_OK)
        return rc;
    mdl_lmkd_props_resolve(&s->props);
    /* use_new_strategy defaults to low_ram || !use_minfree_levels */
    int fresh = s->use_new_strategy >= 0 ? s->use_new_strategy
                                         : s->props.low_ram || s->use_minfree_levels != 1;
    if (s->use_psi == 0 || !fresh)
        return sim_error_set(err, SIM_EINPUT, "props: %s: lmkd then runs its legacy strategy "
                             "(mp_event_common), not the PSI decision oomsim lmkd models",
                             s->use_psi == 0 ? "use_psi is false" : "use_minfree_levels is true");
    return SIM_OK;
}

void rpl_lmkd_snapshot_decide(const rpl_lmkd_snapshot *s, mdl_lmkd_decision *d)
{
    mdl_lmkd_state st;
    /* the reset was under a second ago: the thrashing window is open */
    mdl_lmkd_state_init(&st, &s->props, &s->reset, 0);
    mdl_lmkd_wake w = s->wake;
    w.now_ms = 0;
    mdl_lmkd_decide(&st, &s->props, &w, &s->now, d);
}
