/* pf_int.h - the Perfetto importer's shared state (traces/perfetto/).
 *
 * A trace is a sequence of TracePacket messages (field 1 of Trace).  The
 * field numbers below are those of Perfetto's public .proto files
 * (protos/perfetto/trace/...); tests/data/perfetto/subset.proto keeps the
 * ones read here.  Three passes over the packets (packets.c), each one
 * packet at a time:
 *   1. identity (identity.c): process_tree, process and thread descriptors,
 *      track descriptors: the chosen process's pids, its threads and its
 *      tracks;
 *   2. mm ids (ftrace.c): an rss_stat event with curr set, from one of its
 *      threads, names the process's mm; an rss_stat with curr 0 (kswapd
 *      reclaiming it, say) is the process's when it names that mm;
 *   3. events (ftrace.c, procstats.c, track.c): the chosen process's
 *      memory, adj, slices and kills, kept as compact records (map.c).
 * Ftrace bundles are per CPU and not in time order, so the records are
 * sorted by time, then walked twice (walk.c): once to measure each stage
 * slice (its time, its peak, what stayed), once to write the events.
 * import.c holds the entry points.
 *
 * Who changes what: the decoders add records and identity; only walk.c
 * reads the records back; only packets.c moves packet_off and depth. */
#ifndef OOMSIM_PF_INT_H
#define OOMSIM_PF_INT_H

#include "traces/traces.h"

#include <inttypes.h>
#include <stdio.h>

#include "traces/pbwire.h"

/* ------------------------------------------------------------ field numbers */

enum { /* TracePacket */
    TP_FTRACE = 1, TP_PROCESS_TREE = 2, TP_CLOCK_SNAPSHOT = 6, TP_SYS_STATS = 7, TP_TIMESTAMP = 8,
    TP_PROCESS_STATS = 9, TP_SEQ_ID = 10, TP_TRACK_EVENT = 11, TP_INTERNED = 12,
    TP_SEQ_FLAGS = 13, TP_INCR_CLEARED = 41, TP_PROCESS_DESC = 43, TP_THREAD_DESC = 44,
    TP_SYSTEM_INFO = 45, TP_COMPRESSED = 50, TP_CLOCK_ID = 58, TP_DEFAULTS = 59, TP_TRACK_DESC = 60,
    TP_ZSTD = 133
};
enum { SEQ_INCREMENTAL_STATE_CLEARED = 1 };
enum { CLOCK_REALTIME = 1, CLOCK_BOOTTIME = 6, CLOCK_SEQUENCE_FIRST = 64, CLOCK_SEQUENCE_END = 128 };
/* FtraceEventBundle: event = 2; FtraceEvent: timestamp 1, pid 2, then the
 * event's own message by its oneof field number. */
enum { FE_PRINT = 3, FE_LOWMEMORY_KILL = 35, FE_SCHED_PROCESS_FREE = 240, FE_RSS_STAT = 313, FE_OOM_SCORE_ADJ = 326,
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

enum { PF_PASS_PHONE = 4 }; /* phone.c's one pass, apart from the three */

typedef struct imp {
    const trc_pf_opts *o;
    trc_pf_phone *phone;  /* the phone pass's output, NULL in the others */
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


/* Bounds on what a phone's trace holds: a corrupt value is refused, so
 * that no sum or difference of them can overflow. */
#define TS_MAX (INT64_C(1) << 62)   /* ns: 146 years of uptime */
#define SIZE_MAX_ (INT64_C(1) << 48) /* bytes of one counter: 256 TiB */

/* The walk over the sorted records (walk.c). */
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

/* An error naming the packet being read: "NAME: packet at byte N: what". */
int pf__fail(imp *m, int code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* map.c */
/* An array of *cap elements of elem bytes doubled (`first` when empty):
 * the new array (*cap updated), or NULL with SIM_ENOMEM said in m's error
 * (the array untouched). */
void *pf__grow(imp *m, void *array, size_t *cap, size_t elem, size_t first);
int pf__oom(imp *m);
int64_t *pf__map_find(const u64map *h, uint64_t k);
int pf__map_put(u64map *h, uint64_t k, int64_t v);
void pf__map_free(u64map *h);
int32_t pf__tgid_of(const imp *m, int64_t tid);
int pf__chosen(const imp *m, int64_t pid);
int pf__add_rec(imp *m, const rec *r);
int pf__choose(imp *m, int64_t pid);
int pf__name_matches(const imp *m, const uint8_t *s, size_t n, int is_comm);
void pf__keep_name(imp *m, const uint8_t *s, size_t n);

/* identity.c */
int pf__process_tree(imp *m, const uint8_t *p, size_t len);
int pf__process_descriptor(imp *m, const uint8_t *p, size_t len, int64_t *pid, int *match);
int pf__thread_descriptor(imp *m, const uint8_t *p, size_t len, int64_t *pid, int64_t *tid);
int pf__track_descriptor(imp *m, const uint8_t *p, size_t len);

/* ftrace.c */
int pf__slice_name(imp *m, const char *s, size_t n, uint16_t *code);
int pf__ftrace_bundle(imp *m, const uint8_t *p, size_t len);

/* phone.c: the phone pass's decoders; pf__phone_end: a process killed
 * (kill 1) or its task freed */
int pf__phone_sys_stats(imp *m, int64_t ts, const uint8_t *p, size_t len);
int pf__phone_process_stats(imp *m, int64_t ts, const uint8_t *p, size_t len);
int pf__phone_system_info(imp *m, const uint8_t *p, size_t len);
int pf__phone_end(imp *m, int64_t ts, int64_t pid, int kill);
/* the pass's state set up (m->phone = out), and its rises closed at the end */
int pf__phone_start(imp *m, trc_pf_phone *out);
int pf__phone_finish(imp *m);

/* import.c: one pass over a file (path) or a buffer */
int pf__run_pass(imp *m, const char *path, const uint8_t *data, size_t len);

/* procstats.c */
int pf__process_stats(imp *m, int64_t ts, const uint8_t *p, size_t len);

/* track.c */
seqstate *pf__seq_of(imp *m, uint32_t id);
int pf__interned(imp *m, seqstate *s, const uint8_t *p, size_t len);
int pf__defaults(imp *m, seqstate *s, const uint8_t *p, size_t len);
int pf__clock_snapshot(imp *m, seqstate *s, const uint8_t *p, size_t len);
int64_t pf__packet_time(seqstate *s, uint64_t ts, uint32_t clock_id);
int pf__track_event(imp *m, seqstate *s, int64_t ts, const uint8_t *p, size_t len);

/* packets.c */
int pf__packets(imp *m, const uint8_t *p, size_t len, uint64_t base);
int pf__packets_file(imp *m, FILE *in);

/* walk.c */
int pf__rec_cmp(const void *a, const void *b);
int pf__walk_records(walk *w);

#endif /* OOMSIM_PF_INT_H */
