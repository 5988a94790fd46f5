/* service.h - the model in a service process of its own (service.c; a
 * scenario's `processes`; docs/model.md "Processes"): the app's main
 * process beside it, the adj each holds, which one a reclaim kill takes.
 * Internal to models/.
 *
 * Who may change what:
 *   service.c    main (its life, baseline, restarts), and the service's deaths
 *   process.c    main.sample_* (the periodic sample), main.aged with proc.aged
 *   path.c       main.aged (the app ages in the background) */
#ifndef OOMSIM_MODELS_SERVICE_H
#define OOMSIM_MODELS_SERVICE_H

#include <stdint.h>

#include "models.h"
#include "world_fwd.h"

#ifdef __cplusplus
extern "C" {
#endif

/* oom_score_adj of the app in the foreground and in the background
 * (ProcessList.java: FOREGROUND_APP_ADJ 0, PREVIOUS_APP_ADJ 700). */
#define APP_ADJ_FOREGROUND 0
#define APP_ADJ_BACKGROUND 700
#define APP_ADJ_CACHED 900 /* ... once in the background past previous_ttl (CACHED_APP_MIN_ADJ) */
/* ... in the background while a task owner's job runs: its binding
 * (BIND_NOT_PERCEPTIBLE) gives PERCEPTIBLE_LOW_APP_ADJ (owners.c) */
#define APP_ADJ_JOB 250
/* ... its service bound from the front: VISIBLE_APP_ADJ (computeServiceHostOomAdjLSP) */
#define APP_ADJ_VISIBLE 100
#define APP_ADJ_PERCEPTIBLE 200


/* The app's main process while the model runs in a service process of its
 * own (service.c; docs/model.md "Processes"): w_proc is then the service,
 * and this is its client, which the user sees.  Unused otherwise. */
typedef struct w_main {
    int alive;
    sim_time alive_since;
    int64_t app[MDL_CAT_COUNT]; /* its baseline (app_owner, with the pages' holds) */
    int aged;                   /* past previous_ttl in the background (kept for the service) */
    int restart_scheduled;      /* the service is bound again at restart_h */
    sim_handle restart_h;
    sim_time restart_delay;     /* the last restart's delay (ActiveServices' backoff) */
    int svc_up;                 /* the service finished a start-up in this process's life */
    sim_time svc_started;       /* the service's last start */
    int64_t sample_pss_kb, sample_rss_kb; /* its last periodic sample (with the service's) */
} w_main;


/* service.c: the model in a service process of its own (svc) */
/* the app's main process starts: its baseline (W_GONE: it died of it) */
W_MAY_KILL w_fate w__main_start(world *w);
/* the main process dies: its record; the service goes with its binding */
void w__main_die(world *w, mdl_exit why, mdl_stage stage);
void w__main_end(world *w); /* it ends (a death, an update): its time, restart, memory */
void w__svc_died(world *w);  /* the service died, the app lives: bound again after a delay */
void w__svc_start(world *w); /* process.c: the service starts (the restart's bind) */
/* a request arrives while the service is down: it fails */
void w__svc_refuse(world *w, uint32_t user_index);
/* a reclaim kill's class for the service: a waived one's is system_reclaim */
mdl_exit w__svc_class(const world *w, mdl_exit why);
/* the reclaim kill of `adj` (lmkd, the OOM killer, the minfree levels) */
void w__kill_at(world *w, int adj, mdl_exit why, mdl_stage stage);
/* the reclaim kill at adj takes the main process (1) or the service (0):
 * the one with the adj; at one adj over PERCEPTIBLE_APP_ADJ the main
 * process (its adj reached lmkd first), at or under it the heavier */
int w__victim_is_main(const world *w, int adj);
/* ... the same with the victim chosen (main: 1 the main process) */
void w__kill_process(world *w, int main, mdl_exit why, mdl_stage stage);

/* the horizon: the main process's times and memory */
void w__main_teardown(world *w);

#ifdef __cplusplus
}
#endif

#endif /* OOMSIM_MODELS_SERVICE_H */
