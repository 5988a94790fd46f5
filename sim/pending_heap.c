/* pending_heap.c - the implicit 2^k-ary heap of nodes {time, ord, slot},
 * kept to compare against the radix heap (docs/design/engine.md); the
 * world's engine uses it for its few pending events.  Included by engine.c
 * with PEND defined (engine_int.h lists the functions); not compiled alone. */

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
static void pop_root(sim_engine *e)
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
static void node_remove(sim_engine *e, uint32_t i)
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

static void PEND(init)(sim_engine *e) { (void)e; }

static inline void PEND(insert)(sim_engine *e, uint32_t s)
{
    hnode x = {e->slots[s].t, e->slots[s].ord, s};
    uint32_t i = e->n++;
    sift_up(e, i, x);
}

static inline void PEND(remove)(sim_engine *e, uint32_t s) { node_remove(e, e->slots[s].pos); }

static inline uint32_t PEND(take)(sim_engine *e, sim_time horizon)
{
    if (e->n == 0 || e->heap[0].t > horizon)
        return SLOT_FREE_END;
    uint32_t s = e->heap[0].slot;
    pop_root(e);
    return s;
}

static int PEND(grow)(sim_engine *e, uint32_t ncap)
{
    hnode *nh = sim_realloc(e->alloc, e->heap, sizeof(hnode) * e->heap_cap, sizeof(hnode) * ncap);
    if (nh == NULL)
        return SIM_ENOMEM;
    e->heap = nh;
    return SIM_OK;
}

static void PEND(release)(sim_engine *e)
{
    sim_free(e->alloc, e->heap, sizeof(hnode) * e->heap_cap);
}

static int PEND(validate)(const sim_engine *e, sim_error *err)
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
