/* bench_mm1.c - M/M/1 (lambda 0.9, mu 1) on the engine against SimPy 2.
 *
 * Runs the engine's M/M/1 for N customers (sim_mm1_run), then the same
 * model in SimPy 2 (bench/mm1_simpy.py under /usr/bin/python3) in the same
 * run, and reports both wall times, both mean waits and the ratio.
 *
 * usage: bench_mm1 [CUSTOMERS] [SIMPY_SCRIPT] */
#include "sim/sim.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double wall(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    unsigned long long customers = argc > 1 ? strtoull(argv[1], NULL, 10) : 1000000ULL;
    const char *script = argc > 2 ? argv[2] : NULL;
    sim_mm1_result res;
    sim_error err;
    sim_error_clear(&err);
    double t0 = wall();
    int rc = sim_mm1_run(NULL, 1, 0, 0.9, 1.0, customers, &res, &err);
    double t_engine = wall() - t0;
    if (rc != SIM_OK) {
        fprintf(stderr, "bench_mm1: %s\n", err.msg);
        return 3;
    }
    printf("engine: customers %llu, events %llu, wall %.3f s, %.2f M events/s, "
           "Wq %.3f s (theory 9.000)\n",
           (unsigned long long)res.customers, (unsigned long long)res.events, t_engine,
           (double)res.events / t_engine / 1e6, res.mean_wait_us / 1e6);
    if (script == NULL)
        return 0;
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "/usr/bin/python3 '%s' %llu", script, customers);
    FILE *p = popen(cmd, "r");
    double t_simpy = 0, wq_simpy = 0;
    char line[512];
    int got = 0;
    while (p != NULL && fgets(line, sizeof line, p) != NULL)
        if (sscanf(line, "simpy wall %lf wq %lf", &t_simpy, &wq_simpy) == 2)
            got = 1;
    if (p == NULL || pclose(p) != 0 || !got) {
        fprintf(stderr, "bench_mm1: SimPy run failed (is python3-simpy installed?)\n");
        return 3;
    }
    printf("simpy2: customers %llu, wall %.3f s, Wq %.3f s\n", customers, t_simpy, wq_simpy);
    printf("ratio: engine is %.1fx faster than SimPy 2 in wall time\n", t_simpy / t_engine);
    return 0;
}
