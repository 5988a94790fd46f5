/* traces.h - stage traces (docs/traces.md): the event, its allow-list of
 * fields, and streaming readers and writers for JSON arrays, JSON Lines and
 * msgpack.
 *
 * Every reader streams: it holds one event at a time (and a bounded input
 * buffer), so memory does not grow with the length of a trace.  Every key
 * outside the allow-list is refused, naming the key and the event, and its
 * value is never copied anywhere (with drop_unknown it is skipped and
 * counted instead).  Errors name the file, the event index (from 0) and,
 * for the text encodings, the line. */
#ifndef OOMSIM_TRACES_H
#define OOMSIM_TRACES_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "sim/sim.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum trc_format { TRC_JSON = 0, TRC_JSONL, TRC_MSGPACK, TRC_FORMAT_COUNT } trc_format;

/* The encoding a file name's extension names (.json, .jsonl, .msgpack or
 * .mp); -1 when it names none. */
int trc_format_of_path(const char *path);
const char *trc_format_name(trc_format f);

typedef enum trc_stage {
    TRC_DOWNLOAD = 0, TRC_LOAD, TRC_RUNTIME_PREPARE, TRC_DELEGATE_PREPARE, TRC_INFERENCE,
    TRC_CACHE, TRC_RELEASE, TRC_EXIT, TRC_STAGE_COUNT
} trc_stage;

typedef enum trc_kind { TRC_SAMPLE = 0, TRC_BEGIN, TRC_END, TRC_EXIT_EVENT, TRC_RECOVERY,
                        TRC_KIND_COUNT } trc_kind;

typedef enum trc_payload { TRC_IMAGE = 0, TRC_AUDIO, TRC_TEXT, TRC_TENSOR, TRC_OTHER,
                           TRC_PAYLOAD_COUNT } trc_payload;

typedef enum trc_exit_reason { TRC_NONE = 0, TRC_LOW_MEMORY, TRC_ANR, TRC_NATIVE_CRASH,
                               TRC_JAVA_CRASH, TRC_SYSTEM_RECLAIM, TRC_UNKNOWN,
                               TRC_EXIT_REASON_COUNT } trc_exit_reason;

const char *trc_stage_name(trc_stage s);
const char *trc_kind_name(trc_kind k);
const char *trc_payload_name(trc_payload p);
const char *trc_exit_reason_name(trc_exit_reason r);

/* Which optional fields an event has (trc_event.has). */
enum {
    TRC_F_KIND = 1u << 0, TRC_F_PART = 1u << 1, TRC_F_CANDIDATE = 1u << 2,
    TRC_F_RUNTIME = 1u << 3, TRC_F_DELEGATE = 1u << 4, TRC_F_SESSION = 1u << 5,
    TRC_F_SESSIONS = 1u << 6, TRC_F_QUEUE = 1u << 7, TRC_F_IN_FLIGHT = 1u << 8,
    TRC_F_PAYLOAD = 1u << 9, TRC_F_RSS_MB = 1u << 10, TRC_F_BUDGET_MB = 1u << 11,
    TRC_F_MEM = 1u << 12, TRC_F_EXIT_REASON = 1u << 13, TRC_F_EXIT = 1u << 14,
    TRC_F_ERROR = 1u << 15, TRC_F_ACTION = 1u << 16, TRC_F_APP_VERSION = 1u << 17,
    TRC_F_PROCESS = 1u << 18, TRC_F_TIME_MS = 1u << 19, /* time given (and written) in ms */
    /* extensions (docs/traces.md): what `oomsim replay` needs of a recorded session */
    TRC_F_REQUEST = 1u << 20, TRC_F_STEP = 1u << 21, TRC_F_NEEDS = 1u << 22,
    TRC_F_DURATION = 1u << 23, TRC_F_ALLOC = 1u << 24, TRC_F_KEEP = 1u << 25,
    TRC_F_PAGES = 1u << 26, TRC_F_LOG = 1u << 27,
    TRC_F_OWNER = 1u << 28 /* who holds a session (a session note) */
};

