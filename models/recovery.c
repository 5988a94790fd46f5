/* recovery.c - the recovery strategies (docs/model.md "Recovery"): what
 * the persisted recovery state learns at each death and stable run, and
 * what the next cold start does.  Pure functions over an
 * mdl_recovery_state. */
#include "world_int.h"

void mdl_recovery_init(mdl_recovery_state *s, const mdl_candidate *c)
{
    memset(s, 0, sizeof *s);
    s->candidate = c;
    s->failed_stage = MDL_STAGE_NONE;
}

void mdl_recovery_on_death(mdl_recovery_state *s, const mdl_policy *pol,
                           const mdl_candidate *running, const mdl_candidate *lkg,
                           int in_startup, mdl_exit why, mdl_stage stage)
{
    if (in_startup)
        s->same_stage = s->same_stage > 0 && stage == s->failed_stage ? s->same_stage + 1 : 1;
    else
        s->same_stage = 0;
    s->failed_stage = stage;
    s->consec[why]++;
    /* only a candidate whose identity, files and receipt are complete */
    int lkg_ok = lkg != NULL && lkg->receipt_complete && running != lkg;
    int trigger = s->same_stage >= pol->safe_mode_after;
    switch (pol->recovery) {
    case MDL_RECOVERY_NAIVE:
        break;
    case MDL_RECOVERY_SAFE_MODE:
        if (trigger)
            s->safe_mode = 1;
        break;
    case MDL_RECOVERY_FALLBACK_LKG:
        if (trigger) {
            if (lkg_ok)
                s->candidate = lkg;
            else
                s->safe_mode = 1;
        }
        break;
    case MDL_RECOVERY_LADDER:
        /* one more step per failure, in order of reversibility */
        if (s->ladder_step < pol->nladder) {
            mdl_action a = pol->ladder[s->ladder_step++];
            s->acts |= 1u << a;
            if (a == MDL_ACT_FALLBACK_LKG && lkg_ok)
                s->candidate = lkg;
        }
        break;
    }
}

void mdl_recovery_on_stable(mdl_recovery_state *s, const mdl_candidate *running)
{
    /* a stable run: the consecutive counts start again */
    memset(s->consec, 0, sizeof s->consec);
    s->same_stage = 0;
    s->last_stable = running;
}

int mdl_recovery_on_start(mdl_recovery_state *s, const mdl_candidate *running)
{
    if (s->candidate == running)
        return 0;
    s->same_stage = 0;
    s->safe_mode = 0; /* a new condition: the candidate changed */
    return 1;
}
