/* phone.c - the whole phone out of a Perfetto trace, for `oomsim import
 * device` (docs/devices.md): one pass over the packets (packets.c's walk,
 * the `phone` pass), reading
 *   - SysStats (TracePacket 7): /proc/meminfo's lines and vmstat's
 *     nr_zspages, one sample per packet;
 *   - ProcessStats (TracePacket 9): each poll's changed counters (the
 *     probe writes a process's value only when it changed since the last
 *     poll: Perfetto's process_stats_data_source.cc, WriteMemCounters),
 *     folded per pid, then summed by dumpsys meminfo's OOM groups;
 *   - ftrace: lmkd's kills (its "lmk," atrace counter), lowmemory_kill,
 *     mark_victim and sched_process_free, which end a process's life;
 *   - SystemInfo (TracePacket 45): the build's fingerprint, the maker, the
 *     SDK level and the RAM.
 * Field numbers as Perfetto's protos at ec5d16b1 (sys_stats.proto,
 * sys_stats_counters.proto, process_stats.proto, system_info.proto,
 * ftrace_event.proto).  import.c holds the entry points. */
#include "pf_int.h"

#include <stdlib.h>
#include <string.h>

/* AOSP ActivityManagerService's DUMP_MEM_OOM_ADJ and DUMP_MEM_OOM_LABEL, as
 * releases since Android 13 hold them (PERCEPTIBLE_LOW 250 listed before
 * PERCEPTIBLE_MEDIUM 225). */
const int trc_pf_group_adj[TRC_PF_GROUPS] = {-1000, -900, -800, -700, 0,   100, 200, 250,
                                             225,   300,  400,  500,  600, 700, 800, 900};
const char *const trc_pf_group_label[TRC_PF_GROUPS] = {
    "Native",  "System",           "Persistent", "Persistent Service", "Foreground",
    "Visible", "Perceptible",      "Perceptible Low", "Perceptible Medium", "Backup",
    "Heavy Weight", "A Services",  "Home",       "Previous",           "B Services",
    "Cached"};

/* dumpApplicationMemoryUsage's loop: the first group whose range
 * [adj_i, adj_i+1) holds the adj, else the last. */
int trc_pf_group_of(int64_t adj)
{
    for (int i = 0; i + 1 < TRC_PF_GROUPS; i++)
        if (adj >= trc_pf_group_adj[i] && adj < trc_pf_group_adj[i + 1])
            return i;
    return TRC_PF_GROUPS - 1;
}

/* ---- the processes ---------------------------------------------------------- */

typedef struct proc {
    int32_t pid;
    int alive, has_adj;
    int64_t adj;
    uint64_t rss_kb, pss_kb; /* VmRSS; smaps_rollup's Pss */
    int has_rss, has_pss;
    uint64_t rise_from;      /* the foreground rise under way: where it began */
    int rising;
} proc;

typedef struct procs {
    u64map index;            /* pid -> index in p */
    proc *p;
    size_t n, cap;
} procs;

static procs *table(imp *m)
{
    return m->phone->pids;
}

static proc *find(imp *m, int64_t pid)
{
    int64_t *i = pf__map_find(&table(m)->index, (uint64_t)pid);
    return i != NULL ? &table(m)->p[*i] : NULL;
}

static proc *get(imp *m, int64_t pid)
{
    proc *x = find(m, pid);
    if (x != NULL)
        return x;
    procs *t = table(m);
    if (t->n == t->cap) {
        proc *g = pf__grow(m, t->p, &t->cap, sizeof *g, 256);
        if (g == NULL)
            return NULL;
        t->p = g;
    }
    if (pf__map_put(&t->index, (uint64_t)pid, (int64_t)t->n) != SIM_OK) {
        pf__oom(m);
        return NULL;
    }
    x = &t->p[t->n++];
    memset(x, 0, sizeof *x);
    x->pid = (int32_t)pid;
    m->phone->processes++;
    return x;
}

static uint64_t size_of(const proc *x)
{
    return x->has_pss ? x->pss_kb : x->rss_kb;
}

/* x (elem bytes) appended to *array of *n, doubled from `first` when
 * full: SIM_OK, or SIM_ENOMEM said (the array untouched). */
