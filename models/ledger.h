/* ledger.h - the memory ledger of one app process (models/ledger.c), a
 * part of models.h's interface kept in its own header.  Included by
 * models.h after the types it uses; include models.h, not this. */
#ifndef OOMSIM_MODELS_LEDGER_H
#define OOMSIM_MODELS_LEDGER_H

/* ------------------------------------------------------------------ ledger */

/* The memory ledger of one app process: every allocation and release by
 * owner and category.  It keeps the per-category totals, the counted
 * total (the sum of the device's `counts` categories), its peak, the time
 * and stage of the allocation that reached the peak, and the highest
 * counted total reached by an allocation of each stage.
 *
 * Owners are small integers handed out by mdl_ledger_owner(); an owner
 * that is retired (mdl_ledger_retire) must have released everything.
 * Every operation is O(1) and allocation-free except mdl_ledger_owner(),
 * which may grow the owner table.  One ledger belongs to one thread. */
typedef struct mdl_ledger mdl_ledger;

typedef uint32_t mdl_owner;

#define MDL_LEDGER_MAX_OWNERS (UINT32_C(1) << 24)

/* Creates an empty ledger counting the categories in counts_mask
 * (MDL_CAT_BIT values).  alloc NULL: sim_alloc_default().  Returns NULL
 * with err set on failure. */
mdl_ledger *mdl_ledger_create(const sim_alloc *alloc, unsigned counts_mask, sim_error *err);
/* NULL is allowed. */
void mdl_ledger_destroy(mdl_ledger *l);

/* Registers an owner (kind, id: e.g. part index, session number) and
 * stores its handle in *out.  Retired owner slots are reused.
 * Returns SIM_OK, SIM_ENOMEM or SIM_ELIMIT (MDL_LEDGER_MAX_OWNERS live
 * owners); on failure nothing changed. */
int mdl_ledger_owner(mdl_ledger *l, mdl_owner_kind kind, uint32_t id, mdl_owner *out);
/* Retires an owner that holds nothing.  Returns SIM_OK, or SIM_ESTATE
 * (err names the owner and what it still holds) and nothing changed. */
int mdl_ledger_retire(mdl_ledger *l, mdl_owner o, sim_error *err);

/* Allocates bytes >= 0 of category c to owner o, by an allocation of
 * stage s at time t.  Returns SIM_OK, SIM_EINVAL (unknown owner, bad
 * category or stage, negative size) or SIM_ERANGE (a total would pass
 * INT64_MAX); on failure nothing changed. */
int mdl_ledger_alloc(mdl_ledger *l, mdl_owner o, mdl_category c, int64_t bytes, mdl_stage s,
                     sim_time t, sim_error *err);
/* Releases bytes of category c from owner o.  Returns SIM_OK, SIM_EINVAL,
 * or SIM_ESTATE when the owner holds fewer bytes of c (a release without
 * its allocation: err names owner, category, held and asked); on failure
 * nothing changed. */
int mdl_ledger_free(mdl_ledger *l, mdl_owner o, mdl_category c, int64_t bytes, sim_error *err);
/* Releases everything owner o holds (a part released, a request done).
 * Stores the bytes freed in *freed when not NULL.  Returns SIM_OK or
 * SIM_EINVAL. */
int mdl_ledger_free_owner(mdl_ledger *l, mdl_owner o, int64_t *freed);
/* The process died: every owner's memory is gone at once (not a leak).
 * Owners stay registered with zero balances; peaks are kept. */
void mdl_ledger_clear(mdl_ledger *l);

/* Bytes owner o holds of category c (0 for an unknown owner). */
int64_t mdl_ledger_held(const mdl_ledger *l, mdl_owner o, mdl_category c);

typedef struct mdl_ledger_stats {
    int64_t total[MDL_CAT_COUNT];  /* bytes held now, per category */
    int64_t counted;               /* sum of the counted categories now */
    int64_t peak;                  /* highest counted total so far */
    sim_time peak_time;            /* time of the allocation that reached it */
    mdl_stage peak_stage;          /* its stage; MDL_STAGE_NONE before any */
    int64_t stage_peak[MDL_STAGE_COUNT]; /* highest counted total just after an
                                            allocation of each stage (counted or
                                            not); -1: none */
    int64_t category_peak[MDL_CAT_COUNT]; /* highest total of each category */
    uint64_t allocs, frees;        /* operations so far */
    uint32_t owners;               /* live (registered, not retired) owners */
    unsigned counts_mask;
} mdl_ledger_stats;

/* Copies the current figures into *st. */
void mdl_ledger_stats_get(const mdl_ledger *l, mdl_ledger_stats *st);
/* The counted total now (the kill rules read this on every allocation). */
int64_t mdl_ledger_counted(const mdl_ledger *l);
/* Bytes held now of category c. */
int64_t mdl_ledger_total(const mdl_ledger *l, mdl_category c);

/* Calls fn for every live owner still holding memory, in owner order:
 * at the end of a replication these are the leaks.  Returns how many. */
typedef void (*mdl_leak_fn)(void *ctx, mdl_owner_kind kind, uint32_t id,
                            const int64_t held[MDL_CAT_COUNT]);
uint32_t mdl_ledger_leaks(const mdl_ledger *l, mdl_leak_fn fn, void *ctx);

/* Checks the invariants: no balance negative, every category total equal
 * to the sum over owners, the counted total equal to the sum of the
 * counted categories, peak >= counted, retired owners empty.  O(owners).
 * Returns SIM_OK or SIM_EINTERNAL with the first broken rule in err. */
int mdl_ledger_validate(const mdl_ledger *l, sim_error *err);

#endif /* OOMSIM_MODELS_LEDGER_H */
