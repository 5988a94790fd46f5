/* report.c - report.html: one page that needs nothing but itself (no
 * script, no style sheet or font from elsewhere, the plots inline as SVG):
 * the scenario's about, the run, the cells and the comparison tables, the
 * plots with their captions. */
#include "results.h"
#include "internal.h"
#include "render_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void escaped(sim_text *o, const char *s, size_t n)
{
    for (size_t i = 0; i < n && s[i] != '\0'; i++) {
        char c = s[i];
        if (c == '&')
            sim_text_printf(o, "&amp;");
        else if (c == '<')
            sim_text_printf(o, "&lt;");
        else if (c == '>')
            sim_text_printf(o, "&gt;");
        else if (c == '"')
            sim_text_printf(o, "&quot;");
        else
            sim_text_put(o, &c, 1);
    }
}

static void text(sim_text *o, const char *s)
{
    escaped(o, s, strlen(s));
}

/* The about text: paragraphs at blank lines. */
static void paragraphs(sim_text *o, const char *s)
{
    while (*s != '\0') {
        while (*s == '\n' || *s == ' ')
            s++;
        if (*s == '\0')
            break;
        const char *end = strstr(s, "\n\n");
        size_t n = end != NULL ? (size_t)(end - s) : strlen(s);
        sim_text_printf(o, "<p>");
        escaped(o, s, n);
        sim_text_printf(o, "</p>\n");
        s += n;
    }
}

/* An SVG put inline, its ids made unique to figure k: every id="X" becomes
 * id="fK-X" and every reference to it (url(#X), href="#X") follows.  In one
 * HTML document ids are shared by all inline SVGs, and PLplot numbers its
 * clip paths from 0 in each file: without the prefix every figure after the
 * first would be clipped by the first one's paths and lose its text. */
static void inline_svg(sim_text *o, const char *svg, size_t len, unsigned k)
{
    static const char *const marks[] = {" id=\"", "url(#", "href=\"#"};
    char prefix[16];
    int np = snprintf(prefix, sizeof prefix, "f%u-", k);
    size_t done = 0;
    for (size_t i = 0; i < len; i++) {
        for (size_t m = 0; m < sizeof marks / sizeof marks[0]; m++) {
            size_t n = strlen(marks[m]);
            if (n <= len - i && memcmp(svg + i, marks[m], n) == 0) {
                sim_text_put(o, svg + done, i + n - done);
                sim_text_put(o, prefix, (size_t)np);
                done = i + n;
                i += n - 1;
                break;
            }
        }
    }
    sim_text_put(o, svg + done, len - done);
}

static void table(sim_text *o, const char *id, const res__table *t)
{
    /* a wide table scrolls inside its own box, not the page */
    sim_text_printf(o, "<div class=\"wide\">\n<table id=\"%s\">\n<thead><tr>", id);
    for (unsigned k = 0; k < t->cols; k++) {
        sim_text_printf(o, "<th>");
        text(o, t->cell[k]);
        sim_text_printf(o, "</th>");
    }
    sim_text_printf(o, "</tr></thead>\n<tbody>\n");
    for (unsigned i = 1; i < t->rows; i++) {
        sim_text_printf(o, "<tr>");
        for (unsigned k = 0; k < t->cols; k++) {
            sim_text_printf(o, t->right[k] ? "<td class=\"n\">" : "<td>");
            text(o, t->cell[i * t->cols + k]);
            sim_text_printf(o, "</td>");
        }
        sim_text_printf(o, "</tr>\n");
    }
    sim_text_printf(o, "</tbody>\n</table>\n</div>\n");
}

