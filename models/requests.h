/* requests.h - the user's requests and their attempts (requests.c, pool.c):
 * what a request draws, its attempts queued, waiting or executing, the
 * execution slots, timeouts and retries.  Internal to models/.
 *
 * Who may change what:
 *   requests.c   the attempts and requests in the pools, proc's queue and
 *                running count, proc.dispatching (and iOS's background GPU
 *                denial of executions)
 *   pool.c       store's pools (growing them) and proc.users_free
 *   path.c       a new request's record in store.users (its draws, its owner)
 *   emit.c       req.slot, the timeline's session slot of an execution */
#ifndef OOMSIM_MODELS_REQUESTS_H
#define OOMSIM_MODELS_REQUESTS_H

#include <stdint.h>

#include "models.h"
#include "world_fwd.h"
#include "parts.h"

#ifdef __cplusplus
extern "C" {
#endif

/* An attempt's state. */
enum {
    R_QUEUED = 0,   /* in the FIFO, no execution slot */
    R_WAITING,      /* holds a slot, waits on a part's wait list */
    R_RUNNING       /* holds a slot, executing (or between two parts) */
};


/* What a request draws at arrival, alive or not, so every policy sees the
 * same request k.  Its retries reuse the draws (a new attempt of the same
 * request), each with a payload of its own. */
typedef struct req_draw {
    int64_t payload[MDL_CAT_COUNT];
    int64_t time[MDL_PARTS_MAX];
    int64_t ws[MDL_PARTS_MAX][MDL_CAT_COUNT]; /* working set + output */
    /* generation parts: prompt and output tokens, prefill and decode us
     * per token (at speed 1) */
    uint32_t gen[MDL_PARTS_MAX][4];
} req_draw;

/* A request of the user: its draws, and its attempts (the first
 * submission and the retries after timeouts). */
typedef struct user {
    req_draw d;
    sim_time first;       /* the first submission (latency counts from here) */
    uint32_t live;        /* attempts in the system */
    uint32_t retries;     /* retries made */
    uint32_t next;        /* free list / parked list */
    uint64_t id;          /* the timeline's request id */
    uint8_t needs[MDL_PARTS_MAX]; /* part indices, in order */
    uint8_t in_use, nneeds;
    uint8_t waiting;      /* a retry is scheduled or parked */
    uint32_t holder;      /* its owner (workload.holders), MDL_NO_HOLDER: none */
} user;


/* One attempt: what is queued, waits for a part or executes. */
typedef struct req {
    sim_time arrival, start; /* start: the first execution (the end of the wait), -1 before */
    mdl_owner owner;      /* holds its payload and its working set while executing */
    uint32_t next;        /* waiter list / free list */
    uint32_t user;
    sim_handle timer, exec;
    uint8_t in_use, state; /* state: R_* */
    uint8_t idx;          /* the need it is at */
    uint8_t nneeds;
    uint8_t orphan;       /* timed out: the client no longer waits for it */
    uint32_t hsess;       /* the owner's session it executes on (owners.c), NIL: none */
    uint8_t has_timer, has_exec;
    uint16_t slot;        /* its session slot while executing (timeline only) */
    uint8_t gslot;        /* generation: its KV region while executing */
    uint8_t needs[MDL_PARTS_MAX];
} req;


/* requests.c: starts what the free slots and parts allow */
void w__dispatch(world *w);
void w__exec_end(sim_engine *e, void *ctx, uint64_t arg);
/* The phone's heat to now (thermal.h), an execution running from now on or
 * not; at each execution's start and end (a death counts it in process.c). */
void w__heat(world *w, int busy);
/* requests.c: unload_after's timer on an idle part */
void w__unload_later(world *w, part_rt *p);
W_MAY_KILL w_fate w__begin_load(world *w, part_rt *p, int on_demand);

/* requests.c */
void w__advance(world *w, uint32_t i);
void w__submit(world *w, uint32_t u);
void w__new_condition(world *w);
void w__on_warning(sim_engine *e, void *ctx, uint64_t arg);
void w__queue_area(world *w);
/* pool.c: a free attempt record, the pool grown when none is free (NIL when
 * it is at its bound, or out of memory: w->rc says which) */
uint32_t w__attempt_take(world *w);
/* a free user request record, the same way */
uint32_t w__user_get(world *w);
/* frees user request u once no attempt of it is left and none will come */
void w__user_maybe_free(world *w, uint32_t u);
/* user request `id` is over for the user (answered, failed, given up, lost):
 * under `after_answer`, the awaited one tells the path (path.c's `answered`) */
void w__answer_ended(world *w, uint64_t id);
void w__finish(world *w, uint32_t i, int had_slot);
void w__deny_background_delegate(world *w);

#ifdef __cplusplus
}
#endif

#endif /* OOMSIM_MODELS_REQUESTS_H */
