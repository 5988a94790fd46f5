/* quiz.c - what `oomsim explain` tells after the timeline: the verdicts
 * on its deaths, and with --quiz an on-call drill.  The
 * narration before it showed the evidence a person would have (the memory
 * timeline, the exit records, lmkd's lines) with the causes hidden; the
 * drill asks for the class of the first death and the recovery that fits
 * it, then reveals the answer and the reasoning.  The caller reads the
 * answers and prints what the teller holds (rpl_teller_text). */
#include "tell_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>


void rpl_drill_none(rpl_teller *t)
{
    sim_text_printf(&t->out, "\nno death in this replication: nothing to ask (try another "
                    "--replication or --cell)\n");
}

/* The classic quiz: the class, then the recovery. */
static void ask_class(rpl_teller *t)
{
    sim_text_printf(&t->out, "question 1: what ended the process? one of (its name or its "
                    "number):");
    for (int k = 0; k < RPL_CLASS_COUNT; k++)
        sim_text_printf(&t->out, " %d) %s", k + 1, rpl_class_name((rpl_class)k));
    sim_text_printf(&t->out, "\n> ");
}

static void ask_recovery(rpl_teller *t)
{
    sim_text_printf(&t->out, "question 2: which recovery fits it?\n");
    for (int k = 0; k < RPL_REC_DRILL_CHOICES; k++)
        sim_text_printf(&t->out, "  %d) %s\n", k + 1, rpl_recovery_choice((rpl_recovery)k));
    sim_text_printf(&t->out, "> ");
}

unsigned rpl_quiz_questions(const rpl_teller *t)
{
    return t->quiz == 2 ? RPL_DRILL_QUESTIONS : 2;
}

void rpl_quiz_ask(rpl_teller *t, unsigned death, unsigned q, const char *echo)
{
    if (q > 0)
        sim_text_printf(&t->out, "%s\n", echo);
    if (q == 0)
        sim_text_printf(&t->out, "\nthe drill: death %u of %u, at %.3f s\n", death + 1,
                        t->ndeaths, rpl__instant_s(t->deaths[death].time_us));
    if (t->quiz == 2)
        rpl__drill_ask(t, death, q);
    else if (q == 0)
        ask_class(t);
    else
        ask_recovery(t);
}

int rpl_quiz_form(const rpl_teller *t, unsigned q, char *answer, size_t n, const char **form)
{
    unsigned long long k;
    if (t->quiz == 2)
        return rpl__drill_form(t, q, answer, n, form);
    if (q == 1) {
        *form = "the number of a choice, 1 to 8";
        return sim_decimal(answer, 1, RPL_REC_DRILL_CHOICES, &k) == SIM_OK;
    }
    *form = "a class's name, or its number in the list";
    if (sim_decimal(answer, 1, RPL_CLASS_COUNT, &k) == SIM_OK) {
        snprintf(answer, n, "%s", rpl_class_name((rpl_class)(k - 1)));
        return 1;
    }
    return rpl_class_parse(answer, 1) != RPL_CLASS_COUNT;
}

/* The classic quiz's answer: the class and the recovery, each right or
 * not, and why the one chosen is not. */
static void grade_classic(rpl_teller *t, const tell_death *d, const rpl_verdict *v,
                          char answers[][RPL_ANSWER_MAX])
{
    rpl_recovery right = rpl_recovery_fitting(v->kind, &d->record, v->started);
    rpl_class chose = rpl_class_parse(answers[0], 1);
    unsigned long long pick = 0;
    if (sim_decimal(answers[1], 1, RPL_REC_DRILL_CHOICES, &pick) != SIM_OK)
        pick = 0;
    int ok1 = chose == v->kind, ok2 = pick == (unsigned)right + 1;
    sim_text_printf(&t->out, "\nthe answer:\n");
    sim_text_printf(&t->out, "1. %s (%s). The process died %s%s: %s. The record supports it: "
                    "%s.\n",
                    v->cls, ok1 ? "right" : "your answer was not it", d->stage[0] ? "during " : "",
                    d->stage, d->why, v->supports);
    if (!ok1)
        sim_text_printf(&t->out, "   yours, %s, needs %s; this record is not that.\n",
                        rpl_class_name(chose), rpl__class_needs(chose));
    sim_text_printf(&t->out, "2. %u) %s (%s). %s.\n", (unsigned)right + 1,
                    rpl_recovery_choice(right), ok2 ? "right" : "your answer was not it",
                    v->recovery);
    if (!ok2 && pick > 0)
        sim_text_printf(&t->out, "   yours, %llu), is the recovery for %s.\n", pick,
                        rpl_recovery_for((rpl_recovery)(pick - 1)));
    rpl_ladder_text(&v->ladder, RPL_LADDER_INDENT, &t->out);
    sim_text_printf(&t->out, "score: %d of 2\n", ok1 + ok2);
}

