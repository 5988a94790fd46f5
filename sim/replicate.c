/* replicate.c - replications on threads, results in replication order.
 *
 * Workers take replication indices from one atomic counter, in increasing
 * order.  So when replication k fails, every replication below k has
 * already been handed out and runs to its end: the lowest failing index
 * is always found, and the reported error does not depend on the thread
 * count or the schedule.  No index is handed out after a failure. */
#include "sim.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

typedef struct job {
    uint64_t count;
    sim_rep_fn fn;
    void *ctx;
    char *outs;
    size_t out_size;
    atomic_uint_fast64_t next;
    atomic_int failed;
    pthread_mutex_t mu;
    uint64_t err_rep; /* lowest failing replication so far */
    int rc;
    sim_error err;
} job;

static void record_failure(job *j, uint64_t k, int rc, const sim_error *err)
{
    pthread_mutex_lock(&j->mu);
    if (j->rc == SIM_OK || k < j->err_rep) {
        j->err_rep = k;
        j->rc = rc;
        sim_error_set(&j->err, rc, "replication %llu: %s", (unsigned long long)k,
                      err->msg[0] != '\0' ? err->msg : sim_strerror(rc));
    }
    pthread_mutex_unlock(&j->mu);
    atomic_store(&j->failed, 1);
}

static sim_arena *arena_take(sim_error *err);

/* A worker's allocator: its arena, taken at the first allocation, so a
 * worker whose replications allocate nothing (a bootstrap's resamples)
 * never makes one.  A failure to make it is an allocation failure. */
typedef struct lazy {
    sim_alloc alloc;
    sim_arena *arena;
} lazy;

static void *lazy_malloc(void *ctx, size_t n)
{
    lazy *l = ctx;
    if (l->arena == NULL) {
        sim_error err;
        sim_error_clear(&err);
        if ((l->arena = arena_take(&err)) == NULL)
            return NULL;
    }
    const sim_alloc *a = sim_arena_alloc(l->arena);
    return a->malloc_fn(a->ctx, n);
}

static void *lazy_realloc(void *ctx, void *p, size_t old, size_t n)
{
    lazy *l = ctx;
    if (p == NULL)
        return lazy_malloc(ctx, n);
    const sim_alloc *a = sim_arena_alloc(l->arena);
    return a->realloc_fn(a->ctx, p, old, n);
}

static void lazy_free(void *ctx, void *p, size_t n)
{
    lazy *l = ctx;
    if (p == NULL || l->arena == NULL)
        return;
    const sim_alloc *a = sim_arena_alloc(l->arena);
    a->free_fn(a->ctx, p, n);
}

/* Runs replication k in the worker's arena, emptied afterwards (its
 * pages stay with the thread: no fault-in per replication). */
static void run_one(job *j, uint64_t k, unsigned thread, lazy *l)
{
    sim_error err;
    sim_error_clear(&err);
    sim_rep_env env = {k, &l->alloc, thread};
    int rc = j->fn(j->ctx, &env, j->outs + k * j->out_size, &err);
    if (l->arena != NULL)
        sim_arena_reset(l->arena);
    if (rc != SIM_OK)
        record_failure(j, k, rc, &err);
}

typedef struct worker_arg {
    job *j;
    unsigned thread;
} worker_arg;

/* Arenas outlive a call: a worker takes one from this free list and gives
 * it back emptied, so the pages a replication's world used stay mapped for
 * the next call's replications instead of being purged and faulted in
 * again (a run calls sim_replicate once per cell and round, and once per
 * bootstrap).  Destroyed at exit. */
static sim_arena *spare[SIM_THREADS_MAX * 2];
static unsigned nspare;
static pthread_mutex_t spare_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t spare_once = PTHREAD_ONCE_INIT;

static void spare_destroy_all(void)
{
    pthread_mutex_lock(&spare_mu);
    while (nspare > 0)
        sim_arena_destroy(spare[--nspare]);
    pthread_mutex_unlock(&spare_mu);
}

static void spare_init(void) { atexit(spare_destroy_all); }

static sim_arena *arena_take(sim_error *err)
{
    pthread_once(&spare_once, spare_init);
    pthread_mutex_lock(&spare_mu);
    sim_arena *a = nspare > 0 ? spare[--nspare] : NULL;
    pthread_mutex_unlock(&spare_mu);
    return a != NULL ? a : sim_arena_create(err);
}

static void arena_give(sim_arena *a)
{
    if (a == NULL)
        return;
    pthread_mutex_lock(&spare_mu);
    if (nspare < sizeof spare / sizeof *spare) {
        spare[nspare++] = a;
        a = NULL;
    }
    pthread_mutex_unlock(&spare_mu);
    sim_arena_destroy(a); /* NULL: kept */
}

static void *worker(void *arg)
{
    const worker_arg *a = arg;
    job *j = a->j;
    lazy l = {{lazy_malloc, lazy_realloc, lazy_free, NULL}, NULL};
    l.alloc.ctx = &l;
    while (!atomic_load(&j->failed)) {
        uint64_t k = atomic_fetch_add(&j->next, 1);
        if (k >= j->count)
            break;
        run_one(j, k, a->thread, &l);
    }
    arena_give(l.arena);
    return NULL;
}

int sim_replicate(uint64_t count, unsigned threads, sim_rep_fn fn, void *ctx, void *outs,
                  size_t out_size, sim_error *err)
{
    if (fn == NULL || (outs == NULL && out_size != 0) ||
        (out_size != 0 && count > SIZE_MAX / out_size))
        return sim_error_set(err, SIM_EINVAL, "replicate: invalid arguments");
    if (count == 0)
        return SIM_OK;
    if (threads == 0)
        threads = 1;
    if (threads > count)
        threads = (unsigned)count;

    job j;
    memset(&j, 0, sizeof j);
    j.count = count;
    j.fn = fn;
    j.ctx = ctx;
    j.outs = outs;
    j.out_size = out_size;
    atomic_init(&j.next, 0);
    atomic_init(&j.failed, 0);
    j.rc = SIM_OK;
    if (pthread_mutex_init(&j.mu, NULL) != 0)
        return sim_error_set(err, SIM_EINTERNAL, "replicate: cannot create a mutex");

    /* The calling thread is worker 0; a thread that cannot be started
     * only lowers the parallelism, never the result. */
    pthread_t tids[SIM_THREADS_MAX];
    worker_arg args[SIM_THREADS_MAX];
    unsigned started = 0;
    if (threads > SIM_THREADS_MAX)
        threads = SIM_THREADS_MAX;
    for (unsigned t = 1; t < threads; t++) {
        args[t].j = &j;
        args[t].thread = t;
        if (pthread_create(&tids[started], NULL, worker, &args[t]) != 0)
            break;
        started++;
    }
    args[0].j = &j;
    args[0].thread = 0;
    worker(&args[0]);
    for (unsigned t = 0; t < started; t++)
        pthread_join(tids[t], NULL);
    pthread_mutex_destroy(&j.mu);

    if (j.rc != SIM_OK) {
        if (err != NULL)
            *err = j.err;
        return j.rc;
    }
    return SIM_OK;
}
