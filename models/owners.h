/* owners.h - who holds sessions of the model (owners.c; a scenario's
 * `owners`): pages, background tasks, a service; the session states they
 * hold.  Internal to models/.
 *
 * Who may change what:
 *   owners.c     the session records (store.sess), proc.h_open, nsess, sess_seq,
 *                tasks, left and left_at, and the owners' needs in force
 *                (world.h_needs, set through config)
 *   requests.c   an attempt's hsess (through take and put) */
#ifndef OOMSIM_MODELS_OWNERS_H
#define OOMSIM_MODELS_OWNERS_H

#include <stdint.h>

#include "models.h"
#include "world_fwd.h"
#include "parts.h"
#include "requests.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A session state an owner holds (owners.c): its part, its owner, its
 * memory (charged to the part's session owner), what ran on it last. */
struct w_session {
    int64_t amount[MDL_CAT_COUNT];
    int64_t last_req;     /* the timeline's id of its last request, -1: none */
    sim_time opened;
    uint32_t id;          /* the timeline's session id, counted per process */
    uint8_t in_use, part, holder;
    uint8_t busy;         /* an execution runs on it */
    uint8_t leaked;       /* its owner closed without releasing it */
    uint8_t closing;      /* its owner closed while it was busy: closes at the end */
};


/* owners.c: who holds sessions (a scenario's `owners`).  The process's
 * life tells them what happens through this interface (w->hold, NULL
 * when the scenario names no owners), and owners.c, above it, acts on the
 * process (opens sessions, loads and releases parts): the process's files
 * know the interface, not owners.c. */
struct w_holders {
    void (*config)(world *w, const mdl_candidate *c); /* the candidate in force */
    /* the process started: services open, tasks scheduled */
    void (*start)(world *w);
    /* part p is ready: released (1) when it was loaded for an owner that
     * closed since and nothing else wants it, before it evicts another */
    int (*unwanted)(world *w, part_rt *p);
    /* part p is ready: the open owners' sessions of it open */
    w_fate (*part_ready)(world *w, part_rt *p);
    /* part p's sessions went (released, or dropped: `why`) */
    void (*part_gone)(world *w, part_rt *p, const char *why);
    /* attempt r on p takes an idle session of its owner (1), or none (0) */
    int (*take)(world *w, req *r, part_rt *p);
    /* ... and gives it back at its execution's end */
    void (*put)(world *w, req *r);
    /* the process dies or the horizon comes: held_after_leave's clocks stop */
    void (*end)(world *w);
};
extern const w_holders w__holders;
/* the user enters (1) or leaves (0) a page: its owners open or close */
void w__holders_page(world *w, uint32_t page, int enter);

#ifdef __cplusplus
}
#endif

#endif /* OOMSIM_MODELS_OWNERS_H */
