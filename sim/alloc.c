/* alloc.c - the default allocator hook and the fail-Nth test allocator.
 *
 * The default is jemalloc's non-standard API (sized deallocation), unless
 * the build defines OOMSIM_NO_JEMALLOC, as sanitizer builds do (ASan
 * replaces malloc itself and cannot see blocks jemalloc hands out), or
 * the environment says OOMSIM_ALLOCATOR=malloc (for valgrind, which sees
 * malloc's blocks one by one and mallocx's only as jemalloc's pages). */
#include "sim.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#ifndef OOMSIM_NO_JEMALLOC
#include <jemalloc/jemalloc.h>

static void *je_malloc(void *ctx, size_t n)
{
    (void)ctx;
    return mallocx(n == 0 ? 1 : n, 0);
}
static void *je_realloc(void *ctx, void *p, size_t old, size_t n)
{
    (void)ctx;
    (void)old;
    if (p == NULL)
        return mallocx(n == 0 ? 1 : n, 0);
    return rallocx(p, n == 0 ? 1 : n, 0);
}
static void je_free(void *ctx, void *p, size_t n)
{
    (void)ctx;
    sdallocx(p, n == 0 ? 1 : n, 0);
}
static const sim_alloc je_alloc = {je_malloc, je_realloc, je_free, NULL};
#endif

static void *libc_malloc(void *ctx, size_t n)
{
    (void)ctx;
    return malloc(n == 0 ? 1 : n);
}
static void *libc_realloc(void *ctx, void *p, size_t old, size_t n)
{
    (void)ctx;
    (void)old;
    return realloc(p, n == 0 ? 1 : n);
}
static void libc_free(void *ctx, void *p, size_t n)
{
    (void)ctx;
    (void)n;
    free(p);
}
static const sim_alloc libc_alloc = {libc_malloc, libc_realloc, libc_free, NULL};

static const char *chosen = "malloc";
static pthread_once_t choose_once = PTHREAD_ONCE_INIT;

static void choose(void)
{
#ifndef OOMSIM_NO_JEMALLOC
    const char *env = getenv("OOMSIM_ALLOCATOR");
    chosen = env != NULL && strcmp(env, "malloc") == 0 ? "malloc" : "jemalloc";
#endif
}

const char *sim_allocator(void)
{
    pthread_once(&choose_once, choose);
    return chosen;
}

const sim_alloc *sim_alloc_default(void)
{
#ifndef OOMSIM_NO_JEMALLOC
    if (strcmp(sim_allocator(), "jemalloc") == 0)
        return &je_alloc;
#endif
    return &libc_alloc;
}

/* ------------------------------------------------------------ fail-Nth */

static int fa_should_fail(sim_failalloc *fa)
{
    fa->calls++;
    return fa->fail_at != 0 && fa->calls == fa->fail_at;
}

static void *fa_malloc(void *ctx, size_t n)
{
    sim_failalloc *fa = ctx;
    if (fa_should_fail(fa))
        return NULL;
    void *p = sim_malloc(fa->base, n);
    if (p != NULL) {
        fa->live_blocks++;
        fa->live_bytes += (int64_t)n;
    }
    return p;
}

static void *fa_realloc(void *ctx, void *p, size_t old, size_t n)
{
    sim_failalloc *fa = ctx;
    if (fa_should_fail(fa))
        return NULL;
    void *q = sim_realloc(fa->base, p, old, n);
    if (q != NULL) {
        if (p == NULL)
            fa->live_blocks++;
        fa->live_bytes += (int64_t)n - (int64_t)(p == NULL ? 0 : old);
    }
    return q;
}

static void fa_free(void *ctx, void *p, size_t n)
{
    sim_failalloc *fa = ctx;
    fa->live_blocks--;
    fa->live_bytes -= (int64_t)n;
    sim_free(fa->base, p, n);
}

void sim_failalloc_init(sim_failalloc *fa, const sim_alloc *base, uint64_t fail_at)
{
    fa->base = base != NULL ? base : sim_alloc_default();
    fa->calls = 0;
    fa->fail_at = fail_at;
    fa->live_blocks = 0;
    fa->live_bytes = 0;
    fa->alloc.malloc_fn = fa_malloc;
    fa->alloc.realloc_fn = fa_realloc;
    fa->alloc.free_fn = fa_free;
    fa->alloc.ctx = fa;
}
