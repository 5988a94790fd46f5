/* figures.c - the report's figures, in order, each with its file name and
 * caption: the comparison of the cells, the peak CDFs (a page of at most
 * RES_PLOT_SERIES cells each), and a timeline of one replication per cell
 * (every cell of a plan of up to TIMELINE_CELLS_ALL cells, else the first
 * cell of each device and candidate). */
#include "internal.h"
#include "render_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TIMELINE_CELLS_ALL 16

static int timeline_cell(const res_plan *plan, unsigned i)
{
    if (plan->ncells <= TIMELINE_CELLS_ALL || i == 0)
        return 1;
    const mdl_cell *a = &plan->cells[i - 1], *b = &plan->cells[i];
    return a->device != b->device || a->candidate != b->candidate;
}

void res_figures_free(res_figure *f, unsigned n)
{
    for (unsigned i = 0; f != NULL && i < n; i++) {
        free(f[i].svg);
        free(f[i].json);
    }
    free(f);
}

static int comparison(const res_plan *plan, const res_result *r, res_figure *f)
{
    snprintf(f->name, sizeof f->name, "comparison.svg");
    snprintf(f->caption, sizeof f->caption,
             "Each cell: its peak p95, the share of replications with a process death and "
             "its Wilson 95%% interval, its latency p95.");
    f->svg = res_plot_comparison(plan, r, &f->len);
    return f->svg != NULL ? SIM_OK : SIM_ENOMEM;
}

static int peak_cdf(const res_plan *plan, const res_result *r, unsigned pg, unsigned pages,
                    res_figure *f)
{
    unsigned first = pg * RES_PLOT_SERIES;
    unsigned count = plan->ncells - first < RES_PLOT_SERIES ? plan->ncells - first
                                                            : RES_PLOT_SERIES;
    if (pages == 1)
        snprintf(f->name, sizeof f->name, "peak-cdf.svg");
    else
        snprintf(f->name, sizeof f->name, "peak-cdf-%u.svg", pg + 1);
    snprintf(f->caption, sizeof f->caption,
             "The distribution of the peak counted memory of cells %u to %u over %llu "
             "replications, as a CDF (each cell's quantile at every percent).", first,
             first + count - 1, (unsigned long long)plan->replications);
    f->svg = res_plot_peak_cdf(plan, r, first, count, &f->len);
    return f->svg != NULL ? SIM_OK : SIM_ENOMEM;
}

/* The timeline of cell i's replication rep: run again, traced. */
static int timeline(const res_plan *plan, unsigned i, uint64_t rep, res_figure *f,
                    sim_error *err)
{
    res_timeline *t;
    mdl_rep m;
    mdl_device dv;
    mdl_device_in_force(plan->cells[i].device, &plan->cells[i].policy, &dv);
    res_chrome *ch = res_chrome_create(&dv);
    if (ch == NULL)
        return SIM_ENOMEM;
    res_chrome_lines(ch, &plan->cells[i]);
    int rc = res_timeline_run(&plan->cells[i], rep, &t, &m, ch, err);
    if (rc != SIM_OK) {
        res_chrome_free(ch);
        return rc;
    }
    res_timeline_info info;
    res_timeline_info_get(t, &info);
    char label[256], title[600], policy[256];
    if (res_cell_label(plan, i, label, sizeof label) != SIM_OK ||
        res_policy_label(plan->policy_json[i], policy, sizeof policy) != SIM_OK) {
        res_timeline_free(t);
        res_chrome_free(ch);
        return SIM_ENOMEM;
    }
    snprintf(title, sizeof title, "replication %llu: %s / %s / %s", (unsigned long long)rep,
             plan->cells[i].device->name, plan->cells[i].candidate->id, policy);
    snprintf(f->name, sizeof f->name, "timeline-cell-%u.svg", i);
    snprintf(f->caption, sizeof f->caption,
             "Cell %u (%s), replication %llu: memory by category (each column at its "
             "highest counted moment), the kill line, stage bands, deaths and warnings. "
             "Peak %.1f MiB counted at %.3f s; %u death%s, %llu memory warning%s.",
             i, label, (unsigned long long)rep, (double)m.peak / (1 << 20),
             (double)info.peak_time / 1e6, m.deaths_total, SIM_S(m.deaths_total),
             (unsigned long long)info.warnings, SIM_S(info.warnings));
    f->svg = res_plot_timeline(t, title, &f->len);
    res_timeline_free(t);
    snprintf(f->json_name, sizeof f->json_name, "timeline-cell-%u.json", i);
    rc = res_chrome_finish(ch, plan->cells[i].horizon, title, &f->json, &f->json_len, err);
    res_chrome_free(ch);
    if (rc != SIM_OK)
        return rc;
    return f->svg != NULL ? SIM_OK : SIM_ENOMEM;
}

int res_figures(const res_plan *plan, const res_result *r, uint64_t rep, res_figure **out,
                unsigned *nout, sim_error *err)
{
    *out = NULL;
    *nout = 0;
    int rc = res_plot_available(err);
    if (rc != SIM_OK)
        return rc;
    unsigned pages = (plan->ncells + RES_PLOT_SERIES - 1) / RES_PLOT_SERIES;
    res_figure *f = calloc(1 + pages + plan->ncells, sizeof *f);
    if (f == NULL)
        return sim_error_set(err, SIM_ENOMEM, "out of memory drawing the plots");
    unsigned n = 0;
    rc = comparison(plan, r, &f[n++]);
    for (unsigned pg = 0; rc == SIM_OK && pg < pages; pg++)
        rc = peak_cdf(plan, r, pg, pages, &f[n++]);
    for (unsigned i = 0; rc == SIM_OK && i < plan->ncells; i++)
        if (timeline_cell(plan, i))
            rc = timeline(plan, i, rep, &f[n++], err);
    if (rc != SIM_OK) {
        res_figures_free(f, n);
        if (rc == SIM_ENOMEM)
            sim_error_set(err, rc, "out of memory drawing the plots");
        return rc;
    }
    *out = f;
    *nout = n;
    return SIM_OK;
}
