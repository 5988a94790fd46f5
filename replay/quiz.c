/* quiz.c - what `oomsim explain` tells after the timeline: the verdicts
 * on its deaths, and with --quiz an on-call drill.  The
 * narration before it showed the evidence a person would have (the memory
 * timeline, the exit records, lmkd's lines) with the causes hidden; the
 * drill asks for the class of the first death and the recovery that fits
 * it, then reveals the answer and the reasoning.  The caller reads the
 * answers and prints what the teller holds (rpl_teller_text). */
#include "tell_int.h"

#include <string.h>


void rpl_drill_none(rpl_teller *t)
{
    sim_text_printf(&t->out, "\nno death in this replication: nothing to ask (try another "
                    "--replication or --cell)\n");
}

void rpl_drill_ask_class(rpl_teller *t)
{
    const tell_death *d = &t->deaths[0];
    sim_text_printf(&t->out, "\nthe drill: the first death, at %.3f s\n",
                    rpl__instant_s(d->time_us));
    sim_text_printf(&t->out, "question 1: what ended the process? one of (its name or its "
                    "number):");
    for (int k = 0; k < RPL_CLASS_COUNT; k++)
        sim_text_printf(&t->out, " %d) %s", k + 1, rpl_class_name((rpl_class)k));
    sim_text_printf(&t->out, "\n> ");
}

void rpl_drill_ask_recovery(rpl_teller *t, const char *a1)
{
    sim_text_printf(&t->out, "%s\nquestion 2: which recovery fits it?\n", a1);
    for (int k = 0; k < RPL_REC_DRILL_CHOICES; k++)
        sim_text_printf(&t->out, "  %d) %s\n", k + 1, rpl_recovery_choice((rpl_recovery)k));
    sim_text_printf(&t->out, "> ");
}

void rpl_drill_grade(rpl_teller *t, const char *a1, const char *a2, unsigned pick)
{
    const tell_death *d = &t->deaths[0];
    rpl_verdict v;
    rpl__verdict(d, &v);
    rpl_recovery right = rpl_recovery_fitting(v.kind, &d->record, v.started);
    sim_text_printf(&t->out, "%s\n", a2);
    int ok1 = rpl_class_parse(a1, 1) == v.kind;
    int ok2 = pick == (unsigned)right + 1;
    sim_text_printf(&t->out, "\nthe answer:\n");
    sim_text_printf(&t->out, "1. %s (%s). The process died %s%s: %s. The record supports it: "
                    "%s.\n",
                    v.cls, ok1 ? "right" : "your answer was not it", d->stage[0] ? "during " : "",
                    d->stage, d->why, v.supports);
    sim_text_printf(&t->out, "2. %u) %s (%s). %s.\n", (unsigned)right + 1,
                    rpl_recovery_choice(right), ok2 ? "right" : "your answer was not it",
                    v.recovery);
    rpl_ladder_text(&v.ladder, RPL_LADDER_INDENT, &t->out);
    sim_text_printf(&t->out, "score: %d of 2\n", ok1 + ok2);
}

void rpl_drill_reveal(rpl_teller *t, const char *about)
{
    if (t->ndeaths > 0 && about != NULL && about[0] != '\0')
        sim_text_printf(&t->out, "\nthe scenario: %s\n", about);
}

void rpl__verdict(const tell_death *d, rpl_verdict *v)
{
    rpl_diagnose_told(&d->record, d->stage, d->started, d->signs, v);
}

void rpl_tell_verdicts(rpl_teller *t)
{
    if (t->ndeaths == 0)
        sim_text_printf(&t->out, "\nno death, so no exit record: nothing to classify\n");
    else
        sim_text_printf(&t->out, "\nwhat the evidence supports:\n");
    for (unsigned k = 0; k < t->ndeaths; k++) {
        const tell_death *d = &t->deaths[k];
        int seen = 0;
        for (unsigned j = 0; j < k && !seen; j++)
            seen = t->deaths[j].record.source == d->record.source &&
                   t->deaths[j].record.ios == d->record.ios &&
                   t->deaths[j].record.reason_code == d->record.reason_code &&
                   t->deaths[j].record.importance == d->record.importance &&
                   strcmp(t->deaths[j].stage, d->stage) == 0 &&
                   t->deaths[j].started == d->started &&
                   t->deaths[j].signs == d->signs; /* the same advice */
        if (seen)
            continue;
        rpl_verdict v;
        rpl__verdict(d, &v);
        sim_text_printf(&t->out, "- the death at %.3f s %s%s: %s. The record supports %s (%s: "
                        "the timeline above is the evidence it needs). Recovery: %s.\n",
                        rpl__instant_s(d->time_us), d->stage[0] ? "in " : "while idle",
                        d->stage, d->why, v.cls,
                        v.kind == RPL_CLASS_UNKNOWN ? "unconfirmed" : "confirmed here",
                        v.recovery);
        rpl_ladder_text(&v.ladder, RPL_LADDER_INDENT, &t->out);
    }
    if (t->more_deaths > 0)
        sim_text_printf(&t->out, "(%llu more deaths not listed)\n",
                        (unsigned long long)t->more_deaths);
}
