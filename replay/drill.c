/* drill.c - the drill of `oomsim explain --drill`: the quiz that hides
 * the reason codes, the importance and the class words from the evidence
 * and asks, in on-call's order, what the record says (the class, the app
 * in front or behind, which process), then the stage, the evidence level a
 * record reaches alone, the ladder's step, the fix, and what the verdict
 * becomes when one fact changes.  The choices are shuffled by the drill's
 * seed; each answer is graded with why the right one is right and why the
 * one chosen is not (docs/on-call.md "The drill"). */
#include "tell_int.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#include <gsl/gsl_randist.h>

enum { Q_CLASS, Q_WHERE, Q_PROCESS, Q_STAGE, Q_LEVEL, Q_STEP, Q_FIX, Q_CHANGE };

static const char *const wheres[] = {"foreground", "background"};
static const char *const processes[] = {"main", "service", "isolated", "other"};
static const char *const process_means[] = {
    "the app's main process: the record names the package itself",
    "a service process of the app's own (PACKAGE:NAME): the app may live on without it",
    "an isolated process (a sandboxed renderer, an isolated service): not the app",
    "another app's process: the phone freeing memory, not this app's death"};
static const char *const stages[] = {"download", "load",      "runtime_prepare",
                                     "delegate_prepare", "inference", "cache",
                                     "release", "none"};
#define NSTAGES (sizeof stages / sizeof *stages)
static const char *const levels[] = {"confirmed", "supported", "unconfirmed"};
static const char *const level_means[] = {
    ("a system record that matches a timeline of the same process and version, or a record "
     "joined to the system's kill line of the same death"),
    "a record that names the class, with nothing in it alone that ties it to a timeline",
    "a death with no record that names a reason"};

/* The facts the last question changes, and the verdicts they lead to. */
enum { CHANGE_BACKGROUND, CHANGE_FOREGROUND, CHANGE_RECORDS, CHANGE_VERSION };
static const char *const change_asks[] = {
    ("the same death after the user left the app (the record at importance 400, the app in "
     "the background)"),
    "the same death with the app in front (the record at importance 100)",
    ("the same death on a phone that keeps exit records (Android 11 and later), which writes "
     "LOW_MEMORY at importance 100 for it"),
    "the same record naming another app version than this build"};
static const char *const outcomes[] = {
    "the same class: the change does not move the verdict's class",
    ("a background memory death (system_reclaim): check that state is restored, release in "
     "the background"),
    "a foreground memory death (low_memory): reduce what is resident at once",
    "nothing can be said: no record names a reason"};

static const unsigned nchoices[RPL_DRILL_QUESTIONS] = {
    RPL_CLASS_COUNT, 2, 4, NSTAGES, 3, 5, 4, 4};

/* The outcome (canonical index) of a verdict against the death's own. */
static unsigned outcome_of(const rpl_verdict *now, const rpl_verdict *was)
{
    if (now->kind == was->kind)
        return 0;
    if (now->kind == RPL_CLASS_SYSTEM_RECLAIM)
        return 1;
    return rpl_class_is_memory(now->kind) ? 2 : 3;
}

/* The fact to change for death d (verdict v), and the verdict after it. */
static void pick_change(rpl_teller *t, const tell_death *d, const rpl_verdict *v)
{
    rpl_exit x = d->record;
    int bg = (rpl_record_signs(v->kind, &x, d->started) & RPL_SIGN_BACKGROUND) != 0;
    if (v->kind == RPL_CLASS_UNKNOWN) {
        t->drill.change = CHANGE_RECORDS;
        x.source = RPL_EXIT_INFO;
        x.reason_code = MDL_AEI_LOW_MEMORY;
        x.has_importance = 1, x.importance = 100;
    } else if (!rpl_class_is_memory(v->kind)) {
        t->drill.change = CHANGE_VERSION;
        snprintf(x.app_version, sizeof x.app_version, "another build");
    } else {
        t->drill.change = bg ? CHANGE_FOREGROUND : CHANGE_BACKGROUND;
        x.has_importance = 1, x.importance = bg ? 100 : 400;
        if (x.source == RPL_LMKD)
            x.has_adj = 1, x.adj = bg ? 0 : 900;
        if (x.jetsam_event)
            snprintf(x.states, sizeof x.states, "%s", bg ? "frontmost" : "suspended");
    }
    rpl_diagnose_told(&x, d->stage, d->started, d->signs, &t->drill.changed);
}

