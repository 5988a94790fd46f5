/* emit.c - the replication's timeline (docs/traces.md): one named emitter
 * per kind of event the world announces.  Each does nothing when the run
 * is not traced or is tearing down, so the model calls them unguarded.
 * Every event carries the time, the candidate, memory by category and the
 * queue and session counts; an event that announces an allocation comes
 * before it, so a death inside a stage leaves the stage open, as on a
 * device. */
#include <stdio.h>

#include "world_int.h"

void w__process_name(const world *w, int main, char out[TRC_TEXT_MAX])
{
    if (w->cell->device->os == MDL_OS_IOS) /* a JetsamEvent names the executable */
        snprintf(out, TRC_TEXT_MAX, "%s", w->wl->executable);
    else
        snprintf(out, TRC_TEXT_MAX, "%s%s%.22s", w->wl->package, main ? "" : ":",
                 main ? "" : w->wl->proc.name);
}

/* The phone's pages as the page model has them now (docs/traces.md "pages"). */
static void pages_fill(const world *w, trc_event *e)
{
    pg_fill(&w->pg, &w->pga, e);
}

/* The app's jetsam band now (iOS). */
static int jetsam_band(const world *w)
{
    return pg_xnu_band(&w->pg, &w->pga);
}

static trc_event *ev_begin(world *w, mdl_stage stage, trc_kind kind, int part)
{
    trc_event *e = &w->ev;
    trc_event_clear(e);
    e->time_us = now(w);
    /* the app's own memory has no trace stage: filed under load */
    e->stage = (trc_stage)(stage < MDL_STAGE_APP_START ? stage : MDL_STAGE_LOAD);
    e->kind = kind;
    e->has = TRC_F_KIND | TRC_F_CANDIDATE | TRC_F_MEM | TRC_F_QUEUE | TRC_F_IN_FLIGHT |
             TRC_F_SESSIONS | TRC_F_RSS_MB;
    snprintf(e->candidate, sizeof e->candidate, "%.63s", w->cand->id);
    static const int cat_of[TRC_MEM_COUNT] = {MDL_CAT_JAVA, MDL_CAT_NATIVE, MDL_CAT_GPU,
                                              MDL_CAT_FILE};
    e->mem_has = 0xfu;
    for (int k = 0; k < TRC_MEM_COUNT; k++)
        e->mem[k] = mdl_ledger_total(w->led, (mdl_category)cat_of[k]);
    e->rss_mb = mdl_ledger_counted(w->led) >> 20;
    e->queue = w->proc.q_len;
    e->in_flight = w->proc.running;
    e->sessions = w->lim.sess_eff;
    if (part >= 0) {
        e->has |= TRC_F_PART;
        snprintf(e->part, sizeof e->part, "%.63s", w->store.part[part].def->name);
    }
    return e;
}

static void ev_send(world *w)
{
    int rc = w->trace->fn(w->trace->ctx, &w->ev, w->err);
    if (rc != SIM_OK)
        w__fail(w, rc);
}

/* The event announces the allocation that follows it. */
static void with_alloc(trc_event *e, const int64_t amounts[MDL_CAT_COUNT])
{
    e->has |= TRC_F_ALLOC;
    e->alloc_has = 0xfu;
    memcpy(e->alloc, amounts, sizeof e->alloc);
}

static void with_error(trc_event *e, const char *what)
{
    e->has |= TRC_F_ERROR;
    snprintf(e->error, sizeof e->error, "%s", what);
}

void w__emit_session(world *w, unsigned part, const char *owner, uint32_t id, const char *what,
                     const char *how, int64_t last_req, const int64_t *alloc)
{
    if (!TRACING(w))
        return;
    trc_event *e = ev_begin(w, MDL_STAGE_INFERENCE, TRC_SAMPLE, (int)part);
    with_error(e, what);
    e->has |= TRC_F_OWNER | TRC_F_SESSION | TRC_F_ACTION;
    snprintf(e->owner, sizeof e->owner, "%.63s", owner);
    snprintf(e->action, sizeof e->action, "%.63s", how);
    e->session = id;
    if (last_req >= 0) {
        e->has |= TRC_F_REQUEST;
        e->request = last_req;
    }
    if (alloc != NULL)
        with_alloc(e, alloc);
    ev_send(w);
}

