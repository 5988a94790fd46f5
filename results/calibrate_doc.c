/* calibrate_doc.c - what `oomsim calibrate -o DIR` writes of a fit
 * (docs/calibration.md): the calibration document (calibration.json) and
 * the page (report.html: the unknowns, the field entries before and after,
 * the likelihood, the held-out rows and the plot of predicted against
 * observed), and each value told in its unit. */
#include "calibrate.h"
#include "internal.h"
#include "render_int.h"
#include "traces/json.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

void res_cal_value(char *out, size_t n, mdl_knob_unit unit, double v)
{
    if (unit == MDL_KNOB_BYTES || unit == MDL_KNOB_RATE)
        snprintf(out, n, "%.0f MiB%s", v / 1048576.0, unit == MDL_KNOB_RATE ? "/s" : "");
    else if (unit == MDL_KNOB_TIME)
        snprintf(out, n, "%.1f s", v / 1e6);
    else
        snprintf(out, n, "%.2f", v);
}

/* ---- the document ---- */

static json_t *interval(res_interval ci)
{
    return json_pack("[f, f]", ci.lo, ci.hi);
}

static json_t *unknowns_json(const res_calibration *c, const mdl_unknown *u)
{
    json_t *a = json_array();
    for (unsigned j = 0; a != NULL && j < c->nu; j++) {
        const res_cal_unknown *x = &c->u[j];
        mdl_knob_unit unit = mdl_knob_unit_of(u[j].knob);
        json_t *o = json_pack("{s:s, s:s, s:f, s:b}", "key", u[j].key, "unit",
                              unit == MDL_KNOB_BYTES  ? "bytes"
                              : unit == MDL_KNOB_RATE ? "bytes/s"
                              : unit == MDL_KNOB_TIME ? "us"
                                                      : "ratio",
                              "start", x->start, "identifiable", x->identifiable);
        if (o != NULL && x->identifiable) {
            json_object_set_new(o, "fitted", json_real(x->fitted));
            json_object_set_new(o, "interval", json_pack("[f, f]", x->lo, x->hi));
            json_object_set_new(o, "at_bound", x->at_bound < 0   ? json_string("lower")
                                               : x->at_bound > 0 ? json_string("upper")
                                                                 : json_null());
        }
        if (o == NULL || json_array_append_new(a, o) != 0) {
            json_decref(a);
            return NULL;
        }
    }
    return a;
}

void res_cal_entry_label(const res_cal_entry *e, char *out, size_t n)
{
    snprintf(out, n, "%s%s", e->device, e->background ? " (background)" : "");
}

static json_t *entries_json(const res_calibration *c)
{
    json_t *a = json_array();
    for (unsigned k = 0; a != NULL && k < c->nentries; k++) {
        const res_cal_entry *e = &c->e[k];
        json_t *o = json_pack("{s:s, s:s, s:I, s:I, s:f, s:o, s:f, s:o, s:f, s:o}", "device",
                              e->device, "rate", e->background ? "background" : "visible",
                              "users", (json_int_t)e->users, "observed_users",
                              (json_int_t)e->observed_users, "observed", e->observed,
                              "observed_ci", interval(e->observed_ci), "before", e->before,
                              "before_ci", interval(e->before_ci), "after", e->after, "after_ci",
                              interval(e->after_ci));
        if (o == NULL || json_array_append_new(a, o) != 0) {
            json_decref(a);
            return NULL;
        }
    }
    return a;
}

static json_t *pairs_json(const res_calibration *c, const mdl_unknown *u)
{
    json_t *a = json_array();
    for (unsigned i = 0; a != NULL && i < c->nu; i++)
        for (unsigned k = i + 1; k < c->nu; k++) {
            if (!c->u[i].identifiable || !c->u[k].identifiable)
                continue;
            json_t *o = json_pack("{s:[s, s], s:f, s:b}", "keys", u[i].key, u[k].key,
                                  "correlation", c->corr[i][k], "ridge",
                                  fabs(c->corr[i][k]) >= 0.9);
            if (o == NULL || json_array_append_new(a, o) != 0) {
                json_decref(a);
                return NULL;
            }
        }
    return a;
}

