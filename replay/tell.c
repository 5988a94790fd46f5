/* tell.c - the teller of `oomsim explain`: each trace event of a
 * replication as a line for a person, the cycles from a start to a death
 * held back until the death, so that a death that repeats the same way
 * (the same lines at the same offsets) is told once with its count; why
 * each death happened, in the device's own terms, and what the evidence
 * supports.  The text goes into the teller's buffer, which the caller
 * takes and prints (rpl_teller_text): nothing here prints. */
#include "tell_int.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

rpl_teller *rpl_teller_create(const mdl_cell *cell, int full, int quiz)
{
    rpl_teller *t = calloc(1, sizeof *t);
    if (t == NULL)
        return NULL;
    rpl_life_init(&t->life);
    sim_error err;
    sim_error_clear(&err);
    t->open = trc_pairs_create(&err);
    if (t->open == NULL) {
        free(t);
        return NULL;
    }
    t->cell = cell;
    t->full = full;
    t->quiz = quiz;
    return t;
}

void rpl_teller_free(rpl_teller *t)
{
    if (t == NULL)
        return;
    trc_pairs_destroy(t->open);
    free(t->lines);
    free(t->prev);
    free(t->attempts);
    free(t->out.v);
    free(t);
}

const char *rpl_teller_text(rpl_teller *t, size_t *len, int *rc)
{
    if (rc != NULL)
        *rc = t->out.oom ? SIM_ENOMEM : SIM_OK;
    *len = t->out.n;
    t->out.n = 0; /* the next text is written over this one, after the caller's print */
    return *len > 0 ? t->out.v : NULL;
}

unsigned rpl_teller_deaths(const rpl_teller *t) { return t->ndeaths; }

void rpl_tell_header(rpl_teller *t, const char *scenario, const char *about,
                     const char *policy, unsigned long long rep)
{
    const mdl_cell *c = t->cell;
    if (about != NULL && about[0] != '\0' && !t->quiz) /* the drill would give it away */
        sim_text_printf(&t->out, "%s\n\n", about);
    if (t->quiz == 2) /* the drill: the names could give the class away */
        sim_text_printf(&t->out, "a scenario, replication %llu: an %s phone, %lld MiB of RAM, "
                        "running the app's candidate\n\n", rep,
                        c->device->os == MDL_OS_IOS ? "iOS" : "Android",
                        (long long)(c->device->ram >> 20));
    else
        sim_text_printf(&t->out, "%s, replication %llu: %s running %s (%s)\n\n", scenario,
                        rep, c->device->name, c->candidate->id, policy);
    sim_text_printf(&t->out, "%10s    %6s   %s\n", "time", "counted", "what happens");
}

void rpl_tell_summary(rpl_teller *t, const mdl_rep *r)
{
    sim_text_printf(&t->out, "\npeak %.1f MiB during %s; %u death%s; %llu request%s, %llu "
                    "completed\n",
                    TELL_MIB(r->peak),
                    r->peak_stage < MDL_STAGE_COUNT ? mdl_stage_name(r->peak_stage) : "-",
                    r->deaths_total, r->deaths_total == 1 ? "" : "s",
                    (unsigned long long)r->arrived, r->arrived == 1 ? "" : "s",
                    (unsigned long long)r->completed);
}

static double total(const int64_t v[TRC_MEM_COUNT], unsigned has)
{
    double s = 0;
    for (int c = 0; c < TRC_MEM_COUNT; c++)
        if (has >> c & 1u)
            s += (double)v[c];
    return s;
}

static void print_line(rpl_teller *t, const tell_line *l)
{
    sim_text_printf(&t->out, "%10.3f s  %6.0f MiB  %s\n", rpl__instant_s(l->t), l->mib, l->text);
}