/* The fixes offered: the right one first, then three of rows that answer
 * other verdicts (a row of the same verdict, the generic one included, is
 * advice the guidance may allow for it: never offered as wrong). */
static void pick_fixes(rpl_teller *t, const rpl_verdict *v, gsl_rng *r)
{
    const char *fix[64], *name[64];
    size_t n = 0;
    rpl_step step;
    for (size_t k = 0; n < 64 && (name[n] = rpl_ladder_row(k, &step, &fix[n])) != NULL; k++)
        if (!rpl_ladder_row_fits(k, v->rec) && strcmp(fix[n], v->ladder.fix) != 0)
            n++;
    t->drill.fixes[0] = v->ladder.fix;
    t->drill.fix_rows[0] = "";
    for (unsigned k = 1; k < 4; k++) { /* three distinct, drawn without replacement */
        size_t j = gsl_rng_uniform_int(r, n);
        t->drill.fixes[k] = fix[j], t->drill.fix_rows[k] = name[j];
        fix[j] = fix[n - 1], name[j] = name[n - 1], n--;
    }
}

int rpl_drill_prepare(rpl_teller *t, unsigned death, uint64_t seed)
{
    const tell_death *d = &t->deaths[death];
    rpl_verdict v; /* the verdict the teller gives it (rpl__verdict) */
    rpl_diagnose_told(&d->record, d->stage, d->started, d->signs, &v);
    sim_stream s;
    if (sim_stream_init(&s, NULL, seed, death, 0x6472696c6cu /* "drill" */) != SIM_OK)
        return SIM_ENOMEM;
    memset(&t->drill, 0, sizeof t->drill);
    pick_change(t, d, &v);
    pick_fixes(t, &v, sim_stream_rng(&s));
    for (unsigned q = 0; q < RPL_DRILL_QUESTIONS; q++) {
        t->drill.n[q] = nchoices[q];
        for (unsigned k = 0; k < nchoices[q]; k++)
            t->drill.shown[q][k] = (unsigned char)k;
        if (q != Q_STEP) /* the ladder's steps keep their order */
            gsl_ran_shuffle(sim_stream_rng(&s), t->drill.shown[q], nchoices[q], 1);
    }
    sim_stream_release(&s);
    return SIM_OK;
}

/* Choice k (canonical) of question q, as it is shown. */
static const char *choice(const rpl_teller *t, unsigned q, unsigned k)
{
    switch (q) {
    case Q_CLASS: return rpl_class_name((rpl_class)k);
    case Q_WHERE: return wheres[k];
    case Q_PROCESS: return process_means[k];
    case Q_STAGE: return stages[k];
    case Q_LEVEL: return levels[k];
    case Q_FIX: return t->drill.fixes[k];
    case Q_CHANGE: return outcomes[k];
    default: return k == 0 ? "none of them" : rpl_step_name((rpl_step)k);
    }
}

static const char *const prompts[RPL_DRILL_QUESTIONS] = {
    "question 1: what ended the process? (a class's name or its number)",
    "question 2: was the app in front or in the background when it died?",
    "question 3: which process died?",
    "question 4: which stage was running when the process died? (its name or number)",
    ("question 5: read alone, without this timeline, what evidence level does its record "
     "reach?"),
    "question 6: which step of the recovery ladder does this death call for?",
    "question 7: which fix keeps it from happening again?",
    "question 8: what would the verdict become for"};

void rpl__drill_ask(rpl_teller *t, unsigned death, unsigned q)
{
    (void)death;
    sim_text *o = &t->out;
    if (q == Q_CHANGE)
        sim_text_printf(o, "%s %s?\n", prompts[q], change_asks[t->drill.change]);
    else
        sim_text_printf(o, "%s\n", prompts[q]);
    for (unsigned k = 0; k < t->drill.n[q]; k++)
        sim_text_printf(o, "  %u) %s\n", q == Q_STEP ? k : k + 1,
                        choice(t, q, t->drill.shown[q][k]));
    sim_text_printf(o, "> ");
}

