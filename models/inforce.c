/* inforce.c - the candidate in force: the check of a cell before it runs
 * (mdl_cell_check), and what a candidate becomes in a replication (its
 * parts and their owners' needs, its delegate on this device, its
 * generation under the policy's axes, its start-up list), at setup and at a
 * relaunch that switches to the last known good. */
#include <stdio.h>
#include <string.h>

#include "world_int.h"

static int part_index(const mdl_candidate *c, const char *name)
{
    for (unsigned k = 0; k < c->nparts; k++)
        if (strcmp(c->parts[k].name, name) == 0)
            return (int)k;
    return -1;
}

/* A policy's gpu_layers as it was written, a number or `all`, into buf. */
static const char *gpu_layers_text(uint32_t k, char buf[16])
{
    if (k > MDL_GEN_LAYERS_MAX)
        return "all";
    snprintf(buf, 16, "%u", k);
    return buf;
}

int mdl_cell_check(const mdl_cell *cell, sim_error *err)
{
    const mdl_candidate *c = cell->candidate;
    const mdl_workload *wl = cell->workload;
    for (uint32_t q = 0; q < wl->nrequests; q++)
        for (unsigned k = 0; k < wl->requests[q].nneeds; k++)
            if (part_index(c, wl->requests[q].needs[k]) < 0)
                return sim_error_set(err, SIM_EINPUT, "needs: candidate %s has no part '%s'",
                                     c->id, wl->requests[q].needs[k]);
    for (unsigned k = 0; k < cell->policy.nprewarm; k++)
        if (part_index(c, cell->policy.prewarm[k]) < 0)
            return sim_error_set(err, SIM_EINPUT, "prewarm: candidate %s has no part '%s'",
                                 c->id, cell->policy.prewarm[k]);
    if (cell->policy.sessions < 1 || cell->policy.sessions > MDL_SESSIONS_MAX)
        return sim_error_set(err, SIM_EINPUT, "sessions: %u outside [1, %u]",
                             cell->policy.sessions, MDL_SESSIONS_MAX);
    if (c->nparts < 1)
        return sim_error_set(err, SIM_EINPUT, "candidate %s has no parts", c->id);
    for (unsigned k = 0; k < c->nparts; k++) {
        mdl_generation g;
        if (!c->parts[k].has_generation)
            continue;
        mdl_generation_in_force(&c->parts[k], &cell->policy, cell->device->os == MDL_OS_IOS,
                                &g);
        char text[16];
        const char *why = cell->policy.gpu_layers > 0
                              ? mdl_gen_layers_refusal(&c->parts[k], cell->policy.gpu_layers - 1)
                              : NULL;
        if (why != NULL)
            return sim_error_set(err, SIM_EINPUT, "candidate %s, part %s: gpu_layers %s "
                                 "cannot be taken: %s", c->id, c->parts[k].name,
                                 gpu_layers_text(cell->policy.gpu_layers - 1, text), why);
        if (g.kv_type != MDL_KVT_F16 && g.flash_attn == MDL_FA_OFF)
            return sim_error_set(err, SIM_EINPUT, "candidate %s, part %s, in force with "
                                 "kv_precision %s and flash_attn off: %s", c->id,
                                 c->parts[k].name, g.kv_type == MDL_KVT_Q8_0 ? "q8_0" : "q4_0",
                                 MDL_FA_V_REFUSED);
    }
    const mdl_device *d = cell->device;
    const mdl_device_delegate *dd = mdl_device_delegate_of(d, c->delegate);
    if (dd != NULL) {
        for (unsigned j = 0; j < c->nparts; j++) {
            double f = dd->has_fail ? dd->fail : c->parts[j].delegate_fail;
            double x = dd->has_crash ? dd->crash : c->parts[j].delegate_crash;
            if (f + x > 1)
                return sim_error_set(err, SIM_EINPUT, "delegates.%s: device %s's fail + crash "
                                     "with part %s of candidate %s exceed 1", dd->name,
                                     d->name, c->parts[j].name, c->id);
        }
    }
    return SIM_OK;
}

/* The parts each requests step needs (by name; a name the candidate
 * lacks: all its parts, in order). */
