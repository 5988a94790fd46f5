/* selfcheck.c - an M/M/1 queue built on the engine alone.
 *
 * The tests compare it with queueing theory (Wq = rho / (mu - lambda)) and
 * the benchmarks race it against SimPy.  Arrivals draw from purpose 1 and
 * services from purpose 2, so each sees the same numbers whatever the
 * other does. */
#include "sim.h"

#include <string.h>

enum { EV_ARRIVAL = 1, EV_DEPARTURE = 2 };
enum { PRIO_DEPARTURE = 0, PRIO_ARRIVAL = 1 };
#define MM1_QUEUE_LIMIT (UINT64_C(1) << 26)

typedef struct mm1 {
    const sim_alloc *alloc;
    sim_stream arrivals, service;
    double mean_gap_us, mean_service_us;
    sim_time *ring; /* arrival times of waiting customers; capacity a power of 2 */
    uint64_t ring_cap, head, len;
    int busy;
    uint64_t target, started;
    int64_t wait_sum_us;
} mm1;

static int ring_push(mm1 *q, sim_time t)
{
    if (q->len == q->ring_cap) {
        if (q->ring_cap >= MM1_QUEUE_LIMIT)
            return SIM_ELIMIT;
        uint64_t ncap = q->ring_cap == 0 ? 256 : q->ring_cap * 2;
        sim_time *nr = sim_malloc(q->alloc, sizeof(sim_time) * ncap);
        if (nr == NULL)
            return SIM_ENOMEM;
        for (uint64_t i = 0; i < q->len; i++)
            nr[i] = q->ring[(q->head + i) & (q->ring_cap - 1)];
        sim_free(q->alloc, q->ring, sizeof(sim_time) * q->ring_cap);
        q->ring = nr;
        q->ring_cap = ncap;
        q->head = 0;
    }
    q->ring[(q->head + q->len) & (q->ring_cap - 1)] = t;
    q->len++;
    return SIM_OK;
}

static sim_time ring_pop(mm1 *q)
{
    sim_time t = q->ring[q->head];
    q->head = (q->head + 1) & (q->ring_cap - 1);
    q->len--;
    return t;
}

static void on_event(sim_engine *e, void *ctx, uint64_t arg);

static void start_service(sim_engine *e, mm1 *q, sim_time arrived)
{
    q->busy = 1;
    q->started++;
    q->wait_sum_us += sim_now(e) - arrived;
    if (q->started == q->target) {
        sim_stop(e);
        return;
    }
    sim_time d = sim_stream_exp_us(&q->service, q->mean_service_us);
    int rc = sim_schedule_in(e, d, PRIO_DEPARTURE, on_event, q, EV_DEPARTURE, NULL);
    if (rc != SIM_OK)
        sim_abort(e, rc);
}

static void on_event(sim_engine *e, void *ctx, uint64_t arg)
{
    mm1 *q = ctx;
    if (arg == EV_ARRIVAL) {
        sim_time gap = sim_stream_exp_us(&q->arrivals, q->mean_gap_us);
        int rc = sim_schedule_in(e, gap, PRIO_ARRIVAL, on_event, q, EV_ARRIVAL, NULL);
        if (rc == SIM_OK && q->busy)
            rc = ring_push(q, sim_now(e));
        else if (rc == SIM_OK)
            start_service(e, q, sim_now(e));
        if (rc != SIM_OK)
            sim_abort(e, rc);
    } else if (q->len > 0) {
        start_service(e, q, ring_pop(q));
    } else {
        q->busy = 0;
    }
}

int sim_mm1_run(const sim_alloc *alloc, uint64_t seed, uint64_t rep, double lambda, double mu,
                uint64_t customers, sim_mm1_result *res, sim_error *err)
{
    if (!(lambda > 0) || !(mu > 0) || customers == 0)
        return sim_error_set(err, SIM_EINVAL, "mm1: rates must be > 0 and customers >= 1");
    mm1 q;
    memset(&q, 0, sizeof q);
    q.alloc = alloc != NULL ? alloc : sim_alloc_default();
    q.mean_gap_us = 1e6 / lambda;
    q.mean_service_us = 1e6 / mu;
    q.target = customers;
    int rc = sim_stream_init(&q.arrivals, q.alloc, seed, rep, 1);
    if (rc == SIM_OK)
        rc = sim_stream_init(&q.service, q.alloc, seed, rep, 2);
    sim_engine_config cfg = {q.alloc, SIM_PENDING_DEFAULT, 0, 0, NULL, NULL};
    sim_engine *e = NULL;
    if (rc == SIM_OK) {
        e = sim_engine_create(&cfg, NULL);
        rc = e != NULL ? SIM_OK : SIM_ENOMEM;
    }
    if (rc == SIM_OK) {
        sim_time first = sim_stream_exp_us(&q.arrivals, q.mean_gap_us);
        rc = sim_schedule(e, first, PRIO_ARRIVAL, on_event, &q, EV_ARRIVAL, NULL);
        if (rc == SIM_OK)
            rc = sim_run(e, SIM_TIME_MAX);
        if (rc == SIM_RUN_STOPPED) {
            res->customers = q.started;
            res->mean_wait_us = (double)q.wait_sum_us / (double)q.started;
            res->events = sim_events_fired(e);
            res->end_time = sim_now(e);
            rc = SIM_OK;
        } else if (rc >= 0) {
            rc = SIM_EINTERNAL; /* the arrival stream never ends */
        }
    }
    sim_engine_destroy(e);
    sim_free(q.alloc, q.ring, sizeof(sim_time) * q.ring_cap);
    sim_stream_release(&q.service);
    sim_stream_release(&q.arrivals);
    if (rc != SIM_OK)
        sim_error_set(err, rc, "mm1: %s", sim_strerror(rc));
    return rc;
}
