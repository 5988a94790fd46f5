/* timeline.c - one replication's timeline collected from the world's
 * trace events (the sink of mdl_run_replication_traced) into a fixed
 * number of time columns, so its memory does not grow with the horizon;
 * docs/reports.md says what each column shows.  plot.c draws it. */
#include "timeline_int.h"

#include <stdlib.h>
#include <string.h>

res_timeline *res_timeline_create(const mdl_device *dev, sim_time horizon)
{
    res_timeline *t = calloc(1, sizeof *t);
    if (t == NULL)
        return NULL;
    t->dev = *dev;
    t->line[0] = mdl_kill_line(dev, 0);
    t->line[1] = mdl_kill_line(dev, 1);
    t->horizon = horizon > 0 ? horizon : 1;
    static const int cat_of[TRC_MEM_COUNT] = {MDL_CAT_JAVA, MDL_CAT_NATIVE, MDL_CAT_GPU,
                                              MDL_CAT_FILE};
    for (int k = 0; k < TRC_MEM_COUNT; k++)
        if (dev->counts_mask & MDL_CAT_BIT(cat_of[k]))
            t->counted |= 1u << k;
    return t;
}

void res_timeline_lines(res_timeline *t, const mdl_cell *cell)
{
    if (t == NULL)
        return;
    t->line[0] = mdl_cell_model_line(cell, 0);
    t->line[1] = mdl_cell_model_line(cell, 1);
}

void res_timeline_free(res_timeline *t)
{
    free(t);
}

static int64_t counted_of(const res_timeline *t, const int64_t m[TRC_MEM_COUNT])
{
    int64_t s = 0;
    for (int k = 0; k < TRC_MEM_COUNT; k++)
        if (t->counted >> k & 1u)
            s += m[k];
    return s;
}

static unsigned column_of(const res_timeline *t, sim_time at)
{
    if (at <= 0)
        return 0;
    if (at >= t->horizon)
        return RES_TIMELINE_COLUMNS - 1;
    return (unsigned)((double)at / (double)t->horizon * RES_TIMELINE_COLUMNS);
}

/* Memory becomes m at time `at`: columns entered since the last change
 * take the state that held at their start; the column keeps its highest
 * counted state. */
static void record(res_timeline *t, sim_time at, const int64_t m[TRC_MEM_COUNT])
{
    unsigned i = column_of(t, at);
    while (t->filled <= i) {
        memcpy(t->col[t->filled], t->state, sizeof t->state);
        t->col_key[t->filled] = counted_of(t, t->state);
        t->filled++;
    }
    memcpy(t->state, m, sizeof t->state);
    int64_t key = counted_of(t, m);
    if (key > t->col_key[i]) {
        memcpy(t->col[i], m, sizeof t->state);
        t->col_key[i] = key;
    }
    if (key > t->info.peak_counted) {
        t->info.peak_counted = key;
        t->info.peak_time = at;
        memcpy(t->info.peak_mem, m, sizeof t->state);
    }
}

static void add_mark(res_timeline *t, sim_time at, mark_kind k, int64_t counted)
{
    if (t->nmark == RES_TIMELINE_MARKS) {
        t->info.marks_dropped++;
        return;
    }
    t->mark[t->nmark].t = at;
    t->mark[t->nmark].kind = k;
    t->mark[t->nmark].counted = counted;
    t->nmark++;
}

static void add_band(res_timeline *t, int stage, sim_time t0, sim_time t1)
{
    if (t->nband == RES_TIMELINE_BANDS) {
        t->info.bands_dropped++;
        return;
    }
    t->band[t->nband].t0 = t0;
    t->band[t->nband].t1 = t1;
    t->band[t->nband].stage = stage;
    t->nband++;
    t->info.bands++;
}

static void bands_event(res_timeline *t, const trc_event *e, int kind)
{
    if (kind == TRC_EXIT_EVENT) { /* a death ends every stage it interrupted */
        for (unsigned k = 0; k < t->nopen; k++)
            add_band(t, t->open[k].stage, t->open[k].t0, e->time_us);
        t->nopen = 0;
        return;
    }
    int stage = (int)e->stage;
    const char *part = (e->has & TRC_F_PART) ? e->part : "";
    if (kind == TRC_SAMPLE && (e->has & TRC_F_ERROR) &&
        (strcmp(e->error, "background") == 0 || strcmp(e->error, "foreground") == 0)) {
        kind = e->error[0] == 'b' ? TRC_BEGIN : TRC_END;
        stage = BAND_BACKGROUND;
        part = "";
    } else if (e->stage == TRC_INFERENCE || (kind != TRC_BEGIN && kind != TRC_END)) {
        return;
    }
    if (kind == TRC_BEGIN) {
        if (t->nopen == TL_OPEN) { /* cannot pair it: count it as not drawn */
            t->info.bands_dropped++;
            return;
        }
        tl_open *o = &t->open[t->nopen++];
        o->stage = stage;
        snprintf(o->part, sizeof o->part, "%s", part);
        o->t0 = e->time_us;
        return;
    }
    for (unsigned k = 0; k < t->nopen; k++)
        if (t->open[k].stage == stage && strcmp(t->open[k].part, part) == 0) {
            add_band(t, stage, t->open[k].t0, e->time_us);
            t->open[k] = t->open[--t->nopen];
            return;
        }
}