static int append(imp *m, void **array, size_t *n, size_t *cap, size_t elem, size_t first,
                  const void *x)
{
    if (*n == *cap) {
        void *g = pf__grow(m, *array, cap, elem, first);
        if (g == NULL)
            return m->err->code;
        *array = g;
    }
    memcpy((char *)*array + *n * elem, x, elem);
    (*n)++;
    return SIM_OK;
}

/* A foreground rise that ends at `top` kB: a spike when it reached the
 * threshold. */
static int close_rise(imp *m, proc *x, int64_t ts, uint64_t top)
{
    if (!x->rising)
        return SIM_OK;
    x->rising = 0;
    if (top < x->rise_from + TRC_PF_SPIKE_MIN_KB)
        return SIM_OK;
    trc_pf_phone *ph = m->phone;
    trc_pf_spike k = {ts, top - x->rise_from};
    return append(m, (void **)&ph->spike, &ph->nspike, &ph->capspike, sizeof k, 64, &k);
}

/* A process that ended (killed, or its task freed). */
static int ended(imp *m, int64_t pid, int64_t ts)
{
    proc *x = find(m, pid);
    if (x == NULL || !x->alive)
        return SIM_OK;
    x->alive = 0;
    m->phone->deaths++;
    return close_rise(m, x, ts, size_of(x));
}

/* ---- the packets -------------------------------------------------------------- */

static void span(imp *m, int64_t ts)
{
    trc_pf_phone *ph = m->phone;
    if (ph->first_ts == 0 || ts < ph->first_ts)
        ph->first_ts = ts;
    if (ts > ph->last_ts)
        ph->last_ts = ts;
}

static int too_big(imp *m, const char *what, uint64_t kb)
{
    return pf__fail(m, SIM_EINPUT, "%s: a size of %" PRIu64 " kB (more than 256 TiB)", what, kb);
}

/* MeminfoCounters (sys_stats_counters.proto) -> the lines read. */
static int meminfo_slot(uint64_t key)
{
    switch (key) {
    case 1: return TRC_PF_MI_TOTAL;
    case 11: return TRC_PF_MI_ACTIVE_FILE;
    case 12: return TRC_PF_MI_INACTIVE_FILE;
    case 15: return TRC_PF_MI_SWAP_TOTAL;
    case 16: return TRC_PF_MI_SWAP_FREE;
    case 21: return TRC_PF_MI_SHMEM;
    case 24: return TRC_PF_MI_SUNRECLAIM;
    case 25: return TRC_PF_MI_KERNEL_STACK;
    case 26: return TRC_PF_MI_PAGE_TABLES;
    case 30: return TRC_PF_MI_VMALLOC_USED;
    default: return -1;
    }
}
#define VMSTAT_NR_ZSPAGES 93

/* A {key 1, value 2} pair of SysStats. */
static int pair(const pb_field *f, uint64_t *key, uint64_t *value)
{
    pb_msg q = pb_msg_of(f->p, f->len);
    pb_field g;
    int r;
    *key = 0, *value = 0;
    while ((r = pb_next(&q, &g)) == 1)
        if (g.wt == PB_VARINT && g.num == 1)
            *key = g.v;
        else if (g.wt == PB_VARINT && g.num == 2)
            *value = g.v;
    return r;
}

int pf__phone_sys_stats(imp *m, int64_t ts, const uint8_t *p, size_t len)
{
    trc_pf_meminfo s;
    memset(&s, 0, sizeof s);
    s.ts = ts;
    pb_msg d = pb_msg_of(p, len);
    pb_field f;
    int r;
    while ((r = pb_next(&d, &f)) == 1) {
        if (f.wt != PB_LEN || (f.num != 1 && f.num != 2))
            continue;
        uint64_t key, v;
        if (pair(&f, &key, &v) < 0)
            return pf__fail(m, SIM_EINPUT, "malformed sys_stats %s value",
                            f.num == 1 ? "meminfo" : "vmstat");
        if (f.num == 2) {
            if (key == VMSTAT_NR_ZSPAGES)
                s.zspages = v, s.has_zspages = 1;
            continue;
        }
        int slot = meminfo_slot(key);
        if (slot < 0)
            continue;
        if (v > (uint64_t)SIZE_MAX_ / 1024)
            return too_big(m, "sys_stats meminfo", v);
        s.kb[slot] = v;
        s.has |= 1u << slot;
    }
    if (r < 0)
        return pf__fail(m, SIM_EINPUT, "malformed sys_stats");
    if (s.zspages > (uint64_t)SIZE_MAX_ / 65536)
        return pf__fail(m, SIM_EINPUT, "sys_stats vmstat: nr_zspages %" PRIu64 " (out of range)",
                        s.zspages);
    if (s.has == 0 && !s.has_zspages)
        return SIM_OK;
    trc_pf_phone *ph = m->phone;
    span(m, ts);
    return append(m, (void **)&ph->mem, &ph->nmem, &ph->capmem, sizeof s, 256, &s);
}

