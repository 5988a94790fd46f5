/* match.c - which death of a trace an exit record is of: the same
 * process and app version, a time within the window (or a time zone
 * apart), the pid when both give one; and one record per death, the
 * nearest (docs/traces.md "oomsim diagnose"). */
#include "exits_int.h"

#include <stdlib.h>
#include <string.h>

static int times_agree(int64_t a, int64_t b)
{
    if (a < 0 || b < 0)
        return 0;
    int64_t d = a > b ? a - b : b - a;
    if (d <= RPL_MATCH_WINDOW_MS)
        return 1;
    return rpl__zone_gap(a, b) <= RPL_MATCH_WINDOW_MS ? 2 : 0;
}

/* How well a trace exit e fits record x: -1 not at all, else the lower the
 * better (the distance in time, from the zone offset when it is one); *on:
 * what it matched on. */
static int64_t fit(const rpl_exit *x, const trace_exit *e, const char **on)
{
    int when = times_agree(x->timestamp_ms, e->timestamp_ms);
    int64_t d = when == 2 ? rpl__zone_gap(x->timestamp_ms, e->timestamp_ms)
                          : x->timestamp_ms > e->timestamp_ms ? x->timestamp_ms - e->timestamp_ms
                                                              : e->timestamp_ms - x->timestamp_ms;
    if (x->pid >= 0 && e->record.pid >= 0) {
        int timed = x->timestamp_ms >= 0 && e->timestamp_ms >= 0;
        if (x->pid != e->record.pid || (timed && when == 0))
            return -1; /* another process, or the same pid at another time: reused */
        *on = !timed ? "pid (a time is not given)"
              : when == 1 ? "pid and time"
                          : "pid and time (a whole number of quarter hours apart: the record's "
                            "clock is the phone's time zone)";
        return timed ? d : 0;
    }
    if (when != 1 || (x->killinfo && x->process[0] == '\0'))
        return -1; /* a killinfo names no process: a time alone is anyone's kill */
    *on = "time (no pid on one side)";
    return d;
}

/* The trace's exit of the same death, the nearest in time: by pid when
 * both give one (and then the time, within the window or a zone apart,
 * when both give one), else by time within the window; the process and
 * the version agree when both sides give them. */
static const trace_exit *nearest(const rpl_exit *x, const rpl_trace_exits *t,
                                 const unsigned char *taken, int any_version, int64_t *fit_out,
                                 const char **on)
{
    const trace_exit *m = NULL;
    int64_t best = -1;
    *on = "";
    *fit_out = -1;
    if (x->jetsam_event && x->cause[0] == '\0')
        return NULL; /* a JetsamEvent that did not kill the process records no death */
    /* a JetsamEvent writes names cut to 32 characters */
    size_t cut = x->jetsam_event ? 32 : sizeof x->process;
    for (size_t k = 0; t != NULL && k < t->n; k++) {
        const trace_exit *e = &t->v[k];
        if (taken != NULL && taken[k])
            continue; /* a closer record's death */
        if (e->process[0] && x->process[0] && strncmp(e->process, x->process, cut) != 0)
            continue; /* another process: not this timeline */
        if (!any_version && e->app_version[0] && x->app_version[0] &&
            strcmp(e->app_version, x->app_version) != 0)
            continue; /* another version of the app: not this timeline */
        const char *how = "";
        int64_t f = fit(x, e, &how);
        if (f >= 0 && (best < 0 || f < best))
            m = e, best = f, *on = how;
    }
    *fit_out = best;
    return m;
}

const trace_exit *rpl__match(const rpl_exit *x, const rpl_trace_exits *t,
                             const unsigned char *taken, int64_t *fit, const char **on)
{
    return nearest(x, t, taken, 0, fit, on);
}

const trace_exit *rpl__match_any_version(const rpl_exit *x, const rpl_trace_exits *t)
{
    int64_t f;
    const char *on;
    return nearest(x, t, NULL, 1, &f, &on);
}


/* A death the record would match but for the app version: asked only when
 * it matched none and no closer record took its death. */
static const trace_exit *any_version(const rpl_exit *x, const rpl_trace_exits *t,
                                     const trace_exit *m, const rpl__outbid *closer)
{
    return m == NULL && closer == NULL && t != NULL ? rpl__match_any_version(x, t) : NULL;
}

void rpl_diagnose(const rpl_exit *x, const rpl_trace_exits *t, rpl_verdict *v)
{
    int64_t f;
    const char *on;
    const trace_exit *m = rpl__match(x, t, NULL, &f, &on);
    rpl__verdict_of(x, t, m, on, 0, NULL, any_version(x, t, m, NULL), v);
}