/* `mem` keys and `exit` keys present (trc_event.mem_has, exit.has). */
enum { TRC_MEM_JAVA = 0, TRC_MEM_NATIVE, TRC_MEM_GPU, TRC_MEM_FILE, TRC_MEM_COUNT };
/* The `pages` extension (docs/traces.md): the phone's pages around the app
 * on Android in lmkd's PSI mode, bytes but thrashing (percent), psi_some_us
 * (microseconds) and adj. */
enum {
    TRC_PG_FREE = 0,    /* free pages */
    TRC_PG_LOW,         /* the low watermark */
    TRC_PG_FILE_LRU,    /* file pages resident */
    TRC_PG_SWAP_USED,   /* zram's use, uncompressed */
    TRC_PG_THRASHING,   /* lmkd's thrashing percent at its last wake-up */
    TRC_PG_PSI_SOME_US, /* memory stall of some task, in the current 1 s window */
    TRC_PG_DROPPED,     /* the app's hot weights reclaim dropped (a weights_dropped note) */
    TRC_PG_REFAULT,     /* the app's weights read back (a refault note) */
    TRC_PG_ADJ,         /* the oom_score_adj of lmkd's victim (kill notes and exits) */
    TRC_PG_KV,          /* the KV caches the app holds (a kv note) */
    TRC_PG_WEIGHTS_MAPPED,   /* a generation part's weights by kind (a weights note) */
    TRC_PG_WEIGHTS_REPACKED,
    TRC_PG_WEIGHTS_GPU,
    TRC_PG_SUCCESSOR,   /* the app the user switched to (a background note) */
    TRC_PG_COUNT
};
enum {
    TRC_X_REASON_CODE = 1u << 0, TRC_X_IMPORTANCE = 1u << 1, TRC_X_PSS_KB = 1u << 2,
    TRC_X_RSS_KB = 1u << 3, TRC_X_STATUS = 1u << 4, TRC_X_TIMESTAMP_MS = 1u << 5,
    TRC_X_PID = 1u << 6 /* the process id the system gave the process that died */
};
#define TRC_EXIT_FIELDS 7

#define TRC_TEXT_MAX 64 /* strings: up to 63 bytes */
#define TRC_LOG_MAX 256 /* the `log` extension: up to 255 bytes */

typedef struct trc_exit_record {
    unsigned has;
    int64_t reason_code, importance, pss_kb, rss_kb, status, timestamp_ms, pid;
} trc_exit_record;

/* One stage event.  Strings are NUL-terminated, at most TRC_TEXT_MAX - 1
 * bytes; time is kept in microseconds whichever key gave it. */
typedef struct trc_event {
    unsigned has;
    int64_t time_us;
    trc_stage stage;
    trc_kind kind;
    char part[TRC_TEXT_MAX], candidate[TRC_TEXT_MAX], runtime[TRC_TEXT_MAX],
        delegate[TRC_TEXT_MAX], error[TRC_TEXT_MAX], action[TRC_TEXT_MAX],
        app_version[TRC_TEXT_MAX], process[TRC_TEXT_MAX], owner[TRC_TEXT_MAX];
    int64_t session, sessions, queue, in_flight;
    trc_payload payload;
    int64_t rss_mb, budget_mb;
    unsigned mem_has;              /* 1 << TRC_MEM_* */
    int64_t mem[TRC_MEM_COUNT];    /* bytes */
    trc_exit_reason exit_reason;
    trc_exit_record exit;
    /* extensions */
    int64_t request, step, duration_us;
    char needs[TRC_TEXT_MAX];          /* part names, comma-separated */
    unsigned alloc_has, keep_has;      /* 1 << TRC_MEM_* */
    int64_t alloc[TRC_MEM_COUNT];      /* bytes the event allocates */
    int64_t keep[TRC_MEM_COUNT];       /* of those, what stays after the stage */
    unsigned pages_has;                /* 1 << TRC_PG_* */
    int64_t pages[TRC_PG_COUNT];
    char log[TRC_LOG_MAX];             /* the system's log line of an exit (lmkd's kill line) */
} trc_event;

