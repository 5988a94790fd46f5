/* engine.c - virtual clock, slots and handles, and the run loop.
 *
 * The engine's state and the contract of a pending-event set are in
 * engine_int.h.  Two sets order the slots, each in a file of its own with
 * the same function names (as Redis's ae.c includes its backend):
 * pending_radix.c, the default, and pending_heap.c, an implicit 2^k-ary
 * heap.  Both are compiled here, so their functions inline into the hot
 * path; an engine's set is fixed at creation and picked in one place, the
 * PENDING macro below.  docs/design/engine.md gives the measurements. */
#include "engine_int.h"

#include <string.h>

#define PEND(fn) radix_##fn
#include "pending_radix.c"
#undef PEND
#define PEND(fn) heap_##fn
#include "pending_heap.c"
#undef PEND

/* The one place a pending set is picked. */
#define PENDING(e, fn, ...) ((e)->radix ? radix_##fn(__VA_ARGS__) : heap_##fn(__VA_ARGS__))

static void slot_release(sim_engine *e, uint32_t s)
{
    slot *sl = &e->slots[s];
    sl->fn = NULL;
    sl->ctx = NULL;
    sl->gen++;
    sl->pos = e->free_head;
    e->free_head = s;
}

/* Decodes a handle into a live slot index, or returns SLOT_FREE_END. */
static uint32_t handle_slot(const sim_engine *e, sim_handle h)
{
    uint32_t idx = (uint32_t)(h & UINT32_MAX);
    if (idx == 0 || idx > e->cap)
        return SLOT_FREE_END;
    const slot *sl = &e->slots[idx - 1];
    if (sl->fn == NULL || sl->gen != (uint32_t)(h >> 32))
        return SLOT_FREE_END;
    return idx - 1;
}

static int grow(sim_engine *e)
{
    if (e->cap >= e->max_pending)
        return SIM_ELIMIT;
    uint64_t ncap64 = e->cap == 0 ? 64 : (uint64_t)e->cap * 2;
    if (ncap64 > e->max_pending)
        ncap64 = e->max_pending;
    uint32_t ncap = (uint32_t)ncap64;
    if (e->heap_cap < ncap) {
        int rc = PENDING(e, grow, e, ncap);
        if (rc != SIM_OK)
            return rc;
        e->heap_cap = ncap;
    }
    slot *ns = sim_realloc(e->alloc, e->slots, sizeof(slot) * e->cap, sizeof(slot) * ncap);
    if (ns == NULL)
        return SIM_ENOMEM; /* the larger heap array is kept for the next try */
    e->slots = ns;
    /* New slots join the free list in increasing order. */
    for (uint32_t s = ncap; s-- > e->cap;) {
        memset(&ns[s], 0, sizeof ns[s]);
        ns[s].gen = 1;
        ns[s].pos = e->free_head;
        e->free_head = s;
    }
    e->cap = ncap;
    return SIM_OK;
}

sim_engine *sim_engine_create(const sim_engine_config *cfg, sim_error *err)
{
    const sim_alloc *a = cfg != NULL && cfg->alloc != NULL ? cfg->alloc : sim_alloc_default();
    sim_pending_kind kind = cfg != NULL ? cfg->pending : SIM_PENDING_DEFAULT;
    unsigned k = cfg != NULL && cfg->heap_arity_log2 != 0 ? cfg->heap_arity_log2 : 2;
    uint32_t maxp = cfg != NULL && cfg->max_pending != 0 ? cfg->max_pending
                                                          : SIM_MAX_PENDING_DEFAULT;
    if (k > 4) {
        sim_error_set(err, SIM_EINVAL, "engine: heap arity 2^%u exceeds the limit 2^4", k);
        return NULL;
    }
    if (kind != SIM_PENDING_DEFAULT && kind != SIM_PENDING_RADIX && kind != SIM_PENDING_HEAP) {
        sim_error_set(err, SIM_EINVAL, "engine: unknown pending-set kind %d", (int)kind);
        return NULL;
    }
    sim_engine *e = sim_malloc(a, sizeof *e);
    if (e == NULL) {
        sim_error_set(err, SIM_ENOMEM, "engine: out of memory");
        return NULL;
    }
    memset(e, 0, sizeof *e);
    e->alloc = a;
    e->k = k;
    e->radix = kind != SIM_PENDING_HEAP;
    e->max_pending = maxp;
    if (cfg != NULL) {
        e->after_event = cfg->after_event;
        e->after_ctx = cfg->after_ctx;
    }
    e->free_head = SLOT_FREE_END;
    PENDING(e, init, e);
    return e;
}

void sim_engine_destroy(sim_engine *e)
{
    if (e == NULL)
        return;
    const sim_alloc *a = e->alloc;
    PENDING(e, release, e);
    sim_free(a, e->slots, sizeof(slot) * e->cap);
    sim_free(a, e, sizeof *e);
}

sim_time sim_now(const sim_engine *e) { return e->now; }
size_t sim_pending(const sim_engine *e) { return e->n; }
uint64_t sim_events_fired(const sim_engine *e) { return e->fired; }