/* What each cell did with its requests and how the system saw it. */
static void activity(sim_text *o, const res_plan *plan, const res_result *r)
{
    sim_text_printf(o, "<div class=\"wide\">\n<table id=\"activity-table\">\n<thead><tr><th>cell</th><th>requests</th>"
               "<th>completed</th><th>rejected</th><th>timed out</th><th>retried</th>"
               "<th>duplicate working sets</th><th>memory warnings</th>"
               "<th>cached apps killed</th><th>part switches</th><th>taking requests</th>"
               "<th>exit records (most frequent)</th></tr></thead>\n<tbody>\n");
    for (unsigned i = 0; i < r->ncells; i++) {
        const res_cell *c = &r->cells[i];
        char label[RES_TEXT_MAX];
        if (res_cell_label(plan, i, label, sizeof label) != SIM_OK)
            o->oom = 1;
        sim_text_printf(o, "<tr><td>");
        text(o, label);
        sim_text_printf(o, "</td><td class=\"n\">%llu</td><td class=\"n\">%llu</td><td class=\"n\">%llu"
                   "</td><td class=\"n\">%llu</td><td class=\"n\">%llu</td><td class=\"n\">%llu"
                   "</td><td class=\"n\">%llu</td><td class=\"n\">%llu</td><td class=\"n\">%llu"
                   "</td><td class=\"n\">%.2f%%</td><td>",
                (unsigned long long)c->arrived, (unsigned long long)c->completed,
                (unsigned long long)c->rejected, (unsigned long long)c->timed_out,
                (unsigned long long)c->retried, (unsigned long long)c->duplicates,
                (unsigned long long)c->warnings, (unsigned long long)c->cached_kills,
                (unsigned long long)c->switches, 100 * c->inference_availability);
        const mdl_record_kind_count *best = NULL;
        uint64_t total = 0;
        for (unsigned k = 0; k < c->nrecords; k++) {
            total += c->records[k].count;
            if (best == NULL || c->records[k].count > best->count)
                best = &c->records[k];
        }
        if (best == NULL && c->deaths_unrecorded > 0) {
            sim_text_printf(o, "none: the phone keeps no exit record (%llu deaths left none)",
                            (unsigned long long)c->deaths_unrecorded);
        } else if (best == NULL) {
            sim_text_printf(o, "none");
        } else {
            text(o, mdl_record_kind_name(best->kind));
            if (best->kind == MDL_REC_EXIT_INFO)
                sim_text_printf(o, " reason=%d (%s)", best->reason, mdl_aei_reason_name(best->reason));
            sim_text_printf(o, " status=%d importance=%d", best->status, best->importance);
            if (best->description != MDL_TEXT_NONE) {
                sim_text_printf(o, " ");
                text(o, mdl_record_text_name(best->description));
            }
            sim_text_printf(o, " (%llu of %llu)", (unsigned long long)best->count,
                    (unsigned long long)total);
        }
        sim_text_printf(o, "</td></tr>\n");
    }
    sim_text_printf(o, "</tbody>\n</table>\n</div>\n");
}

static const char style[] =
    "body{font-family:sans-serif;margin:2em auto;max-width:1400px;padding:0 1em;color:#222}"
    "h1{font-size:1.6em}h2{font-size:1.25em;margin-top:1.6em;border-bottom:1px solid #ccc}"
    "table{border-collapse:collapse;font-size:.85em;margin:.6em 0}"
    ".wide{overflow-x:auto;max-width:100%}"
    "th,td{border:1px solid #ccc;padding:.25em .5em;text-align:left;vertical-align:top}"
    "th{background:#f2f2f2}td.n{text-align:right;white-space:nowrap}"
    ".note{font-size:.85em;color:#555}figure{margin:1.2em 0}"
    "figure svg{width:100%;height:auto;border:1px solid #eee}"
    "figcaption{font-size:.9em;color:#333;margin-top:.3em}"
    "#activity-table td:last-child{min-width:26em}";

/* The decision against the target and the field comparison, when the
 * plan has them. */
/* A section of one table: its title, an introduction (and what ends it),
 * the table, the note under it. */
static void table_section(sim_text *o, const char *id, const char *title, const char *intro,
                          const char *intro_end, const char *table_id, const res__table *t,
                          const char *note)
{
    sim_text_printf(o, "<section id=\"%s\">\n<h2>%s</h2>\n<p>", id, title);
    text(o, intro);
    sim_text_printf(o, "%s</p>\n", intro_end);
    table(o, table_id, t);
    sim_text_printf(o, "<p class=\"note\">");
    text(o, note);
    sim_text_printf(o, "</p>\n</section>\n");
}

