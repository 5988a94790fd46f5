/* thermal.c - the heat a phone stores under load, and the step it is
 * throttled to (thermal.h). */
#include "thermal.h"

void mdl_heat_to(const mdl_thermal *t, mdl_heat *h, sim_time now, int busy)
{
    if (now > h->at) {
        double dt = (double)(now - h->at) / 1e6;
        h->heat += h->busy ? dt : -dt * t->cooling;
        if (h->heat < 0)
            h->heat = 0;
        h->at = now;
    }
    h->busy = busy;
}

unsigned mdl_heat_step(const mdl_thermal *t, const mdl_heat *h, unsigned k)
{
    /* the heat in microseconds, rounded so that a heat of exactly `after`
     * reaches the step */
    double us = h->heat * 1e6 + 0.5;
    while (k < t->nsteps && us >= (double)t->after[k])
        k++;
    while (k > 0 && us < (double)(t->after[k - 1] - t->hysteresis))
        k--;
    return k;
}

double mdl_heat_speed(const mdl_thermal *t, unsigned step)
{
    return step == 0 ? 1.0 : t->speed[step - 1];
}
