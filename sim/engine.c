/* engine.c - virtual clock, pending-event set and run loop.
 *
 * The pending set is an implicit d-ary min-heap (d = 2^k, default 4) of
 * small nodes {time, order, slot}.  The payload of an event (handler,
 * context, argument) lives in a slot table indexed by the handle, which
 * also records the node's heap position, so cancel and reschedule are
 * O(log n).  docs/design/engine.md gives the measurements behind the
 * choice of a 4-ary heap.
 *
 * Order: (time, priority, sequence).  `ord` packs the biased priority in
 * its top 16 bits and a 48-bit insertion sequence below, so one unsigned
 * comparison breaks ties at equal times. */
#include "sim.h"

#include <string.h>

#define SEQ_BITS 48
#define SEQ_LIMIT (UINT64_C(1) << SEQ_BITS)
#define SLOT_FREE_END UINT32_MAX

typedef struct hnode {
    sim_time t;
    uint64_t ord;
    uint32_t slot;
} hnode;

typedef struct slot {
    sim_event_fn fn; /* NULL when the slot is free */
    void *ctx;
    uint64_t arg;
    uint32_t pos;    /* heap position, or next free slot when free */
    uint32_t gen;    /* bumped each time the slot is freed */
} slot;

struct sim_engine {
    hnode *heap;
    slot *slots;
    uint32_t n;         /* pending events */
    uint32_t cap;       /* slots; the heap holds at most cap nodes */
    uint32_t heap_cap;  /* allocated heap nodes (>= cap) */
    uint32_t free_head; /* first free slot or SLOT_FREE_END */
    uint32_t max_pending;
    unsigned k;         /* log2 of the heap arity */
    int stop;
    int abort_code;
    sim_time now;
    uint64_t seq;
    uint64_t fired;
    const sim_alloc *alloc;
};

static inline int node_less(const hnode *a, const hnode *b)
{
    return a->t < b->t || (a->t == b->t && a->ord < b->ord);
}

static inline void place(sim_engine *e, uint32_t i, const hnode *x)
{
    e->heap[i] = *x;
    e->slots[x->slot].pos = i;
}

/* Moves the hole at i up until x fits, then stores x. */
static void sift_up(sim_engine *e, uint32_t i, hnode x)
{
    const unsigned k = e->k;
    while (i > 0) {
        uint32_t parent = (i - 1) >> k;
        if (!node_less(&x, &e->heap[parent]))
            break;
        place(e, i, &e->heap[parent]);
        i = parent;
    }
    place(e, i, &x);
}

/* Moves the hole at i down until x fits, then stores x. */
static void sift_down(sim_engine *e, uint32_t i, hnode x)
{
    const unsigned k = e->k;
    const uint32_t n = e->n;
    hnode *h = e->heap;
    for (;;) {
        uint64_t first = ((uint64_t)i << k) + 1;
        if (first >= n)
            break;
        uint64_t last = first + (UINT64_C(1) << k);
        if (last > n)
            last = n;
        uint32_t best = (uint32_t)first;
        for (uint32_t c = best + 1; c < last; c++)
            if (node_less(&h[c], &h[best]))
                best = c;
        if (!node_less(&h[best], &x))
            break;
        place(e, i, &h[best]);
        i = best;
    }
    place(e, i, &x);
}

