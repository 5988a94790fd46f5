/* tables.c - what the documents and the report show as tables: the cells,
 * each policy against its baseline, the decision against the target, the
 * field comparison, each as rows of text cells (render_int.h), and the
 * table printer of `oomsim run`.  Renders what decide.c, field.c and the
 * cells computed; computes nothing itself. */
#include "results.h"
#include "internal.h"
#include "render_int.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MIB RES_MIB

/* "1%" or "0.1%": a share as a percentage with the digits it needs. */
static void percent(char *buf, size_t n, double share)
{
    snprintf(buf, n, "%.3g%%", 100 * share);
}

static void millis(char *buf, size_t n, double us)
{
    if (us >= 1e6)
        snprintf(buf, n, "%.3g s", us / 1e6);
    else
        snprintf(buf, n, "%.0f ms", us / 1e3);
}

/* The LLM criteria of a target: ", TTFT p95 at most 5 s, tokens/s p5 at
 * least 10, context overflow at most 5%". */
static void llm_target_text(const mdl_target *t, char *buf, size_t n)
{
    static const char *const tq[] = {"p50", "p95"}, *const rq[] = {"p50", "p5"};
    size_t len = strlen(buf);
    char v[32];
    if (t->ttft > 0 && len < n) {
        millis(v, sizeof v, (double)t->ttft);
        snprintf(buf + len, n - len, "%sTTFT %s at most %s", len ? ", " : "", tq[t->ttft_q], v);
    }
    len = strlen(buf);
    if (t->tokens_per_s > 0 && len < n)
        snprintf(buf + len, n - len, "%stokens/s %s at least %.3g", len ? ", " : "",
                 rq[t->tps_q], t->tokens_per_s);
    len = strlen(buf);
    if (t->has_overflow && len < n) {
        percent(v, sizeof v, t->overflow);
        snprintf(buf + len, n - len, "%scontext overflow at most %s", len ? ", " : "", v);
    }
}

void res_target_text(const mdl_target *t, char *buf, size_t n)
{
    char d[32] = "", l[32] = "", c[32] = "";
    if (t->has_deaths)
        percent(d, sizeof d, t->deaths);
    if (t->latency_p95 > 0)
        millis(l, sizeof l, (double)t->latency_p95);
    if (t->has_completed)
        percent(c, sizeof c, t->completed);
    snprintf(buf, n, "%s%s%s%s%s%s%s%s%s", t->has_deaths ? "deaths under " : "", d,
             t->has_deaths ? " (the upper end of the 95% interval)" : "",
             t->has_deaths && t->latency_p95 > 0 ? ", " : "",
             t->latency_p95 > 0 ? "latency p95 at most " : "", l,
             t->has_completed && (t->has_deaths || t->latency_p95 > 0) ? ", " : "",
             t->has_completed ? "at least " : "", t->has_completed ? c : "");
    if (t->has_completed) {
        size_t len = strlen(buf);
        snprintf(buf + len, n - len, " of requests completed");
    }
    llm_target_text(t, buf, n);
}

/* What the LLM criteria missed: ", TTFT p95 7.2 s, tokens/s p5 8.1,
 * context overflow 12%" (each only when missed). */
static void llm_misses(const mdl_target *t, const res_cell *c, const res_verdict *v, char *buf,
                       size_t n)
{
    static const char *const tq[] = {"p50", "p95"}, *const rq[] = {"p50", "p5"};
    char x[32];
    size_t len = strlen(buf);
    if (!v->ttft_ok && len < n) {
        if (c->ttft_q[t->ttft_q] < 0)
            snprintf(x, sizeof x, "none");
        else
            millis(x, sizeof x, c->ttft_q[t->ttft_q]);
        snprintf(buf + len, n - len, "%sTTFT %s %s", len > 9 ? ", " : "", tq[t->ttft_q], x);
    }
    len = strlen(buf);
    if (!v->tps_ok && len < n)
        snprintf(buf + len, n - len, "%stokens/s %s %.1f", len > 9 ? ", " : "", rq[t->tps_q],
                 c->tps_q[t->tps_q] < 0 ? 0.0 : c->tps_q[t->tps_q]);
    len = strlen(buf);
    if (!v->overflow_ok && len < n) {
        percent(x, sizeof x, res_overflow_share(c));
        snprintf(buf + len, n - len, "%scontext overflow %s", len > 9 ? ", " : "", x);
    }
}