/* The KV caches become `v` at `at` (a kv note; 0 at a death): columns
 * entered since keep the state that held at their start, a column its
 * highest. */
static void kv_record(res_timeline *t, sim_time at, int64_t v)
{
    unsigned i = column_of(t, at);
    while (t->kv_filled <= i)
        t->kv[t->kv_filled++] = t->kv_state;
    t->kv_state = v;
    if (v > t->kv[i])
        t->kv[i] = v;
    if (v > t->info.kv_max)
        t->info.kv_max = v;
}

/* An LLM's notes: the KV caches held, the weights by kind once loaded. */
static void generation_note(res_timeline *t, const trc_event *e)
{
    if (!(e->has & TRC_F_PAGES))
        return;
    if (e->pages_has >> TRC_PG_KV & 1u)
        kv_record(t, e->time_us, e->pages[TRC_PG_KV]);
    if (e->pages_has >> TRC_PG_WEIGHTS_MAPPED & 1u) {
        static const int keys[3] = {TRC_PG_WEIGHTS_MAPPED, TRC_PG_WEIGHTS_REPACKED,
                                    TRC_PG_WEIGHTS_GPU};
        for (int k = 0; k < 3; k++)
            t->info.weights[k] = e->pages_has >> keys[k] & 1u ? e->pages[keys[k]] : 0;
        t->info.has_weights = 1;
    }
}

static void timeline_record(void *ctx, sim_time at, const int64_t m[TRC_MEM_COUNT])
{
    record(ctx, at, m);
}

int res_timeline_add(void *ctx, const trc_event *e, sim_error *err)
{
    (void)err;
    res_timeline *t = ctx;
    int kind = (e->has & TRC_F_KIND) ? (int)e->kind : TRC_SAMPLE;
    t->info.events++;
    int note = kind == TRC_SAMPLE && (e->has & TRC_F_ERROR);
    if (note && strcmp(e->error, "memory_warning") == 0) {
        t->info.warnings++;
        add_mark(t, e->time_us, MARK_WARNING, 0);
    } else if (note && (strcmp(e->error, "cached_app_killed") == 0 ||
                        strcmp(e->error, "process_killed") == 0)) { /* iOS: another process */
        t->info.cached_kills++;
        add_mark(t, e->time_us, MARK_CACHED_KILL, 0);
    } else if (note && strcmp(e->error, "pressure_spike") == 0) {
        add_mark(t, e->time_us, MARK_PRESSURE, 0);
    } else if (note) {
        generation_note(t, e);
    }
    if (kind == TRC_RECOVERY) {
        t->info.recoveries++;
        add_mark(t, e->time_us, MARK_RECOVERY, 0);
    }
    bands_event(t, e, kind);
    if (kind == TRC_EXIT_EVENT) {
        int64_t m[TRC_MEM_COUNT] = {0};
        for (int k = 0; k < TRC_MEM_COUNT; k++)
            if (e->mem_has >> k & 1u)
                m[k] = e->mem[k];
        t->info.deaths++;
        add_mark(t, e->time_us, MARK_DEATH, counted_of(t, m));
        if (t->kv_state > 0)
            kv_record(t, e->time_us, 0); /* the KV went with the process */
    }
    res__follow(&t->follow, e, timeline_record, t);
    return SIM_OK;
}

void res_timeline_finish(res_timeline *t)
{
    res__follow_flush(&t->follow, timeline_record, t);
    for (unsigned k = 0; k < t->nopen; k++)
        add_band(t, t->open[k].stage, t->open[k].t0, t->horizon);
    t->nopen = 0;
    int64_t now[TRC_MEM_COUNT];
    memcpy(now, t->state, sizeof now);
    record(t, t->horizon, now);
    if (t->info.kv_max > 0)
        kv_record(t, t->horizon, t->kv_state);
}

void res_timeline_info_get(const res_timeline *t, res_timeline_info *out)
{
    *out = t->info;
}
