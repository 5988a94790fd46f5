/* bench_hold.c - the classic hold model on the engine.
 *
 * n events are pending; each fired event schedules one successor at
 * now + Exp(mean), so the pending count stays n.  Reports fired events per
 * second of wall time (RNG draw included), for heap arities 2, 4 and 8.
 *
 * usage: bench_hold [MIN_EXP MAX_EXP]   pending 10^MIN_EXP .. 10^MAX_EXP */
#include "sim/sim.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

typedef struct hold {
    sim_stream s;
    uint64_t left;
} hold;

static void on_hold(sim_engine *e, void *ctx, uint64_t arg)
{
    hold *h = ctx;
    if (h->left == 0)
        return;
    h->left--;
    if (sim_schedule_in(e, sim_stream_exp_us(&h->s, 1e6), 0, on_hold, h, arg, NULL) != SIM_OK)
        sim_abort(e, SIM_ENOMEM);
}

static double wall(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Returns events per second for n pending events and `ops` hold steps. */
static double run(unsigned k, uint64_t n, uint64_t ops)
{
    sim_engine_config cfg = {NULL, k, 0};
    sim_engine *e = sim_engine_create(&cfg, NULL);
    hold h;
    if (e == NULL || sim_stream_init(&h.s, NULL, 1, 0, 1) != SIM_OK) {
        fprintf(stderr, "bench_hold: out of memory\n");
        exit(3);
    }
    for (uint64_t i = 0; i < n; i++)
        if (sim_schedule(e, sim_stream_exp_us(&h.s, 1e6), 0, on_hold, &h, i, NULL) != SIM_OK)
            exit(3);
    /* Warm up (steady-state time distribution), then measure. */
    h.left = n;
    sim_run(e, SIM_TIME_MAX);
    h.left = 0;
    sim_stop(e);
    h.left = ops;
    uint64_t before = sim_events_fired(e);
    double t0 = wall();
    int rc = sim_run(e, SIM_TIME_MAX); /* drains once the budget is spent */
    double t1 = wall();
    uint64_t fired = sim_events_fired(e) - before;
    if (rc < 0) {
        fprintf(stderr, "bench_hold: engine error %d\n", rc);
        exit(3);
    }
    sim_stream_release(&h.s);
    sim_engine_destroy(e);
    return (double)fired / (t1 - t0);
}

int main(int argc, char **argv)
{
    int lo = argc > 2 ? atoi(argv[1]) : 2, hi = argc > 2 ? atoi(argv[2]) : 6;
    printf("%-10s %12s %12s %12s   (M events/s, higher is better)\n", "pending", "2-ary",
           "4-ary", "8-ary");
    for (int ex = lo; ex <= hi; ex++) {
        uint64_t n = 1;
        for (int i = 0; i < ex; i++)
            n *= 10;
        uint64_t ops = n * 20 > 20000000 ? n * 20 : 20000000;
        printf("10^%-7d", ex);
        for (unsigned k = 1; k <= 3; k++)
            printf(" %12.2f", run(k, n, ops) / 1e6);
        printf("\n");
        fflush(stdout);
    }
    return 0;
}