/* The names question q's answers may give (NULL: numbers only; a class's
 * name is read by rpl_class_parse). */
static const char *const *names_of(unsigned q)
{
    return q == Q_WHERE     ? wheres
           : q == Q_PROCESS ? processes
           : q == Q_STAGE   ? stages
           : q == Q_LEVEL   ? levels
                            : NULL;
}

/* The canonical index of answer a to question q (a shown number, or one of
 * names[n] in any case), from 1, or 0. */
static unsigned canonical(const rpl_teller *t, unsigned q, const char *a,
                          const char *const *names, size_t n)
{
    unsigned long long k;
    if (sim_decimal(a, 1, t->drill.n[q], &k) == SIM_OK)
        return (unsigned)t->drill.shown[q][k - 1] + 1;
    if (q == Q_CLASS && rpl_class_parse(a, 1) != RPL_CLASS_COUNT)
        return (unsigned)rpl_class_parse(a, 1) + 1;
    for (size_t j = 0; names != NULL && j < n; j++)
        if (strcasecmp(a, names[j]) == 0)
            return (unsigned)j + 1;
    return 0;
}

int rpl__drill_form(const rpl_teller *t, unsigned q, char *answer, size_t n, const char **form)
{
    static const char *const forms[RPL_DRILL_QUESTIONS] = {
        "a class's name or the number of a choice, 1 to 9",
        "foreground, background, or the number of a choice, 1 to 2",
        "main, service, isolated, other, or the number of a choice, 1 to 4",
        "a stage's name, none, or the number of a choice, 1 to 8",
        "confirmed, supported, unconfirmed, or the number of a choice, 1 to 3",
        "a step, 0 to 4", "the number of a choice, 1 to 4", "the number of a choice, 1 to 4"};
    *form = forms[q];
    unsigned long long k;
    if (q == Q_STEP)
        return sim_decimal(answer, 0, 4, &k) == SIM_OK;
    if (q == Q_STAGE && strcasecmp(answer, "no stage") == 0)
        snprintf(answer, n, "none");
    const char *const *names = names_of(q);
    unsigned c = canonical(t, q, answer, names, nchoices[q]);
    if (c == 0)
        return 0;
    if (names != NULL || q == Q_CLASS) /* the choice's name, as the answer echoes it */
        snprintf(answer, n, "%s", q == Q_CLASS ? rpl_class_name((rpl_class)(c - 1))
                                               : names[c - 1]);
    return 1;
}

static const char *mark(int ok) { return ok ? "right" : "your answer was not it"; }

/* The canonical choice answered to question q (from 1; 0 none): a name
 * the form rewrote it to, or the number of a choice as shown. */
static unsigned answered(const rpl_teller *t, unsigned q, const char *a)
{
    const char *const *names = names_of(q);
    return canonical(t, q, a, names, nchoices[q]);
}

static int grade_class(rpl_teller *t, const rpl_verdict *v, const char *a)
{
    unsigned k = answered(t, Q_CLASS, a);
    int ok = k == (unsigned)v->kind + 1;
    sim_text_printf(&t->out, "1. %s (%s): the record supports it: %s.\n", v->cls, mark(ok),
                    v->supports);
    if (!ok && k > 0)
        sim_text_printf(&t->out, "   yours, %s, needs %s; this record is not that.\n",
                        rpl_class_name((rpl_class)(k - 1)),
                        rpl__class_needs((rpl_class)(k - 1)));
    return ok;
}

