/* engine_int.h - the engine's state, shared by engine.c and the two
 * pending-event sets it includes (pending_radix.c, pending_heap.c).
 *
 * Every event lives in a slot (handler, context, argument, time, order)
 * indexed by its handle; a pending set orders the slots.  Order: (time,
 * priority, sequence).  `ord` packs the biased priority in its top 16 bits
 * and a 48-bit insertion sequence below, so one unsigned comparison breaks
 * ties at equal times.
 *
 * A pending set is a file of static functions with the same names, each
 * written PEND(name) so that engine.c can include both (PEND prefixes them
 * radix_ or heap_), as Redis's ae.c includes its backend:
 *   PEND(init)(e)            the set's empty state
 *   PEND(insert)(e, s)       slot s (time and ord set) joins; e->n grows
 *   PEND(remove)(e, s)       pending slot s leaves; e->n shrinks
 *   PEND(take)(e, horizon)   the next slot if its time is <= horizon (out of
 *                            the set, e->n shrunk), else SLOT_FREE_END
 *   PEND(grow)(e, ncap)      room for ncap pending slots: SIM_OK or SIM_ENOMEM
 *   PEND(release)(e)         frees what the set allocated
 *   PEND(validate)(e, err)   the set's invariants (sim_queue_validate)
 * engine.c picks one set per engine at creation (e->radix) in one place,
 * the PENDING macro. */
#ifndef OOMSIM_ENGINE_INT_H
#define OOMSIM_ENGINE_INT_H

#include "sim.h"

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

/* Checks one pending slot against the clock and the sequence (both
 * validators). */
static inline int check_slot(const sim_engine *e, uint32_t s, sim_error *err)
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

#endif /* OOMSIM_ENGINE_INT_H */
