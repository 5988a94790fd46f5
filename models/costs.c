/* costs.c - where the costs of stages come from, chosen once at setup:
 * drawn from the candidate's distributions (a synthetic run), or taken
 * from a recorded session (a trace-driven run, `oomsim replay`).  A
 * recorded list is consumed in order and from its start again when a
 * policy needs more occurrences than were recorded; what the recording
 * lacks (a part it never loaded) is drawn, from the same streams. */
#include "world_int.h"

static const mdl_phase *phase_def(const mdl_part *def, int ph)
{
    return ph == PH_LOAD ? &def->load : ph == PH_DELEGATE ? &def->delegate_prepare
                                                          : &def->prepare;
}

/* What a load leaves resident besides its drawn amounts: the file (mapped
 * pages, or copied into native memory), and for a generation part its
 * weights by kind: locked mapped pages count as the app's own, repacked
 * weights are native, uploaded ones gpu (docs/model.md "Token generation"). */
static void load_resident(const w_part_id *id, int64_t res[MDL_CAT_COUNT])
{
    const mdl_part *def = id->def;
    if (def->has_generation && id->gen->no_mmap) {
        /* --no-mmap: the file read into the repacked copy, nothing mapped */
        res[MDL_CAT_NATIVE] += id->gen->repacked;
        res[MDL_CAT_GPU] += id->gen->gpu;
        return;
    }
    if (!def->has_generation) {
        res[def->load_mode == MDL_LOAD_MMAP ? MDL_CAT_FILE : MDL_CAT_NATIVE] += def->file;
        return;
    }
    const mdl_generation *g = id->gen;
    if (def->load_mode == MDL_LOAD_MMAP) {
        res[MDL_CAT_FILE] += mdl_generation_file_pages(def, g);
        res[MDL_CAT_NATIVE] += g->locked ? g->mapped : 0;
    } else { /* the copy holds what the CPU keeps: the GPU's layers were uploaded */
        res[MDL_CAT_NATIVE] += def->file > g->cpu_off ? def->file - g->cpu_off : 0;
    }
    res[MDL_CAT_NATIVE] += g->repacked;
    res[MDL_CAT_GPU] += g->gpu;
}

static void drawn_stage(world *w, unsigned idx, int ph, w_stage_cost *c)
{
    const part_rt *p = &w->proc.parts[idx];
    const mdl_part *def = part_id(w, p)->def;
    const mdl_phase *f = phase_def(def, ph);
    gsl_rng *r = sim_stream_rng(&w->s_stage);
    memset(c, 0, sizeof *c);
    c->time = mdl_dist_sample(&f->time, r);
    c->time = scale_time(c->time, ph == PH_DELEGATE ? w->speed_gpu_of_delegate : w->speed_cpu);
    sample_amounts(&f->transient, r, c->transient);
    sample_amounts(&f->resident, r, c->resident);
    if (ph == PH_LOAD)
        load_resident(&w->store.part[idx], c->resident);
    c->cache_miss = ph == PH_PREPARE && w->cand->has_cache && !w->proc.cache_valid &&
                    !p->cache_done;
    if (c->cache_miss) {
        c->time += scale_time(w->cand->cache_miss_time, w->speed_cpu);
        sample_amounts(&w->cand->cache_miss_transient, r, c->miss);
    }
}

static int drawn_outcome(world *w, unsigned idx)
{
    /* one draw per delegate_prepare whatever the probabilities (CRN); the
     * device's figures for its delegate, when it gives them */
    double u = gsl_rng_uniform(sim_stream_rng(&w->s_fail));
    double crash = w->dcrash[idx], fail = w->dfail[idx];
    return u < crash ? MDL_OUTCOME_CRASH : u < crash + fail ? MDL_OUTCOME_FAIL : MDL_OUTCOME_OK;
}

static void drawn_session(world *w, unsigned idx, int64_t out[MDL_CAT_COUNT])
{
    sample_amounts(&w->store.part[idx].def->session, sim_stream_rng(&w->s_stage), out);
}

static sim_time drawn_relaunch(world *w)
{
    return mdl_dist_sample(&w->wl->relaunch, sim_stream_rng(&w->s_relaunch));
}

static sim_time drawn_restart(world *w)
{
    return mdl_dist_sample(&w->wl->proc.restart, sim_stream_rng(&w->s_relaunch));
}

const w_costs w__costs_drawn = {drawn_stage, drawn_outcome, drawn_session, drawn_relaunch,
                                drawn_restart};

static void recorded_stage(world *w, unsigned idx, int ph, w_stage_cost *c)
{
    static const int kind_of[] = {MDL_REPLAY_LOAD, MDL_REPLAY_PREPARE, MDL_REPLAY_DELEGATE,
                                  MDL_REPLAY_PREPARE};
    const mdl_replay *rp = w->cell->replay;
    int kind = kind_of[ph];
    uint32_t n = rp->nstages[idx][kind];
    if (n == 0) {
        drawn_stage(w, idx, ph, c);
        return;
    }
    /* the recorded occurrence, the file included */
    const mdl_replay_stage *x = &rp->stages[idx][kind][w->cur.stage[idx][kind]++ % n];
    memset(c, 0, sizeof *c);
    c->time = x->time;
    memcpy(c->resident, x->resident, sizeof c->resident);
    memcpy(c->transient, x->transient, sizeof c->transient);
    c->cache_miss = ph == PH_PREPARE && x->cache_miss;
    if (c->cache_miss)
        memcpy(c->miss, x->miss_transient, sizeof c->miss);
}

static int recorded_outcome(world *w, unsigned idx)
{
    const mdl_replay *rp = w->cell->replay;
    if (rp->noutcome[idx] == 0)
        return drawn_outcome(w, idx);
    return rp->outcome[idx][w->cur.outcome[idx]++ % rp->noutcome[idx]];
}

static void recorded_session(world *w, unsigned idx, int64_t out[MDL_CAT_COUNT])
{
    const mdl_replay *rp = w->cell->replay;
    if (rp->nsession[idx] == 0) {
        drawn_session(w, idx, out);
        return;
    }
    memcpy(out, rp->session[idx][w->cur.session[idx]++ % rp->nsession[idx]],
           sizeof(int64_t) * MDL_CAT_COUNT);
}

static sim_time recorded_relaunch(world *w)
{
    const mdl_replay *rp = w->cell->replay;
    if (rp->nrelaunch == 0)
        return drawn_relaunch(w);
    return rp->relaunch[w->cur.relaunch++ % rp->nrelaunch];
}

static sim_time recorded_restart(world *w)
{
    const mdl_replay *rp = w->cell->replay;
    if (rp->nrestart == 0)
        return drawn_restart(w);
    return rp->restart[w->cur.restart++ % rp->nrestart];
}

const w_costs w__costs_recorded = {recorded_stage, recorded_outcome, recorded_session,
                                   recorded_relaunch, recorded_restart};