static int grade_where(rpl_teller *t, const tell_death *d, const rpl_verdict *v, const char *a)
{
    unsigned k = answered(t, Q_WHERE, a);
    int ok = k == (unsigned)d->bg + 1;
    sim_text_printf(&t->out, "2. %s (%s): %s. ", wheres[d->bg], mark(ok),
                    d->bg ? "the user had left the app before it died (the timeline says when)"
                          : "the app had not left the screen");
    if ((v->kind == RPL_CLASS_LOW_MEMORY && !d->bg) ||
        (v->kind == RPL_CLASS_SYSTEM_RECLAIM && d->bg))
        sim_text_printf(&t->out, "A memory kill of the app in front is low_memory, behind it "
                        "system_reclaim: the class said it already.\n");
    else if (v->kind == RPL_CLASS_LOW_MEMORY)
        sim_text_printf(&t->out, "Behind, and still low_memory: the kill was over the app's "
                        "own limit, which holds in front and behind alike.\n");
    else if (rpl_class_is_memory(v->kind))
        sim_text_printf(&t->out, "The %s names the killer, not where the app was.\n", v->cls);
    else
        sim_text_printf(&t->out, "For a %s it changes the advice little: the class names the "
                        "cause.\n", v->cls);
    return ok;
}

static int grade_process(rpl_teller *t, const tell_death *d, const rpl_verdict *v,
                         const char *a)
{
    unsigned right = rpl_exit_isolated(&d->record)             ? 3
                     : strchr(d->record.process, ':') != NULL ? 2
                                                              : 1;
    if (v->kind == RPL_CLASS_UNKNOWN && right == 1) { /* no record: the timeline's process */
        unsigned k = answered(t, Q_PROCESS, a);
        sim_text_printf(&t->out, "3. main (%s): the timeline's process; no record names "
                        "one.\n", mark(k == 1));
        return k == 1;
    }
    unsigned k = answered(t, Q_PROCESS, a);
    int ok = k == right;
    sim_text_printf(&t->out, "3. %s (%s): %s.\n", processes[right - 1], mark(ok),
                    process_means[right - 1]);
    if (right == 2)
        sim_text_printf(&t->out, "   Its importance 100 is its binding from the app in front, "
                        "not the app: read every process's records.\n");
    if (!ok && k > 0)
        sim_text_printf(&t->out, "   yours, %s, is not it: the record's process is %.63s.\n",
                        processes[k - 1], d->record.process[0] ? d->record.process : "the app");
    return ok;
}

static int grade_stage(rpl_teller *t, const tell_death *d, const char *a)
{
    unsigned k = answered(t, Q_STAGE, a);
    const char *right = d->stage[0] ? d->stage : "none", *chose = k ? stages[k - 1] : "?";
    int ok = strcmp(right, chose) == 0;
    if (d->stage[0])
        sim_text_printf(&t->out, "4. %s (%s): the last stage begun in this life and not "
                        "ended at the death; its begin has no end.\n", right, mark(ok));
    else
        sim_text_printf(&t->out, "4. none (%s): no stage was running; the last one had ended "
                        "before the death.\n", mark(ok));
    if (!ok && strcmp(chose, "none") == 0)
        sim_text_printf(&t->out, "   yours, none, is not it: %s had begun and not ended.\n",
                        right);
    else if (!ok)
        sim_text_printf(&t->out, "   yours, %s, is not it: it was not running at the death "
                        "(it had ended, or did not begin in this life).\n", chose);
    return ok;
}

static int grade_level(rpl_teller *t, const tell_death *d, const rpl_verdict *v, const char *a)
{
    rpl_exit x = d->record;
    if (d->kill_line) /* lmkd's line beside it: the system's own account, one death */
        x.joined_line = 1, x.joined_source = RPL_LMKD, x.joined_gap_ms = 0;
    rpl_verdict alone;
    rpl_diagnose(&x, NULL, &alone);
    unsigned k = answered(t, Q_LEVEL, a);
    size_t r = 0;
    while (r < 2 && strcmp(levels[r], alone.evidence) != 0)
        r++;
    int ok = k == r + 1;
    const char *with = alone.kind == RPL_CLASS_UNKNOWN
                           ? "With the timeline it stays unconfirmed: nothing names a reason"
                       : r == 0 ? "The kill line shown beside the record is the system's own "
                                  "account of the same death"
                       : x.source == RPL_EXIT_INFO && x.reason_code == 2 &&
                               alone.kind != RPL_CLASS_KERNEL_OOM
                           ? "With the timeline it stays supported: signal 9 does not name "
                             "memory"
                           : "With a timeline of the same process and version it is confirmed";
    const char *own = rpl_class_missing(&d->record, v->kind);
    sim_text_printf(&t->out, "5. %s (%s): read alone it is %s. %s. Still missing with the "
                    "timeline: %s.\n", levels[r], mark(ok), level_means[r], with,
                    own != NULL ? own : "nothing for the class");
    if (!ok && k > 0)
        sim_text_printf(&t->out, "   yours, %s, would need %s.\n", levels[k - 1],
                        level_means[k - 1]);
    return ok;
}