static json_t *holdout_json(const res_calibration *c, const res_cal_holdout *h, unsigned n)
{
    json_t *a = json_array();
    for (unsigned k = 0; a != NULL && k < n; k++) {
        const res_cal_entry *e = &c->e[h[k].entry];
        json_t *o = json_pack("{s:s, s:s, s:b}", "device", e->device, "rate",
                              e->background ? "background" : "visible", "fitted", h[k].fitted);
        if (o != NULL && h[k].fitted) {
            json_object_set_new(o, "predicted", json_real(h[k].predicted));
            json_object_set_new(o, "predicted_ci", interval(h[k].ci));
            json_object_set_new(o, "inside", json_boolean(h[k].inside));
        }
        if (o == NULL || json_array_append_new(a, o) != 0) {
            json_decref(a);
            return NULL;
        }
    }
    return a;
}

char *res_calibration_json(const res_calibration *c, const mdl_unknown *u,
                           const res_cal_holdout *h, unsigned n)
{
    json_t *doc = json_pack("{s:o, s:o, s:o, s:f, s:f, s:f, s:I, s:o, s:I, s:I, s:I, s:f, s:b}",
                            "unknowns", unknowns_json(c, u), "entries", entries_json(c),
                            "pairs", pairs_json(c, u), "loglik_start", c->loglik_start,
                            "loglik", c->loglik, "deviance", c->deviance, "df",
                            (json_int_t)c->df, "gof_p",
                            isnan(c->gof_p) ? json_null() : json_real(c->gof_p),
                            "replications", (json_int_t)c->replications, "evaluations",
                            (json_int_t)c->evaluations, "plan_runs", (json_int_t)c->plan_runs,
                            "noise_share", c->noise_share, "converged", c->converged);
    if (doc != NULL && n > 0) {
        json_t *a = holdout_json(c, h, n);
        if (a == NULL || json_object_set_new(doc, "holdout", a) != 0) {
            json_decref(doc);
            return NULL;
        }
    }
    char *text = doc != NULL ? trc_json_dumps(doc, JSON_INDENT(2) | JSON_REAL_PRECISION(6))
                             : NULL;
    json_decref(doc);
    return text;
}

/* ---- the page ---- */

static void pct(res__text cell, double v)
{
    snprintf(cell, RES_TEXT_MAX, "%.2f %%", 100 * v);
}

static void pct_ci(res__text cell, res_interval ci)
{
    snprintf(cell, RES_TEXT_MAX, "%.2f to %.2f %%", 100 * ci.lo, 100 * ci.hi);
}

static int unknowns_table(const res_calibration *c, const mdl_unknown *u, res__table *t)
{
    static const char *const head[] = {"unknown", "start", "fitted", "95 % interval", "note"};
    static const int right[] = {0, 1, 1, 1, 0};
    if (res__table_alloc(t, c->nu + 1, 5, head, right) != SIM_OK)
        return SIM_ENOMEM;
    for (unsigned j = 0; j < c->nu; j++) {
        const res_cal_unknown *x = &c->u[j];
        res__text *row = &t->cell[(j + 1) * 5];
        mdl_knob_unit unit = mdl_knob_unit_of(u[j].knob);
        char lo[32], hi[32];
        snprintf(row[0], RES_TEXT_MAX, "%s", u[j].key);
        res_cal_value(row[1], RES_TEXT_MAX, unit, x->start);
        if (!x->identifiable) {
            snprintf(row[2], RES_TEXT_MAX, "-");
            snprintf(row[4], RES_TEXT_MAX, "not identifiable from these rates (left at its "
                     "start)");
            continue;
        }
        res_cal_value(row[2], RES_TEXT_MAX, unit, x->fitted);
        res_cal_value(lo, sizeof lo, unit, x->lo);
        res_cal_value(hi, sizeof hi, unit, x->hi);
        snprintf(row[3], RES_TEXT_MAX, "%s to %s", lo, hi);
        snprintf(row[4], RES_TEXT_MAX, "%s", x->at_bound < 0 ? "at its lower bound: the rates "
                                             "ask for less"
                                             : x->at_bound > 0 ? "at its upper bound: the rates "
                                                                 "ask for more"
                                                               : "");
    }
    return SIM_OK;
}

