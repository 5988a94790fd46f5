/* bench_clock.h - what the benchmarks measure with: wall time and the
 * process's highest resident memory. */
#ifndef OOMSIM_BENCH_CLOCK_H
#define OOMSIM_BENCH_CLOCK_H

#include <sys/resource.h>
#include <time.h>

static inline double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* The highest resident set so far, KiB. */
static inline long max_rss_kb(void)
{
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return u.ru_maxrss;
}

#endif
