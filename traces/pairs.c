/* pairs.c - begin/end pairing by (stage, part, session) (docs/traces.md):
 * what is left open when the trace ends is where a leak or an abnormal
 * exit is investigated. */
#include "traces.h"

#include <stdlib.h>
#include <string.h>

struct trc_pairs {
    trc_unpaired open[TRC_OPEN_MAX];  /* begins not ended yet, in index order */
    size_t nopen;
    trc_unpaired stray[TRC_OPEN_MAX]; /* ends with no begin */
    size_t nstray;
    trc_unpaired report[2 * TRC_OPEN_MAX];
};

trc_pairs *trc_pairs_create(sim_error *err)
{
    trc_pairs *p = calloc(1, sizeof *p);
    if (p == NULL)
        sim_error_set(err, SIM_ENOMEM, "out of memory");
    return p;
}

static void key_of(const trc_event *e, uint64_t index, int is_end, trc_unpaired *u)
{
    memset(u, 0, sizeof *u);
    u->index = index;
    u->time_us = e->time_us;
    u->stage = e->stage;
    if (e->has & TRC_F_PART)
        memcpy(u->part, e->part, sizeof u->part);
    u->session = (e->has & TRC_F_SESSION) ? e->session : -1;
    u->is_end = is_end;
}

static int same_key(const trc_unpaired *a, const trc_unpaired *b)
{
    return a->stage == b->stage && a->session == b->session && strcmp(a->part, b->part) == 0;
}

int trc_pairs_add(trc_pairs *p, const trc_event *e, uint64_t index, sim_error *err)
{
    if (!(e->has & TRC_F_KIND) || (e->kind != TRC_BEGIN && e->kind != TRC_END))
        return SIM_OK;
    trc_unpaired u;
    key_of(e, index, e->kind == TRC_END, &u);
    if (e->kind == TRC_BEGIN) {
        if (p->nopen == TRC_OPEN_MAX)
            return sim_error_set(err, SIM_ELIMIT, "event %llu: more than %d begin events open at "
                                 "once", (unsigned long long)index, TRC_OPEN_MAX);
        p->open[p->nopen++] = u;
        return SIM_OK;
    }
    /* the most recent open begin of the same key */
    for (size_t k = p->nopen; k-- > 0;)
        if (same_key(&p->open[k], &u)) {
            memmove(&p->open[k], &p->open[k + 1], (p->nopen - k - 1) * sizeof *p->open);
            p->nopen--;
            return SIM_OK;
        }
    if (p->nstray == TRC_OPEN_MAX)
        return sim_error_set(err, SIM_ELIMIT, "event %llu: more than %d end events without a "
                             "begin", (unsigned long long)index, TRC_OPEN_MAX);
    p->stray[p->nstray++] = u;
    return SIM_OK;
}

const trc_unpaired *trc_pairs_report(trc_pairs *p, size_t *n)
{
    memcpy(p->report, p->open, p->nopen * sizeof *p->open);
    memcpy(p->report + p->nopen, p->stray, p->nstray * sizeof *p->stray);
    *n = p->nopen + p->nstray;
    return p->report;
}

void trc_pairs_destroy(trc_pairs *p) { free(p); }