/* The exit event a trace's own record x was read from: by its event index
 * (the exits are in index order). */
static const trace_exit *own_exit(const rpl_exit *x, const rpl_trace_exits *t)
{
    size_t lo = 0, hi = t != NULL ? t->n : 0;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (t->v[mid].record.line < x->line)
            lo = mid + 1;
        else
            hi = mid;
    }
    return t != NULL && lo < t->n && t->v[lo].record.line == x->line ? &t->v[lo] : NULL;
}

/* One record per death: each record's nearest death is its own unless a
 * nearer record took it (the earlier record on a tie).  The records so
 * outbid then look among the deaths no record took, the nearest pair
 * first, until none fits.  An outbid record that finds none keeps the note
 * of the death it lost.  The trace's own records (own) are each their own
 * exit event's. */
int rpl_diagnose_all(const rpl_exit *xs, size_t n, const rpl_trace_exits *t, int own,
                     rpl_verdict *vs)
{
    if (own) {
        for (size_t k = 0; k < n; k++)
            rpl__verdict_of(&xs[k], t, own_exit(&xs[k], t), "", 1, NULL,
                            any_version(&xs[k], t, own_exit(&xs[k], t), NULL), &vs[k]);
        return SIM_OK;
    }
    size_t nt = t != NULL ? t->n : 0;
    long *pick = malloc((n + 1) * sizeof *pick), *owner = malloc((nt + 1) * sizeof *owner);
    int64_t *fits = malloc((n + 1) * sizeof *fits);
    const char **ons = malloc((n + 1) * sizeof *ons);
    unsigned char *taken = calloc(nt + 1, 1), *lost = calloc(n + 1, 1);
    rpl__outbid *closer = calloc(n + 1, sizeof *closer);
    if (pick == NULL || owner == NULL || fits == NULL || ons == NULL || taken == NULL ||
        lost == NULL || closer == NULL) {
        free(pick), free(owner), free(fits), free(ons), free(taken), free(lost), free(closer);
        return SIM_ENOMEM;
    }
    for (size_t j = 0; j < nt; j++)
        owner[j] = -1;
    for (size_t k = 0; k < n; k++) {
        const trace_exit *m = rpl__match(&xs[k], t, NULL, &fits[k], &ons[k]);
        pick[k] = m != NULL ? (long)(m - t->v) : -1;
        if (m != NULL && (owner[pick[k]] < 0 || fits[k] < fits[owner[pick[k]]]))
            owner[pick[k]] = (long)k;
    }
    for (size_t j = 0; j < nt; j++)
        taken[j] = owner[j] >= 0;
    for (size_t k = 0; k < n; k++)
        if (pick[k] >= 0 && owner[pick[k]] != (long)k) {
            closer[k] = (rpl__outbid){&t->v[pick[k]], fits[k], fits[owner[pick[k]]]};
            lost[k] = 1;
            pick[k] = -1;
        }
    for (;;) { /* the outbid records, the nearest to a free death first */
        size_t best = n;
        int64_t bf = -1;
        long bj = -1;
        const char *bon = "";
        for (size_t k = 0; k < n; k++) {
            if (!lost[k])
                continue;
            int64_t f;
            const char *on;
            const trace_exit *m = rpl__match(&xs[k], t, taken, &f, &on);
            if (m != NULL && (bf < 0 || f < bf))
                best = k, bf = f, bj = (long)(m - t->v), bon = on;
        }
        if (best == n)
            break;
        pick[best] = bj, taken[bj] = 1, lost[best] = 0, ons[best] = bon;
    }
    for (size_t k = 0; k < n; k++) {
        const trace_exit *m = pick[k] >= 0 ? &t->v[pick[k]] : NULL;
        const rpl__outbid *c = lost[k] ? &closer[k] : NULL;
        rpl__verdict_of(&xs[k], t, m, m != NULL ? ons[k] : "", 0, c, any_version(&xs[k], t, m, c),
                        &vs[k]);
    }
    free(pick), free(owner), free(fits), free(ons), free(taken), free(lost), free(closer);
    return SIM_OK;
}

/* A record told with what its timeline showed (the teller, the quiz). */
void rpl_diagnose_told(const rpl_exit *x, const char *stage, int started, unsigned signs,
                       rpl_verdict *v)
{
    rpl_diagnose(x, NULL, v);
    snprintf(v->matched_stage, sizeof v->matched_stage, "%s", stage);
    v->started = started;
    v->rec = rpl_advise(v->kind, x, v->started);
    rpl_ladder_of(v->rec, signs | rpl_record_signs(v->kind, x, started), &v->ladder);
    v->recovery = v->ladder.fix;
}
