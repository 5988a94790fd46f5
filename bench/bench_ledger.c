/* bench_ledger.c - memory-ledger operations per second.
 *
 * A replication-like mix: 64 owners, alternating allocations and releases
 * of request-sized amounts across categories, with the peak tracked on
 * every allocation.  Sizes come from a precomputed table so the figure is
 * the ledger's own cost. */
#include "models/models.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define OPS 50000000u
#define OWNERS 64u

static double wall(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int main(void)
{
    sim_error err;
    mdl_ledger *l = mdl_ledger_create(NULL, MDL_COUNTS_DEFAULT, &err);
    mdl_owner owners[OWNERS];
    uint32_t table[4096];
    uint64_t x = 88172645463325252ULL;
    for (unsigned i = 0; i < 4096; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        table[i] = (uint32_t)(x % (64u << 20));
    }
    if (l == NULL)
        return 3;
    for (uint32_t i = 0; i < OWNERS; i++)
        if (mdl_ledger_owner(l, MDL_OWNER_REQUEST, i, &owners[i]) != SIM_OK)
            return 3;
    double t0 = wall();
    for (uint32_t i = 0; i < OPS / 2; i++) {
        mdl_owner o = owners[i % OWNERS];
        mdl_category c = (mdl_category)(i & 3u);
        int64_t b = table[i & 4095u];
        if (mdl_ledger_alloc(l, o, c, b, MDL_STAGE_INFERENCE, (sim_time)i, &err) != SIM_OK ||
            mdl_ledger_free(l, o, c, b, &err) != SIM_OK)
            return 3;
    }
    double dt = wall() - t0;
    mdl_ledger_stats st;
    mdl_ledger_stats_get(l, &st);
    printf("ledger: %u operations in %.3f s, %.1f M ops/s (peak %lld bytes)\n", OPS, dt,
           OPS / dt / 1e6, (long long)st.peak);
    int rc = mdl_ledger_validate(l, &err) == SIM_OK ? 0 : 3;
    mdl_ledger_destroy(l);
    return rc;
}
