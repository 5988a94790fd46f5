/* thermal.h - a phone's heat under sustained load (`thermal`, docs/model.md
 * "The phone: speed and delegates").  A model that decides: it reads the
 * profile and the instants it is told, and names none of the world's
 * functions.
 *
 * The heat is the seconds of load the phone has stored: while an execution
 * runs it rises one second per second, while none runs it falls `cooling`
 * seconds per second, down to 0.  A step begins when the heat reaches its
 * `after`, and ends when the heat falls `hysteresis` under it (a thermal
 * HAL's hot hysteresis: no step flaps at its threshold); an execution runs
 * at the speed of the step at its start for the whole of it. */
#ifndef OOMSIM_MODELS_THERMAL_H
#define OOMSIM_MODELS_THERMAL_H

#include "models.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct mdl_heat {
    double heat;   /* seconds of stored load */
    sim_time at;   /* the instant heat is counted to */
    int busy;      /* an execution runs since `at` */
} mdl_heat;

/* The heat counted to `now` (not before `at`), and `busy` from then on. */
void mdl_heat_to(const mdl_thermal *t, mdl_heat *h, sim_time now, int busy);
/* The step in force at h's heat, from step k in force until now: 0 none,
 * k the k-th step (1-based). */
unsigned mdl_heat_step(const mdl_thermal *t, const mdl_heat *h, unsigned k);
/* Its speed factor: 1 at step 0. */
double mdl_heat_speed(const mdl_thermal *t, unsigned step);

#ifdef __cplusplus
}
#endif

#endif
