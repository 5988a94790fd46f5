/* tables_gen.c - the LLM table (docs/results.md "generation"): per cell with
 * a generation part, its decode rate, its time to first token, its KV
 * cache at the highest, its weights by kind, the refaults' slowdown and
 * the requests cut to their context.  Only the cells that generate. */
#include "results.h"
#include "internal.h"
#include "render_int.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define MIB RES_MIB

enum { GEN_COLS = 8 };

const char res__generation_intro[] = "each cell with an LLM part, its requests token by token:";
const char res__generation_note[] =
    "tokens/s: decoded tokens per second of decode time, the refaults of dropped weights "
    "included, p50 and p5 over the requests that ended; TTFT: time to first token, from the "
    "request's arrival through its wait, prefill and first decoded token, p50 and p95; KV max: "
    "the KV caches held at their highest (reserved: all of the context at its creation); "
    "weights: mapped (file pages, not counted; the cells table's mapped weights), of them hot "
    "(read at every token), repacked (native), gpu, and mlock'ed (counted), as the policy holds "
    "them, and for a part that gives its layers, how many run on the GPU (gpu_layers, of its "
    "layers and the output layer); slowdown p95: decode time over its time without refaults; context overflow: "
    "requests cut to their KV region or refused (on_full).  Quantiles are exact order "
    "statistics over the cell's requests; past 65,536 requests in a cell (marked ~) they are "
    "the middles of buckets an eighth of an octave wide, within 4.4 % of the value.";

/* A quantile's text ("-" when no request had it). */
static void quantile_text(char buf[32], double v, double scale, const char *fmt)
{
    if (v < 0)
        snprintf(buf, 32, "-");
    else
        snprintf(buf, 32, fmt, v * scale);
}

/* "730 (226 hot) / 504 / 0 MiB": the file pages mapped and not counted
 * (the figure the cells table's mapped weights column peaks at), those
 * read at every token, the repacked copy, the uploaded weights; mlock'ed
 * weights, counted, after. */
static void weights_text(char *buf, const mdl_cell *cell)
{
    int64_t w[5] = {0, 0, 0, 0, 0};
    uint32_t on = 0, of = 0;
    for (unsigned k = 0; k < cell->candidate->nparts; k++) {
        const mdl_part *def = &cell->candidate->parts[k];
        if (!def->has_generation)
            continue;
        mdl_generation g;
        mdl_generation_in_force(def, &cell->policy, cell->device->os == MDL_OS_IOS, &g);
        w[0] += mdl_generation_file_pages(def, &g);
        w[1] += g.locked ? 0 : g.mapped;
        w[2] += g.repacked;
        w[3] += g.gpu;
        w[4] += g.locked ? g.mapped : 0;
        if (g.layers.count > 0) {
            on += g.layers.offloaded;
            of += g.layers.count + 1;
        }
    }
    int n = snprintf(buf, RES_TEXT_MAX, "%.0f (%.0f hot) / %.0f / %.0f MiB", (double)w[0] / MIB,
                     (double)w[1] / MIB, (double)w[2] / MIB, (double)w[3] / MIB);
    if (w[4] > 0 && n > 0 && n < RES_TEXT_MAX)
        n += snprintf(buf + n, (size_t)(RES_TEXT_MAX - n), ", %.0f MiB locked",
                      (double)w[4] / MIB);
    if (of > 0 && n > 0 && n < RES_TEXT_MAX)
        snprintf(buf + n, (size_t)(RES_TEXT_MAX - n), ", %u/%u layers on the GPU", on, of);
}

int res__generation_table(const res_plan *plan, const res_result *r, res__table *t)
{
    static const char *const head[GEN_COLS] = {
        "cell",     "decoded",   "tokens/s p50 / p5", "TTFT p50 / p95", "KV max",
        "weights mapped / repacked / gpu", "slowdown p95", "context overflow"};
    static const int right[GEN_COLS] = {0, 1, 1, 1, 1, 1, 1, 1};
    unsigned rows = 1;
    for (unsigned i = 0; i < r->ncells; i++)
        rows += (unsigned)mdl_candidate_generates(plan->cells[i].candidate);
    if (res__table_alloc(t, rows, GEN_COLS, head, right) != SIM_OK)
        return SIM_ENOMEM;
    unsigned row = 1;
    for (unsigned i = 0; i < r->ncells; i++) {
        if (!mdl_candidate_generates(plan->cells[i].candidate))
            continue;
        const res_cell *c = &r->cells[i];
        res__text *x = &t->cell[row++ * GEN_COLS];
        if (res_cell_label(plan, i, x[0], RES_TEXT_MAX) != SIM_OK)
            return SIM_ENOMEM;
        snprintf(x[1], RES_TEXT_MAX, "%llu", (unsigned long long)c->gen_requests);
        char a[32], b[32];
        quantile_text(a, c->tps_q[0], 1.0, "%.1f");
        quantile_text(b, c->tps_q[1], 1.0, "%.1f");
        snprintf(x[2], RES_TEXT_MAX, "%s / %s%s", a, b, c->gen_exact ? "" : " ~");
        quantile_text(a, c->ttft_q[0], 1e-3, "%.0f");
        quantile_text(b, c->ttft_q[1], 1e-3, c->gen_exact ? "%.0f ms" : "%.0f ms ~");
        snprintf(x[3], RES_TEXT_MAX, "%s / %s", a, b);
        snprintf(x[4], RES_TEXT_MAX, "%.1f MiB", (double)c->kv_peak_max / MIB);
        weights_text(x[5], &plan->cells[i]);
        int s95 = res_bucket_quantile(c->slowdown, MDL_SLOWDOWN_BUCKETS, 0.95);
        if (s95 < 0)
            snprintf(x[6], RES_TEXT_MAX, "-");
        else
            snprintf(x[6], RES_TEXT_MAX, "%.2fx", s95 == 0 ? 1.0 : mdl_slowdown_middle((unsigned)s95));
        snprintf(x[7], RES_TEXT_MAX, "%llu", (unsigned long long)c->context_overflow);
    }
    return SIM_OK;
}
