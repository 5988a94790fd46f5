/* render_int.h - what the rendering files of results/ share (document.c,
 * tables.c, plot.c, report.c): documents written into a text buffer, the
 * policies' compact labels, and the tables (the cells, each policy against
 * its baseline, the decision, the field comparison) as rows of text cells
 * that the table printer and the HTML report both render. */
#ifndef OOMSIM_RESULTS_RENDER_INT_H
#define OOMSIM_RESULTS_RENDER_INT_H

#include <stddef.h>

#include "results.h"

/* Documents are written into a sim_text (sim.h).  The text, with one
 * trailing newline removed, or NULL after an allocation failure (the
 * buffer is freed either way). */
char *res__text_done(sim_text *o);

/* The stage most often at the peak, or "-". */
const char *res__top_stage(const res_cell *c);

/* A table of text cells: rows x cols, row 0 the heading; right[k]: column
 * k holds numbers (right-aligned). */
#define RES_TEXT_MAX 256
typedef char res__text[RES_TEXT_MAX];
#define RES_TABLE_COLS_MAX 24
typedef struct res__table {
    res__text *cell;
    unsigned rows, cols;
    int right[RES_TABLE_COLS_MAX]; /* right-aligned columns */
} res__table;

/* The cells table and the comparison table (one row per compared cell;
 * rows == 1 when there is nothing to compare).  SIM_OK, or SIM_ENOMEM. */
int res__cells_table(const res_plan *plan, const res_result *r, res__table *t);
int res__comparison_table(const res_plan *plan, const res_result *r, res__table *t);
/* The field comparison, one row per cell whose device has a field entry
 * (rows == 1 when none has), and the notes around it. */
int res__field_table(const res_plan *plan, const res_result *r, res__table *t);
extern const char res__field_intro[], res__field_note[];
/* The note under the field table t: res__field_note, and what a background
 * row is when t has one. */
void res__field_note_of(const res__table *t, char *out, size_t n);
/* The decision against the target, one row per device and candidate
 * (rows == 1 when the plan has no target). */
int res__decision_table(const res_plan *plan, const res_result *r, res__table *t);
void res__table_free(res__table *t);
/* A table of rows x cols with head[] as row 0. */
int res__table_alloc(res__table *t, unsigned rows, unsigned cols, const char *const *head,
                     const int *right);

/* The notes printed under each table. */
/* A plan with a cell whose model runs in a service process: the note on
 * its `feature available` column follows the cells' note. */
extern const char res__processes_note[];
int res__plan_has_processes(const res_plan *plan);
extern const char res__cells_note[], res__comparison_intro[], res__comparison_note[],
    res__decision_intro[], res__context_note[];

/* The four tables of a result: SIM_OK, or SIM_ENOMEM (free them all the
 * same: a table not made is empty). */
typedef struct res__tables {
    res__table cells, cmp, dec, fld, gen;
} res__tables;
/* tables_gen.c: the LLM table (rows == 1 when no cell generates) */
int res__generation_table(const res_plan *plan, const res_result *r, res__table *t);
extern const char res__generation_intro[], res__generation_note[];
int res__tables_make(const res_plan *plan, const res_result *r, res__tables *t);
void res__tables_free(res__tables *t);

/* report.c, for the pages of other commands (calibrate's report.html):
 * the page's head, its style and the h1; text escaped for HTML; a table;
 * an SVG figure inline (k: its place on the page, which keeps its ids
 * apart from the other figures') with its caption and its id (its file
 * name). */
void res__html_begin(sim_text *o, const char *title);
void res__html_text(sim_text *o, const char *s);
void res__html_table(sim_text *o, const char *id, const res__table *t);
void res__html_figure(sim_text *o, const char *id, const char *svg, size_t len,
                      const char *caption, unsigned k);

#endif
