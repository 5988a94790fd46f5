/* parts.h - the model's parts in the process (parts.c): their state and
 * phases, their identity (definition and ledger owners) that outlives the
 * process, what a phase costs and where costs come from (costs.c), and the
 * executions of a generating part (genrun.c).  Internal to models/.
 *
 * Who may change what:
 *   parts.c      proc.parts' states, phases and memory arrays, proc.switching,
 *                part.on_delegate (and the device's refusals of a delegate_prepare)
 *   requests.c   the parts' busy and idle-session counts and wait lists
 *   genrun.c     a generation part's context (ctx_open, ctx_kv) and its KV regions
 *   emit.c       the session slots the timeline numbers executions by (part.slots)
 *   inforce.c    each part's identity in force (w_part_id: def, gen, file_hot,
 *                hot_bytes), between lives only */
#ifndef OOMSIM_MODELS_PARTS_H
#define OOMSIM_MODELS_PARTS_H

#include <stdint.h>

#include "models.h"
#include "world_fwd.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A part's state in the process. */
enum {
    P_UNLOADED = 0, /* holds nothing */
    P_LOADING,      /* a phase runs (or, release_first, waits for room: deferred) */
    P_READY,        /* loaded and prepared: executions may run on it */
    P_FAILED        /* its delegate failed with no fallback, or its cache was outdated:
                       unusable in this process */
};
/* The phase a loading part is in. */
enum {
    PH_LOAD = 0,    /* reading the file (mmap, copy or decompress) */
    PH_PREPARE,     /* runtime_prepare (and the cache rebuild on a miss) */
    PH_DELEGATE,    /* delegate_prepare */
    PH_FALLBACK     /* the fallback's prepare after a failed delegate */
};

typedef struct part_rt {
    uint8_t state, phase;             /* P_*, PH_* */
    uint8_t release_pending;          /* evicted while executing: goes when idle */
    uint8_t cache_done;               /* its cache was rebuilt in this process */
    uint8_t on_demand;                /* this load is a switch (counted in switching) */
    uint8_t on_delegate;              /* ready on the delegate (not the fallback) */
    uint8_t hot;                      /* its file counts in proc.hot */
    uint8_t deferred;                 /* release_first: waits for room (1 start-up, 2 on demand) */
    uint8_t unwanted;                 /* owners: its last owner closed while it loaded */
    uint32_t serial;                  /* bumped at every phase start (ANR timers) */
    int64_t transient[MDL_CAT_COUNT]; /* held by the running phase */
    int64_t cache_tr[MDL_CAT_COUNT];  /* cache-miss transient (cache owner) */
    int64_t failed_tr[MDL_CAT_COUNT]; /* failed delegate's transient, kept with overlap */
    int64_t delegate_res[MDL_CAT_COUNT]; /* delegate_prepare's resident, within resident */
    int64_t resident[MDL_CAT_COUNT];  /* all resident bytes, delegate_res included */
    int64_t prepare_res[MDL_CAT_COUNT]; /* what copy_runtime copies into each session */
    mdl_stage phase_stage;
    uint32_t busy;                    /* executions running on it */
    uint32_t sess_idle;               /* session states open and unused */
    uint64_t last_use;                /* LRU clock at its last use */
    uint32_t wait_head, wait_tail;    /* attempts waiting for READY, linked by req.next */
    uint64_t slots[MDL_SESSIONS_MAX / 64]; /* session slots executing (the timeline's ids) */
    /* generation: the context (compute, a reserved KV) is made (its KV
     * regions are in world.gslots), unload_after's timer */
    uint8_t ctx_open;
    uint8_t unload_armed;             /* unload_after's timer is pending */
    int64_t ctx_kv;                   /* the reserved KV charged at the context's creation */
    sim_time idle_since;              /* unload_after: idle from then */
} part_rt;


/* Each part's identity: its definition and its ledger owners, made at
 * setup, outliving every process. */
typedef struct w_part_id {
    const mdl_part *def;
    mdl_owner owner, sess_owner, leak_owner;
    /* in force (configure_candidate): the policy's generation axes applied
     * (gen: in world.gen_in_force, NULL for a part that does not generate) */
    int file_hot;
    int64_t hot_bytes;
    mdl_generation *gen;
} w_part_id;


/* What one phase of a part costs: its time and amounts. */
typedef struct w_stage_cost {
    sim_time time;
    int64_t resident[MDL_CAT_COUNT], transient[MDL_CAT_COUNT];
    int cache_miss;                    /* a runtime_prepare that rebuilds the cache */
    int64_t miss[MDL_CAT_COUNT];       /* its transient (stage cache) */
} w_stage_cost;

/* Where stage costs come from (costs.c): drawn from the candidate's
 * distributions, or taken from a recording (a trace-driven run), chosen
 * once at setup. */
typedef struct w_costs {
    void (*stage)(world *w, unsigned part, int phase, w_stage_cost *out);
    int (*outcome)(world *w, unsigned part); /* MDL_OUTCOME_* of a delegate_prepare */
    void (*session)(world *w, unsigned part, int64_t out[MDL_CAT_COUNT]);
    sim_time (*relaunch)(world *w);          /* the user's delay before reopening */
    sim_time (*restart)(world *w);           /* the service's restart delay (`restart`) */
} w_costs;
extern const w_costs w__costs_drawn, w__costs_recorded;


/* parts.c */
void w__release_part(world *w, part_rt *p);
/* The first attempt on p's wait list, taken off it. */
uint32_t w__pop_waiter(world *w, part_rt *p);
/* Frees p's session states (and a generation part's context). */
void w__drop_sessions(world *w, part_rt *p);


/* genrun.c: an LLM part's requests */
void w__gen_execute(world *w, uint32_t i, part_rt *p, sim_time refault);
/* The execution of attempt i on generation part p stops (its end, or a
 * cancellation): the KV written so far stays. */
void w__gen_stop(world *w, uint32_t i, part_rt *p);
/* At the end of attempt i's execution on p: its last KV written, charged
 * and checked (the process may die of it). */
W_MAY_KILL w_fate w__gen_settle(world *w, uint32_t i, part_rt *p);
/* A generation part is loaded: its weights by kind, for the timeline. */
void w__gen_loaded(world *w, part_rt *p);
/* Serves p's waiters while it has a free slot. */
void w__gen_wake(world *w, part_rt *p);
/* The KV written up to now, charged (before a kill check reads memory). */
void w__gen_sync(world *w);
/* After a check the app lived: the next KV lines, computed again. */
void w__gen_replan(world *w);
/* The context's memory is gone (sessions dropped, part released). */
void w__gen_close(world *w, part_rt *p);
/* Before a death's exit event: the KV held then, as a `kv` note (traced
 * runs only; it changes nothing). */
void w__gen_at_death(world *w);

#ifdef __cplusplus
}
#endif

#endif /* OOMSIM_MODELS_PARTS_H */
