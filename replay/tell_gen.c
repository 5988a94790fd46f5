/* tell_gen.c - what the teller says of an LLM part (docs/on-call.md "An
 * LLM's death, told"): its context's creation at the first request (the
 * compute buffer and the KV cache, with their sizes, from the part's
 * generation as the cell's policy holds it), the weights by kind at the
 * load, and at a death the counted memory split into the model's weights,
 * its KV cache, its compute buffer and the rest, with the one state the
 * app was in (in front or behind, answering or idle).  The trace's `kv`
 * and `weights` notes are followed, not printed. */
#include "tell_int.h"

#include <stdio.h>
#include <string.h>

/* The cell's generation part named `part`, as the policy holds it: its
 * index and *g, or -1 when the part does not generate. */
static int gen_of(const rpl_teller *t, const char *part, mdl_generation *g)
{
    const mdl_candidate *c = t->cell->candidate;
    for (unsigned k = 0; k < c->nparts && k < MDL_PARTS_MAX; k++)
        if (c->parts[k].has_generation && strcmp(c->parts[k].name, part) == 0) {
            mdl_generation_in_force(&c->parts[k], &t->cell->policy,
                                    t->cell->device->os == MDL_OS_IOS, g);
            return (int)k;
        }
    return -1;
}

/* The compute buffers of the contexts made now. */
static int64_t compute_held(const rpl_teller *t)
{
    int64_t s = 0;
    for (unsigned k = 0; k < MDL_PARTS_MAX; k++)
        s += t->gen_compute[k];
    return s;
}

int rpl__tell_gen_note(rpl_teller *t, const trc_event *e)
{
    if (!(e->has & TRC_F_ERROR) || !(e->has & TRC_F_PAGES))
        return 0;
    if (strcmp(e->error, "kv") == 0) {
        t->gen_kv = PG(e, TRC_PG_KV);
        return 1;
    }
    if (strcmp(e->error, "weights") == 0) {
        t->gen_weights[0] = PG(e, TRC_PG_WEIGHTS_MAPPED);
        t->gen_weights[1] = PG(e, TRC_PG_WEIGHTS_REPACKED);
        t->gen_weights[2] = PG(e, TRC_PG_WEIGHTS_GPU);
        return 1;
    }
    return 0;
}

int rpl__tell_gen_context(rpl_teller *t, const trc_event *e, char *line, size_t n)
{
    mdl_generation g;
    int k = (e->has & TRC_F_KEEP) && (e->has & TRC_F_PART) ? gen_of(t, e->part, &g) : -1;
    if (k < 0)
        return 0;
    t->gen_compute[k] = g.compute; /* a context made again (sessions dropped) replaces it */
    t->gen_per_token = g.kv_per_token;
    t->gen_context = g.context;
    t->gen_reserved = g.kv == MDL_KV_RESERVED;
    char kv[160];
    if (g.kv == MDL_KV_RESERVED)
        snprintf(kv, sizeof kv, "the KV cache for all of it, %.1f MiB, written at once "
                 "(kv: reserved)", TELL_MIB((double)g.context * (double)g.kv_per_token));
    else
        snprintf(kv, sizeof kv, "the KV cache, %.1f KiB a token as tokens are written "
                 "(kv: touched)", (double)g.kv_per_token / 1024.0);
    char gpu[160] = "";
    if (g.layers.count > 0 && g.compute_gpu)
        snprintf(gpu, sizeof gpu, "; with %u of %u layers on the GPU (gpu_layers), the compute "
                 "buffer and %u of %u layers' KV are the GPU's memory", g.layers.offloaded,
                 g.layers.count + 1, g.kv_gpu_layers, g.kv_layers);
    snprintf(line, n, "%s: the context is made at its first request, for %u tokens%s: the "
             "compute buffer, %.1f MiB%s, and %s%s", e->part, g.context,
             g.slots > 1 ? " shared by its slots" : "", TELL_MIB(g.compute),
             g.graph.heads == 0 ? "" : g.flash_attn == MDL_FA_OFF ? " (flash attention off)"
                                                                   : " (flash attention on)",
             kv, gpu);
    return 1;
}

void rpl__tell_gen_release(rpl_teller *t, const trc_event *e)
{
    mdl_generation g;
    int k = (e->has & TRC_F_PART) ? gen_of(t, e->part, &g) : -1;
    if (k >= 0) /* its KV: the kv note that follows its release says what is left */
        t->gen_compute[k] = 0;
}

int rpl__tell_gen_death(rpl_teller *t, const trc_event *e, int answering,
                        char lines[2][TELL_LINE_MAX])
{
    int64_t w = t->gen_weights[1] + t->gen_weights[2];
    int64_t compute = compute_held(t);
    if (w == 0 && t->gen_kv == 0 && compute == 0)
        return 0; /* no LLM part held anything */
    /* the counted bytes by category when the event has them (rss_mb is
     * rounded down to the MiB) */
    double counted = (double)e->rss_mb;
    if (e->mem_has != 0) {
        int64_t b = 0;
        for (int k = 0; k < TRC_MEM_COUNT; k++)
            if ((e->mem_has >> k & 1u) && (t->cell->device->counts_mask & MDL_CAT_BIT(k)))
                b += e->mem[k];
        counted = TELL_MIB(b);
    }
    double rest = counted - TELL_MIB(w) - TELL_MIB(t->gen_kv) - TELL_MIB(compute);
    snprintf(lines[0], TELL_LINE_MAX,
             "  at the death, the counted %.1f MiB: weights %.1f MiB (repacked %.1f, on "
             "the accelerator %.1f), KV cache %.1f MiB, compute buffer %.1f MiB, the rest %.1f "
             "MiB (the app's own, sessions, working sets); %.1f MiB of weights mapped besides, "
             "not counted", counted, TELL_MIB(w), TELL_MIB(t->gen_weights[1]),
             TELL_MIB(t->gen_weights[2]), TELL_MIB(t->gen_kv), TELL_MIB(compute),
             rest > 0 ? rest : 0, TELL_MIB(t->gen_weights[0]));
    char held[96] = "";
    if (t->gen_kv > 0 && t->gen_per_token > 0 && !t->gen_reserved)
        snprintf(held, sizeof held, "%lld tokens", (long long)(t->gen_kv / t->gen_per_token));
    else if (t->gen_kv > 0)
        snprintf(held, sizeof held, "a context made for %u tokens", t->gen_context);
    /* one state: in front, behind and running, or suspended (iOS's idle
     * band: nothing of it runs, an answer begun is left unfinished) */
    snprintf(lines[1], TELL_LINE_MAX, "  the app %s, %s%s%s%s",
             t->suspended ? "suspended in the background (the idle band)"
             : t->bg      ? "in the background"
                          : "in front",
             !answering     ? "no answer decoding"
             : t->suspended ? "an answer begun before and left unfinished"
                            : "an answer still decoding",
             held[0] ? ": its KV cache held " : "", held,
             held[0] ? answering ? ", the conversation lost with the process, and the answer's "
                                   "tokens not yet shown"
                                 : ", the conversation lost with the process"
                     : "");
    t->gen_kv = 0;
    t->suspended = 0;
    memset(t->gen_compute, 0, sizeof t->gen_compute);
    memset(t->gen_weights, 0, sizeof t->gen_weights);
    return 2;
}
