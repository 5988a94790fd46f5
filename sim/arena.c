/* arena.c - per-replication arenas.
 *
 * jemalloc backend: one jemalloc arena (arenas.create), blocks from
 * mallocx(MALLOCX_ARENA | MALLOCX_TCACHE_NONE) so no thread cache keeps
 * pointers into it; arena.<i>.reset frees every block at once and keeps
 * the pages for the next replication (sim_replicate gives each worker
 * thread one arena, reset between replications), arena.<i>.destroy
 * returns them.
 *
 * malloc backend (the sanitizer builds, and OOMSIM_ALLOCATOR=malloc for
 * valgrind): blocks carry a header linking them into a list that reset
 * walks, so a memory checker sees every allocation and every leak.  The
 * backend is sim_allocator()'s, chosen once per process. */
#include "sim.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef OOMSIM_NO_JEMALLOC
#include <jemalloc/jemalloc.h>
#endif

typedef struct block {
    struct block *prev, *next;
    size_t size;
    size_t pad; /* keeps the payload 16-byte aligned on LP64 */
} block;

struct sim_arena {
    sim_alloc alloc;
    int je;         /* the jemalloc backend */
    unsigned index; /* jemalloc: the arena */
    int flags;
    block head;     /* malloc: circular list of live blocks */
    size_t bytes;
    size_t made;    /* blocks allocated since the last reset: 0, nothing to reset */
    size_t reset_mib[3]; /* jemalloc: "arena.<i>.reset", looked up once */
    size_t reset_miblen;
};

#ifndef OOMSIM_NO_JEMALLOC
static void *je_malloc(void *ctx, size_t n)
{
    sim_arena *a = ctx;
    void *p = mallocx(n == 0 ? 1 : n, a->flags);
    if (p != NULL) {
        a->bytes += n;
        a->made++;
    }
    return p;
}

static void *je_realloc(void *ctx, void *p, size_t old, size_t n)
{
    sim_arena *a = ctx;
    if (p == NULL)
        return je_malloc(ctx, n);
    void *q = rallocx(p, n == 0 ? 1 : n, a->flags);
    if (q != NULL)
        a->bytes = a->bytes - old + n;
    return q;
}

static void je_free(void *ctx, void *p, size_t n)
{
    sim_arena *a = ctx;
    sdallocx(p, n == 0 ? 1 : n, a->flags);
    a->bytes -= n;
}

static sim_arena *je_create(sim_error *err)
{
    unsigned index;
    size_t sz = sizeof index;
    if (mallctl("arenas.create", &index, &sz, NULL, 0) != 0) {
        sim_error_set(err, SIM_ENOMEM, "arena: jemalloc could not create an arena");
        return NULL;
    }
    int flags = MALLOCX_ARENA(index) | MALLOCX_TCACHE_NONE;
    /* The arena struct lives outside the arena, which reset empties. */
    sim_arena *a = calloc(1, sizeof *a);
    if (a == NULL) {
        char name[64];
        snprintf(name, sizeof name, "arena.%u.destroy", index);
        mallctl(name, NULL, NULL, NULL, 0);
        sim_error_set(err, SIM_ENOMEM, "arena: out of memory");
        return NULL;
    }
    a->alloc.malloc_fn = je_malloc;
    a->alloc.realloc_fn = je_realloc;
    a->alloc.free_fn = je_free;
    a->alloc.ctx = a;
    a->je = 1;
    a->index = index;
    a->flags = flags;
    a->bytes = 0;
    char name[64];
    snprintf(name, sizeof name, "arena.%u.reset", index);
    a->reset_miblen = sizeof a->reset_mib / sizeof a->reset_mib[0];
    if (mallctlnametomib(name, a->reset_mib, &a->reset_miblen) != 0)
        a->reset_miblen = 0; /* by name, then */
    return a;
}

static void je_destroy(sim_arena *a)
{
    char name[64];
    snprintf(name, sizeof name, "arena.%u.destroy", a->index);
    mallctl(name, NULL, NULL, NULL, 0);
    free(a);
}