/* Removes the node at heap position i. */
static void heap_remove(sim_engine *e, uint32_t i)
{
    uint32_t last = --e->n;
    if (i == last)
        return;
    hnode x = e->heap[last];
    if (i > 0 && node_less(&x, &e->heap[(i - 1) >> e->k]))
        sift_up(e, i, x);
    else
        sift_down(e, i, x);
}

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
        hnode *nh = sim_realloc(e->alloc, e->heap, sizeof(hnode) * e->heap_cap,
                                sizeof(hnode) * ncap);
        if (nh == NULL)
            return SIM_ENOMEM;
        e->heap = nh;
        e->heap_cap = ncap;
    }
    slot *ns = sim_realloc(e->alloc, e->slots, sizeof(slot) * e->cap, sizeof(slot) * ncap);
    if (ns == NULL)
        return SIM_ENOMEM; /* the larger heap array is kept for the next try */
    e->slots = ns;
    /* New slots join the free list in increasing order. */
    for (uint32_t s = ncap; s-- > e->cap;) {
        ns[s].fn = NULL;
        ns[s].ctx = NULL;
        ns[s].arg = 0;
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
    unsigned k = cfg != NULL && cfg->heap_arity_log2 != 0 ? cfg->heap_arity_log2 : 2;
    uint32_t maxp = cfg != NULL && cfg->max_pending != 0 ? cfg->max_pending
                                                          : SIM_MAX_PENDING_DEFAULT;
    if (k > 4) {
        sim_error_set(err, SIM_EINVAL, "engine: heap arity 2^%u exceeds the limit 2^4", k);
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
    e->max_pending = maxp;
    e->free_head = SLOT_FREE_END;
    return e;
}

void sim_engine_destroy(sim_engine *e)
{
    if (e == NULL)
        return;
    const sim_alloc *a = e->alloc;
    sim_free(a, e->heap, sizeof(hnode) * e->heap_cap);
    sim_free(a, e->slots, sizeof(slot) * e->cap);
    sim_free(a, e, sizeof *e);
}

sim_time sim_now(const sim_engine *e) { return e->now; }
size_t sim_pending(const sim_engine *e) { return e->n; }
uint64_t sim_events_fired(const sim_engine *e) { return e->fired; }

static inline uint64_t make_ord(sim_engine *e, int prio)
{
    return ((uint64_t)(prio - SIM_PRIO_MIN) << SEQ_BITS) | e->seq++;
}

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
    hnode x = {t, make_ord(e, prio), s};
    e->n++;
    sift_up(e, e->n - 1, x);
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
    heap_remove(e, e->slots[s].pos);
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
    uint32_t i = e->slots[s].pos;
    hnode x = e->heap[i];
    uint64_t prio_bits = x.ord & ~(SEQ_LIMIT - 1);
    x.t = t;
    x.ord = prio_bits | e->seq++;
    /* The new key may be smaller or larger: try up, else down. */
    if (i > 0 && node_less(&x, &e->heap[(i - 1) >> e->k]))
        sift_up(e, i, x);
    else
        sift_down(e, i, x);
    return SIM_OK;
}

int sim_is_pending(const sim_engine *e, sim_handle h, sim_time *t)
{
    uint32_t s = handle_slot(e, h);
    if (s == SLOT_FREE_END)
        return 0;
    if (t != NULL)
        *t = e->heap[e->slots[s].pos].t;
    return 1;
}

/* Pops the minimum and calls its handler.  The slot is freed before the
 * call, so the handler sees its own handle as stale and may reuse it. */
static inline void fire_top(sim_engine *e)
{
    hnode top = e->heap[0];
    slot *sl = &e->slots[top.slot];
    sim_event_fn fn = sl->fn;
    void *ctx = sl->ctx;
    uint64_t arg = sl->arg;
    slot_release(e, top.slot);
    uint32_t last = --e->n;
    if (last > 0)
        sift_down(e, 0, e->heap[last]);
    e->now = top.t;
    e->fired++;
    fn(e, ctx, arg);
}

int sim_run(sim_engine *e, sim_time horizon)
{
    e->stop = 0;
    e->abort_code = 0;
    while (e->n > 0) {
        if (e->heap[0].t > horizon) {
            if (horizon > e->now)
                e->now = horizon;
            return SIM_RUN_HORIZON;
        }
        fire_top(e);
        if (e->stop)
            return e->abort_code != 0 ? e->abort_code : SIM_RUN_STOPPED;
    }
    return SIM_RUN_EMPTY;
}

int sim_step(sim_engine *e)
{
    if (e->n == 0)
        return 0;
    e->stop = 0;
    e->abort_code = 0;
    fire_top(e);
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
    for (uint32_t i = 0; i < e->n; i++) {
        const hnode *x = &e->heap[i];
        if (x->slot >= e->cap)
            return sim_error_set(err, SIM_EINTERNAL, "queue: node %u names slot %u", i,
                                 x->slot);
        const slot *sl = &e->slots[x->slot];
        if (sl->fn == NULL || sl->pos != i)
            return sim_error_set(err, SIM_EINTERNAL,
                                 "queue: slot %u does not point back to node %u", x->slot, i);
        if (x->t < e->now)
            return sim_error_set(err, SIM_EINTERNAL, "queue: node %u lies in the past", i);
        if ((x->ord & (SEQ_LIMIT - 1)) >= e->seq)
            return sim_error_set(err, SIM_EINTERNAL, "queue: node %u has a future sequence", i);
        if (i > 0 && node_less(x, &e->heap[(i - 1) >> e->k]))
            return sim_error_set(err, SIM_EINTERNAL, "queue: node %u precedes its parent", i);
    }
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