int sim_schedule(sim_engine *e, sim_time t, int prio, sim_event_fn fn, void *ctx,
                 uint64_t arg, sim_handle *h)
{
    if (t < e->now || fn == NULL || prio < SIM_PRIO_MIN || prio > SIM_PRIO_MAX)
        return SIM_EINVAL;
    if (e->seq >= SEQ_LIMIT)
        return SIM_ELIMIT;
    if (e->free_head == SLOT_FREE_END) {
        int rc = grow(e);
        if (rc != SIM_OK)
            return rc;
    }
    uint32_t s = e->free_head;
    slot *sl = &e->slots[s];
    e->free_head = sl->pos;
    sl->fn = fn;
    sl->ctx = ctx;
    sl->arg = arg;
    sl->t = t;
    sl->ord = ((uint64_t)(prio - SIM_PRIO_MIN) << SEQ_BITS) | e->seq++;
    PENDING(e, insert, e, s);
    if (h != NULL)
        *h = ((uint64_t)sl->gen << 32) | (uint64_t)(s + 1);
    return SIM_OK;
}

int sim_schedule_in(sim_engine *e, sim_time delay, int prio, sim_event_fn fn, void *ctx,
                    uint64_t arg, sim_handle *h)
{
    if (delay < 0 || delay > SIM_TIME_MAX - e->now)
        return SIM_EINVAL;
    return sim_schedule(e, e->now + delay, prio, fn, ctx, arg, h);
}

int sim_cancel(sim_engine *e, sim_handle h)
{
    uint32_t s = handle_slot(e, h);
    if (s == SLOT_FREE_END)
        return SIM_ENOTFOUND;
    PENDING(e, remove, e, s);
    slot_release(e, s);
    return SIM_OK;
}

int sim_reschedule(sim_engine *e, sim_handle h, sim_time t)
{
    uint32_t s = handle_slot(e, h);
    if (s == SLOT_FREE_END)
        return SIM_ENOTFOUND;
    if (t < e->now)
        return SIM_EINVAL;
    if (e->seq >= SEQ_LIMIT)
        return SIM_ELIMIT;
    PENDING(e, remove, e, s);
    slot *sl = &e->slots[s];
    sl->t = t;
    sl->ord = (sl->ord & ~(SEQ_LIMIT - 1)) | e->seq++;
    PENDING(e, insert, e, s);
    return SIM_OK;
}

int sim_is_pending(const sim_engine *e, sim_handle h, sim_time *t)
{
    uint32_t s = handle_slot(e, h);
    if (s == SLOT_FREE_END)
        return 0;
    if (t != NULL)
        *t = e->slots[s].t;
    return 1;
}

/* Fires slot s, already out of the pending set.  The slot is freed before
 * the call, so the handler sees its own handle as stale and may reuse it. */
static inline void fire(sim_engine *e, uint32_t s)
{
    slot *sl = &e->slots[s];
    sim_event_fn fn = sl->fn;
    void *ctx = sl->ctx;
    uint64_t arg = sl->arg;
    e->now = sl->t;
    slot_release(e, s);
    e->fired++;
    fn(e, ctx, arg);
}

/* The after-event hook; its failure aborts the run. */
static void after(sim_engine *e)
{
    int rc = e->after_event(e->after_ctx);
    if (rc != SIM_OK)
        sim_abort(e, rc);
}

/* The run loop, with or without the after-event hook: two copies, so a
 * run without a hook pays nothing for it. */
static inline int run_loop(sim_engine *e, sim_time horizon, int hooked)
{
    for (;;) {
        uint32_t s = PENDING(e, take, e, horizon);
        if (s == SLOT_FREE_END) {
            if (e->n == 0)
                return SIM_RUN_EMPTY;
            if (horizon > e->now)
                e->now = horizon;
            return SIM_RUN_HORIZON;
        }
        fire(e, s);
        if (hooked && !e->stop)
            after(e);
        if (e->stop)
            return e->abort_code != 0 ? e->abort_code : SIM_RUN_STOPPED;
    }
}

int sim_run(sim_engine *e, sim_time horizon)
{
    e->stop = 0;
    e->abort_code = 0;
    return e->after_event != NULL ? run_loop(e, horizon, 1) : run_loop(e, horizon, 0);
}

int sim_step(sim_engine *e)
{
    e->stop = 0;
    e->abort_code = 0;
    uint32_t s = PENDING(e, take, e, SIM_TIME_MAX);
    if (s == SLOT_FREE_END)
        return 0;
    fire(e, s);
    if (e->after_event != NULL && !e->stop)
        after(e);
    return e->abort_code != 0 ? e->abort_code : 1;
}

void sim_stop(sim_engine *e) { e->stop = 1; }

void sim_abort(sim_engine *e, int code)
{
    e->stop = 1;
    if (e->abort_code == 0)
        e->abort_code = code < 0 ? code : SIM_EINTERNAL;
}

int sim_queue_validate(const sim_engine *e, sim_error *err)
{
    if (e->n > e->cap)
        return sim_error_set(err, SIM_EINTERNAL, "queue: %u pending exceed capacity %u",
                             e->n, e->cap);
    int rc = PENDING(e, validate, e, err);
    if (rc != SIM_OK)
        return rc;
    uint32_t free_count = 0;
    for (uint32_t s = e->free_head; s != SLOT_FREE_END; s = e->slots[s].pos) {
        if (s >= e->cap || e->slots[s].fn != NULL || ++free_count > e->cap)
            return sim_error_set(err, SIM_EINTERNAL, "queue: free list broken at slot %u", s);
    }
    if (free_count + e->n != e->cap)
        return sim_error_set(err, SIM_EINTERNAL,
                             "queue: %u free + %u pending slots != capacity %u", free_count,
                             e->n, e->cap);
    return SIM_OK;
}
