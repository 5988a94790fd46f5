/* internal.h - what the computing files of results/ share: the follow
 * rule (follow.c) that turns the world's trace events into memory states,
 * the histogram's buckets and the quantile sketch (stats.c).  What the
 * rendering files share is in render_int.h, the timeline's data in
 * timeline_int.h, the run's accumulators in run_int.h. */
#ifndef OOMSIM_RESULTS_INTERNAL_H
#define OOMSIM_RESULTS_INTERNAL_H

#include <stddef.h>

#include "results.h"

#define RES_MIB (1024.0 * 1024.0)

/* field.c, for calibrate.c: the field entry a device is held against (its
 * name's, else its RAM bucket's; NULL: none), and a session's probability
 * p over a day of s sessions (at least one). */
const mdl_field *res__field_entry(const res_plan *plan, const mdl_device *d);
double res__day_rate(double p, double s);

/* The memory a stream of the world's trace events says the app held
 * (follow.c; for timeline.c and chrome.c): rec is called with each state,
 * in time order. */
typedef void (*res__record_fn)(void *ctx, sim_time at, const int64_t m[TRC_MEM_COUNT]);
typedef struct res__memfollow {
    int64_t state[TRC_MEM_COUNT];
    int pending;                 /* an allocation announced at pending_t */
    sim_time pending_t;
    int64_t pend[TRC_MEM_COUNT]; /* the memory once it is made */
} res__memfollow;
void res__follow(res__memfollow *f, const trc_event *e, res__record_fn rec, void *ctx);
/* At the end: an allocation still announced is made. */
void res__follow_flush(res__memfollow *f, res__record_fn rec, void *ctx);

/* The histogram's bucket of v (values below 0 in bucket 0, values past
 * the last bucket in it), and the midpoint of bucket b (stats.c). */
unsigned res__hist_bucket(int64_t v);
int64_t res__hist_mid(unsigned b);

/* A cell's values past the replications whose values are kept (acc.cap,
 * run_int.h): counts in log-linear buckets 2^-10 wide relative to the
 * value (exact below 2048), either sign, so a quantile read from it is
 * within 0.05 % of the order statistic, in bounded memory.  Each side
 * (442 KiB) is allocated at its first value. */
typedef struct res__qhist {
    uint64_t *neg, *pos; /* counts of -v and of v */
    uint64_t n;
    double min, max;
} res__qhist;
/* Adds v (integral); SIM_OK, or SIM_ENOMEM (h unchanged). */
int res__qh_add(res__qhist *h, double v);
/* The p-quantile as res_quantile_sorted interpolates, each order
 * statistic read as its bucket's midpoint (within [min, max]). */
double res__qh_quantile(const res__qhist *h, double p);
void res__qh_free(res__qhist *h);

#endif