void rpl_quiz_grade(rpl_teller *t, unsigned death, char answers[][RPL_ANSWER_MAX])
{
    const tell_death *d = &t->deaths[death];
    rpl_verdict v;
    rpl__verdict(d, &v);
    unsigned last = rpl_quiz_questions(t) - 1;
    sim_text_printf(&t->out, "%s\n", answers[last]);
    if (t->quiz == 2)
        rpl__drill_grade(t, d, &v, answers);
    else
        grade_classic(t, d, &v, answers);
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

/* A session without a death still ends with what to do: an outage (a
 * stale compiled cache refused, the requests failing after it) has its
 * row of the verdict table; else nothing calls for a recovery. */
static void tell_no_death(rpl_teller *t)
{
    if (t->stale == 0) {
        sim_text_printf(&t->out, "\nno death, so no exit record to classify; and no outage: "
                        "%s. Nothing in this session calls for a step of the recovery ladder; "
                        "what to do next is in the cells `oomsim run` compares\n",
                        t->part_failed > 0 ? "some requests failed, none for a refused cache"
                                           : "every request was served or is still waiting");
        return;
    }
    sim_text_printf(&t->out, "\nno death, so no exit record to classify, but an outage: %llu "
                    "prepare%s refused a stale compiled cache, and %llu request%s failed for "
                    "want of the part after it: the app is up and its feature is not, and "
                    "no exit record will ever say so\n",
                    (unsigned long long)t->stale, t->stale > 1 ? "s" : "",
                    (unsigned long long)t->part_failed, t->part_failed != 1 ? "s" : "");
    rpl_ladder l;
    rpl_ladder_of(RPL_REC_STALE_CACHE, 0, &l);
    rpl_ladder_text(&l, RPL_LADDER_INDENT, &t->out);
}

void rpl_tell_verdicts(rpl_teller *t)
{
    if (t->ndeaths == 0) {
        tell_no_death(t);
        return;
    }
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
        if (v.kind == RPL_CLASS_UNKNOWN) /* nothing to confirm: say what is missing */
            sim_text_printf(&t->out, "- the death at %.3f s %s%s: %s. It stays unknown "
                            "(unconfirmed): missing %s. Recovery: %s.\n",
                            rpl__instant_s(d->time_us), d->stage[0] ? "in " : "while idle",
                            d->stage, d->why, v.missing, v.recovery);
        else
            sim_text_printf(&t->out, "- the death at %.3f s %s%s: %s. The record supports %s "
                            "(confirmed here: the timeline above is the evidence it needs). "
                            "Recovery: %s.\n",
                            rpl__instant_s(d->time_us), d->stage[0] ? "in " : "while idle",
                            d->stage, d->why, v.cls, v.recovery);
        /* a quarter or more of what it held is in no pss: said, or it reads as small */
        if (rpl_class_is_memory(v.kind) && d->record.pss_kb > 0 &&
            d->unseen >= (int64_t)100 << 20 && d->unseen * 4 >= (int64_t)d->record.pss_kb * 1024)
            sim_text_printf(&t->out, "  the record's pss (%lld MiB) leaves out the %.0f MiB of "
                            "GPU buffers the app held at the kill: dma-bufs held by a file "
                            "descriptor are in no pss or rss; read the graphics memory "
                            "(dumpsys meminfo's Graphics row, dmabuf_dump) before calling the "
                            "app small\n",
                            (long long)(d->record.pss_kb >> 10), (double)d->unseen / 1048576.0);
        /* memory that rose sample after sample: the trend, which one record hides */
        const tell_samples *m = &d->samples;
        if (m->n >= 3 && m->last_mb >= m->first_mb + 10 * (int64_t)(m->n - 1))
            sim_text_printf(&t->out, "  the system's %u periodic samples of this life rose from "
                            "%lld MiB at %.0f s to %lld MiB at %.0f s, %.1f MiB a sample: the "
                            "memory grew and was not given back, a trend no single record "
                            "shows\n", m->n,
                            (long long)m->first_mb, rpl__instant_s(m->first_us),
                            (long long)m->last_mb, rpl__instant_s(m->last_us),
                            (double)(m->last_mb - m->first_mb) / (double)(m->n - 1));
        rpl_ladder_text(&v.ladder, RPL_LADDER_INDENT, &t->out);
    }
    if (t->more_deaths > 0)
        sim_text_printf(&t->out, "(%llu more deaths not listed)\n",
                        (unsigned long long)t->more_deaths);
}
