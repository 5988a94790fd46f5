/* rng.h - random-number streams keyed by (seed, replication, purpose).
 * Part of sim/sim.h, which includes every header of sim/. */
#ifndef OOMSIM_SIM_RNG_H
#define OOMSIM_SIM_RNG_H

#include <stdint.h>
#include <gsl/gsl_rng.h>

#include "alloc.h"
#include "engine.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A random-number stream: a GSL taus2 generator whose whole state is
 * derived from (seed, replication, purpose) by sim_stream_key() (see
 * docs/design/rng.md).  One purpose draws the same numbers whatever the
 * other purposes draw: the basis of common random numbers. */
typedef struct sim_stream {
    gsl_rng rng;           /* pass &s->rng to any gsl_ran_* function */
    const sim_alloc *alloc;
    size_t state_size;
} sim_stream;

/* The 64-bit key of a stream: a splitmix64-based mix of its three
 * coordinates.  Pure; documented so other tools can reproduce it. */
uint64_t sim_stream_key(uint64_t seed, uint64_t replication, uint64_t purpose);

/* Initialises s (caller-owned storage) for (seed, replication, purpose),
 * allocating the generator state from alloc (NULL: default).  Returns
 * SIM_OK or SIM_ENOMEM (s untouched). */
int sim_stream_init(sim_stream *s, const sim_alloc *alloc, uint64_t seed,
                    uint64_t replication, uint64_t purpose);
/* Releases the state.  Safe on a zeroed stream. */
void sim_stream_release(sim_stream *s);

static inline gsl_rng *sim_stream_rng(sim_stream *s) { return &s->rng; }

/* A standard exponential (mean 1) by the ziggurat method: two 32-bit
 * draws on almost every call, more (and a logarithm) on about 1.1 %.
 * The number of draws never depends on a mean, so scaling the result
 * keeps common random numbers aligned. */
double sim_stream_std_exp(sim_stream *s);

/* An exponential duration in microseconds with the given mean (us),
 * rounded to the nearest microsecond: mean_us * sim_stream_std_exp(). */
sim_time sim_stream_exp_us(sim_stream *s, double mean_us);

#ifdef __cplusplus
}
#endif

#endif /* OOMSIM_SIM_RNG_H */
