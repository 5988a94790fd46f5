/* internal.h - what the documents, the plots and the report share inside
 * results/: a growing text buffer, the compact policy labels, and the two
 * tables (the cells, and each policy against its baseline) as cells of
 * text, which the table printer and the HTML report both render. */
#ifndef OOMSIM_RESULTS_INTERNAL_H
#define OOMSIM_RESULTS_INTERNAL_H

#include <stddef.h>

#include "results.h"

#define RES_MIB (1024.0 * 1024.0)

/* Documents are written into a sim_text (sim.h).  The text, with one
 * trailing newline removed, or NULL after an allocation failure (the
 * buffer is freed either way). */
char *res_text_done(sim_text *o);

/* The memory a stream of the world's trace events says the app held
 * (plot.c): rec is called with each state, in time order. */
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

/* The stage most often at the peak, or "-". */
const char *res_top_stage(const res_cell *c);

/* A table of text cells: rows x cols, row 0 the heading; right[k]: column
 * k holds numbers (right-aligned). */
#define RES_TEXT_MAX 256
typedef char res_text[RES_TEXT_MAX];
typedef struct res_table {
    res_text *cell;
    unsigned rows, cols;
    const int *right;
} res_table;

/* The cells table and the comparison table (one row per compared cell;
 * rows == 1 when there is nothing to compare).  SIM_OK, or SIM_ENOMEM. */
int res_cells_table(const res_plan *plan, const res_result *r, res_table *t);
int res_comparison_table(const res_plan *plan, const res_result *r, res_table *t);
/* The field comparison, one row per cell whose device has a field entry
 * (rows == 1 when none has), and the notes around it. */
int res_field_table(const res_plan *plan, const res_result *r, res_table *t);
extern const char res_field_intro[], res_field_note[];
/* The decision against the target, one row per device and candidate
 * (rows == 1 when the plan has no target). */
int res_decision_table(const res_plan *plan, const res_result *r, res_table *t);
void res_table_free(res_table *t);
/* A table of rows x cols with head[] as row 0. */
int res__table_alloc(res_table *t, unsigned rows, unsigned cols, const char *const *head,
                     const int *right);

/* The notes printed under each table. */
extern const char res_cells_note[], res_comparison_intro[], res_comparison_note[],
    res_decision_intro[];

#endif