/* One process's entry of a poll: what changed. */
static int poll_entry(imp *m, int64_t ts, const pb_field *f)
{
    pb_msg q = pb_msg_of(f->p, f->len);
    pb_field g;
    int r;
    int64_t pid = 0, adj = ADJ_UNKNOWN;
    uint64_t rss = 0, pss = 0;
    int has_rss = 0, has_pss = 0;
    while ((r = pb_next(&q, &g)) == 1) {
        if (g.wt != PB_VARINT)
            continue;
        if (g.num == 1)
            pid = (int32_t)g.v;
        else if (g.num == 3)
            rss = g.v, has_rss = 1;      /* vm_rss_kb */
        else if (g.num == 17)
            pss = g.v, has_pss = 1;      /* smr_pss_kb */
        else if (g.num == 10)
            adj = pb_int(&g);            /* oom_score_adj */
    }
    if (r < 0)
        return pf__fail(m, SIM_EINPUT, "malformed process_stats entry");
    if (pid <= 0)
        return SIM_OK;
    if ((has_rss && rss > (uint64_t)SIZE_MAX_ / 1024) || (has_pss && pss > (uint64_t)SIZE_MAX_ / 1024))
        return too_big(m, "process_stats", has_rss ? rss : pss);
    if (adj != ADJ_UNKNOWN && (adj < -1000 || adj > 1000))
        return pf__fail(m, SIM_EINPUT, "process_stats: pid %" PRId64 " has an oom_score_adj of "
                        "%" PRId64 " (the kernel's range is -1000 to 1000)", pid, adj);
    proc *x = get(m, pid);
    if (x == NULL)
        return m->err->code;
    uint64_t before = size_of(x);
    int was_fg = x->alive && x->has_adj && x->adj == 0;
    x->alive = 1;
    if (has_rss)
        x->rss_kb = rss, x->has_rss = 1;
    if (has_pss)
        x->pss_kb = pss, x->has_pss = 1;
    if (adj != ADJ_UNKNOWN)
        x->adj = adj, x->has_adj = 1;
    uint64_t now = size_of(x);
    int fg = x->has_adj && x->adj == 0;
    /* a rise goes on while the process stays in front and grows or holds */
    /* ... and ends at its top, the size before this poll */
    if (x->rising && (!fg || now < before) && close_rise(m, x, ts, before) != SIM_OK)
        return m->err->code;
    if (fg && was_fg && now > before && !x->rising)
        x->rising = 1, x->rise_from = before;
    return SIM_OK;
}

int pf__phone_process_stats(imp *m, int64_t ts, const uint8_t *p, size_t len)
{
    pb_msg d = pb_msg_of(p, len);
    pb_field f;
    int r;
    while ((r = pb_next(&d, &f)) == 1)
        if (f.num == 1 && f.wt == PB_LEN && poll_entry(m, ts, &f) != SIM_OK)
            return m->err->code;
    if (r < 0)
        return pf__fail(m, SIM_EINPUT, "malformed process_stats");
    /* the poll: every living process's last figures, by group */
    trc_pf_poll poll;
    memset(&poll, 0, sizeof poll);
    poll.ts = ts;
    const procs *t = table(m);
    for (size_t i = 0; i < t->n; i++) {
        const proc *x = &t->p[i];
        if (!x->alive || !x->has_adj || (!x->has_rss && !x->has_pss))
            continue;
        int g = trc_pf_group_of(x->adj);
        poll.kb[g] += size_of(x);
        poll.n[g]++;
    }
    trc_pf_phone *ph = m->phone;
    span(m, ts);
    return append(m, (void **)&ph->poll, &ph->npoll, &ph->cappoll, sizeof poll, 256, &poll);
}

