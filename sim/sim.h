/* sim.h - the generic discrete-event engine of oomsim.
 *
 * This header is the whole contract of sim/: errors, the allocator hook,
 * the engine (virtual clock and pending-event set), random-number streams,
 * per-replication arenas, the replication runner and the ranks of an MPI
 * job (sim/ranks.c, the only file that includes mpi.h).  Nothing here knows
 * about memory, devices or models; sim/ could drive any other model.
 *
 * Threading: an engine, a stream and an arena belong to one thread at a
 * time.  sim_replicate() is the only function that starts threads.
 */
#ifndef OOMSIM_SIM_H
#define OOMSIM_SIM_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <gsl/gsl_rng.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SIM_VERSION "0.1.0"

/* The plural ending a count takes in a message: "1 death", "2 deaths". */
#define SIM_S(n) ((n) == 1 ? "" : "s")

/* ---------------------------------------------------------------- errors */

/* The one error table of the project.  X(name, message): codes are
 * negative, SIM_OK is 0.  Every layer reports failures with these codes
 * and puts the context (file:line:col, event index, field, limit) in a
 * sim_error. */
#define SIM_ERRNO_MAP(X)                                   \
    X(NOMEM, "out of memory")                              \
    X(INVAL, "invalid argument")                           \
    X(INPUT, "invalid input")                              \
    X(RANGE, "value out of range")                         \
    X(LIMIT, "limit exceeded")                             \
    X(NOTFOUND, "not found")                               \
    X(IO, "input/output error")                            \
    X(STATE, "operation not valid in this state")          \
    X(INTERNAL, "internal error")                          \
    X(INTR, "interrupted")

enum {
    SIM_OK = 0,
#define SIM__ERR_ENUM(name, msg) SIM_E##name,
    SIM__ERR_FIRST = -100,
    SIM_ERRNO_MAP(SIM__ERR_ENUM)
#undef SIM__ERR_ENUM
    SIM__ERR_END
};
/* The codes are SIM__ERR_FIRST+1 .. SIM__ERR_END-1: all negative. */

#define SIM_ERROR_MSG_MAX 512

/* An error with its context.  The message is complete and meant for a
 * person ("events.json:3:14: invalid JSON: ...").  Caller-owned. */
typedef struct sim_error {
    int code;                     /* SIM_OK or a SIM_E* code */
    char msg[SIM_ERROR_MSG_MAX];  /* NUL-terminated, truncated if longer */
} sim_error;

/* Short name of a code ("NOMEM"), or "UNKNOWN".  Never NULL. */
const char *sim_err_name(int code);
/* Default message of a code ("out of memory").  Never NULL. */
const char *sim_strerror(int code);
/* Sets err (if not NULL) to code and the printf-style message; returns
 * code so callers can write `return sim_error_set(err, SIM_EINPUT, ...)`. */
