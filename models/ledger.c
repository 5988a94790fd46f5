/* ledger.c - the memory ledger: balances by owner and category, totals,
 * the counted total and its peaks.
 *
 * Every alloc and free touches one owner record and a handful of scalars;
 * nothing is allocated after the owner table has grown to the model's
 * size.  Owner handles index the table directly; retired records form a
 * free list and are reused. */
#include "models.h"

#include <string.h>

#define OWNER_FREE_END UINT32_MAX

typedef struct owner_rec {
    int64_t held[MDL_CAT_COUNT];
    uint32_t id;
    uint32_t next_free; /* free list link when retired */
    uint8_t kind;
    uint8_t live;
} owner_rec;

struct mdl_ledger {
    const sim_alloc *alloc;
    owner_rec *owners;
    uint32_t cap, used;    /* records allocated / ever handed out */
    uint32_t free_head;
    uint32_t live;
    unsigned mask;
    int64_t total[MDL_CAT_COUNT];
    int64_t counted;
    int64_t peak;
    sim_time peak_time;
    mdl_stage peak_stage;
    int64_t stage_peak[MDL_STAGE_COUNT];
    int64_t category_peak[MDL_CAT_COUNT];
    uint64_t allocs, frees;
};

mdl_ledger *mdl_ledger_create(const sim_alloc *alloc, unsigned counts_mask, sim_error *err)
{
    if (alloc == NULL)
        alloc = sim_alloc_default();
    if (counts_mask >= (1u << MDL_CAT_COUNT)) {
        sim_error_set(err, SIM_EINVAL, "ledger: counts mask 0x%x names unknown categories",
                      counts_mask);
        return NULL;
    }
    mdl_ledger *l = sim_malloc(alloc, sizeof *l);
    if (l == NULL) {
        sim_error_set(err, SIM_ENOMEM, "ledger: out of memory");
        return NULL;
    }
    memset(l, 0, sizeof *l);
    l->alloc = alloc;
    l->mask = counts_mask;
    l->free_head = OWNER_FREE_END;
    l->peak_stage = MDL_STAGE_NONE;
    for (int s = 0; s < MDL_STAGE_COUNT; s++)
        l->stage_peak[s] = -1;
    return l;
}

void mdl_ledger_destroy(mdl_ledger *l)
{
    if (l == NULL)
        return;
    sim_free(l->alloc, l->owners, sizeof(owner_rec) * l->cap);
    sim_free(l->alloc, l, sizeof *l);
}

int mdl_ledger_owner(mdl_ledger *l, mdl_owner_kind kind, uint32_t id, mdl_owner *out)
{
    if ((unsigned)kind >= MDL_OWNER_KIND_COUNT)
        return SIM_EINVAL;
    uint32_t o;
    if (l->free_head != OWNER_FREE_END) {
        o = l->free_head;
        l->free_head = l->owners[o].next_free;
    } else {
        if (l->used >= MDL_LEDGER_MAX_OWNERS)
            return SIM_ELIMIT;
        if (l->used == l->cap) {
            uint32_t ncap = l->cap == 0 ? 16 : l->cap * 2;
            owner_rec *n = sim_realloc(l->alloc, l->owners, sizeof(owner_rec) * l->cap,
                                       sizeof(owner_rec) * ncap);
            if (n == NULL)
                return SIM_ENOMEM;
            l->owners = n;
            l->cap = ncap;
        }
        o = l->used++;
    }
    owner_rec *r = &l->owners[o];
    memset(r, 0, sizeof *r);
    r->id = id;
    r->kind = (uint8_t)kind;
    r->live = 1;
    l->live++;
    *out = o;
    return SIM_OK;
}

static owner_rec *live_owner(const mdl_ledger *l, mdl_owner o)
{
    if (o >= l->used || !l->owners[o].live)
        return NULL;
    return &l->owners[o];
}