void res_verdict_text(const mdl_target *t, const res_cell *c, char *buf, size_t n)
{
    res_verdict v;
    res_cell_verdict(t, c, &v);
    char d[32], l[32], k[64] = "";
    percent(d, sizeof d, c->any_ci.hi);
    millis(l, sizeof l, c->latency_us.p95);
    if (!v.completed_ok) {
        char share[32];
        percent(share, sizeof share, c->arrived ? (double)c->completed / (double)c->arrived : 1);
        snprintf(k, sizeof k, "%s%s of requests completed",
                 !v.deaths_ok || (!v.latency_ok && c->completed) ? ", " : "", share);
    }
    if (v.meets)
        snprintf(buf, n, "meets");
    else if (!v.latency_ok && !c->completed)
        snprintf(buf, n, "misses: no request completed");
    else
        snprintf(buf, n, "misses: %s%s%s%s%s%s", v.deaths_ok ? "" : "deaths up to ",
                 v.deaths_ok ? "" : d, !v.deaths_ok && !v.latency_ok ? ", " : "",
                 v.latency_ok ? "" : "latency p95 ", v.latency_ok ? "" : l, k);
    if (!v.meets)
        llm_misses(t, c, &v, buf, n);
}

/* The recommended policy of a decision over named paths: its label
 * without its path (it meets the target on all of them), and its heaviest
 * cell (the highest peak p95, then the highest latency p95). */
static const res_cell *gated(const res_result *r, const res_decision *d, char *label)
{
    const char *rest = strchr(label, ' ');
    rest = rest != NULL ? rest + 1 : "-";
    memmove(label, rest, strlen(rest) + 1);
    return &r->cells[d->heaviest >= 0 ? d->heaviest : d->recommended];
}

void res_context_text(const res_context *x, char *buf, size_t n)
{
    const char *open = x->done ? "" : ", not converged";
    if (!x->searched)
        snprintf(buf, n, "-");
    else if (x->tokens == 0 && x->low > 0 && x->upper > 0)
        snprintf(buf, n, "none (%u overflows, %u missed%s)", x->low, x->upper, open);
    else if (x->tokens == 0 && x->low > 0)
        snprintf(buf, n, "none (%u overflows%s)", x->low, open);
    else if (x->tokens == 0)
        snprintf(buf, n, "none (%u missed%s)", x->upper, open);
    else if (x->upper == 0)
        snprintf(buf, n, "%u or more (%s)", x->tokens, x->done ? "the cap" : "not converged");
    else
        snprintf(buf, n, "%u (%u missed%s)", x->tokens, x->upper, open);
}

int res__decision_table(const res_plan *plan, const res_result *r, res__table *t)
{
    static const char *const head[] = {"device", "candidate", "meet the target", "recommended",
                                       "why", "largest context"};
    static const int right[] = {0, 0, 1, 0, 0, 1};
    unsigned cols = r->contexts != NULL ? 6 : 5;
    t->cell = NULL;
    t->rows = 1;
    if (!plan->target.set || r->ncells == 0)
        return res__table_alloc(t, 1, cols, head, right);
    res_decision *d = calloc(r->ncells, sizeof *d);
    if (d == NULL)
        return SIM_ENOMEM;
    unsigned n = res_decisions(plan, r, d);
    if (res__table_alloc(t, n + 1, cols, head, right) != SIM_OK) {
        free(d);
        return SIM_ENOMEM;
    }
    int rc = SIM_OK;
    for (unsigned k = 0; k < n && rc == SIM_OK; k++) {
        res__text *row = &t->cell[(k + 1) * cols];
        if (r->contexts != NULL && k < r->ncontexts)
            res_context_text(&r->contexts[k], row[5], RES_TEXT_MAX);
        const mdl_cell *cell = &plan->cells[d[k].first];
        snprintf(row[0], RES_TEXT_MAX, "%s", cell->device->name);
        snprintf(row[1], RES_TEXT_MAX, "%s", cell->candidate->id);
        if (plan->paths > 0)
            snprintf(row[2], RES_TEXT_MAX, "%u of %u on all %u paths", d[k].meeting,
                     d[k].policies, d[k].paths);
        else
            snprintf(row[2], RES_TEXT_MAX, "%u of %u", d[k].meeting, d[k].count);
        int pick = d[k].recommended >= 0 ? d[k].recommended : d[k].closest;
        const res_cell *c = &r->cells[pick];
        char label[RES_TEXT_MAX], peak[32], lat[32], verdict[RES_TEXT_MAX];
        rc = res_policy_label(plan->policy_json[pick], label, sizeof label);
        if (plan->paths > 0 && d[k].recommended >= 0)
            c = gated(r, &d[k], label);
        snprintf(peak, sizeof peak, "%.1f MiB", c->peak.p95 / RES_MIB);
        if (c->completed)
            millis(lat, sizeof lat, c->latency_us.p95);
        else
            snprintf(lat, sizeof lat, "-");
        char llm[96] = "";
        if (c->gen_started > 0)
            snprintf(llm, sizeof llm, ", %u tokens of context, %.1f tokens/s p50",
                     res_cell_context(&plan->cells[pick]), c->tps_q[0]);
        if (d[k].recommended >= 0 && plan->paths > 0) {
            snprintf(row[3], RES_TEXT_MAX, "%s", label);
            snprintf(row[4], RES_TEXT_MAX, "meets it on every path; %s%s: peak p95 %s "
                     "on its heaviest path (latency p95 %s there)%s", res_rule_name(d[k].rule),
                     d[k].meeting > 1 ? " of those that do" : " that does", peak, lat, llm);
        } else if (d[k].recommended >= 0) {
            snprintf(row[3], RES_TEXT_MAX, "%s", label);
            snprintf(row[4], RES_TEXT_MAX, "%s%s: peak p95 %s, latency p95 %s%s",
                     res_rule_name(d[k].rule), d[k].meeting > 1 ? " of those that meet it"
                     : " that meets it", peak, lat, llm);
        } else {
            res_verdict_text(&plan->target, c, verdict, sizeof verdict);
            snprintf(row[3], RES_TEXT_MAX, "none");
            snprintf(row[4], RES_TEXT_MAX, "closest: %.120s (%.80s; peak p95 %s)", label,
                     verdict + (sizeof "misses: " - 1), peak);
        }
    }
    free(d);
    return rc;
}

