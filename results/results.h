/* results.h - statistics over replications, result documents, tables and plots.
 *
 * The statistics the result document is built from (docs/results.md):
 * quantiles, Wilson intervals for rates, t intervals for means and paired
 * differences, the Erlang C reference the queueing tests compare against
 * (pure functions, thread-safe); the run driver that replicates every
 * cell of a plan and aggregates it (run.c); the result document, the
 * table and the CSV (document.c). */
#ifndef OOMSIM_RESULTS_H
#define OOMSIM_RESULTS_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "models/models.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct res_interval {
    double lo, hi;
} res_interval;

/* Wilson score interval at 95 % for k successes out of n trials
 * (z = 1.959964).  n == 0 gives [0, 1].  k > n is clamped to n. */
res_interval res_wilson95(uint64_t k, uint64_t n);

/* The mean of x[0..n) and its 95 % confidence interval from Student's t
 * with n - 1 degrees of freedom; n < 2 gives a zero-width interval at the
 * mean (0 for n == 0).  Used for paired differences between cells. */
double res_mean_ci95(const double *x, size_t n, res_interval *ci);

/* The p-quantile (0 <= p <= 1) of sorted[0..n) by GSL's definition
 * (linear interpolation between order statistics, type 7).  n == 0 gives 0. */
double res_quantile_sorted(const double *sorted, size_t n, double p);
/* The bucket holding quantile p of a histogram's counts (rank ceil(p n)),
 * -1 when it is empty. */
int res_bucket_quantile(const uint64_t *count, unsigned n, double p);

/* Sorts x[0..n) in place (ascending, NaN-free input). */
void res_sort(double *x, size_t n);

/* The paired difference of p-quantiles, q_p(y) - q_p(x), of two samples
 * measured on the same replications (x[k], y[k] from replication k), and
 * its 95 % percentile-bootstrap interval: `resamples` resamples of the
 * replication indices (shared by x and y, so the pairing is kept).
 * Resample b draws its indices from its own stream, (seed, key,
 * RES_PURPOSE_BOOTSTRAP + b), so the resamples run on `threads` threads
 * and the interval does not depend on how many.  Quantiles as
 * res_quantile_sorted.  O(resamples x n) time, O(n) memory per thread.
 * Returns SIM_OK, or SIM_ENOMEM.  Identical samples give exactly 0 and
 * [0, 0]. */
#define RES_PURPOSE_BOOTSTRAP 100u
int res_paired_quantile_diff(const double *x, const double *y, size_t n, double p,
                             unsigned resamples, uint64_t seed, uint64_t key, unsigned threads,
                             double *diff, res_interval *ci);

/* M/M/c with arrival rate lambda and service rate mu per server
 * (same time unit), c >= 1, lambda < c * mu. */
typedef struct res_erlang_c {
    double p_wait; /* probability that an arrival waits (Erlang C) */
    double wq;     /* mean wait in queue */
    double lq;     /* mean queue length (Little: lambda * wq) */
    double rho;    /* utilisation lambda / (c mu) */
} res_erlang_c;

/* Returns SIM_OK and fills *out, or SIM_EINVAL for parameters outside the
 * domain (out untouched). */
int res_erlang_c_compute(double lambda, double mu, unsigned c, res_erlang_c *out);

/* ---------------------------------------------------------------- runs */

/* A plan to run: the cells of a scenario and what the document says of
 * it.  Every pointer is borrowed. */