/* A sample that only says what happened: an error class of the trace
 * schema (memory_warning, rejected, timeout, background, ...). */
void w__emit_note(world *w, int part, mdl_stage stage, const char *what)
{
    if (!TRACING(w))
        return;
    trc_event *e = ev_begin(w, stage, TRC_SAMPLE, part);
    with_error(e, what);
    ev_send(w);
}

void w__emit_background(world *w)
{
    if (!TRACING(w))
        return;
    trc_event *e = ev_begin(w, w->last_stage, TRC_SAMPLE, -1);
    with_error(e, "background");
    if (w->dev->has_successor) {
        e->has |= TRC_F_PAGES;
        e->pages[TRC_PG_SUCCESSOR] = w->dstate.successor;
        e->pages_has |= 1u << TRC_PG_SUCCESSOR;
    }
    ev_send(w);
}

/* The app's own memory is allocated: its baseline at a cold start, or a
 * page's hold (`what`), announcing the allocation that follows. */
void w__emit_app(world *w, const char *what, const int64_t amounts[MDL_CAT_COUNT])
{
    if (!TRACING(w))
        return;
    trc_event *e = ev_begin(w, MDL_STAGE_APP_START, TRC_SAMPLE, -1);
    with_alloc(e, amounts);
    with_error(e, what);
    ev_send(w);
}

/* An update step's note; `action: app_stopped` when it stopped the app. */
void w__emit_update(world *w, const char *what, int stops)
{
    if (!TRACING(w))
        return;
    trc_event *e = ev_begin(w, w->last_stage, TRC_SAMPLE, -1);
    with_error(e, what);
    if (stops) {
        e->has |= TRC_F_ACTION;
        snprintf(e->action, sizeof e->action, "app_stopped");
    }
    ev_send(w);
}

/* A page's hold: made at its enter (the amounts), or released at its leave
 * (NULL: the amounts are the enter's); `action` names the page. */
void w__emit_page(world *w, const char *what, const char *page, const int64_t *amounts)
{
    if (!TRACING(w))
        return;
    trc_event *e = ev_begin(w, MDL_STAGE_APP_START, TRC_SAMPLE, -1);
    if (amounts != NULL)
        with_alloc(e, amounts);
    with_error(e, what);
    e->has |= TRC_F_ACTION;
    snprintf(e->action, sizeof e->action, "%s %.56s", amounts != NULL ? "enter" : "leave", page);
    ev_send(w);
}

/* A phase begins, with what a replay needs: its time and amounts. */
void w__emit_stage_begin(world *w, unsigned part, mdl_stage stage, const w_stage_cost *c)
{
    if (!TRACING(w))
        return;
    trc_event *e = ev_begin(w, stage, TRC_BEGIN, (int)part);
    e->has |= TRC_F_DURATION | TRC_F_ALLOC | TRC_F_KEEP;
    e->duration_us = c->time;
    e->alloc_has = e->keep_has = 0xfu;
    for (int k = 0; k < MDL_CAT_COUNT; k++) {
        e->alloc[k] = c->resident[k] + c->transient[k];
        e->keep[k] = c->resident[k];
    }
    ev_send(w);
}

/* A stage of a part ends; error, when not NULL, says how (delegate_failed). */
void w__emit_stage_end(world *w, unsigned part, mdl_stage stage, const char *error)
{
    if (!TRACING(w))
        return;
    trc_event *e = ev_begin(w, stage, TRC_END, (int)part);
    if (error != NULL)
        with_error(e, error);
    ev_send(w);
}

/* A part is released: a sample of stage release. */
void w__emit_release(world *w, unsigned part)
{
    if (!TRACING(w))
        return;
    ev_begin(w, MDL_STAGE_RELEASE, TRC_SAMPLE, (int)part);
    ev_send(w);
}

void w__emit_cache_begin(world *w, unsigned part, const int64_t miss[MDL_CAT_COUNT])
{
    if (!TRACING(w))
        return;
    with_alloc(ev_begin(w, MDL_STAGE_CACHE, TRC_BEGIN, (int)part), miss);
    ev_send(w);
}

