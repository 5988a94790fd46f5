/* genrun.c - a generating part's requests as the world runs them
 * (docs/model.md "Token generation"): the context opened, an execution on
 * a KV region, the KV that generate.c computes charged and checked like any
 * allocation at the lines it computes (events stay per request: its end,
 * and a line only when the KV would cross one before it), the part's
 * waiters served, the context closed. */
#include <math.h>

#include "world_int.h"

static void note_kv(world *w, int64_t delta)
{
    w->proc.kv_held += delta;
    if (w->proc.kv_held > w->out->kv_peak)
        w->out->kv_peak = w->proc.kv_held;
}

/* The timeline's `kv` note: the KV caches held now (once charged). */
static void emit_kv(world *w, unsigned k)
{
    static const int key = TRC_PG_KV;
    w__emit_gen(w, k, "kv", 1, &key, &w->proc.kv_held);
}

void w__gen_loaded(world *w, part_rt *p)
{
    unsigned k = (unsigned)(p - w->proc.parts);
    const mdl_generation *g = w->store.part[k].gen;
    static const int keys[3] = {TRC_PG_WEIGHTS_MAPPED, TRC_PG_WEIGHTS_REPACKED,
                                TRC_PG_WEIGHTS_GPU};
    const int64_t v[3] = {g->mapped, g->repacked, g->gpu};
    w__emit_gen(w, k, "weights", 3, keys, v);
}

/* ------------------------------------------------------------ the lines */

static void gen_line(sim_engine *e, void *ctx, uint64_t arg);

/* Region s of part k grows: its next line is where its KV has grown by the
 * room the rule in force leaves, shared by the regions growing. */
static void plan_line(world *w, unsigned k, unsigned si, int64_t hard, int64_t soft)
{
    part_rt *p = &w->proc.parts[k];
    w_gen_slot *s = &GEN_SLOTS(w, p)[si];
    if (s->has_line) {
        sim_cancel(w->e, s->line);
        s->has_line = 0;
    }
    if (!s->growing || w->ending)
        return;
    sim_time t = gen_line_at(s, w->store.part[k].gen, w->proc.gen_growing, hard, soft, now(w));
    if (t == INT64_MAX)
        return;
    if (w__at(w, t, PRIO_TIMER, gen_line, tag(w, k * MDL_GEN_SLOTS_MAX + si), &s->line) ==
        SIM_OK)
        s->has_line = 1;
}

/* The share of a part's KV a rule counting the categories of mask counts. */
static double kv_counted_share(const mdl_generation *g, unsigned mask)
{
    double gpu = g->kv_layers > 0 ? (double)g->kv_gpu_layers / g->kv_layers : 0;
    return ((mask & MDL_CAT_BIT(MDL_CAT_GPU)) ? gpu : 0) +
           ((mask & MDL_CAT_BIT(MDL_CAT_NATIVE)) ? 1 - gpu : 0);
}

void w__gen_replan(world *w)
{
    if (w->proc.gen_growing == 0 || !w->proc.alive)
        return;
    int64_t soft, hard = w__growth_room(w, &soft);
    for (unsigned k = 0; k < w->nparts; k++) {
        part_rt *p = &w->proc.parts[k];
        if (!p->ctx_open)
            continue;
        /* memory the rule does not count moves no line of the plain rule;
         * where it counts a share of the KV (its native or its gpu layers),
         * the KV reaches the room when that share does */
        const mdl_generation *g = w->store.part[k].gen;
        double share = kv_counted_share(g, w->dev->counts_mask);
        int64_t h = hard, sf = soft;
        if (w->pg.on)
            share = 1.0;
        if (share <= 0) {
            h = sf = INT64_MAX;
        } else if (share < 1) {
            h = h == INT64_MAX ? h : (int64_t)((double)h / share);
            sf = sf == INT64_MAX ? sf : (int64_t)((double)sf / share);
        }
        for (unsigned si = 0; si < g->slots; si++)
            if (GEN_SLOTS(w, p)[si].growing)
                plan_line(w, k, si, h, sf);
    }
}

/* Region s's KV written up to now, split into its categories in add (no
 * check: the caller checks).  The bytes added. */
static int64_t sync_slot(world *w, unsigned k, w_gen_slot *s, int64_t add[MDL_CAT_COUNT])
{
    const mdl_generation *g = w->store.part[k].gen;
    int64_t want = gen_kv_at(s, now(w), g->kv_per_token);
    if (want <= s->charged)
        return 0;
    gen_kv_split(g, s->charged, want, add);
    int64_t n = want - s->charged;
    s->charged = want;
    note_kv(w, n);
    return n;
}

/* Region s's KV written up to now, into the ledger unchecked.  The bytes
 * added. */
static int64_t sync_alloc(world *w, unsigned k, w_gen_slot *s)
{
    int64_t add[MDL_CAT_COUNT] = {0};
    int64_t n = sync_slot(w, k, s, add);
    for (int c = 0; c < MDL_CAT_COUNT && n > 0; c++)
        if (add[c] > 0 && mdl_ledger_alloc(w->led, w->store.part[k].sess_owner, (mdl_category)c,
                                           add[c], MDL_STAGE_INFERENCE, now(w), w->err) != SIM_OK)
            w__fail(w, SIM_EINTERNAL);
    return n;
}