static int entries_table(const res_calibration *c, res__table *t)
{
    static const char *const head[] = {"field entry", "users", "observed", "95 % interval",
                                       "before", "95 % interval", "after", "95 % interval"};
    static const int right[] = {0, 1, 1, 1, 1, 1, 1, 1};
    if (res__table_alloc(t, c->nentries + 1, 8, head, right) != SIM_OK)
        return SIM_ENOMEM;
    for (unsigned k = 0; k < c->nentries; k++) {
        const res_cal_entry *e = &c->e[k];
        res__text *row = &t->cell[(k + 1) * 8];
        res_cal_entry_label(e, row[0], RES_TEXT_MAX);
        snprintf(row[1], RES_TEXT_MAX, "%llu", (unsigned long long)e->users);
        pct(row[2], e->observed), pct_ci(row[3], e->observed_ci);
        pct(row[4], e->before), pct_ci(row[5], e->before_ci);
        pct(row[6], e->after), pct_ci(row[7], e->after_ci);
    }
    return SIM_OK;
}

static int holdout_table(const res_calibration *c, const res_cal_holdout *h, unsigned n,
                         res__table *t)
{
    static const char *const head[] = {"field entry", "observed", "predicted without it",
                                       "95 % interval", "inside"};
    static const int right[] = {0, 1, 1, 1, 0};
    if (res__table_alloc(t, n + 1, 5, head, right) != SIM_OK)
        return SIM_ENOMEM;
    for (unsigned k = 0; k < n; k++) {
        const res_cal_entry *e = &c->e[h[k].entry];
        res__text *row = &t->cell[(k + 1) * 5];
        res_cal_entry_label(e, row[0], RES_TEXT_MAX);
        pct(row[1], e->observed);
        if (!h[k].fitted) {
            snprintf(row[2], RES_TEXT_MAX, "-");
            row[3][0] = '\0';
            snprintf(row[4], RES_TEXT_MAX, "nothing left to fit on without it");
            continue;
        }
        pct(row[2], h[k].predicted), pct_ci(row[3], h[k].ci);
        snprintf(row[4], RES_TEXT_MAX, "%s", h[k].inside ? "yes" : "no");
    }
    return SIM_OK;
}

/* The likelihood, the goodness of fit, the fit's noise and its cost. */
static void fit_summary(sim_text *o, const res_calibration *c, const mdl_unknown *u)
{
    sim_text_printf(o, "<p id=\"likelihood\">Log-likelihood %.2f at the start, %.2f at the "
                    "fit; deviance %.2f on %u degree%s of freedom", c->loglik_start, c->loglik,
                    c->deviance, c->df, SIM_S(c->df));
    if (isnan(c->gof_p))
        sim_text_printf(o, " (no degree left for a goodness-of-fit test).");
    else
        sim_text_printf(o, ", p = %.3g%s.", c->gof_p,
                        c->gof_p < 0.05 ? ": no value inside the bounds makes the model agree "
                                          "with every entry" : "");
    sim_text_printf(o, " The simulation's noise on the predicted rates is %.2f of the observed "
                    "rates' (target 0.1); %u points in %u plan runs, the last at %llu "
                    "replications.</p>\n", c->noise_share, c->evaluations, c->plan_runs,
                    (unsigned long long)c->replications);
    for (unsigned i = 0; i < c->nu; i++)
        for (unsigned k = i + 1; k < c->nu; k++)
            if (c->u[i].identifiable && c->u[k].identifiable && fabs(c->corr[i][k]) >= 0.9) {
                sim_text_printf(o, "<p class=\"ridge\">");
                res__html_text(o, u[i].key);
                sim_text_printf(o, " and ");
                res__html_text(o, u[k].key);
                sim_text_printf(o, " trade off (a ridge: correlation %.2f): the rates fix a "
                                "combination of the two, not each.</p>\n", c->corr[i][k]);
            }
}

