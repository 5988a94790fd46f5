/* engine.h - the engine: virtual time, the pending-event set, the run loop, and the M/M/1 self-check.
 * Part of sim/sim.h, which includes every header of sim/. */
#ifndef OOMSIM_SIM_ENGINE_H
#define OOMSIM_SIM_ENGINE_H

#include <stddef.h>
#include <stdint.h>

#include "alloc.h"
#include "error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Virtual time: microseconds since the start of the run. */
typedef int64_t sim_time;

#define SIM_TIME_MAX INT64_MAX
#define SIM_US_PER_MS INT64_C(1000)
#define SIM_US_PER_S INT64_C(1000000)

typedef struct sim_engine sim_engine;

/* Names a scheduled event.  0 is never a valid handle.  A handle goes
 * stale when its event fires or is cancelled; stale handles are detected
 * (generation count), never confused with a later event. */
typedef uint64_t sim_handle;

/* Event handler.  ctx and arg are what was given to sim_schedule(). */
typedef void (*sim_event_fn)(sim_engine *e, void *ctx, uint64_t arg);

/* Priorities break ties at equal times: lower values fire first.
 * Events with equal time and priority fire in insertion order (FIFO). */
#define SIM_PRIO_MIN (-32768)
#define SIM_PRIO_MAX 32767

/* The pending-event set.  Both give the same order; they differ in speed
 * (docs/design/engine.md has the measurements behind the default). */
typedef enum sim_pending_kind {
    SIM_PENDING_DEFAULT = 0, /* the radix heap */
    SIM_PENDING_RADIX = 1,   /* monotone radix heap: 65 buckets by the highest
                                bit in which a time differs from now */
    SIM_PENDING_HEAP = 2     /* implicit 2^k-ary heap */
} sim_pending_kind;

typedef struct sim_engine_config {
    const sim_alloc *alloc;    /* NULL: sim_alloc_default() */
    sim_pending_kind pending;  /* SIM_PENDING_DEFAULT: the radix heap */
    unsigned heap_arity_log2;  /* SIM_PENDING_HEAP only: arity 2^k; 0: 4-ary */
    uint32_t max_pending;      /* 0: default SIM_MAX_PENDING_DEFAULT */
    /* Optional (NULL: none): called after every event that fired, unless
     * the handler stopped the run; a code other than SIM_OK aborts the
     * run with it.  For checkers of the model's invariants in debug
     * builds (the world's, with OOMSIM_WORLD_CHECK). */
    int (*after_event)(void *ctx);
    void *after_ctx;
} sim_engine_config;

#define SIM_MAX_PENDING_DEFAULT (UINT32_C(1) << 26)

/* Creates an engine at time 0 with no pending events.  cfg may be NULL.
 * Returns NULL on allocation failure or a bad config (err says which). */
sim_engine *sim_engine_create(const sim_engine_config *cfg, sim_error *err);
/* Frees the engine and every pending event (handlers are not called).
 * NULL is allowed. */
void sim_engine_destroy(sim_engine *e);

/* Current virtual time. */
sim_time sim_now(const sim_engine *e);
/* Number of pending events. */
size_t sim_pending(const sim_engine *e);

/* Schedules fn(e, ctx, arg) at absolute time t >= sim_now(e) with the
 * given priority.  Stores the handle in *h when h is not NULL.
 * Returns SIM_OK, SIM_EINVAL (t in the past, fn NULL, priority out of
 * range), SIM_ELIMIT (max_pending reached) or SIM_ENOMEM; on failure
 * nothing changed. */
int sim_schedule(sim_engine *e, sim_time t, int prio, sim_event_fn fn, void *ctx,
                 uint64_t arg, sim_handle *h);
/* Same with a delay relative to now (delay >= 0). */
int sim_schedule_in(sim_engine *e, sim_time delay, int prio, sim_event_fn fn,
                    void *ctx, uint64_t arg, sim_handle *h);
/* Cancels a pending event.  Returns SIM_OK, or SIM_ENOTFOUND when the
 * handle is stale (already fired or cancelled) or was never issued. */
int sim_cancel(sim_engine *e, sim_handle h);
/* Moves a pending event to time t >= now, keeping its priority, handle and
 * payload.  It takes a new insertion sequence: among equal (time,
 * priority) it now fires after the events already scheduled.
 * Returns SIM_OK, SIM_ENOTFOUND or SIM_EINVAL; on failure nothing changed. */
int sim_reschedule(sim_engine *e, sim_handle h, sim_time t);
/* True when h names a pending event; stores its time in *t if not NULL. */
int sim_is_pending(const sim_engine *e, sim_handle h, sim_time *t);

enum {
    SIM_RUN_EMPTY = 0,   /* no pending event left */
    SIM_RUN_HORIZON = 1, /* next event lies after the horizon; now == horizon */
    SIM_RUN_STOPPED = 2  /* a handler called sim_stop() */
};

/* Fires events in (time, priority, sequence) order while their time is
 * <= horizon.  Returns SIM_RUN_*, or the negative code a handler passed
 * to sim_abort().  The engine can be run again afterwards. */
int sim_run(sim_engine *e, sim_time horizon);
/* Fires the single next event regardless of time.  Returns 1 if one
 * fired, 0 if none was pending, or a sim_abort() code. */
int sim_step(sim_engine *e);
/* From a handler: return from sim_run() after this handler. */
void sim_stop(sim_engine *e);
/* From a handler: stop and make sim_run() return code (< 0), for errors a
 * handler cannot report otherwise.  The first code wins until the next run. */
void sim_abort(sim_engine *e, int code);

/* Checks the pending set: heap order, handle table consistency, free list.
 * Returns SIM_OK or SIM_EINTERNAL with the first broken invariant in err.
 * O(n); for tests and debug builds. */
int sim_queue_validate(const sim_engine *e, sim_error *err);

/* Events fired since creation. */
uint64_t sim_events_fired(const sim_engine *e);

/* The M/M/1 queue on the engine alone, used by the tests and benchmarks to
 * check the engine against queueing theory.  Times in microseconds. */
typedef struct sim_mm1_result {
    uint64_t customers;    /* customers that started service */
    double mean_wait_us;   /* mean time in queue before service */
    uint64_t events;       /* events fired */
    sim_time end_time;
} sim_mm1_result;

/* Simulates until `customers` customers started service, with arrival
 * rate lambda and service rate mu per second, streams (seed, rep, 1) for
 * arrivals and (seed, rep, 2) for service.  alloc NULL: default. */
int sim_mm1_run(const sim_alloc *alloc, uint64_t seed, uint64_t rep, double lambda,
                double mu, uint64_t customers, sim_mm1_result *res, sim_error *err);

#ifdef __cplusplus
}
#endif

#endif /* OOMSIM_SIM_ENGINE_H */