typedef struct res_plan {
    const char *name, *about;
    mdl_target target;              /* what a policy must meet (target.set 0: none) */
    uint64_t seed, replications;
    sim_time horizon;
    const mdl_cell *cells;
    const char *const *policy_json; /* per cell: its axis values, a JSON object */
    unsigned ncells;
    /* The scenario's named paths (`workload.paths`; 0: one path): the
     * cells' first axis, and a target is then met only on every path. */
    unsigned paths;
    uint64_t first_replication;     /* replications run are first .. first + n - 1 (replay) */
    /* When not NULL and set (a signal handler's flag), no replication
     * starts any more and res_run fails with SIM_EINTR. */
    const volatile sig_atomic_t *stop;
    /* The scenario's source text as the loader read it (scn_scenario.digest;
     * 0: none).  The ranks of an MPI job check they share it. */
    uint64_t digest;
    const mdl_field *field; /* what the fleet observed (docs/field.md) */
    unsigned nfield;        /* 0: nothing */
    /* Replications per cell whose values are kept, so that every figure is
     * exact up to it (0: 65,536); past it quantiles are read from bounded
     * sketches (docs/results.md "Large runs").  Tests lower it. */
    uint64_t exact_max;
    /* Checkpoints to write and one to continue from (NULL: neither). */
    struct res_checkpoint *checkpoint;
} res_plan;

/* Pooled wait and latency: a log-linear histogram (exact below 256 us,
 * then 128 buckets per power of two: a reported quantile is within 0.4 %
 * of the true order statistic). */
#define RES_HIST_BUCKETS 7424
typedef struct res_hist {
    uint64_t count[RES_HIST_BUCKETS];
    uint64_t n;
} res_hist;

/* The nearest-rank p-quantile (0 <= p <= 1): the midpoint of the bucket
 * holding rank ceil(p n), rounded; 0 when empty. */
int64_t res_hist_quantile(const res_hist *h, double p);

typedef struct res_q {
    double mean, p50, p95, p99, max;
} res_q;

/* Points of the peak distribution a cell keeps for its CDF plot: the
 * quantiles at 0, 1, ..., 100 % (as res_quantile_sorted). */
#define RES_CDF_POINTS 101

/* The aggregates of one cell (docs/results.md "cells"). */
typedef struct res_cell {
    res_q peak;                          /* peak.app_bytes */
    double peak_cdf[RES_CDF_POINTS];     /* peak.app_bytes at k % */
    double stage_at_peak[MDL_STAGE_COUNT]; /* share of replications */
    int has_stage[MDL_STAGE_COUNT];      /* some replication allocated in it */
    res_q by_stage[MDL_STAGE_COUNT];     /* p50, p95, max over those replications */
    double deaths_mean;                  /* deaths per replication */
    uint64_t with_death;                 /* replications with a death */
    double any_rate;
    res_interval any_ci;
    uint64_t by_reason[MDL_EXIT_COUNT];
    uint64_t by_lmkd[MDL_LMKD_COUNT];     /* lmk deaths by lmkd's reason */
    double boot_loop_rate;
    uint64_t arrived, completed, rejected, timed_out, retried, lost, failed, duplicates;
    res_q wait_us, latency_us;           /* over completed requests */
    double queue_len_mean;               /* time average while alive */
    double availability, inference_availability;
    uint64_t leaks;
    uint64_t warnings, cached_kills;
    mdl_record_kind_count records[MDL_RECORD_KINDS_MAX]; /* exit records by signature */
    unsigned nrecords;
    uint64_t candidate_switches, safe_mode_starts;
    uint64_t switches;                   /* on-demand part loads, all replications */
    uint64_t with_switch;                /* replications with at least one */
    res_q switch_peak;                   /* p50, p95, max over those replications */
    /* the margin: each replication's smallest headroom under the kill line
     * (limit minus counted, pressure spikes included), p5 and p50 over the
     * replications that were checked (has_margin) */
    int has_margin;
    double margin_p5, margin_p50;
    uint64_t memory_deaths[2];           /* first deaths low_memory or system_reclaim,
                                            in the background [0] / foreground [1] */
    uint64_t with_visible_death;         /* replications with a low_memory death in the
                                            foreground (the field's user-perceived kills) */
    uint64_t with_background_death;      /* ... a low_memory or system_reclaim one in the background */
    mdl_exit top_reason;                 /* most frequent reason (valid with deaths) */
    mdl_stage top_death_stage;           /* most frequent stage of first deaths */
    uint64_t events;
    /* Android in PSI mode: the phone's pages (docs/results.md "pages") */
    uint64_t slowdown[MDL_SLOWDOWN_BUCKETS]; /* inferences by slowdown */
    uint64_t lmkd_counted[MDL_COUNTED_BUCKETS]; /* the app's lmkd deaths by counted bytes */
    int64_t thrashing_max, swap_used_max; /* the highest over the replications */
    uint64_t lmkd_kills_of_others, kernel_oom_kills, lmkd_wakeups;
    uint64_t deaths_unrecorded;          /* deaths that left no exit record (exit_info: false) */
    double held_after_leave_us; /* owners (docs/results.md "owners"), summed */
    uint64_t leaked_sessions;
    uint64_t svc_deaths, svc_failed; /* processes (docs/results.md "processes"), summed */
    double svc_alive_us;
    /* iOS page model (docs/results.md "jetsam") */
    uint64_t by_jetsam[MDL_JETSAM_COUNT];     /* the app's deaths by cause */
    uint64_t jetsam_kills[MDL_JETSAM_COUNT];  /* memorystatus's kills of any process */
    uint64_t successor_kills;
    /* the app's mapped file pages at their highest (the weights no rule counts) */
    int64_t file_peak_max;
    double file_peak_sum;
    double death_hot_sum;                /* first memory deaths' hot mapped weights, summed */
    /* generation parts (docs/results.md "generation") */
    uint64_t gen_requests, context_overflow, kv_lines, tokens_out, gen_started;
    double decode_us, kv_peak_sum;
    int64_t kv_peak_max;
    uint64_t ttft[MDL_SLOWDOWN_BUCKETS]; /* requests by time to first token (mdl_ttft_bucket) */
    uint64_t tps[MDL_SLOWDOWN_BUCKETS];  /* ... by decode tokens per second (mdl_tps_bucket) */
    /* TTFT p50, p95 (us), tokens/s p50, p5 (-1: none); exact, or buckets' middles */
    double ttft_q[2], tps_q[2];
    double tps_ci[2]; /* tokens/s p50's 95% interval (distribution-free, by rank) */
    int gen_exact;
} res_cell;

