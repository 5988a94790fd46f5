/* parts.c - the candidate's parts in the process: loading them phase by
 * phase (load, runtime_prepare with its cache rebuild, delegate_prepare
 * and its fallback), the residency policy (preload, on-demand overlap or
 * release-first, LRU), releasing them, and the ANR timer of a main-thread
 * phase.  Any call here may kill the process (world_int.h). */
#include "world_int.h"

static void start_phase(world *w, part_rt *p, int ph);

static unsigned part_index_of(const world *w, const part_rt *p)
{
    return (unsigned)(p - w->proc.parts);
}

/* Parts that hold memory or are loading for real: ready ones, going or
 * not, and loads not deferred (the release_first room count). */
static unsigned physical_count(const world *w)
{
    unsigned n = 0;
    for (unsigned k = 0; k < w->nparts; k++) {
        const part_rt *p = &w->proc.parts[k];
        n += p->state == P_READY || (p->state == P_LOADING && !p->deferred);
    }
    return n;
}

static unsigned resident_count(const world *w)
{
    unsigned n = 0;
    for (unsigned k = 0; k < w->nparts; k++) {
        const part_rt *p = &w->proc.parts[k];
        n += p->state == P_READY && !p->release_pending;
    }
    return n;
}

static int any_deferred(const world *w)
{
    for (unsigned k = 0; k < w->nparts; k++)
        if (w->proc.parts[k].deferred)
            return 1;
    return 0;
}

/* The least recently used resident part other than keep, or NULL. */
static part_rt *lru_victim(world *w, const part_rt *keep)
{
    part_rt *v = NULL;
    for (unsigned k = 0; k < w->nparts; k++) {
        part_rt *p = &w->proc.parts[k];
        if (p != keep && p->state == P_READY && !p->release_pending &&
            (v == NULL || p->last_use < v->last_use))
            v = p;
    }
    return v;
}

/* Releases v now, or once its executions end. */
static void evict(world *w, part_rt *v)
{
    if (v->busy > 0)
        v->release_pending = 1;
    else
        w__release_part(w, v);
}

static void start_load(world *w, part_rt *p, int on_demand)
{
    if (on_demand) {
        p->on_demand = 1;
        w->proc.switching++;
        w->out->switches++;
    }
    start_phase(w, p, PH_LOAD);
}

/* release_first: deferred loads start, in part order, as room appears. */
static void start_deferred(world *w)
{
    uint32_t epoch = w->epoch;
    for (unsigned k = 0; k < w->nparts && !w->ending; k++) {
        part_rt *p = &w->proc.parts[k];
        if (!p->deferred || physical_count(w) >= w->res_cap)
            continue;
        int on_demand = p->deferred == 2;
        p->deferred = 0;
        start_load(w, p, on_demand);
        if (!still(w, epoch))
            return;
    }
}

void w__drop_sessions(world *w, part_rt *p)
{
    if (w->hold != NULL)
        w->hold->part_gone(w, p, "sessions dropped");
    p->sess_idle = 0;
    w__give_owner(w, part_id(w, p)->sess_owner);
    if (W_GEN(w, p))
        w__gen_close(w, p);
}

/* The part's mapped weights are no longer read at every inference. */
static void drop_hot(world *w, part_rt *p)
{
    if (p->hot) {
        w->proc.hot -= part_id(w, p)->hot_bytes;
        p->hot = 0;
    }
}

void w__release_part(world *w, part_rt *p)
{
    if (w->hold != NULL)
        w->hold->part_gone(w, p, "part released");
    w__emit_release(w, part_index_of(w, p));
    w__give(w, part_id(w, p)->owner, p->resident);
    memset(p->delegate_res, 0, sizeof p->delegate_res);
    mdl_ledger_free_owner(w->led, part_id(w, p)->sess_owner, NULL);
    if (W_GEN(w, p))
        w__gen_close(w, p);
    memset(p->prepare_res, 0, sizeof p->prepare_res);
    p->sess_idle = 0;
    p->state = P_UNLOADED;
    p->on_delegate = 0;
    drop_hot(w, p);
    p->release_pending = 0;
    w__warning_after_free(w);
    if (w->pol->residency == MDL_RES_RELEASE_FIRST && !w->ending) {
        uint32_t epoch = w->epoch;
        start_deferred(w);
        /* requests that came for it while it was going: it loads again */
        if (p->wait_head != NIL && still(w, epoch) && w__begin_load(w, p, 1) != W_LIVES)
            return; /* the load killed the process */
    } else if (p->wait_head != NIL && !w->ending) {
        /* requests waiting for a generation part's KV region when it went
         * (evicted while busy, or released when idle): it loads again */
        if (w__begin_load(w, p, 1) != W_LIVES)
            return; /* the load killed the process */
    }
}