void w__gen_sync(world *w)
{
    for (unsigned k = 0; k < w->nparts && w->proc.gen_growing > 0; k++) {
        part_rt *p = &w->proc.parts[k];
        if (!p->ctx_open)
            continue;
        for (unsigned si = 0; si < w->store.part[k].gen->slots; si++)
            if (GEN_SLOTS(w, p)[si].growing)
                (void)sync_alloc(w, k, &GEN_SLOTS(w, p)[si]);
    }
}

/* Region s's KV written up to now, charged and checked like any
 * allocation. */
static w_fate settle(world *w, unsigned k, w_gen_slot *s)
{
    int64_t add[MDL_CAT_COUNT] = {0};
    int64_t n = sync_slot(w, k, s, add);
    uint32_t epoch = w->epoch;
    if (w__charge(w, w->store.part[k].sess_owner, add, MDL_STAGE_INFERENCE) != W_LIVES)
        return W_GONE;
    if (still(w, epoch) && n == 0)
        w__gen_replan(w); /* nothing charged, so no check replanned */
    else if (still(w, epoch))
        emit_kv(w, k);
    return still(w, epoch) ? W_LIVES : W_GONE;
}

/* The KV of region s reaches its line: charged, and checked. */
static void gen_line(sim_engine *e, void *ctx, uint64_t arg)
{
    (void)e;
    world *w = ctx;
    if (!current(w, arg))
        return;
    unsigned k = (unsigned)(uint32_t)arg / MDL_GEN_SLOTS_MAX;
    unsigned si = (unsigned)(uint32_t)arg % MDL_GEN_SLOTS_MAX;
    w_gen_slot *s = &w->gslots[(size_t)k * MDL_GEN_SLOTS_MAX + si];
    s->has_line = 0;
    w->out->kv_lines++;
    (void)settle(w, k, s);
}

w_fate w__gen_settle(world *w, uint32_t i, part_rt *p)
{
    unsigned k = (unsigned)(p - w->proc.parts);
    w_gen_slot *s = &GEN_SLOTS(w, p)[w->store.pool[i].gslot];
    return s->growing ? settle(w, k, s) : W_LIVES;
}

/* ------------------------------------------------------------ requests */

/* The context is made: the compute buffer, a reserved KV, the part's own
 * session state. */
static void open_context(world *w, part_rt *p, int64_t ctx[MDL_CAT_COUNT])
{
    unsigned k = (unsigned)(p - w->proc.parts);
    const mdl_generation *g = w->store.part[k].gen;
    w->src->session(w, k, ctx);
    ctx[g->compute_gpu ? MDL_CAT_GPU : MDL_CAT_NATIVE] += g->compute;
    p->ctx_kv = g->kv == MDL_KV_RESERVED ? (int64_t)g->context * g->kv_per_token : 0;
    gen_kv_split(g, 0, p->ctx_kv, ctx);
    memset(GEN_SLOTS(w, p), 0, MDL_GEN_SLOTS_MAX * sizeof(w_gen_slot));
    p->ctx_open = 1;
    note_kv(w, p->ctx_kv);
}

