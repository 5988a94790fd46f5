/* perfetto.h - `oomsim import perfetto`: one app process's memory, stages
 * and death read out of a binary Perfetto trace (docs/perfetto.md), and
 * the timeline of a simulated replication written in the JSON trace event
 * format the Perfetto UI opens.
 *
 * The reader walks the trace's packets in the protobuf wire format itself
 * (traces/pbwire.h): no trace_processor, no generated code.  It reads the
 * file three times (the process's identity, the kernel mm ids that belong
 * to it, then its events), one packet at a time; what it keeps grows with
 * the chosen process's events, never with the trace. */
#ifndef OOMSIM_TRACES_PERFETTO_H
#define OOMSIM_TRACES_PERFETTO_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "traces/traces.h"

#ifdef __cplusplus
extern "C" {
#endif

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

/* The candidate skeleton of docs/perfetto.md from a summary (YAML text,
 * malloc'ed; NULL out of memory).  `about` names what was measured. */
char *trc_pf_candidate_yaml(const trc_pf_summary *sum, const char *id, const char *about);

/* lmkd's name for a kill reason code (its kill_reasons enum), NULL when
 * the code is not one. */
const char *trc_pf_lmkd_reason_name(int64_t code);

#ifdef __cplusplus
}
#endif

#endif
