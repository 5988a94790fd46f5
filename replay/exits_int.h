/* exits_int.h - what the readers of exit records in replay/ share: the
 * small text helpers of text.c and the Android kill lines of
 * killlines.c (lmkd's, the kernel OOM killer's), read and joined to the
 * exit records of the same deaths. */
#ifndef OOMSIM_EXITS_INT_H
#define OOMSIM_EXITS_INT_H

#include "replay.h"

#include "traces/traces.h"

/* A trace's exit event as diagnose reads it. */
typedef struct trace_exit {
    rpl_exit record;      /* the trace's own raw exit record (its `exit` map) */
    char process[TRC_TEXT_MAX], app_version[TRC_TEXT_MAX];
    int64_t timestamp_ms; /* -1: the exit event gives none */
    char stage[32];       /* the stage running: the last begin still open, "" none */
    int started;          /* the process had finished starting (rpl_life_at_exit) */
    unsigned signs;       /* what its life showed of the failure mode (RPL_SIGN_*) */
} trace_exit;

struct rpl_trace_exits {
    trace_exit *v;
    size_t n;
    uint64_t stale, failed; /* prepares ended in cache_stale; part_failed requests */
    unsigned builds;        /* app versions the trace names: 0, 1, or 2 for two or more */
    char build[TRC_TEXT_MAX]; /* the first of them, "" when none */
};

/* diagnose.c */
int rpl__parse_int(const char *s, size_t n, int64_t *out);
void rpl__copy_text(char *dst, const char *s, size_t n);
const char *rpl__find(const char *s, size_t n, const char *what);
int64_t rpl__days_from_civil(int64_t y, unsigned m, unsigned d);

/* How far apart two times are once a time zone is taken out: a gap of up
 * to 14 h less the nearest whole number of quarter hours (a record printed
 * in the phone's zone beside a UTC clock); a longer gap as it is. */
int64_t rpl__zone_gap(int64_t a, int64_t b);

/* killlines.c: a kill line of lmkd ("Kill '...'", "Killing '...'") or of
 * the kernel's OOM killer ("Killed process PID (NAME)"), with the time of
 * its log prefix: 1 and *x, or 0 when the line is neither. */
int rpl__read_kill_line(const char *s, size_t n, uint64_t line, rpl_exit *x);

/* Whether the kill line s[0..n), read as *x, goes on in the next line:
 * lmkd's and the kernel driver's two-line forms, or a line cut by whoever
 * posted the log (no adj, no size, an open parenthesis, a trailing comma). */
int rpl__kill_line_open(const char *s, size_t n, const rpl_exit *x);
/* The part of the next line next[0..nn) that continues the open kill line
 * s[0..n) (*len its length), or NULL when that line does not continue it
 * (a log line of its own, a record, a blank line). */
const char *rpl__kill_line_more(const char *s, size_t n, const char *next, size_t nn,
                                size_t *len);

/* classes.c: an iOS report's kind as a trace's exit event names it
 * ("jetsam", "watchdog", ...). */
const char *rpl__ios_report_key(rpl_ios_report r);

/* verdict.c: the verdict on record x, given the trace exit it matched
 * (m, NULL none, on: what the match used).  own: x is the trace's own
 * record; closer: a closer record took the death x was nearest to (NULL
 * none), and how far each is from it; other: a death it would match but
 * for the app version (NULL none). */
typedef struct rpl__outbid {
    const trace_exit *death;
    int64_t mine_ms, theirs_ms;
} rpl__outbid;
void rpl__verdict_of(const rpl_exit *x, const rpl_trace_exits *t, const trace_exit *m,
                     const char *on, int own, const rpl__outbid *closer,
                     const trace_exit *other, rpl_verdict *v);

/* match.c: the trace exit nearest to x, of the same process and version,
 * not one marked in taken (NULL: any): NULL none; *fit how far (the lower
 * the nearer), *on what it matched on. */
const trace_exit *rpl__match(const rpl_exit *x, const rpl_trace_exits *t,
                             const unsigned char *taken, int64_t *fit, const char **on);

/* The trace exit x would match but for the app version (NULL none). */
const trace_exit *rpl__match_any_version(const rpl_exit *x, const rpl_trace_exits *t);

#endif
