/* ranks_mpi.h - the table sim/ranks.c finds in the MPI module
 * (sim/ranks_mpi.c, oomsim-mpi.so), one entry per sim.h ranks call that
 * MPI serves.  SIM_RANKS_MPI_ABI changes whenever the table or a
 * sim_error changes shape, so a module of another build is refused. */
#ifndef OOMSIM_SIM_RANKS_MPI_H
#define OOMSIM_SIM_RANKS_MPI_H

#include "sim.h"

#define SIM_RANKS_MPI_ABI (1001u + (unsigned)sizeof(sim_error))

typedef struct sim_ranks_mpi_ops {
    unsigned abi;
    int (*start)(int *argc, char ***argv, unsigned *rank, unsigned *size, unsigned *local,
                 sim_error *err);
    void (*stop)(void);
    const char *(*library)(void);
    int (*gather)(const void *mine, size_t len, void *into, const size_t *lens,
                  sim_error *err);
    int (*sum)(uint64_t *v, size_t n, sim_error *err);
    int (*agree)(int code, sim_error *err);
    int (*same)(uint64_t v, const char *what, sim_error *err);
    int (*max)(uint64_t *v, size_t n, sim_error *err);
} sim_ranks_mpi_ops;

#endif
