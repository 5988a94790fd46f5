/* rng.c - random-number streams keyed by (seed, replication, purpose).
 *
 * Each stream is a GSL taus2 generator (L'Ecuyer's maximally
 * equidistributed combined Tausworthe generator, period 2^88, three 32-bit
 * words of state).  gsl_rng_set() would take one 32-bit seed, which makes
 * collisions between streams likely past ~10^4 streams, so the three words
 * are filled from the stream's 64-bit key instead.  Exponential durations
 * use a ziggurat (Marsaglia and Tsang 2000) on 53-bit draws: no logarithm
 * on 98.9 % of draws.  docs/design/rng.md states both so other tools can
 * reproduce them. */
#include "sim.h"

#include <math.h>
#include <pthread.h>
#include <string.h>


#define GOLDEN UINT64_C(0x9e3779b97f4a7c15)

/* Layout of GSL's taus2 state (gsl/rng/taus.c).  sim_stream_init()
 * checks the size GSL reports before writing it. */
typedef struct taus_state {
    unsigned long s1, s2, s3;
} taus_state;

/* The splitmix64 finaliser (Steele, Lea, Flood 2014). */
static uint64_t mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

uint64_t sim_stream_key(uint64_t seed, uint64_t replication, uint64_t purpose)
{
    uint64_t k = mix64(seed + GOLDEN);
    k = mix64(k ^ mix64(replication + 2 * GOLDEN));
    k = mix64(k ^ mix64(purpose + 3 * GOLDEN));
    return k;
}

/* ------------------------------------------------- exponential ziggurat */

/* 256 layers of equal area v under exp(-x): x[255] = R is where the tail
 * begins, x[0] = v / exp(-R) the base strip's width.  A draw of 53 bits j
 * and 8 bits i (independent bits of one 64-bit draw) gives x = j w[i];
 * j < k[i] means x lies under the curve for certain. */
#define ZIG_R 7.69711747013104972
#define ZIG_V 3.949659822581572e-3
#define ZIG_SCALE 9007199254740992.0 /* 2^53 */

static uint64_t zig_k[256];
static double zig_w[256], zig_f[256];
static pthread_once_t zig_once = PTHREAD_ONCE_INIT;

static void zig_tables(void)
{
    double x = ZIG_R, prev = ZIG_R;
    double q = ZIG_V / exp(-ZIG_R);
    zig_k[0] = (uint64_t)((ZIG_R / q) * ZIG_SCALE);
    zig_k[1] = 0;
    zig_w[0] = q / ZIG_SCALE;
    zig_w[255] = ZIG_R / ZIG_SCALE;
    zig_f[0] = 1.0;
    zig_f[255] = exp(-ZIG_R);
    for (int i = 254; i >= 1; i--) {
        x = -log(ZIG_V / x + exp(-x));
        zig_k[i + 1] = (uint64_t)((x / prev) * ZIG_SCALE);
        prev = x;
        zig_f[i] = exp(-x);
        zig_w[i] = x / ZIG_SCALE;
    }
}

/* ---------------------------------------------------------------- streams */

int sim_stream_init(sim_stream *s, const sim_alloc *alloc, uint64_t seed,
                    uint64_t replication, uint64_t purpose)
{
    const gsl_rng_type *type = gsl_rng_taus2;
    if (type->size != sizeof(taus_state))
        return SIM_EINTERNAL; /* GSL changed its layout: refuse, never guess */
    pthread_once(&zig_once, zig_tables);
    if (alloc == NULL)
        alloc = sim_alloc_default();
    taus_state *st = sim_malloc(alloc, sizeof *st);
    if (st == NULL)
        return SIM_ENOMEM;
    /* Each word must exceed its generator's lowest bits (1, 7, 15), or
     * that component is stuck; taus2's own seeding enforces the same. */
    uint64_t key = sim_stream_key(seed, replication, purpose);
    uint64_t more = mix64(key + GOLDEN);
    st->s1 = (unsigned long)(key & 0xffffffffu);
    st->s2 = (unsigned long)(key >> 32);
    st->s3 = (unsigned long)(more & 0xffffffffu);
    if (st->s1 < 2)
        st->s1 += 2;
    if (st->s2 < 8)
        st->s2 += 8;
    if (st->s3 < 16)
        st->s3 += 16;
    s->rng.type = type;
    s->rng.state = st;
    s->alloc = alloc;
    s->state_size = sizeof *st;
    for (int i = 0; i < 6; i++) /* warm up, as gsl_rng_set does */
        (void)type->get(st);
    return SIM_OK;
}

void sim_stream_release(sim_stream *s)
{
    if (s->rng.state != NULL && s->alloc != NULL)
        sim_free(s->alloc, s->rng.state, s->state_size);
    s->rng.state = NULL;
}

/* Two 32-bit draws, the first in the high half. */
static inline uint64_t draw64(const gsl_rng *r)
{
    uint64_t hi = (uint64_t)r->type->get(r->state);
    uint64_t lo = (uint64_t)r->type->get(r->state);
    return (hi << 32) | (lo & 0xffffffffu);
}

double sim_stream_std_exp(sim_stream *s)
{
    const gsl_rng *r = &s->rng;
    for (;;) {
        uint64_t u = draw64(r);
        unsigned i = (unsigned)(u & 255);
        uint64_t j = u >> 11;
        if (j < zig_k[i])
            return (double)j * zig_w[i];
        if (i == 0) /* the tail past R is R plus a fresh exponential */
            return ZIG_R - log(gsl_rng_uniform_pos(r));
        double x = (double)j * zig_w[i];
        if (zig_f[i] + gsl_rng_uniform(r) * (zig_f[i - 1] - zig_f[i]) < exp(-x))
            return x;
    }
}

sim_time sim_stream_exp_us(sim_stream *s, double mean_us)
{
    double x = mean_us * sim_stream_std_exp(s);
    if (!(x < 9.0e18))
        return INT64_C(9000000000000000000);
    return (sim_time)(x + 0.5); /* x >= 0: rounds half up */
}