/* An execution of r begins on p, in the lowest free session slot; keep,
 * when not NULL, is the session state it opens, which stays. */
void w__emit_request_note(world *w, const char *what, uint32_t user_index)
{
    if (!TRACING(w))
        return;
    trc_event *e = ev_begin(w, MDL_STAGE_INFERENCE, TRC_SAMPLE, -1);
    with_error(e, what);
    e->has |= TRC_F_REQUEST;
    e->request = (int64_t)w->store.users[user_index].id;
    ev_send(w);
}

void w__emit_inference_begin(world *w, part_rt *p, req *r, const int64_t *keep)
{
    if (!TRACING(w))
        return;
    const user *x = &w->store.users[r->user];
    unsigned s = 0;
    while (s < MDL_SESSIONS_MAX && (p->slots[s / 64] >> (s % 64) & 1u))
        s++;
    r->slot = (uint16_t)s;
    p->slots[s / 64] |= UINT64_C(1) << (s % 64);
    trc_event *e = ev_begin(w, MDL_STAGE_INFERENCE, TRC_BEGIN, (int)(p - w->proc.parts));
    e->has |= TRC_F_SESSION | TRC_F_REQUEST | TRC_F_DURATION;
    e->session = s;
    e->request = (int64_t)x->id;
    e->duration_us = EXEC_TIME(w, p, x->d.time[r->idx]) + w->exec_extra;
    with_alloc(e, x->d.ws[r->idx]);
    if (keep != NULL) {
        e->has |= TRC_F_KEEP;
        e->keep_has = 0xfu;
        memcpy(e->keep, keep, sizeof e->keep);
    }
    ev_send(w);
}

void w__emit_inference_end(world *w, part_rt *p, const req *r)
{
    if (!TRACING(w))
        return;
    p->slots[r->slot / 64] &= ~(UINT64_C(1) << (r->slot % 64));
    trc_event *e = ev_begin(w, MDL_STAGE_INFERENCE, TRC_END, (int)(p - w->proc.parts));
    e->has |= TRC_F_SESSION | TRC_F_REQUEST;
    e->session = r->slot;
    e->request = (int64_t)w->store.users[r->user].id;
    if (w->denying) /* stopped: iOS runs no GPU work in the background */
        with_error(e, "background_gpu_denied");
    else if (r->orphan) /* an attempt the client gave up on */
        with_error(e, "abandoned");
    ev_send(w);
}

/* A retry, with the payload the new attempt allocates next. */
void w__emit_retry(world *w, const user *x)
{
    if (!TRACING(w))
        return;
    trc_event *e = ev_begin(w, MDL_STAGE_INFERENCE, TRC_SAMPLE, -1);
    with_error(e, x->live > 0 ? "retry_duplicate" : "retry");
    e->has |= TRC_F_REQUEST;
    e->request = (int64_t)x->id;
    with_alloc(e, x->d.payload);
    ev_send(w);
}

/* The user's delay before reopening the app (for a replay). */
void w__emit_relaunch_delay(world *w, sim_time delay)
{
    if (!TRACING(w))
        return;
    trc_event *e = ev_begin(w, MDL_STAGE_EXIT, TRC_SAMPLE, -1);
    e->has |= TRC_F_DURATION;
    e->duration_us = delay;
    ev_send(w);
}

void w__emit_restart_delay(world *w, sim_time delay)
{
    if (!TRACING(w))
        return;
    trc_event *e = ev_begin(w, MDL_STAGE_EXIT, TRC_SAMPLE, -1);
    with_error(e, "service_restart_delay");
    e->has |= TRC_F_DURATION;
    e->duration_us = delay;
    ev_send(w);
}

/* The record r on exit event e: its `exit` map (Android) or its report's
 * name in `error` (iOS). */