/* The lmkd reason of most of the app's lmkd deaths in a PSI-mode cell (the
 * earliest reason on a tie), -1 when none. */
int res_lmkd_kills_first(const res_cell *c);
/* The median counted bytes at the app's lmkd deaths (a bucket's middle),
 * -1 when none. */
double res_lmkd_counted_p50(const res_cell *c);

/* A paired comparison of a cell with its baseline (the first cell of the
 * same device and candidate) over the same replications (docs/results.md
 * "comparisons"; docs/results.md says how each metric is paired). */
typedef enum res_metric {
    RES_CMP_PEAK_P95 = 0,   /* peak.app_bytes.p95 */
    RES_CMP_ANY_RATE,       /* deaths.any_rate */
    RES_CMP_LATENCY_P95,    /* requests.latency_us.p95 */
    RES_CMP_AVAILABILITY,   /* availability.mean */
    RES_CMP_COUNT
} res_metric;

const char *res_metric_name(res_metric m);

typedef struct res_comparison {
    res_metric metric;
    unsigned baseline, cell;
    double diff;                         /* cell - baseline */
    res_interval ci;                     /* 95 % */
    uint64_t pairs;                      /* replication pairs used */
} res_comparison;

/* Bootstrap resamples for the quantile comparisons. */
#define RES_BOOTSTRAP 1000u

typedef struct res_result {
    res_cell *cells;                     /* ncells, owned */
    unsigned ncells;
    res_comparison *cmp;                 /* ncmp, owned; cell order, metric order */
    unsigned ncmp;
    uint64_t events;                     /* engine events over the whole run */
    const struct res_headroom *headroom; /* ncells, from --headroom (NULL: none; not owned) */
    const struct res_context *contexts;  /* one per decision (NULL: none; not owned) */
    unsigned ncontexts;
} res_result;

