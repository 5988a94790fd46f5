/* document.c - the result document (docs/results.md), the CSV and the
 * table, from a plan and its aggregates.
 *
 * Key order is fixed (jansson keeps insertion order), integers stay
 * integers (bytes and microseconds are rounded), shares and rates are
 * reals printed with 6 significant digits: the same aggregates give the
 * same bytes. */
#include "results.h"
#include "internal.h"
#include "render_int.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "traces/json.h"

#define REAL_FLAGS (JSON_REAL_PRECISION(6) | JSON_INDENT(2))

static json_int_t whole(double x)
{
    return (json_int_t)llround(x);
}

/* A value or key lost to an allocation failure while the document of
 * this thread is built: the document is not given out. */
static _Thread_local int doc_failed;

static void set(json_t *o, const char *k, json_t *v)
{
    trc_json_set(o, k, v, &doc_failed);
}

static void append(json_t *a, json_t *v)
{
    trc_json_append(a, v, &doc_failed);
}

static json_t *quantiles(const res_q *q, int mean, int p99)
{
    json_t *o = json_object();
    if (mean)
        set(o, "mean", json_integer(whole(q->mean)));
    set(o, "p50", json_integer(whole(q->p50)));
    set(o, "p95", json_integer(whole(q->p95)));
    if (p99)
        set(o, "p99", json_integer(whole(q->p99)));
    return o;
}

static json_t *peak(const res_cell *c)
{
    json_t *p = json_object();
    json_t *app = quantiles(&c->peak, 1, 1);
    set(app, "max", json_integer(whole(c->peak.max)));
    set(p, "app_bytes", app);
    json_t *at = json_object();
    for (int s = 0; s < MDL_STAGE_COUNT; s++)
        if (c->stage_at_peak[s] > 0)
            set(at, mdl_stage_name((mdl_stage)s), json_real(c->stage_at_peak[s]));
    set(p, "stage_at_peak", at);
    json_t *by = json_object();
    for (int s = 0; s < MDL_STAGE_COUNT; s++) {
        if (!c->has_stage[s])
            continue;
        json_t *q = quantiles(&c->by_stage[s], 0, 0);
        set(q, "max", json_integer(whole(c->by_stage[s].max)));
        set(by, mdl_stage_name((mdl_stage)s), q);
    }
    set(p, "by_stage", by);
    if (c->with_switch > 0) { /* extension: the peak while an on-demand part loaded */
        json_t *sw = quantiles(&c->switch_peak, 0, 0);
        set(sw, "max", json_integer(whole(c->switch_peak.max)));
        set(p, "switch_bytes", sw);
    }
    return p;
}

/* Whether lmkd names its kill reasons on the cell's device: PSI mode.
 * Legacy minfree mode names none, and the document then has no key for
 * them (a plan without the newer keys keeps its bytes). */
static int names_lmkd_reasons(const mdl_cell *cell)
{
    return cell->device->rule == MDL_KILL_LMK && cell->device->lmk_psi;
}

/* The causes memorystatus decides in the iPhone's page model, by count. */
static json_t *by_cause(const uint64_t *n)
{
    static const mdl_jetsam_cause causes[] = {
        MDL_JETSAM_PER_PROCESS_LIMIT, MDL_JETSAM_VM_PAGESHORTAGE, MDL_JETSAM_IDLE_EXIT,
        MDL_JETSAM_FC_THRASHING, MDL_JETSAM_COMPRESSOR_THRASHING, MDL_JETSAM_COMPRESSOR_SPACE};
    json_t *o = json_object();
    for (size_t k = 0; k < sizeof causes / sizeof *causes; k++)
        set(o, mdl_jetsam_cause_name(causes[k]), json_integer((json_int_t)n[causes[k]]));
    return o;
}

static json_t *deaths(const mdl_cell *cell, const res_cell *c)
{
    json_t *d = json_object();
    json_t *per = json_object();
    set(per, "mean", json_real(c->deaths_mean));
    set(d, "per_replication", per);
    set(d, "any_rate", json_real(c->any_rate));
    set(d, "any_rate_ci95", json_pack("[ff]", c->any_ci.lo, c->any_ci.hi));
    json_t *by = json_object();
    for (int x = 0; x < MDL_EXIT_COUNT; x++)
        set(by, mdl_exit_name((mdl_exit)x), json_integer((json_int_t)c->by_reason[x]));
    set(d, "by_reason", by);
    /* memory deaths (first deaths low_memory or system_reclaim) by where the app was */
    set(d, "memory_in_foreground", json_integer((json_int_t)c->memory_deaths[1]));
    set(d, "memory_in_background", json_integer((json_int_t)c->memory_deaths[0]));
    if (cell->device->no_exit_info) /* a phone that keeps no exit record */
        set(d, "unrecorded", json_integer((json_int_t)c->deaths_unrecorded));
    if (names_lmkd_reasons(cell)) {
        json_t *l = json_object();
        for (int x = MDL_LMKD_FIRST_REASON; x < MDL_LMKD_COUNT; x++)
            set(l, mdl_lmkd_reason_name((mdl_lmkd_reason)x),
                json_integer((json_int_t)c->by_lmkd[x]));
        set(d, "by_lmkd_reason", l);
    }
    if (cell->device->xnu_pages)
        set(d, "by_jetsam_reason", by_cause(c->by_jetsam));
    return d;
}