/* Loads part p: at start-up, or on demand (a switch: its peak is reported). */
w_fate w__begin_load(world *w, part_rt *p, int on_demand)
{
    uint32_t epoch = w->epoch;
    p->state = P_LOADING;
    if (w->pol->residency == MDL_RES_RELEASE_FIRST) {
        /* release first, then load: a part still executing goes when its
         * executions end, and the load waits for that (a longer latency,
         * never two parts' memory at once) */
        part_rt *v;
        p->deferred = on_demand ? 2 : 1; /* not counted while room is made */
        while (physical_count(w) >= w->res_cap && (v = lru_victim(w, p)) != NULL)
            evict(w, v);
        if (!still(w, epoch))
            return W_GONE; /* a deferred load started by the release killed it */
        if (physical_count(w) >= w->res_cap)
            return W_LIVES; /* stays deferred until a release makes room */
        p->deferred = 0;
    }
    start_load(w, p, on_demand);
    return still(w, epoch) ? W_LIVES : W_GONE;
}

static void anr_timer(sim_engine *e, void *ctx, uint64_t arg);

/* ActiveServices' SERVICE_TIMEOUT: a service in a process of its own
 * executing a callback */
#define SVC_TIMEOUT_US (20 * SIM_US_PER_S)
static void phase_end(sim_engine *e, void *ctx, uint64_t arg);

static mdl_stage stage_of(int ph)
{
    return ph == PH_LOAD ? MDL_STAGE_LOAD : ph == PH_DELEGATE ? MDL_STAGE_DELEGATE_PREPARE
                                                              : MDL_STAGE_RUNTIME_PREPARE;
}

/* A phase starts: its resident and transient are one allocation (the
 * file, then its decompression buffer); a cache rebuild on a miss belongs
 * to stage `cache` and comes after.  The timeline's begin comes first. */
static void start_phase(world *w, part_rt *p, int ph)
{
    unsigned idx = part_index_of(w, p);
    mdl_stage stage = stage_of(ph);
    w_stage_cost c;
    w->src->stage(w, idx, ph, &c);
    p->phase = (uint8_t)ph;
    p->phase_stage = stage;
    p->serial++;
    w__emit_stage_begin(w, idx, stage, &c);
    int64_t all[MDL_CAT_COUNT];
    memcpy(all, c.resident, sizeof all);
    add_to(all, c.transient);
    if (w__charge(w, part_id(w, p)->owner, all, stage) != W_LIVES)
        return;
    add_to(p->resident, c.resident);
    if (ph == PH_DELEGATE)
        memcpy(p->delegate_res, c.resident, sizeof c.resident);
    if (ph == PH_PREPARE)
        memcpy(p->prepare_res, c.resident, sizeof c.resident);
    memcpy(p->transient, c.transient, sizeof c.transient);
    if (c.cache_miss) {
        w__emit_cache_begin(w, idx, c.miss);
        if (w__charge(w, w->cache_owner, c.miss, MDL_STAGE_CACHE) != W_LIVES)
            return;
        memcpy(p->cache_tr, c.miss, sizeof c.miss);
    }
    const mdl_device *dev = w->dev;
    const mdl_part *def = part_id(w, p)->def;
    const mdl_phase *f = ph == PH_LOAD ? &def->load : ph == PH_DELEGATE ? &def->delegate_prepare
                                                                        : &def->prepare;
    /* main-thread work: the input dispatch timeout of the app's window, or
     * in a service process of its own, which has no window, ActiveServices'
     * timeout of a service executing a callback: SERVICE_TIMEOUT (20 s)
     * when its client is in front, SERVICE_BACKGROUND_TIMEOUT (200 s) else */
    sim_time anr = !w->svc || dev->anr_timeout <= 0 ? dev->anr_timeout
                   : w->proc.fg                      ? SVC_TIMEOUT_US
                                                     : 10 * SVC_TIMEOUT_US;
    if (f->main_thread && dev->os == MDL_OS_ANDROID && anr > 0 && c.time > anr) {
        uint32_t arg = idx | ((p->serial & 0xffffffu) << 8);
        if (w__at(w, now(w) + anr, PRIO_TIMER, anr_timer, tag(w, arg), NULL) != SIM_OK)
            return;
    }
    (void)w__at(w, now(w) + c.time, PRIO_RELEASE, phase_end, tag(w, idx), NULL);
}

