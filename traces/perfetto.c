/* perfetto.c - `oomsim import perfetto`: one process's memory, stages and
 * death out of a binary Perfetto trace (docs/perfetto.md).
 *
 * A trace is a sequence of TracePacket messages (field 1 of Trace).  The
 * field numbers below are those of Perfetto's public .proto files
 * (protos/perfetto/trace/...); tests/data/perfetto/subset.proto keeps the
 * ones read here.  Three passes over the packets, each one packet at a
 * time:
 *   1. identity: process_tree, process and thread descriptors, track
 *      descriptors: the chosen process's pids, its threads and its tracks;
 *   2. mm ids: an rss_stat event with curr set, from one of its threads,
 *      names the process's mm; an rss_stat with curr 0 (kswapd reclaiming
 *      it, say) is the process's when it names that mm;
 *   3. events: the chosen process's memory, adj, slices and kills, kept as
 *      compact records.
 * Ftrace bundles are per CPU and not in time order, so the records are
 * sorted by time, then walked twice: once to measure each stage slice
 * (its time, its peak, what stayed), once to write the events. */
#include "traces/traces.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include <zlib.h>
#include <zstd.h>
#include <zstd_errors.h>

#include "traces/pbwire.h"

/* ------------------------------------------------------------ field numbers */

enum { /* TracePacket */
    TP_FTRACE = 1, TP_PROCESS_TREE = 2, TP_CLOCK_SNAPSHOT = 6, TP_TIMESTAMP = 8,
    TP_PROCESS_STATS = 9, TP_SEQ_ID = 10, TP_TRACK_EVENT = 11, TP_INTERNED = 12,
    TP_SEQ_FLAGS = 13, TP_INCR_CLEARED = 41, TP_PROCESS_DESC = 43, TP_THREAD_DESC = 44,
    TP_COMPRESSED = 50, TP_CLOCK_ID = 58, TP_DEFAULTS = 59, TP_TRACK_DESC = 60,
    TP_ZSTD = 133
};
enum { SEQ_INCREMENTAL_STATE_CLEARED = 1 };
enum { CLOCK_BOOTTIME = 6, CLOCK_SEQUENCE_FIRST = 64, CLOCK_SEQUENCE_END = 128 };
/* FtraceEventBundle: event = 2; FtraceEvent: timestamp 1, pid 2, then the
 * event's own message by its oneof field number. */
enum { FE_PRINT = 3, FE_LOWMEMORY_KILL = 35, FE_RSS_STAT = 313, FE_OOM_SCORE_ADJ = 326,
       FE_MARK_VICTIM = 334, FE_RSS_STAT_THROTTLED = 359 };
/* rss_stat's member: the kernel's mm counters (MM_FILEPAGES, MM_ANONPAGES,
 * MM_SWAPENTS, MM_SHMEMPAGES). */
enum { M_FILE = 0, M_ANON, M_SWAP, M_SHMEM, M_COUNT };
/* TrackEvent.type */
enum { TE_SLICE_BEGIN = 1, TE_SLICE_END = 2 };

/* Android's adj levels (ProcessList.java) and the importance an exit record
 * carries (ActivityManager.RunningAppProcessInfo). */
#define ADJ_VISIBLE 100
#define ADJ_PERCEPTIBLE 200
#define ADJ_PREVIOUS 700
#define ADJ_CACHED_MIN 900
#define ADJ_UNKNOWN INT64_MIN

/* ------------------------------------------------------------------- state */

/* A u64 -> i64 map, open addressing (keys are never removed). */
typedef struct u64map {
    uint64_t *key;
    int64_t *val;
    uint8_t *used;
    size_t cap, n;
} u64map;

enum { R_MEM = 0, R_ADJ, R_KILL, R_BEGIN, R_END };
enum { K_LMKD = 0, K_KERNEL_OOM, K_LOWMEMORYKILLER };
enum { LANE_THREAD = 0, LANE_TRACK };

/* One thing that happened to the chosen process. */
typedef struct rec {
    int64_t ts;      /* ns */
    int64_t v;       /* R_MEM: bytes; R_ADJ: adj; R_KILL: adj or ADJ_UNKNOWN */
    int64_t lane;    /* slices: thread id or track uuid; R_KILL: lmkd's reason (-1: none) */
    uint32_t seq;    /* the order it was read in */
    int32_t pid;
    uint8_t type, sub; /* R_MEM: member; R_KILL: K_*; slices: LANE_* */
    uint16_t name;   /* R_BEGIN: stage << 8 | (part + 1); 0: not an oomsim slice */
} rec;

/* A sequence's incremental state (track events). */
typedef struct seqstate {
    uint32_t id;
    uint32_t gen;             /* bumped when the state is cleared */
    uint64_t default_track;   /* 0: none */
    int32_t thread_pid, thread_tid; /* its ThreadDescriptor, 0: none */
    uint32_t clock_id;        /* packet default clock, 0: boot */
    uint32_t seq_clock;       /* a sequence-scoped clock defined by a snapshot, 0: none */
    int incremental;
    uint64_t unit_ns, snap_value, value;
    int64_t boot_ref;
} seqstate;

#define OPEN_MAX 4096 /* slices open at once */
#define PIDS_MAX 4096 /* the chosen process's pids */
#define SEQS_MAX 65536

typedef struct open_slice {
    int64_t lane;
    int32_t pid;
    uint8_t lane_kind;
    int64_t slice;      /* index in slices, -1: not an oomsim slice */
    int64_t begin_ts, request;
    int64_t begin_mem[TRC_MEM_COUNT], peak[TRC_MEM_COUNT];
} open_slice;

typedef struct slice_result {
    int stage, part; /* part: its index + 1, 0: none */
    int64_t duration_us;
    int64_t alloc[TRC_MEM_COUNT], keep[TRC_MEM_COUNT];
} slice_result;

typedef struct pidstate {
    int32_t pid;
    int64_t member[M_COUNT];
    int64_t adj;
    int killed, seen;
} pidstate;

typedef struct imp {
    const trc_pf_opts *o;
    const char *name;
    sim_error *err;
    trc_pf_summary *sum;
    int pass;
    /* identity */
    u64map pids, threads, tracks, mms, names;
    u64map seq_index; /* sequence id -> index in seqs */
    char process[TRC_TEXT_MAX];
    /* sequences */
    seqstate *seqs;
    size_t nseq, capseq;
    /* the records */
    rec *recs;
    size_t nrec, caprec;
    /* where the reader is, for messages */
    uint64_t packet_off;
    int depth;          /* 1 inside a compressed bundle */
    uint8_t *inflated;  /* a decompressed bundle */
    size_t inflated_cap;
} imp;

/* ------------------------------------------------------------------ helpers */