const char res__field_intro[] =
    "each cell against the fleet: the share of users with at least one memory death a day "
    "while the app is visible (sessions_per_day sessions each), predicted [95% CI] and "
    "observed [95% CI]";
const char res__field_note[] =
    "predicted: 1 - (1 - p)^s, p the share of replications with a low_memory death in the "
    "foreground (Wilson interval), s the sessions a day; observed: the field rate over its "
    "users (Wilson interval). A disagreement is two intervals that do not overlap; "
    "docs/field.md says which inputs to re-measure first.";

void res__field_note_of(const res__table *t, char *out, size_t n)
{
    int bg = 0;
    for (unsigned r = 1; r < t->rows; r++)
        bg |= strcmp(t->cell[r * t->cols + 5], "background_rate") == 0;
    snprintf(out, n, "%s%s", res__field_note,
             bg ? " A (background) row: the share of users with at least one memory death a "
                  "day while the app is in the background (low_memory or system_reclaim), "
                  "against the entry's background_rate." : "");
}

static void percent_ci(char *buf, size_t n, double v, res_interval ci)
{
    snprintf(buf, n, "%.2f%% [%.2f, %.2f]", v * 100, ci.lo * 100, ci.hi * 100);
}

int res__field_table(const res_plan *plan, const res_result *r, res__table *t)
{
    static const char *const head[] = {"device", "candidate", "policy", "predicted a day",
                                       "observed", "metric", "users", "verdict"};
    static const int right[] = {0, 0, 0, 1, 1, 0, 1, 0};
    unsigned rows = 1;
    for (unsigned i = 0; i < r->ncells; i++) {
        res_field_cmp f;
        res_field_compare(plan, i, &r->cells[i], &f);
        rows += f.f != NULL ? 1u + (f.f->has_background != 0) : 0u;
    }
    if (res__table_alloc(t, rows, 8, head, right) != SIM_OK)
        return SIM_ENOMEM;
    unsigned row = 1;
    for (unsigned i = 0; i < r->ncells; i++) {
        res_field_cmp f;
        res_field_compare(plan, i, &r->cells[i], &f);
        if (f.f == NULL)
            continue;
        for (int bg = 0; bg <= f.f->has_background; bg++) {
            res__text *x = &t->cell[row++ * 8];
            snprintf(x[0], RES_TEXT_MAX, "%s%s", plan->cells[i].device->name,
                     bg ? " (background)" : "");
            snprintf(x[1], RES_TEXT_MAX, "%s", plan->cells[i].candidate->id);
            if (res_policy_label(plan->policy_json[i], x[2], RES_TEXT_MAX) != SIM_OK)
                return SIM_ENOMEM;
            const res_field_rate *fr = bg ? &f.background : &f.visible;
            percent_ci(x[3], RES_TEXT_MAX, fr->predicted, fr->predicted_ci);
            percent_ci(x[4], RES_TEXT_MAX, fr->observed, fr->observed_ci);
            snprintf(x[5], RES_TEXT_MAX, "%s",
                     bg ? "background_rate" : mdl_field_metric_name(f.f->metric));
            snprintf(x[6], RES_TEXT_MAX, "%llu", (unsigned long long)f.f->users);
            res_field_verdict v = fr->verdict;
            snprintf(x[7], RES_TEXT_MAX, "%s",
                     v == RES_FIELD_AGREES    ? "agrees"
                     : v == RES_FIELD_HIGHER ? "DISAGREES: predicts more deaths"
                                             : "DISAGREES: predicts fewer deaths");
        }
    }
    return SIM_OK;
}

enum { COLS = 14, CMP_COLS = 8 };

const char res__cells_note[] =
    "deaths: share of replications with at least one process death (Wilson 95% interval); "
    "boot loops: share of replications with two start-up deaths in a row; available: share "
    "of the horizon the process was alive; limit fg / bg: the counted memory at which the kill "
    "rule ends the app in the foreground and in the background (jetsam's limits, or the lmk "
    "line at the app's adj once cached apps are reclaimed; in lmkd's PSI mode, where no line "
    "exists, the lmkd reason of most of the app's kills and the median counted memory at "
    "them); margin: each replication's smallest headroom under the limit in force (pressure "
    "spikes included; in PSI mode, the lowest free pages over the low watermark), p5 and p50 "
    "over replications, negative once it was crossed; switch peak p95: over the replications with "
    "an on-demand part switch, the most counted memory while one loaded; mapped weights: the "
    "model's mapped file pages at their highest, which no peak or limit column counts, though "
    "weights read at every inference or token must stay resident or be read back from storage.";
