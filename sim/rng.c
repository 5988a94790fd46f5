/* rng.c - random-number streams keyed by (seed, replication, purpose).
 *
 * Each stream is a GSL mt19937 generator.  gsl_rng_set() would take a
 * 32-bit seed only (mt19937_set masks it), which makes collisions between
 * streams likely past ~10^4 streams, so the whole 624-word state is filled
 * from a splitmix64 sequence started at the stream's 64-bit key.
 * docs/design/rng.md states the mix so other tools can reproduce it. */
#include "sim.h"

#include <math.h>
#include <string.h>


#define GOLDEN UINT64_C(0x9e3779b97f4a7c15)
#define MT_N 624

/* Layout of GSL's mt19937 state (gsl/rng/mt.c).  sim_stream_init()
 * checks the size GSL reports before writing it. */
typedef struct mt_state {
    unsigned long mt[MT_N];
    int mti;
} mt_state;

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

static void fill_state(mt_state *st, uint64_t key)
{
    uint64_t x = key;
    unsigned long any = 0;
    for (int i = 0; i < MT_N; i++) {
        x += GOLDEN;
        st->mt[i] = (unsigned long)(mix64(x) >> 32);
        any |= st->mt[i];
    }
    if (any == 0)
        st->mt[0] = 0x80000000UL; /* an all-zero state would stay zero */
    st->mti = MT_N;               /* regenerate on the first draw */
}

int sim_stream_init(sim_stream *s, const sim_alloc *alloc, uint64_t seed,
                    uint64_t replication, uint64_t purpose)
{
    const gsl_rng_type *type = gsl_rng_mt19937;
    if (type->size != sizeof(mt_state))
        return SIM_EINTERNAL; /* GSL changed its layout: refuse, never guess */
    if (alloc == NULL)
        alloc = sim_alloc_default();
    mt_state *st = sim_malloc(alloc, sizeof *st);
    if (st == NULL)
        return SIM_ENOMEM;
    memset(st, 0, sizeof *st);
    fill_state(st, sim_stream_key(seed, replication, purpose));
    s->rng.type = type;
    s->rng.state = st;
    s->alloc = alloc;
    s->state_size = sizeof *st;
    return SIM_OK;
}

void sim_stream_release(sim_stream *s)
{
    if (s->rng.state != NULL && s->alloc != NULL)
        sim_free(s->alloc, s->rng.state, s->state_size);
    s->rng.state = NULL;
}

/* The same numbers as gsl_ran_exponential(&s->rng, mean_us), which draws
 * u = gsl_rng_uniform() and returns -mean * log1p(-u); calling the
 * generator's get_double directly saves two calls through the shared
 * library on the hottest draw of every model. */
sim_time sim_stream_exp_us(sim_stream *s, double mean_us)
{
    double u = s->rng.type->get_double(s->rng.state);
    double x = -mean_us * log1p(-u);
    if (!(x < 9.0e18))
        return INT64_C(9000000000000000000);
    return (sim_time)(x + 0.5); /* x >= 0: rounds half up */
}
