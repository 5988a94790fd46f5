/* perfetto.c - a Perfetto trace of a phone in normal use as a capture
 * (`oomsim import device`, docs/devices.md): the Perfetto reader's phone
 * pass (traces/perfetto/phone.c) gives the samples; here they become the
 * figures a bugreport gives, each as a series over time (the writer fits
 * or ranges them), plus what one snapshot cannot give: the foreground's
 * spikes over the span of the polls and the kills the trace records. */
#include "capture_int.h"

#include "traces/traces.h"

#include <stdlib.h>
#include <string.h>

#define KIB 1024.0
#define MIB (1024.0 * 1024.0)

/* A series of at most CAP_SERIES samples kept for a figure: evenly spaced
 * over the trace when it has more. */
#define CAP_SERIES 512

typedef struct acc {
    double *v;
    unsigned n, cap;
} acc;

static int add(acc *a, double x)
{
    if (a->n == a->cap) {
        unsigned nc = a->cap ? a->cap * 2 : 256;
        double *g = realloc(a->v, nc * sizeof *g);
        if (g == NULL)
            return 0;
        a->v = g, a->cap = nc;
    }
    a->v[a->n++] = x;
    return 1;
}

/* The series kept as figure k (its median the figure's value); the
 * accumulator's samples are consumed. 0: out of memory. */
static int keep(cap_phone *p, cap_key k, acc *a, const char *fmt_how, int bytes)
{
    if (a->n == 0)
        return 1;
    unsigned n = a->n < CAP_SERIES ? a->n : CAP_SERIES;
    double *s = malloc(n * sizeof *s), *sorted = malloc(a->n * sizeof *sorted);
    if (s == NULL || sorted == NULL) {
        free(s);
        free(sorted);
        return 0;
    }
    for (unsigned i = 0; i < n; i++)
        s[i] = a->v[(size_t)i * a->n / n];
    memcpy(sorted, a->v, a->n * sizeof *sorted);
    double med = rpl__median(sorted, a->n), lo = sorted[0], hi = sorted[a->n - 1];
    free(sorted);

    /* sizes: the writer says their range; ratios and counts: here */
    char range[96] = "";
    if (!bytes && hi > lo)
        snprintf(range, sizeof range, " (min %.2f, median %.2f, max %.2f)", lo, med, hi);
    cap__set(p, k, med, 1, "%s, over %u samples%s%s", fmt_how, a->n, range,
             n < a->n ? " (512 of them kept, evenly spaced)" : "");
    free(p->series[k]);
    p->series[k] = s;
    p->nseries[k] = n;
    a->n = 0;
    return 1;
}

/* meminfo's kernel share, as the bugreport reader counts it: Shmem,
 * SUnreclaim, VmallocUsed, PageTables and KernelStack (kB), or -1. */
static double kernel_kb(const trc_pf_meminfo *s)
{
    static const int part[] = {TRC_PF_MI_SHMEM, TRC_PF_MI_SUNRECLAIM, TRC_PF_MI_VMALLOC_USED,
                               TRC_PF_MI_PAGE_TABLES, TRC_PF_MI_KERNEL_STACK};
    double k = 0;
    for (size_t i = 0; i < sizeof part / sizeof *part; i++) {
        if (!(s->has & 1u << part[i]))
            return -1;
        k += (double)s->kb[part[i]];
    }
    return k;
}

typedef struct series_set {
    acc ram, pc, ws, zsize, zratio, sys, cached, count;
} series_set;

static int from_meminfo(const trc_pf_phone *ph, series_set *a)
{
    const double page = ph->page_size > 0 ? ph->page_size : 4096.0;
    for (size_t i = 0; i < ph->nmem; i++) {
        const trc_pf_meminfo *s = &ph->mem[i];
        uint32_t h = s->has;
        if ((h & 1u << TRC_PF_MI_TOTAL) && !add(&a->ram, (double)s->kb[TRC_PF_MI_TOTAL] * KIB))
            return 0;
        if ((h & 1u << TRC_PF_MI_ACTIVE_FILE) && (h & 1u << TRC_PF_MI_INACTIVE_FILE) &&
            (!add(&a->pc, (double)(s->kb[TRC_PF_MI_ACTIVE_FILE] + s->kb[TRC_PF_MI_INACTIVE_FILE]) *
                              KIB) ||
             !add(&a->ws, (double)s->kb[TRC_PF_MI_ACTIVE_FILE] * KIB)))
            return 0;
        if (!(h & 1u << TRC_PF_MI_SWAP_TOTAL) || s->kb[TRC_PF_MI_SWAP_TOTAL] == 0)
            continue;
        if (!add(&a->zsize, (double)s->kb[TRC_PF_MI_SWAP_TOTAL] * KIB))
            return 0;
        if (!(h & 1u << TRC_PF_MI_SWAP_FREE) || !s->has_zspages ||
            s->kb[TRC_PF_MI_SWAP_FREE] > s->kb[TRC_PF_MI_SWAP_TOTAL])
            continue;
        double stored = (double)(s->kb[TRC_PF_MI_SWAP_TOTAL] - s->kb[TRC_PF_MI_SWAP_FREE]) * KIB;
        double phys = (double)s->zspages * page;
        if (phys >= MIB && stored > phys && !add(&a->zratio, stored / phys))
            return 0;
    }
    return 1;
}

