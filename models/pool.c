/* pool.c - the pools the process's attempts and the user's requests are
 * kept in (w_store's arrays): a free list through each record's `next`,
 * doubled when empty up to MDL_REQUESTS_IN_SYSTEM_MAX, never shrunk, the
 * storage kept across deaths.  A record taken holds whatever it held: the
 * caller sets every field. */
#include "world_int.h"

#include <stddef.h>

/* Doubles a pool of `elem`-byte records up to MDL_REQUESTS_IN_SYSTEM_MAX;
 * returns the old capacity (the first new record), or NIL on failure. */
static uint32_t grow(world *w, void **pool, uint32_t *cap, size_t elem)
{
    if (*cap >= MDL_REQUESTS_IN_SYSTEM_MAX) {
        sim_error_set(w->err, SIM_ELIMIT,
                      "more than %u requests in the system at once at t=%.3f s: the "
                      "queue never drains; bound policies.queue or lower the rate",
                      MDL_REQUESTS_IN_SYSTEM_MAX, (double)now(w) / 1e6);
        w__fail(w, SIM_ELIMIT);
        return NIL;
    }
    uint32_t n = *cap == 0 ? 64 : *cap * 2;
    if (n > MDL_REQUESTS_IN_SYSTEM_MAX)
        n = MDL_REQUESTS_IN_SYSTEM_MAX;
    void *p = sim_realloc(w->alloc, *pool, (size_t)*cap * elem, (size_t)n * elem);
    if (p == NULL) {
        sim_error_set(w->err, SIM_ENOMEM, "replication: out of memory for requests");
        w__fail(w, SIM_ENOMEM);
        return NIL;
    }
    uint32_t old = *cap;
    *pool = p;
    *cap = n;
    return old;
}

/* Takes a free record from a pool of `elem`-byte records whose `next` and
 * `in_use` fields sit at the given offsets, growing it (and threading the
 * new records onto the free list) when none is free; NIL on failure. */
static uint32_t take_free(world *w, void **pool, uint32_t *cap, uint32_t *free_head, size_t elem,
                          size_t next_off, size_t in_use_off)
{
    if (*free_head == NIL) {
        uint32_t old = grow(w, pool, cap, elem);
        if (old == NIL)
            return NIL;
        char *base = *pool;
        for (uint32_t i = old; i < *cap; i++) {
            uint32_t next = i + 1 < *cap ? i + 1 : NIL;
            memcpy(base + (size_t)i * elem + next_off, &next, sizeof next);
            base[(size_t)i * elem + in_use_off] = 0;
        }
        *free_head = old;
    }
    uint32_t i = *free_head;
    memcpy(free_head, (char *)*pool + (size_t)i * elem + next_off, sizeof *free_head);
    return i;
}

uint32_t w__attempt_take(world *w)
{
    void *pool = w->store.pool;
    uint32_t i = take_free(w, &pool, &w->store.pool_cap, &w->store.free_head, sizeof *w->store.pool,
                           offsetof(req, next), offsetof(req, in_use));
    w->store.pool = pool;
    return i;
}

uint32_t w__user_get(world *w)
{
    w_proc *pr = &w->proc;
    void *pool = w->store.users;
    uint32_t u = take_free(w, &pool, &w->store.users_cap, &pr->users_free, sizeof *w->store.users,
                           offsetof(user, next), offsetof(user, in_use));
    w->store.users = pool;
    return u;
}

/* The user request is over when no attempt is left and none will come. */
void w__user_maybe_free(world *w, uint32_t u)
{
    user *x = &w->store.users[u];
    if (x->live > 0 || x->waiting)
        return;
    x->in_use = 0;
    x->next = w->proc.users_free;
    w->proc.users_free = u;
    w__answer_ended(w, x->id);
}

void w__answer_ended(world *w, uint64_t id)
{
    if (!w->path.awaiting || id != w->path.awaiting_id || w->ending)
        return;
    w->path.awaiting = 0;
    w->path.answered(w);
}