static void with_record(trc_event *e, const mdl_exit_record *r)
{
    e->has |= TRC_F_EXIT;
    e->exit.has = TRC_X_IMPORTANCE | TRC_X_PSS_KB | TRC_X_RSS_KB | TRC_X_STATUS |
                  TRC_X_TIMESTAMP_MS;
    if (r->kind == MDL_REC_EXIT_INFO) {
        e->exit.has |= TRC_X_REASON_CODE;
        e->exit.reason_code = r->reason;
        if (r->lmkd != MDL_LMKD_NONE) /* the lmkd kill line's reason */
            with_error(e, mdl_lmkd_reason_name(r->lmkd));
        else if (r->kernel_oom) /* the kernel's OOM kill, as the importer names it */
            with_error(e, "kernel_oom");
    } else if (r->kind == MDL_REC_JETSAM_SYSTEM || r->kind == MDL_REC_METRICKIT) {
        /* iOS: no ApplicationExitInfo; the report the system wrote, by the
         * name iOS gives it (the diagnosis reads it back), then XNU's cause
         * (MetricKit's count names none: there it is the model's alone) */
        e->has |= TRC_F_ERROR;
        snprintf(e->error, sizeof e->error, "%s:%s", mdl_record_kind_name(r->kind),
                 mdl_jetsam_cause_name(r->jetsam));
    } else {
        with_error(e, mdl_record_kind_name(r->kind));
    }
    e->exit.importance = r->importance;
    e->exit.pss_kb = r->pss_kb;
    e->exit.rss_kb = r->rss_kb;
    e->exit.status = r->status;
    e->exit.timestamp_ms = (r->time + 500) / 1000; /* rounded, as explain prints an instant */
    if (r->kind == MDL_REC_METRICKIT) /* no report: a count in the day's MetricKit payload,
                                       * with no time, no footprint and no status */
        e->exit.has = TRC_X_IMPORTANCE;
}

void w__emit_exit(world *w, const mdl_exit_record *r, int main)
{
    if (!TRACING(w))
        return;
    static const trc_exit_reason reason_of[MDL_EXIT_COUNT] = {
        TRC_LOW_MEMORY, TRC_JAVA_CRASH, TRC_NATIVE_CRASH, TRC_ANR, TRC_SYSTEM_RECLAIM,
        TRC_UNKNOWN}; /* watchdog: no trace class of its own */
    trc_event *e = ev_begin(w, MDL_STAGE_EXIT, TRC_EXIT_EVENT, -1);
    e->has |= TRC_F_EXIT_REASON;
    /* a phone that keeps no record: the trace cannot say why either */
    e->exit_reason = w->dev->no_exit_info ? TRC_UNKNOWN : reason_of[r->cls];
    if (!w->dev->no_exit_info)
        with_record(e, r);
    if (w->kill_log[0] != '\0') { /* lmkd's kill line, written with the record */
        e->has |= TRC_F_LOG;
        snprintf(e->log, sizeof e->log, "%s", w->kill_log);
    }
    if (w->pg.on) { /* the phone's pages at the death, and the app's adj (iOS: band) */
        pages_fill(w, e);
        e->pages[TRC_PG_ADJ] = w->pg.on == W_PAGES_XNU ? jetsam_band(w)
                               : main                  ? w__main_adj(w)
                                                       : w__app_adj(w);
        e->pages_has |= 1u << TRC_PG_ADJ;
    }
    /* the process the record is of (with a service, each leaves its own)
     * and the app's version: what a logged record is matched on */
    e->has |= TRC_F_PROCESS | TRC_F_APP_VERSION;
    w__process_name(w, main || !w->svc, e->process);
    snprintf(e->app_version, sizeof e->app_version, "%s", w->wl->version);
    ev_send(w);
}

/* What the recovery state put in force for this start, one event each. */
void w__emit_recovery(world *w)
{
    if (!TRACING(w))
        return;
    const char *acts[MDL_ACT_COUNT + 2];
    unsigned na = 0;
    unsigned in_force = w->life.rec.acts;
    if (w->life.rec.safe_mode)
        acts[na++] = mdl_recovery_name(MDL_RECOVERY_SAFE_MODE);
    if (w->out->candidate_switches > 0 && w->cand == w->cell->lkg)
        acts[na++] = mdl_action_name(MDL_ACT_FALLBACK_LKG);
    for (int a = 0; a < MDL_ACT_COUNT; a++)
        if ((in_force >> a & 1u) && a != MDL_ACT_FALLBACK_LKG)
            acts[na++] = mdl_action_name((mdl_action)a);
    for (unsigned k = 0; k < na; k++) {
        trc_event *e = ev_begin(w, MDL_STAGE_LOAD, TRC_RECOVERY, -1);
        e->has |= TRC_F_ACTION;
        snprintf(e->action, sizeof e->action, "%s", acts[k]);
        ev_send(w);
    }
}

