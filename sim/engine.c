/* engine.c - virtual clock, pending-event sets and run loop.
 *
 * Every event lives in a slot (handler, context, argument, time, order)
 * indexed by its handle.  Two pending sets order the slots:
 *
 * - the radix heap (default), with byte digits.  Times never go below
 *   `base`, the time of the last event taken, so a slot sits in the bucket
 *   named by the highest byte L in which its time differs from base and
 *   by its time's value d in that byte (bucket 0: equal to base).  Buckets
 *   other than 0 are intrusive doubly-linked lists through the slots (O(1)
 *   insert and cancel, no allocation), found through per-level bitmasks;
 *   bucket 0 is a binary heap on `ord`.  When bucket 0 is empty, taking an
 *   event scans the lowest non-empty bucket for its minimum, makes that the
 *   new base and redistributes the bucket into lower levels, so an event
 *   moves at most 8 times over its life (3 for times within 2^24 us).
 * - an implicit 2^k-ary heap of nodes {time, ord, slot}, kept for
 *   comparison.
 *
 * docs/design/engine.md gives the measurements behind the default.
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
    sim_time t;
    uint64_t ord;
    uint32_t pos;    /* heap position, or next free slot when free */
    uint32_t gen;    /* bumped each time the slot is freed */
    uint32_t next, prev; /* radix bucket list links */
    uint32_t bucket;     /* radix bucket */
} slot;

/* Radix buckets: bucket 0 holds times equal to base; bucket 1 + 256 L + d
 * holds times whose highest byte differing from base is byte L, with
 * value d there. */
#define LEVELS 8
#define DIGITS 256
#define NBUCKETS (1 + LEVELS * DIGITS)

struct sim_engine {
    hnode *heap;
    slot *slots;
    uint32_t n;         /* pending events */
    uint32_t cap;       /* slots; the heap holds at most cap nodes */
    uint32_t heap_cap;  /* allocated heap nodes (>= cap) */
    uint32_t free_head; /* first free slot or SLOT_FREE_END */
    uint32_t max_pending;
    unsigned k;         /* log2 of the heap arity */
    int radix;          /* 1: radix heap, 0: d-ary heap */
    sim_time base;      /* radix: every pending time is >= base */
    unsigned lmask;     /* radix: bit L set when level L has a non-empty bucket */
    uint64_t dmask[LEVELS][DIGITS / 64]; /* radix: non-empty buckets per level */
    uint32_t head[NBUCKETS]; /* radix: list heads; head[0] unused (bucket 0 is h0) */
    uint32_t *h0;       /* radix: bucket 0, a binary heap of slots by ord */
    uint32_t h0n;
    int stop;
    int abort_code;
    sim_time now;
    uint64_t seq;
    uint64_t fired;
    const sim_alloc *alloc;
    int (*after_event)(void *ctx);
    void *after_ctx;
};

/* Non-short-circuit operators: the comparison compiles without branches,
 * which matters because heap comparisons on random keys mispredict. */
static inline int node_less(const hnode *a, const hnode *b)
{
    return (a->t < b->t) | ((a->t == b->t) & (a->ord < b->ord));
}

/* Index of the smallest of the children first..last-1 (first < last).
 * A full group of 4 is reduced pairwise, so the comparisons of one level
 * form a chain of depth 2 instead of 3. */