static int fail(imp *m, int code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
static int fail(imp *m, int code, const char *fmt, ...)
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

static int oom(imp *m)
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

static int64_t *map_find(const u64map *h, uint64_t k)
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

static int map_put(u64map *h, uint64_t k, int64_t v)
{
    int64_t *at = map_find(h, k);
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
                (void)map_put(&g, h->key[i], h->val[i]);
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

static void map_free(u64map *h)
{
    free(h->key), free(h->val), free(h->used);
    memset(h, 0, sizeof *h);
}

/* The chosen process of thread `tid`, or -1. */
static int32_t tgid_of(const imp *m, int64_t tid)
{
    if (map_find(&m->pids, (uint64_t)tid) != NULL)
        return (int32_t)tid;
    const int64_t *t = map_find(&m->threads, (uint64_t)tid);
    return t != NULL ? (int32_t)*t : -1;
}

static int chosen(const imp *m, int64_t pid)
{
    return pid > 0 && map_find(&m->pids, (uint64_t)pid) != NULL;
}

/* Bounds on what a phone's trace holds: a corrupt value is refused, so
 * that no sum or difference of them can overflow. */
#define TS_MAX (INT64_C(1) << 62)   /* ns: 146 years of uptime */
#define SIZE_MAX_ (INT64_C(1) << 48) /* bytes of one counter: 256 TiB */

static int add_rec(imp *m, const rec *r)
{
    if (r->ts < 0 || r->ts >= TS_MAX)
        return fail(m, SIM_EINPUT, "a timestamp of %" PRId64 " ns (out of range)", r->ts);
    if (r->type == R_MEM && (r->v < 0 || r->v > SIZE_MAX_))
        return fail(m, SIM_EINPUT, "a memory size of %" PRId64 " bytes (more than 256 TiB)",
                    r->v);
    if (m->nrec == m->caprec) {
        size_t nc = m->caprec ? m->caprec * 2 : 1024;
        rec *p = realloc(m->recs, nc * sizeof *p);
        if (p == NULL)
            return oom(m);
        m->recs = p;
        m->caprec = nc;
    }
    m->recs[m->nrec] = *r;
    m->recs[m->nrec].seq = (uint32_t)m->nrec;
    m->nrec++;
    return SIM_OK;
}

/* Adds pid as one of the chosen process's lives. */
static int choose(imp *m, int64_t pid)
{
    if (pid <= 0 || chosen(m, pid))
        return SIM_OK;
    if (m->pids.n >= PIDS_MAX)
        return fail(m, SIM_ELIMIT, "more than %d processes named as the chosen one", PIDS_MAX);
    return map_put(&m->pids, (uint64_t)pid, pid) == SIM_OK ? SIM_OK : oom(m);
}

/* Does a process's name (a command line's first word, or a 15-byte comm)
 * name the chosen process? */
static int name_matches(const imp *m, const uint8_t *s, size_t n, int is_comm)
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

static void keep_name(imp *m, const uint8_t *s, size_t n)
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

/* ------------------------------------------------------- identity (pass 1) */

static int process_tree(imp *m, const uint8_t *p, size_t len)
{
    pb_msg t = pb_msg_of(p, len);
    pb_field f;
    int r;
    while ((r = pb_next(&t, &f)) == 1) {
        if (f.wt != PB_LEN || (f.num != 1 && f.num != 2))
            continue;
        pb_msg s = pb_msg_of(f.p, f.len);
        pb_field g;
        int64_t pid = 0, tgid = 0;
        const uint8_t *cmd = NULL;
        size_t cmdlen = 0;
        int is_comm = 0, rr;
        while ((rr = pb_next(&s, &g)) == 1) {
            if (f.num == 1) { /* Process: pid 1, cmdline 3 (repeated), cmdline_is_comm 9 */
                if (g.num == 1 && g.wt == PB_VARINT)
                    pid = pb_int(&g);
                else if (g.num == 3 && g.wt == PB_LEN && cmd == NULL)
                    cmd = g.p, cmdlen = g.len;
                else if (g.num == 9 && g.wt == PB_VARINT)
                    is_comm = g.v != 0;
            } else { /* Thread: tid 1, tgid 3 */
                if (g.num == 1 && g.wt == PB_VARINT)
                    pid = pb_int(&g);
                else if (g.num == 3 && g.wt == PB_VARINT)
                    tgid = pb_int(&g);
            }
        }
        if (rr < 0)
            return fail(m, SIM_EINPUT, "malformed process_tree entry");
        if (f.num == 1) {
            int match = m->o->process != NULL ? (cmd != NULL && name_matches(m, cmd, cmdlen,
                                                                             is_comm))
                                              : pid == m->o->pid;
            if (match && pid > 0) {
                if (cmd != NULL)
                    keep_name(m, cmd, cmdlen);
                if (choose(m, pid) != SIM_OK)
                    return m->err->code;
            }
        } else if (pid > 0 && pid != tgid && chosen(m, tgid)) {
            if (map_put(&m->threads, (uint64_t)pid, tgid) != SIM_OK)
                return oom(m);
        }
    }
    return r < 0 ? fail(m, SIM_EINPUT, "malformed process_tree") : SIM_OK;
}

/* ProcessDescriptor {pid 1, cmdline 2, process_name 6}: *pid, and whether
 * it names the chosen process. */
static int process_descriptor(imp *m, const uint8_t *p, size_t len, int64_t *pid, int *match)
{
    pb_msg d = pb_msg_of(p, len);
    pb_field f;
    int r;
    *pid = 0;
    *match = 0;
    while ((r = pb_next(&d, &f)) == 1) {
        if (f.num == 1 && f.wt == PB_VARINT)
            *pid = pb_int(&f);
        else if ((f.num == 6 || f.num == 2) && f.wt == PB_LEN && name_matches(m, f.p, f.len, 0)) {
            *match = 1;
            keep_name(m, f.p, f.len);
        }
    }
    if (r < 0)
        return fail(m, SIM_EINPUT, "malformed process descriptor");
    if (m->o->process == NULL)
        *match = *pid == m->o->pid;
    return SIM_OK;
}

/* ThreadDescriptor {pid 1, tid 2}. */
static int thread_descriptor(imp *m, const uint8_t *p, size_t len, int64_t *pid, int64_t *tid)
{
    pb_msg d = pb_msg_of(p, len);
    pb_field f;
    int r;
    *pid = *tid = 0;
    while ((r = pb_next(&d, &f)) == 1) {
        if (f.num == 1 && f.wt == PB_VARINT)
            *pid = pb_int(&f);
        else if (f.num == 2 && f.wt == PB_VARINT)
            *tid = pb_int(&f);
    }
    return r < 0 ? fail(m, SIM_EINPUT, "malformed thread descriptor") : SIM_OK;
}

/* TrackDescriptor {uuid 1, process 3, thread 4, parent_uuid 5}: a track of
 * the chosen process is remembered with its pid. */
static int track_descriptor(imp *m, const uint8_t *p, size_t len)
{
    pb_msg d = pb_msg_of(p, len);
    pb_field f;
    int r;
    uint64_t uuid = 0, parent = 0;
    int64_t pid = 0, tid = 0;
    int match = 0;
    while ((r = pb_next(&d, &f)) == 1) {
        if (f.num == 1 && f.wt == PB_VARINT)
            uuid = f.v;
        else if (f.num == 5 && f.wt == PB_VARINT)
            parent = f.v;
        else if (f.num == 3 && f.wt == PB_LEN) {
            if (process_descriptor(m, f.p, f.len, &pid, &match) != SIM_OK)
                return m->err->code;
            if (match && choose(m, pid) != SIM_OK)
                return m->err->code;
        } else if (f.num == 4 && f.wt == PB_LEN) {
            if (thread_descriptor(m, f.p, f.len, &pid, &tid) != SIM_OK)
                return m->err->code;
        }
    }
    if (r < 0)
        return fail(m, SIM_EINPUT, "malformed track_descriptor");
    if (pid == 0 && parent != 0) {
        const int64_t *pp = map_find(&m->tracks, parent);
        if (pp != NULL)
            pid = *pp;
    }
    if (uuid != 0 && chosen(m, pid) && map_put(&m->tracks, uuid, pid) != SIM_OK)
        return oom(m);
    if (tid > 0 && tid != pid && chosen(m, pid) &&
        map_put(&m->threads, (uint64_t)tid, pid) != SIM_OK)
        return oom(m);
    return SIM_OK;
}

/* ---------------------------------------------------------------- ftrace */

static int64_t parse_int(const char **s, const char *end, int *ok)
{
    const char *p = *s;
    int neg = 0;
    if (p < end && *p == '-')
        neg = 1, p++;
    if (p >= end || *p < '0' || *p > '9') {
        *ok = 0;
        return 0;
    }
    int64_t v = 0;
    while (p < end && *p >= '0' && *p <= '9') {
        if (v > (INT64_MAX - 9) / 10) {
            *ok = 0;
            return 0;
        }
        v = v * 10 + (*p++ - '0');
    }
    *s = p;
    return neg ? -v : v;
}

/* "lmk,PID,REASON,ADJ[,MIN_SCORE,MAX_THRASHING]" (lmkd's kill, in its
 * instant and its slice form): a kill record for the chosen process. */
static int lmk_kill(imp *m, int64_t ts, const char *s, const char *end)
{
    int64_t num[5];
    int n = 0, ok = 1;
    s += 4; /* "lmk," */
    while (n < 5) {
        num[n++] = parse_int(&s, end, &ok);
        if (!ok)
            return SIM_OK; /* not lmkd's: left alone */
        if (s == end)
            break;
        if (*s != ',')
            return SIM_OK;
        s++;
    }
    if (n < 3)
        return SIM_OK;
    if (!chosen(m, num[0])) {
        m->sum->kill_other++;
        return SIM_OK;
    }
    rec r = {ts, num[2], num[1], 0, (int32_t)num[0], R_KILL, K_LMKD, 0};
    return add_rec(m, &r);
}

/* "oomsim:STAGE:PART": the stage and the part's index + 1 (0: no part), or
 * 0 when the name is not an oomsim stage slice. */
static int slice_name(imp *m, const char *s, size_t n, uint16_t *code)
{
    *code = 0;
    if (n < 8 || memcmp(s, "oomsim:", 7) != 0)
        return SIM_OK;
    s += 7, n -= 7;
    const char *colon = memchr(s, ':', n);
    size_t sl = colon != NULL ? (size_t)(colon - s) : n;
    int stage = -1;
    for (int k = 0; k < TRC_EXIT; k++) {
        const char *nm = trc_stage_name((trc_stage)k);
        if (strlen(nm) == sl && memcmp(nm, s, sl) == 0)
            stage = k;
    }
    if (stage < 0)
        return SIM_OK;
    unsigned part = 0;
    if (colon != NULL) {
        const char *pn = colon + 1;
        size_t pl = n - sl - 1;
        if (pl == 0)
            return SIM_OK;
        if (pl >= TRC_TEXT_MAX)
            return fail(m, SIM_EINPUT, "slice oomsim:%s: a part name of %zu bytes (at most %d)",
                        trc_stage_name((trc_stage)stage), pl, TRC_TEXT_MAX - 1);
        for (size_t i = 0; i < pl; i++)
            if ((unsigned char)pn[i] <= 0x20 || (unsigned char)pn[i] >= 0x7f || pn[i] == ',')
                return fail(m, SIM_EINPUT, "slice oomsim:%s: a part name may hold printable "
                            "ASCII other than a space or a comma only",
                            trc_stage_name((trc_stage)stage));
        trc_pf_summary *sum = m->sum;
        for (unsigned k = 0; k < sum->nparts && part == 0; k++)
            if (strlen(sum->parts[k]) == pl && memcmp(sum->parts[k], pn, pl) == 0)
                part = k + 1;
        if (part == 0) {
            if (sum->nparts == TRC_PF_PARTS_MAX)
                return fail(m, SIM_ELIMIT, "more than %d part names in oomsim slices",
                            TRC_PF_PARTS_MAX);
            memcpy(sum->parts[sum->nparts], pn, pl);
            sum->parts[sum->nparts][pl] = '\0';
            part = ++sum->nparts;
        }
    }
    *code = (uint16_t)((unsigned)stage << 8 | part);
    return SIM_OK;
}

/* An atrace line (ftrace `print`): B|TGID|NAME, E|TGID, E, N|TGID|TRACK|NAME,
 * C|TGID|NAME|VALUE. */
static int print_event(imp *m, int64_t ts, int64_t tid, const uint8_t *buf, size_t len)
{
    const char *s = (const char *)buf, *end = s + len;
    while (end > s && (end[-1] == '\n' || end[-1] == '\0'))
        end--;
    if (end - s < 1)
        return SIM_OK;
    char ph = s[0];
    int64_t tgid = 0;
    const char *rest = end;
    if (end - s >= 2 && s[1] == '|') {
        int ok = 1;
        const char *q = s + 2;
        tgid = parse_int(&q, end, &ok);
        if (!ok)
            return SIM_OK;
        rest = q < end && *q == '|' ? q + 1 : end;
    } else if (!(ph == 'E' && end - s == 1)) {
        return SIM_OK;
    }
    size_t rl = (size_t)(end - rest);
    switch (ph) {
    case 'B': {
        if (rl >= 4 && memcmp(rest, "lmk,", 4) == 0)
            return lmk_kill(m, ts, rest, end);
        int32_t pid = (int32_t)tgid;
        if (!chosen(m, pid))
            return SIM_OK;
        rec r = {ts, 0, tid, 0, pid, R_BEGIN, LANE_THREAD, 0};
        if (slice_name(m, rest, rl, &r.name) != SIM_OK)
            return m->err->code;
        m->sum->slices++;
        return add_rec(m, &r);
    }
    case 'E': {
        int32_t pid = tgid > 0 ? (int32_t)tgid : tgid_of(m, tid);
        if (!chosen(m, pid))
            return SIM_OK;
        rec r = {ts, 0, tid, 0, pid, R_END, LANE_THREAD, 0};
        return add_rec(m, &r);
    }
    case 'N': { /* N|TGID|TRACK|NAME */
        const char *bar = memchr(rest, '|', rl);
        if (bar == NULL)
            return SIM_OK;
        const char *nm = bar + 1;
        if (end - nm >= 4 && memcmp(nm, "lmk,", 4) == 0)
            return lmk_kill(m, ts, nm, end);
        return SIM_OK;
    }
    case 'C': { /* lmkd's older counter: kill_one_process = the victim's pid, then 0 */
        static const char k1p[] = "kill_one_process|";
        if (rl < sizeof k1p || memcmp(rest, k1p, sizeof k1p - 1) != 0)
            return SIM_OK;
        const char *q = rest + sizeof k1p - 1;
        int ok = 1;
        int64_t victim = parse_int(&q, end, &ok);
        if (!ok || victim <= 0)
            return SIM_OK;
        if (!chosen(m, victim)) {
            m->sum->kill_other++;
            return SIM_OK;
        }
        rec r = {ts, ADJ_UNKNOWN, -1, 0, (int32_t)victim, R_KILL, K_LMKD, 0};
        return add_rec(m, &r);
    }
    default:
        return SIM_OK;
    }
}

/* rss_stat and rss_stat_throttled: the member's new size, for the process
 * the event is about. */
static int rss_stat(imp *m, int64_t ts, int64_t tid, int throttled, const uint8_t *p,
                    size_t len)
{
    pb_msg d = pb_msg_of(p, len);
    pb_field f;
    int r;
    int64_t member = -1, size = -1, mm = 0;
    int has_curr = 0, curr = 0, has_mm = 0;
    while ((r = pb_next(&d, &f)) == 1) {
        if (f.wt != PB_VARINT)
            continue;
        unsigned n = f.num;
        if (throttled) /* curr 1, member 2, mm_id 3, size 4 */
            n = n == 1 ? 3 : n == 2 ? 1 : n == 3 ? 4 : n == 4 ? 2 : 0;
        switch (n) { /* member 1, size 2, curr 3, mm_id 4 */
        case 1: member = pb_int(&f); break;
        case 2: size = pb_int(&f); break;
        case 3: has_curr = 1, curr = f.v != 0; break;
        case 4: has_mm = 1, mm = (int64_t)(uint32_t)f.v; break;
        default: break;
        }
    }
    if (r < 0)
        return fail(m, SIM_EINPUT, "malformed rss_stat event");
    if (member < 0 || member >= M_COUNT || size < 0)
        return SIM_OK;
    int32_t pid;
    if (has_curr && has_mm) {
        if (curr) {
            pid = tgid_of(m, tid);
            if (m->pass == 2 && pid > 0) /* the process's own mm */
                return map_put(&m->mms, (uint64_t)mm, pid) == SIM_OK ? SIM_OK : oom(m);
        } else {
            const int64_t *owner = map_find(&m->mms, (uint64_t)mm);
            pid = owner != NULL ? (int32_t)*owner : -1;
        }
    } else {
        pid = tgid_of(m, tid);
    }
    if (m->pass != 3 || pid <= 0)
        return SIM_OK;
    m->sum->memory_events++;
    rec rr = {ts, size, 0, 0, pid, R_MEM, (uint8_t)member, 0};
    return add_rec(m, &rr);
}

static int ftrace_event(imp *m, const uint8_t *p, size_t len)
{
    pb_msg d = pb_msg_of(p, len);
    pb_field f;
    int r;
    int64_t ts = 0, tid = 0;
    while ((r = pb_next(&d, &f)) == 1) {
        if (f.num == 1 && f.wt == PB_VARINT) {
            ts = (int64_t)f.v;
            continue;
        }
        if (f.num == 2 && f.wt == PB_VARINT) {
            tid = (int64_t)(uint32_t)f.v;
            continue;
        }
        if (f.wt != PB_LEN)
            continue;
        if (f.num == FE_RSS_STAT || f.num == FE_RSS_STAT_THROTTLED) {
            if (rss_stat(m, ts, tid, f.num == FE_RSS_STAT_THROTTLED, f.p, f.len) != SIM_OK)
                return m->err->code;
            continue;
        }
        if (m->pass != 3)
            continue;
        pb_msg e = pb_msg_of(f.p, f.len);
        pb_field g;
        int rr = 0;
        switch (f.num) {
        case FE_PRINT: /* buf 2 */
            while ((rr = pb_next(&e, &g)) == 1)
                if (g.num == 2 && g.wt == PB_LEN && print_event(m, ts, tid, g.p, g.len) != SIM_OK)
                    return m->err->code;
            break;
        case FE_OOM_SCORE_ADJ: { /* oom_score_adj 2, pid 3 */
            int64_t adj = ADJ_UNKNOWN, pid = 0;
            while ((rr = pb_next(&e, &g)) == 1) {
                if (g.num == 2 && g.wt == PB_VARINT)
                    adj = (int32_t)g.v;
                else if (g.num == 3 && g.wt == PB_VARINT)
                    pid = (int32_t)g.v;
            }
            if (rr == 0 && adj != ADJ_UNKNOWN && chosen(m, pid)) {
                rec x = {ts, adj, 0, 0, (int32_t)pid, R_ADJ, 0, 0};
                if (add_rec(m, &x) != SIM_OK)
                    return m->err->code;
            }
            break;
        }
        case FE_MARK_VICTIM:    /* pid 1 */
        case FE_LOWMEMORY_KILL: { /* pid 2 */
            unsigned want = f.num == FE_MARK_VICTIM ? 1 : 2;
            int64_t pid = 0;
            while ((rr = pb_next(&e, &g)) == 1)
                if (g.num == want && g.wt == PB_VARINT)
                    pid = (int32_t)g.v;
            if (rr != 0)
                break;
            if (!chosen(m, pid)) {
                if (pid > 0)
                    m->sum->kill_other++;
                break;
            }
            rec x = {ts, ADJ_UNKNOWN, -1, 0, (int32_t)pid, R_KILL,
                     f.num == FE_MARK_VICTIM ? K_KERNEL_OOM : K_LOWMEMORYKILLER, 0};
            if (add_rec(m, &x) != SIM_OK)
                return m->err->code;
            break;
        }
        default:
            break;
        }
        if (rr < 0)
            return fail(m, SIM_EINPUT, "malformed ftrace event (field %u)", f.num);
    }
    return r < 0 ? fail(m, SIM_EINPUT, "malformed ftrace event") : SIM_OK;
}

static int ftrace_bundle(imp *m, const uint8_t *p, size_t len)
{
    pb_msg b = pb_msg_of(p, len);
    pb_field f;
    int r;
    while ((r = pb_next(&b, &f)) == 1)
        if (f.num == 2 && f.wt == PB_LEN && ftrace_event(m, f.p, f.len) != SIM_OK)
            return m->err->code;
    return r < 0 ? fail(m, SIM_EINPUT, "malformed ftrace_events bundle") : SIM_OK;
}

/* process_stats: each polled process's rss by kind and its adj. */
static int process_stats(imp *m, int64_t ts, const uint8_t *p, size_t len)
{
    pb_msg s = pb_msg_of(p, len);
    pb_field f;
    int r;
    while ((r = pb_next(&s, &f)) == 1) {
        if (f.num != 1 || f.wt != PB_LEN)
            continue;
        pb_msg q = pb_msg_of(f.p, f.len);
        pb_field g;
        int rr;
        int64_t pid = 0, adj = ADJ_UNKNOWN, kb[M_COUNT];
        int has[M_COUNT] = {0};
        while ((rr = pb_next(&q, &g)) == 1) {
            if (g.wt != PB_VARINT)
                continue;
            int member = -1;
            switch (g.num) {
            case 1: pid = pb_int(&g); break;
            case 4: member = M_ANON; break;   /* rss_anon_kb */
            case 5: member = M_FILE; break;   /* rss_file_kb */
            case 6: member = M_SHMEM; break;  /* rss_shmem_kb */
            case 7: member = M_SWAP; break;   /* vm_swap_kb */
            case 10: adj = pb_int(&g); break; /* oom_score_adj */
            default: break;
            }
            if (member >= 0) {
                if (g.v > (uint64_t)SIZE_MAX_ / 1024)
                    return fail(m, SIM_EINPUT, "process_stats: a size of %" PRIu64 " kB (more "
                                "than 256 TiB)", g.v);
                kb[member] = (int64_t)g.v, has[member] = 1;
            }
        }
        if (rr < 0)
            return fail(m, SIM_EINPUT, "malformed process_stats entry");
        if (!chosen(m, pid))
            continue;
        for (int k = 0; k < M_COUNT; k++) {
            if (!has[k])
                continue;
            m->sum->memory_events++;
            rec x = {ts, kb[k] * 1024, 0, 0, (int32_t)pid, R_MEM, (uint8_t)k, 0};
            if (add_rec(m, &x) != SIM_OK)
                return m->err->code;
        }
        if (adj != ADJ_UNKNOWN) {
            rec x = {ts, adj, 0, 0, (int32_t)pid, R_ADJ, 0, 0};
            if (add_rec(m, &x) != SIM_OK)
                return m->err->code;
        }
    }
    return r < 0 ? fail(m, SIM_EINPUT, "malformed process_stats") : SIM_OK;
}

/* ---------------------------------------------------------- track events */

static seqstate *seq_of(imp *m, uint32_t id)
{
    const int64_t *at = map_find(&m->seq_index, id); /* every packet asks: a hash, not a scan */
    if (at != NULL)
        return &m->seqs[*at];
    if (m->nseq == SEQS_MAX) {
        fail(m, SIM_ELIMIT, "more than %d packet sequences", SEQS_MAX);
        return NULL;
    }
    if (m->nseq == m->capseq) {
        size_t nc = m->capseq ? m->capseq * 2 : 16;
        seqstate *p = realloc(m->seqs, nc * sizeof *p);
        if (p == NULL) {
            oom(m);
            return NULL;
        }
        m->seqs = p;
        m->capseq = nc;
    }
    if (map_put(&m->seq_index, id, (int64_t)m->nseq) != SIM_OK) {
        oom(m);
        return NULL;
    }
    seqstate *s = &m->seqs[m->nseq++];
    memset(s, 0, sizeof *s);
    s->id = id;
    return s;
}

static uint64_t name_key(const imp *m, const seqstate *s, uint64_t iid)
{
    return (uint64_t)(s - m->seqs) << 48 | (uint64_t)(s->gen & 0xffff) << 32 | iid;
}

/* InternedData {event_names 2: EventName {iid 1, name 2}}: the oomsim
 * stage names are kept (the others are not oomsim slices). */
static int interned(imp *m, seqstate *s, const uint8_t *p, size_t len)
{
    pb_msg d = pb_msg_of(p, len);
    pb_field f;
    int r;
    while ((r = pb_next(&d, &f)) == 1) {
        if (f.num != 2 || f.wt != PB_LEN)
            continue;
        pb_msg e = pb_msg_of(f.p, f.len);
        pb_field g;
        int rr;
        uint64_t iid = 0;
        const uint8_t *nm = NULL;
        size_t nl = 0;
        while ((rr = pb_next(&e, &g)) == 1) {
            if (g.num == 1 && g.wt == PB_VARINT)
                iid = g.v;
            else if (g.num == 2 && g.wt == PB_LEN)
                nm = g.p, nl = g.len;
        }
        if (rr < 0)
            return fail(m, SIM_EINPUT, "malformed interned event name");
        if (nm == NULL || iid == 0 || iid > UINT32_MAX)
            continue;
        uint16_t code;
        if (slice_name(m, (const char *)nm, nl, &code) != SIM_OK)
            return m->err->code;
        if (code != 0 && map_put(&m->names, name_key(m, s, iid), code) != SIM_OK)
            return oom(m);
    }
    return r < 0 ? fail(m, SIM_EINPUT, "malformed interned_data") : SIM_OK;
}

/* TracePacketDefaults {timestamp_clock_id 58, track_event_defaults 11
 * {track_uuid 11}}. */
static int defaults(imp *m, seqstate *s, const uint8_t *p, size_t len)
{
    pb_msg d = pb_msg_of(p, len);
    pb_field f;
    int r;
    while ((r = pb_next(&d, &f)) == 1) {
        if (f.num == 58 && f.wt == PB_VARINT)
            s->clock_id = (uint32_t)f.v;
        else if (f.num == 11 && f.wt == PB_LEN) {
            pb_msg e = pb_msg_of(f.p, f.len);
            pb_field g;
            int rr;
            while ((rr = pb_next(&e, &g)) == 1)
                if (g.num == 11 && g.wt == PB_VARINT)
                    s->default_track = g.v;
            if (rr < 0)
                return fail(m, SIM_EINPUT, "malformed track_event_defaults");
        }
    }
    return r < 0 ? fail(m, SIM_EINPUT, "malformed trace_packet_defaults") : SIM_OK;
}

/* ClockSnapshot {clocks 1: Clock {clock_id 1, timestamp 2, is_incremental
 * 3, unit_multiplier_ns 4}}: a sequence-scoped clock and where it stands
 * against the boot clock. */
static int clock_snapshot(imp *m, seqstate *s, const uint8_t *p, size_t len)
{
    pb_msg d = pb_msg_of(p, len);
    pb_field f;
    int r;
    int64_t boot = -1;
    uint32_t id = 0;
    uint64_t value = 0, unit = 1;
    int incremental = 0;
    while ((r = pb_next(&d, &f)) == 1) {
        if (f.num != 1 || f.wt != PB_LEN)
            continue;
        pb_msg c = pb_msg_of(f.p, f.len);
        pb_field g;
        int rr;
        uint32_t cid = 0;
        uint64_t ts = 0, mult = 1;
        int inc = 0;
        while ((rr = pb_next(&c, &g)) == 1) {
            if (g.wt != PB_VARINT)
                continue;
            if (g.num == 1)
                cid = (uint32_t)g.v;
            else if (g.num == 2)
                ts = g.v;
            else if (g.num == 3)
                inc = g.v != 0;
            else if (g.num == 4)
                mult = g.v ? g.v : 1;
        }
        if (rr < 0)
            return fail(m, SIM_EINPUT, "malformed clock snapshot");
        if (cid == CLOCK_BOOTTIME)
            boot = (int64_t)ts;
        else if (cid >= CLOCK_SEQUENCE_FIRST && cid < CLOCK_SEQUENCE_END)
            id = cid, value = ts, unit = mult, incremental = inc;
    }
    if (r < 0)
        return fail(m, SIM_EINPUT, "malformed clock snapshot");
    if (id != 0 && boot >= 0) {
        s->seq_clock = id;
        s->snap_value = s->value = value;
        s->unit_ns = unit;
        s->incremental = incremental;
        s->boot_ref = boot;
    }
    return SIM_OK;
}

/* The packet's time on the boot clock (ns). */
static int64_t packet_time(seqstate *s, uint64_t ts, uint32_t clock_id)
{
    if (clock_id == 0 && s != NULL)
        clock_id = s->clock_id;
    if (s == NULL || clock_id == 0 || clock_id != s->seq_clock)
        return (int64_t)ts;
    if (s->incremental)
        s->value += ts;
    else
        s->value = ts;
    /* unsigned: a corrupt clock wraps, and add_rec refuses the time */
    return (int64_t)((uint64_t)s->boot_ref + (s->value - s->snap_value) * s->unit_ns);
}

/* TrackEvent {type 9, name_iid 10, track_uuid 11, name 23}. */
static int track_event(imp *m, seqstate *s, int64_t ts, const uint8_t *p, size_t len)
{
    pb_msg d = pb_msg_of(p, len);
    pb_field f;
    int r;
    uint64_t type = 0, iid = 0, track = s != NULL ? s->default_track : 0;
    const uint8_t *nm = NULL;
    size_t nl = 0;
    while ((r = pb_next(&d, &f)) == 1) {
        if (f.num == 9 && f.wt == PB_VARINT)
            type = f.v;
        else if (f.num == 10 && f.wt == PB_VARINT)
            iid = f.v;
        else if (f.num == 11 && f.wt == PB_VARINT)
            track = f.v;
        else if (f.num == 23 && f.wt == PB_LEN)
            nm = f.p, nl = f.len;
    }
    if (r < 0)
        return fail(m, SIM_EINPUT, "malformed track_event");
    if (type != TE_SLICE_BEGIN && type != TE_SLICE_END)
        return SIM_OK;
    int32_t pid = -1;
    uint8_t lane_kind = LANE_TRACK;
    int64_t lane = (int64_t)track;
    if (track != 0) {
        const int64_t *tp = map_find(&m->tracks, track);
        pid = tp != NULL ? (int32_t)*tp : -1;
    } else if (s != NULL && s->thread_pid > 0) { /* the sequence's thread */
        pid = s->thread_pid;
        lane_kind = LANE_THREAD;
        lane = s->thread_tid;
    }
    if (!chosen(m, pid))
        return SIM_OK;
    rec x = {ts, 0, lane, 0, pid, type == TE_SLICE_BEGIN ? R_BEGIN : R_END, lane_kind, 0};
    if (type == TE_SLICE_BEGIN) {
        m->sum->slices++;
        if (nm != NULL) {
            if (slice_name(m, (const char *)nm, nl, &x.name) != SIM_OK)
                return m->err->code;
        } else if (iid != 0 && s != NULL) {
            const int64_t *code = map_find(&m->names, name_key(m, s, iid));
            x.name = code != NULL ? (uint16_t)*code : 0;
        }
    }
    return add_rec(m, &x);
}

/* -------------------------------------------------------------- packets */

static int packets(imp *m, const uint8_t *p, size_t len, uint64_t base);

static int inflate_bundle(imp *m, const uint8_t *p, size_t len, int zstd)
{
    if (m->depth > 0)
        return fail(m, SIM_EINPUT, "a compressed bundle inside a compressed bundle");
    size_t out = 0;
    if (zstd) {
        ZSTD_DStream *z = ZSTD_createDStream();
        if (z == NULL)
            return oom(m);
        ZSTD_inBuffer in = {p, len, 0};
        size_t rc = 1;
        while (rc != 0) {
            if (out == m->inflated_cap) {
                if (m->inflated_cap >= TRC_PF_PACKET_MAX) {
                    ZSTD_freeDStream(z);
                    return fail(m, SIM_ELIMIT, "a zstd bundle larger than %zu MiB decompressed",
                                TRC_PF_PACKET_MAX >> 20);
                }
                size_t nc = m->inflated_cap ? m->inflated_cap * 2 : (size_t)1 << 20;
                uint8_t *q = realloc(m->inflated, nc);
                if (q == NULL) {
                    ZSTD_freeDStream(z);
                    return oom(m);
                }
                m->inflated = q;
                m->inflated_cap = nc;
            }
            ZSTD_outBuffer ob = {m->inflated, m->inflated_cap, out};
            rc = ZSTD_decompressStream(z, &ob, &in);
            out = ob.pos;
            if (ZSTD_isError(rc) && ZSTD_getErrorCode(rc) == ZSTD_error_memory_allocation) {
                ZSTD_freeDStream(z);
                return oom(m);
            }
            if (ZSTD_isError(rc)) {
                ZSTD_freeDStream(z);
                return fail(m, SIM_EINPUT, "corrupt zstd_compressed_packets (%s)",
                            ZSTD_getErrorName(rc));
            }
            if (rc != 0 && in.pos == in.size && ob.pos < ob.size) {
                ZSTD_freeDStream(z);
                return fail(m, SIM_EINPUT, "truncated zstd_compressed_packets");
            }
        }
        ZSTD_freeDStream(z);
    } else {
        z_stream z;
        memset(&z, 0, sizeof z);
        if (inflateInit(&z) != Z_OK)
            return oom(m);
        z.next_in = (Bytef *)(uintptr_t)p;
        z.avail_in = len > UINT_MAX ? UINT_MAX : (uInt)len;
        int rc = Z_OK;
        while (rc != Z_STREAM_END) {
            if (out == m->inflated_cap) {
                if (m->inflated_cap >= TRC_PF_PACKET_MAX) {
                    inflateEnd(&z);
                    return fail(m, SIM_ELIMIT, "a compressed bundle larger than %zu MiB "
                                "decompressed", TRC_PF_PACKET_MAX >> 20);
                }
                size_t nc = m->inflated_cap ? m->inflated_cap * 2 : (size_t)1 << 20;
                uint8_t *q = realloc(m->inflated, nc);
                if (q == NULL) {
                    inflateEnd(&z);
                    return oom(m);
                }
                m->inflated = q;
                m->inflated_cap = nc;
            }
            z.next_out = m->inflated + out;
            z.avail_out = (uInt)(m->inflated_cap - out);
            rc = inflate(&z, Z_NO_FLUSH);
            out = m->inflated_cap - z.avail_out;
            if (rc == Z_MEM_ERROR) {
                inflateEnd(&z);
                return oom(m);
            }
            if (rc != Z_OK && rc != Z_STREAM_END) {
                inflateEnd(&z);
                return fail(m, SIM_EINPUT, rc == Z_BUF_ERROR ? "truncated compressed_packets"
                                                             : "corrupt compressed_packets (%s)",
                            z.msg != NULL ? z.msg : "zlib");
            }
        }
        inflateEnd(&z);
    }
    if (m->pass == 1)
        m->sum->compressed++;
    if (out == 0)
        return SIM_OK; /* an empty bundle */
    m->depth = 1;
    int rc = packets(m, m->inflated, out, 0);
    m->depth = 0;
    return rc;
}

static int state_field(uint32_t num)
{
    return num == TP_INTERNED || num == TP_DEFAULTS || num == TP_CLOCK_SNAPSHOT ||
           num == TP_THREAD_DESC || num == TP_PROCESS_DESC || num == TP_TRACK_DESC;
}

static int packet(imp *m, const uint8_t *p, size_t len)
{
    pb_msg d = pb_msg_of(p, len);
    pb_field f;
    int r;
    uint64_t ts = 0;
    uint32_t seq_id = 0, clock_id = 0, flags = 0;
    int cleared = 0;
    /* the fields that matter, in any order */
    pb_field body[16];
    int nbody = 0;
    while ((r = pb_next(&d, &f)) == 1) {
        switch (f.num) {
        case TP_TIMESTAMP: ts = f.v; break;
        case TP_SEQ_ID: seq_id = (uint32_t)f.v; break;
        case TP_CLOCK_ID: clock_id = (uint32_t)f.v; break;
        case TP_SEQ_FLAGS: flags = (uint32_t)f.v; break;
        case TP_INCR_CLEARED: cleared = f.v != 0; break;
        case TP_FTRACE: case TP_PROCESS_TREE: case TP_CLOCK_SNAPSHOT: case TP_PROCESS_STATS:
        case TP_TRACK_EVENT: case TP_INTERNED: case TP_PROCESS_DESC: case TP_THREAD_DESC:
        case TP_COMPRESSED: case TP_DEFAULTS: case TP_TRACK_DESC: case TP_ZSTD:
            if (f.wt != PB_LEN)
                break;
            if (nbody == 16)
                return fail(m, SIM_ELIMIT, "more than 16 fields the importer reads in one packet");
            body[nbody++] = f;
            break;
        default: break;
        }
    }
    if (r < 0)
        return fail(m, SIM_EINPUT, "malformed packet");
    if (m->pass == 1)
        m->sum->packets++;
    seqstate *s = NULL;
    if (m->pass == 3 && seq_id != 0) {
        if ((s = seq_of(m, seq_id)) == NULL)
            return m->err->code;
        if (cleared || (flags & SEQ_INCREMENTAL_STATE_CLEARED)) {
            s->gen++;
            s->seq_clock = 0;
        }
    }
    /* the sequence's state (interned names, defaults, clocks, its thread)
     * before the events that use it, whatever the order of the fields */
    for (int i = 1; i < nbody; i++)
        for (int k = i; k > 0 && state_field(body[k].num) && !state_field(body[k - 1].num); k--) {
            pb_field t = body[k];
            body[k] = body[k - 1];
            body[k - 1] = t;
        }
    for (int i = 0; i < nbody; i++) {
        const pb_field *b = &body[i];
        int rc = SIM_OK;
        switch (b->num) {
        case TP_COMPRESSED:
        case TP_ZSTD: rc = inflate_bundle(m, b->p, b->len, b->num == TP_ZSTD); break;
        case TP_PROCESS_TREE:
            if (m->pass == 1)
                rc = process_tree(m, b->p, b->len);
            break;
        case TP_TRACK_DESC:
            if (m->pass == 1)
                rc = track_descriptor(m, b->p, b->len);
            break;
        case TP_PROCESS_DESC: {
            int64_t pid;
            int match;
            if (m->pass == 1 && (rc = process_descriptor(m, b->p, b->len, &pid, &match)) ==
                                    SIM_OK && match)
                rc = choose(m, pid);
            break;
        }
        case TP_THREAD_DESC: {
            int64_t pid, tid;
            if (m->pass == 1 || s != NULL)
                rc = thread_descriptor(m, b->p, b->len, &pid, &tid);
            if (rc == SIM_OK && m->pass == 1 && tid > 0 && tid != pid && chosen(m, pid))
                rc = map_put(&m->threads, (uint64_t)tid, pid) == SIM_OK ? SIM_OK : oom(m);
            if (rc == SIM_OK && s != NULL)
                s->thread_pid = (int32_t)pid, s->thread_tid = (int32_t)tid;
            break;
        }
        case TP_FTRACE:
            if (m->pass >= 2)
                rc = ftrace_bundle(m, b->p, b->len);
            break;
        case TP_PROCESS_STATS:
            if (m->pass == 3)
                rc = process_stats(m, (int64_t)ts, b->p, b->len);
            break;
        case TP_INTERNED:
            if (s != NULL)
                rc = interned(m, s, b->p, b->len);
            break;
        case TP_DEFAULTS:
            if (s != NULL)
                rc = defaults(m, s, b->p, b->len);
            break;
        case TP_CLOCK_SNAPSHOT:
            if (s != NULL)
                rc = clock_snapshot(m, s, b->p, b->len);
            break;
        case TP_TRACK_EVENT:
            if (m->pass == 3)
                rc = track_event(m, s, packet_time(s, ts, clock_id), b->p, b->len);
            break;
        default: break;
        }
        if (rc != SIM_OK)
            return rc;
    }
    return SIM_OK;
}

/* The packets of a Trace message held in memory (a decompressed bundle, or
 * a whole trace given as a buffer); `base`: the offset of p[0] in the file,
 * for messages. */
static int packets(imp *m, const uint8_t *p, size_t len, uint64_t base)
{
    pb_msg t = pb_msg_of(p, len);
    uint64_t outer = m->packet_off;
    for (;;) {
        const uint8_t *at = t.p;
        if (m->depth == 0)
            m->packet_off = base + (uint64_t)(at - p);
        pb_field f;
        int r = pb_next(&t, &f);
        if (r == 0)
            break;
        if (r < 0) {
            if (m->depth > 0)
                m->packet_off = outer;
            return fail(m, SIM_EINPUT, "truncated or malformed packet (%zu bytes left)",
                        (size_t)(p + len - at));
        }
        if (f.num != 1 || f.wt != PB_LEN) {
            if (m->depth > 0)
                m->packet_off = outer;
            return fail(m, SIM_EINPUT, "not a Perfetto trace: field %u (wire type %d) where a "
                        "packet (field 1) should be", f.num, f.wt);
        }
        if (m->depth == 0)
            m->sum->bytes += m->pass == 1 ? (uint64_t)(t.p - at) : 0;
        int rc = packet(m, f.p, f.len);
        if (rc != SIM_OK)
            return rc;
    }
    if (m->depth > 0)
        m->packet_off = outer;
    return SIM_OK;
}

/* A trace read from a file a packet at a time. */
static int packets_file(imp *m, FILE *in)
{
    size_t cap = (size_t)1 << 20, lo = 0, hi = 0;
    uint64_t base = 0; /* the file offset of buf[0] */
    uint8_t *buf = malloc(cap);
    if (buf == NULL)
        return oom(m);
    int eof = 0, rc = SIM_OK;
    for (;;) {
        /* at least a tag and a length, or the rest of the file */
        if (hi - lo < 20 && !eof) {
            memmove(buf, buf + lo, hi - lo);
            base += lo, hi -= lo, lo = 0;
            size_t got = fread(buf + hi, 1, cap - hi, in);
            hi += got;
            if (got == 0) {
                if (ferror(in)) {
                    rc = sim_error_set(m->err, SIM_EIO, "%s: read error: %s", m->name,
                                       strerror(errno));
                    break;
                }
                eof = 1;
            }
            continue;
        }
        if (lo == hi)
            break;
        m->packet_off = base + lo;
        const uint8_t *q = buf + lo, *end = buf + hi;
        uint64_t tag = 0, n = 0;
        if (!pb_varint(&q, end, &tag) || tag != (1u << 3 | PB_LEN)) {
            rc = fail(m, SIM_EINPUT, "not a Perfetto trace: no packet (field 1) here");
            break;
        }
        if (!pb_varint(&q, end, &n)) {
            rc = fail(m, SIM_EINPUT, "truncated: the packet's length is cut");
            break;
        }
        size_t head = (size_t)(q - (buf + lo));
        if (n > TRC_PF_PACKET_MAX) {
            rc = fail(m, SIM_ELIMIT, "a packet of %" PRIu64 " bytes (at most %zu MiB)", n,
                      TRC_PF_PACKET_MAX >> 20);
            break;
        }
        size_t need = head + (size_t)n;
        if (hi - lo < need) {
            if (eof) {
                rc = fail(m, SIM_EINPUT, "truncated: the packet needs %" PRIu64 " bytes, "
                          "%zu are left", n, hi - lo - head);
                break;
            }
            memmove(buf, buf + lo, hi - lo);
            base += lo, hi -= lo, lo = 0;
            if (need > cap) {
                size_t nc = cap;
                while (nc < need)
                    nc *= 2;
                uint8_t *g = realloc(buf, nc);
                if (g == NULL) {
                    rc = oom(m);
                    break;
                }
                buf = g, cap = nc;
            }
            while (hi < need) {
                size_t got = fread(buf + hi, 1, cap - hi, in);
                if (got == 0) {
                    if (ferror(in)) {
                        rc = sim_error_set(m->err, SIM_EIO, "%s: read error: %s", m->name,
                                           strerror(errno));
                        goto out;
                    }
                    eof = 1;
                    break;
                }
                hi += got;
            }
            continue;
        }
        m->sum->bytes += m->pass == 1 ? need : 0;
        rc = packet(m, buf + lo + head, (size_t)n);
        if (rc != SIM_OK)
            break;
        lo += need;
    }
out:
    free(buf);
    return rc;
}

/* ------------------------------------------------------------------ events */

static int rec_cmp(const void *a, const void *b)
{
    const rec *x = a, *y = b;
    if (x->ts != y->ts)
        return x->ts < y->ts ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

typedef struct walk {
    imp *m;
    int emit;
    trc_pf_sink sink;
    void *ctx;
    pidstate pids[PIDS_MAX];
    unsigned npids;
    open_slice open[OPEN_MAX];
    unsigned nopen;
    slice_result *res;
    size_t nslices, capslices;
    int64_t t0;
    int64_t request;
    int last_stage;
    int64_t pending_kill; /* the time of a death no new life has followed yet, -1: none */
} walk;

static pidstate *pid_state(walk *w, int32_t pid)
{
    for (unsigned i = 0; i < w->npids; i++)
        if (w->pids[i].pid == pid)
            return &w->pids[i];
    if (w->npids == PIDS_MAX)
        return NULL;
    pidstate *p = &w->pids[w->npids++];
    memset(p, 0, sizeof *p);
    p->pid = pid;
    p->adj = ADJ_UNKNOWN;
    return p;
}

static void mem_of(const pidstate *p, int64_t mem[TRC_MEM_COUNT])
{
    memset(mem, 0, sizeof(int64_t) * TRC_MEM_COUNT);
    /* anonymous memory and its swapped-out part are the app's native
     * memory (Java cannot be told apart without a heap profile); file and
     * shared-memory pages its file memory */
    mem[TRC_MEM_NATIVE] = p->member[M_ANON] + p->member[M_SWAP];
    mem[TRC_MEM_FILE] = p->member[M_FILE] + p->member[M_SHMEM];
}

static int64_t importance_of(int64_t adj)
{
    if (adj == ADJ_UNKNOWN)
        return -1;
    if (adj <= 0)
        return 100; /* IMPORTANCE_FOREGROUND */
    if (adj <= ADJ_VISIBLE)
        return 200; /* IMPORTANCE_VISIBLE */
    if (adj <= ADJ_PERCEPTIBLE)
        return 230; /* IMPORTANCE_PERCEPTIBLE */
    if (adj < ADJ_PREVIOUS)
        return 300; /* IMPORTANCE_SERVICE */
    return 400;     /* IMPORTANCE_CACHED */
}

/* The stage a sample belongs to: the innermost oomsim slice open in pid,
 * else the last one begun, else load. */
static int stage_now(const walk *w, int32_t pid)
{
    for (unsigned i = w->nopen; i-- > 0;)
        if (w->open[i].pid == pid && w->open[i].slice >= 0)
            return w->res[w->open[i].slice].stage;
    return w->last_stage;
}

static void base_event(const walk *w, const pidstate *p, int64_t ts, int stage, trc_event *e)
{
    trc_event_clear(e);
    e->time_us = (ts - w->t0) / 1000;
    e->stage = (trc_stage)stage;
    e->has |= TRC_F_KIND;
    e->kind = TRC_SAMPLE;
    if (w->m->o->candidate_id != NULL) {
        e->has |= TRC_F_CANDIDATE;
        snprintf(e->candidate, sizeof e->candidate, "%s", w->m->o->candidate_id);
    }
    mem_of(p, e->mem);
    e->has |= TRC_F_MEM | TRC_F_RSS_MB;
    e->mem_has = 1u << TRC_MEM_NATIVE | 1u << TRC_MEM_FILE;
    e->rss_mb = (p->member[M_ANON] + p->member[M_FILE] + p->member[M_SHMEM]) >> 20;
}

static int out(walk *w, trc_event *e)
{
    if (w->emit)
        w->m->sum->events++;
    return w->emit ? w->sink(w->ctx, e, w->m->err) : SIM_OK;
}

static int note(walk *w, const pidstate *p, int64_t ts, const char *what)
{
    trc_event e;
    base_event(w, p, ts, stage_now(w, p->pid), &e);
    e.has |= TRC_F_ERROR;
    snprintf(e.error, sizeof e.error, "%s", what);
    return out(w, &e);
}

static int add_occurrence(imp *m, int stage, int part, const slice_result *r)
{
    trc_pf_stage *st = &m->sum->stages[part][stage];
    if (st->n == st->cap) {
        size_t nc = st->cap ? st->cap * 2 : 8;
        trc_pf_occurrence *p = realloc(st->occ, nc * sizeof *p);
        if (p == NULL)
            return oom(m);
        st->occ = p;
        st->cap = nc;
    }
    trc_pf_occurrence *o = &st->occ[st->n++];
    o->duration_us = r->duration_us;
    memcpy(o->alloc, r->alloc, sizeof o->alloc);
    memcpy(o->keep, r->keep, sizeof o->keep);
    return SIM_OK;
}

/* Ends open slice i at ts with the process's memory then (walk 1: its
 * measures; walk 2: the end event, unless the process died in it). */
static int close_slice(walk *w, unsigned i, int64_t ts, const pidstate *p, int died)
{
    open_slice *o = &w->open[i];
    int rc = SIM_OK;
    if (o->slice >= 0) {
        slice_result *r = &w->res[o->slice];
        int stage = r->stage, part = r->part;
        if (!w->emit) {
            int64_t now[TRC_MEM_COUNT];
            mem_of(p, now);
            r->duration_us = (ts - o->begin_ts) / 1000;
            for (int c = TRC_MEM_NATIVE; c < TRC_MEM_COUNT; c++) {
                int64_t a = o->peak[c] - o->begin_mem[c], k = now[c] - o->begin_mem[c];
                r->alloc[c] = a > 0 ? a : 0;
                r->keep[c] = k < 0 ? 0 : k > r->alloc[c] ? r->alloc[c] : k;
            }
        } else {
            if (part > 0 && (rc = add_occurrence(w->m, stage, part - 1, r)) != SIM_OK)
                return rc;
            if (!died) {
                trc_event e;
                base_event(w, p, ts, stage, &e);
                e.kind = TRC_END;
                if (part > 0) {
                    e.has |= TRC_F_PART;
                    snprintf(e.part, sizeof e.part, "%s", w->m->sum->parts[part - 1]);
                }
                if (o->request >= 0) {
                    e.has |= TRC_F_REQUEST;
                    e.request = o->request;
                }
                rc = out(w, &e);
            }
        }
    }
    memmove(&w->open[i], &w->open[i + 1], (w->nopen - i - 1) * sizeof *w->open);
    w->nopen--;
    return rc;
}

static int begin_slice(walk *w, const rec *r, pidstate *p)
{
    imp *m = w->m;
    if (w->nopen == OPEN_MAX)
        return sim_error_set(m->err, SIM_ELIMIT, "%s: more than %d slices open at once in the "
                             "process", m->name, OPEN_MAX);
    open_slice *o = &w->open[w->nopen++];
    o->lane = r->lane;
    o->lane_kind = r->sub;
    o->pid = r->pid;
    o->begin_ts = r->ts;
    o->slice = -1;
    o->request = -1;
    mem_of(p, o->begin_mem);
    memcpy(o->peak, o->begin_mem, sizeof o->peak);
    if (r->name == 0)
        return SIM_OK;
    int stage = r->name >> 8, part = r->name & 0xff;
    if (!w->emit) {
        if (w->nslices == w->capslices) {
            size_t nc = w->capslices ? w->capslices * 2 : 64;
            slice_result *q = realloc(w->res, nc * sizeof *q);
            if (q == NULL)
                return oom(m);
            w->res = q;
            w->capslices = nc;
        }
        slice_result *s = &w->res[w->nslices];
        memset(s, 0, sizeof *s);
        s->stage = stage;
        s->part = part;
        s->duration_us = -1; /* until it ends */
    }
    o->slice = (int64_t)w->nslices++;
    w->last_stage = stage;
    if (!w->emit && !m->sum->has_baseline && p->pid == m->recs[0].pid) {
        m->sum->has_baseline = 1;
        memcpy(m->sum->baseline, o->begin_mem, sizeof o->begin_mem);
    }
    if (!w->emit)
        m->sum->stage_slices++;
    if (!w->emit)
        return SIM_OK;
    const slice_result *s = &w->res[o->slice];
    trc_event e;
    if (stage == TRC_INFERENCE && part > 0) { /* the request it serves arrives */
        base_event(w, p, r->ts, stage, &e);
        e.has |= TRC_F_REQUEST | TRC_F_STEP | TRC_F_NEEDS;
        e.request = w->request;
        e.step = m->o->step;
        snprintf(e.needs, sizeof e.needs, "%s", m->sum->parts[part - 1]);
        int rc = out(w, &e);
        if (rc != SIM_OK)
            return rc;
    }
    base_event(w, p, r->ts, stage, &e);
    e.kind = TRC_BEGIN;
    if (part > 0) {
        e.has |= TRC_F_PART;
        snprintf(e.part, sizeof e.part, "%s", m->sum->parts[part - 1]);
    }
    if (s->duration_us >= 0) {
        e.has |= TRC_F_DURATION;
        e.duration_us = s->duration_us;
    }
    e.has |= TRC_F_ALLOC;
    e.alloc_has = 1u << TRC_MEM_NATIVE | 1u << TRC_MEM_FILE;
    e.alloc[TRC_MEM_NATIVE] = s->alloc[TRC_MEM_NATIVE];
    e.alloc[TRC_MEM_FILE] = s->alloc[TRC_MEM_FILE];
    if (stage == TRC_INFERENCE) {
        if (part > 0) {
            e.has |= TRC_F_REQUEST;
            o->request = e.request = w->request++;
        }
    } else {
        e.has |= TRC_F_KEEP;
        e.keep_has = e.alloc_has;
        e.keep[TRC_MEM_NATIVE] = s->keep[TRC_MEM_NATIVE];
        e.keep[TRC_MEM_FILE] = s->keep[TRC_MEM_FILE];
    }
    return out(w, &e);
}

static int kill_event(walk *w, const rec *r, pidstate *p)
{
    if (p->killed)
        return SIM_OK; /* one death per process: the first record of it */
    int64_t adj = r->v != ADJ_UNKNOWN ? r->v : p->adj;
    /* the slices it dies in end with it */
    for (unsigned i = w->nopen; i-- > 0;)
        if (w->open[i].pid == p->pid) {
            int rc = close_slice(w, i, r->ts, p, 1);
            if (rc != SIM_OK)
                return rc;
        }
    p->killed = 1;
    w->pending_kill = r->ts;
    if (w->emit)
        w->m->sum->kills++;
    if (!w->emit)
        return SIM_OK;
    trc_event e;
    base_event(w, p, r->ts, TRC_EXIT, &e);
    e.kind = TRC_EXIT_EVENT;
    int64_t imp_ = importance_of(adj);
    e.has |= TRC_F_EXIT_REASON | TRC_F_EXIT | TRC_F_ERROR;
    e.exit_reason = r->sub == K_KERNEL_OOM || imp_ < 400 ? TRC_LOW_MEMORY : TRC_SYSTEM_RECLAIM;
    /* ApplicationExitInfo: lmkd reports its kills (REASON_LOW_MEMORY, 3);
     * the kernel's OOM killer only leaves a SIGKILL (REASON_SIGNALED, 2,
     * status 9) */
    e.exit.has = TRC_X_REASON_CODE | TRC_X_RSS_KB | TRC_X_STATUS | TRC_X_TIMESTAMP_MS;
    e.exit.timestamp_ms = e.time_us / 1000; /* on the trace's clock, as oomsim gen writes it */
    e.exit.reason_code = r->sub == K_KERNEL_OOM ? 2 : 3;
    e.exit.status = r->sub == K_KERNEL_OOM ? 9 : 0;
    e.exit.rss_kb = (p->member[M_ANON] + p->member[M_FILE] + p->member[M_SHMEM]) / 1024;
    if (imp_ > 0) {
        e.exit.has |= TRC_X_IMPORTANCE;
        e.exit.importance = imp_;
    }
    const char *why = r->sub == K_KERNEL_OOM        ? "kernel_oom"
                      : r->sub == K_LOWMEMORYKILLER ? "lowmemorykiller"
                                                    : trc_pf_lmkd_reason_name(r->lane);
    snprintf(e.error, sizeof e.error, "%s", why != NULL ? why : "lmkd");
    if (w->m->process[0] != '\0') {
        e.has |= TRC_F_PROCESS;
        snprintf(e.process, sizeof e.process, "%s", w->m->process);
    }
    return out(w, &e);
}

static int adj_event(walk *w, const rec *r, pidstate *p)
{
    int64_t before = p->adj;
    p->adj = r->v;
    if (!w->emit)
        return SIM_OK;
    int fg_before = before != ADJ_UNKNOWN && before <= ADJ_VISIBLE;
    int fg_now = r->v <= ADJ_VISIBLE;
    int rc = SIM_OK;
    if (before == ADJ_UNKNOWN ? !fg_now : fg_before != fg_now)
        rc = note(w, p, r->ts, fg_now ? "foreground" : "background");
    if (rc == SIM_OK && r->v >= ADJ_CACHED_MIN && (before == ADJ_UNKNOWN ||
                                                   before < ADJ_CACHED_MIN))
        rc = note(w, p, r->ts, "cached_adj");
    return rc;
}

static int walk_records(walk *w)
{
    imp *m = w->m;
    w->nopen = 0;
    w->npids = 0;
    w->nslices = 0;
    w->request = 0;
    w->last_stage = TRC_LOAD;
    w->pending_kill = -1;
    w->t0 = m->nrec > 0 ? m->recs[0].ts : 0;
    for (size_t i = 0; i < m->nrec; i++) {
        const rec *r = &m->recs[i];
        pidstate *p = pid_state(w, r->pid);
        if (p == NULL)
            return sim_error_set(m->err, SIM_ELIMIT, "%s: more than %d lives", m->name,
                                 PIDS_MAX);
        int rc = SIM_OK;
        if (p->seen == 0) { /* a new life: after a death, the user came back this late */
            p->seen = 1;
            if (w->emit)
        m->sum->pids++;
            if (w->pending_kill >= 0 && w->emit) {
                trc_event e;
                base_event(w, p, w->pending_kill, TRC_EXIT, &e);
                e.has |= TRC_F_DURATION;
                e.duration_us = (r->ts - w->pending_kill) / 1000;
                rc = out(w, &e);
            }
            w->pending_kill = -1;
            w->last_stage = TRC_LOAD;
        }
        if (rc != SIM_OK)
            return rc;
        if (p->killed && r->type != R_KILL)
            continue; /* what a killed process still logs as it goes */
        switch (r->type) {
        case R_MEM:
            p->member[r->sub] = r->v;
            if (w->emit && !(i + 1 < m->nrec && m->recs[i + 1].type == R_MEM &&
                             m->recs[i + 1].ts == r->ts && m->recs[i + 1].pid == r->pid)) {
                trc_event e;
                base_event(w, p, r->ts, stage_now(w, p->pid), &e);
                rc = out(w, &e);
            }
            if (!w->emit) {
                int64_t now[TRC_MEM_COUNT];
                mem_of(p, now);
                for (unsigned k = 0; k < w->nopen; k++)
                    if (w->open[k].pid == p->pid)
                        for (int c = 0; c < TRC_MEM_COUNT; c++)
                            if (now[c] > w->open[k].peak[c])
                                w->open[k].peak[c] = now[c];
            }
            break;
        case R_ADJ: rc = adj_event(w, r, p); break;
        case R_KILL: rc = kill_event(w, r, p); break;
        case R_BEGIN: rc = begin_slice(w, r, p); break;
        case R_END: {
            unsigned k = w->nopen;
            while (k-- > 0)
                if (w->open[k].pid == r->pid && w->open[k].lane == r->lane &&
                    w->open[k].lane_kind == r->sub)
                    break;
            if (k < w->nopen)
                rc = close_slice(w, k, r->ts, p, 0);
            break;
        }
        default: break;
        }
        if (rc != SIM_OK)
            return rc;
    }
    /* slices still open at the end of the trace: measured to its end, their
     * begins left open (as a device leaves them) */
    if (!w->emit && m->nrec > 0) {
        int64_t end = m->recs[m->nrec - 1].ts;
        while (w->nopen > 0) {
            pidstate *p = pid_state(w, w->open[w->nopen - 1].pid);
            int rc = close_slice(w, w->nopen - 1, end, p, 0);
            if (rc != SIM_OK)
                return rc;
        }
    }
    return SIM_OK;
}

/* ------------------------------------------------------------------ driver */

typedef struct source {
    const char *path;
    const uint8_t *data;
    size_t len;
} source;

static int run_pass(imp *m, const source *src)
{
    m->packet_off = 0;
    m->depth = 0;
    if (src->path == NULL)
        return packets(m, src->data, src->len, 0);
    FILE *in = fopen(src->path, "rb");
    if (in == NULL)
        return sim_error_set(m->err, errno == ENOENT ? SIM_ENOTFOUND : SIM_EIO,
                             "%s: cannot open: %s", m->name, strerror(errno));
    int rc = packets_file(m, in);
    fclose(in);
    return rc;
}

static int import(const source *src, const char *name, const trc_pf_opts *o, trc_pf_sink sink,
                  void *ctx, trc_pf_summary *sum, sim_error *err)
{
    memset(sum, 0, sizeof *sum);
    if (o == NULL || (o->process == NULL && o->pid <= 0))
        return sim_error_set(err, SIM_EINVAL, "import: a process name or a pid is needed");
    imp m;
    memset(&m, 0, sizeof m);
    m.o = o;
    m.name = name;
    m.err = err;
    m.sum = sum;
    int rc = SIM_OK;
    for (m.pass = 1; m.pass <= 3 && rc == SIM_OK; m.pass++) {
        rc = run_pass(&m, src);
        if (rc == SIM_OK && m.pass == 1 && m.pids.n == 0) {
            if (o->process != NULL)
                rc = sim_error_set(err, SIM_EINPUT, "%s: no process named '%s' in the trace "
                                   "(process_tree or process descriptors)", name, o->process);
            else
                rc = sim_error_set(err, SIM_EINPUT, "%s: no process with pid %" PRId64
                                   " in the trace", name, o->pid);
        }
    }
    walk *w = NULL;
    if (rc == SIM_OK) {
        if (m.nrec > 1)
            qsort(m.recs, m.nrec, sizeof *m.recs, rec_cmp);
        w = calloc(1, sizeof *w);
        if (w == NULL)
            rc = oom(&m);
    }
    if (rc == SIM_OK) {
        w->m = &m;
        w->sink = sink;
        w->ctx = ctx;
        w->emit = 0;
        rc = walk_records(w);
        if (rc == SIM_OK) {
            w->emit = 1;
            rc = walk_records(w);
        }
    }
    if (w != NULL)
        free(w->res);
    free(w);
    free(m.recs);
    free(m.seqs);
    free(m.inflated);
    map_free(&m.pids), map_free(&m.threads), map_free(&m.tracks), map_free(&m.mms);
    map_free(&m.names);
    map_free(&m.seq_index);
    return rc;
}

int trc_pf_import_file(const char *path, const trc_pf_opts *o, trc_pf_sink sink, void *ctx,
                       trc_pf_summary *sum, sim_error *err)
{
    source src = {path, NULL, 0};
    return import(&src, path, o, sink, ctx, sum, err);
}

int trc_pf_import_buffer(const void *data, size_t len, const char *name, const trc_pf_opts *o,
                         trc_pf_sink sink, void *ctx, trc_pf_summary *sum, sim_error *err)
{
    source src = {NULL, len > 0 ? data : (const void *)"", len};
    return import(&src, name, o, sink, ctx, sum, err);
}

void trc_pf_summary_free(trc_pf_summary *sum)
{
    if (sum == NULL)
        return;
    for (unsigned p = 0; p < TRC_PF_PARTS_MAX; p++)
        for (int s = 0; s < TRC_STAGE_COUNT; s++)
            free(sum->stages[p][s].occ);
    memset(sum, 0, sizeof *sum);
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

/* ---------------------------------------------------------------- skeleton */

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

char *trc_pf_candidate_yaml(const trc_pf_summary *sum, const char *id, const char *about)
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
    fprintf(f, "id: %s\nabout: \"measured on a Perfetto trace (oomsim import perfetto)\"\n"
               "digest: \"0\"\nruntime: unknown\n", id);
    if (has_delegate)
        fputs("delegate: recorded\nfallback: cpu\n", f);
    fputs("parts:\n", f);
    for (unsigned p = 0; p < sum->nparts; p++) {
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
    int bad = ferror(f);
    bad |= fclose(f) != 0;
    free(scratch);
    if (bad) {
        free(text);
        return NULL;
    }
    return text;
}