/* SystemInfo: a string field copied (printable bytes only). */
static void text(char *dst, size_t n, const pb_field *f)
{
    size_t k = 0;
    for (size_t i = 0; i < f->len && k + 1 < n; i++)
        if (f->p[i] >= 0x20 && f->p[i] < 0x7f)
            dst[k++] = (char)f->p[i];
    dst[k] = '\0';
}

int pf__phone_system_info(imp *m, const uint8_t *p, size_t len)
{
    trc_pf_phone *ph = m->phone;
    pb_msg d = pb_msg_of(p, len);
    pb_field f;
    int r;
    while ((r = pb_next(&d, &f)) == 1) {
        if (f.num == 2 && f.wt == PB_LEN)
            text(ph->fingerprint, sizeof ph->fingerprint, &f);
        else if (f.num == 14 && f.wt == PB_LEN)
            text(ph->maker, sizeof ph->maker, &f);
        else if (f.num == 5 && f.wt == PB_VARINT)
            ph->sdk = f.v;
        else if (f.num == 16 && f.wt == PB_VARINT)
            ph->ram_bytes = f.v;
        else if (f.num == 6 && f.wt == PB_VARINT)
            ph->page_size = f.v <= 65536 ? (uint32_t)f.v : 0;
    }
    if (r < 0)
        return pf__fail(m, SIM_EINPUT, "malformed system_info");
    if (ph->sdk > 1000 || ph->ram_bytes > (uint64_t)SIZE_MAX_)
        return pf__fail(m, SIM_EINPUT, "system_info: an SDK level of %" PRIu64 " or a RAM of %"
                        PRIu64 " bytes (out of range)", ph->sdk, ph->ram_bytes);
    return SIM_OK;
}

/* A kill or a task freed, from ftrace.c's reading of the event. */
int pf__phone_end(imp *m, int64_t ts, int64_t pid, int kill)
{
    const proc *x = find(m, pid);
    if (kill && (x == NULL || x->alive))
        m->phone->kills++; /* once, whichever forms the trace records it in */
    return ended(m, pid, ts);
}

/* ---- the pass's start and end ------------------------------------------------ */

int pf__phone_start(imp *m, trc_pf_phone *out)
{
    memset(out, 0, sizeof *out);
    m->phone = out;
    m->pass = PF_PASS_PHONE;
    out->pids = calloc(1, sizeof(procs));
    return out->pids != NULL ? SIM_OK : pf__oom(m);
}

int pf__phone_finish(imp *m)
{
    trc_pf_phone *out = m->phone;
    procs *t = table(m);
    for (size_t i = 0; i < t->n; i++) {
        if (close_rise(m, &t->p[i], out->last_ts, size_of(&t->p[i])) != SIM_OK)
            return m->err->code;
        out->sized_pss += (uint64_t)(t->p[i].has_pss != 0);
        out->sized_rss += (uint64_t)(!t->p[i].has_pss && t->p[i].has_rss);
    }
    return SIM_OK;
}

void trc_pf_phone_free(trc_pf_phone *out)
{
    if (out == NULL)
        return;
    procs *t = out->pids;
    if (t != NULL) {
        pf__map_free(&t->index);
        free(t->p);
        free(t);
    }
    free(out->mem);
    free(out->poll);
    free(out->spike);
    memset(out, 0, sizeof *out);
}

int trc_pf_detect(const void *data, size_t len)
{
    const uint8_t *p = data, *end = p + len;
    uint64_t tag = 0, n = 0;
    if (!pb_varint(&p, end, &tag) || tag != (1u << 3 | PB_LEN) || !pb_varint(&p, end, &n) ||
        n == 0 || n > TRC_PF_PACKET_MAX)
        return 0;
    /* the packet's fields, as far as the bytes go: each a known wire type */
    const uint8_t *stop = (size_t)(end - p) < n ? end : p + n;
    pb_msg q = pb_msg_of(p, (size_t)(stop - p));
    pb_field f;
    int r, fields = 0;
    while ((r = pb_next(&q, &f)) == 1)
        fields++;
    return fields > 0 && (r == 0 || stop < p + n);
}
