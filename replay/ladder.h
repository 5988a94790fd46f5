/* ladder.h - the verdict table's part of replay.h, which includes it
 * after rpl_class and rpl_exit: the recoveries a verdict names, the
 * recovery ladder's steps, the signs of a failure mode a death's life and
 * record show, and the life they are read from (ladder.c, life.c,
 * classes.c; docs/on-call.md "The verdict table").  Include replay.h, not
 * this file. */
#ifndef OOMSIM_REPLAY_LADDER_H
#define OOMSIM_REPLAY_LADDER_H

/* The recovery a death calls for, ordered as the drill offers the first
 * RPL_REC_DRILL_CHOICES (docs/model.md "Recovery"). */
typedef enum rpl_recovery {
    RPL_REC_START_UP = 0,          /* a memory death before any request */
    RPL_REC_RELEASE_IDLE,          /* low_memory */
    RPL_REC_RELEASE_IN_BACKGROUND, /* system_reclaim */
    RPL_REC_HEAP_OUT_OF_JAVA,      /* java_crash */
    RPL_REC_OFF_MAIN_THREAD,       /* anr */
    RPL_REC_ISOLATE_DELEGATE,      /* native_crash */
    RPL_REC_OUT_OF_LAUNCH,         /* watchdog */
    RPL_REC_COLLECT_EVIDENCE,      /* unknown */
    RPL_REC_NOT_MEMORY,            /* other */
    RPL_REC_THRASHING,             /* lmkd killed for the page cache thrashing */
    RPL_REC_SWAP_LOW,              /* lmkd killed for swap running out */
    RPL_REC_CACHED,                /* lmkd's low-memory kill of a cached app */
    RPL_REC_KERNEL_OOM,            /* the kernel's OOM killer, not lmkd */
    RPL_REC_ISOLATED,              /* an isolated process died, not the app */
    RPL_REC_STALE_CACHE,           /* no death: an outage, a compiled cache refused */
    RPL_REC_SWAP_THRASHING,        /* lmkd killed for swap full and the page cache thrashing */
    RPL_REC_COUNT
} rpl_recovery;
#define RPL_REC_DRILL_CHOICES 8
/* The sentence a verdict gives. */
const char *rpl_recovery_text(rpl_recovery r);
/* The recovery ladder (ladder.c, docs/on-call.md "The recovery ladder"):
 * its four steps in the order of reversibility, the step a death calls
 * for, why the steps before it do not suffice, and the failure mode's own
 * fix.  RPL_STEP_NONE: a death the ladder does not answer (not a memory
 * failure, an isolated process). */
typedef enum rpl_step {
    RPL_STEP_NONE = 0,
    RPL_STEP_REJECT,       /* reject new inference */
    RPL_STEP_STOP_EXTRA,   /* stop prewarm and extra sessions */
    RPL_STEP_CLEAR_CACHES, /* clear rebuildable inactive caches */
    RPL_STEP_LAST_GOOD,    /* the last known good, only with a complete receipt */
    RPL_STEP_COUNT
} rpl_step;
/* What names a death's failure mode (docs/on-call.md "The verdict
 * table"): what its life showed at the instant (rpl_life.signs: a retry
 * duplicating a working set while anything is in flight, a delegate that
 * failed to prepare until the fallback is ready or its memory goes, a
 * cache being rebuilt, a queue of RPL_QUEUE_SIGN or more waiting requests,
 * a part loading unasked or for a request while another part is held, a
 * session a page's owner leaked, an LLM's KV cache holding pages, a phone
 * throttled by its heat, a memory warning nothing was released after, an
 * update the cache has not been rebuilt since), and
 * what its record says (rpl_record_signs: the app behind, the start not
 * finished, a service process of the app's own). */
enum {
    RPL_SIGN_RETRY_DUPLICATE = 1u << 0,
    RPL_SIGN_DELEGATE_FAILED = 1u << 1,
    RPL_SIGN_CACHE_REBUILD = 1u << 2,
    RPL_SIGN_QUEUE = 1u << 3,
    RPL_SIGN_PRELOAD = 1u << 4,
    RPL_SIGN_SWITCH = 1u << 5,
    RPL_SIGN_LEAKED = 1u << 6,
    RPL_SIGN_KV = 1u << 7,
    RPL_SIGN_THERMAL = 1u << 8,
    RPL_SIGN_WARNED = 1u << 9,
    RPL_SIGN_UPDATED = 1u << 10,
    RPL_SIGN_ANSWERING = 1u << 11, /* an inference (an LLM's answer) runs at the death */
    RPL_SIGN_BACKGROUND = 1u << 12,
    RPL_SIGN_STARTING = 1u << 13,
    RPL_SIGN_SERVICE = 1u << 14,
};
#define RPL_QUEUE_SIGN 8
typedef struct rpl_ladder {
    rpl_step step;
    const char *why; /* why the earlier steps do not suffice (or why none applies) */
    const char *fix; /* the failure mode's own fix */
    int outage;      /* an outage without a death (a refused cache), not a death */
} rpl_ladder;
const char *rpl_step_name(rpl_step s);
/* The ladder for a death of recovery rec with signs (its life's and its
 * record's; 0: nothing shown): the first row of the verdict table that
 * fits. */