static void map_needs(world *w, const mdl_candidate *c)
{
    const mdl_workload *wl = w->wl;
    for (uint32_t q = 0; q < wl->nrequests; q++) {
        const mdl_requests *rq = &wl->requests[q];
        uint8_t *m = &w->needs_map[(size_t)q * MDL_PARTS_MAX];
        unsigned n = 0;
        int all = rq->nneeds == 0;
        for (unsigned k = 0; k < rq->nneeds && !all; k++) {
            int x = part_index(c, rq->needs[k]);
            if (x < 0)
                all = 1;
            else
                m[n++] = (uint8_t)x;
        }
        if (all)
            for (n = 0; n < c->nparts; n++)
                m[n] = (uint8_t)n;
        w->nneeds_map[q] = (uint8_t)n;
    }
}

/* What the device says of c's delegate: available or not, its failure
 * and crash probabilities, its speed, whether iOS lets it run in the
 * background.  A trace-driven run keeps the recording's times. */
static void configure_delegate(world *w, const mdl_candidate *c)
{
    const mdl_device *d = w->dev;
    const mdl_device_delegate *dd = mdl_device_delegate_of(d, c->delegate);
    int gpu = strcmp(c->delegate, "gpu") == 0;
    w->delegate_available = dd == NULL || dd->available;
    for (unsigned k = 0; k < c->nparts; k++) {
        w->dfail[k] = dd != NULL && dd->has_fail ? dd->fail : c->parts[k].delegate_fail;
        w->dcrash[k] = dd != NULL && dd->has_crash ? dd->crash : c->parts[k].delegate_crash;
    }
    int recorded = w->cell->replay != NULL;
    double cpu = d->speed_cpu > 0 ? d->speed_cpu : 1.0; /* 0: a device built unloaded */
    double gpu_speed = d->speed_gpu > 0 ? d->speed_gpu : 1.0;
    w->speed_cpu = recorded ? 1.0 : cpu;
    w->speed_gpu_of_delegate = recorded ? 1.0 : gpu ? gpu_speed : cpu;
    w->scaled = w->speed_cpu != 1.0 || w->speed_gpu_of_delegate != 1.0;
    w->deny_bg_delegate = d->background_gpu_deny && gpu;
}

/* Part k's generation in force: the policy's axes over its block, and
 * what of its file is hot. */
static void gen_config(world *w, unsigned k)
{
    w_part_id *id = &w->store.part[k];
    const mdl_part *def = id->def;
    id->file_hot = def->file_hot;
    id->hot_bytes = def->hot_bytes;
    id->gen = NULL;
    if (!def->has_generation)
        return;
    id->gen = &w->gen_in_force[k];
    mdl_generation_in_force(def, w->pol, w->dev->os == MDL_OS_IOS, id->gen);
    id->file_hot = id->gen->mapped > 0 && !id->gen->locked;
    id->hot_bytes = id->gen->mapped;
}

/* Makes c the process's candidate (at setup, or at a relaunch that
 * switches to the last known good): its parts, the parts each requests
 * step needs, the start-up list.  Only while no process runs. */
void w__configure_candidate(world *w, const mdl_candidate *c)
{
    const mdl_policy *pol = w->pol;
    w->cand = c;
    map_needs(w, c);
    w->nparts = c->nparts;
    w->gen = 0;
    for (unsigned k = 0; k < c->nparts; k++)
        w->gen |= c->parts[k].has_generation;
    for (unsigned k = 0; k < c->nparts; k++) {
        w->store.part[k].def = &c->parts[k];
        w->proc.parts[k].wait_head = w->proc.parts[k].wait_tail = NIL;
        gen_config(w, k);
    }
    configure_delegate(w, c);
    if (w->hold != NULL)
        w->hold->config(w, c);
    w->nstartup = 0;
    if (pol->residency == MDL_RES_PRELOAD) {
        w->res_cap = c->nparts;
        for (unsigned k = 0; k < c->nparts; k++)
            w->startup[w->nstartup++] = (uint8_t)k;
    } else {
        w->res_cap = pol->residency == MDL_RES_LRU ? pol->lru_k : 1;
        for (unsigned k = 0; k < pol->nprewarm; k++) {
            int x = part_index(c, pol->prewarm[k]);
            if (x >= 0)
                w->startup[w->nstartup++] = (uint8_t)x;
        }
    }
}