void w__gen_execute(world *w, uint32_t i, part_rt *p, sim_time refault)
{
    req *r = &w->store.pool[i];
    const user *x = &w->store.users[r->user];
    const uint32_t *dr = x->d.gen[r->idx];
    unsigned k = (unsigned)(p - w->proc.parts);
    const w_part_id *id = &w->store.part[k];
    const mdl_generation *g = id->gen;
    int64_t ctx[MDL_CAT_COUNT] = {0};
    int opened = !p->ctx_open;
    if (opened)
        open_context(w, p, ctx);
    unsigned si = 0;
    w_gen_slot *regions = GEN_SLOTS(w, p);
    while (regions[si].running)
        si++; /* a free region: the caller keeps busy under slots */
    w_gen_slot *s = &regions[si];
    uint32_t from = g->keep_context ? s->tokens : 0, prompt = dr[G_PROMPT],
             output = dr[G_OUTPUT];
    w->out->gen_started++;
    if (gen_fit(g, g->context / g->slots, &from, &prompt, &output)) {
        w->out->context_overflow++;
        if (g->on_full == MDL_FULL_FAIL) { /* the runtime refuses the request */
            if (!r->orphan)
                w->out->failed++;
            w__emit_request_note(w, "context_full", r->user);
            uint32_t epoch = w->epoch;
            if (opened && w__charge(w, id->sess_owner, ctx, MDL_STAGE_INFERENCE) != W_LIVES)
                return;
            if (still(w, epoch))
                w__finish(w, i, 1);
            return;
        }
    }
    w__heat(w, 1);
    sim_time tp = EXEC_TIME(w, p, gen_prefill_us(g, from, prompt, dr[G_PREFILL]));
    sim_time td0 = EXEC_TIME(w, p, gen_decode_us(g, from + prompt, output, dr[G_DECODE]));
    p->last_use = ++w->lru_clock;
    p->busy++;
    if (r->start < 0)
        r->start = now(w);
    r->gslot = (uint8_t)si;
    w->exec_extra = tp + td0 + refault; /* the whole execution, for the timeline */
    w__emit_inference_begin(w, p, r, opened ? ctx : NULL);
    s->running = 1;
    s->attempt = i;
    s->start = now(w);
    s->from = from;
    s->prompt = prompt;
    s->output = output;
    s->shape = g->decode_ctx > 0 && dr[G_DECODE] > 0 ? g->decode_ctx / 1000.0 / dr[G_DECODE] : 0;
    s->tp = tp;
    s->td = td0 + refault; /* each decoded token reads every weight: the refault is decode's */
    s->least = gen_least(s, g, from + prompt + output); /* the request's growth / 16 */
    const mdl_owner owners[2] = {id->sess_owner, r->owner};
    const int64_t *amounts[2] = {ctx, x->d.ws[r->idx]};
    if (w__charge_n(w, 2, owners, amounts, MDL_STAGE_INFERENCE) != W_LIVES)
        return;
    if (opened && p->ctx_kv > 0)
        emit_kv(w, k);
    s->td += pg_take_stall(&w->pg);
    if (w->pg.on)
        pg_inference(&w->pg, tp + td0, tp + s->td);
    if (g->kv == MDL_KV_TOUCHED && from + prompt + output > s->high) {
        s->growing = 1;
        w->proc.gen_growing++;
        /* a prefill of no time writes its prompt at once: charged and checked now */
        if (gen_kv_at(s, now(w), g->kv_per_token) > s->charged) {
            if (settle(w, k, s) != W_LIVES)
                return;
        } else {
            w__gen_replan(w);
        }
    }
    if (w__at(w, now(w) + tp + s->td, PRIO_RELEASE, w__exec_end, tag(w, i), &r->exec) == SIM_OK)
        r->has_exec = 1;
}

void w__gen_stop(world *w, uint32_t i, part_rt *p)
{
    req *r = &w->store.pool[i];
    unsigned k = (unsigned)(p - w->proc.parts);
    const w_part_id *id = &w->store.part[k];
    w_gen_slot *s = &GEN_SLOTS(w, p)[r->gslot];
    if (s->growing) {
        if (sync_alloc(w, k, s) > 0)
            emit_kv(w, k);
        s->growing = 0;
        w->proc.gen_growing--;
    }
    if (s->has_line) {
        sim_cancel(w->e, s->line);
        s->has_line = 0;
    }
    uint32_t written = (uint32_t)floor(gen_tokens_at(s, now(w)) + 1e-9);
    if (written > s->high)
        s->high = written;
    s->tokens = id->gen->keep_context ? written : 0;
    s->running = 0;
    if (now(w) >= s->start + s->tp + s->td)
        gen_record(w->out, s, w->store.users[r->user].first, w->times);
}

void w__gen_wake(world *w, part_rt *p)
{
    if (!w->store.part[p - w->proc.parts].def->has_generation)
        return;
    /* a part going under release_first keeps its waiters for its reload */
    if (p->release_pending && w->pol->residency == MDL_RES_RELEASE_FIRST)
        return;
    uint32_t waiting = 0;
    for (uint32_t i = p->wait_head; i != NIL && waiting < w->store.pool_cap;
         i = w->store.pool[i].next)
        waiting++;
    /* each waiter once at most: one put back on the list waits on */
    uint32_t epoch = w->epoch;
    while (waiting-- > 0 && still(w, epoch) && p->state == P_READY && p->wait_head != NIL &&
           !w__part_full(w, p)) {
        uint32_t i = w__pop_waiter(w, p);
        w->store.pool[i].state = R_RUNNING;
        w__advance(w, i);
    }
}

void w__gen_at_death(world *w)
{
    if (!TRACING(w) || w->proc.kv_held <= 0)
        return;
    /* the KV written up to the death: charged before the check that killed */
    for (unsigned k = 0; k < w->nparts; k++)
        if (w->proc.parts[k].ctx_open) {
            emit_kv(w, k);
            return;
        }
}

void w__gen_close(world *w, part_rt *p)
{
    if (!p->ctx_open)
        return;
    unsigned k = (unsigned)(p - w->proc.parts);
    int64_t held = p->ctx_kv;
    w_gen_slot *regions = GEN_SLOTS(w, p);
    for (unsigned si = 0; si < MDL_GEN_SLOTS_MAX; si++) {
        held += regions[si].charged;
        if (regions[si].has_line)
            sim_cancel(w->e, regions[si].line);
        if (regions[si].growing)
            w->proc.gen_growing--;
    }
    w->proc.kv_held -= held;
    memset(regions, 0, MDL_GEN_SLOTS_MAX * sizeof *regions);
    p->ctx_kv = 0;
    p->ctx_open = 0;
    if (held > 0 && !w->ending)
        emit_kv(w, k);
}

