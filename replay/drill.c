/* drill.c - the drill of `oomsim explain --drill`: the quiz that hides
 * the reason codes, the importance and the class words from the evidence
 * and asks what an on-call engineer must read from it: the stage, the
 * evidence level a record reaches alone, what is still missing, the
 * recovery ladder's order and the step the death calls for.  Each answer
 * is graded with why the right one is right and why the one chosen is not
 * (docs/on-call.md "The drill"). */
#include "tell_int.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

static const char *const stages[] = {"load", "runtime_prepare", "delegate_prepare",
                                     "inference", "cache", "none"};
#define NSTAGES (sizeof stages / sizeof *stages)
static const char *const levels[] = {"confirmed", "supported", "unconfirmed"};
static const char *const level_means[] = {
    "a system record that matches a timeline of the same process and version, or a record "
    "joined to the system's kill line of the same death",
    "a record that names the class, with nothing in it alone that ties it to a timeline",
    "a death with no record that names a reason"};

/* What can be missing, and when each is (the choices of question 3). */
static const char *const missing[] = {
    "nothing for the class: the record and the timeline name the kill, its stage and what "
    "was held",
    "the device's heap growth limit: a java_crash says the Java heap passed it, not where it "
    "is",
    "the tombstone: a native crash names no delegate or code path without it",
    "the main-thread trace: an ANR says the main thread was blocked, not on what",
    "the main-thread work of the launch: a watchdog says the launch took too long, not what "
    "took it",
    "a LOW_MEMORY record or an lmkd line: signal 9 alone does not name memory, other killers "
    "send it too",
    "everything: no record names a reason, so the death stays unconfirmed until exit records "
    "are collected"};
#define NMISSING (sizeof missing / sizeof *missing)

/* The ladder's steps as the order question shows them: a to d, shuffled
 * (the step each is, 1 to 4). */
static const int shown[4] = {3, 1, 4, 2};
static const char order_right[] = "bdac";

void rpl__drill_ask(rpl_teller *t, unsigned death, unsigned q)
{
    (void)death;
    sim_text *o = &t->out;
    if (q == 0) {
        sim_text_printf(o, "question 1: which stage was running when the process died? "
                           "(its name or number):");
        for (size_t k = 0; k < NSTAGES; k++)
            sim_text_printf(o, " %zu) %s", k + 1, stages[k]);
    } else if (q == 1) {
        sim_text_printf(o, "question 2: read alone, without this timeline, what evidence "
                           "level does its exit record reach?");
        for (size_t k = 0; k < 3; k++)
            sim_text_printf(o, " %zu) %s", k + 1, levels[k]);
    } else if (q == 2) {
        sim_text_printf(o, "question 3: with this timeline beside the record, what is still "
                           "missing to explain the death?\n");
        for (size_t k = 0; k < NMISSING; k++) {
            const char *m = missing[k];
            sim_text_printf(o, "  %zu) %.*s\n", k + 1, (int)strcspn(m, ":"), m);
        }
    } else if (q == 3) {
        sim_text_printf(o, "question 4: put the recovery ladder's steps in the order to take "
                           "them (letters, e.g. \"d a b c\"):\n");
        for (int k = 0; k < 4; k++)
            sim_text_printf(o, "  %c) %s\n", 'a' + k, rpl_step_name((rpl_step)shown[k]));
    } else {
        sim_text_printf(o, "question 5: which step of the ladder does this death call for? "
                           "0) none of them, or 1 to 4 in the ladder's order");
    }
    sim_text_printf(o, q == 2 || q == 3 ? "> " : "\n> ");
}

/* A name (any case) from names[n] or its number: the number, as text. */
static int named(char *answer, size_t len, const char *const *names, size_t n)
{
    unsigned long long k;
    if (sim_decimal(answer, 1, n, &k) == SIM_OK)
        return 1;
    for (size_t j = 0; j < n; j++)
        if (strcasecmp(answer, names[j]) == 0) {
            snprintf(answer, len, "%zu", j + 1);
            return 1;
        }
    return 0;
}