const char res__processes_note[] =
    "feature available (a plan whose model runs in a service process of its own): share of the "
    "horizon a request could be served, the service alive and accepting; available is then the "
    "app's main process's, deaths and the peak count every process's, and limit fg / bg is the "
    "service's lmk line at the adj its binding gives it.";

int res__plan_has_processes(const res_plan *plan)
{
    for (unsigned i = 0; i < plan->ncells; i++)
        if (plan->cells[i].workload != NULL && plan->cells[i].workload->has_proc)
            return 1;
    return 0;
}

const char res__decision_intro[] =
    "each device and candidate against the target:";
const char res__context_note[] =
    "largest context: the most tokens of context at which the recommended cell (or, when none "
    "meets the target, the closest), its other settings kept, still meets the target, found "
    "by runs of that cell alone on steps of 256 tokens, and the least found to miss; \"or "
    "more\": none missed up to the cap (2^20 tokens, or a 1 TiB KV cache).";
const char res__comparison_intro[] =
    "each policy against its baseline (the first policy of its device and candidate, on the "
    "same path when the plan names paths), paired over the same replications: difference "
    "[95% CI]";
const char res__comparison_note[] =
    "peak p95: paired bootstrap; deaths, available: percentage points; latency p95: the "
    "difference of the two cells' own p95s (up to the rounding of the printed figures), with "
    "a paired Poisson bootstrap interval.";

/* "1400 / 300 MiB": the kill lines in the foreground and the background
 * ("-" for one no rule applies to). */
static void limit_text(char *buf, int64_t fg, int64_t bg)
{
    char a[32] = "-", b[32] = "-";
    if (fg >= 0)
        snprintf(a, sizeof a, "%.0f", (double)fg / MIB);
    if (bg >= 0)
        snprintf(b, sizeof b, "%.0f", (double)bg / MIB);
    snprintf(buf, RES_TEXT_MAX, "%s / %s MiB", a, b);
}

/* lines[fg]: the lmk line or jetsam limit the app's memory deaths are
 * told against, in the background [0] and the foreground [1]. */
static void death_text(const mdl_device *dev, const int64_t lines[2], const res_cell *c,
                       char *buf, size_t n)
{
    if (!c->with_death) {
        snprintf(buf, n, "-");
        return;
    }
    int first = res_lmkd_kills_first(c);
    int psi_memory = dev->rule == MDL_KILL_LMK && dev->lmk_psi &&
                     (c->top_reason == MDL_EXIT_LOW_MEMORY ||
                      c->top_reason == MDL_EXIT_SYSTEM_RECLAIM);
    if (psi_memory) { /* the page model: lmkd's reason, or the kernel's OOM killer */
        snprintf(buf, n, "%s: %s", mdl_exit_name(c->top_reason),
                 first >= 0 ? mdl_lmkd_reason_name((mdl_lmkd_reason)first) : "kernel OOM kill");
        return;
    }
    const char *why = mdl_exit_name(c->top_reason);
    int memory = c->top_reason == MDL_EXIT_LOW_MEMORY || c->top_reason == MDL_EXIT_SYSTEM_RECLAIM;
    if (!memory || c->memory_deaths[0] + c->memory_deaths[1] == 0) {
        snprintf(buf, n, "%s", why);
        return;
    }
    int fg = c->memory_deaths[1] >= c->memory_deaths[0];
    if (dev->rule == MDL_KILL_JETSAM && c->top_reason == MDL_EXIT_SYSTEM_RECLAIM &&
        dev->xnu_pages) { /* the page model: memorystatus's most frequent cause */
        int top = MDL_JETSAM_NONE;
        for (int k = 1; k < MDL_JETSAM_COUNT; k++)
            if (k != MDL_JETSAM_PER_PROCESS_LIMIT && c->by_jetsam[k] > c->by_jetsam[top])
                top = k;
        snprintf(buf, n, "%s: %s", why, mdl_jetsam_cause_name((mdl_jetsam_cause)top));
        return;
    }
    if (dev->rule == MDL_KILL_JETSAM && c->top_reason == MDL_EXIT_SYSTEM_RECLAIM) {
        snprintf(buf, n, "%s: idle-exit under %.0f MiB", why, (double)dev->pageshortage / MIB);
        return;
    }
    int64_t line = fg || dev->rule != MDL_KILL_JETSAM ? lines[fg] : dev->jetsam_background_limit;
    snprintf(buf, n, "%s: %s %s %.0f MiB", why, fg ? "foreground" : "background",
             dev->rule == MDL_KILL_JETSAM ? "limit" : "lmk line", (double)line / MIB);
}