int mdl_ledger_retire(mdl_ledger *l, mdl_owner o, sim_error *err)
{
    owner_rec *r = live_owner(l, o);
    if (r == NULL)
        return sim_error_set(err, SIM_EINVAL, "ledger: owner %u is not registered", o);
    for (int c = 0; c < MDL_CAT_COUNT; c++)
        if (r->held[c] != 0)
            return sim_error_set(err, SIM_ESTATE,
                                 "ledger: %s %u retired while holding %lld bytes of %s",
                                 mdl_owner_kind_name((mdl_owner_kind)r->kind), r->id,
                                 (long long)r->held[c], mdl_category_name((mdl_category)c));
    r->live = 0;
    r->next_free = l->free_head;
    l->free_head = o;
    l->live--;
    return SIM_OK;
}

int mdl_ledger_alloc(mdl_ledger *l, mdl_owner o, mdl_category c, int64_t bytes, mdl_stage s,
                     sim_time t, sim_error *err)
{
    owner_rec *r = live_owner(l, o);
    if (r == NULL || (unsigned)c >= MDL_CAT_COUNT || (unsigned)s >= MDL_STAGE_COUNT ||
        bytes < 0)
        return sim_error_set(err, SIM_EINVAL, "ledger: invalid allocation (owner %u, "
                             "category %d, stage %d, %lld bytes)", o, (int)c, (int)s,
                             (long long)bytes);
    int counted = (l->mask >> c) & 1u;
    if (bytes > INT64_MAX - l->total[c] || (counted && bytes > INT64_MAX - l->counted))
        return sim_error_set(err, SIM_ERANGE, "ledger: %s total would pass %lld bytes",
                             mdl_category_name(c), (long long)INT64_MAX);
    r->held[c] += bytes;
    l->total[c] += bytes;
    if (l->total[c] > l->category_peak[c])
        l->category_peak[c] = l->total[c];
    l->allocs++;
    if (counted)
        l->counted += bytes;
    /* any allocation of a stage marks it, uncounted ones (mmapped files) too */
    if (l->counted > l->stage_peak[s])
        l->stage_peak[s] = l->counted;
    if (counted) {
        /* Strictly higher: the first allocation to reach a peak keeps it. */
        if (l->counted > l->peak || l->peak_stage == MDL_STAGE_NONE) {
            l->peak = l->counted;
            l->peak_time = t;
            l->peak_stage = s;
        }
    }
    return SIM_OK;
}

int mdl_ledger_free(mdl_ledger *l, mdl_owner o, mdl_category c, int64_t bytes, sim_error *err)
{
    owner_rec *r = live_owner(l, o);
    if (r == NULL || (unsigned)c >= MDL_CAT_COUNT || bytes < 0)
        return sim_error_set(err, SIM_EINVAL, "ledger: invalid release (owner %u, category "
                             "%d, %lld bytes)", o, (int)c, (long long)bytes);
    if (bytes > r->held[c])
        return sim_error_set(err, SIM_ESTATE,
                             "ledger: %s %u releases %lld bytes of %s but holds %lld",
                             mdl_owner_kind_name((mdl_owner_kind)r->kind), r->id,
                             (long long)bytes, mdl_category_name(c), (long long)r->held[c]);
    r->held[c] -= bytes;
    l->total[c] -= bytes;
    if ((l->mask >> c) & 1u)
        l->counted -= bytes;
    l->frees++;
    return SIM_OK;
}

int mdl_ledger_free_owner(mdl_ledger *l, mdl_owner o, int64_t *freed)
{
    owner_rec *r = live_owner(l, o);
    if (r == NULL)
        return SIM_EINVAL;
    int64_t sum = 0;
    for (int c = 0; c < MDL_CAT_COUNT; c++) {
        int64_t b = r->held[c];
        if (b == 0)
            continue;
        r->held[c] = 0;
        l->total[c] -= b;
        if ((l->mask >> c) & 1u)
            l->counted -= b;
        l->frees++;
        sum += b;
    }
    if (freed != NULL)
        *freed = sum;
    return SIM_OK;
}

