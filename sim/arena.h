/* arena.h - per-replication arenas.
 * Part of sim/sim.h, which includes every header of sim/. */
#ifndef OOMSIM_SIM_ARENA_H
#define OOMSIM_SIM_ARENA_H

#include <stddef.h>

#include "alloc.h"
#include "error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A per-replication arena: everything allocated from it is freed at once
 * by sim_arena_destroy().  Backed by a jemalloc arena (arenas.create,
 * mallocx with MALLOCX_ARENA, arena.<i>.destroy), or, when sim_allocator()
 * is "malloc", by a tracked list of C-library blocks, so the sanitizers
 * and valgrind see every block.
 * Used by one thread at a time. */
typedef struct sim_arena sim_arena;

sim_arena *sim_arena_create(sim_error *err);
/* Frees every block of the arena and the arena.  NULL is allowed. */
void sim_arena_destroy(sim_arena *a);
/* Frees every block of the arena, which stays usable: its pages are kept
 * for the next replication on the same thread instead of being returned
 * to the system and faulted in again (arena.<i>.reset). */
void sim_arena_reset(sim_arena *a);
/* The allocator of the arena; valid until sim_arena_destroy(). */
const sim_alloc *sim_arena_alloc(sim_arena *a);
/* Bytes currently allocated from the arena (as requested). */
size_t sim_arena_bytes(const sim_arena *a);
/* "jemalloc" or "malloc": the backend in use (sim_allocator()). */
const char *sim_arena_backend(void);

#ifdef __cplusplus
}
#endif

#endif /* OOMSIM_SIM_ARENA_H */