/* Called after each batch of replications (progress); may be NULL. */
typedef void (*res_progress_fn)(void *ctx, uint64_t done, uint64_t total);

/* Runs plan->replications replications of every cell on `threads` threads
 * (0: one) and aggregates them, the same bytes for any thread count: SIM_OK,
 * the failing replication's error (naming cell and replication), or
 * SIM_EINTR when plan->stop was set (*out then empty); progress after each
 * batch.  In an MPI job every rank calls it with the same plan (checked);
 * rank 0 gathers and alone gets the result (a job of one's, byte for byte)
 * and calls progress; every rank returns the same status ("rank 2: ..."). */
int res_run(const res_plan *plan, unsigned threads, res_progress_fn progress, void *ctx,
            res_result *out, sim_error *err);
void res_result_free(res_result *r);

/* --headroom (headroom.c, docs/devices.md): per cell, in `steps` plan runs, the largest
 * factor on the candidate's memory (`memory` bytes at 1) meeting the target (0: none), the
 * first that failed (upper), the deaths there; capped at 16; out[0].runs the runs. */
typedef struct res_headroom {
    double factor, upper, memory, deaths;
    res_interval deaths_ci;
    int capped, deaths_miss, latency_miss; /* what failed at upper */
    unsigned runs;
} res_headroom;
int res_headroom_find(const res_plan *plan, unsigned threads, unsigned steps, res_headroom *out,
                      sim_error *err);

/* --------------------------------------------------------- checkpoints */

/* A checkpoint read from a file (checkpoint.c, docs/results.md
 * "Checkpoints"): the folded state of a run part-way. */
typedef struct res_resume res_resume;

/* Checkpoints of a run (res_plan.checkpoint): after a round of replications
 * (BATCH per rank) once `period` s passed (0: every round), or when
 * *request is set (a signal's number) on any rank, every cell's state is
 * written to `path` whole or not at all; after a requested one res_run
 * returns SIM_EINTR.  With `resume` the run continues from it and gives
 * the uninterrupted run's bytes, whatever the threads and ranks. */
typedef struct res_checkpoint {
    const char *path;                     /* NULL: write none */
    double period;                        /* seconds */
    const volatile sig_atomic_t *request; /* may be NULL */
    const res_resume *resume;             /* may be NULL */
    uint64_t written, done; /* out: checkpoints written; replications done (all cells) */
    int signal;    /* the request that stopped the run (the largest over the ranks) */
} res_checkpoint;

/* Reads the checkpoint at path for this plan: SIM_OK, or SIM_EINPUT saying
 * why it cannot be resumed from (not a checkpoint; truncated or corrupt,
 * by its CRC-32; of another run: what differs, among version, record
 * sizes, scenario digest, seed, replications, horizon, cells and values
 * kept), or the read's error.  It reads at most res_checkpoint_bound(). */
int res_resume_load(const res_plan *plan, const char *path, res_resume **out, sim_error *err);
/* The same from len bytes in memory (copied); name stands for the file. */
int res_resume_parse(const res_plan *plan, const void *data, size_t len, const char *name,
                     res_resume **out, sim_error *err);
void res_resume_free(res_resume *r);
/* Where it stopped: the cell, and the replications of that cell done. */
void res_resume_where(const res_resume *r, unsigned *cell, uint64_t *done);
/* The largest checkpoint this plan can have, in bytes (docs/results.md gives the sum). */
uint64_t res_checkpoint_bound(const res_plan *plan);

/* --------------------------------------------------------------- field */

/* A cell against the fleet's observation of its device (field.c,
 * docs/field.md): f is NULL when the plan has none for the device. */
typedef enum res_field_verdict { RES_FIELD_AGREES = 0, RES_FIELD_HIGHER, RES_FIELD_LOWER }
    res_field_verdict;