static void je_reset(sim_arena *a)
{
    if (a->reset_miblen > 0) {
        mallctlbymib(a->reset_mib, a->reset_miblen, NULL, NULL, NULL, 0);
    } else {
        char name[64];
        snprintf(name, sizeof name, "arena.%u.reset", a->index);
        mallctl(name, NULL, NULL, NULL, 0);
    }
    a->bytes = 0;
}

#endif /* jemalloc */

/* --------------------------------------------------------- malloc */

static void link_block(sim_arena *a, block *b)
{
    b->next = a->head.next;
    b->prev = &a->head;
    a->head.next->prev = b;
    a->head.next = b;
}

static void unlink_block(block *b)
{
    b->prev->next = b->next;
    b->next->prev = b->prev;
}

static void *lb_malloc(void *ctx, size_t n)
{
    sim_arena *a = ctx;
    if (n > SIZE_MAX - sizeof(block))
        return NULL;
    block *b = malloc(sizeof(block) + n);
    if (b == NULL)
        return NULL;
    b->size = n;
    link_block(a, b);
    a->bytes += n;
    a->made++;
    return b + 1;
}

static void *lb_realloc(void *ctx, void *p, size_t old, size_t n)
{
    sim_arena *a = ctx;
    (void)old;
    if (p == NULL)
        return lb_malloc(ctx, n);
    if (n > SIZE_MAX - sizeof(block))
        return NULL;
    block *b = (block *)p - 1;
    size_t was = b->size;
    unlink_block(b);
    block *nb = realloc(b, sizeof(block) + n);
    if (nb == NULL) {
        link_block(a, b);
        return NULL;
    }
    nb->size = n;
    link_block(a, nb);
    a->bytes = a->bytes - was + n;
    return nb + 1;
}

static void lb_free(void *ctx, void *p, size_t n)
{
    sim_arena *a = ctx;
    (void)n;
    block *b = (block *)p - 1;
    unlink_block(b);
    a->bytes -= b->size;
    free(b);
}

static sim_arena *lb_create(sim_error *err)
{
    sim_arena *a = calloc(1, sizeof *a);
    if (a == NULL) {
        sim_error_set(err, SIM_ENOMEM, "arena: out of memory");
        return NULL;
    }
    a->alloc.malloc_fn = lb_malloc;
    a->alloc.realloc_fn = lb_realloc;
    a->alloc.free_fn = lb_free;
    a->alloc.ctx = a;
    a->head.next = a->head.prev = &a->head;
    a->bytes = 0;
    return a;
}

static void lb_reset(sim_arena *a)
{
    block *b = a->head.next;
    while (b != &a->head) {
        block *next = b->next;
        free(b);
        b = next;
    }
    a->head.next = a->head.prev = &a->head;
    a->bytes = 0;
}

static void lb_destroy(sim_arena *a)
{
    lb_reset(a);
    free(a);
}


/* ----------------------------------------------------- the chosen backend */

static int jemalloc_chosen(void)
{
    return strcmp(sim_allocator(), "jemalloc") == 0;
}

sim_arena *sim_arena_create(sim_error *err)
{
#ifndef OOMSIM_NO_JEMALLOC
    if (jemalloc_chosen())
        return je_create(err);
#endif
    return lb_create(err);
}

void sim_arena_reset(sim_arena *a)
{
    if (a->made == 0 && a->bytes == 0)
        return; /* nothing was made since the last reset */
    a->made = 0;
#ifndef OOMSIM_NO_JEMALLOC
    if (a->je) {
        je_reset(a);
        return;
    }
#endif
    lb_reset(a);
}

void sim_arena_destroy(sim_arena *a)
{
    if (a == NULL)
        return;
#ifndef OOMSIM_NO_JEMALLOC
    if (a->je) {
        je_destroy(a);
        return;
    }
#endif
    lb_destroy(a);
}

const char *sim_arena_backend(void) { return jemalloc_chosen() ? "jemalloc" : "malloc"; }

const sim_alloc *sim_arena_alloc(sim_arena *a) { return &a->alloc; }
size_t sim_arena_bytes(const sim_arena *a) { return a->bytes; }