int sim_error_set(sim_error *err, int code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
/* Resets err to SIM_OK with an empty message.  NULL is allowed. */
void sim_error_clear(sim_error *err);

/* ------------------------------------------------------------------- text */

/* A text buffer that grows (doubling from 4 KiB; the C library's realloc,
 * so its text is free()d by whoever takes it).  After an allocation
 * failure it only records that: sim_text_done then returns NULL.  Start
 * from SIM_TEXT_INIT. */
typedef struct sim_text {
    char *v;    /* NUL-terminated once anything was written; NULL before */
    size_t n;   /* bytes written */
    size_t cap;
    int oom;    /* an allocation failed */
} sim_text;
#define SIM_TEXT_INIT {NULL, 0, 0, 0}

/* Appends len bytes as they are. */
void sim_text_put(sim_text *t, const char *bytes, size_t len);
/* Appends a NUL-terminated string. */
void sim_text_str(sim_text *t, const char *s);
/* Appends printf-style. */
void sim_text_printf(sim_text *t, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* The text (the caller frees it; NULL when nothing was written), or NULL
 * after an allocation failure, in which case the buffer is freed. */
char *sim_text_done(sim_text *t);

/* ------------------------------------------------------------------ files */

/* Reads the file at path whole into a malloc'ed buffer (*data, *len bytes;
 * free it with free()).  Returns SIM_OK, SIM_EINPUT (cannot open: the
 * message names the path and the reason), SIM_ELIMIT (more than
 * max_bytes), SIM_EIO or SIM_ENOMEM; on failure *data is untouched. */
int sim_read_file(const char *path, size_t max_bytes, char **data, size_t *len,
                  sim_error *err);

/* ----------------------------------------------------------- output files */

/* A file written whole or not at all (out.c): bytes go to a temporary
 * name beside `path` and reach it only when sim_out_commit renames them
 * over it, after they were flushed to the disk.  A failure of any write,
 * fsync, close or rename is reported as SIM_EIO, "cannot write PATH:
 * <reason>"; whatever was at path before stays as it was, and
 * sim_out_free removes the temporary.  One thread at a time. */
typedef struct sim_out sim_out;
/* Creates the temporary: SIM_OK, SIM_EIO or SIM_ENOMEM. */
int sim_out_open(const char *path, sim_out **out, sim_error *err);
/* Appends n bytes (buffered).  After a failure every call fails the same
 * way. */
int sim_out_write(sim_out *o, const void *p, size_t n, sim_error *err);
/* A stdio stream writing into o, for writers that take a FILE *; NULL
 * when out of memory.  sim_out_close flushes and closes it. */
FILE *sim_out_stream(sim_out *o);
/* Writes what is buffered, then fsync and close: the temporary is whole. */
int sim_out_close(sim_out *o, sim_error *err);
/* Renames the n closed temporaries over their paths, all or none: when
 * one rename fails, the paths replaced before it get their old files
 * back (each existing path is linked to a backup name first). */
int sim_out_commit(sim_out *const *files, unsigned n, sim_error *err);
/* Closes what is open, removes the temporary unless committed, frees. */
void sim_out_free(sim_out *o);
/* One file: open, n bytes, close, commit, free. */
int sim_out_file(const char *path, const void *p, size_t n, sim_error *err);

/* -------------------------------------------------------- allocator hook */

/* The one allocator interface.  Every allocation of the engine and the
 * models goes through one of these, so tests can fail the Nth allocation
 * and replications can allocate from their own arena.  free_fn and
 * realloc_fn receive the size given at allocation (sized deallocation). */
typedef struct sim_alloc {
    void *(*malloc_fn)(void *ctx, size_t size);
    void *(*realloc_fn)(void *ctx, void *ptr, size_t old_size, size_t size);
    void (*free_fn)(void *ctx, void *ptr, size_t size);
    void *ctx;
} sim_alloc;

/* "jemalloc" or "malloc": the allocator of the process, chosen once: the
 * C library in builds without jemalloc (the sanitizer builds) or when the
 * environment has OOMSIM_ALLOCATOR=malloc (for valgrind), else jemalloc.
 * Results do not depend on it. */
const char *sim_allocator(void);
/* The process-wide default, sim_allocator()'s: jemalloc or the C library.
 * Thread-safe; the returned object is static. */
const sim_alloc *sim_alloc_default(void);

static inline void *sim_malloc(const sim_alloc *a, size_t n)
{
    return a->malloc_fn(a->ctx, n);
}
static inline void *sim_realloc(const sim_alloc *a, void *p, size_t old, size_t n)
{
    return a->realloc_fn(a->ctx, p, old, n);
}
static inline void sim_free(const sim_alloc *a, void *p, size_t n)
{
    if (p != NULL)
        a->free_fn(a->ctx, p, n);
}

/* Test allocator: wraps `base` and fails the fail_at-th allocation
 * (1-based, counting malloc and realloc; 0 never fails).  It counts live
 * blocks so tests can prove that every error path released what it took. */
typedef struct sim_failalloc {
    sim_alloc alloc;       /* pass &fa.alloc to the code under test */
    const sim_alloc *base;
    uint64_t calls;        /* allocations attempted so far */
    uint64_t fail_at;
    int64_t live_blocks;   /* allocations minus frees */
    int64_t live_bytes;
} sim_failalloc;

void sim_failalloc_init(sim_failalloc *fa, const sim_alloc *base, uint64_t fail_at);

/* ---------------------------------------------------------------- engine */

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

/* --------------------------------------------------------------- streams */

/* A random-number stream: a GSL taus2 generator whose whole state is
 * derived from (seed, replication, purpose) by sim_stream_key() (see
 * docs/design/rng.md).  One purpose draws the same numbers whatever the
 * other purposes draw: the basis of common random numbers. */
typedef struct sim_stream {
    gsl_rng rng;           /* pass &s->rng to any gsl_ran_* function */
    const sim_alloc *alloc;
    size_t state_size;
} sim_stream;

/* The 64-bit key of a stream: a splitmix64-based mix of its three
 * coordinates.  Pure; documented so other tools can reproduce it. */
uint64_t sim_stream_key(uint64_t seed, uint64_t replication, uint64_t purpose);

/* Initialises s (caller-owned storage) for (seed, replication, purpose),
 * allocating the generator state from alloc (NULL: default).  Returns
 * SIM_OK or SIM_ENOMEM (s untouched). */
int sim_stream_init(sim_stream *s, const sim_alloc *alloc, uint64_t seed,
                    uint64_t replication, uint64_t purpose);
/* Releases the state.  Safe on a zeroed stream. */
void sim_stream_release(sim_stream *s);

static inline gsl_rng *sim_stream_rng(sim_stream *s) { return &s->rng; }

/* A standard exponential (mean 1) by the ziggurat method: two 32-bit
 * draws on almost every call, more (and a logarithm) on about 1.1 %.
 * The number of draws never depends on a mean, so scaling the result
 * keeps common random numbers aligned. */
double sim_stream_std_exp(sim_stream *s);

/* An exponential duration in microseconds with the given mean (us),
 * rounded to the nearest microsecond: mean_us * sim_stream_std_exp(). */
sim_time sim_stream_exp_us(sim_stream *s, double mean_us);

/* ---------------------------------------------------------------- arenas */

/* A per-replication arena: everything allocated from it is freed at once
 * by sim_arena_destroy().  Backed by a jemalloc arena (arenas.create,
 * mallocx with MALLOCX_ARENA, arena.<i>.destroy), or, when sim_allocator()
 * is "malloc", by a tracked list of C-library blocks, so the sanitizers
 * and valgrind see every block.
 * Used by one thread at a time. */
typedef struct sim_arena sim_arena;

sim_arena *sim_arena_create(sim_error *err);
/* Frees every block of the arena and the arena.  NULL is allowed. */
void sim_arena_destroy(sim_arena *a);
/* Frees every block of the arena, which stays usable: its pages are kept
 * for the next replication on the same thread instead of being returned
 * to the system and faulted in again (arena.<i>.reset). */
void sim_arena_reset(sim_arena *a);
/* The allocator of the arena; valid until sim_arena_destroy(). */
const sim_alloc *sim_arena_alloc(sim_arena *a);
/* Bytes currently allocated from the arena (as requested). */
size_t sim_arena_bytes(const sim_arena *a);
/* "jemalloc" or "malloc": the backend in use (sim_allocator()). */
const char *sim_arena_backend(void);

/* ---------------------------------------------------------- replications */

/* What one replication gets: its index and its arena's allocator. */
typedef struct sim_rep_env {
    uint64_t replication;
    const sim_alloc *alloc;  /* freed wholesale when the replication returns */
    unsigned thread;         /* the worker running it, 0..threads-1: for state
                                that must not depend on the schedule (integer
                                counts merged afterwards), never for results */
} sim_rep_env;

/* Runs one replication and writes its result into `out` (out_size bytes
 * of caller memory, not from env->alloc, which is gone afterwards).
 * Returns SIM_OK or a SIM_E* code with err filled.  Called concurrently
 * from several threads: it must only touch its own replication's state. */
typedef int (*sim_rep_fn)(void *ctx, const sim_rep_env *env, void *out, sim_error *err);

#define SIM_THREADS_MAX 256u

/* Runs replications 0..count-1 on `threads` threads (clamped to
 * [1, min(count, SIM_THREADS_MAX)]); replication k writes outs + k * out_size.  Results are in
 * replication order whatever the thread count.  On failure returns the
 * error of the lowest-numbered failing replication (deterministic), and
 * replications after it may not have run. */
int sim_replicate(uint64_t count, unsigned threads, sim_rep_fn fn, void *ctx,
                  void *outs, size_t out_size, sim_error *err);

/* ------------------------------------------------------------------ ranks */

/* The processes of an MPI job (sim/ranks.c, docs/scale-out.md).  In a
 * build with MPI, started by an MPI launcher, sim_ranks_start() joins the
 * job; otherwise, and before it, the process is rank 0 of a job of one
 * and the collectives below copy or do nothing.  Call them from one
 * thread (the one that called sim_ranks_start); every rank of the job
 * must make the same calls in the same order. */

/* 1 when the environment shows that an MPI launcher started the process
 * (mpirun, mpiexec, srun with PMIx or PMI); OOMSIM_MPI=1 says yes and
 * OOMSIM_MPI=0 no, whatever the environment. */
int sim_ranks_launched(void);
/* Joins the job (MPI_Init_thread, funneled).  SIM_OK, or SIM_EIO when MPI
 * cannot start, or, in a build without MPI that a launcher started as
 * several copies, SIM_ESTATE (each copy would run everything). */
int sim_ranks_start(int *argc, char ***argv, sim_error *err);
/* Leaves the job (MPI_Finalize); nothing when not started. */
void sim_ranks_stop(void);
unsigned sim_ranks_rank(void);  /* 0 .. size - 1 */
unsigned sim_ranks_size(void);  /* >= 1 */
unsigned sim_ranks_local(void); /* ranks of the job on this machine, >= 1 */
/* The MPI library oomsim was built with ("Open MPI v4.1.4"), or NULL
 * when it was built without MPI. */
const char *sim_ranks_library(void);

/* Rank 0 receives every rank's bytes into `into`, one rank after another
 * in rank order: rank r's lens[r] bytes (lens is read at rank 0 only; its
 * own `len` bytes come from `mine`, which may be `into`).  Other ranks
 * send their `len` bytes of `mine` (`into` unused). */
int sim_ranks_gather(const void *mine, size_t len, void *into, const size_t *lens,
                     sim_error *err);
/* Rank 0's v[0..n) becomes the sum over the ranks; the others' is kept. */
int sim_ranks_sum(uint64_t *v, size_t n, sim_error *err);
/* Every rank's v[0..n) becomes the largest of each value over the ranks
 * (a flag any rank raised; a value only rank 0 knows, the others giving
 * 0). */
int sim_ranks_max(uint64_t *v, size_t n, sim_error *err);
/* Every rank gives its status; all get the status of the lowest-numbered
 * failing rank, SIM_OK when none failed, with that rank's message in err
 * as "rank R: message" (in a job of several; a job of one returns code
 * and err as they are). */
int sim_ranks_agree(int code, sim_error *err);
/* FNV-1a (64 bits) of n bytes at p, chained from h (0: a fresh digest):
 * what the ranks compare with sim_ranks_same. */
uint64_t sim_digest(uint64_t h, const void *p, size_t n);
/* SIM_OK when every rank gave the same v, else SIM_EINPUT: "rank R: <what>
 * differs from rank 0's", R the first that differs. */
int sim_ranks_same(uint64_t v, const char *what, sim_error *err);

/* ------------------------------------------------------- engine self-check */

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

#endif /* OOMSIM_SIM_H */