/* The refault slowdown's p50 and p95 (null with no inference). */
static json_t *slowdown(const res_cell *c)
{
    int s50 = res_bucket_quantile(c->slowdown, MDL_SLOWDOWN_BUCKETS, 0.50);
    int s95 = res_bucket_quantile(c->slowdown, MDL_SLOWDOWN_BUCKETS, 0.95);
    return s50 < 0 ? json_null()
                   : json_pack("{sfsf}", "p50", s50 == 0 ? 1.0 : mdl_slowdown_middle((unsigned)s50),
                               "p95", s95 == 0 ? 1.0 : mdl_slowdown_middle((unsigned)s95));
}

/* The phone's pages (PSI mode): what slowed the app, what reclaim did, who
 * was killed (docs/results.md "pages"). */
static json_t *pages(const res_cell *c)
{
    json_t *p = json_object();
    set(p, "refault_slowdown", slowdown(c));
    set(p, "thrashing_max", json_integer((json_int_t)c->thrashing_max));
    set(p, "swap_used_max", json_integer((json_int_t)c->swap_used_max));
    set(p, "lmkd_kills_of_others", json_integer((json_int_t)c->lmkd_kills_of_others));
    set(p, "kernel_oom_kills", json_integer((json_int_t)c->kernel_oom_kills));
    set(p, "min_free", c->has_margin ? json_pack("{sI}", "p5", (json_int_t)whole(c->margin_p5))
                                     : json_null());
    int first = res_lmkd_kills_first(c);
    double k50 = res_lmkd_counted_p50(c);
    set(p, "kills_first",
        json_pack("{soso}", "reason",
                  first < 0 ? json_null() : json_string(mdl_lmkd_reason_name((mdl_lmkd_reason)first)),
                  "counted_p50", k50 < 0 ? json_null() : json_integer(whole(k50))));
    return p;
}

/* The iPhone's pages (docs/results.md "memorystatus"): memorystatus's
 * kills of every process by cause, the compressor, the slowdown. */
static json_t *memorystatus(const res_cell *c)
{
    json_t *m = json_object();
    set(m, "kills_by_cause", by_cause(c->jetsam_kills));
    set(m, "kills_of_others", json_integer((json_int_t)c->cached_kills));
    set(m, "successor_kills", json_integer((json_int_t)c->successor_kills));
    set(m, "compressed_max", json_integer((json_int_t)c->swap_used_max));
    set(m, "refault_slowdown", slowdown(c));
    return m;
}

/* The limits the app was held against and its margin under them (the
 * service's, the process the model runs in, with `processes`). */
static json_t *limits(const mdl_cell *cell, const mdl_device *dev, const res_cell *c)
{
    json_t *l = json_object();
    int64_t fg = mdl_kill_line(dev, 1), bg = mdl_kill_line(dev, 0);
    if (cell->workload != NULL && cell->workload->has_proc) {
        fg = mdl_cell_model_line(cell, 1);
        bg = mdl_cell_model_line(cell, 0);
    }
    set(l, "rule", json_string(dev->rule == MDL_KILL_JETSAM ? "jetsam" : "lmk"));
    set(l, "foreground_bytes", fg >= 0 ? json_integer((json_int_t)fg) : json_null());
    set(l, "background_bytes", bg >= 0 ? json_integer((json_int_t)bg) : json_null());
    set(l, "margin_bytes", c->has_margin ? json_pack("{sIsI}", "p5",
                                                    (json_int_t)whole(c->margin_p5), "p50",
                                                    (json_int_t)whole(c->margin_p50))
                                         : json_null());
    return l;
}

/* The app's processes: the main one (deaths, its share of the horizon
 * alive: availability) and the model's service (deaths, its share alive,
 * the requests that failed while it was down), per replication; and the
 * feature's availability, the share of the horizon a request could be
 * served (inference_availability). */
static json_t *processes(const res_plan *plan, const mdl_cell *cell, const res_cell *c)
{
    double n = plan->replications > 0 ? (double)plan->replications : 1.0;
    double horizon = (double)cell->horizon * n;
    double svc = (double)c->svc_deaths / n;
    return json_pack("{s{sfsf}s{sfsfsf}sf}", "main", "deaths", c->deaths_mean - svc, "available",
                     c->availability,
                     cell->workload->proc.name, "deaths", svc, "available",
                     horizon > 0 ? c->svc_alive_us / horizon : 0.0, "failed_requests",
                     (double)c->svc_failed / n, "feature_available", c->inference_availability);
}

