/* run_int.h - what the files of a run share (internal to results/): a
 * replication's output, the per-thread histograms, and the cell's
 * accumulator.  run.c distributes replications over threads and ranks,
 * fold.c folds their outputs into a cell in replication order, compare.c
 * pairs each cell with its baseline. */
#ifndef OOMSIM_RESULTS_RUN_INT_H
#define OOMSIM_RESULTS_RUN_INT_H

#include "internal.h"

#include <stddef.h>
#include <stdint.h>

/* A replication's own latencies, in a histogram whose used bucket range
 * is tracked, so that clearing it and merging it cost what it holds. */
typedef struct rep_hist {
    res_hist h;
    unsigned lo, hi; /* buckets [lo, hi] may be non-zero; lo > hi: empty */
} rep_hist;

/* Resamples of the paired bootstrap of the pooled latency p95: each
 * replication's latencies are added to resample b with a Poisson(1)
 * weight drawn from (seed, the baseline cell, the replication, b), the
 * same for a cell and its baseline; the weighted counts are integers, so
 * their sums do not depend on the threads or ranks that made them. */
#define RES_LATENCY_BOOT 64u

/* The resamples' weighted latency counts, bucket-major: count[k][b] is
 * bucket k of resample b, so adding one replication touches each of its
 * buckets' RES_LATENCY_BOOT counts together (512 contiguous bytes) where
 * resample-major histograms would take a cache miss per bucket and
 * resample.  A flat array of uint64_t, so ranks sum it as one. */
typedef struct boot_hist {
    uint64_t n[RES_LATENCY_BOOT];
    uint64_t count[RES_HIST_BUCKETS][RES_LATENCY_BOOT];
    /* Bit k set: row k may be non-zero.  Rows never written are never
     * read or cleared either, so their pages are never faulted in (a run
     * of few replications spreads its latencies over hundreds of rows).
     * Not part of what ranks sum (BOOT_SUM_WORDS). */
    uint64_t used[(RES_HIST_BUCKETS + 63) / 64];
} boot_hist;
#define BOOT_SUM_WORDS (offsetof(boot_hist, used) / sizeof(uint64_t))
#define BOOT_USED(h, k) (((h)->used[(k) / 64] >> ((k) % 64)) & 1u)
#define BOOT_MARK(h, k) ((h)->used[(k) / 64] |= UINT64_C(1) << ((k) % 64))

/* LLM requests' values, a pair each: time to first token (us) and decode
 * rate (tokens/s, -1 when it decoded nothing).  Kept while a cell has at
 * most `cap` of them, so that their quantiles are exact order statistics;
 * past it `over` is set and the quantiles come from the 1/8-octave
 * buckets the replications count (genvals.c, docs/results.md). */
typedef struct gen_vals {
    double *v;    /* 2 x cap: the pairs */
    uint64_t n;   /* pairs held */
    uint64_t cap;
    int over;     /* more came than cap */
} gen_vals;

/* Each thread's own, on cache lines of its own (run.c allocates them
 * aligned): a neighbour's writes to the next one's first buckets would
 * otherwise bounce a shared line between the cores on every request. */
typedef struct times_hist {
    _Alignas(64) res_hist wait, latency; /* pooled over the thread's replications */
    unsigned pool_lo, pool_hi; /* buckets [lo, hi] of both may be non-zero (lo > hi: none) */
    rep_hist rep;           /* the running replication's latencies */
    boot_hist *boot;        /* the weighted latency resamples */
    unsigned boot_lo, boot_hi; /* buckets [lo, hi] of them may be non-zero; lo > hi: none */
    gen_vals gen;           /* the running round's LLM requests */
} times_hist;

/* What a replication hands back: the model's metrics and its latency p95. */
typedef struct rep_out {
    mdl_rep m;
    double latency_p95;
} rep_out;

