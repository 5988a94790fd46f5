/* pages.h - the page models: the phone's pages around the app, Android's in
 * lmkd's PSI mode (pages.c) and the iPhone's with memorystatus (memstat.c).
 * Internal to models/.
 *
 * A page model decides; the world acts.  It accounts where every byte of
 * RAM is, runs the kernel's reclaim and the killers' decisions (lmkd.c,
 * xnu.c), and kills the other apps it models itself (they are its own
 * state).  The app's processes are the world's: when a killer picks one,
 * the model hands the world a verdict (pg_kill) through its host, the
 * world kills and tells the model the app as it is after the death, and
 * the model goes on (the kernel's OOM killer goes on until the allocation
 * fits, lmkd polls on).  The timeline hears of the model's own kills
 * through the host as well.  The model knows nothing of the world: it
 * reads the app through pg_app, the world's figures by address, and the
 * ledger (below it); a test drives it with a host of its own
 * (tests/test_pages_model.cpp).
 *
 * Who may change what: pages.c (and memstat.c, memstat.h) everything in w_pages, and
 * the w_devstate they are given (the other apps' memory they reclaim,
 * compress and kill); the world (pagesys.c) sets the links up at setup;
 * process.c forgets the app's pages at a death (pg_app_gone); path.c tells
 * of the successor (pg_successor_*). */
#ifndef OOMSIM_MODELS_PAGES_H
#define OOMSIM_MODELS_PAGES_H

#include <stdint.h>

#include <gsl/gsl_rng.h>

#include "models.h"
#include "memstat.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The device's runtime state: the other apps' memory around the app.  The
 * plain kill rules (kill_rules.h) and the path read it too. */
typedef struct w_devstate {
    int64_t cached;       /* other apps' cached memory still held */
    int64_t successor;    /* the app the user switched to, while in the background */
} w_devstate;

/* The page models: Android's in lmkd's PSI mode (pages.c), iOS's (memstat.c). */
enum { W_PAGES_OFF = 0, W_PAGES_LMKD = 1, W_PAGES_XNU = 2 };



/* Where a page model reads the app: the world's own figures, by address,
 * set up once (nothing is copied, nothing goes stale: a death the model
 * asked for is seen at once).  A test points them at its own. */
struct pg_app {
    const sim_engine *e;       /* the clock */
    const uint32_t *epoch;     /* the model's process's life (a death moves it) */
    const int *alive, *fg;     /* the model's process lives; the app is in front */
    const int *aged;           /* in the background past previous_ttl (iOS: the idle band) */
    const int *bg;             /* the user is in another app */
    const int *svc, *main_alive; /* the model runs in a service process; its client lives */
    const int *ending;         /* the replication is at its horizon */
    const int64_t *hot;        /* the file bytes of the hot parts */
};

/* Who kills the app's process. */
enum { PG_BY_LMKD = 0, PG_BY_KERNEL_OOM, PG_BY_JETSAM };

/* A verdict on one of the app's processes: the world carries it out. */
typedef struct pg_kill {
    int by;                         /* PG_BY_* */
    int adj;                        /* lmkd: the adj it found one of the app's processes at */
    int main;                       /* the kernel's OOM killer: the main process (svc) */
    const mdl_lmkd_decision *dec;   /* lmkd: its decision (the reason, the description) */
    mdl_jetsam_cause cause;         /* memorystatus: the cause */
    int report;                     /* memorystatus: a JetsamEvent will list the kill (a
                                     * victim outside the idle bands, or the device's
                                     * jetsam_idle_snapshot); 0: none is posted for it */
} pg_kill;

/* The looks a page model asks to be woken for. */
enum { PG_TICK = 0, PG_POLL = 1, PG_PSI = 2 };

/* The world, as the page models see it. */
typedef struct pg_host {
    /* the oom_score_adj of the model's process (main 0) or its client (1) */
    int (*adj)(void *ctx, int main);
    /* the anonymous bytes the main process holds in its rss (svc): no GPU
     * buffer, which is held by fd, not mapped as its own pages */
    int64_t (*main_anon)(void *ctx);
    /* carries the verdict out (the app's figures change with it) */
    void (*kill)(void *ctx, const pg_kill *k);
    /* the timeline: one of the model's own events, the pages as they are */
    void (*note)(void *ctx, const char *what, const char *why, int64_t dropped,
                 int64_t refault, int adj, sim_time took);
    /* a look (PG_TICK, PG_POLL or PG_PSI) at t: 1 scheduled, 0 not (past the horizon) */
    int (*at)(void *ctx, sim_time t, int what);
    /* iOS: a JetsamEvent memorystatus posts (may be NULL) */
    void (*report)(void *ctx, const mdl_jetsam_event *ev);
} pg_host;

/* One of lmkd's PSI triggers as the kernel keeps it (kernel/sched/psi.c,
 * struct psi_trigger and its psi_window): the window's start and the stall
 * total then, the growth of the window before it (prev_growth), the time of
 * the last event, and a breach not yet signalled (pending).  Microseconds. */
typedef struct pg_psi_trigger {
    sim_time start, start_value, prev_growth;
    sim_time last_event;
    int pending;
} pg_psi_trigger;

/* init_triggers: the window restarts at now from the total then. */
void pg_psi_reset(pg_psi_trigger *t, sim_time now, sim_time total);
/* update_triggers for one trigger at now, the stall total `total`, with
 * new stall since the last update or not: 1 when it signals an event (the
 * growth over its sliding window reached the threshold, at most one event
 * per window; a breach inside the last event's window is held, pending,
 * and signalled once that window is over). */
