/* life.c - one life of a process in a timeline, as `diagnose`, `explain`
 * and the drill follow it (rpl_life): where it began, whether a request
 * ran, when a stage last ended, and the signs of its failure mode alive at
 * each instant (RPL_SIGN_*), which the verdict table reads
 * (docs/on-call.md "The verdict table"). */
#include "exits_int.h"

#include <string.h>

#include "traces/traces.h"

/* FNV-1a of a part's name (bytes up to n or the NUL): parts are told
 * apart by it, never printed. */
static uint64_t part_hash(const char *s, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t k = 0; k < n && s[k] != '\0'; k++)
        h = (h ^ (unsigned char)s[k]) * 1099511628211ull;
    return h ? h : 1;
}

static int has_part(const uint64_t *set, unsigned n, uint64_t h)
{
    for (unsigned k = 0; k < n; k++)
        if (set[k] == h)
            return 1;
    return 0;
}

/* Adds h to a set of RPL_LIFE_PARTS (a part past them is not tracked: a
 * sign it would show is missed, never a wrong one given). */
static void add_part(uint64_t *set, unsigned *n, uint64_t h)
{
    if (!has_part(set, *n, h) && *n < RPL_LIFE_PARTS)
        set[(*n)++] = h;
}

static void drop_part(uint64_t *set, unsigned *n, uint64_t h)
{
    for (unsigned k = 0; k < *n; k++)
        if (set[k] == h) {
            set[k] = set[--*n];
            return;
        }
}

void rpl_life_init(rpl_life *l)
{
    memset(l, 0, sizeof *l);
    l->last_end_us = -1;
}

/* The parts a request's sample asks for ("first,second"). */
static void note_asked(rpl_life *l, const char *needs)
{
    for (const char *p = needs; *p != '\0';) {
        size_t n = strcspn(p, ",");
        if (n > 0)
            add_part(l->asked, &l->n_asked, part_hash(p, n));
        p += n + (p[n] == ',');
    }
}

int rpl_life_holds(const rpl_life *l, const char *needs)
{
    for (const char *p = needs; *p != '\0';) {
        size_t n = strcspn(p, ",");
        if (n > 0 && !has_part(l->held, l->n_held, part_hash(p, n)))
            return 0;
        p += n + (p[n] == ',');
    }
    return 1;
}

/* A part begins to load or prepare while another is held: a preload when
 * no request asked for it or the part held was itself preloaded (loaded
 * unasked and not yet used by a request), else a switch.  Either holds
 * while the two are held together: until that part or every other held
 * part is released. */
static unsigned parts_sign(rpl_life *l, const trc_event *e, int kind, unsigned s)
{
    uint64_t h = (e->has & TRC_F_PART) ? part_hash(e->part, TRC_TEXT_MAX) : 0;
    const unsigned both = RPL_SIGN_SWITCH | RPL_SIGN_PRELOAD;
    if (kind == TRC_SAMPLE && (e->has & TRC_F_NEEDS))
        note_asked(l, e->needs);
    if (h == 0)
        return s;
    if (e->stage == TRC_RELEASE) {
        drop_part(l->held, &l->n_held, h);
        unsigned others = l->n_held - (unsigned)has_part(l->held, l->n_held, l->sign_part);
        return h == l->sign_part || others == 0 ? s & ~both : s;
    }
    if (kind == TRC_BEGIN && e->stage == TRC_INFERENCE) {
        drop_part(l->asked, &l->n_asked, h);
        drop_part(l->preloaded, &l->n_preloaded, h); /* used: no longer a preload */
    }
    if (kind == TRC_BEGIN && (e->stage == TRC_LOAD || e->stage == TRC_RUNTIME_PREPARE) &&
        !has_part(l->held, l->n_held, h)) {
        int asked = has_part(l->asked, l->n_asked, h), pre = !asked;
        if (!asked)
            add_part(l->preloaded, &l->n_preloaded, h);
        for (unsigned k = 0; k < l->n_held; k++)
            pre |= has_part(l->preloaded, l->n_preloaded, l->held[k]);
        if (l->n_held > 0) {
            s |= pre ? RPL_SIGN_PRELOAD : RPL_SIGN_SWITCH;
            l->sign_part = h;
        }
    }
    if (kind == TRC_END && (e->stage == TRC_RUNTIME_PREPARE || e->stage == TRC_LOAD))
        add_part(l->held, &l->n_held, h);
    return s;
}

/* The signs of the failure mode in force after event e (RPL_SIGN_*): each
 * holds while what it names does, so a death reads only the ones alive at
 * it: a cache rebuild until it ends; a failed delegate until the fallback's
 * prepare ends or its memory is released; a duplicate attempt until nothing
 * is in flight; a long queue while it is long; a leaked session until the
 * life ends; the KV cache while it holds pages; a memory warning until a
 * part is released; across deaths, a thermal step until the phone reports
 * none and an update until a cache rebuild ends. */