/* Per-replication values the comparisons pair, for one cell. */
typedef struct per_rep {
    double *v[RES_CMP_COUNT]; /* peak, any death (0/1), latency p95 (-1: none), availability */
} per_rep;

/* Per-replication values a cell keeps: every figure is exact up to this
 * many replications (res_plan.exact_max overrides it); past it the
 * quantiles come from res__qhist sketches and the comparisons take their
 * spread from the first RES_EXACT_MAX pairs (docs/results.md), so memory
 * does not grow with the replications. */
#define RES_EXACT_MAX UINT64_C(65536)

typedef struct acc {
    uint64_t cap;                     /* values kept per array (<= the replications) */
    double *peaks;                    /* per replication, sorted for the quantiles */
    double *stage[MDL_STAGE_COUNT];   /* per replication where the stage allocated */
    double *switch_peaks;
    double *margins;                  /* per replication with a kill check */
    uint64_t nmargins;
    uint64_t nstage[MDL_STAGE_COUNT];
    uint64_t peak_stage[MDL_STAGE_COUNT + 1];
    uint64_t death_stage[MDL_STAGE_COUNT + 1];
    res_hist wait, latency;
    double wait_sum, latency_sum, queue_area, alive, accepting, deaths;
    uint64_t boot_loops;
    double peak_sum;                  /* every replication's peak */
    /* past cap: every value of the array, kept as counts */
    res__qhist q_peak, q_stage[MDL_STAGE_COUNT], q_switch, q_margin;
    /* the cell's own figures, for its comparisons past cap; and its
     * baseline's */
    double cur_peak_p95, cur_any, cur_avail;
    double base_peak_p95, base_any, base_avail;
    times_hist *per_thread; /* one per worker thread, in per_thread_block */
    void *per_thread_block;
    unsigned pool_lo, pool_hi; /* buckets [lo, hi] of wait and latency may be non-zero */
    unsigned nthreads;
    per_rep cur, base;      /* this cell's, and its baseline's */
    boot_hist *boot_cur, *boot_base; /* the latency resamples, pooled */
    unsigned boot_lo, boot_hi;      /* the buckets of boot_cur that may be non-zero (lo > hi:
                                       none, as rep_hist) */
    unsigned base_lo, base_hi;      /* and of boot_base */
    unsigned base_cell;     /* the cell whose values `base` holds; UINT_MAX: none */
    double base_latency_p95; /* its pooled latency p95, and its completed requests */
    uint64_t base_completed;
    gen_vals gen;           /* the cell's LLM requests, sorted, while exact */
    double *gen_in;         /* rank 0: a round's pairs from every rank */
    unsigned nranks;
} acc;

/* fold.c */
/* The times sink of a thread: wait into the pool, latency into the
 * replication's own histogram. */
void res__add_times(void *ctx, sim_time wait, sim_time latency);
/* The replication's latency p95 (as res_hist_quantile), -1 when it has no
 * completed request; merges it into the thread's pool, and into its
 * resamples with the weights of `key` (res__boot_key), and clears it. */
double res__rep_p95_and_merge(times_hist *t, uint64_t key);
/* The resampling key of replication rep of a cell whose baseline is
 * base_cell. */
uint64_t res__boot_key(uint64_t seed, unsigned base_cell, uint64_t rep);
/* Replication k's output into the cell's accumulator and figures.
 * SIM_OK, or SIM_ENOMEM (a sketch past cap could not be made). */
int res__fold(acc *a, res_cell *c, const rep_out *o, uint64_t k, sim_time horizon);
/* Zeroes what the accumulator gathers for one cell. */
void res__acc_reset(acc *a);
/* Empties a thread's pooled histograms and resamples. */
void res__clear_thread(times_hist *th);
/* Every thread's pooled histograms and resamples into thread 0's; the
 * other threads' emptied (integer counts: the sums do not depend on which
 * thread holds them). */
void res__merge_threads(acc *a);
/* Frees the sketches (res__acc_reset calls it). */
void res__acc_sketches_free(acc *a);
/* Zeroes buckets [lo, hi] and the counts of the resamples h (only the
 * range used: they are large). */
