/* kill.c - the kill rules and what they read of the device: the rule of
 * the device's OS family (kill_lmk.c, kill_jetsam.c) picked in one place,
 * the room left under it, the line the tables show, jetsam's limits, the
 * device as a policy puts it in force, a delegate's entry (the rules
 * themselves are in kill_rules.h, inlined where they run).  Pure: nothing
 * here changes the world. */
#include "world_int.h"

#include <string.h>

#include "kill_rules.h"

/* The public face of the kill rules (models.h). */
void mdl_kill_decide(const mdl_device *d, const mdl_kill_input *in, mdl_kill_verdict *out)
{
    kill_decide(d, in, out);
}

int64_t mdl_kill_line(const mdl_device *d, int foreground)
{
    return d->rule == MDL_KILL_JETSAM ? jetsam_line(d, foreground) : lmk_line(d, foreground);
}

int64_t mdl_lmk_line_at(const mdl_device *d, int adj)
{
    const mdl_minfree *lv = d->lmk_psi ? NULL : lmk_level_of(d, adj);
    return lv != NULL ? d->ram - d->system - d->wmark_high - lv->free : -1;
}

int64_t mdl_device_jetsam_limit(const mdl_device *d, int foreground)
{
    return jetsam_limit_of(d, foreground);
}

const mdl_device_delegate *mdl_device_delegate_of(const mdl_device *d, const char *kind)
{
    for (unsigned k = 0; k < d->ndelegates; k++)
        if (strcmp(d->delegates[k].name, kind) == 0)
            return &d->delegates[k];
    return NULL;
}

void mdl_device_in_force(const mdl_device *d, const mdl_policy *p, mdl_device *out)
{
    *out = *d;
    /* the increased-memory-limit entitlement raises the active and the
     * inactive limit alike, each to the larger of the two (XNU
     * xnu-11417.101.15, kern_memorystatus.c, the entitled limits applied at
     * exec to both; memorystatus_get_default_task_inactive_limit returns the
     * active one) */
    if (p->entitlement && d->rule == MDL_KILL_JETSAM && d->entitled_limit > 0) {
        if (d->entitled_limit > out->jetsam_limit)
            out->jetsam_limit = d->entitled_limit;
        if (d->entitled_limit > out->jetsam_background_limit)
            out->jetsam_background_limit = d->entitled_limit;
    }
}

int64_t mdl_cell_kill_line(const mdl_cell *c, int foreground)
{
    mdl_device d;
    mdl_device_in_force(c->device, &c->policy, &d);
    return mdl_kill_line(&d, foreground);
}

int64_t mdl_cell_model_line(const mdl_cell *c, int foreground)
{
    const mdl_workload *wl = c->workload;
    if (wl == NULL || !wl->has_proc || c->device->rule != MDL_KILL_LMK || c->device->lmk_psi)
        return mdl_cell_kill_line(c, foreground);
    /* the service's adj from its binding (models/world_int.h, w__app_adj) */
    int adj = wl->proc.waive_priority ? 900 : !foreground ? 700 : wl->proc.important ? 0 : 100;
    mdl_device d;
    mdl_device_in_force(c->device, &c->policy, &d);
    return mdl_lmk_line_at(&d, adj);
}