/* The meminfo sample in force at time ts: the last at or before it, else
 * the first. */
static const trc_pf_meminfo *meminfo_at(const trc_pf_phone *ph, int64_t ts, size_t *hint)
{
    size_t i = *hint;
    while (i + 1 < ph->nmem && ph->mem[i + 1].ts <= ts)
        i++;
    *hint = i;
    return ph->nmem > 0 ? &ph->mem[i] : NULL;
}

/* Each poll: the system (the kernel and the groups never killed for the
 * app) and the cached apps (the groups killed before it). */
static int from_polls(const trc_pf_phone *ph, series_set *a, cap_phone *p)
{
    size_t hint = 0;
    int role[TRC_PF_GROUPS];
    for (int g = 0; g < TRC_PF_GROUPS; g++)
        role[g] = rpl__oom_role(trc_pf_group_label[g]);
    for (size_t i = 0; i < ph->npoll; i++) {
        const trc_pf_poll *q = &ph->poll[i];
        double sys = 0, cached = 0, n = 0;
        for (int g = 0; g < TRC_PF_GROUPS; g++) {
            if (role[g] == CAP_ROLE_SYSTEM)
                sys += (double)q->kb[g] * KIB;
            else
                cached += (double)q->kb[g] * KIB, n += q->n[g];
        }
        const trc_pf_meminfo *m = meminfo_at(ph, q->ts, &hint);
        double k = m != NULL ? kernel_kb(m) : -1;
        if ((k >= 0 && !add(&a->sys, k * KIB + sys)) || !add(&a->cached, cached) ||
            !add(&a->count, n))
            return 0;
    }
    /* the header's table: each group's median over the polls */
    for (int g = 0; g < TRC_PF_GROUPS && ph->npoll > 0 && p->ngroups < CAP_GROUPS_MAX; g++) {
        acc kb = {0}, n = {0};
        for (size_t i = 0; i < ph->npoll; i++)
            if (!add(&kb, (double)ph->poll[i].kb[g] * KIB) || !add(&n, ph->poll[i].n[g])) {
                free(kb.v);
                free(n.v);
                return 0;
            }
        cap_group *x = &p->group[p->ngroups];
        snprintf(x->label, sizeof x->label, "%s", trc_pf_group_label[g]);
        x->pss = rpl__median(kb.v, kb.n);
        x->count = (unsigned)(rpl__median(n.v, n.n) + 0.5);
        x->role = role[g];
        x->line = 1;
        free(kb.v);
        free(n.v);
        if (x->count > 0)
            p->ngroups++;
    }
    return 1;
}

/* "brand/product/device:release/id/incremental:type/tags": the device. */
static void device_of(const char *fp, char *out, size_t n)
{
    const char *a = strchr(fp, '/');
    const char *b = a != NULL ? strchr(a + 1, '/') : NULL;
    const char *c = b != NULL ? strchr(b + 1, ':') : NULL;
    out[0] = '\0';
    if (c != NULL && c > b + 1)
        snprintf(out, n, "%.*s", (int)(c - b - 1), b + 1);
}

