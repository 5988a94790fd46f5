/* ranks.h - the processes of an MPI job.
 * Part of sim/sim.h, which includes every header of sim/. */
#ifndef OOMSIM_SIM_RANKS_H
#define OOMSIM_SIM_RANKS_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The processes of an MPI job (sim/ranks.c, docs/scale-out.md).  In a
 * build with MPI, started by an MPI launcher, sim_ranks_start() joins the
 * job; otherwise, and before it, the process is rank 0 of a job of one
 * and the collectives below copy or do nothing.  Call them from one
 * thread (the one that called sim_ranks_start); every rank of the job
 * must make the same calls in the same order. */

/* 1 when the environment shows that an MPI launcher started the process
 * (mpirun, mpiexec, srun with PMIx or PMI); OOMSIM_MPI=1 says yes and
 * OOMSIM_MPI=0 no, whatever the environment. */
int sim_ranks_launched(void);
/* Joins the job (MPI_Init_thread, funneled).  SIM_OK, or SIM_EIO when MPI
 * cannot start, or, in a build without MPI that a launcher started as
 * several copies, SIM_ESTATE (each copy would run everything). */
int sim_ranks_start(int *argc, char ***argv, sim_error *err);
/* Leaves the job (MPI_Finalize); nothing when not started. */
void sim_ranks_stop(void);
unsigned sim_ranks_rank(void);  /* 0 .. size - 1 */
unsigned sim_ranks_size(void);  /* >= 1 */
unsigned sim_ranks_local(void); /* ranks of the job on this machine, >= 1 */
/* The MPI library oomsim was built with ("Open MPI v4.1.4"), or NULL
 * when it was built without MPI. */
const char *sim_ranks_library(void);

/* Rank 0 receives every rank's bytes into `into`, one rank after another
 * in rank order: rank r's lens[r] bytes (lens is read at rank 0 only; its
 * own `len` bytes come from `mine`, which may be `into`).  Other ranks
 * send their `len` bytes of `mine` (`into` unused). */
int sim_ranks_gather(const void *mine, size_t len, void *into, const size_t *lens,
                     sim_error *err);
/* Rank 0's v[0..n) becomes the sum over the ranks; the others' is kept. */
int sim_ranks_sum(uint64_t *v, size_t n, sim_error *err);
/* Every rank's v[0..n) becomes the largest of each value over the ranks
 * (a flag any rank raised; a value only rank 0 knows, the others giving
 * 0). */
int sim_ranks_max(uint64_t *v, size_t n, sim_error *err);
/* Every rank gives its status; all get the status of the lowest-numbered
 * failing rank, SIM_OK when none failed, with that rank's message in err
 * as "rank R: message" (in a job of several; a job of one returns code
 * and err as they are). */
int sim_ranks_agree(int code, sim_error *err);
/* FNV-1a (64 bits) of n bytes at p, chained from h (0: a fresh digest):
 * what the ranks compare with sim_ranks_same. */
uint64_t sim_digest(uint64_t h, const void *p, size_t n);
/* SIM_OK when every rank gave the same v, else SIM_EINPUT: "rank R: <what>
 * differs from rank 0's", R the first that differs. */
int sim_ranks_same(uint64_t v, const char *what, sim_error *err);

#ifdef __cplusplus
}
#endif

#endif /* OOMSIM_SIM_RANKS_H */
