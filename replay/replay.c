/* replay.c - what a trace-driven run takes from a recorded session: the
 * request arrivals with their needs and payloads, and the measured cost of
 * every stage occurrence (time, resident and transient memory by
 * category, cache rebuilds, delegate outcomes, session states, working
 * sets), from the timeline `oomsim gen` writes (docs/traces.md, the
 * replay extension keys).  The device, policies and strategies come from
 * the scenario (models/world.c takes these lists instead of its streams).
 *
 * The lists grow with the trace (the trace itself is read streaming). */
#include "replay.h"

#include <stdlib.h>
#include <string.h>

#include "traces/traces.h"

/* Room for one more entry: the list doubles, up to RPL_REPLAY_MAX. */
#define GROW(arr, n, cap, err, label)                                                     \
    do {                                                                                  \
        if ((n) == (cap)) {                                                               \
            if ((size_t)(cap) >= RPL_REPLAY_MAX)                                          \
                return sim_error_set(err, SIM_ELIMIT, "replay: more than %d %s (the "     \
                                     "limit of a replay)", RPL_REPLAY_MAX, label);         \
            size_t nc_ = (cap) ? (size_t)(cap) * 2 : 16;                                  \
            if (nc_ > RPL_REPLAY_MAX)                                                     \
                nc_ = RPL_REPLAY_MAX;                                                     \
            void *p_ = realloc((arr), nc_ * sizeof *(arr));                               \
            if (p_ == NULL)                                                               \
                return sim_error_set(err, SIM_ENOMEM, "replay: out of memory");           \
            (arr) = p_;                                                                   \
            (cap) = (uint32_t)nc_;                                                        \
        }                                                                                 \
    } while (0)

typedef struct builder {
    mdl_replay *r;
    const mdl_candidate *cand;
    uint32_t cap_stage[MDL_PARTS_MAX][MDL_REPLAY_KINDS], cap_outcome[MDL_PARTS_MAX],
        cap_session[MDL_PARTS_MAX], cap_req, cap_relaunch, cap_restart;
    int open_delegate[MDL_PARTS_MAX]; /* index of its pending outcome, -1: none */
    int last_prepare[MDL_PARTS_MAX];  /* index of the latest prepare entry, -1: none */
    char candidate[TRC_TEXT_MAX];     /* the trace's candidate (its first event's) */
} builder;

static int part_of(const builder *b, const trc_event *e, uint64_t index, sim_error *err)
{
    for (unsigned k = 0; k < b->cand->nparts; k++)
        if (strcmp(b->cand->parts[k].name, e->part) == 0)
            return (int)k;
    return sim_error_set(err, SIM_EINPUT, "replay: event %llu: part '%s' is not a part of "
                         "candidate %s", (unsigned long long)index, e->part, b->cand->id);
}

static int stage_entry(builder *b, const trc_event *e, int part, int kind, sim_error *err)
{
    mdl_replay *r = b->r;
    GROW(r->stages[part][kind], r->nstages[part][kind], b->cap_stage[part][kind], err,
         "stage occurrences");
    mdl_replay_stage *s = &r->stages[part][kind][r->nstages[part][kind]++];
    memset(s, 0, sizeof *s);
    s->time = e->duration_us;
    for (int c = 0; c < MDL_CAT_COUNT; c++) {
        s->resident[c] = (e->keep_has >> c & 1u) ? e->keep[c] : 0;
        int64_t all = (e->alloc_has >> c & 1u) ? e->alloc[c] : 0;
        s->transient[c] = all > s->resident[c] ? all - s->resident[c] : 0;
    }
    if (kind == MDL_REPLAY_PREPARE)
        b->last_prepare[part] = (int)r->nstages[part][kind] - 1;
    if (kind == MDL_REPLAY_DELEGATE) {
        GROW(r->outcome[part], r->noutcome[part], b->cap_outcome[part], err, "delegate outcomes");
        r->outcome[part][r->noutcome[part]] = MDL_OUTCOME_OK;
        b->open_delegate[part] = (int)r->noutcome[part]++;
    }
    return SIM_OK;
}