/* Adds a line to the cycle being told (printed at once with --full). */
static void say(rpl_teller *t, const trc_event *e, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
static void back(rpl_teller *t, const trc_event *e);

/* Where the line names the event's request ("request 12", not "request
 * 123"): lines of repeated requests are compared around that number. */
static void mark_request(tell_line *l, const trc_event *e)
{
    l->req = -1;
    if (!(e->has & TRC_F_REQUEST) || e->request < 0)
        return;
    char needle[40];
    int n = snprintf(needle, sizeof needle, "request %lld", (long long)e->request);
    for (const char *p = strstr(l->text, needle); p != NULL; p = strstr(p + 1, needle)) {
        if (p[n] >= '0' && p[n] <= '9')
            continue;
        l->req = e->request;
        l->num_at = (uint16_t)(p - l->text + 8); /* after "request " */
        l->num_len = (uint16_t)(n - 8);
        return;
    }
}

static void say(rpl_teller *t, const trc_event *e, const char *fmt, ...)
{
    back(t, e);
    tell_line l;
    l.t = e->time_us;
    l.mib = (double)e->rss_mb;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(l.text, sizeof l.text, fmt, ap);
    va_end(ap);
    mark_request(&l, e);
    if (t->full) {
        print_line(t, &l);
        return;
    }
    if (t->nlines == t->cap) {
        size_t nc = t->cap ? 2 * t->cap : 64;
        tell_line *nv = realloc(t->lines, nc * sizeof *nv);
        if (nv == NULL) { /* no room to hold it back: tell it now */
            print_line(t, &l);
            return;
        }
        t->lines = nv;
        t->cap = nc;
    }
    t->lines[t->nlines++] = l;
}

/* The first event after a death whose relaunch was drawn: the user is
 * back (the delay that happened: a user away in the background comes back
 * later than the drawn delay). */
static void back(rpl_teller *t, const trc_event *e)
{
    if (!t->reopen_pending)
        return;
    t->reopen_pending = 0;
    t->bg = 0; /* the user reopens the app in front (a relaunch waits for it there) */
    t->gap = e->time_us - t->prev_death;
    t->has_gap = 1;
    if (t->full)
        sim_text_printf(&t->out, "%10.3f s  %6.0f MiB  the user reopens the app, %.1f s after the death\n",
               rpl__instant_s(e->time_us), 0.0, (double)t->gap / 1e6);
}

/* Lines a and b say the same but for their request's number. */
static int same_but_number(const tell_line *a, const tell_line *b)
{
    return a->mib == b->mib && a->num_at == b->num_at &&
           strncmp(a->text, b->text, a->num_at) == 0 &&
           strcmp(a->text + a->num_at + a->num_len, b->text + b->num_at + b->num_len) == 0;
}

/* The lines from k on about one request, or 0 when line k is about none. */
static size_t group_len(const tell_line *l, size_t n, size_t k)
{
    size_t j = k;
    while (j < n && l[k].req >= 0 && l[j].req == l[k].req)
        j++;
    return j - k;
}

/* Groups a and b (g lines each) are one request's lines told the same way,
 * at the same offsets from their first line. */
static int same_group(const tell_line *a, const tell_line *b, size_t g)
{
    for (size_t i = 0; i < g; i++)
        if (a[i].t - a[0].t != b[i].t - b[0].t || !same_but_number(&a[i], &b[i]))
            return 0;
    return 1;
}

/* Prints lines, a request whose lines come again the same way (its
 * arrival, run and completion at the same offsets and memory) told once,
 * then how many times it came again.  Two or more repeats are collapsed:
 * one is printed as it is. */
static void print_lines(rpl_teller *t, const tell_line *l, size_t n)
{
    size_t k = 0;
    while (k < n) {
        size_t g = group_len(l, n, k);
        if (g == 0) {
            print_line(t, &l[k++]);
            continue;
        }
        for (size_t i = 0; i < g; i++)
            print_line(t, &l[k + i]);
        size_t j = k + g;
        uint64_t more = 0;
        int in_order = 1;
        sim_time pmin = 0, pmax = 0;
        while (j < n && group_len(l, n, j) == g && same_group(&l[k], &l[j], g)) {
            sim_time p = l[j].t - l[j - g].t;
            pmin = more == 0 || p < pmin ? p : pmin;
            pmax = more == 0 || p > pmax ? p : pmax;
            in_order &= l[j].req == l[j - g].req + 1;
            more++;
            j += g;
        }
        if (more < 2) {
            k += g;
            continue;
        }
        char every[64], which[64];
        if (llround((double)pmin / 1e5) == llround((double)pmax / 1e5))
            snprintf(every, sizeof every, "%.1f s", (double)pmin / 1e6);
        else
            snprintf(every, sizeof every, "%.1f to %.1f s", (double)pmin / 1e6,
                     (double)pmax / 1e6);
        if (in_order)
            snprintf(which, sizeof which, "requests %lld to %lld", (long long)l[k + g].req,
                     (long long)l[j - g].req);
        else
            snprintf(which, sizeof which, "the last is request %lld", (long long)l[j - g].req);
        sim_text_printf(&t->out, "%10s    %6s   ... the same request repeats %llu more times, "
                        "every %s (%s)\n", "", "", (unsigned long long)more, every, which);
        k = j;
    }
}

/* The reopening that starts the cycle being printed. */
static void print_reopen(rpl_teller *t)
{
    if (!t->has_gap || t->nlines == 0)
        return;
    sim_text_printf(&t->out, "%10.3f s  %6.0f MiB  the user reopens the app, %.1f s after the death\n",
           rpl__instant_s(t->lines[0].t), 0.0, (double)t->gap / 1e6);
}

/* The cycle just ended is the last one printed again, shifted in time. */
static int same_cycle(const rpl_teller *t)
{
    if (t->nprev != t->nlines || t->nprev == 0)
        return 0;
    for (size_t k = 0; k < t->nlines; k++)
        if (t->lines[k].t - t->lines[0].t != t->prev[k].t - t->prev[0].t ||
            t->lines[k].mib != t->prev[k].mib || strcmp(t->lines[k].text, t->prev[k].text) != 0)
            return 0;
    return 1;
}

/* Prints how many times the last printed cycle came again. */
static void flush_repeats(rpl_teller *t)
{
    if (t->repeats == 0)
        return;
    const tell_death *d = t->ndeaths > 0 ? &t->deaths[t->ndeaths - 1] : NULL;
    int startup = d != NULL && !d->started;
    sim_text_printf(&t->out, "%10s    %6s   ... the same %s repeats %llu more time%s, every %.1f s%s", "", "",
           startup ? "start-up death" : "life and death", (unsigned long long)t->repeats,
           t->repeats == 1 ? "" : "s", (double)t->period_sum / 1e6 / (double)t->repeats,
           startup ? ": a boot loop" : "");
    if (t->relaunch_min == t->relaunch_max)
        sim_text_printf(&t->out, " (the user reopened the app %.1f s after each)\n", t->relaunch_min);
    else
        sim_text_printf(&t->out, " (the user reopened the app %.1f to %.1f s after each)\n", t->relaunch_min,
               t->relaunch_max);
    t->repeats = 0;
    t->period_sum = 0;
}

/* The cycle ends with a death: told, or counted as a repeat of the last. */
static void end_cycle(rpl_teller *t, sim_time death)
{
    if (t->full) {
        t->prev_death = death;
        return;
    }
    t->collapsed = same_cycle(t);
    if (t->collapsed) {
        double g = (double)t->gap / 1e6;
        if (t->repeats == 0 || g < t->relaunch_min)
            t->relaunch_min = g;
        if (t->repeats == 0 || g > t->relaunch_max)
            t->relaunch_max = g;
        t->repeats++;
        t->period_sum += death - t->prev_death;
    } else {
        flush_repeats(t);
        print_reopen(t);
        print_lines(t, t->lines, t->nlines);
        tell_line *swap = t->prev;
        size_t cap = t->cap_prev;
        t->prev = t->lines;
        t->cap_prev = t->cap;
        t->nprev = t->nlines;
        t->lines = swap;
        t->cap = cap;
    }
    t->prev_death = death;
    t->nlines = 0;
    t->has_gap = 0;
}

void rpl_tell_finish(rpl_teller *t)
{
    if (t->reopen_pending)
        t->nolater = 1;
    if (t->full) {
        if (t->nolater)
            sim_text_printf(&t->out, "%10s    %6s   the user does not reopen the app before the session ends\n",
                   "", "");
        return;
    }
    flush_repeats(t);
    print_reopen(t);
    print_lines(t, t->lines, t->nlines);
    t->nlines = 0;
    if (t->nolater)
        sim_text_printf(&t->out, "%10s    %6s   the user does not reopen the app before the session ends\n", "",
               "");
}



/* The record's lines, as the system writes them (why.c). */
static void say_record(rpl_teller *t, const trc_event *e, const rpl_exit *x)
{
    char lines[TELL_RECORD_LINES][TELL_LINE_MAX];
    unsigned n = rpl__record_lines(t, e, x, lines);
    for (unsigned k = 0; k < n; k++)
        say(t, e, "%s", lines[k]);
}

/* Remembers what name holds until its release (kind: a stage, or TELL_PAGE). */
static void held_put(rpl_teller *t, const char *name, int kind, double bytes)
{
    unsigned k = 0;
    while (k < t->nheld && (t->held[k].kind != kind || strcmp(t->held[k].name, name) != 0))
        k++;
    if (k < t->nheld) { /* a page entered again adds its hold; a stage begun again replaces */
        t->held[k].bytes = kind == TELL_PAGE ? t->held[k].bytes + bytes : bytes;
        return;
    }
    if (t->nheld == TELL_HELD)
        return; /* full: its release is told without its size */
    snprintf(t->held[k].name, sizeof t->held[k].name, "%s", name);
    t->held[k].kind = kind;
    t->held[k].bytes = bytes;
    t->nheld++;
}

/* An exit: what the process that died held goes with it; a service
 * process's death (PACKAGE:NAME) leaves the main process's page holds. */
static void forget_held(rpl_teller *t, const trc_event *e)
{
    int svc = (e->has & TRC_F_PROCESS) && strchr(e->process, ':') != NULL;
    for (unsigned k = t->nheld; k-- > 0;)
        if (!svc || t->held[k].kind != TELL_PAGE)
            t->held[k] = t->held[--t->nheld];
}

/* What name held, now released (forgotten); -1 when it is not known. */
static double held_take(rpl_teller *t, const char *name, int kind)
{
    for (unsigned k = 0; k < t->nheld; k++)
        if (t->held[k].kind == kind && strcmp(t->held[k].name, name) == 0) {
            double b = t->held[k].bytes;
            t->held[k] = t->held[--t->nheld];
            return b;
        }
    return -1;
}

static void tell_exit(rpl_teller *t, const trc_event *e)
{
    forget_held(t, e); /* what the process held goes with it */
    tell_death d;
    memset(&d, 0, sizeof d);
    d.started = rpl_life_at_exit(&t->life, t->open, e, d.stage, sizeof d.stage);
    d.signs = t->life.signs;
    d.time_us = e->time_us;
    rpl_life_event(&t->life, e, t->index - 1);
    const char *stage = d.stage;
    rpl_exit_of_event(e, t->index - 1, &d.record);
    d.bg = t->bg;
    /* the kill line say_record shows beside an exit record: one death, joined */
    d.kill_line = d.record.source == RPL_EXIT_INFO && (e->has & TRC_F_EXIT) &&
                  ((e->has & TRC_F_LOG) || d.record.reason_code == MDL_AEI_LOW_MEMORY);
    d.samples = t->samples;
    memset(&t->samples, 0, sizeof t->samples); /* the next life samples anew */
    d.unseen = d.record.source == RPL_EXIT_INFO && (e->has & TRC_F_EXIT) &&
                       (e->mem_has >> TRC_MEM_GPU & 1u)
                   ? e->mem[TRC_MEM_GPU]
                   : 0;
    rpl_verdict v;
    rpl__verdict(&d, &v);
    rpl__why_text(t, e, v.kind, d.why, sizeof d.why);
    /* an app of several processes names each (PACKAGE:NAME: a process of its own) */
    char who[96] = "the process";
    if ((e->has & TRC_F_PROCESS) && t->cell->workload->has_proc)
        snprintf(who, sizeof who, "%s %.63s", strchr(e->process, ':') != NULL
                 ? "the service process" : "the app's main process", e->process);
    if (t->quiz == 2) /* the drill asks for the stage */
        say(t, e, "%s is gone", who);
    else if (t->quiz)
        say(t, e, "%s is gone%s%s", who, stage[0] ? ", during " : "", stage);
    else
        say(t, e, "%s dies: %s, %s%s: %s", who, v.cls, stage[0] ? "during " : "while no "
            "stage was running", stage, d.why);
    char llm[2][TELL_LINE_MAX];
    int answering = (d.signs & RPL_SIGN_ANSWERING) != 0;
    for (int k = 0, n = t->quiz ? 0 : rpl__tell_gen_death(t, e, answering, llm); k < n; k++)
        say(t, e, "%s", llm[k]);
    say_record(t, e, &d.record);
    if (t->ndeaths < TELL_DEATHS)
        t->deaths[t->ndeaths++] = d;
    else
        t->more_deaths++;
    end_cycle(t, e->time_us);
}

/* Attempts of request r so far (0 when it is not tracked). */
static uint32_t *attempts_of(rpl_teller *t, int64_t r)
{
    if (r < 0 || r >= (int64_t)1 << 26)
        return NULL;
    if ((size_t)r >= t->nreq) {
        size_t n = t->nreq ? t->nreq : 64;
        while (n <= (size_t)r)
            n *= 2;
        uint32_t *nv = realloc(t->attempts, n * sizeof *nv);
        if (nv == NULL)
            return NULL;
        memset(nv + t->nreq, 0, (n - t->nreq) * sizeof *nv);
        t->attempts = nv;
        t->nreq = n;
    }
    return &t->attempts[r];
}

static unsigned attempt(rpl_teller *t, int64_t r)
{
    uint32_t *a = attempts_of(t, r);
    return a != NULL && *a > 0 ? *a : 1;
}

/* The page model's notes (docs/model.md "The phone's pages"): 1 when e
 * was one and has been told. */
static int tell_pages_note(rpl_teller *t, const trc_event *e)
{
    static const struct {
        const char *error, *who;
    } kills[] = {{"cached_app_killed", "a cached app"},
                 {"previous_app_killed", "the previous app (the one the user left)"},
                 {"front_app_killed", "the app in front (the one the user switched to)"}};
    char pg[200];
    rpl__pages_text(e, pg, sizeof pg, t->cell->device->xnu_pages);
    if (strcmp(e->error, "weights_dropped") == 0) {
        say(t, e, "reclaim drops %.0f MiB of the model's mapped weights (%s)",
            TELL_MIB(PG(e, TRC_PG_DROPPED)), pg);
        return 1;
    }
    if (strcmp(e->error, "process_killed") == 0 || strcmp(e->error, "successor_killed") == 0) {
        /* the iPhone's: band and cause */
        say(t, e, "memorystatus kills %s (band %lld, %s): %s",
            e->error[0] == 's' ? "the app the user switched to" : "another process",
            (long long)PG(e, TRC_PG_ADJ), (e->has & TRC_F_ACTION) ? e->action : "?", pg);
        return 1;
    }
    if (strcmp(e->error, "refault") == 0) {
        say(t, e, "the inference reads %.0f MiB of its dropped weights back from storage "
            "(+%.0f ms)", TELL_MIB(PG(e, TRC_PG_REFAULT)), (double)e->duration_us / 1000.0);
        return 1;
    }
    for (size_t k = 0; k < sizeof kills / sizeof *kills; k++) {
        if (strcmp(e->error, kills[k].error) != 0 || !(e->has & TRC_F_PAGES))
            continue;
        int oom = (e->has & TRC_F_ACTION) && strcmp(e->action, "kernel_oom") == 0;
        say(t, e, "%s kills %s (%s%sadj %lld): %s", oom ? "the kernel's OOM killer" : "lmkd",
            kills[k].who, oom || !(e->has & TRC_F_ACTION) ? "" : e->action,
            oom || !(e->has & TRC_F_ACTION) ? "" : ", ", (long long)PG(e, TRC_PG_ADJ), pg);
        return 1;
    }
    return 0;
}

/* An owner's session opens, closes or leaks (docs/model.md "Owners"): 1
 * when e was one and has been told. */
static int tell_session(rpl_teller *t, const trc_event *e)
{
    if (!(e->has & TRC_F_OWNER))
        return 0;
    char last[48] = "";
    if (e->has & TRC_F_REQUEST)
        snprintf(last, sizeof last, ", its last request %lld", (long long)e->request);
    if (strcmp(e->error, "session_open") == 0) {
        say(t, e, "%s: %s opens session #%lld at %s, %.1f MiB", e->part, e->owner,
            (long long)e->session, e->action, TELL_MIB(total(e->alloc, e->alloc_has)));
    } else if (strcmp(e->error, "session_leaked") == 0) {
        say(t, e, "%s: %s closes without releasing session #%lld%s: leaked, and the %s stays "
            "resident", e->part, e->owner, (long long)e->session, last, e->part);
    } else if (strncmp(e->action, "still held by ", 14) == 0) {
        say(t, e, "%s: %s releases session #%lld%s; the %s stays resident: %s holds it", e->part,
            e->owner, (long long)e->session, last, e->part, e->action + 14);
    } else {
        say(t, e, "%s: %s's session #%lld closes%s: %s", e->part, e->owner,
            (long long)e->session, last, e->action);
    }
    return 1;
}

/* The notes: samples that only say what happened. */
/* The failed delegate's memory at the fallback: still held beside it, or
 * given back (before it, or once it ended).  1 when e was such a note. */
static int tell_delegate(rpl_teller *t, const trc_event *e)
{
    int held = strcmp(e->error, "delegate_held") == 0;
    if (!held && strcmp(e->error, "delegate_released") != 0)
        return 0;
    const char *part = (e->has & TRC_F_PART) ? e->part : "";
    double all = t->delegate_alloc, kept = t->delegate_keep;
    if (strcmp(part, t->delegate_part) != 0 || all <= 0)
        return 1; /* a delegate refused at once held nothing */
    if (held)
        say(t, e, "%s: the failed delegate still holds %.1f MiB (%.1f MiB of buffers, %.1f MiB "
            "of transient compile memory): the fallback prepares beside it", part,
            TELL_MIB(all), TELL_MIB(kept), TELL_MIB(all - kept));
    else
        say(t, e, "%s: the failed delegate's %.1f MiB (%.1f MiB of buffers, %.1f MiB of "
            "transient compile memory) is released", part, TELL_MIB(all), TELL_MIB(kept),
            TELL_MIB(all - kept));
    t->delegate_alloc = 0;
    return 1;
}

/* A page's hold made at its enter, or released at its leave (`action`:
 * "enter PAGE", "leave PAGE").  1 when e was such a note. */
static int tell_page(rpl_teller *t, const trc_event *e)
{
    int hold = strcmp(e->error, "page_hold") == 0;
    if (!hold && strcmp(e->error, "page_release") != 0)
        return 0;
    const char *page = (e->has & TRC_F_ACTION) && strlen(e->action) > 6 ? e->action + 6
                                                                         : "the page";
    double b = total(e->alloc, e->alloc_has);
    if (hold) {
        held_put(t, page, TELL_PAGE, b);
        say(t, e, "the page holds %.1f MiB (camera buffers, a preview) until the user leaves "
            "it", TELL_MIB(b));
    } else if ((b = held_take(t, page, TELL_PAGE)) >= 0) {
        say(t, e, "the user leaves %s: its hold of %.1f MiB is released", page, TELL_MIB(b));
    } else {
        say(t, e, "the user leaves %s: its hold is released", page);
    }
    return 1;
}

/* An update step: the app stops if it ran (`action: app_stopped`); a
 * relaunch the user had pending is forgotten, the path's next cold_start
 * starting the app.  1 when e was such a note. */
static int tell_update(rpl_teller *t, const trc_event *e)
{
    int which = rpl_update_of(e), os = which == 1;
    if (which == 0)
        return 0;
    t->reopen_pending = 0; /* not the user's return */
    t->updated = which;
    t->has_gap = 0;
    const char *what = os ? "the phone's OS is updated" : "the model's runtime is updated";
    if ((e->has & TRC_F_ACTION) && strcmp(e->action, "app_stopped") == 0) {
        t->nheld = 0; /* what it held went */
        say(t, e, "%s: the app stops (%s, not a death: no exit record), and whatever it held "
            "goes", what, os ? "a reboot" : "its runtime replaced");
    } else {
        say(t, e, "%s while the app is not running: its next start meets the new version", what);
    }
    return 1;
}

/* A thermal step the phone reached or left (`thermal:NAME`), with its speed
 * when the scenario's device gives it. */
static void tell_thermal(rpl_teller *t, const trc_event *e, const char *name)
{
    const mdl_device *d = t->cell->device;
    for (unsigned k = 1; k <= d->thermal.nsteps; k++)
        if (strcmp(name, mdl_thermal_name(d->os, k)) == 0) {
            say(t, e, "the phone is hot from sustained work (thermal status %s): every "
                "execution from now runs at %.0f%% of its speed", name,
                100 * d->thermal.speed[k - 1]);
            return;
        }
    if (strcmp(name, mdl_thermal_name(d->os, 0)) == 0)
        say(t, e, "the phone has cooled (thermal status %s): executions at full speed again",
            name);
    else
        say(t, e, "the phone reports thermal status %s", name);
}

static void tell_note(rpl_teller *t, const trc_event *e)
{
    static const struct {
        const char *error, *text;
    } notes[] = {
        {"memory_warning", "a memory warning (onTrimMemory / didReceiveMemoryWarning)"},
        {"cached_app_killed", "lmk kills a cached app to make room"},
        {"previous_app_killed", "lmkd kills the previous app (the one the user left, adj 700)"},
        {"front_app_killed", "lmkd kills the app in front (the one the user switched to, adj 0)"},
        {"background", "the user switches away: the app is in the background (importance "
                       "400: the background kill limits apply)"},
        {"foreground", "the user returns: the app is in the foreground again"},
        {"pressure_spike", "other apps' memory spikes for an instant: the kill rules check "
                           "the app against it"},
        {"cached_adj", "the app has been in the background long enough to be cached (adj "
                       "900): the cached level of the low-memory killer applies now"},
        {"idle_band", "the app has been suspended 2 s: it moves from the aging band (20) to "
                      "the idle band (0), where memorystatus kills first"},
        {"service_restart", "the system restarts the model's service process and the app is "
                            "bound to it again: the model loads from the start"},
        {"service_unbound", "the app's main process is killed: its binding to the model's "
                            "service goes with it, and the service with its model"}};
    int64_t r = (e->has & TRC_F_REQUEST) ? e->request : -1;
    if (rpl__tell_gen_note(t, e) || tell_pages_note(t, e) || tell_session(t, e) ||
        tell_delegate(t, e) || tell_page(t, e) || tell_update(t, e))
        return;
    if (strcmp(e->error, "background") == 0)
        t->bg = 1;
    else if (strcmp(e->error, "foreground") == 0)
        t->bg = t->suspended = 0;
    else if (strcmp(e->error, "idle_band") == 0)
        t->suspended = 1;
    if (strcmp(e->error, "timeout") == 0) {
        say(t, e, "request %lld times out: the client gives up on attempt %u%s", (long long)r,
            attempt(t, r), t->cell->policy.cancel_on_timeout
                               ? ", which is cancelled"
                               : ", which runs on (cancel_on_timeout is false)");
    } else if (strcmp(e->error, "retry") == 0 || strcmp(e->error, "retry_duplicate") == 0) {
        uint32_t *a = attempts_of(t, r);
        if (a != NULL)
            ++*a;
        say(t, e, "the client retries request %lld: attempt %u, payload %.1f MiB%s",
            (long long)r, attempt(t, r), TELL_MIB(total(e->alloc, e->alloc_has)),
            e->error[5] == '_' ? ", while the earlier attempt still runs: another working set "
                                 "for one request" : "");
    } else if (strcmp(e->error, "rejected") == 0) {
        say(t, e, "request %lld is rejected: the queue is full or the app refuses work",
            (long long)r);
    } else if (strcmp(e->error, "dropped_stale") == 0) {
        say(t, e, "request %lld is dropped: the queue is full and gives up its stalest "
            "request, its payload freed, for the one arriving", (long long)r);
    } else if (strncmp(e->error, "thermal:", 8) == 0) {
        tell_thermal(t, e, e->error + 8);
    } else if (strcmp(e->error, "part_failed") == 0) {
        t->part_failed++;
        say(t, e, "request %lld fails: a part it needs could not be made ready in this process",
            (long long)r);
    } else if (strcmp(e->error, "background_gpu_denied") == 0) {
        say(t, e, "request %lld fails: iOS runs no GPU work for an app in the background",
            (long long)r);
    } else if (strcmp(e->error, "app_baseline") == 0) {
        say(t, e, "the app's own memory (UI, caches, libraries): %.1f MiB, held until the "
            "process ends", TELL_MIB(total(e->alloc, e->alloc_has)));
    } else if (strcmp(e->error, "service_baseline") == 0) {
        say(t, e, "the model's service process starts: its own memory %.1f MiB, held until it "
            "ends", TELL_MIB(total(e->alloc, e->alloc_has)));
    } else if (strcmp(e->error, "background") == 0 && PG(e, TRC_PG_SUCCESSOR) > 0) {
        say(t, e, "the user switches away: the app is in the background (importance 400: the "
            "background kill limits apply); the app switched to takes %.0f MiB",
            TELL_MIB(PG(e, TRC_PG_SUCCESSOR)));
    } else if (strcmp(e->error, "service_died") == 0) {
        say(t, e, "request %lld fails: the model's service process is gone (service_died); "
            "the app lives", (long long)r);
    } else {
        for (size_t k = 0; k < sizeof notes / sizeof *notes; k++)
            if (strcmp(e->error, notes[k].error) == 0)
                say(t, e, "%s", notes[k].text);
    }
}

static void tell_begin(rpl_teller *t, const trc_event *e, const char *part)
{
    if (e->stage == TRC_INFERENCE) {
        unsigned a = attempt(t, e->request);
        char which[64] = "";
        if (a > 1)
            snprintf(which, sizeof which, ", attempt %u,", a);
        say(t, e, "%s: request %lld%s runs (session %lld), working set %.1f MiB", part,
            (long long)e->request, which, (long long)e->session,
            TELL_MIB(total(e->alloc, e->alloc_has)));
        char ctx[TELL_LINE_MAX];
        if (rpl__tell_gen_context(t, e, ctx, sizeof ctx))
            say(t, e, "%s", ctx);
    } else if (e->stage == TRC_CACHE) {
        held_put(t, part, TRC_CACHE, total(e->alloc, e->alloc_has));
        say(t, e, "%s: the compiled cache is not valid: rebuilding, %.1f MiB more", part,
            TELL_MIB(total(e->alloc, e->alloc_has)));
    } else {
        double made = total(e->alloc, e->alloc_has), kept = total(e->keep, e->keep_has);
        held_put(t, part, (int)e->stage, made - kept);
        if (e->stage == TRC_DELEGATE_PREPARE) { /* what a failure would leave held */
            snprintf(t->delegate_part, sizeof t->delegate_part, "%s", part);
            t->delegate_alloc = total(e->alloc, e->alloc_has);
            t->delegate_keep = total(e->keep, e->keep_has);
        }
        /* mapped file pages are memory the phone does not count: said so */
        double file = (e->alloc_has >> TRC_MEM_FILE & 1u) ? (double)e->alloc[TRC_MEM_FILE] : 0;
        char mapped[96] = "";
        if (file > 0 && !(t->cell->device->counts_mask & MDL_CAT_BIT(MDL_CAT_FILE)))
            snprintf(mapped, sizeof mapped, "; %.1f MiB of it mapped file pages, not counted",
                     TELL_MIB(file));
        say(t, e, "%s: %s begins, %.1f MiB (%.1f MiB of it stays%s)", part,
            trc_stage_name(e->stage), TELL_MIB(total(e->alloc, e->alloc_has)),
            TELL_MIB(total(e->keep, e->keep_has)), mapped);
    }
    t->last_java = (e->alloc_has >> TRC_MEM_JAVA & 1u) ? e->alloc[TRC_MEM_JAVA] : 0;
}

/* What follows a delegate's failure: its fallback, or the part's. */
static const char *after_delegate(const rpl_teller *t)
{
    const mdl_candidate *c = t->cell->candidate;
    if (strcmp(c->fallback, "none") != 0)
        return "the fallback takes over";
    return c->release_on_init_failure ? "no fallback: the part cannot be used in this process, "
                                        "its memory is released"
                                      : "no fallback: the part cannot be used in this process, "
                                        "and the failed delegate's memory is never released";
}

static void tell_end(rpl_teller *t, const trc_event *e, const char *part)
{
    int err = (e->has & TRC_F_ERROR) != 0;
    /* the transient a stage made goes at its end (a failed delegate's is told with the fallback) */
    double freed = e->stage != TRC_INFERENCE ? held_take(t, part, (int)e->stage) : 0;
    t->stale += err && strcmp(e->error, "cache_stale") == 0;
    if (err && strcmp(e->error, "delegate_failed") == 0)
        say(t, e, "%s: the delegate fails to prepare: %s", part, after_delegate(t));
    else if (err && strcmp(e->error, "delegate_unavailable") == 0)
        say(t, e, "%s: this phone has no such delegate: %s", part, after_delegate(t));
    else if (err && strcmp(e->error, "cache_stale") == 0)
        say(t, e, "%s: runtime_prepare fails: the compiled cache its key found valid was built "
            "for the %s before the update; the part cannot be used in this process, its memory "
            "is released", part, t->updated == 1 ? "OS version" : t->updated == 2 ?
            "runtime version" : "runtime or OS version");
    else if (e->stage == TRC_INFERENCE && err && strcmp(e->error, "background_gpu_denied") == 0)
        say(t, e, "%s: request %lld: its GPU work is stopped: its working set is freed", part,
            (long long)e->request);
    else if (err && strcmp(e->error, "background_gpu_denied") == 0)
        say(t, e, "%s: the delegate cannot prepare: iOS gives no GPU to an app in the "
            "background; %s", part, after_delegate(t));
    else if (e->stage == TRC_INFERENCE && err && strcmp(e->error, "abandoned") == 0 &&
             t->cell->policy.cancel_on_timeout)
        say(t, e, "%s: request %lld: the attempt given up on stops, cancelled: its working set "
            "is freed", part, (long long)e->request);
    else if (e->stage == TRC_INFERENCE && err && strcmp(e->error, "abandoned") == 0)
        say(t, e, "%s: request %lld: an attempt the client gave up on finishes; only now is "
            "its working set freed", part, (long long)e->request);
    else if (e->stage == TRC_INFERENCE)
        say(t, e, "%s: request %lld done: its working set is freed", part,
            (long long)e->request);
    else if (e->stage == TRC_CACHE && freed >= 0)
        say(t, e, "%s: the compiled cache is rebuilt: its %.1f MiB of compile memory freed",
            part, TELL_MIB(freed));
    else if (e->stage == TRC_CACHE)
        say(t, e, "%s: the compiled cache is rebuilt: its compile memory freed", part);
    else if (freed > 0)
        say(t, e, "%s: %s ends: its %.1f MiB of transient memory freed", part,
            trc_stage_name(e->stage), TELL_MIB(freed));
    else
        say(t, e, "%s: %s ends", part, trc_stage_name(e->stage));
}

static void tell_recovery(rpl_teller *t, const trc_event *e)
{
    const mdl_candidate *lkg = t->cell->lkg;
    mdl_action a;
    if (mdl_action_parse(e->action, &a) == SIM_OK && a == MDL_ACT_FALLBACK_LKG && lkg != NULL)
        say(t, e, "recovery in force for this start: fallback_lkg: the app now runs %s, the "
            "last known good", lkg->id);
    else
        say(t, e, "recovery in force for this start: %s", e->action);
}

/* The user's drawn delay before reopening: the reopening itself is told
 * when the user is back (back()). */
static void tell_relaunch(rpl_teller *t, const trc_event *e)
{
    (void)e;
    t->reopen_pending = 1;
}

int rpl_tell(void *ctx, const trc_event *e, sim_error *err)
{
    rpl_teller *t = ctx;
    t->index++;
    int rc = trc_pairs_add(t->open, e, t->index - 1, err);
    if (rc != SIM_OK)
        return rc;
    int kind = (e->has & TRC_F_KIND) ? (int)e->kind : TRC_SAMPLE;
    if (kind != TRC_EXIT_EVENT) {
        rpl_life_event(&t->life, e, t->index - 1);
        t->last_java = 0; /* a death right after a begin is that begin's allocation */
    }
    const char *part = (e->has & TRC_F_PART) ? e->part : "";
    if (kind == TRC_SAMPLE && (e->has & TRC_F_ERROR)) {
        tell_note(t, e);
        return SIM_OK;
    }
    switch (kind) {
    case TRC_BEGIN:
        tell_begin(t, e, part);
        break;
    case TRC_END:
        tell_end(t, e, part);
        break;
    case TRC_EXIT_EVENT:
        tell_exit(t, e);
        break;
    case TRC_RECOVERY:
        tell_recovery(t, e);
        break;
    default:
        if (e->stage == TRC_RELEASE) {
            say(t, e, "%s is released", part);
            rpl__tell_gen_release(t, e);
        } else if (e->stage == TRC_EXIT && (e->has & TRC_F_DURATION)) {
            tell_relaunch(t, e);
        } else if (!(e->has & TRC_F_REQUEST) && !(e->has & TRC_F_NEEDS)) {
            tell_samples *m = &t->samples; /* the system's periodic sample: kept, not told */
            if (m->n++ == 0) {
                m->first_us = e->time_us;
                m->first_mb = e->rss_mb;
            }
            m->last_us = e->time_us;
            m->last_mb = e->rss_mb;
        } else if (e->has & TRC_F_NEEDS) {
            uint32_t *a = attempts_of(t, e->request);
            if (a != NULL)
                *a = 1;
            /* a request whose part is not loaded waits for its load, not in the queue */
            int waits = !rpl_life_holds(&t->life, e->needs);
            say(t, e, "request %lld arrives: needs %s, payload %.1f MiB, %s%lld queued%s",
                (long long)e->request, e->needs, TELL_MIB(total(e->alloc, e->alloc_has)),
                waits ? "waiting for its load (" : "", (long long)e->queue, waits ? ")" : "");
        }
        break;
    }
    return SIM_OK;
}
