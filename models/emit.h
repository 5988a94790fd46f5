/* emit.h - the timeline (emit.c; docs/traces.md): one emitter per kind of
 * event the world announces.  The emitter is an observer: the world calls
 * it, it reads the world's state and the page models' figures and sends
 * the event to the trace's sink, and calls nothing that acts.  Each does
 * nothing when the run is not traced or is tearing down.  Internal to
 * models/.
 *
 * Who may change what: emit.c the event being built (world.ev) and the
 * session slots the timeline numbers executions by (part.slots, req.slot). */
#ifndef OOMSIM_MODELS_EMIT_H
#define OOMSIM_MODELS_EMIT_H

#include <stdint.h>

#include "models.h"
#include "world_fwd.h"
#include "parts.h"
#include "requests.h"

#ifdef __cplusplus
extern "C" {
#endif

void w__emit_note(world *w, int part, mdl_stage stage, const char *what); /* part -1: none */
/* The `background` note, with the app the user switched to (`pages`
 * successor) when the device draws one. */
void w__emit_background(world *w);
void w__emit_app(world *w, const char *what, const int64_t amounts[MDL_CAT_COUNT]);
void w__emit_page(world *w, const char *what, const char *page, const int64_t *amounts);
void w__emit_update(world *w, const char *what, int stops); /* stops: it stopped the app */
void w__emit_request_note(world *w, const char *what, uint32_t user_index); /* names it */
void w__emit_stage_begin(world *w, unsigned part, mdl_stage stage, const w_stage_cost *c);
void w__emit_stage_end(world *w, unsigned part, mdl_stage stage, const char *error);
void w__emit_release(world *w, unsigned part);
void w__emit_cache_begin(world *w, unsigned part, const int64_t miss[MDL_CAT_COUNT]);
void w__emit_inference_begin(world *w, part_rt *p, req *r, const int64_t *keep);
void w__emit_inference_end(world *w, part_rt *p, const req *r);
void w__emit_retry(world *w, const user *x);
void w__emit_relaunch_delay(world *w, sim_time delay);
/* The service's drawn restart delay (`restart`, before the backoff), as a
 * "service_restart_delay" note, for a replay */
void w__emit_restart_delay(world *w, sim_time delay);
/* main: the record is the main process's while the model runs in a
 * service process (svc), which names both processes */
void w__emit_exit(world *w, const mdl_exit_record *r, int main);
void w__emit_recovery(world *w);
void w__emit_sample(world *w);
void w__emit_request(world *w, const user *x);
/* a page model's own event: the pages as they are, what it dropped or read
 * back, the adj or band of the process it killed, the time it took */
void w__emit_pages(world *w, const char *what, const char *why, int64_t dropped,
                   int64_t refault, int adj, sim_time took);
void w__emit_gen(world *w, unsigned part, const char *what, unsigned n, const int *keys,
                 const int64_t *vals);


/* an app process's name as its records give it: Android's package
 * (`app.package`) or PACKAGE:NAME; on iOS the executable (`app.executable`) */
void w__process_name(const world *w, int main, char out[TRC_TEXT_MAX]);

/* an owner's session opens (what "session_open", how the owner's
 * moment, alloc its memory), closes ("session_close", how the result) or
 * leaks ("session_leaked"); last_req -1: none ran on it */
void w__emit_session(world *w, unsigned part, const char *owner, uint32_t id, const char *what,
                     const char *how, int64_t last_req, const int64_t *alloc);

#ifdef __cplusplus
}
#endif

#endif /* OOMSIM_MODELS_EMIT_H */