/* ", 1144 MiB of mapped weights hot": the mean over the first memory
 * deaths, when the rule read them (lmk's free memory, the page models'
 * reclaim); nothing when none were. */
static void hot_text(char *buf, size_t n, const mdl_device *dev, const res_cell *c)
{
    uint64_t deaths = c->memory_deaths[0] + c->memory_deaths[1];
    double hot = deaths > 0 ? c->death_hot_sum / (double)deaths : 0;
    size_t len = strlen(buf);
    if (hot >= MIB && (dev->rule == MDL_KILL_LMK || dev->xnu_pages) && len < n)
        snprintf(buf + len, n - len, ", %.0f MiB of mapped weights hot", hot / MIB);
}

static void death_text_lines(const mdl_device *dev, const int64_t lines[2], const res_cell *c,
                             char *buf, size_t n)
{
    death_text(dev, lines, c, buf, n);
    int memory = c->top_reason == MDL_EXIT_LOW_MEMORY || c->top_reason == MDL_EXIT_SYSTEM_RECLAIM;
    if (c->with_death && memory)
        hot_text(buf, n, dev, c);
}

void res_death_text(const mdl_device *dev, const res_cell *c, char *buf, size_t n)
{
    const int64_t lines[2] = {mdl_kill_line(dev, 0), mdl_kill_line(dev, 1)};
    death_text_lines(dev, lines, c, buf, n);
}

/* lmkd's PSI mode has no line: what killed the app most often, and the
 * median counted memory at those deaths ("-" with none). */
static void kills_first_text(char *buf, const res_cell *c)
{
    int first = res_lmkd_kills_first(c);
    double k50 = res_lmkd_counted_p50(c);
    if (first < 0 || k50 < 0)
        snprintf(buf, RES_TEXT_MAX, "-");
    else
        snprintf(buf, RES_TEXT_MAX, "%s at %.0f MiB", mdl_lmkd_reason_name((mdl_lmkd_reason)first),
                 k50 / MIB);
}

/* The latency p95 of completed requests; a cell where most requests did
 * not complete says so beside it ("0 of 57 completed"), so that a row
 * never looks healthy because nothing was measured. */
static void latency_text(char *buf, const res_cell *c)
{
    if (c->completed == 0)
        snprintf(buf, RES_TEXT_MAX, c->arrived ? "0 of %llu completed" : "-",
                 (unsigned long long)c->arrived);
    else if (2 * c->completed < c->arrived)
        snprintf(buf, RES_TEXT_MAX, "%.0f ms (%llu of %llu completed)",
                 c->latency_us.p95 / 1000.0, (unsigned long long)c->completed,
                 (unsigned long long)c->arrived);
    else
        snprintf(buf, RES_TEXT_MAX, "%.0f ms", c->latency_us.p95 / 1000.0);
}

/* A share as a percentage with two decimals, or more where two would
 * round a share under 1 up to "100.00%". */
static void availability_text(char *buf, double share)
{
    int digits = 2;
    while (share < 1 && digits < 6 && 100 * share >= 100 - 0.5 * pow(10, -digits))
        digits++;
    if (share < 1 && 100 * share >= 100 - 0.5 * pow(10, -digits))
        snprintf(buf, RES_TEXT_MAX, "under 100%%");
    else
        snprintf(buf, RES_TEXT_MAX, "%.*f%%", digits, 100 * share);
}

/* A cell whose candidate reads mapped weights at every inference or token:
 * file pages no rule counts, which must stay resident all the same. */
static int reads_mapped_weights(const mdl_cell *cell)
{
    for (unsigned k = 0; k < cell->candidate->nparts; k++) {
        const mdl_part *p = &cell->candidate->parts[k];
        mdl_generation g;
        if (p->has_generation)
            mdl_generation_in_force(p, &cell->policy, cell->device->os == MDL_OS_IOS,
                                    &g);
        if (p->has_generation ? g.mapped > 0 && !g.locked : p->file_hot)
            return 1;
    }
    return 0;
}

/* Cell i's lines in the background [0] and the foreground [1]: those of
 * the process the model runs in (its service's, with `processes`), and
 * those its top reason is told against, of the process that died most. */
static void cell_lines(const res_plan *plan, unsigned i, const res_cell *c, int64_t lines[2],
                       int64_t told[2])
{
    const mdl_cell *cell = &plan->cells[i];
    double all = c->deaths_mean * (double)plan->replications;
    int svc = 2.0 * (double)c->svc_deaths >= all;
    for (int fg = 0; fg < 2; fg++) {
        lines[fg] = mdl_cell_model_line(cell, fg);
        told[fg] = svc ? lines[fg] : mdl_cell_kill_line(cell, fg);
    }
}