static int request_arrives(builder *b, const trc_event *e, uint64_t index, sim_error *err)
{
    mdl_replay *r = b->r;
    if ((uint64_t)e->request != r->nrequests)
        return sim_error_set(err, SIM_EINPUT, "replay: event %llu: request %lld out of order "
                             "(expected %u)", (unsigned long long)index, (long long)e->request,
                             r->nrequests);
    GROW(r->requests, r->nrequests, b->cap_req, err, "requests");
    mdl_replay_request *q = &r->requests[r->nrequests++];
    memset(q, 0, sizeof *q);
    q->time = e->time_us;
    q->step = (uint32_t)e->step;
    for (int c = 0; c < MDL_CAT_COUNT; c++)
        q->payload[c] = (e->alloc_has >> c & 1u) ? e->alloc[c] : 0;
    const char *s = e->needs;
    while (*s != '\0') {
        const char *comma = strchr(s, ',');
        size_t n = comma != NULL ? (size_t)(comma - s) : strlen(s);
        int found = -1;
        for (unsigned k = 0; k < b->cand->nparts && found < 0; k++)
            if (strlen(b->cand->parts[k].name) == n && memcmp(b->cand->parts[k].name, s, n) == 0)
                found = (int)k;
        if (found < 0 || q->nneeds == MDL_PARTS_MAX)
            return sim_error_set(err, SIM_EINPUT, "replay: event %llu: needs: a part that "
                                 "candidate %s does not have", (unsigned long long)index,
                                 b->cand->id);
        q->needs[q->nneeds++] = (uint8_t)found;
        s += n + (comma != NULL);
    }
    return SIM_OK;
}

static int inference_begins(builder *b, const trc_event *e, int part, uint64_t index,
                            sim_error *err)
{
    mdl_replay *r = b->r;
    if (e->has & TRC_F_KEEP) { /* it opened a session state */
        GROW(r->session[part], r->nsession[part], b->cap_session[part], err, "session states");
        for (int c = 0; c < MDL_CAT_COUNT; c++)
            r->session[part][r->nsession[part]][c] = (e->keep_has >> c & 1u) ? e->keep[c] : 0;
        r->nsession[part]++;
    }
    if (!(e->has & TRC_F_REQUEST) || (uint64_t)e->request >= r->nrequests)
        return sim_error_set(err, SIM_EINPUT, "replay: event %llu: an inference without a "
                             "recorded request", (unsigned long long)index);
    mdl_replay_request *q = &r->requests[e->request];
    for (unsigned k = 0; k < q->nneeds; k++)
        if (q->needs[k] == part && !q->known[k]) {
            q->known[k] = 1;
            q->time_of[k] = e->duration_us;
            for (int c = 0; c < MDL_CAT_COUNT; c++)
                q->ws[k][c] = (e->alloc_has >> c & 1u) ? e->alloc[c] : 0;
            break;
        }
    return SIM_OK;
}

/* Needs never executed in the recording take the part's first recorded
 * execution (0 when it never ran). */
static void fill_unknown(mdl_replay *r)
{
    for (unsigned p = 0; p < MDL_PARTS_MAX; p++) {
        const mdl_replay_request *src = NULL;
        unsigned sk = 0;
        for (uint32_t i = 0; i < r->nrequests && src == NULL; i++)
            for (unsigned k = 0; k < r->requests[i].nneeds && src == NULL; k++)
                if (r->requests[i].needs[k] == p && r->requests[i].known[k])
                    src = &r->requests[i], sk = k;
        if (src == NULL)
            continue;
        for (uint32_t i = 0; i < r->nrequests; i++) {
            mdl_replay_request *q = &r->requests[i];
            for (unsigned k = 0; k < q->nneeds; k++)
                if (q->needs[k] == p && !q->known[k]) {
                    q->time_of[k] = src->time_of[sk];
                    memcpy(q->ws[k], src->ws[sk], sizeof q->ws[k]);
                }
        }
    }
}