void res__boot_clear(boot_hist *h, unsigned lo, unsigned hi);
/* The cell's figures from its accumulator, once every replication is in. */
void res__finish_cell(acc *a, res_cell *c, uint64_t reps, sim_time horizon);

/* genvals.c */
/* The LLM requests' values kept per cell: exact_max, or 65,536;
 * 0 when no cell of the plan generates. */
uint64_t res__gen_kept(const res_plan *plan);
/* The LLM sink of a thread (mdl_times_sink.gen). */
void res__add_gen(void *ctx, sim_time ttft, double tokens_per_s);
/* Buffers of cap pairs for every thread and the cell, and on rank 0 for a
 * round of every rank's; SIM_ENOMEM. */
int res__gen_alloc(acc *a, uint64_t cap, unsigned ranks);
void res__gen_free(acc *a);
/* At the end of a round, every rank: the threads' pairs (and the other
 * ranks') into the cell's, sorted, or its `over` set; threads emptied. */
int res__gen_round(acc *a, sim_error *err);
/* The cell's time to first token p50, p95 and decode rate p50, p5: exact
 * while it held every request, else the buckets' middles. */
void res__gen_finish(acc *a, res_cell *c);

/* checkpoint.c */
/* Writes the run's state at the end of a round: cells[0 .. cell] (the last
 * the running one, done replications folded), the comparisons cmp[0 ..
 * ncmp), and the accumulator, whose histograms and resamples are all in
 * thread 0's (res__merge_threads, and the ranks' summed into rank 0's). */
int res__ckpt_write(const res_plan *plan, uint64_t plan_digest, const acc *a,
                    const res_cell *cells, unsigned cell, uint64_t done,
                    const res_comparison *cmp, unsigned ncmp, const char *path, sim_error *err);
/* Reads and checks a checkpoint (the header and the CRC; the sections when
 * restored). */
int res__ckpt_load(const res_plan *plan, uint64_t plan_digest, uint64_t cap, int with_boot,
                   const char *path, res_resume **out, sim_error *err);
/* The same from its bytes (data, malloc'ed: taken over, freed on a
 * failure); `path` names it in messages and must outlive *out. */
int res__ckpt_parse(const res_plan *plan, uint64_t plan_digest, uint64_t cap, char *data,
                    size_t len, const char *path, res_resume **out, sim_error *err);
/* Puts a checkpoint's state into a fresh accumulator, cells and
 * comparisons; SIM_EINPUT naming the section that does not hold. */
int res__ckpt_restore(const res_plan *plan, const res_resume *res, acc *a, res_cell *cells,
                      res_comparison *cmp, sim_error *err);
uint64_t res__ckpt_bound(const res_plan *plan, uint64_t cap, int with_boot);
/* The comparisons the cells before `cell` make. */
uint64_t res__comparisons_before(const res_plan *plan, unsigned cell);

/* compare.c */
/* The baseline of cell ci: the first cell with its device and candidate. */
unsigned res__baseline_of(const res_plan *plan, unsigned ci);
/* After cell ci: keeps a baseline's values, or compares the cell with its
 * baseline into cmp[*k ..] and moves *k on. */
int res__after_cell(const res_plan *plan, acc *a, unsigned ci, res_comparison *cmp,
                    unsigned *k, sim_error *err);
/* The percentile 95 % interval of the resamples' differences of the
 * pooled latency p95 (cell minus baseline), over the resamples in which
 * both have a request; [diff, diff] when none has.  Each set's counts are
 * 0 outside its buckets [lo, hi]. */
res_interval res__latency_boot(const boot_hist *boot_cell, unsigned cell_lo, unsigned cell_hi,
                               const boot_hist *boot_base, unsigned base_lo, unsigned base_hi,
                               double diff);

#endif /* OOMSIM_RESULTS_RUN_INT_H */
