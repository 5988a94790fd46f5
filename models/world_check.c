/* world_check.c - the world checker: the invariants that hold between
 * any two events.  Run after every event in the builds with
 * OOMSIM_WORLD_CHECK (the Debug and sanitizer builds), and by the tests. */
#include <stdarg.h>
#include <stdio.h>

#include "world_int.h"

/* What the attempts add up to, counted from the pool. */
typedef struct tally {
    uint32_t queued, waiting, running, on_part[MDL_PARTS_MAX];
} tally;

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static int broken(sim_error *err, const char *fmt, ...)
{
    char rule[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(rule, sizeof rule, fmt, ap);
    va_end(ap);
    return sim_error_set(err, SIM_EINTERNAL, "world check: %s", rule);
}

/* Every live attempt belongs to a live request, is in a known state, and
 * holds exactly its payload and, while executing, its working set. */
static int check_attempt(const world *w, uint32_t i, tally *t, sim_error *err)
{
    const req *r = &w->store.pool[i];
    if (r->user >= w->store.users_cap || !w->store.users[r->user].in_use)
        return broken(err, "attempt %u belongs to request %u, which is not live", i, r->user);
    if (r->state > R_RUNNING || r->nneeds > MDL_PARTS_MAX ||
        (r->state != R_QUEUED && r->idx > r->nneeds))
        return broken(err, "attempt %u has state %u or need index out of range", i, r->state);
    if (r->state == R_RUNNING && (!r->has_exec || r->idx >= r->nneeds))
        return broken(err, "attempt %u is running with no execution (need %u)", i, r->idx);
    const user *x = &w->store.users[r->user];
    for (int c = 0; c < MDL_CAT_COUNT; c++) {
        int64_t want = x->d.payload[c] + (r->has_exec ? x->d.ws[r->idx][c] : 0);
        if (mdl_ledger_held(w->led, r->owner, (mdl_category)c) != want)
            return broken(err, "attempt %u holds other than its payload and working set "
                          "(category %d)", i, c);
    }
    t->queued += r->state == R_QUEUED;
    t->waiting += r->state == R_WAITING;
    t->running += r->state == R_RUNNING;
    if (r->state == R_RUNNING)
        t->on_part[r->needs[r->idx]]++;
    return SIM_OK;
}

/* The requests' live counts add up to the live attempts, and a live
 * request has an attempt or a retry coming. */
static int check_users(const world *w, uint32_t attempts, sim_error *err)
{
    uint64_t live = 0;
    for (uint32_t u = 0; u < w->store.users_cap; u++) {
        const user *x = &w->store.users[u];
        if (!x->in_use)
            continue;
        live += x->live;
        if (x->live == 0 && !x->waiting)
            return broken(err, "request %u is live with no attempt and no retry coming", u);
    }
    if (live != attempts)
        return broken(err, "the requests count %llu live attempts, the pool holds %u",
                      (unsigned long long)live, attempts);
    return SIM_OK;
}

/* The queue holds distinct queued attempts, within its bound. */
static int check_queue(const world *w, const tally *t, sim_error *err)
{
    const w_proc *pr = &w->proc;
    if (pr->q_len != t->queued)
        return broken(err, "queue length %u, but %u attempts are queued", pr->q_len, t->queued);
    if (w->pol->queue != MDL_QUEUE_UNBOUNDED && pr->q_len > w->pol->queue)
        return broken(err, "queue length %u past its bound %u", pr->q_len, w->pol->queue);
    for (uint32_t k = 0; k < pr->q_len; k++) {
        uint32_t i = w->store.q[(pr->q_head + k) % w->store.q_cap];
        if (i >= w->store.pool_cap || !w->store.pool[i].in_use || w->store.pool[i].state != R_QUEUED)
            return broken(err, "queue entry %u (attempt %u) is not a queued attempt", k, i);
    }
    if (pr->running != t->waiting + t->running)
        return broken(err, "%u execution slots held, but %u attempts hold one", pr->running,
                      t->waiting + t->running);
    return SIM_OK;
}

/* A part's wait list: waiting attempts for this part, ending at its tail.
 * Returns how many, or UINT32_MAX with err set. */
static uint32_t check_waiters(const world *w, unsigned k, sim_error *err)
{
    const w_proc *pr = &w->proc;
    const part_rt *p = &pr->parts[k];
    uint32_t n = 0, last = NIL;
    for (uint32_t i = p->wait_head; i != NIL; i = w->store.pool[i].next) {
        if (i >= w->store.pool_cap || n > w->store.pool_cap) {
            broken(err, "part %u's wait list is broken at entry %u", k, (unsigned)n);
            return UINT32_MAX;
        }
        const req *r = &w->store.pool[i];
        if (!r->in_use || r->state != R_WAITING || r->needs[r->idx] != k) {
            broken(err, "part %u's wait list holds attempt %u, which does not wait for it", k, i);
            return UINT32_MAX;
        }
        last = i;
        n++;
    }
    if (last != p->wait_tail) {
        broken(err, "part %u's wait list does not end at its tail (%u)", k, p->wait_tail);
        return UINT32_MAX;
    }
    return n;
}

/* A part holds what its arrays say, and runs as many executions as are
 * on it. */
static int check_part(const world *w, unsigned k, const tally *t, sim_error *err)
{
    const part_rt *p = &w->proc.parts[k];
    if (p->busy != t->on_part[k])
        return broken(err, "part %u counts %u executions busy", k, p->busy);
    if (p->state > P_FAILED || (p->release_pending && p->state != P_READY))
        return broken(err, "part %u is in state %u, or going while not ready", k, p->state);
    for (int c = 0; c < MDL_CAT_COUNT; c++) {
        int64_t want = p->resident[c] + p->transient[c] + p->failed_tr[c];
        if (mdl_ledger_held(w->led, part_id_of(w, p)->owner, (mdl_category)c) != want ||
            p->delegate_res[c] > p->resident[c])
            return broken(err, "part %u holds other than its resident and transient "
                          "(category %d)", k, c);
    }
    return SIM_OK;
}

/* A generation part (generate.c): its regions running are its
 * executions, none without a context; the KV it charged is held by its
 * session owner.  The KV charged of all parts and the regions growing
 * are summed. */
static int check_generation(const world *w, unsigned k, int64_t *kv, uint32_t *growing,
                            sim_error *err)
{
    const part_rt *p = &w->proc.parts[k];
    const w_part_id *id = &w->store.part[k];
    uint32_t running = 0;
    int64_t charged = p->ctx_kv, gpu = mdl_kv_gpu_bytes(id->gen, p->ctx_kv);
    for (unsigned s = 0; s < MDL_GEN_SLOTS_MAX; s++) {
        const w_gen_slot *g = &w->gslots[(size_t)k * MDL_GEN_SLOTS_MAX + s];
        running += g->running;
        *growing += g->growing;
        charged += g->charged;
        gpu += mdl_kv_gpu_bytes(id->gen, g->charged);
        if ((g->growing && !g->running) || (s >= id->gen->slots && g->running) ||
            g->tokens > id->gen->context || g->charged > (int64_t)g->high * id->gen->kv_per_token +
                                                           (int64_t)id->gen->context * id->gen->kv_per_token)
            return broken(err, "part %u: KV region %u in an impossible state", k, s);
    }
    if (running != p->busy || (!p->ctx_open && (running > 0 || charged > 0)))
        return broken(err, "part %u: %u KV regions decode, %u executions", k, running, p->busy);
    /* each region's growth split as it came: its gpu share is its total's */
    if (mdl_ledger_held(w->led, id->sess_owner, MDL_CAT_GPU) < gpu ||
        mdl_ledger_held(w->led, id->sess_owner, MDL_CAT_NATIVE) < charged - gpu)
        return broken(err, "part %u: its session owner holds less than its KV", k);
    *kv += charged;
    return SIM_OK;
}

static int check_parts(const world *w, const tally *t, sim_error *err)
{
    uint32_t waiting = 0, switching = 0;
    int64_t cache[MDL_CAT_COUNT] = {0};
    int64_t kv = 0;
    uint32_t growing = 0;
    for (unsigned k = 0; k < w->nparts; k++) {
        int rc = check_part(w, k, t, err);
        if (rc == SIM_OK && w->store.part[k].def->has_generation)
            rc = check_generation(w, k, &kv, &growing, err);
        if (rc != SIM_OK)
            return rc;
        uint32_t n = check_waiters(w, k, err);
        if (n == UINT32_MAX)
            return SIM_EINTERNAL;
        waiting += n;
        switching += w->proc.parts[k].on_demand;
        add_to(cache, w->proc.parts[k].cache_tr);
    }
    if (waiting != t->waiting)
        return broken(err, "%u attempts wait, but the wait lists hold %u", t->waiting, waiting);
    if (switching != w->proc.switching)
        return broken(err, "%u on-demand loads counted, %u running", w->proc.switching, switching);
    if (kv != w->proc.kv_held || growing != w->proc.gen_growing)
        return broken(err, "the KV held (%lld) or the regions growing (%u) miscounted",
                      (long long)w->proc.kv_held, w->proc.gen_growing);
    for (int c = 0; c < MDL_CAT_COUNT; c++)
        if (mdl_ledger_held(w->led, w->cache_owner, (mdl_category)c) != cache[c])
            return broken(err, "the cache owner holds other than the rebuilds running (%d)", c);
    return SIM_OK;
}

/* The iPhone's processes (memstat.c): the others' sums, in kill order, the
 * compressor within its max, the app's compressed part within what it may
 * compress (and nothing of it while in front). */
static int check_xnu(const world *w, sim_error *err)
{
    const w_xnu *x = &w->pg.x;
    int64_t res = 0, comp = 0;
    for (uint32_t k = 0; k < x->nother; k++) {
        if (x->other[k].resident < 0 || x->other[k].comp < 0 ||
            (k > 0 && x->other[k].band < x->other[k - 1].band))
            return broken(err, "pages: another process is negative or out of band order (%u)",
                          k);
        res += x->other[k].resident;
        comp += x->other[k].comp;
    }
    if (res != w->dstate.cached || comp != x->other_comp)
        return broken(err, "pages: the others' sums are not their processes' (%lld, %lld)",
                      (long long)res, (long long)comp);
    /* the app's part is read within what it still holds (memstat.c) */
    int64_t own = mdl_ledger_total(w->led, MDL_CAT_NATIVE) + mdl_ledger_total(w->led, MDL_CAT_JAVA);
    int64_t app = x->app_comp < own ? x->app_comp : own;
    if (x->app_comp < 0 || x->succ_comp < 0 ||
        x->other_comp + app + x->succ_comp > w->dev->compressor_max)
        return broken(err, "pages: the compressor holds less than nothing or more than its max");
    if (w->proc.fg && app > 0)
        return broken(err, "pages: the app in front keeps compressed pages");
    return SIM_OK;
}

/* The phone's pages (pages.c): every part within its bounds, and RAM
 * conserved: the parts and free pages sum to it, free never negative. */
static int check_pages(const world *w, sim_error *err)
{
    static const char *const names[W_PAGE_PARTS] = {
        "kernel", "other apps' anonymous", "the app's anonymous", "file pages", "zram's store",
        "a spike", "free pages"};
    const mdl_device *d = w->dev;
    const w_pages *pg = &w->pg;
    int64_t part[W_PAGE_PARTS], sum = 0;
    pg_parts(&w->pg, &w->pga, part);
    for (int k = 0; k < W_PAGE_PARTS; k++) {
        if (part[k] < 0)
            return broken(err, "pages: %s are negative (%lld; kernel %lld, others %lld, app %lld, "
                          "file %lld, zram %lld, spike %lld)", names[k], (long long)part[k],
                          (long long)part[0], (long long)part[1], (long long)part[2],
                          (long long)part[3], (long long)part[4], (long long)part[5]);
        sum += part[k];
    }
    if (sum != d->ram)
        return broken(err, "pages: the parts sum to %lld, not ram %lld", (long long)sum,
                      (long long)d->ram);
    if (pg->cached_swap < 0 || pg->succ_swap < 0 || pg->pc_cold < 0 || pg->pc_ws < 0 ||
        pg->app_evicted < 0 || pg->app_cold_gone < 0 || pg->spike != 0)
        return broken(err, "pages: a count is negative, or a spike is still held");
    if (pg->pc_cold > d->page_cache - d->page_cache_ws || pg->pc_ws > d->page_cache_ws)
        return broken(err, "pages: the page cache holds more than its size");
    if (pg->cached_swap + pg->succ_swap > (d->has_zram ? d->zram_size : 0))
        return broken(err, "pages: zram holds more than its size");
    if (pg->on == W_PAGES_XNU)
        return check_xnu(w, err);
    if (pg->ncached == 0 && (w->dstate.cached != 0 || pg->cached_swap != 0))
        return broken(err, "pages: no cached app, yet cached memory");
    return SIM_OK;
}

/* Each process's memory balances: the app owner holds the main process's
 * baseline and the pages' holds, nothing else; the model's service
 * process (svc) its own baseline; a service lives only while its client
 * does, and a dead one holds nothing and runs nothing. */
static int check_processes(const world *w, sim_error *err)
{
    const w_proc *pr = &w->proc;
    int64_t app[MDL_CAT_COUNT];
    memcpy(app, w->svc ? w->main.app : pr->app, sizeof app);
    for (uint32_t k = 0; w->page_held != NULL && k < w->wl->npages; k++)
        add_to(app, w->page_held[k]);
    for (int c = 0; c < MDL_CAT_COUNT; c++)
        if (mdl_ledger_held(w->led, w->app_owner, (mdl_category)c) != app[c])
            return broken(err, "the app owner holds other than its baseline and page holds (%d)",
                          c);
    if (!w->svc)
        return SIM_OK;
    if (pr->alive && !w->main.alive)
        return broken(err, "the service process lives without its client");
    if (!w->main.alive && (app[0] | app[1] | app[2] | app[3]) != 0)
        return broken(err, "the dead main process still holds memory");
    for (int c = 0; c < MDL_CAT_COUNT; c++)
        if (mdl_ledger_held(w->led, w->svc_owner, (mdl_category)c) != pr->app[c])
            return broken(err, "the service process's owner holds other than its baseline (%d)",
                          c);
    if (pr->alive)
        return SIM_OK;
    if (mdl_ledger_counted(w->led) != w__main_counted(w) || pr->nsess != 0 || pr->running != 0 ||
        pr->q_len != 0)
        return broken(err, "the dead service process still holds memory, sessions or requests");
    return SIM_OK;
}

/* The owners' sessions (owners.c): each on a ready part, of an owner that
 * is open (or that closed while it ran, or leaked it), busy only under an
 * execution; their memory within the part's session owner's; the tasks
 * running at most the task owners. */
static int check_sessions(const world *w, sim_error *err)
{
    int64_t held[MDL_PARTS_MAX][MDL_CAT_COUNT];
    memset(held, 0, sizeof held);
    uint32_t busy = 0, hbusy = 0, tasks = 0;
    for (uint32_t s = 0; s < w->proc.nsess; s++) {
        const w_session *x = &w->store.sess[s];
        if (!x->in_use)
            continue;
        if (x->part >= w->nparts || x->holder >= w->wl->nholders ||
            w->proc.parts[x->part].state != P_READY)
            return broken(err, "session %u of owner %u is on part %u, which is not ready", x->id,
                          x->holder, x->part);
        if (!w->proc.h_open[x->holder] && !x->leaked && !x->closing)
            return broken(err, "session %u outlives its owner %s", x->id,
                          w->wl->holders[x->holder].name);
        if (x->closing && !x->busy)
            return broken(err, "session %u waits to close with nothing running on it", x->id);
        busy += x->busy;
        add_to(held[x->part], x->amount);
    }
    for (uint32_t i = 0; i < w->store.pool_cap; i++)
        hbusy += w->store.pool[i].in_use && w->store.pool[i].hsess != NIL;
    if (busy != hbusy)
        return broken(err, "%u sessions busy, %u executions on an owner's session", busy, hbusy);
    for (unsigned k = 0; k < w->nparts; k++)
        for (int c = 0; c < MDL_CAT_COUNT; c++)
            if (held[k][c] > mdl_ledger_held(w->led, w->store.part[k].sess_owner, (mdl_category)c))
                return broken(err, "part %u's session owner holds less than its owners' "
                              "sessions (%d)", k, c);
    for (uint32_t h = 0; h < w->wl->nholders; h++)
        tasks += w->wl->holders[h].kind == MDL_HOLDER_TASK && w->proc.h_open[h];
    if (w->proc.tasks != tasks)
        return broken(err, "%u tasks running, %u task owners open", w->proc.tasks, tasks);
    return SIM_OK;
}

int w__validate_state(const world *w, sim_error *err)
{
    if (w->pg.on) {
        int prc = check_pages(w, err);
        if (prc != SIM_OK)
            return prc;
    }
    int rc;
    const w_proc *pr = &w->proc;
    if (w->dstate.cached < 0)
        return broken(err, "other apps' cached memory is negative");
    /* (the main process, svc, holds its own while its service is down) */
    if (!pr->alive && (pr->running != 0 || pr->q_len != 0 ||
                       mdl_ledger_counted(w->led) != (w->svc ? w__main_counted(w) : 0)))
        return broken(err, "no process, yet %u slots and %u queued attempts or memory held",
                      pr->running, pr->q_len);
    tally t;
    memset(&t, 0, sizeof t);
    for (uint32_t i = 0; i < w->store.pool_cap; i++)
        if (w->store.pool[i].in_use && (rc = check_attempt(w, i, &t, err)) != SIM_OK)
            return rc;
    if ((rc = check_users(w, t.queued + t.waiting + t.running, err)) != SIM_OK ||
        (rc = check_queue(w, &t, err)) != SIM_OK)
        return rc;
    if ((rc = check_parts(w, &t, err)) != SIM_OK)
        return rc;
    if (w->wl->nholders > 0 && (rc = check_sessions(w, err)) != SIM_OK)
        return rc;
    if ((rc = check_processes(w, err)) != SIM_OK)
        return rc;
    if (w->dstate.successor < 0 || (!w->pg.on && !w->path.bg && w->dstate.successor != 0))
        return broken(err, "the successor app holds memory while the user is in the app");
    return SIM_OK;
}

int mdl_world_validate(const world *w, sim_error *err)
{
    int rc = mdl_ledger_validate(w->led, err);
    return rc != SIM_OK ? rc : w__validate_state(w, err);
}