static int derive(const trc_pf_phone *ph, cap_phone *p)
{
    series_set a;
    memset(&a, 0, sizeof a);
    const char *what = ph->sized_pss > 0 && ph->sized_rss == 0 ? "Pss (smaps_rollup)"
                       : ph->sized_pss > 0 ? "Pss where polled, else VmRSS"
                                           : "VmRSS (an upper bound: pages shared with zygote "
                                             "count in every process)";
    int ok = from_meminfo(ph, &a) && from_polls(ph, &a, p) &&
             keep(p, CAP_RAM, &a.ram, "sys_stats meminfo's MemTotal", 1) &&
             keep(p, CAP_PAGE_CACHE, &a.pc, "meminfo's Active(file) + Inactive(file), the file "
                  "LRU", 1) &&
             keep(p, CAP_PAGE_CACHE_WS, &a.ws, "meminfo's Active(file): file pages referenced "
                  "again since they were read, the part reclaim keeps", 1) &&
             keep(p, CAP_ZRAM_SIZE, &a.zsize, "meminfo's SwapTotal (zram's disk size)", 1) &&
             keep(p, CAP_ZRAM_RATIO, &a.zratio, "SwapTotal - SwapFree over vmstat's nr_zspages "
                  "pages: what zram holds over what it occupies", 0) &&
             keep(p, CAP_SYSTEM, &a.sys, "the kernel (meminfo's Shmem, SUnreclaim, "
                  "VmallocUsed, PageTables, KernelStack) + the polls' OOM groups never killed for "
                  "the app (Native to Home, by oom_score_adj)", 1);
    char how[CAP_HOW];
    snprintf(how, sizeof how, "the polls' Foreground, Previous, B Services and Cached groups by "
             "oom_score_adj, sized by %s", what);
    ok = ok && keep(p, CAP_CACHED_APPS, &a.cached, how, 1) &&
         keep(p, CAP_CACHED_COUNT, &a.count, "the processes in them", 0);
    free(a.ram.v), free(a.pc.v), free(a.ws.v), free(a.zsize.v), free(a.zratio.v);
    free(a.sys.v), free(a.cached.v), free(a.count.v);
    if (!ok)
        return 0;
    if (p->f[CAP_RAM].line == 0 && ph->ram_bytes > 0)
        cap__set(p, CAP_RAM, (double)ph->ram_bytes, 1, "SystemInfo's system_ram_bytes");
    if (ph->sdk > 0)
        cap__set(p, CAP_SDK, (double)ph->sdk, 1, "SystemInfo's android_sdk_version %u",
                 (unsigned)ph->sdk);
    return 1;
}

/* The spikes, the span, the kills; what the trace could not give. */
static int spikes_and_notes(const trc_pf_phone *ph, cap_phone *p)
{
    if (ph->npoll >= 2)
        p->span_s = (double)(ph->poll[ph->npoll - 1].ts - ph->poll[0].ts) / 1e9;
    p->polls = (unsigned)(ph->npoll > 0xffffffffu ? 0xffffffffu : ph->npoll);
    if (ph->nspike > 0) {
        unsigned n = ph->nspike > 4096 ? 4096 : (unsigned)ph->nspike;
        if ((p->spike = malloc(n * sizeof *p->spike)) == NULL)
            return 0;
        for (unsigned i = 0; i < n; i++)
            p->spike[i] = (double)ph->spike[(size_t)i * ph->nspike / n].kb * KIB;
        p->nspikes = n;
    }
    p->kills = (double)ph->kills;
    double span = ph->last_ts > ph->first_ts ? (double)(ph->last_ts - ph->first_ts) / 1e9 : 0;
    cap__missing(p, "%zu process_stats polls and %zu sys_stats samples over %.1f min; %llu "
                 "processes (%llu sized by Pss, %llu by VmRSS), %llu seen to end",
                 ph->npoll, ph->nmem, span / 60, (unsigned long long)ph->processes,
                 (unsigned long long)ph->sized_pss, (unsigned long long)ph->sized_rss,
                 (unsigned long long)ph->deaths);
    if (span > 0)
        cap__missing(p, "kills of processes it records (lmkd's, the kernel's): %llu, %.1f per "
                     "hour; foreground rises of %d MiB or more: %u",
                     (unsigned long long)ph->kills, (double)ph->kills * 3600 / span,
                     TRC_PF_SPIKE_MIN_KB / 1024, p->nspikes);
    if (ph->nmem == 0)
        cap__missing(p, "no linux.sys_stats meminfo: the RAM, the kernel's share, the page "
                        "cache and zram are not derived");
    if (ph->npoll == 0)
        cap__missing(p, "no linux.process_stats polls: the system's processes, the other apps "
                        "and the foreground's spikes are not derived");
    cap__missing(p, "a trace holds no zoneinfo and no properties: the watermarks, lmkd's "
                    "mode and properties and the Java heap limit are not derived");
    if (ph->ignored_packets > 0)
        cap__ignored(p, "trace packets of other data sources",
                     ph->ignored_packets > 0xffffffffu ? 0xffffffffu
                                                       : (unsigned)ph->ignored_packets);
    return 1;
}

int rpl__perfetto_phone(const char *path, const void *data, size_t len, const char *name,
                        cap_phone *p, sim_error *err)
{
    trc_pf_phone ph;
    int rc = path != NULL ? trc_pf_phone_file(path, &ph, err)
                          : trc_pf_phone_buffer(data, len, name, &ph, err);
    p->os = MDL_OS_ANDROID;
    p->no_lines = 1;
    if (rc == SIM_OK) {
        snprintf(p->maker, sizeof p->maker, "%s", ph.maker);
        device_of(ph.fingerprint, p->device, sizeof p->device);
        if (!derive(&ph, p) || !spikes_and_notes(&ph, p))
            rc = sim_error_set(err, SIM_ENOMEM, "%s: out of memory", name);
    }
    trc_pf_phone_free(&ph);
    return rc;
}