static unsigned signs_after(rpl_life *l, const trc_event *e)
{
    unsigned s = l->signs;
    int kind = (e->has & TRC_F_KIND) ? (int)e->kind : TRC_SAMPLE;
    const char *err = (e->has & TRC_F_ERROR) ? e->error : "";
    if (kind == TRC_BEGIN && e->stage == TRC_DELEGATE_PREPARE) {
        l->delegate_held = 0; /* a delegate refused at once makes nothing */
        for (int c = 0; (e->has & TRC_F_ALLOC) && c < TRC_MEM_COUNT; c++)
            l->delegate_held |= (e->alloc_has >> c & 1u) && e->alloc[c] > 0;
    }
    if (strcmp(err, "retry_duplicate") == 0)
        s |= RPL_SIGN_RETRY_DUPLICATE;
    else if ((e->has & TRC_F_IN_FLIGHT) && e->in_flight == 0)
        s &= ~(unsigned)RPL_SIGN_RETRY_DUPLICATE;
    /* failed, or denied the GPU in the background while it prepared: the
     * fallback then prepares beside its memory (delegate_held) */
    if (strcmp(err, "delegate_failed") == 0 ||
        (strcmp(err, "delegate_held") == 0 && l->delegate_held))
        s |= RPL_SIGN_DELEGATE_FAILED;
    else if (strcmp(err, "delegate_released") == 0 ||
             (kind == TRC_END && e->stage == TRC_RUNTIME_PREPARE))
        s &= ~(unsigned)RPL_SIGN_DELEGATE_FAILED;
    if (e->has & TRC_F_QUEUE)
        s = e->queue >= RPL_QUEUE_SIGN ? s | RPL_SIGN_QUEUE : s & ~(unsigned)RPL_SIGN_QUEUE;
    if (kind == TRC_BEGIN && e->stage == TRC_CACHE)
        s |= RPL_SIGN_CACHE_REBUILD;
    else if (kind == TRC_END && e->stage == TRC_CACHE)
        s &= ~(unsigned)RPL_SIGN_CACHE_REBUILD;
    if (strcmp(err, "session_leaked") == 0)
        s |= RPL_SIGN_LEAKED;
    if (kind == TRC_BEGIN && e->stage == TRC_INFERENCE)
        l->running++;
    else if (kind == TRC_END && e->stage == TRC_INFERENCE && l->running > 0)
        l->running--;
    s = l->running > 0 ? s | RPL_SIGN_ANSWERING : s & ~(unsigned)RPL_SIGN_ANSWERING;
    if (strcmp(err, "kv") == 0 && (e->has & TRC_F_PAGES) && (e->pages_has >> TRC_PG_KV & 1u))
        s = e->pages[TRC_PG_KV] > 0 ? s | RPL_SIGN_KV : s & ~(unsigned)RPL_SIGN_KV;
    if (strncmp(err, "thermal:", 8) == 0)
        s = strcmp(err + 8, "none") == 0 || strcmp(err + 8, "nominal") == 0
                ? s & ~(unsigned)RPL_SIGN_THERMAL
                : s | RPL_SIGN_THERMAL;
    if (strcmp(err, "memory_warning") == 0) {
        s |= RPL_SIGN_WARNED;
        l->warned_mb = (e->has & TRC_F_RSS_MB) ? e->rss_mb : 0;
    } else if ((e->stage == TRC_RELEASE && (e->has & TRC_F_PART)) ||
               ((e->has & TRC_F_RSS_MB) && e->rss_mb < l->warned_mb)) {
        s &= ~(unsigned)RPL_SIGN_WARNED; /* released, or the memory fell back */
    }
    /* an update invalidates a cache that was good before it: found valid (a
     * prepare ended with no rebuild in its life) or built */
    if (kind == TRC_BEGIN && e->stage == TRC_CACHE)
        l->cache_began = 1;
    if (kind == TRC_END && (e->stage == TRC_CACHE ||
                            (e->stage == TRC_RUNTIME_PREPARE && !l->cache_began)))
        l->cache_good = 1;
    if (rpl_update_of(e) && l->cache_good)
        s |= RPL_SIGN_UPDATED;
    else if (kind == TRC_END && e->stage == TRC_CACHE)
        s &= ~(unsigned)RPL_SIGN_UPDATED;
    return parts_sign(l, e, kind, s);
}

int rpl_update_of(const trc_event *e)
{
    if (!(e->has & TRC_F_ERROR) || ((e->has & TRC_F_KIND) && e->kind != TRC_SAMPLE))
        return 0;
    return strcmp(e->error, "os_update") == 0 ? 1 : strcmp(e->error, "runtime_update") == 0 ? 2 : 0;
}

void rpl_life_event(rpl_life *l, const trc_event *e, uint64_t index)
{
    if (!(e->has & TRC_F_KIND) || e->kind != TRC_EXIT_EVENT)
        l->signs = signs_after(l, e);
    if (!(e->has & TRC_F_KIND))
        return;
    if (e->kind == TRC_BEGIN && e->stage == TRC_INFERENCE)
        l->ran_request = 1;
    else if (e->kind == TRC_END)
        l->last_end_us = e->time_us;
    else if (e->kind == TRC_EXIT_EVENT || rpl_update_of(e)) {
        /* a death, or an update's stop: the next life starts anew, on a phone
         * as hot as it was and with a cache not rebuilt since the update */
        unsigned keep = l->signs & (RPL_SIGN_THERMAL | RPL_SIGN_UPDATED);
        int good = l->cache_good;
        rpl_life_init(l);
        l->signs = keep;
        l->cache_good = good;
        l->from = index + 1;
    }
}

int rpl_life_at_exit(const rpl_life *l, trc_pairs *open, const trc_event *e, char *stage,
                     size_t n)
{
    size_t nu = 0;
    const trc_unpaired *u = trc_pairs_report(open, &nu);
    const trc_unpaired *best = NULL;
    for (size_t k = 0; k < nu; k++) /* a begin of an earlier life died with it */
        if (!u[k].is_end && u[k].index >= l->from && (best == NULL || u[k].index > best->index))
            best = &u[k];
    snprintf(stage, n, "%s", best != NULL ? trc_stage_name(best->stage) : "");
    return l->ran_request || (best == NULL && l->last_end_us >= 0 &&
                              l->last_end_us < e->time_us);
}