static json_t *requests(const res_cell *c)
{
    json_t *r = json_object();
    set(r, "arrived", json_integer((json_int_t)c->arrived));
    set(r, "completed", json_integer((json_int_t)c->completed));
    set(r, "rejected", json_integer((json_int_t)c->rejected));
    set(r, "timed_out", json_integer((json_int_t)c->timed_out));
    set(r, "retried", json_integer((json_int_t)c->retried));
    set(r, "lost", json_integer((json_int_t)c->lost));
    set(r, "duplicate_working_sets", json_integer((json_int_t)c->duplicates));
    set(r, "failed", json_integer((json_int_t)c->failed));
    set(r, "wait_us", quantiles(&c->wait_us, 1, 1));
    set(r, "latency_us", quantiles(&c->latency_us, 1, 1));
    json_t *q = json_object();
    set(q, "mean", json_real(c->queue_len_mean));
    set(r, "queue_len", q);
    return r;
}

static json_t *mean_of(double x)
{
    json_t *o = json_object();
    set(o, "mean", json_real(x));
    return o;
}

/* extension: the records the deaths left, by signature (docs/on-call.md) */
static json_t *records_json(const res_cell *c)
{
    json_t *recs = json_array();
    for (unsigned k = 0; k < c->nrecords; k++) {
        const mdl_record_kind_count *x = &c->records[k];
        json_t *e = json_object();
        set(e, "record", json_string(mdl_record_kind_name(x->kind)));
        if (x->kind == MDL_REC_EXIT_INFO) {
            set(e, "reason", json_integer(x->reason));
            set(e, "reason_name", json_string(mdl_aei_reason_name(x->reason)));
        }
        set(e, "status", json_integer(x->status));
        set(e, "importance", json_integer(x->importance));
        set(e, "description", json_string(mdl_record_text_name(x->description)));
        if (x->lmkd != MDL_LMKD_NONE) /* lmkd's kill line: its reason */
            set(e, "lmkd_reason", json_string(mdl_lmkd_reason_name(x->lmkd)));
        if (x->jetsam != MDL_JETSAM_NONE) /* a JetsamEvent: XNU's cause */
            set(e, "jetsam_reason", json_string(mdl_jetsam_cause_name(x->jetsam)));
        set(e, "count", json_integer((json_int_t)x->count));
        set(e, "pss_kb_mean", json_integer(x->count ? whole((double)x->pss_kb_sum /
                                                           (double)x->count) : 0));
        append(recs, e);
    }
    return recs;
}

/* A quantile of the LLM's requests (null when none had it). */
static json_t *gen_q(double v) { return v < 0 ? json_null() : json_real(v); }

/* A part's layers on the GPU, as the policy holds them (docs/results.md
 * "generation"). */
static json_t *gpu_layers(const mdl_generation *x)
{
    uint32_t r;
    int o;
    mdl_gen_layers_on_gpu(&x->layers, x->layers.offloaded, &r, &o);
    return json_pack("{sIsIsIsbsIsIsb}", "n_gpu_layers", (json_int_t)x->layers.offloaded,
                     "layers", (json_int_t)x->layers.count, "repeating_on_gpu", (json_int_t)r,
                     "output_on_gpu", o, "gpu_read_bytes", (json_int_t)x->on_gpu,
                     "kv_gpu_layers", (json_int_t)x->kv_gpu_layers, "compute_on_gpu",
                     x->compute_gpu);
}

/* An LLM cell (docs/results.md "generation"): each generation part as the
 * policy runs it, then what its requests did. */