static void decision_sections(sim_text *o, const res_plan *plan, const res__table *dec,
                              const res__table *fld)
{
    if (dec->rows > 1) {
        char target[RES_TEXT_MAX];
        res_target_text(&plan->target, target, sizeof target);
        sim_text_printf(o, "<section id=\"decision\">\n<h2>Decision</h2>\n<p>");
        text(o, res__decision_intro);
        sim_text_printf(o, " ");
        text(o, target);
        sim_text_printf(o, "</p>\n");
        table(o, "decision-table", dec);
        if (dec->cols > 5) {
            sim_text_printf(o, "<p>");
            text(o, res__context_note);
            sim_text_printf(o, "</p>\n");
        }
        sim_text_printf(o, "</section>\n");
    }
    if (fld->rows > 1) {
        char note[1024];
        res__field_note_of(fld, note, sizeof note);
        table_section(o, "field", "Predicted against the field", res__field_intro, ".",
                      "field-table", fld, note);
    }
}

/* The cells, what they did, and each policy against its baseline. */
static void cell_sections(sim_text *o, const res_plan *plan, const res_result *r,
                          const res__table *cells, const res__table *cmp, const res__table *gen)
{
    sim_text_printf(o, "<section id=\"cells\">\n<h2>Cells</h2>\n");
    table(o, "cells-table", cells);
    sim_text_printf(o, "<p class=\"note\">");
    text(o, res__cells_note);
    sim_text_printf(o, "</p>\n");
    if (res__plan_has_processes(plan)) {
        sim_text_printf(o, "<p class=\"note\">");
        text(o, res__processes_note);
        sim_text_printf(o, "</p>\n");
    }
    activity(o, plan, r);
    sim_text_printf(o, "<p class=\"note\">taking requests: share of the horizon the process was "
                "alive and accepting new requests.</p>\n</section>\n");
    if (gen->rows > 1)
        table_section(o, "generation", "LLM requests", res__generation_intro, "",
                      "generation-table", gen, res__generation_note);
    if (cmp->rows > 1)
        table_section(o, "comparisons", "Each policy against its baseline",
                      res__comparison_intro, "", "comparison-table", cmp, res__comparison_note);
}

/* What each device's values rest on (the document's provenance): measured
 * with their sources, or assumed (docs/devices.md). */
static void device_section(sim_text *o, const res_plan *plan)
{
    sim_text_printf(o, "<section id=\"devices\">\n<h2>Devices: measured or assumed</h2>\n"
                "<p>Each device's phone figures: measured on a phone (with the capture and line "
                "they came from) or assumed. A margin that rests on assumed figures is only as "
                "good as they are; docs/devices.md says how to measure each.</p>\n"
                "<table id=\"devices-table\">\n<tr><th>device</th><th>measured</th>"
                "<th>assumed</th></tr>\n");
    for (unsigned i = 0; i < plan->ncells; i++) {
        const mdl_device *d = plan->cells[i].device;
        unsigned j = 0;
        while (j < i && plan->cells[j].device != d)
            j++;
        if (j < i)
            continue;
        unsigned n;
        const char *const *names = mdl_device_values(d->os, &n);
        sim_text_printf(o, "<tr><td>");
        text(o, d->name);
        sim_text_printf(o, "</td><td>");
        const char *sep = "";
        for (unsigned k = 0; k < n; k++) {
            int fitted = 0;
            const char *src = mdl_device_source_in_force(d, k, &fitted);
            if (src == NULL)
                continue;
            sim_text_printf(o, "%s<b>", sep);
            text(o, names[k]);
            sim_text_printf(o, "</b>%s: ", fitted ? " (fitted)" : "");
            text(o, src);
            sep = "<br>";
        }
        sim_text_printf(o, "%s</td><td>", sep[0] == '\0' ? "none" : "");
        sep = "";
        for (unsigned k = 0; k < n; k++)
            if (mdl_device_value_in_force(d, k) && mdl_device_source(d, k, NULL) == NULL) {
                sim_text_printf(o, "%s", sep);
                text(o, names[k]);
                sep = ", ";
            }
        sim_text_printf(o, "%s</td></tr>\n", sep[0] == '\0' ? "none" : "");
    }
    sim_text_printf(o, "</table>\n</section>\n");
}

