/* alloc.h - the allocator hook and the test allocator that fails on demand.
 * Part of sim/sim.h, which includes every header of sim/. */
#ifndef OOMSIM_SIM_ALLOC_H
#define OOMSIM_SIM_ALLOC_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The one allocator interface.  Every allocation of the engine and the
 * models goes through one of these, so tests can fail the Nth allocation
 * and replications can allocate from their own arena.  free_fn and
 * realloc_fn receive the size given at allocation (sized deallocation). */
typedef struct sim_alloc {
    void *(*malloc_fn)(void *ctx, size_t size);
    void *(*realloc_fn)(void *ctx, void *ptr, size_t old_size, size_t size);
    void (*free_fn)(void *ctx, void *ptr, size_t size);
    void *ctx;
} sim_alloc;

/* "jemalloc" or "malloc": the allocator of the process, chosen once: the
 * C library in builds without jemalloc (the sanitizer builds) or when the
 * environment has OOMSIM_ALLOCATOR=malloc (for valgrind), else jemalloc.
 * Results do not depend on it. */
const char *sim_allocator(void);
/* The process-wide default, sim_allocator()'s: jemalloc or the C library.
 * Thread-safe; the returned object is static. */
const sim_alloc *sim_alloc_default(void);

static inline void *sim_malloc(const sim_alloc *a, size_t n)
{
    return a->malloc_fn(a->ctx, n);
}
static inline void *sim_realloc(const sim_alloc *a, void *p, size_t old, size_t n)
{
    return a->realloc_fn(a->ctx, p, old, n);
}
static inline void sim_free(const sim_alloc *a, void *p, size_t n)
{
    if (p != NULL)
        a->free_fn(a->ctx, p, n);
}

/* Test allocator: wraps `base` and fails the fail_at-th allocation
 * (1-based, counting malloc and realloc; 0 never fails).  It counts live
 * blocks so tests can prove that every error path released what it took. */
typedef struct sim_failalloc {
    sim_alloc alloc;       /* pass &fa.alloc to the code under test */
    const sim_alloc *base;
    uint64_t calls;        /* allocations attempted so far */
    uint64_t fail_at;
    int64_t live_blocks;   /* allocations minus frees */
    int64_t live_bytes;
} sim_failalloc;

void sim_failalloc_init(sim_failalloc *fa, const sim_alloc *base, uint64_t fail_at);

#ifdef __cplusplus
}
#endif

#endif /* OOMSIM_SIM_ALLOC_H */