static json_t *generation(const res_plan *plan, const mdl_cell *cell, const res_cell *c)
{
    json_t *g = json_object(), *parts = json_object();
    for (unsigned k = 0; k < cell->candidate->nparts; k++) {
        const mdl_part *def = &cell->candidate->parts[k];
        if (!def->has_generation)
            continue;
        mdl_generation x;
        mdl_generation_in_force(def, &cell->policy, cell->device->os == MDL_OS_IOS,
                                &x);
        static const char *const kvs[] = {"touched", "reserved"};
        json_t *p = json_pack("{sIsIsIss}", "context", (json_int_t)x.context, "slots",
                              (json_int_t)x.slots, "kv_per_token_bytes",
                              (json_int_t)x.kv_per_token, "kv", kvs[x.kv]);
        set(p, "weights", json_pack("{sIsIsIsb}", "mapped", (json_int_t)x.mapped, "repacked",
                                    (json_int_t)x.repacked, "gpu", (json_int_t)x.gpu, "locked",
                                    x.locked));
        set(p, "compute_bytes", json_integer((json_int_t)x.compute));
        static const char *const kvt[] = {"f16", "q8_0", "q4_0"};
        set(p, "kv_type", json_string(kvt[x.kv_type]));
        set(p, "flash_attn", json_boolean(x.flash_attn == MDL_FA_ON));
        set(p, "mapped_file_bytes", json_integer((json_int_t)mdl_generation_file_pages(def, &x)));
        if (def->gen.layers.count > 0)
            set(p, "gpu_layers", gpu_layers(&x));
        set(parts, def->name, p);
    }
    set(g, "parts", parts);
    double n = plan->replications > 0 ? (double)plan->replications : 1.0;
    set(g, "requests_decoded", json_integer((json_int_t)c->gen_requests));
    set(g, "requests_started", json_integer((json_int_t)c->gen_started));
    set(g, "context_overflow", json_integer((json_int_t)c->context_overflow));
    json_t *tps = json_object();
    set(tps, "mean", c->decode_us > 0 ? json_real((double)c->tokens_out * 1e6 / c->decode_us)
                                      : json_null());
    set(tps, "p50", gen_q(c->tps_q[0]));
    set(tps, "p5", gen_q(c->tps_q[1]));
    set(g, "tokens_per_s", tps);
    json_t *tt = json_object();
    set(tt, "p50", gen_q(c->ttft_q[0]));
    set(tt, "p95", gen_q(c->ttft_q[1]));
    set(g, "ttft_us", tt);
    set(g, "quantiles", json_string(c->gen_exact ? "exact" : "buckets"));
    set(g, "kv_peak_bytes", json_pack("{sIsI}", "mean", (json_int_t)whole(c->kv_peak_sum / n),
                                      "max", (json_int_t)c->kv_peak_max));
    set(g, "mapped_weights_bytes", json_pack("{sIsI}", "mean",
                                             (json_int_t)whole(c->file_peak_sum / n), "max",
                                             (json_int_t)c->file_peak_max));
    set(g, "kv_lines", json_integer((json_int_t)c->kv_lines));
    set(g, "refault_slowdown", slowdown(c));
    return g;
}

/* A field rate's predicted side (docs/results.md "field"). */
static json_t *predicted_json(const res_field_rate *r)
{
    json_t *pr = json_object();
    set(pr, "rate", json_real(r->predicted));
    set(pr, "ci", json_pack("[ff]", r->predicted_ci.lo, r->predicted_ci.hi));
    set(pr, "session_rate", json_real(r->session_rate));
    set(pr, "session_ci", json_pack("[ff]", r->session_ci.lo, r->session_ci.hi));
    return pr;
}

/* The cell against its field entry: null when no entry holds its device;
 * "background" (an extension) when the entry gives background_rate. */
static json_t *field_json(const res_plan *plan, unsigned i, const res_cell *c)
{
    res_field_cmp f;
    res_field_compare(plan, i, c, &f);
    if (f.f == NULL)
        return json_null();
    json_t *fo = json_object(), *pr = predicted_json(&f.visible), *ob = json_object();
    set(pr, "sessions_per_day", json_real(f.f->sessions_per_day));
    set(fo, "predicted", pr);
    set(ob, "metric", json_string(mdl_field_metric_name(f.f->metric)));
    set(ob, "rate", json_real(f.visible.observed));
    set(ob, "ci", json_pack("[ff]", f.visible.observed_ci.lo, f.visible.observed_ci.hi));
    set(ob, "users", json_integer((json_int_t)f.f->users));
    set(ob, "source", f.f->source[0] ? json_string(f.f->source) : json_null());
    set(fo, "observed", ob);
    set(fo, "verdict", json_string(res_field_verdict_name(f.visible.verdict)));
    if (f.f->has_background) {
        json_t *bg = json_object(), *bo = json_object();
        set(bg, "predicted", predicted_json(&f.background));
        set(bo, "rate", json_real(f.background.observed));
        set(bo, "ci", json_pack("[ff]", f.background.observed_ci.lo,
                                f.background.observed_ci.hi));
        set(bg, "observed", bo);
        set(bg, "verdict", json_string(res_field_verdict_name(f.background.verdict)));
        set(fo, "background", bg);
    }
    return fo;
}