int pg_psi_update(pg_psi_trigger *t, sim_time now, sim_time total, int new_stall,
                  sim_time threshold, sim_time window);
/* The growth over the window ending at now, read without moving the
 * window: window_update's figure within the window; past it, the growth
 * since the start spread over the time since (the kernel would restart the
 * window there). */
sim_time pg_psi_growth(const pg_psi_trigger *t, sim_time now, sim_time total, sim_time window);

/* Android in lmkd's PSI mode: the phone's pages around the app (pages.c;
 * docs/model.md "The phone's pages").  Bytes; the app's anonymous and
 * file bytes are the ledger's, read when needed.  Free pages are what is
 * left of ram, never stored. */
struct w_pages {
    int on;                  /* the device runs a page model: W_PAGES_LMKD or W_PAGES_XNU */
    /* the links, set at setup */
    const mdl_device *dev;
    const mdl_ledger *led;
    w_devstate *ds;
    mdl_rep *out;
    const pg_host *host;
    void *ctx;
    sim_time t;              /* kswapd's progress is counted up to here */
    uint32_t ncached;        /* cached apps alive (ds->cached: their resident anon) */
    int64_t cached_swap;     /* their anonymous bytes in zram, uncompressed */
    int64_t succ_swap;       /* the successor app's */
    int64_t pc_cold, pc_ws;  /* the page cache resident: beyond the working set, in it */
    int64_t app_cold_gone;   /* the app's file pages outside the hot weights, dropped */
    int64_t app_evicted;     /* the app's hot weights dropped, refaulted at their next use */
    int64_t spike;           /* another app's allocation held for the check */
    int kswapd;              /* free fell under low and is not yet over high */
    /* vmstat counters, bytes */
    int64_t refault, pgscan_kswapd, pgscan_direct, pgrefill;
    /* PSI: the stall totals, lmkd's two triggers on them, the kernel's
     * last update of them (psi_seen: a stall's end), its polling of them
     * until psi_until, a look scheduled for a held event */
    sim_time some_total, full_total;
    pg_psi_trigger some, full;
    sim_time psi_seen, psi_until;
    sim_time psi_look_at;    /* the earliest PG_PSI look asked for, -1 none */
    sim_time stall;          /* the app's own stall to add to its running stage */
    /* lmkd: its state between wake-ups, its polling after an event */
    mdl_lmkd_state lmkd;
    mdl_psi_level level;     /* of the event that started the polling */
    sim_time poll_until;     /* polls until this time (PSI_WINDOW_SIZE_MS after the event) */
    int poll_pending;
    int tick_pending;        /* kswapd's next look is scheduled */
    int64_t thrashing;       /* lmkd's thrashing at its last wake-up */
    int64_t dropped;         /* the app's weights dropped since the last note of them */
    w_xnu x;                 /* iOS (memstat.c) */
};

/* What a check found: the allocating process died (gone), or lives and the
 * memory warnings should compare `room` (warn). */
struct pg_result {
    int gone, warn;
    int64_t room;
};

/* Sets the model up for device d (pg zeroed, links set): the other
 * processes drawn from r (iOS), the phone settled.  Off (on 0) for a device
 * with no page model. */
void pg_setup(w_pages *pg, const pg_app *a, gsl_rng *r);
/* A kill check: an allocation was made, by the app (own) or by another app
 * (a spike of `extra` bytes, held only for the check). */
pg_result pg_check(w_pages *pg, const pg_app *a, int64_t extra, int own);
/* An inference on a part (hot: its file is hot, of hot_bytes) reads its
 * weights: what reclaim dropped of them comes back.  The time it takes. */
sim_time pg_refault(w_pages *pg, const pg_app *a, int hot, int64_t hot_bytes, pg_result *res);
/* The looks the model asked for (PG_TICK, PG_POLL, PG_PSI). */
void pg_look(w_pages *pg, const pg_app *a, int what);

int64_t pg_free(const w_pages *pg);
void pg_parts(const w_pages *pg, const pg_app *a, int64_t part[W_PAGE_PARTS]);
/* The headroom the memory warnings read. */
int64_t pg_room(const w_pages *pg, const pg_app *a);
/* Room for growth before the kernel acts: a hard line returned (INT64_MAX:
 * none), a soft one in *soft. */
int64_t pg_growth_room(const w_pages *pg, const pg_app *a, int64_t *soft);
/* The page figures of an event (its pages notes, samples and exits). */
void pg_fill(const w_pages *pg, const pg_app *a, trc_event *e);
/* The app's hot weights still resident; its anonymous bytes, and its file
 * pages resident (its mapped bytes less what reclaim dropped). */
int64_t pg_app_hot_resident(const w_pages *pg, const pg_app *a);
int64_t pg_app_anon(const w_pages *pg);
int64_t pg_app_file_resident(const w_pages *pg);
/* The app's process died: nothing of it is compressed or dropped. */
void pg_app_gone(w_pages *pg);
/* The app's own stall since it was last taken. */
sim_time pg_take_stall(w_pages *pg);
/* An inference that would take `base` took `took`: its slowdown counted. */
void pg_inference(w_pages *pg, sim_time base, sim_time took);
/* A new app the user switches to replaces the previous one. */
void pg_successor_left(w_pages *pg);
/* iOS: the user came back from the successor at now: it ages from now;
 * 1 when it still holds memory. */
int pg_successor_back(w_pages *pg, sim_time now);

#ifdef __cplusplus
}
#endif

#endif /* OOMSIM_MODELS_PAGES_H */