/* Every figure inlined, with its caption. */
static void plot_section(sim_text *o, const res_figure *figs, unsigned nfigs)
{
    sim_text_printf(o, "<section id=\"plots\">\n<h2>Plots</h2>\n");
    for (unsigned i = 0; i < nfigs; i++)
        res__html_figure(o, figs[i].name, figs[i].svg, figs[i].len, figs[i].caption, i);
}

char *res_report_html(const res_plan *plan, const res_result *r, const res_figure *figs,
                      unsigned nfigs)
{
    res__tables t;
    int ok = res__tables_make(plan, r, &t) == SIM_OK;
    sim_text o = {NULL, 0, 0, !ok};
    res__html_begin(&o, plan->name);
    sim_text_printf(&o, "<p id=\"run\">%llu replication%s of %.1f min per cell, seed %llu, "
                "%u cell%s, %llu engine events.</p>\n",
            (unsigned long long)plan->replications, SIM_S(plan->replications),
            (double)plan->horizon / 60e6, (unsigned long long)plan->seed, r->ncells,
            SIM_S(r->ncells), (unsigned long long)r->events);
    if (plan->about != NULL && plan->about[0] != '\0') {
        sim_text_printf(&o, "<section id=\"about\">\n<h2>About this scenario</h2>\n");
        paragraphs(&o, plan->about);
        sim_text_printf(&o, "</section>\n");
    }
    device_section(&o, plan);
    if (r->headroom != NULL) {
        sim_text h = SIM_TEXT_INIT;
        for (unsigned i = 0; i < r->ncells; i++)
            res_headroom_text(&h, "", plan, r, i);
        char *lines = sim_text_done(&h);
        sim_text_printf(&o, "<section id=\"headroom\">\n<h2>Headroom</h2>\n<p>How much more "
                        "memory each cell's candidate may take and still meet the target: its "
                        "memory scaled, %u runs of the plan, the same draws at every scale "
                        "(docs/devices.md).</p>\n<pre>", r->headroom[0].runs);
        text(&o, lines != NULL ? lines : "");
        sim_text_printf(&o, "</pre>\n</section>\n");
        o.oom |= lines == NULL;
        free(lines);
    }
    if (ok) {
        decision_sections(&o, plan, &t.dec, &t.fld);
        cell_sections(&o, plan, r, &t.cells, &t.cmp, &t.gen);
    }
    plot_section(&o, figs, nfigs);
    sim_text_printf(&o, "</section>\n</body>\n</html>\n");
    res__tables_free(&t);
    return res__text_done(&o);
}

/* ---- pages of other commands (render_int.h) ---- */

void res__html_begin(sim_text *o, const char *title)
{
    sim_text_printf(o, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
                    "<title>oomsim: ");
    text(o, title);
    sim_text_printf(o, "</title>\n<style>%s</style>\n</head>\n<body>\n<h1>", style);
    text(o, title);
    sim_text_printf(o, "</h1>\n");
}

void res__html_text(sim_text *o, const char *s)
{
    text(o, s);
}

void res__html_table(sim_text *o, const char *id, const res__table *t)
{
    table(o, id, t);
}

void res__html_figure(sim_text *o, const char *id, const char *svg, size_t len,
                      const char *caption, unsigned k)
{
    /* inline: the SVG element itself, without its XML prolog */
    const char *start = svg != NULL ? strstr(svg, "<svg") : NULL;
    sim_text_printf(o, "<figure id=\"");
    text(o, id);
    sim_text_printf(o, "\">\n");
    if (start != NULL)
        inline_svg(o, start, len - (size_t)(start - svg), k);
    sim_text_printf(o, "\n<figcaption>");
    text(o, caption);
    sim_text_printf(o, " (");
    text(o, id);
    sim_text_printf(o, ")</figcaption>\n</figure>\n");
}