int rpl__drill_form(unsigned q, char *answer, size_t n, const char **form)
{
    unsigned long long k;
    if (q == 0) {
        *form = "a stage's name or its number, 1 to 6";
        if (strcasecmp(answer, "no stage") == 0)
            snprintf(answer, n, "6");
        return named(answer, n, stages, NSTAGES);
    }
    if (q == 1) {
        *form = "confirmed, supported, unconfirmed, or 1 to 3";
        return named(answer, n, levels, 3);
    }
    if (q == 2) {
        *form = "the number of a choice, 1 to 7";
        return sim_decimal(answer, 1, NMISSING, &k) == SIM_OK;
    }
    if (q == 3) {
        *form = "the four letters a to d, each once";
        char got[5] = "";
        size_t m = 0;
        for (const char *s = answer; *s; s++) {
            int c = tolower((unsigned char)*s);
            if (c == ' ' || c == ',' || c == '-' || c == '>')
                continue;
            if (c < 'a' || c > 'd' || m == 4 || memchr(got, c, m) != NULL)
                return 0;
            got[m++] = (char)c;
        }
        if (m != 4)
            return 0;
        snprintf(answer, n, "%s", got);
        return 1;
    }
    *form = "a step, 0 to 4";
    return sim_decimal(answer, 0, 4, &k) == SIM_OK;
}

/* Question 3's right choice (from 1) for the death's verdict. */
static unsigned missing_choice(const rpl_verdict *v, const rpl_exit *x)
{
    switch (v->kind) {
    case RPL_CLASS_UNKNOWN: return 7;
    case RPL_CLASS_JAVA_CRASH: return 2;
    case RPL_CLASS_NATIVE_CRASH: return 3;
    case RPL_CLASS_ANR: return 4;
    case RPL_CLASS_WATCHDOG: return 5;
    default: break;
    }
    if (rpl_class_is_memory(v->kind) && v->kind != RPL_CLASS_KERNEL_OOM &&
        x->source == RPL_EXIT_INFO && x->reason_code == 2)
        return 6;
    return 1;
}

static const char *mark(int ok) { return ok ? "right" : "your answer was not it"; }

static int grade_stage(rpl_teller *t, const tell_death *d, const char *a)
{
    unsigned long long k = 0;
    (void)sim_decimal(a, 1, NSTAGES, &k);
    const char *right = d->stage[0] ? d->stage : "none", *chose = k ? stages[k - 1] : "?";
    int ok = strcmp(right, chose) == 0;
    if (d->stage[0])
        sim_text_printf(&t->out, "1. %s (%s): the last stage begun in this life and not "
                        "ended at the death; its begin has no end.\n", right, mark(ok));
    else
        sim_text_printf(&t->out, "1. none (%s): no stage was running; the last one had ended "
                        "before the death.\n", mark(ok));
    if (!ok && strcmp(chose, "none") == 0)
        sim_text_printf(&t->out, "   yours, none, is not it: %s had begun and not ended.\n",
                        right);
    else if (!ok)
        sim_text_printf(&t->out, "   yours, %s, is not it: it was not running at the death "
                        "(it had ended, or did not begin in this life).\n", chose);
    return ok;
}

static int grade_level(rpl_teller *t, const tell_death *d, const char *a)
{
    rpl_verdict alone;
    rpl_diagnose(&d->record, NULL, &alone);
    unsigned long long k = 0;
    (void)sim_decimal(a, 1, 3, &k);
    size_t r = 0;
    while (r < 2 && strcmp(levels[r], alone.evidence) != 0)
        r++;
    int ok = k == r + 1;
    /* what the timeline adds: confirmation, but for signal 9 and no record */
    const rpl_exit *x = &d->record;
    const char *with = alone.kind == RPL_CLASS_UNKNOWN
                           ? "With the timeline it stays unconfirmed: nothing names a reason"
                       : x->source == RPL_EXIT_INFO && x->reason_code == 2 &&
                               alone.kind != RPL_CLASS_KERNEL_OOM
                           ? "With the timeline it stays supported: signal 9 does not name "
                             "memory"
                           : "With a timeline of the same process and version it is confirmed";
    sim_text_printf(&t->out, "2. %s (%s): read alone it is %s. %s.\n", levels[r], mark(ok),
                    level_means[r], with);
    if (!ok && k > 0)
        sim_text_printf(&t->out, "   yours, %s, would need %s.\n", levels[k - 1],
                        level_means[k - 1]);
    return ok;
}