char *res_calibration_html(const char *plan, const res_calibration *c, const mdl_unknown *u,
                           const res_cal_holdout *h, unsigned n, const char *svg, size_t len)
{
    res__table tu = {0}, te = {0}, th = {0};
    int ok = unknowns_table(c, u, &tu) == SIM_OK && entries_table(c, &te) == SIM_OK &&
             (n == 0 || holdout_table(c, h, n, &th) == SIM_OK);
    sim_text o = {NULL, 0, 0, !ok};
    char title[MDL_NAME_MAX + 32];
    snprintf(title, sizeof title, "%s, calibrated", plan);
    res__html_begin(&o, title);
    unsigned bg = 0;
    for (unsigned e = 0; e < c->nentries; e++)
        bg += c->e[e].background != 0;
    sim_text_printf(&o, "<p id=\"run\">%u unknown%s fitted to the rates of %u field entr%s: "
                    "each the share of users with at least one visible memory death a day%s "
                    "(docs/calibration.md says how to read the intervals).</p>\n", c->nu,
                    SIM_S(c->nu), c->nentries - bg, c->nentries - bg == 1 ? "y" : "ies",
                    bg > 0 ? ", and for those marked background the share with one while the "
                             "app was in the background" : "");
    sim_text_printf(&o, "<section id=\"unknowns\">\n<h2>The unknowns</h2>\n");
    if (ok)
        res__html_table(&o, "unknowns-table", &tu);
    fit_summary(&o, c, u);
    sim_text_printf(&o, "</section>\n<section id=\"entries\">\n<h2>Each field entry, before "
                    "and after</h2>\n");
    if (ok)
        res__html_table(&o, "entries-table", &te);
    if (svg != NULL)
        res__html_figure(&o, "calibration.svg", svg, len, "Each field entry's predicted rate "
                         "against its observed one, at the plan's values (before) and at the "
                         "fit (after), with their 95 % intervals; on the dashed line the two "
                         "agree", 0);
    sim_text_printf(&o, "</section>\n");
    if (n > 0 && ok) {
        sim_text_printf(&o, "<section id=\"holdout\">\n<h2>Held out</h2>\n<p>Each entry left "
                        "out of a refit, then predicted at the refit's values: does its "
                        "observed rate fall inside the prediction's interval?</p>\n");
        res__html_table(&o, "holdout-table", &th);
        sim_text_printf(&o, "</section>\n");
    }
    sim_text_printf(&o, "</body>\n</html>\n");
    res__table_free(&tu);
    res__table_free(&te);
    res__table_free(&th);
    return res__text_done(&o);
}

/* ---- the checkpoint ---- */

void res_cal_log_free(res_cal_log *l)
{
    for (unsigned i = 0; l->run != NULL && i < l->n; i++)
        free(l->run[i].k);
    free(l->run);
    memset(l, 0, sizeof *l);
}

static json_t *hex(uint64_t v)
{
    char s[17];
    snprintf(s, sizeof s, "%016llx", (unsigned long long)v);
    return json_string(s);
}

/* m counts as a JSON list, or NULL. */
static json_t *counts_json(const uint64_t *v, unsigned m)
{
    json_t *a = json_array();
    for (unsigned c = 0; a != NULL && c < m; c++)
        if (json_array_append_new(a, json_integer((json_int_t)v[c])) != 0) {
            json_decref(a);
            a = NULL;
        }
    return a;
}

char *res_cal_log_json(const res_cal_log *l, uint64_t plan_digest)
{
    json_t *runs = json_array();
    for (unsigned i = 0; runs != NULL && i < l->n; i++) {
        const res_cal_run *r = &l->run[i];
        json_t *k = counts_json(r->k, r->m), *b = counts_json(r->k + r->m, r->m);
        json_t *o = k != NULL && b != NULL
                        ? json_pack("{s:I, s:o, s:o, s:o}", "reps", (json_int_t)r->reps, "digest",
                                    hex(r->digest), "k", k, "background", b)
                        : NULL;
        if (o == NULL)
            json_decref(k), json_decref(b);
        if (o == NULL || json_array_append_new(runs, o) != 0) {
            json_decref(runs);
            runs = NULL;
        }
    }
    json_t *doc = runs != NULL ? json_pack("{s:s, s:i, s:o, s:o}", "checkpoint",
                                           "oomsim calibrate", "version", 2, "plan",
                                           hex(plan_digest), "runs", runs)
                               : NULL;
    char *text = doc != NULL ? trc_json_dumps(doc, JSON_COMPACT) : NULL;
    json_decref(doc);
    return text;
}

/* A hex digest of 16 digits. */
static int hex_of(const json_t *v, uint64_t *out)
{
    const char *s = json_string_value(v);
    char *end = NULL;
    if (s == NULL || strlen(s) != 16)
        return 0;
    *out = strtoull(s, &end, 16);
    return *end == '\0';
}

