/* replicate.h - the replication runner over threads.
 * Part of sim/sim.h, which includes every header of sim/. */
#ifndef OOMSIM_SIM_REPLICATE_H
#define OOMSIM_SIM_REPLICATE_H

#include <stdint.h>

#include "alloc.h"
#include "error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What one replication gets: its index and its arena's allocator. */
typedef struct sim_rep_env {
    uint64_t replication;
    const sim_alloc *alloc;  /* freed wholesale when the replication returns */
    unsigned thread;         /* the worker running it, 0..threads-1: for state
                                that must not depend on the schedule (integer
                                counts merged afterwards), never for results */
} sim_rep_env;

/* Runs one replication and writes its result into `out` (out_size bytes
 * of caller memory, not from env->alloc, which is gone afterwards).
 * Returns SIM_OK or a SIM_E* code with err filled.  Called concurrently
 * from several threads: it must only touch its own replication's state. */
typedef int (*sim_rep_fn)(void *ctx, const sim_rep_env *env, void *out, sim_error *err);

#define SIM_THREADS_MAX 256u

/* Runs replications 0..count-1 on `threads` threads (clamped to
 * [1, min(count, SIM_THREADS_MAX)]); replication k writes outs + k * out_size.  Results are in
 * replication order whatever the thread count.  On failure returns the
 * error of the lowest-numbered failing replication (deterministic), and
 * replications after it may not have run. */
int sim_replicate(uint64_t count, unsigned threads, sim_rep_fn fn, void *ctx,
                  void *outs, size_t out_size, sim_error *err);

#ifdef __cplusplus
}
#endif

#endif /* OOMSIM_SIM_REPLICATE_H */