int res__cells_table(const res_plan *plan, const res_result *r, res__table *t)
{
    /* columns only some plans have, after the fixed ones: the switch peak
     * (a cell switched), the mapped weights (read at every inference), the
     * feature's availability (the model in a service process, which may be
     * down while the app lives), the verdict against the target */
    static const char *const fixed[COLS] = {
        "device",          "candidate",       "policy",          "peak p50", "peak p95",
        "peak max",        "stage at peak",   "limit fg / bg",   "margin p5 / p50",
        "deaths [95% CI]", "top reason",      "boot loops",      "latency p95", "available"};
    static const int fixed_right[COLS] = {0, 0, 0, 1, 1, 1, 0, 1, 1, 1, 0, 1, 1, 1};
    unsigned sw = 0, mp = 0, fa = (unsigned)res__plan_has_processes(plan);
    for (unsigned i = 0; i < r->ncells; i++) {
        sw |= r->cells[i].with_switch > 0;
        mp |= (unsigned)reads_mapped_weights(&plan->cells[i]);
    }
    unsigned tg = plan->target.set ? 1u : 0u, cols = COLS + sw + mp + fa + tg;
    const char *head[COLS + 4];
    int right[COLS + 4];
    memcpy(head, fixed, sizeof fixed);
    memcpy(right, fixed_right, sizeof fixed_right);
    unsigned at = COLS;
    if (sw)
        head[at] = "switch peak p95", right[at++] = 1;
    if (mp)
        head[at] = "mapped weights", right[at++] = 1;
    if (fa) /* the model in a service process: the share a request could be served */
        head[at] = "feature available", right[at++] = 1;
    if (tg)
        head[at] = "target", right[at++] = 0;
    if (res__table_alloc(t, r->ncells + 1, cols, head, right) != SIM_OK)
        return SIM_ENOMEM;
    for (unsigned i = 0; i < r->ncells; i++) {
        const res_cell *c = &r->cells[i];
        res__text *row = &t->cell[(i + 1) * cols];
        if (sw && c->with_switch > 0)
            snprintf(row[COLS], RES_TEXT_MAX, "%.1f MiB", c->switch_peak.p95 / MIB);
        else if (sw)
            snprintf(row[COLS], RES_TEXT_MAX, "-");
        if (mp && reads_mapped_weights(&plan->cells[i]))
            snprintf(row[COLS + sw], RES_TEXT_MAX, "%.1f MiB", (double)c->file_peak_max / MIB);
        else if (mp)
            snprintf(row[COLS + sw], RES_TEXT_MAX, "-");
        if (fa)
            availability_text(row[COLS + sw + mp], c->inference_availability);
        if (tg)
            res_verdict_text(&plan->target, c, row[COLS + sw + mp + fa], RES_TEXT_MAX);
        snprintf(row[0], RES_TEXT_MAX, "%s", plan->cells[i].device->name);
        snprintf(row[1], RES_TEXT_MAX, "%s", plan->cells[i].candidate->id);
        if (res_policy_label(plan->policy_json[i], row[2], RES_TEXT_MAX) != SIM_OK)
            return SIM_ENOMEM;
        snprintf(row[3], RES_TEXT_MAX, "%.1f MiB", c->peak.p50 / MIB);
        snprintf(row[4], RES_TEXT_MAX, "%.1f MiB", c->peak.p95 / MIB);
        snprintf(row[5], RES_TEXT_MAX, "%.1f MiB", c->peak.max / MIB);
        snprintf(row[6], RES_TEXT_MAX, "%s", res__top_stage(c));
        mdl_device dv;
        mdl_device_in_force(plan->cells[i].device, &plan->cells[i].policy, &dv);
        const mdl_device *dev = &dv;
        int64_t lines[2], told[2];
        cell_lines(plan, i, c, lines, told);
        if (dev->rule == MDL_KILL_LMK && dev->lmk_psi)
            kills_first_text(row[7], c);
        else
            limit_text(row[7], lines[1], lines[0]);
        if (c->has_margin)
            snprintf(row[8], RES_TEXT_MAX, "%.0f / %.0f MiB", c->margin_p5 / MIB,
                     c->margin_p50 / MIB);
        else
            snprintf(row[8], RES_TEXT_MAX, "-");
        snprintf(row[9], RES_TEXT_MAX, "%.2f%% [%.2f, %.2f]", 100 * c->any_rate,
                 100 * c->any_ci.lo, 100 * c->any_ci.hi);
        death_text_lines(dev, told, c, row[10], RES_TEXT_MAX);
        snprintf(row[11], RES_TEXT_MAX, "%.1f%%", 100 * c->boot_loop_rate);
        latency_text(row[12], c);
        availability_text(row[13], c->availability);
    }
    return SIM_OK;
}

/* "+12.5 MiB [+10.1, +14.9]" and the like: a difference with its interval. */
static void diff_text(char *buf, const res_comparison *c, double scale, const char *unit,
                      int digits)
{
    snprintf(buf, RES_TEXT_MAX, "%+.*f%s [%+.*f, %+.*f]", digits, c->diff * scale, unit, digits,
             c->ci.lo * scale, digits, c->ci.hi * scale);
}