/* Clears an event to "time 0, stage load, nothing else". */
void trc_event_clear(trc_event *e);
/* 1 when the two events carry the same fields and values. */
int trc_event_equal(const trc_event *a, const trc_event *b);

/* ----------------------------------------------------------------- reading */

typedef struct trc_reader trc_reader;

typedef struct trc_read_opts {
    int drop_unknown;      /* skip keys outside the allow-list (counted), instead of failing */
} trc_read_opts;

/* Opens `path` in `format` (-1: from the extension).  NULL with err set
 * (SIM_ENOTFOUND, SIM_EIO, SIM_EINPUT for an unknown extension). */
trc_reader *trc_open(const char *path, int format, const trc_read_opts *opts, sim_error *err);
/* The same over bytes in memory (the fuzz targets, the tests); `name`
 * names them in messages. */
trc_reader *trc_open_buffer(const char *data, size_t len, const char *name, trc_format format,
                            const trc_read_opts *opts, sim_error *err);
/* Reads the next event: 1 and *e filled, 0 at the end (after checking
 * that the document is complete), or a SIM_E* code (< 0) with err set:
 * "FILE: event N (line L): field: what".  After an error or the end, the
 * reader only returns that again. */
int trc_next(trc_reader *r, trc_event *e, sim_error *err);
/* Events read so far, and unknown keys dropped (drop_unknown). */
uint64_t trc_events_read(const trc_reader *r);
uint64_t trc_unknown_dropped(const trc_reader *r);
void trc_close(trc_reader *r);

/* Largest single event in a text encoding, and largest msgpack object. */
#define TRC_EVENT_MAX_BYTES ((size_t)64 << 10)

/* ---------------------------------------------------------- begin / end pairs */

/* begin/end events pair by (stage, part, session) (docs/traces.md).  The
 * tracker keeps the open begins (at most TRC_OPEN_MAX; beyond, the trace is
 * refused as SIM_ELIMIT) and reports what is left unpaired. */
#define TRC_OPEN_MAX 4096
typedef struct trc_pairs trc_pairs;

typedef struct trc_unpaired {
    uint64_t index;        /* the event */
    int64_t time_us;
    trc_stage stage;
    char part[TRC_TEXT_MAX];
    int64_t session;       /* -1: none */
    int is_end;            /* 1: an end with no begin before it */
} trc_unpaired;

trc_pairs *trc_pairs_create(sim_error *err);
/* Feeds event `index`; SIM_OK or SIM_ELIMIT. */
int trc_pairs_add(trc_pairs *p, const trc_event *e, uint64_t index, sim_error *err);
/* The unpaired events so far (begins still open, then stray ends, each in
 * index order): *n of them, valid until the next call or destroy. */
const trc_unpaired *trc_pairs_report(trc_pairs *p, size_t *n);
void trc_pairs_destroy(trc_pairs *p);

/* ----------------------------------------------------------------- writing */

typedef struct trc_writer trc_writer;

/* Writes to `out` (not closed by the writer). */
trc_writer *trc_writer_create(FILE *out, trc_format format, sim_error *err);
int trc_write(trc_writer *w, const trc_event *e, sim_error *err);
/* Completes the document (the closing bracket of a JSON array) and flushes. */
int trc_writer_finish(trc_writer *w, sim_error *err);
void trc_writer_destroy(trc_writer *w);

/* ------------------------------------------------------ Perfetto import */

/* `oomsim import perfetto` (traces/perfetto/, docs/perfetto.md): one app
 * process's memory, stages and death read out of a binary Perfetto trace.
 * The reader walks the trace's packets in the protobuf wire format itself
 * (pbwire.h): no trace_processor, no generated code.  It reads the file
 * three times (the process's identity, the kernel mm ids that belong to
 * it, then its events), one packet at a time; what it keeps grows with the
 * chosen process's events, never with the trace. */