static void load_over(world *w, part_rt *p)
{
    if (p->on_demand) {
        p->on_demand = 0;
        w->proc.switching--;
    }
}

/* Pops the first attempt waiting for p. */
uint32_t w__pop_waiter(world *w, part_rt *p)
{
    uint32_t i = p->wait_head;
    p->wait_head = w->store.pool[i].next;
    if (p->wait_head == NIL)
        p->wait_tail = NIL;
    return i;
}

static void part_ready(world *w, part_rt *p)
{
    load_over(w, p);
    p->state = P_READY;
    p->last_use = ++w->lru_clock;
    p->idle_since = now(w); /* unload_after counts from here until its first use */
    uint32_t epoch0 = w->epoch;
    if (w->hold != NULL && w->hold->unwanted(w, p)) { /* for nobody: it goes */
        if (still(w, epoch0))
            w__startup_continue(w);
        return;
    }
    if (w->pol->residency == MDL_RES_OVERLAP || w->pol->residency == MDL_RES_LRU) {
        part_rt *v;
        while (resident_count(w) > w->res_cap && (v = lru_victim(w, p)) != NULL)
            evict(w, v);
    }
    uint32_t epoch = w->epoch;
    if (w->hold != NULL && w->hold->part_ready(w, p) != W_LIVES)
        return; /* an owner's session killed the process */
    while (p->wait_head != NIL && still(w, epoch) && !w__part_full(w, p)) {
        uint32_t i = w__pop_waiter(w, p);
        w->store.pool[i].state = R_RUNNING;
        w__advance(w, i);
    }
    if (still(w, epoch) && w->pol->residency == MDL_RES_RELEASE_FIRST && any_deferred(w)) {
        /* a load waits for room: this part goes once its waiters are served */
        part_rt *v;
        while (physical_count(w) >= w->res_cap && (v = lru_victim(w, NULL)) != NULL &&
               still(w, epoch))
            evict(w, v);
    }
    if (still(w, epoch))
        w__startup_continue(w);
}

/* The delegate failed and there is no fallback, or the prepare read an
 * outdated cache: the part cannot be used in this process; whoever waits
 * for it fails. */
static void part_failed(world *w, part_rt *p)
{
    load_over(w, p);
    if (w->hold != NULL)
        w->hold->part_gone(w, p, "part failed"); /* held_after_leave's clock stops */
    w__give(w, part_id(w, p)->owner, p->resident);
    memset(p->delegate_res, 0, sizeof p->delegate_res);
    drop_hot(w, p);
    p->state = P_FAILED;
    uint32_t epoch = w->epoch;
    while (p->wait_head != NIL && still(w, epoch)) {
        uint32_t i = w__pop_waiter(w, p);
        w->out->failed++;
        w__emit_request_note(w, "part_failed", w->store.pool[i].user);
        w__finish(w, i, 1);
    }
    /* release_first: a failed part holds no room; a load waiting for room starts */
    if (still(w, epoch) && w->pol->residency == MDL_RES_RELEASE_FIRST)
        start_deferred(w);
    if (still(w, epoch))
        w__startup_continue(w);
}

/* Gives back the delegate's resident, which resident includes. */
static void give_delegate_res(world *w, part_rt *p)
{
    for (int c = 0; c < MDL_CAT_COUNT; c++)
        p->resident[c] -= p->delegate_res[c];
    w__give(w, part_id(w, p)->owner, p->delegate_res);
}

static void fall_back(world *w, part_rt *p);

/* The device has no such delegate, or iOS denies it the GPU in the
 * background: delegate_prepare fails at once, with no time and no memory,
 * and the fallback runs.  Its costs and outcome are drawn all the same, so
 * the streams stay aligned with a device where it runs. */