int res__comparison_table(const res_plan *plan, const res_result *r, res__table *t)
{
    static const char *const head[CMP_COLS] = {
        "device", "candidate", "policy", "baseline", "peak p95 vs baseline",
        "deaths (pp)", "latency p95", "available (pp)"};
    static const int right[CMP_COLS] = {0, 0, 0, 0, 1, 1, 1, 1};
    if (res__table_alloc(t, r->ncmp / RES_CMP_COUNT + 1, CMP_COLS, head, right) != SIM_OK)
        return SIM_ENOMEM;
    for (unsigned i = 0; i + 1 < t->rows; i++) {
        const res_comparison *c = &r->cmp[i * RES_CMP_COUNT];
        res__text *row = &t->cell[(i + 1) * CMP_COLS];
        snprintf(row[0], RES_TEXT_MAX, "%s", plan->cells[c->cell].device->name);
        snprintf(row[1], RES_TEXT_MAX, "%s", plan->cells[c->cell].candidate->id);
        if (res_policy_label(plan->policy_json[c->cell], row[2], RES_TEXT_MAX) != SIM_OK ||
            res_policy_label(plan->policy_json[c->baseline], row[3], RES_TEXT_MAX) != SIM_OK)
            return SIM_ENOMEM;
        diff_text(row[4], &c[RES_CMP_PEAK_P95], 1 / MIB, " MiB", 1);
        diff_text(row[5], &c[RES_CMP_ANY_RATE], 100, "", 2);
        if (c[RES_CMP_LATENCY_P95].pairs > 0)
            diff_text(row[6], &c[RES_CMP_LATENCY_P95], 1e-3, " ms", 0);
        else
            snprintf(row[6], RES_TEXT_MAX, "-");
        diff_text(row[7], &c[RES_CMP_AVAILABILITY], 100, "", 2);
    }
    return SIM_OK;
}

/* Prints the table aligned, two spaces apart. */
static void put_table(sim_text *o, const res__table *t)
{
    size_t width[RES_TABLE_COLS_MAX] = {0};
    for (unsigned i = 0; i < t->rows; i++)
        for (unsigned k = 0; k < t->cols; k++)
            if (strlen(t->cell[i * t->cols + k]) > width[k])
                width[k] = strlen(t->cell[i * t->cols + k]);
    for (unsigned i = 0; i < t->rows; i++) {
        for (unsigned k = 0; k < t->cols; k++) {
            const char *v = t->cell[i * t->cols + k];
            int w = (int)width[k];
            const char *sep = k + 1 < t->cols ? "  " : "";
            if (t->right[k])
                sim_text_printf(o, "%*s%s", w, v, sep);
            else if (k + 1 < t->cols)
                sim_text_printf(o, "%-*s%s", w, v, sep);
            else
                sim_text_printf(o, "%s", v);
        }
        sim_text_printf(o, "\n");
    }
}

int res__tables_make(const res_plan *plan, const res_result *r, res__tables *t)
{
    int ok = res__cells_table(plan, r, &t->cells) == SIM_OK;
    ok = res__comparison_table(plan, r, &t->cmp) == SIM_OK && ok;
    ok = res__decision_table(plan, r, &t->dec) == SIM_OK && ok;
    ok = res__field_table(plan, r, &t->fld) == SIM_OK && ok;
    ok = res__generation_table(plan, r, &t->gen) == SIM_OK && ok;
    return ok ? SIM_OK : SIM_ENOMEM;
}

void res__tables_free(res__tables *t)
{
    res__table_free(&t->cells);
    res__table_free(&t->cmp);
    res__table_free(&t->dec);
    res__table_free(&t->fld);
    res__table_free(&t->gen);
}

/* A source's short form: up to its first ": " or " (" ("FILE:LINE"). */
static int short_len(const char *s)
{
    const char *a = strstr(s, ": "), *b = strstr(s, " (");
    const char *e = a != NULL && (b == NULL || a < b) ? a : b;
    size_t n = e != NULL ? (size_t)(e - s) : strlen(s);
    return (int)(n > 80 ? 80 : n);
}

void res_provenance_text(sim_text *o, const char *indent, const mdl_device *d)
{
    unsigned n, measured = 0, in_force = 0, fitted_n = 0;
    const char *const *v = mdl_device_values(d->os, &n);
    for (unsigned k = 0; k < n; k++)
        if (mdl_device_value_in_force(d, k)) {
            int fitted = 0;
            in_force++;
            measured += mdl_device_source(d, k, &fitted) != NULL;
            fitted_n += fitted != 0;
        }
    sim_text_printf(o, "%s%s: %u of its %u values measured%s", indent, d->name, measured,
                    in_force, fitted_n > 0 ? " or fitted" : "");
    const char *sep = " (";
    for (unsigned k = 0; k < n; k++) {
        int fitted = 0;
        const char *src = mdl_device_source_in_force(d, k, &fitted);
        if (src == NULL)
            continue;
        if (fitted) /* "fitted: KEY VALUE, 95 % interval ...": up to the interval */
            src += 8;
        const char *comma = fitted ? strstr(src, ", ") : NULL;
        int len = comma != NULL && comma - src < short_len(src) ? (int)(comma - src)
                                                                : short_len(src);
        sim_text_printf(o, "%s%s%s: %.*s", sep, v[k], fitted ? " fitted" : "", len, src);
        sep = ", ";
    }
    sim_text_printf(o, "%s; %u assumed", measured > 0 ? ")" : "", in_force - measured);
    sep = ": ";
    for (unsigned k = 0; k < n; k++)
        if (mdl_device_value_in_force(d, k) && mdl_device_source(d, k, NULL) == NULL) {
            sim_text_printf(o, "%s%s", sep, v[k]);
            sep = ", ";
        }
    sim_text_printf(o, "%s\n", measured < in_force ? " (docs/devices.md: how to measure each)"
                                                   : "");
}

