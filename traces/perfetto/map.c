/* map.c - the importer's lookups and its errors: an open-addressing map
 * (u64 -> i64) for pids, threads, tracks, mm ids and names; which pids are
 * the chosen process's (chosen, choose) and whether a name is its name;
 * the records kept for the walk (add_rec, with the bounds that refuse a
 * corrupt time or size).  Reads no packet itself. */
#include "pf_int.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

int pf__fail(imp *m, int code, const char *fmt, ...)
{
    char what[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return sim_error_set(m->err, code, "%s: packet at byte %" PRIu64 "%s: %s", m->name,
                         m->packet_off, m->depth > 0 ? " (inside a compressed bundle)" : "",
                         what);
}

void *pf__grow(imp *m, void *array, size_t *cap, size_t elem, size_t first)
{
    size_t nc = *cap ? *cap * 2 : first;
    void *p = realloc(array, nc * elem);
    if (p == NULL) {
        pf__oom(m);
        return NULL;
    }
    *cap = nc;
    return p;
}

int pf__oom(imp *m)
{
    return sim_error_set(m->err, SIM_ENOMEM, "%s: out of memory", m->name);
}

static uint64_t mix(uint64_t k)
{
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdull;
    k ^= k >> 33;
    return k;
}

int64_t *pf__map_find(const u64map *h, uint64_t k)
{
    if (h->cap == 0)
        return NULL;
    for (size_t i = mix(k) & (h->cap - 1);; i = (i + 1) & (h->cap - 1)) {
        if (!h->used[i])
            return NULL;
        if (h->key[i] == k)
            return &h->val[i];
    }
}

int pf__map_put(u64map *h, uint64_t k, int64_t v)
{
    int64_t *at = pf__map_find(h, k);
    if (at != NULL) {
        *at = v;
        return SIM_OK;
    }
    if ((h->n + 1) * 2 > h->cap) {
        size_t nc = h->cap ? h->cap * 2 : 64;
        u64map g = {calloc(nc, sizeof *g.key), calloc(nc, sizeof *g.val), calloc(nc, 1), nc, 0};
        if (g.key == NULL || g.val == NULL || g.used == NULL) {
            free(g.key), free(g.val), free(g.used);
            return SIM_ENOMEM;
        }
        for (size_t i = 0; i < h->cap; i++)
            if (h->used[i])
                (void)pf__map_put(&g, h->key[i], h->val[i]);
        free(h->key), free(h->val), free(h->used);
        *h = g;
    }
    size_t i = mix(k) & (h->cap - 1);
    while (h->used[i])
        i = (i + 1) & (h->cap - 1);
    h->used[i] = 1;
    h->key[i] = k;
    h->val[i] = v;
    h->n++;
    return SIM_OK;
}

void pf__map_free(u64map *h)
{
    free(h->key), free(h->val), free(h->used);
    memset(h, 0, sizeof *h);
}

/* The chosen process of thread `tid`, or -1. */
int32_t pf__tgid_of(const imp *m, int64_t tid)
{
    if (pf__map_find(&m->pids, (uint64_t)tid) != NULL)
        return (int32_t)tid;
    const int64_t *t = pf__map_find(&m->threads, (uint64_t)tid);
    return t != NULL ? (int32_t)*t : -1;
}

int pf__chosen(const imp *m, int64_t pid)
{
    return pid > 0 && pf__map_find(&m->pids, (uint64_t)pid) != NULL;
}

int pf__add_rec(imp *m, const rec *r)
{
    if (r->ts < 0 || r->ts >= TS_MAX)
        return pf__fail(m, SIM_EINPUT, "a timestamp of %" PRId64 " ns (out of range)", r->ts);
    if (r->type == R_MEM && (r->v < 0 || r->v > SIZE_MAX_))
        return pf__fail(m, SIM_EINPUT, "a memory size of %" PRId64 " bytes (more than 256 TiB)",
                    r->v);
    if (m->nrec == m->caprec) {
        rec *p = pf__grow(m, m->recs, &m->caprec, sizeof *p, 1024);
        if (p == NULL)
            return SIM_ENOMEM;
        m->recs = p;
    }
    m->recs[m->nrec] = *r;
    m->recs[m->nrec].seq = (uint32_t)m->nrec;
    m->nrec++;
    return SIM_OK;
}

/* Adds pid as one of the chosen process's lives. */
int pf__choose(imp *m, int64_t pid)
{
    if (pid <= 0 || pf__chosen(m, pid))
        return SIM_OK;
    if (m->pids.n >= PIDS_MAX)
        return pf__fail(m, SIM_ELIMIT, "more than %d processes named as the chosen one", PIDS_MAX);
    return pf__map_put(&m->pids, (uint64_t)pid, pid) == SIM_OK ? SIM_OK : pf__oom(m);
}

/* Does a process's name (a command line's first word, or a 15-byte comm)
 * name the chosen process? */
int pf__name_matches(const imp *m, const uint8_t *s, size_t n, int is_comm)
{
    const char *want = m->o->process;
    if (want == NULL)
        return 0;
    size_t w = strlen(want);
    if (n == w && memcmp(s, want, n) == 0)
        return 1;
    /* the kernel keeps the last 15 bytes of an app's name as its comm */
    return is_comm && n == 15 && w > 15 && memcmp(s, want + w - 15, 15) == 0;
}

void pf__keep_name(imp *m, const uint8_t *s, size_t n)
{
    if (m->process[0] != '\0')
        return;
    if (n >= TRC_TEXT_MAX)
        n = TRC_TEXT_MAX - 1;
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (s[i] >= 0x20 && s[i] < 0x7f)
            m->process[k++] = (char)s[i];
    m->process[k] = '\0';
}

const char *trc_pf_lmkd_reason_name(int64_t code)
{
    /* lmkd's enum kill_reasons (statslog.h) */
    static const char *const names[] = {
        "PRESSURE_AFTER_KILL", "NOT_RESPONDING", "LOW_SWAP_AND_THRASHING", "LOW_MEM_AND_SWAP",
        "LOW_MEM_AND_THRASHING", "DIRECT_RECL_AND_THRASHING", "LOW_MEM_AND_SWAP_UTIL",
        "LOW_FILECACHE_AFTER_THRASHING", "LOW_MEM"};
    if (code < 0 || code >= (int64_t)(sizeof names / sizeof *names))
        return NULL;
    return names[code];
}