static void delegate_refused(world *w, part_rt *p, const char *why)
{
    unsigned idx = part_index_of(w, p);
    w_stage_cost c;
    w->src->stage(w, idx, PH_DELEGATE, &c);
    (void)w->src->outcome(w, idx);
    memset(&c, 0, sizeof c);
    p->phase = PH_DELEGATE;
    p->phase_stage = MDL_STAGE_DELEGATE_PREPARE;
    w__emit_stage_begin(w, idx, MDL_STAGE_DELEGATE_PREPARE, &c);
    w__emit_stage_end(w, idx, MDL_STAGE_DELEGATE_PREPARE, why);
    w->out->delegate_failures++;
    fall_back(w, p);
}

/* load, runtime_prepare or the fallback ended: the next phase, or ready. */
static void prepare_end(world *w, part_rt *p, int ph)
{
    unsigned idx = part_index_of(w, p);
    w__give(w, part_id(w, p)->owner, p->transient);
    if (ph == PH_FALLBACK) {
        /* the failed delegate's set, held through the fallback */
        w__give(w, part_id(w, p)->owner, p->failed_tr);
        give_delegate_res(w, p);
        if (w->cand->fallback_overlap)
            w__emit_note(w, (int)idx, MDL_STAGE_DELEGATE_PREPARE, "delegate_released");
    }
    w__emit_stage_end(w, idx, p->phase_stage, NULL);
    if (ph == PH_LOAD && W_GEN(w, p))
        w__gen_loaded(w, p);
    if (ph == PH_LOAD) {
        if (part_id(w, p)->file_hot && part_id(w, p)->def->load_mode == MDL_LOAD_MMAP && !p->hot) {
            /* the mapped weights are read at every inference from now on:
             * lmk can no longer drop them without thrashing (a check) */
            p->hot = 1;
            w->proc.hot += part_id(w, p)->hot_bytes;
            if (w->proc.fg && w__kill_check(w, 0, MDL_STAGE_LOAD) != W_LIVES)
                return;
        }
        start_phase(w, p, PH_PREPARE);
    } else if (ph == PH_PREPARE && part_id(w, p)->def->has_delegate_prepare && !w->proc.degraded) {
        if (!w->delegate_available)
            delegate_refused(w, p, "delegate_unavailable");
        else if (w->deny_bg_delegate && !w->proc.fg)
            delegate_refused(w, p, "background_gpu_denied");
        else
            start_phase(w, p, PH_DELEGATE);
    } else {
        uint32_t epoch = w->epoch;
        part_ready(w, p);
        if (ph == PH_FALLBACK && still(w, epoch))
            w__new_condition(w); /* the part now runs on the fallback */
    }
}

/* A re-init that never releases the failed delegate: its transient and
 * resident move to the part's leak owner and stay for the life of the
 * process, whatever the part does next. */
W_MAY_KILL static w_fate leak_delegate(world *w, part_rt *p)
{
    int64_t moved[MDL_CAT_COUNT];
    for (int c = 0; c < MDL_CAT_COUNT; c++) {
        p->resident[c] -= p->delegate_res[c];
        moved[c] = p->delegate_res[c] + p->transient[c];
    }
    memset(p->delegate_res, 0, sizeof p->delegate_res);
    memset(p->transient, 0, sizeof p->transient);
    for (int c = 0; c < MDL_CAT_COUNT; c++)
        if (moved[c] > 0 &&
            mdl_ledger_free(w->led, part_id(w, p)->owner, (mdl_category)c, moved[c], w->err) != SIM_OK) {
            w__fail(w, SIM_EINTERNAL);
            return W_GONE;
        }
    return w__charge(w, part_id(w, p)->leak_owner, moved, MDL_STAGE_DELEGATE_PREPARE);
}

/* delegate_prepare ended: its outcome (one draw whatever the
 * probabilities, or the recorded one) decides ready, crash or fallback. */
