/* tell_int.h - what the teller (tell.c) and the drill (quiz.c) share: the
 * teller's state, which turns a replication's trace events into lines for
 * a person, collapsing deaths and requests that repeat the same way, and
 * remembers the deaths for the verdicts and the drill.  Everything told
 * goes into `out`, which the caller takes (rpl_teller_text). */
#ifndef OOMSIM_REPLAY_TELL_INT_H
#define OOMSIM_REPLAY_TELL_INT_H

#include "replay.h"

#define TELL_MIB(x) ((double)(x) / (1 << 20))
/* A `pages` value of e, 0 when absent. */
#define PG(e, k) ((e)->pages_has >> (k) & 1u ? (e)->pages[k] : 0)
#define TELL_DEATHS RPL_TELL_DEATHS /* deaths remembered for the verdicts */
#define TELL_HELD 32  /* holds remembered at once (past it, a release is told without its size) */
#define TELL_PAGE (-1) /* the kind of a page's hold in rpl_teller.held */
#define TELL_LINE_MAX 320

/* One death, as the verdicts and the drill need it. */
/* The system's periodic samples of one life (the trace's plain samples):
 * how many, the first's and the last's instant and memory. */
typedef struct tell_samples {
    unsigned n;
    sim_time first_us, last_us;
    int64_t first_mb, last_mb;
} tell_samples;

typedef struct tell_death {
    rpl_exit record;      /* as diagnose would read it from the trace */
    char stage[32];       /* the stage running, "" when none */
    int started;          /* the process had finished starting (rpl_life_at_exit) */
    unsigned signs;       /* what its life showed of the failure mode (RPL_SIGN_*) */
    sim_time time_us;     /* when, as the timeline prints it */
    char why[TELL_LINE_MAX]; /* the limit crossed, or what else ended it */
    int bg;               /* the app was in the background at the death (the timeline's) */
    int kill_line;        /* lmkd's kill line is shown beside its exit record */
    int64_t unseen;       /* GPU bytes held at the death that the record's pss leaves out */
    tell_samples samples; /* the system's periodic samples of its life */
} tell_death;

/* The drill of one death (drill.c): each question's choices in the order
 * shown (canonical indices, shuffled by the drill's seed), the fixes it
 * offers ([0] the right one), and the fact its last question changes with
 * the verdict that follows. */
#define TELL_DRILL_CHOICES 9
typedef struct tell_drill {
    unsigned char shown[RPL_DRILL_QUESTIONS][TELL_DRILL_CHOICES];
    unsigned n[RPL_DRILL_QUESTIONS];
    const char *fixes[4];
    const char *fix_rows[4]; /* the verdict table's row each fix is from */
    int change;              /* the fact changed (drill.c's CHANGE_*) */
    rpl_verdict changed;     /* the verdict with it changed */
} tell_drill;

/* One line of the narration: its time and memory, and the text after them;
 * for a line about one request, the request and where its number is in
 * the text (lines of requests that repeat the same way differ only there). */
typedef struct tell_line {
    sim_time t;
    double mib;
    int64_t req;             /* -1: the line is not about one request */
    uint16_t num_at, num_len; /* the request's number in text */
    char text[TELL_LINE_MAX];
} tell_line;

struct rpl_teller {
    const mdl_cell *cell;
    tell_samples samples;  /* of the life being told */
    int full, quiz;        /* --full: no collapsing; --quiz: hide the causes */
    int bg;                /* the app is in the background now */
    int suspended;         /* ... and suspended in iOS's idle band (an idle_band note) */
    trc_pairs *open;
    uint64_t index;
    sim_text out;          /* told, not yet taken */
    /* the cycle being told: the lines since the last death */
    tell_line *lines;
    size_t nlines, cap;
    rpl_life life;         /* the process's life being told */
    /* the last cycle printed, and how many times it came again since */
    tell_line *prev;
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
    /* the last delegate_prepare begun: its part, bytes made, bytes kept */
    char delegate_part[TRC_TEXT_MAX];
    double delegate_alloc, delegate_keep;
    int64_t last_java;     /* the Java bytes the last begin asked for */
    /* what the process holds for a while and frees later, to tell how much
     * each release frees: a stage's transient by part and stage, a page's
     * hold by page (TELL_PAGE), a cache rebuild's by part (TRC_CACHE) */
    struct {
        char name[TRC_TEXT_MAX];
        int kind;
        double bytes;
    } held[TELL_HELD];
    unsigned nheld;
    int updated;           /* the last update step told: 1 the OS, 2 the runtime, 0 none */
    tell_death deaths[TELL_DEATHS];
    unsigned ndeaths;
    uint64_t more_deaths;
    uint64_t stale, part_failed; /* prepares refused a stale cache; requests failed so */
    tell_drill drill;
    /* an LLM part (tell_gen.c): its KV, its weights by kind (mapped,
     * repacked, gpu) and the compute buffers of the contexts made */
    int64_t gen_kv, gen_weights[3];
    int64_t gen_compute[MDL_PARTS_MAX]; /* by part: its context's compute buffer, 0 none */
    int64_t gen_per_token; /* the last context made: its KV bytes a token */
    uint32_t gen_context;  /* ... its tokens */
    int gen_reserved;      /* ... its KV written whole at its creation */
};

/* An instant as every line prints it, in seconds: rounded to the
 * millisecond, as a generated exit record's timestamp_ms is, so a death
 * reads the same in the timeline, the verdicts, the quiz and diagnose. */
static inline double rpl__instant_s(int64_t us)
{
    return (double)((us + 500) / 1000) / 1e3;
}

/* why.c: what ended the process at exit event e (class cls), into buf;
 * the phone's pages at e, into buf (ios: XNU's page levels). */
void rpl__why_text(const rpl_teller *t, const trc_event *e, rpl_class cls, char *buf, size_t n);
/* lmkd's "to free" of the app at its death, in kB (why.c). */
long long rpl__lmkd_rss_kb(const rpl_teller *t, const trc_event *e);
/* The lines of the record exit event e leaves (x, read from it), as the
 * phone writes them, named by process and version; their count (why.c). */
#define TELL_RECORD_LINES 2
unsigned rpl__record_lines(const rpl_teller *t, const trc_event *e, const rpl_exit *x,
                           char lines[TELL_RECORD_LINES][TELL_LINE_MAX]);
void rpl__pages_text(const trc_event *e, char *buf, size_t n, int ios);

/* drill.c: the drill's questions, their forms, their grading. */
void rpl__drill_ask(rpl_teller *t, unsigned death, unsigned q);
int rpl__drill_form(const rpl_teller *t, unsigned q, char *answer, size_t n, const char **form);
void rpl__drill_grade(rpl_teller *t, const tell_death *d, const rpl_verdict *v,
                      char answers[][RPL_ANSWER_MAX]);

/* tell_gen.c: an LLM part's notes followed (1 when e was one); its
 * context's creation (1 and the line); its release; at a death, the split
 * of the counted memory and the app's one state (the lines, 2; 0 none). */
int rpl__tell_gen_note(rpl_teller *t, const trc_event *e);
int rpl__tell_gen_context(rpl_teller *t, const trc_event *e, char *line, size_t n);
void rpl__tell_gen_release(rpl_teller *t, const trc_event *e);
int rpl__tell_gen_death(rpl_teller *t, const trc_event *e, int answering,
                        char lines[2][TELL_LINE_MAX]);

/* The verdict on death d: rpl_diagnose_told, the advice `diagnose` gives. */
void rpl__verdict(const tell_death *d, rpl_verdict *v);

#endif