typedef struct res_field_rate {
    /* the share of replications with such a death, of device-days (predicted), the field's */
    double session_rate, predicted, observed;
    res_interval session_ci, predicted_ci, observed_ci;
    res_field_verdict verdict;    /* the intervals overlap, or which side the prediction is */
} res_field_rate;
typedef struct res_field_cmp {
    const mdl_field *f;
    res_field_rate visible;       /* a low_memory death in the foreground */
    res_field_rate background;    /* f->has_background: one in the background (system_reclaim too) */
} res_field_cmp;
void res_field_compare(const res_plan *plan, unsigned i, const res_cell *c, res_field_cmp *out);
const char *res_field_verdict_name(res_field_verdict v);

#include "results/decide.h"

/* ----------------------------------------------------------- documents */

/* The result document of docs/results.md as JSON text (malloc'ed, no
 * trailing newline), or NULL when out of memory. */
char *res_document_json(const res_plan *plan, const res_result *r);
/* One CSV row per cell, with a header line. */
char *res_document_csv(const res_plan *plan, const res_result *r);
/* The aligned comparison table for a person. */
char *res_document_table(const res_plan *plan, const res_result *r);
/* A line of cell i's --headroom, and of a device's provenance (tables.c). */
void res_headroom_text(sim_text *o, const char *indent, const res_plan *plan,
                       const res_result *r, unsigned i);
void res_provenance_text(sim_text *o, const char *indent, const mdl_device *d);

/* --------------------------------------------------------------- plots */

/* One replication's memory timeline (plot.c), from the world's events:
 * columns over the horizon, each the memory by category at its highest
 * moment; the stage bands, and marks for deaths, warnings, cached-app
 * kills, recoveries (the first BANDS / MARKS; the rest counted). */
#define RES_TIMELINE_COLUMNS 1000
#define RES_TIMELINE_BANDS 512
#define RES_TIMELINE_MARKS 512
typedef struct res_timeline res_timeline;

typedef struct res_timeline_info {
    uint64_t events, deaths, warnings, cached_kills, recoveries;
    uint64_t bands, bands_dropped, marks_dropped;
    int64_t peak_counted;                /* highest counted memory seen, bytes */
    sim_time peak_time;
    int64_t peak_mem[TRC_MEM_COUNT];     /* by category at that moment */
    /* an LLM's KV caches at their highest, the weights of the last
     * generation part loaded (mapped, repacked, gpu) */
    int64_t kv_max, weights[3];
    int has_weights;
} res_timeline_info;

/* A JetsamEvent of the iOS page model as the `.ips` file iOS keeps
 * (results/ips_write.c; docs/traces.md): the header line, then the
 * report (no newline at the end); `app` names the app's process, `device`
 * the product; rep and k (the report's index) make its incident id.
 * *text is malloc'ed. */
/* Its file name as iOS names them, JetsamEvent-1970-01-01-000502.ips, with
 * -same added for a later report of the same second (same > 0). */
void res_ips_name(sim_time t, unsigned same, char *buf, size_t n);
int res_ips_format(const mdl_jetsam_event *ev, const char *app, const char *device, uint64_t rep,
                   unsigned k, char **text, size_t *len, sim_error *err);

res_timeline *res_timeline_create(const mdl_device *dev, sim_time horizon);
/* The kill lines t draws: as res_chrome_lines. */
void res_timeline_lines(res_timeline *t, const mdl_cell *cell);
/* An mdl_trace_sink function (ctx: the timeline). */
int res_timeline_add(void *ctx, const trc_event *e, sim_error *err);
/* The end of the replication: what was announced is made, open stages
 * end, the last state runs to the horizon.  Call once, after the run. */
void res_timeline_finish(res_timeline *t);
void res_timeline_info_get(const res_timeline *t, res_timeline_info *out);
void res_timeline_free(res_timeline *t);
/* The same timeline in the JSON trace event format the Perfetto UI opens
 * (chrome.c, docs/perfetto.md): memory counters by category, the counted
 * total and the kill line in force, a slice per stage and part and per
 * request on its session slot, instants for deaths (the exit record in
 * args), warnings, cached-app kills, pressure spikes and the other notes.
 * Created for the device as the cell's policy puts it in force. */