static int grade_step(rpl_teller *t, const tell_death *d, const rpl_verdict *v, const char *a)
{
    unsigned long long j = 0;
    (void)sim_decimal(a, 0, 4, &j);
    int step = (int)v->ladder.step;
    /* the guidance allows the last known good for a start-up death too (no
     * request run yet), where stopping prewarm is the step */
    int also4 = (v->rec == RPL_REC_START_UP || d->started == 0) &&
                step == RPL_STEP_STOP_EXTRA;
    int ok = (int)j == step || (also4 && j == 4);
    if (step == RPL_STEP_NONE)
        sim_text_printf(&t->out, "6. 0, none (%s): %s.\n", mark(ok), v->ladder.why);
    else
        sim_text_printf(&t->out, "6. %d%s (%s): %s.\n", step,
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

static int grade_fix(rpl_teller *t, const char *a)
{
    unsigned k = answered(t, Q_FIX, a);
    int ok = k == 1;
    sim_text_printf(&t->out, "7. %s (%s).\n", t->drill.fixes[0], mark(ok));
    if (!ok && k > 0)
        sim_text_printf(&t->out, "   yours is the fix of another failure mode (the verdict "
                        "table's row `%s`), not of what this life and record showed.\n",
                        t->drill.fix_rows[k - 1]);
    return ok;
}

static int grade_change(rpl_teller *t, const rpl_verdict *v, const char *a)
{
    const rpl_verdict *c = &t->drill.changed;
    unsigned right = outcome_of(c, v), k = answered(t, Q_CHANGE, a);
    int ok = k == right + 1;
    sim_text_printf(&t->out, "8. %s (%s): with %s, the record supports %s", outcomes[right],
                    mark(ok), change_asks[t->drill.change], c->cls);
    if (c->ladder.step != RPL_STEP_NONE)
        sim_text_printf(&t->out, ", step %d: %s.\n", (int)c->ladder.step, c->ladder.fix);
    else
        sim_text_printf(&t->out, ": %s.\n", c->ladder.fix);
    if (t->drill.change == CHANGE_VERSION)
        sim_text_printf(&t->out, "   A record of another build does not match this timeline: "
                        "supported at most, until a trace of that build matches it.\n");
    if (!ok && k > 0)
        sim_text_printf(&t->out, "   yours, \"%s\", is not what the record would say.\n",
                        outcomes[k - 1]);
    return ok;
}

void rpl__drill_grade(rpl_teller *t, const tell_death *d, const rpl_verdict *v,
                      char answers[][RPL_ANSWER_MAX])
{
    sim_text_printf(&t->out, "\nthe answer:\n");
    int score = grade_class(t, v, answers[Q_CLASS]);
    score += grade_where(t, d, v, answers[Q_WHERE]);
    score += grade_process(t, d, v, answers[Q_PROCESS]);
    score += grade_stage(t, d, answers[Q_STAGE]);
    score += grade_level(t, d, v, answers[Q_LEVEL]);
    score += grade_step(t, d, v, answers[Q_STEP]);
    score += grade_fix(t, answers[Q_FIX]);
    score += grade_change(t, v, answers[Q_CHANGE]);
    sim_text_printf(&t->out, "the death: %s, %s.\n", v->cls, d->why);
    rpl_ladder_text(&v->ladder, RPL_LADDER_INDENT, &t->out);
    sim_text_printf(&t->out, "score: %d of %d\n", score, RPL_DRILL_QUESTIONS);
}
