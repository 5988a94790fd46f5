/* pending_radix.c - the default pending set: a monotone radix heap with
 * byte digits.  Times never go below `base`, the time of the last event
 * taken, so a slot sits in the bucket named by the highest byte L in which
 * its time differs from base and by its time's value d in that byte
 * (bucket 0: equal to base).  Buckets other than 0 are intrusive
 * doubly-linked lists through the slots (O(1) insert and cancel, no
 * allocation), found through per-level bitmasks; bucket 0 is a binary heap
 * on `ord`.  When bucket 0 is empty, taking an event scans the lowest
 * non-empty bucket for its minimum, makes that the new base and
 * redistributes the bucket into lower levels, so an event moves at most 8
 * times over its life (3 for times within 2^24 us).  Included by engine.c
 * with PEND defined (engine_int.h lists the functions); not compiled alone. */

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

static inline void bucket_insert(sim_engine *e, uint32_t s)
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

static void bucket_remove(sim_engine *e, uint32_t s)
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
static int prepare_bucket0(sim_engine *e, sim_time horizon)
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
        bucket_insert(e, s); /* lands in a bucket below b */
        s = next;
    }
    return 1;
}

static void PEND(init)(sim_engine *e)
{
    for (int b = 0; b < NBUCKETS; b++)
        e->head[b] = SLOT_FREE_END;
}

static inline void PEND(insert)(sim_engine *e, uint32_t s)
{
    e->n++;
    bucket_insert(e, s);
}

static inline void PEND(remove)(sim_engine *e, uint32_t s)
{
    e->n--;
    bucket_remove(e, s);
}

static inline uint32_t PEND(take)(sim_engine *e, sim_time horizon)
{
    if (!prepare_bucket0(e, horizon))
        return SLOT_FREE_END;
    uint32_t s = e->h0[0];
    uint32_t last = --e->h0n;
    if (last > 0)
        h0_down(e, 0, e->h0[last]);
    e->n--;
    return s;
}

static int PEND(grow)(sim_engine *e, uint32_t ncap)
{
    uint32_t *nh = sim_realloc(e->alloc, e->h0, sizeof(uint32_t) * e->heap_cap,
                               sizeof(uint32_t) * ncap);
    if (nh == NULL)
        return SIM_ENOMEM;
    e->h0 = nh;
    return SIM_OK;
}

static void PEND(release)(sim_engine *e)
{
    sim_free(e->alloc, e->h0, sizeof(uint32_t) * e->heap_cap);
}

static int PEND(validate)(const sim_engine *e, sim_error *err)
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