static json_t *cell_json(const res_plan *plan, unsigned i, const res_cell *c)
{
    const mdl_cell *cell = &plan->cells[i];
    json_t *o = json_object();
    set(o, "device", json_string(cell->device->name));
    set(o, "candidate", json_string(cell->candidate->id));
    const char *pj = plan->policy_json[i];
    set(o, "policy", trc_json_loadb(pj, strlen(pj), 0, NULL, NULL)); /* ours: NULL is memory */
    set(o, "peak", peak(c));
    set(o, "deaths", deaths(cell, c));
    mdl_device dv;
    mdl_device_in_force(cell->device, &cell->policy, &dv);
    set(o, "limits", limits(cell, &dv, c));
    if (names_lmkd_reasons(cell))
        set(o, "pages", pages(c));
    if (cell->device->xnu_pages)
        set(o, "memorystatus", memorystatus(c));
    if (mdl_candidate_generates(cell->candidate))
        set(o, "generation", generation(plan, cell, c));
    json_t *b = json_object();
    set(b, "rate", json_real(c->boot_loop_rate));
    set(o, "boot_loops", b);
    set(o, "requests", requests(c));
    set(o, "availability", mean_of(c->availability));
    set(o, "inference_availability", mean_of(c->inference_availability));
    set(o, "leaks", json_integer((json_int_t)c->leaks));
    if (cell->workload->nholders > 0) { /* who held the sessions (docs/results.md "owners") */
        double n = plan->replications > 0 ? (double)plan->replications : 1.0;
        set(o, "owners", json_pack("{sfsf}", "held_after_leave",
                                   c->held_after_leave_us / 1e6 / n, "leaked_sessions",
                                   (double)c->leaked_sessions / n));
    }
    if (cell->workload->has_proc) /* per process (docs/results.md "processes") */
        set(o, "processes", processes(plan, cell, c));
    set(o, "memory_warnings", json_integer((json_int_t)c->warnings));
    set(o, "cached_app_kills", json_integer((json_int_t)c->cached_kills));
    set(o, "switches", json_integer((json_int_t)c->switches));
    set(o, "exit_records", records_json(c));
    json_t *rec = json_object();
    set(rec, "candidate_switches", json_integer((json_int_t)c->candidate_switches));
    set(rec, "safe_mode_starts", json_integer((json_int_t)c->safe_mode_starts));
    set(o, "recovery", rec);
    if (plan->nfield > 0)
        set(o, "field", field_json(plan, i, c));
    if (plan->target.set) {
        res_verdict v;
        res_cell_verdict(&plan->target, c, &v);
        json_t *g = json_pack("{sbsbsb}", "meets", v.meets, "deaths_ok", v.deaths_ok,
                              "latency_ok", v.latency_ok);
        if (plan->target.has_completed)
            set(g, "completed_ok", json_boolean(v.completed_ok));
        if (plan->target.ttft > 0)
            set(g, "ttft_ok", json_boolean(v.ttft_ok));
        if (plan->target.tokens_per_s > 0)
            set(g, "tokens_per_s_ok", json_boolean(v.tps_ok));
        if (plan->target.has_overflow)
            set(g, "overflow_ok", json_boolean(v.overflow_ok));
        set(o, "target", g);
    }
    return o;
}

/* The target (null without one) and one decision per device and candidate. */
static void decisions_json(json_t *doc, const res_plan *plan, const res_result *r)
{
    const mdl_target *t = &plan->target;
    if (!t->set) {
        set(doc, "target", json_null());
        return;
    }
    json_t *g = json_object();
    set(g, "deaths", t->has_deaths ? json_real(t->deaths) : json_null());
    set(g, "latency_p95_us", t->latency_p95 > 0 ? json_integer((json_int_t)t->latency_p95)
                                                 : json_null());
    if (t->has_completed)
        set(g, "completed", json_real(t->completed));
    static const char *const tq[] = {"p50", "p95"}, *const rq[] = {"p50", "p5"};
    if (t->ttft > 0)
        set(g, "ttft_us", json_pack("{sI}", tq[t->ttft_q], (json_int_t)t->ttft));
    if (t->tokens_per_s > 0)
        set(g, "tokens_per_s", json_pack("{sf}", rq[t->tps_q], t->tokens_per_s));
    if (t->has_overflow)
        set(g, "overflow", json_real(t->overflow));
    set(doc, "target", g);
    res_decision *d = calloc(r->ncells ? r->ncells : 1, sizeof *d);
    if (d == NULL) {
        doc_failed = 1;
        return;
    }
    unsigned n = res_decisions(plan, r, d);
    json_t *list = json_array();
    for (unsigned k = 0; k < n; k++) {
        json_t *o = json_object();
        const mdl_cell *cell = &plan->cells[d[k].first];
        set(o, "device", json_string(cell->device->name));
        set(o, "candidate", json_string(cell->candidate->id));
        json_t *cells = json_array(), *meeting = json_array();
        for (unsigned i = d[k].first; i < d[k].first + d[k].count; i++) {
            append(cells, json_integer((json_int_t)i));
            res_verdict v;
            res_cell_verdict(t, &r->cells[i], &v);
            if (v.meets)
                append(meeting, json_integer((json_int_t)i));
        }
        set(o, "cells", cells);
        set(o, "meeting", meeting);
        set(o, "recommended", d[k].recommended >= 0 ? json_integer(d[k].recommended)
                                                     : json_null());
        set(o, "closest", d[k].closest >= 0 && d[k].recommended < 0
                              ? json_integer(d[k].closest) : json_null());
        static const char *const rules[] = {"only", "largest_context", "fastest_decode",
                                            "lowest_peak", "lowest_latency", "grid_order"};
        if (res_cell_context(cell) > 0) /* the LLM rule; older documents unchanged */
            set(o, "rule", d[k].recommended >= 0 ? json_string(rules[d[k].rule]) : json_null());
        if (r->contexts != NULL && k < r->ncontexts && r->contexts[k].searched) {
            const res_context *x = &r->contexts[k];
            set(o, "largest_context",
                json_pack("{sIsosososososIsb}", "from_cell", (json_int_t)x->base, "tokens",
                          x->tokens > 0 ? json_integer(x->tokens) : json_null(), "missed",
                          x->upper > 0 ? json_integer(x->upper) : json_null(), "too_small",
                          x->low > 0 ? json_integer(x->low) : json_null(), "step",
                          x->step > 0 ? json_integer(x->step) : json_null(), "cap",
                          json_integer(x->cap), "runs", (json_int_t)x->runs, "converged",
                          x->done));
        }
        if (plan->paths > 0) /* the gate: every path meets it, for some policy */
            set(o, "paths", json_pack("{sIsIsb}", "count", (json_int_t)d[k].paths,
                                      "policies_meeting", (json_int_t)d[k].meeting, "passed",
                                      d[k].recommended >= 0));
        append(list, o);
    }
    free(d);
    set(doc, "decisions", list);
}

