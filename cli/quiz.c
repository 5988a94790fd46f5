/* quiz.c - `oomsim explain --quiz`: an on-call drill.  The narration above
 * it showed the evidence a person would have (the memory timeline, the
 * exit records, lmkd's lines) with the causes hidden; this asks for the
 * class of the first death and the recovery that fits it, reads the two
 * answers (from the terminal, or one per line from --answers FILE), then
 * reveals the answer and the reasoning. */
#include "explain_int.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

static const char *const classes[] = {"low_memory", "system_reclaim", "java_crash",
                                      "native_crash", "anr",          "watchdog",
                                      "other",      "unknown"};
#define NCLASSES (sizeof classes / sizeof *classes)

static const char *const recoveries[] = {
    "stop prewarm or start in safe mode, a smaller candidate, or the last known good",
    "fewer resident models, sessions and tasks: release idle parts, reduce concurrency",
    "release models when the app goes to the background",
    "keep model bytes out of the Java heap (mmap or native buffers)",
    "move model work off the main thread",
    "isolate the delegate: the CPU path or the last known good, keeping the evidence",
    "take model work out of the launch",
    "collect more evidence before changing anything"};
#define NRECOVERIES (sizeof recoveries / sizeof *recoveries)

/* The recovery (1-based) that fits death d of class cls. */
static unsigned fitting(const xp_death *d, const char *cls)
{
    if (strcmp(cls, "low_memory") == 0)
        return d->startup ? 1 : 2;
    static const char *const by_class[] = {"", "", "system_reclaim", "java_crash", "anr",
                                           "native_crash", "watchdog"};
    for (unsigned k = 2; k < sizeof by_class / sizeof *by_class; k++)
        if (strcmp(cls, by_class[k]) == 0)
            return k + 1;
    return 8;
}

/* The next answer, trimmed, into buf ("" at the end of the input). */
static void answer(FILE *in, char *buf, size_t n)
{
    buf[0] = '\0';
    if (in == NULL || fgets(buf, (int)n, in) == NULL) {
        buf[0] = '\0';
        return;
    }
    size_t len = strlen(buf);
    while (len > 0 && isspace((unsigned char)buf[len - 1]))
        buf[--len] = '\0';
    size_t lead = 0;
    while (isspace((unsigned char)buf[lead]))
        lead++;
    memmove(buf, buf + lead, len - lead + 1);
}

int xp_quiz(const teller *t, const char *answers)
{
    if (t->ndeaths == 0) {
        printf("\nno death in this replication: nothing to ask (try another --replication or "
               "--cell)\n");
        return CLI_OK;
    }
    FILE *in = stdin;
    if (answers != NULL && (in = fopen(answers, "r")) == NULL) {
        fprintf(stderr, "oomsim: %s: cannot read the answers\n", answers);
        return CLI_INPUT;
    }
    const xp_death *d = &t->deaths[0];
    rpl_verdict v;
    rpl_diagnose(&d->record, NULL, &v);
    unsigned right_rec = fitting(d, v.cls);
    printf("\nthe drill: the first death, at %.3f s\n", (double)d->record.timestamp_ms / 1e3);
    printf("question 1: what ended the process? one of:");
    for (unsigned k = 0; k < NCLASSES; k++)
        printf(" %s", classes[k]);
    printf("\n> ");
    fflush(stdout);
    char a1[128], a2[128];
    answer(in, a1, sizeof a1);
    printf("%s\nquestion 2: which recovery fits it?\n", a1);
    for (unsigned k = 0; k < NRECOVERIES; k++)
        printf("  %u) %s\n", k + 1, recoveries[k]);
    printf("> ");
    fflush(stdout);
    answer(in, a2, sizeof a2);
    printf("%s\n", a2);
    if (in != stdin)
        fclose(in);
    int ok1 = strcasecmp(a1, v.cls) == 0;
    unsigned long long pick = 0;
    int ok2 = cli_number(a2, 1, NRECOVERIES, &pick) == SIM_OK && pick == right_rec;
    printf("\nthe answer:\n");
    printf("1. %s (%s). The process died %s%s: %s. The record supports it: %s.\n",
           v.cls, ok1 ? "right" : "your answer was not it", d->stage[0] ? "during " : "",
           d->stage, d->why, v.supports);
    printf("2. %u) %s (%s). %s.\n", right_rec, recoveries[right_rec - 1],
           ok2 ? "right" : "your answer was not it", xp_advice(d, &v));
    printf("score: %d of 2\n", ok1 + ok2);
    return CLI_OK;
}
