/* bench_hold.c - the classic hold model on the engine.
 *
 * n events are pending; each fired event schedules one successor at
 * now + Exp(mean), so the pending count stays n.  Reports fired events per
 * second of wall time, for the radix heap and heap arities 2, 4 and 8.
 *
 * usage: bench_hold [MIN_EXP MAX_EXP]   pending 10^MIN_EXP .. 10^MAX_EXP */
#include "sim/sim.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define TABLE_SIZE (1u << 20)

typedef struct hold {
    sim_stream s;
    uint64_t left;
    sim_time *table; /* NULL: draw each increment */
    uint32_t next;
} hold;

static sim_time increment(hold *h)
{
    if (h->table == NULL)
        return sim_stream_exp_us(&h->s, 1e6);
    sim_time d = h->table[h->next];
    h->next = (h->next + 1) & (TABLE_SIZE - 1);
    return d;
}

static void on_hold(sim_engine *e, void *ctx, uint64_t arg)
{
    hold *h = ctx;
    if (sim_schedule_in(e, increment(h), 0, on_hold, h, arg, NULL) != SIM_OK)
        sim_abort(e, SIM_ENOMEM);
    if (--h->left == 0)
        sim_stop(e);
}

static double wall(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Returns events per second for n pending events and `ops` hold steps. */
static double run(unsigned variant, uint64_t n, uint64_t ops, sim_time *table)
{
    /* variant 0: radix heap; 1..3: 2^variant-ary heap */
    sim_engine_config cfg = {NULL, variant == 0 ? SIM_PENDING_RADIX : SIM_PENDING_HEAP,
                             variant, 0, NULL, NULL};
    sim_engine *e = sim_engine_create(&cfg, NULL);
    hold h = {.table = table, .next = 0};
    if (e == NULL || sim_stream_init(&h.s, NULL, 1, 0, 1) != SIM_OK) {
        fprintf(stderr, "bench_hold: out of memory\n");
        exit(3);
    }
    for (uint64_t i = 0; i < n; i++)
        if (sim_schedule(e, increment(&h), 0, on_hold, &h, i, NULL) != SIM_OK)
            exit(3);
    /* Warm up to the steady-state time distribution, then measure. */
    h.left = 2 * n;
    sim_run(e, SIM_TIME_MAX);
    h.left = ops;
    uint64_t before = sim_events_fired(e);
    double t0 = wall();
    int rc = sim_run(e, SIM_TIME_MAX); /* stops after `ops` events */
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

/* One table of each mode: "draw" pays a GSL exponential draw per event
 * (about 27 ns on the reference machine), "table" cycles through 2^20
 * precomputed draws so the figure is the engine's own cost. */
int main(int argc, char **argv)
{
    int lo = argc > 2 ? atoi(argv[1]) : 2, hi = argc > 2 ? atoi(argv[2]) : 6;
    sim_stream s;
    sim_time *table = malloc(sizeof(sim_time) * TABLE_SIZE);
    if (table == NULL || sim_stream_init(&s, NULL, 2, 0, 1) != SIM_OK)
        return 3;
    for (uint32_t i = 0; i < TABLE_SIZE; i++)
        table[i] = sim_stream_exp_us(&s, 1e6);
    sim_stream_release(&s);
    for (int mode = 0; mode < 2; mode++) {
        printf("%s increments: M events/s (higher is better)\n",
               mode == 0 ? "table" : "draw");
        printf("%-10s %10s %10s %10s %10s\n", "pending", "radix", "2-ary", "4-ary", "8-ary");
        for (int ex = lo; ex <= hi; ex++) {
            uint64_t n = 1;
            for (int i = 0; i < ex; i++)
                n *= 10;
            uint64_t ops = n * 20 > 20000000 ? n * 20 : 20000000;
            printf("10^%-7d", ex);
            for (unsigned v = 0; v <= 3; v++)
                printf(" %10.2f", run(v, n, ops, mode == 0 ? table : NULL) / 1e6);
            printf("\n");
            fflush(stdout);
        }
    }
    free(table);
    return 0;
}