/* --headroom's finding for one cell (docs/devices.md "Headroom"). */
static json_t *headroom_json(const res_headroom *h, unsigned runs)
{
    json_t *o = json_object();
    set(o, "factor", json_real(h->factor));
    set(o, "candidate_bytes", json_integer(whole(h->memory)));
    set(o, "extra_bytes", json_integer(whole((h->factor - 1) * h->memory)));
    set(o, "first_failing", isinf(h->upper) ? json_null() : json_real(h->upper));
    set(o, "capped", json_boolean(h->capped));
    json_t *miss = json_array();
    if (!isinf(h->upper) && h->deaths_miss)
        append(miss, json_string("deaths"));
    if (!isinf(h->upper) && h->latency_miss)
        append(miss, json_string("latency"));
    set(o, "first_failing_misses", miss);
    json_t *d = json_object();
    set(d, "any_rate", h->factor > 0 ? json_real(h->deaths) : json_null());
    set(d, "ci", h->factor > 0 ? json_pack("[f, f]", h->deaths_ci.lo, h->deaths_ci.hi)
                               : json_null());
    set(o, "deaths", d);
    set(o, "runs", json_integer(runs));
    return o;
}

/* provenance: per device of the plan, in the cells' order, what each of
 * its phone figures rests on: measured (or fitted) with its source, or
 * assumed (docs/devices.md). */
static json_t *provenance(const res_plan *plan)
{
    json_t *all = json_object();
    for (unsigned i = 0; i < plan->ncells; i++) {
        const mdl_device *d = plan->cells[i].device;
        if (json_object_get(all, d->name) != NULL)
            continue;
        unsigned n, measured = 0, assumed = 0;
        const char *const *names = mdl_device_values(d->os, &n);
        json_t *values = json_object();
        for (unsigned k = 0; k < n; k++) {
            if (!mdl_device_value_in_force(d, k))
                continue;
            int fitted = 0;
            const char *src = mdl_device_source(d, k, &fitted);
            json_t *v = json_object();
            set(v, "status", json_string(src == NULL ? "assumed" : fitted ? "fitted" : "measured"));
            if (src != NULL)
                set(v, "source", json_string(src));
            set(values, names[k], v);
            measured += src != NULL;
            assumed += src == NULL;
        }
        json_t *o = json_object();
        set(o, "measured", json_integer(measured));
        set(o, "assumed", json_integer(assumed));
        set(o, "values", values);
        set(all, d->name, o);
    }
    return all;
}

char *res_document_json(const res_plan *plan, const res_result *r)
{
    doc_failed = 0;
    json_t *doc = json_object();
    set(doc, "oomsim", json_string(SIM_VERSION));
    set(doc, "scenario", json_string(plan->name));
    set(doc, "about", json_string(plan->about != NULL ? plan->about : ""));
    set(doc, "seed", json_integer((json_int_t)plan->seed));
    set(doc, "replications", json_integer((json_int_t)plan->replications));
    set(doc, "horizon_us", json_integer((json_int_t)plan->horizon));
    set(doc, "provenance", provenance(plan));
    json_t *cells = json_array();
    for (unsigned i = 0; i < r->ncells; i++) {
        json_t *c = cell_json(plan, i, &r->cells[i]);
        if (r->headroom != NULL)
            set(c, "headroom", headroom_json(&r->headroom[i], r->headroom[0].runs));
        append(cells, c);
    }
    set(doc, "cells", cells);
    json_t *cmp = json_array();
    for (unsigned i = 0; i < r->ncmp; i++) {
        const res_comparison *c = &r->cmp[i];
        json_t *o = json_object();
        set(o, "metric", json_string(res_metric_name(c->metric)));
        set(o, "baseline", json_integer((json_int_t)c->baseline));
        set(o, "cell", json_integer((json_int_t)c->cell));
        /* bytes and microseconds stay integers, rates are reals */
        int whole_units = c->metric == RES_CMP_PEAK_P95 || c->metric == RES_CMP_LATENCY_P95;
        if (whole_units) {
            set(o, "diff_mean", json_integer(whole(c->diff)));
            set(o, "ci95", json_pack("[II]", (json_int_t)whole(c->ci.lo),
                                     (json_int_t)whole(c->ci.hi)));
        } else {
            set(o, "diff_mean", json_real(c->diff));
            set(o, "ci95", json_pack("[ff]", c->ci.lo, c->ci.hi));
        }
        set(o, "pairs", json_integer((json_int_t)c->pairs));
        append(cmp, o);
    }
    set(doc, "comparisons", cmp);
    decisions_json(doc, plan, r);
    char *text = doc_failed ? NULL : trc_json_dumps(doc, REAL_FLAGS);
    json_decref(doc);
    return text;
}

