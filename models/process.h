/* process.h - one app process (process.c): its state while it lives (w_proc,
 * emptied at its death), its start, its start-up, its samples and
 * watchdog, its death and the relaunch after it; and the user's path that
 * starts it and feeds it (path.c).  Internal to models/.
 *
 * Who may change what in w_proc:
 *   process.c    everything at start and death (proc_reset zeroes it whole,
 *                which also empties page_held); the app baseline (proc.app),
 *                accept_since, degraded, startup_skip, the samples
 *   world.c      fg, startup_done, parked, users_free at setup
 *   inforce.c    the parts' wait lists, between lives
 *   parts.c      parts (their states, phases and memory), switching, hot,
 *                startup_next, cache_valid and cache_outdated
 *   requests.c   the queue (q_head, q_len, q_last), running, parked,
 *                dispatching
 *   pool.c       users_free
 *   warning.c    warned, warn_active
 *   path.c       fg, aged (the background life)
 *   service.c    fg (the main process's start), aged, lmkd and kernel_oom (the
 *                service's death, cleared once written)
 *   owners.c     h_open, nsess, sess_seq, tasks, left, left_at
 *   genrun.c     gen_growing, kv_held
 *   pagesys.c    lmkd, kernel_oom, jetsam: the memory verdict it carries out */
#ifndef OOMSIM_MODELS_PROCESS_H
#define OOMSIM_MODELS_PROCESS_H

#include <stdint.h>

#include "models.h"
#include "world_fwd.h"
#include "parts.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One app process.  proc_reset() (process.c) returns it to "no process". */
typedef struct w_proc {
    part_rt parts[MDL_PARTS_MAX];
    int alive, fg;        /* fg: in the foreground */
    int startup_done;     /* the start-up list is loaded (or skipped) */
    unsigned startup_next; /* the start-up list's next entry */
    int startup_skip;     /* safe mode or stop_prewarm: no start-up model work */
    int degraded;         /* degrade_cpu: no delegate, the CPU path */
    int cache_valid;      /* the compiled cache was found valid at this start */
    int cache_outdated;   /* ... though built under a version its key omits: prepare fails */
    sim_time alive_since, accept_since; /* accept_since: alive and accepting since */
    uint32_t switching;   /* on-demand loads in progress */
    int warned;           /* below warning_at as last heard (edge-triggered) */
    int warn_active;      /* on_warning actions in force */
    int64_t sample_pss_kb, sample_rss_kb; /* the last periodic sample, 0 before one */
    int aged;             /* lmk: in the background past previous_ttl (adj 900) */
    int64_t hot;          /* file bytes of hot parts, from their load's end to release */
    mdl_lmkd_reason lmkd; /* the kill about to be recorded: lmkd's reason */
    int kernel_oom;       /* ... or the kernel's OOM killer's */
    mdl_jetsam_cause jetsam; /* ... or memorystatus's cause (iOS page model) */
    int unreported;       /* ... for which memorystatus posts no JetsamEvent */
    int dispatching;      /* dispatch() runs: a nested call leaves it to the loop */
    int64_t app[MDL_CAT_COUNT]; /* the app baseline this process holds */
    /* the attempts and requests in flight, in w_store's arrays */
    uint32_t users_free;  /* free user records */
    uint32_t parked;      /* on_new_condition retries, linked by user.next */
    uint32_t running;     /* attempts holding an execution slot */
    uint32_t q_head, q_len; /* the FIFO in store.q */
    sim_time q_last;      /* the queue-area integral's last mark */
    uint32_t gen_growing; /* KV regions whose resident KV grows now (generate.c) */
    int64_t kv_held;      /* every generation part's KV charged now */
    /* owners (owners.c): who holds sessions now, the session records in
     * use (w_store.sess[0..nsess)), tasks running, and per part the
     * held_after_leave clock */
    uint8_t h_open[MDL_HOLDERS_MAX];
    uint32_t nsess, sess_seq;
    uint32_t tasks;
    uint8_t left[MDL_PARTS_MAX];
    sim_time left_at[MDL_PARTS_MAX];
} w_proc;

/* process.c */
void w__apply_limits(world *w);
void w__startup_continue(world *w);
void w__die(world *w, mdl_exit why, mdl_stage stage);
void w__cold_start(world *w);
void w__teardown(world *w);
void w__app_stop(world *w);      /* an update step: the app stops, not a death */
void w__cache_rebuilt(world *w); /* the cache on disk: valid for the phone's versions */
/* process.c: the model's process dies, "no process" again (the caller writes its record) */
void w__proc_gone(world *w);
void w__relaunch_at(world *w); /* after the app's death: the user reopens it after a delay */
/* path.c: the path's next step (an event) */
void w__step(sim_engine *e, void *ctx, uint64_t arg);


#ifdef __cplusplus
}
#endif

#endif /* OOMSIM_MODELS_PROCESS_H */