static void delegate_end(world *w, part_rt *p)
{
    unsigned idx = part_index_of(w, p);
    int outcome = w->src->outcome(w, idx);
    /* iOS: a GPU prepare still running in the background fails */
    int denied = w->deny_bg_delegate && !w->proc.fg;
    if (outcome == MDL_OUTCOME_CRASH && !denied) {
        w__die(w, MDL_EXIT_NATIVE_CRASH, MDL_STAGE_DELEGATE_PREPARE);
        return;
    }
    if (outcome == MDL_OUTCOME_OK && !denied) {
        w__give(w, part_id(w, p)->owner, p->transient);
        w__emit_stage_end(w, idx, MDL_STAGE_DELEGATE_PREPARE, NULL);
        p->on_delegate = 1;
        part_ready(w, p);
        return;
    }
    /* the delegate failed: its memory is still held here */
    w__emit_stage_end(w, idx, MDL_STAGE_DELEGATE_PREPARE,
                      denied ? "background_gpu_denied" : "delegate_failed");
    w->out->delegate_failures++;
    if (!w->cand->release_on_init_failure && leak_delegate(w, p) != W_LIVES)
        return;
    fall_back(w, p);
}

/* After a failed delegate_prepare: the fallback's prepare, or, with no
 * fallback, the part is unusable in this process. */
static void fall_back(world *w, part_rt *p)
{
    if (strcmp(w->cand->fallback, "none") == 0) {
        w__give(w, part_id(w, p)->owner, p->transient);
        part_failed(w, p);
        return;
    }
    if (w->cand->fallback_overlap) {
        memcpy(p->failed_tr, p->transient, sizeof p->transient);
        memset(p->transient, 0, sizeof p->transient);
    } else {
        w__give(w, part_id(w, p)->owner, p->transient);
        give_delegate_res(w, p);
    }
    /* told before the fallback: what the failed delegate still holds, or
     * that it gave it back */
    w__emit_note(w, (int)part_index_of(w, p), MDL_STAGE_DELEGATE_PREPARE,
                 w->cand->fallback_overlap ? "delegate_held" : "delegate_released");
    start_phase(w, p, PH_FALLBACK);
}

/* runtime_prepare read a compiled artefact its cache's key found valid,
 * built under another runtime or OS version: the runtime refuses it and
 * the part cannot be used in this process (every start alike, until a
 * rebuild or a key that names the version). */
static void prepare_outdated(world *w, part_rt *p)
{
    w__give(w, part_id(w, p)->owner, p->transient);
    w__emit_stage_end(w, part_index_of(w, p), MDL_STAGE_RUNTIME_PREPARE, "cache_stale");
    part_failed(w, p);
}

static void phase_end(sim_engine *e, void *ctx, uint64_t arg)
{
    (void)e;
    world *w = ctx;
    if (!current(w, arg))
        return;
    unsigned idx = (uint32_t)arg;
    part_rt *p = &w->proc.parts[idx];
    int rebuilt = 0;
    for (int c = 0; c < MDL_CAT_COUNT; c++)
        rebuilt |= p->cache_tr[c] > 0;
    w__give(w, w->cache_owner, p->cache_tr);
    if (rebuilt)
        w__emit_stage_end(w, idx, MDL_STAGE_CACHE, NULL);
    if (p->phase == PH_PREPARE && w->proc.cache_outdated) {
        prepare_outdated(w, p); /* the artefact found valid was built for another version */
        return;
    }
    if (p->phase == PH_PREPARE && w->cand->has_cache) {
        int missed = !w->proc.cache_valid && !p->cache_done;
        p->cache_done = 1; /* the rebuilt artefact is valid for this process */
        /* ... and on disk, for the next start, once every part's is */
        int all = 1;
        for (unsigned k = 0; k < w->nparts; k++)
            all &= w->proc.parts[k].cache_done;
        if (missed && all)
            w__cache_rebuilt(w);
    }
    if (p->phase == PH_DELEGATE)
        delegate_end(w, p);
    else
        prepare_end(w, p, p->phase);
}

static void anr_timer(sim_engine *e, void *ctx, uint64_t arg)
{
    (void)e;
    world *w = ctx;
    if (!current(w, arg))
        return;
    uint32_t low = (uint32_t)arg;
    part_rt *p = &w->proc.parts[low & 0xffu];
    /* the app's input timeout fires only with its window in front; a
     * service's (svc) whatever its client's place */
    if (p->state == P_LOADING && (p->serial & 0xffffffu) == (low >> 8) && (w->proc.fg || w->svc))
        w__die(w, MDL_EXIT_ANR, p->phase_stage);
}