/* ------------------------------------------------------- text output */

char *res__text_done(sim_text *o)
{
    if (!o->oom && o->v != NULL && o->n > 0 && o->v[o->n - 1] == '\n')
        o->v[--o->n] = '\0';
    return sim_text_done(o);
}

/* Appends a policy value the way a scenario writes it, compactly:
 * strings bare, lists [a,b], maps kind(key=value,...) when they have a
 * kind (a retry policy), (key=value,...) otherwise. */
static void label_value(json_t *v, char *buf, size_t n, size_t *len, int *failed)
{
#define LABEL_PUT(...)                                                             \
    do {                                                                          \
        int w_ = snprintf(buf + *len, n - *len, __VA_ARGS__);                     \
        *len = w_ < 0 || (size_t)w_ >= n - *len ? n - 1 : *len + (size_t)w_;      \
    } while (0)
    if (json_is_string(v)) {
        LABEL_PUT("%s", json_string_value(v));
    } else if (json_is_array(v)) {
        size_t i;
        json_t *x;
        LABEL_PUT("[");
        json_array_foreach(v, i, x) {
            if (i > 0)
                LABEL_PUT(",");
            label_value(x, buf, n, len, failed);
        }
        LABEL_PUT("]");
    } else if (json_is_object(v)) {
        json_t *kind = json_object_get(v, "kind");
        if (json_is_string(kind))
            LABEL_PUT("%s", json_string_value(kind));
        if (kind == NULL || json_object_size(v) > 1) {
            const char *k;
            json_t *x;
            int first = 1;
            LABEL_PUT("(");
            json_object_foreach(v, k, x) {
                if (x == kind)
                    continue;
                LABEL_PUT("%s%s=", first ? "" : ",", k);
                first = 0;
                label_value(x, buf, n, len, failed);
            }
            LABEL_PUT(")");
        }
    } else {
        char *t = trc_json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY | JSON_REAL_PRECISION(6));
        if (t == NULL)
            *failed = 1;
        LABEL_PUT("%s", t != NULL ? t : "?");
        free(t);
    }
#undef LABEL_PUT
}

/* "sessions=2 residency=preload" from the policy's JSON ("-" when the
 * scenario has no axes). */
int res_policy_label(const char *json, char *buf, size_t n)
{
    int oom = 0, failed = 0;
    json_t *o = trc_json_loadb(json, strlen(json), 0, NULL, &oom);
    size_t len = 0;
    buf[0] = '\0';
    const char *k;
    json_t *v;
    if (o != NULL) {
        json_object_foreach(o, k, v) {
            int w = snprintf(buf + len, n - len, "%s%s=", len ? " " : "", k);
            if (w < 0 || (size_t)w >= n - len)
                break;
            len += (size_t)w;
            label_value(v, buf, n, &len, &failed);
        }
        json_decref(o);
    }
    if (buf[0] == '\0')
        snprintf(buf, n, "-");
    return oom || failed ? SIM_ENOMEM : SIM_OK;
}

const char *res__top_stage(const res_cell *c)
{
    int best = -1;
    for (int s = 0; s < MDL_STAGE_COUNT; s++)
        if (c->stage_at_peak[s] > 0 && (best < 0 || c->stage_at_peak[s] > c->stage_at_peak[best]))
            best = s;
    return best < 0 ? "-" : mdl_stage_name((mdl_stage)best);
}

/* The LLM columns of a cell (empty for one that does not generate). */
static void csv_llm(sim_text *o, const mdl_cell *cell, const res_cell *c)
{
    int64_t compute = 0, mapped = 0;
    for (unsigned k = 0; k < cell->candidate->nparts; k++) {
        const mdl_part *def = &cell->candidate->parts[k];
        if (!def->has_generation)
            continue;
        mdl_generation x;
        mdl_generation_in_force(def, &cell->policy, cell->device->os == MDL_OS_IOS,
                                &x);
        compute += x.compute;
        mapped += mdl_generation_file_pages(def, &x);
    }
    uint32_t context = res_cell_context(cell);
    if (context == 0) {
        sim_text_printf(o, ",,,,,,,,,,");
        return;
    }
    sim_text_printf(o, ",%u", context);
    const double q[4] = {c->ttft_q[0], c->ttft_q[1], c->tps_q[0], c->tps_q[1]};
    for (int k = 0; k < 4; k++)
        if (q[k] < 0)
            sim_text_printf(o, ",");
        else
            sim_text_printf(o, k < 2 ? ",%.0f" : ",%.6g", q[k]);
    sim_text_printf(o, ",%llu,%llu,%lld,%lld,%lld", (unsigned long long)c->context_overflow,
                    (unsigned long long)c->gen_started, (long long)c->kv_peak_max,
                    (long long)compute, (long long)mapped);
}