static int add_event(builder *b, const trc_event *e, uint64_t index, sim_error *err)
{
    mdl_replay *r = b->r;
    if (index == 0)
        snprintf(b->candidate, sizeof b->candidate, "%s",
                 (e->has & TRC_F_CANDIDATE) ? e->candidate : "");
    /* a recovery may switch to the last known good: its events are not
     * this candidate's costs */
    if ((e->has & TRC_F_CANDIDATE) && strcmp(e->candidate, b->candidate) != 0)
        return SIM_OK;
    int kind = (e->has & TRC_F_KIND) ? (int)e->kind : TRC_SAMPLE;
    if (kind == TRC_SAMPLE && e->stage == TRC_INFERENCE && (e->has & TRC_F_REQUEST) &&
        (e->has & TRC_F_NEEDS))
        return request_arrives(b, e, index, err);
    if (kind == TRC_SAMPLE && e->stage == TRC_EXIT && (e->has & TRC_F_DURATION) &&
        (e->has & TRC_F_ERROR) && strcmp(e->error, "service_restart_delay") == 0) {
        GROW(r->restart, r->nrestart, b->cap_restart, err, "service restarts");
        r->restart[r->nrestart++] = e->duration_us;
        return SIM_OK;
    }
    if (kind == TRC_SAMPLE && e->stage == TRC_EXIT && (e->has & TRC_F_DURATION)) {
        GROW(r->relaunch, r->nrelaunch, b->cap_relaunch, err, "relaunches");
        r->relaunch[r->nrelaunch++] = e->duration_us;
        return SIM_OK;
    }
    if (kind == TRC_SAMPLE && (e->has & TRC_F_OWNER) && (e->has & TRC_F_PART) &&
        (e->has & TRC_F_ERROR) && strcmp(e->error, "session_open") == 0) {
        /* an owner's session: drawn where an execution's is, in the same order */
        int part = part_of(b, e, index, err);
        if (part < 0)
            return part;
        GROW(r->session[part], r->nsession[part], b->cap_session[part], err, "session states");
        for (int c = 0; c < MDL_CAT_COUNT; c++)
            r->session[part][r->nsession[part]][c] = (e->alloc_has >> c & 1u) ? e->alloc[c] : 0;
        r->nsession[part]++;
        return SIM_OK;
    }
    if (kind == TRC_EXIT_EVENT) {
        /* a native crash ends the delegate_prepare still open */
        for (unsigned p = 0; p < MDL_PARTS_MAX; p++) {
            if (b->open_delegate[p] >= 0 && e->exit_reason == TRC_NATIVE_CRASH)
                r->outcome[p][b->open_delegate[p]] = MDL_OUTCOME_CRASH;
            b->open_delegate[p] = -1;
        }
        return SIM_OK;
    }
    if ((kind != TRC_BEGIN && kind != TRC_END) || !(e->has & TRC_F_PART))
        return SIM_OK;
    int part = part_of(b, e, index, err);
    if (part < 0)
        return part;
    if (kind == TRC_END) {
        if (e->stage == TRC_DELEGATE_PREPARE && b->open_delegate[part] >= 0) {
            if ((e->has & TRC_F_ERROR) && strcmp(e->error, "delegate_failed") == 0)
                r->outcome[part][b->open_delegate[part]] = MDL_OUTCOME_FAIL;
            b->open_delegate[part] = -1;
        }
        return SIM_OK;
    }
    switch (e->stage) {
    case TRC_LOAD: return stage_entry(b, e, part, MDL_REPLAY_LOAD, err);
    case TRC_RUNTIME_PREPARE: return stage_entry(b, e, part, MDL_REPLAY_PREPARE, err);
    case TRC_DELEGATE_PREPARE: return stage_entry(b, e, part, MDL_REPLAY_DELEGATE, err);
    case TRC_CACHE: /* the rebuild belongs to the part's latest prepare */
        if (b->last_prepare[part] >= 0) {
            mdl_replay_stage *s = &r->stages[part][MDL_REPLAY_PREPARE][b->last_prepare[part]];
            s->cache_miss = 1;
            for (int c = 0; c < MDL_CAT_COUNT; c++)
                s->miss_transient[c] = (e->alloc_has >> c & 1u) ? e->alloc[c] : 0;
        }
        return SIM_OK;
    case TRC_INFERENCE: return inference_begins(b, e, part, index, err);
    default: return SIM_OK;
    }
}

int rpl_replay_load(const char *path, const mdl_candidate *cand, mdl_replay *out,
                    char *candidate_id, sim_error *err)
{
    memset(out, 0, sizeof *out);
    builder b;
    memset(&b, 0, sizeof b);
    b.r = out;
    b.cand = cand;
    for (unsigned p = 0; p < MDL_PARTS_MAX; p++)
        b.open_delegate[p] = b.last_prepare[p] = -1;
    trc_reader *rd = trc_open(path, -1, NULL, err);
    if (rd == NULL)
        return err->code;
    trc_event e;
    int rc;
    while ((rc = trc_next(rd, &e, err)) == 1) {
        uint64_t index = trc_events_read(rd) - 1;
        if (index == 0 && cand == NULL) { /* only the candidate is asked for */
            snprintf(candidate_id, TRC_TEXT_MAX, "%s",
                     (e.has & TRC_F_CANDIDATE) ? e.candidate : "");
            trc_close(rd);
            return SIM_OK;
        }
        if ((rc = add_event(&b, &e, index, err)) != SIM_OK)
            break;
    }
    trc_close(rd);
    if (rc != 0) {
        rpl_replay_free(out);
        return rc;
    }
    if (candidate_id != NULL)
        snprintf(candidate_id, TRC_TEXT_MAX, "%s", b.candidate);
    fill_unknown(out);
    return SIM_OK;
}

void rpl_replay_free(mdl_replay *r)
{
    for (unsigned p = 0; p < MDL_PARTS_MAX; p++) {
        for (int k = 0; k < MDL_REPLAY_KINDS; k++)
            free(r->stages[p][k]);
        free(r->outcome[p]);
        free(r->session[p]);
    }
    free(r->requests);
    free(r->relaunch);
    free(r->restart);
    memset(r, 0, sizeof *r);
}