typedef struct res_chrome res_chrome;
res_chrome *res_chrome_create(const mdl_device *dev);
/* The kill lines c draws: those of the process cell's model runs in (its
 * service's, with `processes`: mdl_cell_model_line); NULL c: nothing. */
void res_chrome_lines(res_chrome *c, const mdl_cell *cell);
/* An mdl_trace_sink function (ctx: the writer). */
int res_chrome_add(void *ctx, const trc_event *e, sim_error *err);
/* Ends the slices still open at `end`, names the process (`title`) and
 * its threads and hands over the document (*text, malloc'ed, *len bytes).
 * Call once. */
int res_chrome_finish(res_chrome *c, sim_time end, const char *title, char **text, size_t *len,
                      sim_error *err);
void res_chrome_free(res_chrome *c);

/* Runs replication `rep` of the cell traced into a new timeline (*out,
 * freed by the caller); *r gets the replication's metrics.  With `also`
 * (may be NULL) the same events go to that JSON trace writer. */
int res_timeline_run(const mdl_cell *cell, uint64_t rep, res_timeline **out, mdl_rep *r,
                     res_chrome *also, sim_error *err);

/* SIM_OK when PLplot has its svg device, else SIM_EIO saying so. */
int res_plot_available(sim_error *err);

/* The plots as SVG text (malloc'ed, *len bytes), NULL out of memory.
 * PLplot keeps global state: call them from one thread at a time. */
char *res_plot_timeline(const res_timeline *t, const char *title, size_t *len);
/* The peak CDFs of cells first .. first + count - 1 (at most
 * RES_PLOT_SERIES lines in one plot). */
#define RES_PLOT_SERIES 12
char *res_plot_peak_cdf(const res_plan *plan, const res_result *r, unsigned first,
                        unsigned count, size_t *len);
/* Each cell's peak p95, death rate with its Wilson interval, latency p95. */
char *res_plot_comparison(const res_plan *plan, const res_result *r, size_t *len);

/* "sessions=2 residency=preload" from a policy's JSON ("-" without axes).
 * SIM_OK, or SIM_ENOMEM (the label is then not to be shown). */
int res_policy_label(const char *json, char *buf, size_t n);
/* A cell's name from what varies across the plan: "android-3g /
 * residency=preload" (device, candidate, policy, as they differ).  SIM_OK
 * or SIM_ENOMEM, as res_policy_label. */
int res_cell_label(const res_plan *plan, unsigned i, char *buf, size_t n);

/* -------------------------------------------------------------- report */

/* A plot for the report: its file name, a caption, its SVG text. */
typedef struct res_figure {
    char name[64];
    char caption[512];
    char *svg;
    size_t len;
    /* a timeline's: the same replication as a JSON trace for the Perfetto
     * UI (NULL for the other figures) */
    char json_name[64];
    char *json;
    size_t json_len;
} res_figure;

/* The report's figures, in order, each drawn now: the cells compared, the
 * peak CDFs, and the timeline of replication `rep` of each cell (of the
 * first cell of each device and candidate past 16 cells).  Returns SIM_OK
 * with *out (res_figures_free) and *n, or a SIM_E* code with err set
 * (plots not available, a timeline's run failed, out of memory) and
 * nothing to free. */
int res_figures(const res_plan *plan, const res_result *r, uint64_t rep, res_figure **out,
                unsigned *n, sim_error *err);
void res_figures_free(res_figure *f, unsigned n);

/* report.html: one self-contained page (no script, no network): the
 * scenario's about, the run, the cells table, the comparison table, each
 * figure inline with its caption.  Malloc'ed, NULL out of memory. */
char *res_report_html(const res_plan *plan, const res_result *r, const res_figure *figs,
                      unsigned nfigs);

#ifdef __cplusplus
}
#endif

#endif /* OOMSIM_RESULTS_H */
