/* explain_int.h - what the files of `oomsim explain` share: the teller
 * (tell.c) that turns a replication's trace events into lines for a
 * person, collapsing deaths that repeat the same way, and remembers the
 * deaths for the verdicts and the quiz (quiz.c). */
#ifndef OOMSIM_CLI_EXPLAIN_INT_H
#define OOMSIM_CLI_EXPLAIN_INT_H

#include "cli.h"
#include "models/models.h"
#include "replay/replay.h"
#include "results/results.h"
#include "scenarios/scenarios.h"
#include "traces/traces.h"

#define XP_MIB(x) ((double)(x) / (1 << 20))
#define XP_DEATHS 64      /* deaths remembered for the verdicts */
#define XP_LINE_MAX 320

/* One death, as the verdicts and the quiz need it. */
typedef struct xp_death {
    rpl_exit record;      /* as diagnose would read it from the trace */
    char stage[32];       /* the stage running, "" when none */
    int startup;          /* during start-up: no request had run since the start */
    char why[XP_LINE_MAX]; /* the limit crossed, or what else ended it */
} xp_death;

/* One line of the narration: its time and memory, and the text after them. */
typedef struct xp_line {
    sim_time t;
    double mib;
    char text[XP_LINE_MAX];
} xp_line;

typedef struct teller {
    const mdl_cell *cell;
    int full, quiz;        /* --full: no collapsing; --quiz: hide the causes */
    int ios, bg;           /* the device is an iPhone; the app is in the background now */
    trc_pairs *open;
    uint64_t index;
    /* the cycle being told: the lines since the last death */
    xp_line *lines;
    size_t nlines, cap;
    int ran_request;       /* a request ran in this cycle */
    /* the last cycle printed, and how many times it came again since */
    xp_line *prev;
    size_t nprev, cap_prev;
    uint64_t repeats;
    int collapsed;         /* the cycle that just ended was counted, not printed */
    int reopen_pending;    /* a death whose user has not come back yet */
    int has_gap, nolater;  /* the cycle began with a reopening; the user never came back */
    sim_time gap;          /* from the last death to that reopening */
    sim_time prev_death, period_sum;
    double relaunch_min, relaunch_max; /* s, reopenings of the collapsed cycles */
    /* per request: attempts so far (grown as requests arrive) */
    uint32_t *attempts;
    size_t nreq;
    xp_death deaths[XP_DEATHS];
    unsigned ndeaths;
    uint64_t more_deaths;
} teller;

teller *xp_teller_create(const mdl_cell *cell, int full, int quiz);
void xp_teller_free(teller *t);
/* A trace sink (mdl_trace_sink): tells one event. */
int xp_tell(void *ctx, const trc_event *e, sim_error *err);
/* Prints what is still held back (a partial cycle, a repeat count). */
void xp_finish(teller *t);
/* One verdict per distinct kind of death, in the order they came. */
void xp_verdicts(const teller *t);
/* The advice for death d: its class's, or the start-up one. */
const char *xp_advice(const xp_death *d, const rpl_verdict *v);
/* The quiz over the first death: CLI_OK, or CLI_INPUT for an unreadable
 * answers file. */
int xp_quiz(const teller *t, const char *answers);

#endif