void rpl_ladder_of(rpl_recovery rec, unsigned signs, rpl_ladder *l);
/* The verdict table's rows (the docs' check, the drill's choices): row k's
 * name, its step and its fix, or NULL past the last. */
const char *rpl_ladder_row(size_t k, rpl_step *step, const char **fix);
/* Row k answers verdicts of recovery rec (with some signs or none). */
int rpl_ladder_row_fits(size_t k, rpl_recovery rec);
/* The signs a record adds to its life's (class c, started as rpl_advise
 * takes it). */
unsigned rpl_record_signs(rpl_class c, const rpl_exit *x, int started);
/* The ladder's lines, each after indent: the same in every command, each
 * of which indents it by RPL_LADDER_INDENT. */
#define RPL_LADDER_INDENT "  "
void rpl_ladder_text(const rpl_ladder *l, const char *indent, sim_text *out);

/* lmkd's reason (its name) means the phone thrashed or stalled on memory. */
int rpl_lmkd_thrashed(const char *reason);
/* The drill's short form of choice r, NULL past the drill's choices. */
const char *rpl_recovery_choice(rpl_recovery r);
/* The recovery a class calls for. */
rpl_recovery rpl_recovery_of(rpl_class c);
/* The one source of advice, which `diagnose` and `explain` both call: the
 * recovery a death of class c with record x calls for, from lmkd's reason
 * or XNU's cause when the record names one, the process (an isolated one
 * does not end the app), and whether the process had finished starting
 * (started: 1 yes, 0 no, -1 not known: no timeline). */
rpl_recovery rpl_advise(rpl_class c, const rpl_exit *x, int started);
/* One life of a process in a timeline (from its start to its death), as
 * `diagnose` and `explain` both follow it: where it began, whether a
 * request ran in it, when a stage of it last ended. */
#define RPL_LIFE_PARTS 8
typedef struct rpl_life {
    uint64_t from;       /* the index of its first event */
    int ran_request;     /* an inference began in it */
    int64_t last_end_us; /* the last end of a stage in it, -1: none */
    unsigned signs;      /* RPL_SIGN_*: what it showed of its failure mode */
    int delegate_held;   /* the last delegate_prepare begun made memory (a failure keeps it) */
    /* parts by their name's hash: loaded and not released; a waiting request
     * needs; loaded unasked; the one whose load showed a switch or preload */
    uint64_t held[RPL_LIFE_PARTS], asked[RPL_LIFE_PARTS], preloaded[RPL_LIFE_PARTS];
    unsigned n_held, n_asked, n_preloaded;
    uint64_t sign_part;
    int64_t warned_mb;   /* the counted memory at the last warning (WARNED until under it) */
    int cache_began;     /* a cache rebuild began in this life */
    int cache_good;      /* across lives: a compiled cache was found valid or built */
    unsigned running;    /* inferences begun and not ended */
} rpl_life;
void rpl_life_init(rpl_life *l);
/* An update step's note (the app stops there without a death): 1 the OS,
 * 2 the runtime, 0 not one. */
int rpl_update_of(const trc_event *e);
/* Whether every part named in needs ("first,second") is loaded and not
 * released in this life. */
int rpl_life_holds(const rpl_life *l, const char *needs);
/* Follows event `index` (after trc_pairs_add on it); an exit ends the life. */
void rpl_life_event(rpl_life *l, const trc_event *e, uint64_t index);
/* At an exit event (before rpl_life_event on it): the stage running, that
 * is begun in this life and not ended ("" when none: the samples after a
 * stage ended do not carry it on), into stage[n]; returns whether the
 * process had finished starting: a request ran, or no stage runs and one
 * ended before this instant (a death at the very end of a load is still
 * the start's). */
int rpl_life_at_exit(const rpl_life *l, trc_pairs *open, const trc_event *e, char *stage,
                     size_t n);
/* The drill's right choice for a death of class c with record x
 * (started as rpl_advise takes it): the advice, or the drill's choice
 * nearest to it. */
rpl_recovery rpl_recovery_fitting(rpl_class c, const rpl_exit *x, int started);

#endif
