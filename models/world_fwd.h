/* world_fwd.h - the names every internal header of the world shares: the
 * world's type, what a call that may end the process returns, the empty
 * index.  Internal to models/. */
#ifndef OOMSIM_MODELS_WORLD_FWD_H
#define OOMSIM_MODELS_WORLD_FWD_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mdl_world world;
typedef struct w_holders w_holders;
typedef struct w_session w_session;

#define NIL UINT32_MAX

#if defined(__GNUC__)
#define W_MAY_KILL __attribute__((warn_unused_result))
#else
#define W_MAY_KILL
#endif

/* What a call that may end the process returns.  W_LIVES is SIM_OK. */
typedef enum w_fate {
    W_LIVES = 0, /* the process lives on: carry on */
    W_GONE = 1   /* it died, or the replication failed (w->rc): return at once */
} w_fate;

#ifdef __cplusplus
}
#endif

#endif /* OOMSIM_MODELS_WORLD_FWD_H */