static inline uint32_t min_child(const hnode *h, uint32_t first, uint32_t last)
{
    if (last - first == 4) {
        uint32_t a = node_less(&h[first + 1], &h[first]) ? first + 1 : first;
        uint32_t b = node_less(&h[first + 3], &h[first + 2]) ? first + 3 : first + 2;
        return node_less(&h[b], &h[a]) ? b : a;
    }
    uint32_t best = first;
    for (uint32_t c = first + 1; c < last; c++)
        best = node_less(&h[c], &h[best]) ? c : best;
    return best;
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

/* The smallest child of node i in a heap of n nodes, or SLOT_FREE_END
 * when i is a leaf. */
static inline uint32_t smallest_child(const sim_engine *e, uint32_t i, uint32_t n)
{
    uint64_t first = ((uint64_t)i << e->k) + 1;
    if (first >= n)
        return SLOT_FREE_END;
    uint64_t last = first + (UINT64_C(1) << e->k);
    return min_child(e->heap, (uint32_t)first, (uint32_t)(last > n ? n : last));
}

/* Moves the hole at i down until x fits, then stores x. */
static void sift_down(sim_engine *e, uint32_t i, hnode x)
{
    const uint32_t n = e->n;
    hnode *h = e->heap;
    for (;;) {
        uint32_t best = smallest_child(e, i, n);
        if (best == SLOT_FREE_END)
            break;
        if (!node_less(&h[best], &x))
            break;
        place(e, i, &h[best]);
        i = best;
    }
    place(e, i, &x);
}

/* Removes the root.  Floyd's bottom-up variant: the hole descends to a
 * leaf along the smaller children without comparing against the moved
 * last node (which nearly always belongs near the bottom), then that node
 * rises from there.  About half the comparisons of a plain sift-down. */
static void heap_pop_root(sim_engine *e)
{
    uint32_t n = --e->n;
    if (n == 0)
        return;
    hnode *h = e->heap;
    hnode x = h[n];
    uint32_t i = 0;
    for (;;) {
        uint32_t best = smallest_child(e, i, n);
        if (best == SLOT_FREE_END)
            break;
        place(e, i, &h[best]);
        i = best;
    }
    sift_up(e, i, x);
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

/* ------------------------------------------------------------ radix heap */

static inline uint32_t bucket_of(sim_time base, sim_time t)
{
    uint64_t x = (uint64_t)t ^ (uint64_t)base;
    if (x == 0)
        return 0;
    unsigned level = (unsigned)(63 - __builtin_clzll(x)) >> 3;
    unsigned digit = (unsigned)((uint64_t)t >> (8 * level)) & (DIGITS - 1);
    return 1 + level * DIGITS + digit;
}

static inline void mask_set(sim_engine *e, uint32_t b)
{
    unsigned level = (b - 1) / DIGITS, digit = (b - 1) % DIGITS;
    e->dmask[level][digit / 64] |= UINT64_C(1) << (digit % 64);
    e->lmask |= 1u << level;
}

static inline void mask_clear(sim_engine *e, uint32_t b)
{
    unsigned level = (b - 1) / DIGITS, digit = (b - 1) % DIGITS;
    uint64_t *w = e->dmask[level];
    w[digit / 64] &= ~(UINT64_C(1) << (digit % 64));
    if ((w[0] | w[1] | w[2] | w[3]) == 0)
        e->lmask &= ~(1u << level);
}

/* The lowest non-empty bucket (lmask != 0). */
static inline uint32_t lowest_bucket(const sim_engine *e)
{
    unsigned level = (unsigned)__builtin_ctz(e->lmask);
    const uint64_t *w = e->dmask[level];
    unsigned i = 0;
    while (w[i] == 0)
        i++;
    return 1 + level * DIGITS + i * 64 + (unsigned)__builtin_ctzll(w[i]);
}

static inline int ord_less(const sim_engine *e, uint32_t a, uint32_t b)
{
    return e->slots[a].ord < e->slots[b].ord;
}

static void h0_up(sim_engine *e, uint32_t i, uint32_t s)
{
    while (i > 0) {
        uint32_t parent = (i - 1) >> 1;
        uint32_t ps = e->h0[parent];
        if (!ord_less(e, s, ps))
            break;
        e->h0[i] = ps;
        e->slots[ps].pos = i;
        i = parent;
    }
    e->h0[i] = s;
    e->slots[s].pos = i;
}

static void h0_down(sim_engine *e, uint32_t i, uint32_t s)
{
    const uint32_t n = e->h0n;
    for (;;) {
        uint32_t c = 2 * i + 1;
        if (c >= n)
            break;
        if (c + 1 < n && ord_less(e, e->h0[c + 1], e->h0[c]))
            c++;
        if (!ord_less(e, e->h0[c], s))
            break;
        e->h0[i] = e->h0[c];
        e->slots[e->h0[i]].pos = i;
        i = c;
    }
    e->h0[i] = s;
    e->slots[s].pos = i;
}

static void h0_remove(sim_engine *e, uint32_t i)
{
    uint32_t last = --e->h0n;
    if (i == last)
        return;
    uint32_t s = e->h0[last];
    if (i > 0 && ord_less(e, s, e->h0[(i - 1) >> 1]))
        h0_up(e, i, s);
    else
        h0_down(e, i, s);
}

static inline void radix_insert(sim_engine *e, uint32_t s)
{
    slot *sl = &e->slots[s];
    uint32_t b = bucket_of(e->base, sl->t);
    sl->bucket = b;
    if (b == 0) {
        h0_up(e, e->h0n++, s);
        return;
    }
    uint32_t h = e->head[b];
    sl->next = h;
    sl->prev = SLOT_FREE_END;
    if (h != SLOT_FREE_END)
        e->slots[h].prev = s;
    else
        mask_set(e, b);
    e->head[b] = s;
}

static void radix_remove(sim_engine *e, uint32_t s)
{
    slot *sl = &e->slots[s];
    uint32_t b = sl->bucket;
    if (b == 0) {
        h0_remove(e, sl->pos);
        return;
    }
    if (sl->prev != SLOT_FREE_END)
        e->slots[sl->prev].next = sl->next;
    else
        e->head[b] = sl->next;
    if (sl->next != SLOT_FREE_END)
        e->slots[sl->next].prev = sl->prev;
    if (e->head[b] == SLOT_FREE_END)
        mask_clear(e, b);
}

/* Makes bucket 0 non-empty if the earliest pending time is <= horizon.
 * The minimum lies in the lowest non-empty bucket: a lower level shares
 * more high bytes with base, and within a level the digit decides. 
 * Returns 0 when nothing is pending or the earliest lies past horizon
 * (nothing is moved then, so base never passes the clock). */
static int radix_prepare(sim_engine *e, sim_time horizon)
{
    if (e->h0n > 0)
        return e->base <= horizon;
    if (e->lmask == 0)
        return 0;
    uint32_t b = lowest_bucket(e);
    sim_time m = SIM_TIME_MAX;
    for (uint32_t s = e->head[b]; s != SLOT_FREE_END; s = e->slots[s].next)
        m = e->slots[s].t < m ? e->slots[s].t : m;
    if (m > horizon)
        return 0;
    e->base = m;
    uint32_t s = e->head[b];
    e->head[b] = SLOT_FREE_END;
    mask_clear(e, b);
    while (s != SLOT_FREE_END) {
        uint32_t next = e->slots[s].next;
        radix_insert(e, s); /* lands in a bucket below b */
        s = next;
    }
    return 1;
}

/* -------------------------------------------------- both pending sets */

static int grow(sim_engine *e)
{
    if (e->cap >= e->max_pending)
        return SIM_ELIMIT;
    uint64_t ncap64 = e->cap == 0 ? 64 : (uint64_t)e->cap * 2;
    if (ncap64 > e->max_pending)
        ncap64 = e->max_pending;
    uint32_t ncap = (uint32_t)ncap64;
    if (e->heap_cap < ncap) {
        if (e->radix) {
            uint32_t *nh = sim_realloc(e->alloc, e->h0, sizeof(uint32_t) * e->heap_cap,
                                       sizeof(uint32_t) * ncap);
            if (nh == NULL)
                return SIM_ENOMEM;
            e->h0 = nh;
        } else {
            hnode *nh = sim_realloc(e->alloc, e->heap, sizeof(hnode) * e->heap_cap,
                                    sizeof(hnode) * ncap);
            if (nh == NULL)
                return SIM_ENOMEM;
            e->heap = nh;
        }
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
    for (int b = 0; b < NBUCKETS; b++)
        e->head[b] = SLOT_FREE_END;
    return e;
}

void sim_engine_destroy(sim_engine *e)
{
    if (e == NULL)
        return;
    const sim_alloc *a = e->alloc;
    sim_free(a, e->heap, sizeof(hnode) * e->heap_cap);
    sim_free(a, e->h0, sizeof(uint32_t) * e->heap_cap);
    sim_free(a, e->slots, sizeof(slot) * e->cap);
    sim_free(a, e, sizeof *e);
}

sim_time sim_now(const sim_engine *e) { return e->now; }
size_t sim_pending(const sim_engine *e) { return e->n; }
uint64_t sim_events_fired(const sim_engine *e) { return e->fired; }

/* Puts slot s (time and ord set) into the pending set. */
static inline void pending_insert(sim_engine *e, uint32_t s)
{
    e->n++;
    if (e->radix) {
        radix_insert(e, s);
    } else {
        hnode x = {e->slots[s].t, e->slots[s].ord, s};
        sift_up(e, e->n - 1, x);
    }
}

static inline void pending_remove(sim_engine *e, uint32_t s)
{
    if (e->radix) {
        e->n--;
        radix_remove(e, s);
    } else {
        heap_remove(e, e->slots[s].pos);
    }
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
    sl->t = t;
    sl->ord = ((uint64_t)(prio - SIM_PRIO_MIN) << SEQ_BITS) | e->seq++;
    pending_insert(e, s);
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
    pending_remove(e, s);
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
    pending_remove(e, s);
    slot *sl = &e->slots[s];
    sl->t = t;
    sl->ord = (sl->ord & ~(SEQ_LIMIT - 1)) | e->seq++;
    pending_insert(e, s);
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

/* Takes the next event if its time is <= horizon; returns its slot or
 * SLOT_FREE_END. */
static inline uint32_t take_next(sim_engine *e, sim_time horizon)
{
    if (e->radix) {
        if (!radix_prepare(e, horizon))
            return SLOT_FREE_END;
        uint32_t s = e->h0[0];
        uint32_t last = --e->h0n;
        if (last > 0)
            h0_down(e, 0, e->h0[last]);
        e->n--;
        return s;
    }
    if (e->n == 0 || e->heap[0].t > horizon)
        return SLOT_FREE_END;
    uint32_t s = e->heap[0].slot;
    heap_pop_root(e);
    return s;
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
        uint32_t s = take_next(e, horizon);
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
    uint32_t s = take_next(e, SIM_TIME_MAX);
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

static int check_slot(const sim_engine *e, uint32_t s, sim_error *err)
{
    if (s >= e->cap || e->slots[s].fn == NULL)
        return sim_error_set(err, SIM_EINTERNAL, "queue: pending slot %u is not live", s);
    const slot *sl = &e->slots[s];
    if (sl->t < e->now)
        return sim_error_set(err, SIM_EINTERNAL, "queue: slot %u lies in the past", s);
    if ((sl->ord & (SEQ_LIMIT - 1)) >= e->seq)
        return sim_error_set(err, SIM_EINTERNAL, "queue: slot %u has a future sequence", s);
    return SIM_OK;
}

static int validate_heap(const sim_engine *e, sim_error *err)
{
    for (uint32_t i = 0; i < e->n; i++) {
        const hnode *x = &e->heap[i];
        int rc = check_slot(e, x->slot, err);
        if (rc != SIM_OK)
            return rc;
        const slot *sl = &e->slots[x->slot];
        if (sl->pos != i || sl->t != x->t || sl->ord != x->ord)
            return sim_error_set(err, SIM_EINTERNAL,
                                 "queue: slot %u does not match heap node %u", x->slot, i);
        if (i > 0 && node_less(x, &e->heap[(i - 1) >> e->k]))
            return sim_error_set(err, SIM_EINTERNAL, "queue: node %u precedes its parent", i);
    }
    return SIM_OK;
}

static int validate_radix(const sim_engine *e, sim_error *err)
{
    uint64_t count = e->h0n;
    if (e->base > e->now)
        return sim_error_set(err, SIM_EINTERNAL, "queue: radix base passed the clock");
    for (uint32_t i = 0; i < e->h0n; i++) {
        uint32_t s = e->h0[i];
        int rc = check_slot(e, s, err);
        if (rc != SIM_OK)
            return rc;
        const slot *sl = &e->slots[s];
        if (sl->bucket != 0 || sl->pos != i || sl->t != e->base)
            return sim_error_set(err, SIM_EINTERNAL, "queue: bucket 0 entry %u is wrong", i);
        if (i > 0 && ord_less(e, s, e->h0[(i - 1) >> 1]))
            return sim_error_set(err, SIM_EINTERNAL, "queue: bucket 0 entry %u precedes its "
                                 "parent", i);
    }
    for (uint32_t b = 1; b < NBUCKETS; b++) {
        int nonempty = e->head[b] != SLOT_FREE_END;
        unsigned level = (b - 1) / DIGITS, digit = (b - 1) % DIGITS;
        int marked = (int)((e->dmask[level][digit / 64] >> (digit % 64)) & 1);
        if (nonempty != marked || (marked && !((e->lmask >> level) & 1)))
            return sim_error_set(err, SIM_EINTERNAL, "queue: mask disagrees on bucket %u", b);
        uint32_t prev = SLOT_FREE_END;
        for (uint32_t s = e->head[b]; s != SLOT_FREE_END; s = e->slots[s].next) {
            int rc = check_slot(e, s, err);
            if (rc != SIM_OK)
                return rc;
            const slot *sl = &e->slots[s];
            if (sl->bucket != b || sl->prev != prev || bucket_of(e->base, sl->t) != b ||
                ++count > e->n)
                return sim_error_set(err, SIM_EINTERNAL, "queue: bucket %u broken at slot %u",
                                     b, s);
            prev = s;
        }
    }
    if (count != e->n)
        return sim_error_set(err, SIM_EINTERNAL, "queue: buckets hold %llu of %u events",
                             (unsigned long long)count, e->n);
    return SIM_OK;
}

int sim_queue_validate(const sim_engine *e, sim_error *err)
{
    if (e->n > e->cap)
        return sim_error_set(err, SIM_EINTERNAL, "queue: %u pending exceed capacity %u",
                             e->n, e->cap);
    int rc = e->radix ? validate_radix(e, err) : validate_heap(e, err);
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
