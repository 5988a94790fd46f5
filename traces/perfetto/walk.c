/* walk.c - the records, sorted by time, become oomsim events.  Walked twice:
 * once to measure each stage slice (its time, its peak, what stayed), once
 * to write the events.  The category rule is here (mem_of: anonymous and
 * swapped pages are native memory, file and shared-memory pages file
 * memory), with the adj-to-importance rule, the kills and the stages. */
#include "pf_int.h"

#include <stdlib.h>
#include <string.h>

int pf__rec_cmp(const void *a, const void *b)
{
    const rec *x = a, *y = b;
    if (x->ts != y->ts)
        return x->ts < y->ts ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static pidstate *pid_state(walk *w, int32_t pid)
{
    for (unsigned i = 0; i < w->npids; i++)
        if (w->pids[i].pid == pid)
            return &w->pids[i];
    if (w->npids == PIDS_MAX)
        return NULL;
    pidstate *p = &w->pids[w->npids++];
    memset(p, 0, sizeof *p);
    p->pid = pid;
    p->adj = ADJ_UNKNOWN;
    return p;
}

static void mem_of(const pidstate *p, int64_t mem[TRC_MEM_COUNT])
{
    memset(mem, 0, sizeof(int64_t) * TRC_MEM_COUNT);
    /* anonymous memory and its swapped-out part are the app's native
     * memory (Java cannot be told apart without a heap profile); file and
     * shared-memory pages its file memory */
    mem[TRC_MEM_NATIVE] = p->member[M_ANON] + p->member[M_SWAP];
    mem[TRC_MEM_FILE] = p->member[M_FILE] + p->member[M_SHMEM];
}

static int64_t importance_of(int64_t adj)
{
    if (adj == ADJ_UNKNOWN)
        return -1;
    if (adj <= 0)
        return 100; /* IMPORTANCE_FOREGROUND */
    if (adj <= ADJ_VISIBLE)
        return 200; /* IMPORTANCE_VISIBLE */
    if (adj <= ADJ_PERCEPTIBLE)
        return 230; /* IMPORTANCE_PERCEPTIBLE */
    if (adj < ADJ_PREVIOUS)
        return 300; /* IMPORTANCE_SERVICE */
    return 400;     /* IMPORTANCE_CACHED */
}

/* The stage a sample belongs to: the innermost oomsim slice open in pid,
 * else the last one begun, else load. */
static int stage_now(const walk *w, int32_t pid)
{
    for (unsigned i = w->nopen; i-- > 0;)
        if (w->open[i].pid == pid && w->open[i].slice >= 0)
            return w->res[w->open[i].slice].stage;
    return w->last_stage;
}

static void base_event(const walk *w, const pidstate *p, int64_t ts, int stage, trc_event *e)
{
    trc_event_clear(e);
    e->time_us = (ts - w->t0) / 1000;
    e->stage = (trc_stage)stage;
    e->has |= TRC_F_KIND;
    e->kind = TRC_SAMPLE;
    if (w->m->o->candidate_id != NULL) {
        e->has |= TRC_F_CANDIDATE;
        snprintf(e->candidate, sizeof e->candidate, "%s", w->m->o->candidate_id);
    }
    mem_of(p, e->mem);
    e->has |= TRC_F_MEM | TRC_F_RSS_MB;
    e->mem_has = 1u << TRC_MEM_NATIVE | 1u << TRC_MEM_FILE;
    e->rss_mb = (p->member[M_ANON] + p->member[M_FILE] + p->member[M_SHMEM]) >> 20;
}

static int out(walk *w, trc_event *e)
{
    if (w->emit)
        w->m->sum->events++;
    return w->emit ? w->sink(w->ctx, e, w->m->err) : SIM_OK;
}

static int note(walk *w, const pidstate *p, int64_t ts, const char *what)
{
    trc_event e;
    base_event(w, p, ts, stage_now(w, p->pid), &e);
    e.has |= TRC_F_ERROR;
    snprintf(e.error, sizeof e.error, "%s", what);
    return out(w, &e);
}

static int add_occurrence(imp *m, int stage, int part, const slice_result *r)
{
    trc_pf_stage *st = &m->sum->stages[part][stage];
    if (st->n == st->cap) {
        trc_pf_occurrence *p = pf__grow(m, st->occ, &st->cap, sizeof *p, 8);
        if (p == NULL)
            return SIM_ENOMEM;
        st->occ = p;
    }
    trc_pf_occurrence *o = &st->occ[st->n++];
    o->duration_us = r->duration_us;
    memcpy(o->alloc, r->alloc, sizeof o->alloc);
    memcpy(o->keep, r->keep, sizeof o->keep);
    return SIM_OK;
}

/* Ends open slice i at ts with the process's memory then (walk 1: its
 * measures; walk 2: the end event, unless the process died in it). */
static int close_slice(walk *w, unsigned i, int64_t ts, const pidstate *p, int died)
{
    open_slice *o = &w->open[i];
    int rc = SIM_OK;
    if (o->slice >= 0) {
        slice_result *r = &w->res[o->slice];
        int stage = r->stage, part = r->part;
        if (!w->emit) {
            int64_t now[TRC_MEM_COUNT];
            mem_of(p, now);
            r->duration_us = (ts - o->begin_ts) / 1000;
            for (int c = TRC_MEM_NATIVE; c < TRC_MEM_COUNT; c++) {
                int64_t a = o->peak[c] - o->begin_mem[c], k = now[c] - o->begin_mem[c];
                r->alloc[c] = a > 0 ? a : 0;
                r->keep[c] = k < 0 ? 0 : k > r->alloc[c] ? r->alloc[c] : k;
            }
        } else {
            if (part > 0 && (rc = add_occurrence(w->m, stage, part - 1, r)) != SIM_OK)
                return rc;
            if (!died) {
                trc_event e;
                base_event(w, p, ts, stage, &e);
                e.kind = TRC_END;
                if (part > 0) {
                    e.has |= TRC_F_PART;
                    snprintf(e.part, sizeof e.part, "%s", w->m->sum->parts[part - 1]);
                }
                if (o->request >= 0) {
                    e.has |= TRC_F_REQUEST;
                    e.request = o->request;
                }
                rc = out(w, &e);
            }
        }
    }
    memmove(&w->open[i], &w->open[i + 1], (w->nopen - i - 1) * sizeof *w->open);
    w->nopen--;
    return rc;
}

/* The first walk: a new slot for the slice's measurement, and the app's
 * own memory before its first stage. */
static int measure_begin(walk *w, const open_slice *o, const pidstate *p, int stage, int part)
{
    imp *m = w->m;
    if (w->nslices == w->capslices) {
        slice_result *q = pf__grow(m, w->res, &w->capslices, sizeof *q, 64);
        if (q == NULL)
            return SIM_ENOMEM;
        w->res = q;
    }
    slice_result *s = &w->res[w->nslices];
    memset(s, 0, sizeof *s);
    s->stage = stage;
    s->part = part;
    s->duration_us = -1; /* until it ends */
    if (!m->sum->has_baseline && p->pid == m->recs[0].pid) {
        m->sum->has_baseline = 1;
        memcpy(m->sum->baseline, o->begin_mem, sizeof o->begin_mem);
    }
    m->sum->stage_slices++;
    return SIM_OK;
}

/* The second walk: the stage's begin with what the first walk measured
 * (and, for an inference of a part, the request it serves). */
static int emit_begin(walk *w, const rec *r, const pidstate *p, open_slice *o, int stage,
                      int part)
{
    imp *m = w->m;
    const slice_result *s = &w->res[o->slice];
    trc_event e;
    if (stage == TRC_INFERENCE && part > 0) { /* the request it serves arrives */
        base_event(w, p, r->ts, stage, &e);
        e.has |= TRC_F_REQUEST | TRC_F_STEP | TRC_F_NEEDS;
        e.request = w->request;
        e.step = m->o->step;
        snprintf(e.needs, sizeof e.needs, "%s", m->sum->parts[part - 1]);
        int rc = out(w, &e);
        if (rc != SIM_OK)
            return rc;
    }
    base_event(w, p, r->ts, stage, &e);
    e.kind = TRC_BEGIN;
    if (part > 0) {
        e.has |= TRC_F_PART;
        snprintf(e.part, sizeof e.part, "%s", m->sum->parts[part - 1]);
    }
    if (s->duration_us >= 0) {
        e.has |= TRC_F_DURATION;
        e.duration_us = s->duration_us;
    }
    e.has |= TRC_F_ALLOC;
    e.alloc_has = 1u << TRC_MEM_NATIVE | 1u << TRC_MEM_FILE;
    e.alloc[TRC_MEM_NATIVE] = s->alloc[TRC_MEM_NATIVE];
    e.alloc[TRC_MEM_FILE] = s->alloc[TRC_MEM_FILE];
    if (stage == TRC_INFERENCE) {
        if (part > 0) {
            e.has |= TRC_F_REQUEST;
            o->request = e.request = w->request++;
        }
    } else {
        e.has |= TRC_F_KEEP;
        e.keep_has = e.alloc_has;
        e.keep[TRC_MEM_NATIVE] = s->keep[TRC_MEM_NATIVE];
        e.keep[TRC_MEM_FILE] = s->keep[TRC_MEM_FILE];
    }
    return out(w, &e);
}

static int begin_slice(walk *w, const rec *r, pidstate *p)
{
    imp *m = w->m;
    if (w->nopen == OPEN_MAX)
        return sim_error_set(m->err, SIM_ELIMIT, "%s: more than %d slices open at once in the "
                             "process", m->name, OPEN_MAX);
    open_slice *o = &w->open[w->nopen++];
    o->lane = r->lane;
    o->lane_kind = r->sub;
    o->pid = r->pid;
    o->begin_ts = r->ts;
    o->slice = -1;
    o->request = -1;
    mem_of(p, o->begin_mem);
    memcpy(o->peak, o->begin_mem, sizeof o->peak);
    if (r->name == 0)
        return SIM_OK;
    int stage = r->name >> 8, part = r->name & 0xff;
    if (!w->emit) {
        int rc = measure_begin(w, o, p, stage, part);
        if (rc != SIM_OK)
            return rc;
    }
    o->slice = (int64_t)w->nslices++;
    w->last_stage = stage;
    return w->emit ? emit_begin(w, r, p, o, stage, part) : SIM_OK;
}

static int kill_event(walk *w, const rec *r, pidstate *p)
{
    if (p->killed)
        return SIM_OK; /* one death per process: the first record of it */
    int64_t adj = r->v != ADJ_UNKNOWN ? r->v : p->adj;
    /* the slices it dies in end with it */
    for (unsigned i = w->nopen; i-- > 0;)
        if (w->open[i].pid == p->pid) {
            int rc = close_slice(w, i, r->ts, p, 1);
            if (rc != SIM_OK)
                return rc;
        }
    p->killed = 1;
    w->pending_kill = r->ts;
    if (w->emit)
        w->m->sum->kills++;
    if (!w->emit)
        return SIM_OK;
    trc_event e;
    base_event(w, p, r->ts, TRC_EXIT, &e);
    e.kind = TRC_EXIT_EVENT;
    int64_t imp_ = importance_of(adj);
    e.has |= TRC_F_EXIT_REASON | TRC_F_EXIT | TRC_F_ERROR;
    e.exit_reason = r->sub == K_KERNEL_OOM || imp_ < 400 ? TRC_LOW_MEMORY : TRC_SYSTEM_RECLAIM;
    /* ApplicationExitInfo: lmkd reports its kills (REASON_LOW_MEMORY, 3);
     * the kernel's OOM killer only leaves a SIGKILL (REASON_SIGNALED, 2,
     * status 9) */
    e.exit.has = TRC_X_REASON_CODE | TRC_X_RSS_KB | TRC_X_STATUS | TRC_X_TIMESTAMP_MS;
    /* on the wall clock when a clock snapshot gave REALTIME (an exit
     * record's timestamp from the same phone compares), else on the
     * trace's own clock, as oomsim gen writes it */
    e.exit.timestamp_ms = w->m->sum->has_realtime
                              ? (r->ts + w->m->sum->realtime_offset_ns) / 1000000
                              : e.time_us / 1000;
    e.exit.has |= TRC_X_PID;
    e.exit.pid = p->pid;
    e.exit.reason_code = r->sub == K_KERNEL_OOM ? 2 : 3;
    e.exit.status = r->sub == K_KERNEL_OOM ? 9 : 0;
    e.exit.rss_kb = (p->member[M_ANON] + p->member[M_FILE] + p->member[M_SHMEM]) / 1024;
    if (imp_ > 0) {
        e.exit.has |= TRC_X_IMPORTANCE;
        e.exit.importance = imp_;
    }
    const char *why = r->sub == K_KERNEL_OOM        ? "kernel_oom"
                      : r->sub == K_LOWMEMORYKILLER ? "lowmemorykiller"
                                                    : trc_pf_lmkd_reason_name(r->lane);
    snprintf(e.error, sizeof e.error, "%s", why != NULL ? why : "lmkd");
    if (w->m->process[0] != '\0') {
        e.has |= TRC_F_PROCESS;
        snprintf(e.process, sizeof e.process, "%s", w->m->process);
    }
    return out(w, &e);
}

static int adj_event(walk *w, const rec *r, pidstate *p)
{
    int64_t before = p->adj;
    p->adj = r->v;
    if (!w->emit)
        return SIM_OK;
    int fg_before = before != ADJ_UNKNOWN && before <= ADJ_VISIBLE;
    int fg_now = r->v <= ADJ_VISIBLE;
    int rc = SIM_OK;
    if (before == ADJ_UNKNOWN ? !fg_now : fg_before != fg_now)
        rc = note(w, p, r->ts, fg_now ? "foreground" : "background");
    if (rc == SIM_OK && r->v >= ADJ_CACHED_MIN && (before == ADJ_UNKNOWN ||
                                                   before < ADJ_CACHED_MIN))
        rc = note(w, p, r->ts, "cached_adj");
    return rc;
}

/* A pid seen for the first time: a new life; after a death, the user
 * came back this late (the death's exit event gets that duration). */
static int new_life(walk *w, const rec *r, pidstate *p)
{
    int rc = SIM_OK;
    p->seen = 1;
    if (w->emit)
        w->m->sum->pids++;
    if (w->pending_kill >= 0 && w->emit) {
        trc_event e;
        base_event(w, p, w->pending_kill, TRC_EXIT, &e);
        e.has |= TRC_F_DURATION;
        e.duration_us = (r->ts - w->pending_kill) / 1000;
        rc = out(w, &e);
    }
    w->pending_kill = -1;
    w->last_stage = TRC_LOAD;
    return rc;
}

/* A memory counter: one sample event per instant (the last counter of
 * the instant writes it); the first walk raises the open slices' peaks. */
static int mem_event(walk *w, size_t i, pidstate *p)
{
    imp *m = w->m;
    const rec *r = &m->recs[i];
    p->member[r->sub] = r->v;
    if (w->emit) {
        if (i + 1 < m->nrec && m->recs[i + 1].type == R_MEM && m->recs[i + 1].ts == r->ts &&
            m->recs[i + 1].pid == r->pid)
            return SIM_OK;
        trc_event e;
        base_event(w, p, r->ts, stage_now(w, p->pid), &e);
        return out(w, &e);
    }
    int64_t now[TRC_MEM_COUNT];
    mem_of(p, now);
    for (unsigned k = 0; k < w->nopen; k++)
        if (w->open[k].pid == p->pid)
            for (int c = 0; c < TRC_MEM_COUNT; c++)
                if (now[c] > w->open[k].peak[c])
                    w->open[k].peak[c] = now[c];
    return SIM_OK;
}

/* A slice's end closes the latest open slice of its lane. */
static int end_slice(walk *w, const rec *r, pidstate *p)
{
    unsigned k = w->nopen;
    while (k-- > 0)
        if (w->open[k].pid == r->pid && w->open[k].lane == r->lane &&
            w->open[k].lane_kind == r->sub)
            break;
    return k < w->nopen ? close_slice(w, k, r->ts, p, 0) : SIM_OK;
}

static int record(walk *w, size_t i, pidstate *p)
{
    const rec *r = &w->m->recs[i];
    switch (r->type) {
    case R_MEM: return mem_event(w, i, p);
    case R_ADJ: return adj_event(w, r, p);
    case R_KILL: return kill_event(w, r, p);
    case R_BEGIN: return begin_slice(w, r, p);
    case R_END: return end_slice(w, r, p);
    default: return SIM_OK;
    }
}

int pf__walk_records(walk *w)
{
    imp *m = w->m;
    w->nopen = 0;
    w->npids = 0;
    w->nslices = 0;
    w->request = 0;
    w->last_stage = TRC_LOAD;
    w->pending_kill = -1;
    w->t0 = m->nrec > 0 ? m->recs[0].ts : 0;
    for (size_t i = 0; i < m->nrec; i++) {
        const rec *r = &m->recs[i];
        pidstate *p = pid_state(w, r->pid);
        if (p == NULL)
            return sim_error_set(m->err, SIM_ELIMIT, "%s: more than %d lives", m->name,
                                 PIDS_MAX);
        int rc = p->seen == 0 ? new_life(w, r, p) : SIM_OK;
        if (rc != SIM_OK)
            return rc;
        if (p->killed && r->type != R_KILL)
            continue; /* what a killed process still logs as it goes */
        if ((rc = record(w, i, p)) != SIM_OK)
            return rc;
    }
    /* slices still open at the end of the trace: measured to its end, their
     * begins left open (as a device leaves them) */
    if (!w->emit && m->nrec > 0) {
        int64_t end = m->recs[m->nrec - 1].ts;
        while (w->nopen > 0) {
            pidstate *p = pid_state(w, w->open[w->nopen - 1].pid);
            int rc = close_slice(w, w->nopen - 1, end, p, 0);
            if (rc != SIM_OK)
                return rc;
        }
    }
    return SIM_OK;
}