char *res_document_csv(const res_plan *plan, const res_result *r)
{
    int llm = 0;
    for (unsigned i = 0; i < plan->ncells && !llm; i++)
        llm = res_cell_context(&plan->cells[i]) > 0;
    sim_text o = SIM_TEXT_INIT;
    sim_text_printf(&o, "device,candidate,policy,peak_mean_bytes,peak_p50_bytes,peak_p95_bytes,"
            "peak_p99_bytes,peak_max_bytes,stage_at_peak,deaths_per_replication,any_rate,"
            "any_rate_lo,any_rate_hi");
    for (int x = 0; x < MDL_EXIT_COUNT; x++)
        sim_text_printf(&o, ",%s", mdl_exit_name((mdl_exit)x));
    sim_text_printf(&o, ",boot_loop_rate,arrived,completed,rejected,timed_out,retried,lost,failed,"
            "duplicate_working_sets,wait_mean_us,wait_p95_us,latency_mean_us,latency_p50_us,"
            "latency_p95_us,latency_p99_us,queue_len_mean,availability,inference_availability,"
            "leaks,memory_warnings,cached_app_kills,switches,switch_peak_p95_bytes,limit_foreground_bytes,"
            "limit_background_bytes,margin_p5_bytes,margin_p50_bytes,meets_target%s\n",
            llm ? ",context,ttft_p50_us,ttft_p95_us,tokens_per_s_p50,tokens_per_s_p5,"
                  "context_overflow,requests_started,kv_peak_max_bytes,compute_bytes,"
                  "mapped_file_bytes" : "");
    for (unsigned i = 0; i < r->ncells; i++) {
        const res_cell *c = &r->cells[i];
        const mdl_cell *cell = &plan->cells[i];
        char label[512];
        if (res_policy_label(plan->policy_json[i], label, sizeof label) != SIM_OK)
            o.oom = 1;
        sim_text_printf(&o, "%s,%s,\"", cell->device->name, cell->candidate->id);
        for (const char *p = label; *p; p++)
            sim_text_printf(&o, *p == '"' ? "\"\"" : "%c", *p);
        sim_text_printf(&o, "\",%lld,%lld,%lld,%lld,%lld,%s,%.6g,%.6g,%.6g,%.6g", (long long)whole(c->peak.mean),
            (long long)whole(c->peak.p50), (long long)whole(c->peak.p95),
            (long long)whole(c->peak.p99), (long long)whole(c->peak.max), res__top_stage(c),
            c->deaths_mean, c->any_rate, c->any_ci.lo, c->any_ci.hi);
        for (int x = 0; x < MDL_EXIT_COUNT; x++)
            sim_text_printf(&o, ",%llu", (unsigned long long)c->by_reason[x]);
        sim_text_printf(&o, ",%.6g,%llu,%llu,%llu,%llu,%llu,%llu,%llu,%llu,%lld,%lld,%lld,%lld,%lld,%lld,"
                "%.6g,%.6g,%.6g,%llu,%llu,%llu,%llu,%lld,",
            c->boot_loop_rate, (unsigned long long)c->arrived, (unsigned long long)c->completed,
            (unsigned long long)c->rejected, (unsigned long long)c->timed_out,
            (unsigned long long)c->retried, (unsigned long long)c->lost,
            (unsigned long long)c->failed, (unsigned long long)c->duplicates,
            (long long)whole(c->wait_us.mean), (long long)whole(c->wait_us.p95),
            (long long)whole(c->latency_us.mean), (long long)whole(c->latency_us.p50),
            (long long)whole(c->latency_us.p95), (long long)whole(c->latency_us.p99),
            c->queue_len_mean, c->availability, c->inference_availability,
            (unsigned long long)c->leaks, (unsigned long long)c->warnings,
            (unsigned long long)c->cached_kills, (unsigned long long)c->switches,
            (long long)whole(c->switch_peak.p95));
        sim_text_printf(&o, "%lld,%lld,", (long long)mdl_cell_model_line(cell, 1),
                        (long long)mdl_cell_model_line(cell, 0));
        if (c->has_margin)
            sim_text_printf(&o, "%lld,%lld,", (long long)whole(c->margin_p5),
                            (long long)whole(c->margin_p50));
        else
            sim_text_printf(&o, ",,");
        res_verdict v;
        res_cell_verdict(&plan->target, c, &v);
        sim_text_printf(&o, "%s", !plan->target.set ? "" : v.meets ? "1" : "0");
        if (llm)
            csv_llm(&o, cell, c);
        sim_text_printf(&o, "\n");
    }
    return res__text_done(&o);
}