/* Largest packet (and largest decompressed bundle of packets) read. */
#define TRC_PF_PACKET_MAX ((size_t)32 << 20)
/* Most distinct part names among a trace's oomsim slices. */
#define TRC_PF_PARTS_MAX 64

typedef struct trc_pf_opts {
    const char *process;      /* the process's name (its command line), or NULL */
    int64_t pid;              /* or its pid (when process is NULL) */
    const char *candidate_id; /* written as every event's `candidate`; NULL: none */
    int64_t step;             /* the workload step the recorded requests belong to */
} trc_pf_opts;

/* What one stage of one part measured: each occurrence's time and memory
 * (bytes by category: TRC_MEM_NATIVE and TRC_MEM_FILE). */
typedef struct trc_pf_occurrence {
    int64_t duration_us;
    int64_t alloc[TRC_MEM_COUNT], keep[TRC_MEM_COUNT];
} trc_pf_occurrence;

typedef struct trc_pf_stage {
    trc_pf_occurrence *occ;
    size_t n, cap;
} trc_pf_stage;

typedef struct trc_pf_summary {
    uint64_t bytes, packets;          /* read, decompressed packets included */
    uint64_t compressed;              /* compressed bundles */
    uint64_t pids;                    /* the process's lives (pids) */
    uint64_t memory_events, slices, stage_slices, kills, events;
    uint64_t kill_other;              /* kills of other processes seen (not taken) */
    /* the wall clock: REALTIME less BOOTTIME (ns) from the trace's first
     * clock snapshot that holds both; has_realtime 0: the exit times are
     * relative to the trace's start */
    int has_realtime;
    int64_t realtime_offset_ns;
    int64_t baseline[TRC_MEM_COUNT]; /* the first life's memory when its first stage began */
    int has_baseline;
    unsigned nparts;
    char parts[TRC_PF_PARTS_MAX][TRC_TEXT_MAX];
    trc_pf_stage stages[TRC_PF_PARTS_MAX][TRC_STAGE_COUNT];
} trc_pf_summary;

/* Where the events go, in time order. */
typedef int (*trc_pf_sink)(void *ctx, const trc_event *e, sim_error *err);

/* Imports the trace at `path` (or `len` bytes at `data`, named `name` in
 * messages): every event of the chosen process goes to sink, in time
 * order; *sum (released with trc_pf_summary_free, also after a failure)
 * says what was read.  SIM_OK, or SIM_EINPUT (a malformed trace: the
 * message names the packet's byte offset; no such process), SIM_ELIMIT,
 * SIM_EIO, SIM_ENOMEM, or the sink's own code. */
int trc_pf_import_file(const char *path, const trc_pf_opts *o, trc_pf_sink sink, void *ctx,
                       trc_pf_summary *sum, sim_error *err);
int trc_pf_import_buffer(const void *data, size_t len, const char *name, const trc_pf_opts *o,
                         trc_pf_sink sink, void *ctx, trc_pf_summary *sum, sim_error *err);
void trc_pf_summary_free(trc_pf_summary *sum);

/* `oomsim import device` on a Perfetto trace (traces/perfetto/phone.c,
 * docs/devices.md): the whole phone over time, in one pass over the
 * packets: every linux.sys_stats sample (/proc/meminfo, and vmstat's
 * nr_zspages), every linux.process_stats poll folded into the memory of
 * each of dumpsys meminfo's OOM groups, the foreground's rises, and the
 * kills of processes the trace records.  What it keeps grows with the
 * samples and the processes, never with the packets' other contents. */
