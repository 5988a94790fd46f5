/* sim.h - the generic discrete-event engine of oomsim: the umbrella of
 * sim/'s headers, one per concern:
 *   error.h      the one error table and the error with its context
 *   text.h       a text buffer that grows; the version; plurals
 *   file.h       reading a file whole; files written whole or not at all
 *   alloc.h      the allocator hook and the failing test allocator
 *   engine.h     virtual time, the pending-event set, the run loop
 *   rng.h        random-number streams
 *   arena.h      per-replication arenas
 *   replicate.h  the replication runner over threads
 *   ranks.h      the ranks of an MPI job (sim/ranks.c; mpi.h only in
 *                ranks_mpi.c)
 * Nothing here knows about memory, devices or models; sim/ could drive any
 * other model.
 *
 * Threading: an engine, a stream and an arena belong to one thread at a
 * time.  sim_replicate() is the only function that starts threads.
 */
#ifndef OOMSIM_SIM_H
#define OOMSIM_SIM_H

#include "error.h"
#include "text.h"
#include "file.h"
#include "alloc.h"
#include "engine.h"
#include "rng.h"
#include "arena.h"
#include "replicate.h"
#include "ranks.h"

#endif /* OOMSIM_SIM_H */