void res_headroom_text(sim_text *o, const char *indent, const res_plan *plan,
                       const res_result *r, unsigned i)
{
    const res_headroom *h = &r->headroom[i];
    const mdl_cell *c = &plan->cells[i];
    char label[RES_TEXT_MAX] = "";
    if (plan->policy_json != NULL && res_policy_label(plan->policy_json[i], label, sizeof label) !=
                                         SIM_OK)
        label[0] = '\0';
    sim_text_printf(o, "%s%s, %s, %s: ", indent, c->device->name, c->candidate->id, label);
    if (h->factor <= 0) { /* what fails is not the memory */
        sim_text_printf(o, "misses the target at every size tried (down to x%.3f): %s\n",
                        h->upper, h->deaths_miss && h->latency_miss ? "deaths and latency"
                                  : h->deaths_miss ? "deaths that do not come from memory"
                                                   : "latency, whatever the memory");
        return;
    }
    double extra = (h->factor - 1) * h->memory / 1048576.0;
    sim_text_printf(o, "%s%.0f MiB (x%.3g%s), deaths %.2f%% [%.2f, %.2f] there\n",
                    extra >= 0 ? "+" : "", extra, h->factor, h->capped ? " or more" : "",
                    100 * h->deaths, 100 * h->deaths_ci.lo, 100 * h->deaths_ci.hi);
}

char *res_document_table(const res_plan *plan, const res_result *r)
{
    res__tables t;
    int ok = res__tables_make(plan, r, &t) == SIM_OK;
    sim_text o = {NULL, 0, 0, !ok};
    sim_text_printf(&o, "%s: %llu replication%s of %.1f min, seed %llu\n\n", plan->name,
            (unsigned long long)plan->replications, SIM_S(plan->replications), (double)plan->horizon / 60e6,
            (unsigned long long)plan->seed);
    if (ok) {
        put_table(&o, &t.cells);
        sim_text_printf(&o, "\n%s\n", res__cells_note);
        if (res__plan_has_processes(plan))
            sim_text_printf(&o, "%s\n", res__processes_note);
        if (t.gen.rows > 1) {
            sim_text_printf(&o, "\n%s\n\n", res__generation_intro);
            put_table(&o, &t.gen);
            sim_text_printf(&o, "\n%s\n", res__generation_note);
        }
        if (t.dec.rows > 1) {
            char target[RES_TEXT_MAX];
            res_target_text(&plan->target, target, sizeof target);
            sim_text_printf(&o, "\n%s %s:\n\n", res__decision_intro, target);
            put_table(&o, &t.dec);
            if (t.dec.cols > 5)
                sim_text_printf(&o, "\n%s\n", res__context_note);
        }
        if (t.cmp.rows > 1) {
            sim_text_printf(&o, "\n%s\n\n", res__comparison_intro);
            put_table(&o, &t.cmp);
            sim_text_printf(&o, "\n%s\n", res__comparison_note);
        }
        if (t.fld.rows > 1) {
            sim_text_printf(&o, "\n%s:\n\n", res__field_intro);
            put_table(&o, &t.fld);
            char note[1024];
            res__field_note_of(&t.fld, note, sizeof note);
            sim_text_printf(&o, "\n%s\n", note);
        }
    }
    if (r->headroom != NULL) {
        sim_text_printf(&o, "\nheadroom: how much more memory each cell's candidate may take "
                        "and still meet the target (its memory scaled; %u runs of the plan, the "
                        "same draws at every scale; docs/devices.md):\n",
                        r->headroom[0].runs);
        for (unsigned i = 0; i < r->ncells; i++)
            res_headroom_text(&o, "  ", plan, r, i);
    }
    /* what each device's values rest on, once per device */
    sim_text_printf(&o, "\nwhat the devices' values rest on (docs/devices.md):\n");
    for (unsigned i = 0; i < plan->ncells; i++) {
        unsigned j = 0;
        while (j < i && plan->cells[j].device != plan->cells[i].device)
            j++;
        if (j == i)
            res_provenance_text(&o, "  ", plan->cells[i].device);
    }
    res__tables_free(&t);
    return res__text_done(&o);
}