enum { /* the /proc/meminfo lines read, kB */
    TRC_PF_MI_TOTAL = 0, TRC_PF_MI_ACTIVE_FILE, TRC_PF_MI_INACTIVE_FILE, TRC_PF_MI_SWAP_TOTAL,
    TRC_PF_MI_SWAP_FREE, TRC_PF_MI_SHMEM, TRC_PF_MI_SUNRECLAIM, TRC_PF_MI_KERNEL_STACK,
    TRC_PF_MI_PAGE_TABLES, TRC_PF_MI_VMALLOC_USED, TRC_PF_MI_COUNT
};
typedef struct trc_pf_meminfo {
    int64_t ts;                      /* ns, the packet's clock */
    uint64_t kb[TRC_PF_MI_COUNT];
    uint32_t has;                    /* bit k: kb[k] was in the sample */
    uint64_t zspages;                /* vmstat's nr_zspages (zram's pages) */
    int has_zspages;
} trc_pf_meminfo;

/* dumpsys meminfo's OOM groups, by the lowest adj of each (AOSP
 * ActivityManagerService's DUMP_MEM_OOM_ADJ and DUMP_MEM_OOM_LABEL). */
#define TRC_PF_GROUPS 16
extern const int trc_pf_group_adj[TRC_PF_GROUPS];
extern const char *const trc_pf_group_label[TRC_PF_GROUPS];
/* The group of an adj (the last group whose lowest adj it reaches). */
int trc_pf_group_of(int64_t adj);

/* One process_stats poll: each group's processes and their memory (kB:
 * smaps_rollup's Pss where the trace has it for the process, else VmRSS). */
typedef struct trc_pf_poll {
    int64_t ts;
    uint64_t kb[TRC_PF_GROUPS];
    uint32_t n[TRC_PF_GROUPS];
} trc_pf_poll;

/* A rise of a foreground (adj 0) process's memory over consecutive polls. */
#define TRC_PF_SPIKE_MIN_KB (32 * 1024)
typedef struct trc_pf_spike {
    int64_t ts;      /* where it ended */
    uint64_t kb;
} trc_pf_spike;

typedef struct trc_pf_phone {
    uint64_t bytes, packets;
    int64_t first_ts, last_ts;       /* the samples' span (ns) */
    trc_pf_meminfo *mem;
    size_t nmem, capmem;
    trc_pf_poll *poll;
    size_t npoll, cappoll;
    trc_pf_spike *spike;
    size_t nspike, capspike;
    uint64_t processes;              /* distinct pids polled */
    uint64_t sized_pss, sized_rss;   /* processes sized by Pss, by VmRSS */
    uint64_t kills;                  /* kills recorded (lmkd's, lowmemorykiller's, the OOM killer's) */
    uint64_t deaths;                 /* processes ended (a kill or sched_process_free) */
    uint64_t ignored_packets;        /* packets with nothing this reader reads */
    /* SystemInfo (TracePacket 45) */
    char fingerprint[128], maker[64];
    uint64_t sdk, ram_bytes;
    uint32_t page_size;              /* bytes, 0: not said */
    /* the per-pid state of the polls (the reader's own) */
    void *pids;
} trc_pf_phone;

/* Reads the trace at `path` (or `len` bytes at `data`, named `name`) into
 * *out (released with trc_pf_phone_free, also after a failure): SIM_OK,
 * or SIM_EINPUT (malformed: the message names the packet's byte offset),
 * SIM_ELIMIT, SIM_EIO, SIM_ENOMEM. */
int trc_pf_phone_file(const char *path, trc_pf_phone *out, sim_error *err);
int trc_pf_phone_buffer(const void *data, size_t len, const char *name, trc_pf_phone *out,
                        sim_error *err);
void trc_pf_phone_free(trc_pf_phone *out);
/* Does this look like a Perfetto trace (its first packet, as far as `len`
 * bytes show it)?  1 or 0. */
int trc_pf_detect(const void *data, size_t len);

/* lmkd's name for a kill reason code (its kill_reasons enum), NULL when
 * the code is not one. */
const char *trc_pf_lmkd_reason_name(int64_t code);

#ifdef __cplusplus
}
#endif

#endif