static int grade_missing(rpl_teller *t, const tell_death *d, const rpl_verdict *v,
                         const char *a)
{
    unsigned right = missing_choice(v, &d->record);
    unsigned long long k = 0;
    (void)sim_decimal(a, 1, NMISSING, &k);
    int ok = k == right;
    const char *m = missing[right - 1];
    int label = (int)strcspn(m, ":");
    sim_text_printf(&t->out, "3. %u) %.*s (%s):%s.\n", right, label, m, mark(ok), m + label + 1);
    if (!ok && k > 0) {
        m = missing[k - 1];
        label = (int)strcspn(m, ":");
        sim_text_printf(&t->out, "   yours, %llu) %.*s, is what is missing for another "
                        "death:%s.\n", k, label, m, m + label + 1);
    }
    return ok;
}

static int grade_order(rpl_teller *t, const char *a)
{
    int ok = strcmp(a, order_right) == 0;
    sim_text_printf(&t->out, "4. b d a c (%s): in the order of reversibility. Rejecting new "
                    "inference undoes itself once the pressure passes; stopping prewarm and "
                    "extra sessions costs latency; releasing idle parts and clearing caches costs "
                    "a reload or a rebuild; the last "
                    "known good changes what the user runs, so only with a complete receipt.\n",
                    mark(ok));
    for (size_t k = 0; !ok && k < 4; k++) {
        /* the first step of yours out of place: it is harder to undo than
         * the one that belongs there */
        if (a[k] == order_right[k])
            continue;
        sim_text_printf(&t->out, "   yours puts \"%s\" where \"%s\" belongs, which is "
                        "easier to undo.\n", rpl_step_name((rpl_step)shown[a[k] - 'a']),
                        rpl_step_name((rpl_step)shown[order_right[k] - 'a']));
        break;
    }
    return ok;
}

static int grade_step(rpl_teller *t, const rpl_verdict *v, const char *a)
{
    unsigned long long j = 0;
    (void)sim_decimal(a, 0, 4, &j);
    int step = (int)v->ladder.step;
    /* the guidance allows the last known good for a start-up death too,
     * where stopping prewarm is the step */
    int also4 = v->rec == RPL_REC_START_UP && step == RPL_STEP_STOP_EXTRA;
    int ok = (int)j == step || (also4 && j == 4);
    if (step == RPL_STEP_NONE)
        sim_text_printf(&t->out, "5. 0, none (%s): %s.\n", mark(ok), v->ladder.why);
    else
        sim_text_printf(&t->out, "5. %d%s (%s): %s.\n", step,
                        also4 ? ", or 4 (the guidance allows the last known good for a "
                                "start-up death, only with a complete receipt)" : "",
                        mark(ok), v->ladder.why);
    if (ok)
        return 1;
    if (j == 0)
        sim_text_printf(&t->out, "   yours, none, is not it: the ladder answers this death.\n");
    else if (step == RPL_STEP_NONE)
        sim_text_printf(&t->out, "   yours, step %llu, is not it: no step of the ladder "
                        "answers this death.\n", j);
    else if ((int)j < step)
        sim_text_printf(&t->out, "   yours, step %llu, does not suffice (see why step %d "
                        "above).\n", j, step);
    else
        sim_text_printf(&t->out, "   yours, step %llu, is harder to undo, and step %d already "
                        "answers it.\n", j, step);
    return 0;
}

void rpl__drill_grade(rpl_teller *t, const tell_death *d, const rpl_verdict *v,
                      char answers[][RPL_ANSWER_MAX])
{
    sim_text_printf(&t->out, "\nthe answer:\n");
    int score = grade_stage(t, d, answers[0]);
    score += grade_level(t, d, answers[1]);
    score += grade_missing(t, d, v, answers[2]);
    score += grade_order(t, answers[3]);
    score += grade_step(t, v, answers[4]);
    sim_text_printf(&t->out, "the death: %s, %s. The record supports it: %s.\n", v->cls,
                    d->why, v->supports);
    rpl_ladder_text(&v->ladder, RPL_LADDER_INDENT, &t->out);
    sim_text_printf(&t->out, "score: %d of %d\n", score, RPL_DRILL_QUESTIONS);
}
