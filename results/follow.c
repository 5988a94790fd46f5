/* follow.c - the follow rule: the memory a stream of the world's trace
 * events says the app held, state by state in time order.  An
 * allocation announced by a stage's begin is made when the stage's
 * memory shows it; the timeline (timeline.c) and the Chrome/Perfetto
 * JSON (chrome.c) both follow the same rule. */
#include "internal.h"

#include <string.h>

/* The memory an event stream says the app held, moment by moment: every
 * event's `mem`, and, since the world announces an allocation (a begin's
 * or an arrival's `alloc`) before making it, the memory once it is made,
 * held if only for an instant, unless the next event is the death it
 * caused (its record holds what the kill saw).  Notes raised inside an
 * allocation (a warning, a cached-app kill) carry the memory half-way
 * through it: the announced state stands. */
void res__follow(res__memfollow *f, const trc_event *e, res__record_fn rec, void *ctx)
{
    int kind = (e->has & TRC_F_KIND) ? (int)e->kind : TRC_SAMPLE;
    int note = kind == TRC_SAMPLE && (e->has & TRC_F_ERROR);
    int mid_allocation = note && (strcmp(e->error, "memory_warning") == 0 ||
                                  strcmp(e->error, "cached_app_killed") == 0);
    if (mid_allocation && f->pending && f->pending_t == e->time_us)
        return;
    if (kind == TRC_EXIT_EVENT)
        f->pending = 0;
    else if (f->pending) {
        rec(ctx, f->pending_t, f->pend);
        f->pending = 0;
    }
    if (e->has & TRC_F_MEM) {
        for (int k = 0; k < TRC_MEM_COUNT; k++)
            f->state[k] = (e->mem_has >> k & 1u) ? e->mem[k] : 0;
        rec(ctx, e->time_us, f->state);
    }
    if ((e->has & TRC_F_ALLOC) && kind != TRC_END) {
        /* an inference's begin opens a session's state (its `keep`) beside
         * the working set (its `alloc`), in the same allocation; a stage's
         * `keep` is part of its `alloc` */
        int session = kind == TRC_BEGIN && e->stage == TRC_INFERENCE && (e->has & TRC_F_KEEP);
        f->pending = 1;
        f->pending_t = e->time_us;
        for (int k = 0; k < TRC_MEM_COUNT; k++)
            f->pend[k] = f->state[k] + ((e->alloc_has >> k & 1u) ? e->alloc[k] : 0) +
                         (session && (e->keep_has >> k & 1u) ? e->keep[k] : 0);
    }
}

void res__follow_flush(res__memfollow *f, res__record_fn rec, void *ctx)
{
    if (f->pending) {
        rec(ctx, f->pending_t, f->pend);
        f->pending = 0;
    }
}
