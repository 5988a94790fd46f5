/* kill_jetsam.c - iOS's jetsam, as oomsim models it (docs/model.md "Kill
 * rules"): a per-process footprint limit, one in the foreground and one in
 * the background.  The app dies when its counted bytes pass the limit of
 * where it is (strictly: exactly at the limit it lives); other apps'
 * memory and pressure spikes do not move the limit. */
#include "world_int.h"

static int64_t limit(const mdl_device *d, int foreground)
{
    return foreground ? d->jetsam_limit : d->jetsam_background_limit;
}

static int64_t headroom(const mdl_device *d, const mdl_kill_input *in)
{
    return limit(d, in->foreground) - in->counted;
}

static void decide(const mdl_device *d, const mdl_kill_input *in, mdl_kill_verdict *out)
{
    memset(out, 0, sizeof *out);
    out->room = headroom(d, in);
    out->cached = in->cached;
    if (out->room < 0) {
        out->dies = 1;
        out->why = MDL_EXIT_LOW_MEMORY;
    }
}

const w_kill_rules w__kill_jetsam = {decide, headroom, limit};

const w_kill_rules *w__kill_rules_of(const mdl_device *d)
{
    return d->rule == MDL_KILL_JETSAM ? &w__kill_jetsam : &w__kill_lmk;
}

void mdl_kill_decide(const mdl_device *d, const mdl_kill_input *in, mdl_kill_verdict *out)
{
    w__kill_rules_of(d)->decide(d, in, out);
}

int64_t mdl_kill_line(const mdl_device *d, int foreground)
{
    return w__kill_rules_of(d)->line(d, foreground);
}