void mdl_ledger_clear(mdl_ledger *l)
{
    for (uint32_t o = 0; o < l->used; o++)
        memset(l->owners[o].held, 0, sizeof l->owners[o].held);
    memset(l->total, 0, sizeof l->total);
    l->counted = 0;
}

int64_t mdl_ledger_held(const mdl_ledger *l, mdl_owner o, mdl_category c)
{
    const owner_rec *r = live_owner(l, o);
    return r != NULL && (unsigned)c < MDL_CAT_COUNT ? r->held[c] : 0;
}

int64_t mdl_ledger_counted(const mdl_ledger *l) { return l->counted; }

int64_t mdl_ledger_total(const mdl_ledger *l, mdl_category c)
{
    return (unsigned)c < MDL_CAT_COUNT ? l->total[c] : 0;
}

void mdl_ledger_stats_get(const mdl_ledger *l, mdl_ledger_stats *st)
{
    memcpy(st->total, l->total, sizeof st->total);
    st->counted = l->counted;
    st->peak = l->peak;
    st->peak_time = l->peak_time;
    st->peak_stage = l->peak_stage;
    memcpy(st->stage_peak, l->stage_peak, sizeof st->stage_peak);
    memcpy(st->category_peak, l->category_peak, sizeof st->category_peak);
    st->allocs = l->allocs;
    st->frees = l->frees;
    st->owners = l->live;
    st->counts_mask = l->mask;
}

uint32_t mdl_ledger_leaks(const mdl_ledger *l, mdl_leak_fn fn, void *ctx)
{
    uint32_t n = 0;
    for (uint32_t o = 0; o < l->used; o++) {
        const owner_rec *r = &l->owners[o];
        if (!r->live)
            continue;
        int64_t any = 0;
        for (int c = 0; c < MDL_CAT_COUNT; c++)
            any |= r->held[c];
        if (any == 0)
            continue;
        n++;
        if (fn != NULL)
            fn(ctx, (mdl_owner_kind)r->kind, r->id, r->held);
    }
    return n;
}

int mdl_ledger_validate(const mdl_ledger *l, sim_error *err)
{
    int64_t sum[MDL_CAT_COUNT] = {0, 0, 0, 0};
    uint32_t live = 0;
    for (uint32_t o = 0; o < l->used; o++) {
        const owner_rec *r = &l->owners[o];
        live += r->live;
        for (int c = 0; c < MDL_CAT_COUNT; c++) {
            if (r->held[c] < 0)
                return sim_error_set(err, SIM_EINTERNAL, "ledger: owner %u holds %lld bytes "
                                     "of %s", o, (long long)r->held[c],
                                     mdl_category_name((mdl_category)c));
            if (!r->live && r->held[c] != 0)
                return sim_error_set(err, SIM_EINTERNAL, "ledger: retired owner %u holds "
                                     "memory", o);
            sum[c] += r->held[c];
        }
    }
    int64_t counted = 0;
    for (int c = 0; c < MDL_CAT_COUNT; c++) {
        if (sum[c] != l->total[c])
            return sim_error_set(err, SIM_EINTERNAL, "ledger: %s total %lld != %lld held by "
                                 "owners", mdl_category_name((mdl_category)c),
                                 (long long)l->total[c], (long long)sum[c]);
        if (l->total[c] > l->category_peak[c])
            return sim_error_set(err, SIM_EINTERNAL, "ledger: %s above its peak",
                                 mdl_category_name((mdl_category)c));
        if ((l->mask >> c) & 1u)
            counted += sum[c];
    }
    if (counted != l->counted)
        return sim_error_set(err, SIM_EINTERNAL, "ledger: counted %lld != %lld",
                             (long long)l->counted, (long long)counted);
    if (l->counted > l->peak)
        return sim_error_set(err, SIM_EINTERNAL, "ledger: counted above the peak");
    if (live != l->live)
        return sim_error_set(err, SIM_EINTERNAL, "ledger: %u live owners, %u recorded", live,
                             l->live);
    return SIM_OK;
}