/* The system's periodic sample of the process. */
void w__emit_sample(world *w)
{
    if (!TRACING(w))
        return;
    trc_event *e = ev_begin(w, w->last_stage < MDL_STAGE_COUNT ? w->last_stage : MDL_STAGE_LOAD,
                            TRC_SAMPLE, -1);
    if (w->pg.on)
        pages_fill(w, e);
    ev_send(w);
}

/* What the page model did (docs/traces.md "pages"): the weights dropped,
 * read back, or another process killed by lmkd (`why`: its reason) or the
 * kernel, with the phone's pages at that instant. */
void w__emit_pages(world *w, const char *what, const char *why, int64_t dropped,
                   int64_t refault, int adj, sim_time took)
{
    if (!TRACING(w))
        return;
    trc_event *e = ev_begin(w, w->last_stage < MDL_STAGE_COUNT ? w->last_stage : MDL_STAGE_LOAD,
                            TRC_SAMPLE, -1);
    with_error(e, what);
    if (why != NULL) {
        e->has |= TRC_F_ACTION;
        snprintf(e->action, sizeof e->action, "%s", why);
    }
    pages_fill(w, e);
    int64_t *v = e->pages;
    if (dropped > 0) {
        v[TRC_PG_DROPPED] = dropped;
        e->pages_has |= 1u << TRC_PG_DROPPED;
    }
    if (refault > 0) {
        v[TRC_PG_REFAULT] = refault;
        e->pages_has |= 1u << TRC_PG_REFAULT;
    }
    if (adj >= 0) {
        v[TRC_PG_ADJ] = adj;
        e->pages_has |= 1u << TRC_PG_ADJ;
    }
    if (took > 0) {
        e->has |= TRC_F_DURATION;
        e->duration_us = took;
    }
    ev_send(w);
}

/* A generation part's figures (generate.c): `kv`, the KV caches the app
 * holds now, or `weights`, the part's weights by kind once loaded; a note
 * of `n` pages keys, after the memory changed. */
void w__emit_gen(world *w, unsigned part, const char *what, unsigned n, const int *keys,
                 const int64_t *vals)
{
    if (!TRACING(w))
        return;
    trc_event *e = ev_begin(w, MDL_STAGE_INFERENCE, TRC_SAMPLE, (int)part);
    with_error(e, what);
    e->has |= TRC_F_PAGES;
    for (unsigned k = 0; k < n; k++) {
        e->pages[keys[k]] = vals[k];
        e->pages_has |= 1u << keys[k];
    }
    ev_send(w);
}

/* A user request: its path step, its needs and its payload (for a replay). */
void w__emit_request(world *w, const user *x)
{
    if (!TRACING(w))
        return;
    trc_event *e = ev_begin(w, MDL_STAGE_INFERENCE, TRC_SAMPLE, -1);
    e->has |= TRC_F_REQUEST | TRC_F_STEP | TRC_F_NEEDS;
    e->request = (int64_t)x->id;
    e->step = w->path.step; /* unique per occurrence of a repeated step */
    size_t len = 0;
    for (unsigned k = 0; k < x->nneeds; k++) {
        const char *name = w->cand->parts[x->needs[k]].name;
        size_t nl = strlen(name);
        if (len + nl + (k > 0) >= sizeof e->needs) {
            sim_error_set(w->err, SIM_ELIMIT, "the needs of a request do not fit in a "
                          "trace's %d-byte string", TRC_TEXT_MAX - 1);
            w__fail(w, SIM_ELIMIT);
            return;
        }
        if (k > 0)
            e->needs[len++] = ',';
        memcpy(e->needs + len, name, nl);
        len += nl;
    }
    e->needs[len] = '\0';
    with_alloc(e, x->d.payload);
    ev_send(w);
}