/* Run i of the checkpoint: its replications, digest and counts. */
static int run_of(const json_t *o, unsigned i, const char *file, res_cal_run *r,
                  sim_error *err)
{
    json_t *reps = json_object_get(o, "reps"), *k = json_object_get(o, "k");
    json_t *b = json_object_get(o, "background");
    json_int_t n = json_integer_value(reps);
    if (!json_is_integer(reps) || n < 1 || n > 10000000000LL)
        return sim_error_set(err, SIM_EINPUT, "%s: runs[%u].reps: a whole number of "
                             "replications from 1 to 10^10", file, i);
    if (!hex_of(json_object_get(o, "digest"), &r->digest))
        return sim_error_set(err, SIM_EINPUT, "%s: runs[%u].digest: 16 hex digits", file, i);
    size_t m = json_array_size(k);
    if (!json_is_array(k) || m == 0 || m > RES_CAL_CELLS_MAX)
        return sim_error_set(err, SIM_EINPUT, "%s: runs[%u].k: 1 to %d counts", file, i,
                             RES_CAL_CELLS_MAX);
    if (!json_is_array(b) || json_array_size(b) != m)
        return sim_error_set(err, SIM_EINPUT, "%s: runs[%u].background: as many counts as k",
                             file, i);
    r->reps = (uint64_t)n;
    r->k = malloc(2 * m * sizeof *r->k);
    if (r->k == NULL)
        return sim_error_set(err, SIM_ENOMEM, "out of memory");
    r->m = (unsigned)m;
    for (size_t c = 0; c < 2 * m; c++) {
        json_t *v = json_array_get(c < m ? k : b, c % m);
        if (!json_is_integer(v) || json_integer_value(v) < 0 || json_integer_value(v) > n)
            return sim_error_set(err, SIM_EINPUT, "%s: runs[%u].%s[%zu]: a count from 0 to "
                                 "the run's replications", file, i, c < m ? "k" : "background",
                                 c % m);
        r->k[c] = (uint64_t)json_integer_value(v);
    }
    return SIM_OK;
}

int res_cal_log_parse(const char *text, size_t len, const char *file, uint64_t plan_digest,
                      res_cal_log *l, sim_error *err)
{
    memset(l, 0, sizeof *l);
    json_error_t je;
    json_t *doc = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
    if (doc == NULL)
        return sim_error_set(err, SIM_EINPUT, "%s:%d:%d: not a calibrate checkpoint: %s", file,
                             je.line, je.column, je.text);
    uint64_t plan = 0;
    json_t *runs = json_object_get(doc, "runs");
    const char *what = json_string_value(json_object_get(doc, "checkpoint"));
    int rc = SIM_OK;
    if (!json_is_object(doc) || what == NULL || strcmp(what, "oomsim calibrate") != 0 ||
        json_integer_value(json_object_get(doc, "version")) != 2)
        rc = sim_error_set(err, SIM_EINPUT, "%s: not a checkpoint of oomsim calibrate, "
                           "version 2", file);
    else if (!hex_of(json_object_get(doc, "plan"), &plan))
        rc = sim_error_set(err, SIM_EINPUT, "%s: plan: 16 hex digits", file);
    else if (plan != plan_digest)
        rc = sim_error_set(err, SIM_EINPUT, "%s: a checkpoint of another plan (its files have "
                           "changed since): start again without --resume", file);
    else if (!json_is_array(runs) || json_array_size(runs) > RES_CAL_RUNS_MAX)
        rc = sim_error_set(err, SIM_EINPUT, "%s: runs: a list of at most %d runs", file,
                           RES_CAL_RUNS_MAX);
    size_t n = rc == SIM_OK ? json_array_size(runs) : 0;
    if (n > 0 && (l->run = calloc(n, sizeof *l->run)) == NULL)
        rc = sim_error_set(err, SIM_ENOMEM, "out of memory");
    for (size_t i = 0; rc == SIM_OK && i < n; i++) {
        json_t *o = json_array_get(runs, i);
        l->n = l->cap = (unsigned)i + 1;
        rc = json_is_object(o) ? run_of(o, (unsigned)i, file, &l->run[i], err)
                               : sim_error_set(err, SIM_EINPUT, "%s: runs[%zu]: an object",
                                               file, i);
    }
    json_decref(doc);
    if (rc != SIM_OK)
        res_cal_log_free(l);
    return rc;
}
