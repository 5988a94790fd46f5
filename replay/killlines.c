/* killlines.c - Android's kill lines in a log (docs/on-call.md "Kill
 * lines"): lmkd's "Kill '...'" (and the kernel driver's older
 * "Killing '...'"), the kernel OOM killer's "Killed process PID (NAME)",
 * each with the time its logcat prefix gives, and the joining of a kill
 * line to the ApplicationExitInfo record of the same death (same pid,
 * within a few seconds): one death, whose evidence is both.
 *
 * lmkd's field list differs by version (docs/model.md "Kill lines"), so
 * each field is looked for by name; its reason is read from the words
 * lmkd prints after "reason: " (lmkd.cpp's kill_desc), not from a code. */
#include "exits_int.h"

#include <ctype.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* "min", "low" or "high" just before at: the watermark names lmkd prints
 * ("%s watermark is breached", lmkd.cpp mp_event_psi); a vendor's own
 * ("min2x watermark") is not one of them. */
static int aosp_watermark(const char *s, const char *at)
{
    static const char *const names[] = {"min ", "low ", "high "};
    for (size_t k = 0; k < 3; k++) {
        size_t w = strlen(names[k]);
        if ((size_t)(at - s) >= w && memcmp(at - w, names[k], w) == 0 &&
            (at - w == s || at[-(ptrdiff_t)w - 1] == ' '))
            return 1;
    }
    return 0;
}

/* lmkd's reason from the words it logs: the most specific phrase first. */
static mdl_lmkd_reason reason_of_words(const char *s, size_t n)
{
    static const struct {
        const char *words, *also;
        mdl_lmkd_reason r;
    } phrases[] = {
        {"even after kill", NULL, MDL_LMKD_PRESSURE_AFTER_KILL},
        {"not responding", NULL, MDL_LMKD_NOT_RESPONDING},
        {"low on swap", "thrashing", MDL_LMKD_LOW_SWAP_AND_THRASHING},
        {"swap is low", NULL, MDL_LMKD_LOW_MEM_AND_SWAP},
        {"swap utilization is high", NULL, MDL_LMKD_LOW_MEM_AND_SWAP_UTIL},
        {"direct reclaim and thrashing", NULL, MDL_LMKD_DIRECT_RECL_AND_THRASHING},
        {"watermark is breached and thrashing", NULL, MDL_LMKD_LOW_MEM_AND_THRASHING},
        {"filecache is low", NULL, MDL_LMKD_LOW_FILECACHE_AFTER_THRASHING},
        {"watermark is breached", NULL, MDL_LMKD_LOW_MEM},
    };
    const char *wm = rpl__find(s, n, "watermark");
    for (size_t k = 0; k < sizeof phrases / sizeof *phrases; k++)
        if (rpl__find(s, n, phrases[k].words) != NULL &&
            (phrases[k].also == NULL || rpl__find(s, n, phrases[k].also) != NULL))
            /* a watermark lmkd does not name is a vendor's reason, told in its words */
            return wm != NULL && !aosp_watermark(s, wm) ? MDL_LMKD_NONE : phrases[k].r;
    mdl_lmkd_reason r; /* a reason by its name, as oomsim's own traces carry it */
    char name[40];
    size_t k = 0;
    while (k < n && k + 1 < sizeof name && (isupper((unsigned char)s[k]) || s[k] == '_'))
        name[k] = s[k], k++;
    name[k] = '\0';
    return mdl_lmkd_reason_parse(name, &r) == SIM_OK ? r : MDL_LMKD_NONE;
}

static int digits_at(const char *s, size_t n, size_t at, size_t count)
{
    for (size_t k = 0; k < count; k++)
        if (at + k >= n || !isdigit((unsigned char)s[at + k]))
            return 0;
    return 1;
}

static int num_at(const char *s, size_t at, size_t count)
{
    int v = 0;
    for (size_t k = 0; k < count; k++)
        v = v * 10 + (s[at + k] - '0');
    return v;
}

/* "HH:MM:SS.mmm" at s[at..]: milliseconds of the day, or -1. */
static int64_t clock_at(const char *s, size_t n, size_t at)
{
    if (at + 8 > n || !digits_at(s, n, at, 2) || s[at + 2] != ':' || !digits_at(s, n, at + 3, 2) ||
        s[at + 5] != ':' || !digits_at(s, n, at + 6, 2))
        return -1;
    int h = num_at(s, at, 2), mi = num_at(s, at + 3, 2), sec = num_at(s, at + 6, 2), ms = 0;
    if (at + 8 < n && s[at + 8] == '.' && digits_at(s, n, at + 9, 3))
        ms = num_at(s, at + 9, 3);
    if (h > 23 || mi > 59 || sec > 60)
        return -1;
    return ((int64_t)(h * 60 + mi) * 60 + sec) * 1000 + ms;
}

/* The time of a logcat line's prefix: "2024-12-04 10:23:45.678" (-v year)
 * and "1733307825.678" (-v epoch) into timestamp_ms, "12-04 10:23:45.678"
 * (threadtime, time: no year) into yearless_ms.  The zone is the phone's,
 * as dumpsys prints exit-info's timestamps: the two compare. */
static void log_time(const char *s, size_t n, rpl_exit *x)
{
    size_t a = 0;
    while (a < n && s[a] == ' ')
        a++;
    if (digits_at(s, n, a, 4) && s[a + 4] == '-' && a + 23 <= n) {
        x->timestamp_ms = rpl__timestamp_ms(s + a, 23); /* "2024-12-04 10:23:45.678" */
        x->local_clock = x->timestamp_ms >= 0; /* logcat prints the phone's clock */
        return;
    }
    if (digits_at(s, n, a, 2) && s[a + 2] == '-' && digits_at(s, n, a + 3, 2) && a + 5 < n &&
        s[a + 5] == ' ') {
        int64_t ms = clock_at(s, n, a + 6);
        int m = num_at(s, a, 2), d = num_at(s, a + 3, 2);
        if (ms >= 0 && m >= 1 && m <= 12 && d >= 1 && d <= 31)
            x->yearless_ms = RPL_YEARLESS(m, d, ms);
        return;
    }
    size_t k = a;
    while (k < n && isdigit((unsigned char)s[k]))
        k++;
    if (k - a >= 9 && k - a <= 11 && k < n && s[k] == '.' && digits_at(s, n, k + 1, 3)) {
        int64_t sec;
        if (rpl__parse_int(s + a, k - a, &sec) && sec < INT64_C(253402300799)) {
            x->timestamp_ms = sec * 1000 + num_at(s, k + 1, 3);
            x->log_utc = 1; /* -v epoch: UTC, where dumpsys prints the phone's zone */
        }
    }
}

int64_t rpl_yearless_near(int64_t yearless_ms, int64_t near_ms)
{
    int64_t md = yearless_ms / 86400000, ms = yearless_ms % 86400000;
    unsigned m = (unsigned)(md / 32), d = (unsigned)(md % 32);
    /* the year of near_ms: from its days (civil_from_days, the year part) */
    int64_t z = near_ms / 86400000 + 719468;
    int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    int64_t doe = z - era * 146097;
    int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    int64_t mp = (5 * doy + 2) / 153;
    int64_t y = yoe + era * 400 + (mp >= 10);
    int64_t best = -1, best_gap = 0;
    for (int64_t yy = y - 1; yy <= y + 1; yy++) {
        int64_t t = rpl__days_from_civil(yy, m, d) * 86400000 + ms;
        int64_t gap = t > near_ms ? t - near_ms : near_ms - t;
        if (best < 0 || gap < best_gap)
            best = t, best_gap = gap;
    }
    return best;
}

/* The number just before "kB swap" ("kb swap" where lmkd has no kill
 * info): the swap freed, whatever other sizes the line gives before it
 * (a vendor's "anon rss" and "dmabuf"); -1 when the line gives none. */
static int64_t swap_of(const char *q, const char *end)
{
    for (const char *p = q; p + 7 <= end; p++) {
        if ((memcmp(p, "kB swap", 7) != 0 && memcmp(p, "kb swap", 7) != 0) || p == q ||
            !isdigit((unsigned char)p[-1]))
            continue;
        const char *d = p;
        while (d > q && isdigit((unsigned char)d[-1]))
            d--;
        int64_t v;
        if (rpl__parse_int(d, (size_t)(p - d), &v) && v >= 0)
            return v;
    }
    return -1;
}

/* "... (PID), uid U, oom_score_adj A to free N kB rss, M kB swap; reason: ..."
 * after lmkd's process name, the fields by name.  The victim's own fields
 * come before "to free" in every form (lmkd's, Samsung's "Reclaim", the
 * kernel driver's): an adj after it is the kill's threshold ("because
 * cache ... for oom_score_adj 900", "pressure oom_adj 900"). */
static void lmkd_fields(const char *q, const char *end, rpl_exit *x)
{
    int64_t v;
    const char *fr = rpl__find(q, (size_t)(end - q), "to free ");
    const char *own = fr != NULL ? fr : end;
    size_t n = (size_t)(own - q);
    const char *pid = rpl__find(q, n, "(");
    if (pid != NULL && rpl__parse_int(pid + 1, (size_t)(end - pid - 1), &v))
        x->pid = v;
    const char *uid = rpl__find(q, n, "uid ");
    if (uid != NULL && rpl__parse_int(uid + 4, (size_t)(end - uid - 4), &v) && v >= 0)
        x->uid = v;
    const char *adj = rpl__find(q, n, "oom_score_adj ");
    size_t al = 14;
    if (adj == NULL)
        adj = rpl__find(q, n, "adj "), al = 4;
    if (adj != NULL && rpl__parse_int(adj + al, (size_t)(end - adj) - al, &v) && v >= -1000 &&
        v <= 1001)
        x->has_adj = 1, x->adj = (int)v;
    if (fr != NULL && rpl__parse_int(fr + 8, (size_t)(end - fr - 8), &v) && v >= 0)
        x->rss_kb = v;
    x->swap_kb = swap_of(own, end);
    const char *why = rpl__find(q, (size_t)(end - q), "reason: ");
    const char *because = rpl__find(own, (size_t)(end - own), "because ");
    if (why != NULL) {
        rpl__copy_text(x->description, why + 8, (size_t)(end - why - 8));
        x->lmkd = reason_of_words(why + 8, (size_t)(end - why - 8));
    } else if (because != NULL) { /* the older forms: the pressure or the cache limit */
        rpl__copy_text(x->description, because + 8, (size_t)(end - because - 8));
    }
}

/* "Out of memory: Killed process 4321 (com.example.app) total-vm:..., ...
 * UID:10123 ... oom_score_adj:0" (mm/oom_kill.c), and the older kernels'
 * "Killed process 4321 (NAME) total-vm:...", which followed their "Out of
 * memory: Kill process 4321 (NAME) score S or sacrifice child" (the
 * choice, not the kill: not read, so one death is one record). */
static int read_kernel(const char *s, size_t n, uint64_t line, rpl_exit *x)
{
    const char *k = rpl__find(s, n, "Killed process ");
    size_t skip = 15;
    if (k == NULL)
        return 0;
    const char *p = k + skip, *end = s + n;
    int64_t v;
    if (!rpl__parse_int(p, (size_t)(end - p), &v))
        return 0;
    const char *lp = rpl__find(p, (size_t)(end - p), " (");
    const char *rp = lp != NULL ? memchr(lp, ')', (size_t)(end - lp)) : NULL;
    if (lp == NULL || rp == NULL)
        return 0;
    rpl__exit_init(x, RPL_KERNEL, line);
    x->pid = v;
    x->kernel_oom = 1;
    rpl__copy_text(x->process, lp + 2, (size_t)(rp - lp - 2));
    const char *uid = rpl__find(rp, (size_t)(end - rp), "UID:");
    if (uid != NULL && rpl__parse_int(uid + 4, (size_t)(end - uid - 4), &v) && v >= 0)
        x->uid = v;
    const char *adj = rpl__find(rp, (size_t)(end - rp), "oom_score_adj:");
    if (adj != NULL && rpl__parse_int(adj + 14, (size_t)(end - adj - 14), &v) && v >= -1000 &&
        v <= 1000)
        x->has_adj = 1, x->adj = (int)v;
    const char *anon = rpl__find(rp, (size_t)(end - rp), "anon-rss:");
    if (anon != NULL && rpl__parse_int(anon + 9, (size_t)(end - anon - 9), &v) && v >= 0)
        x->rss_kb = v;
    rpl__copy_text(x->description, "the kernel's OOM killer", 23);
    log_time(s, n, x);
    return 1;
}

/* killinfo's layouts by their count of fields (lmkd's event.logtags, tag
 * 10195355): 25 from 12cacae (2019), the wakeup fields from d7b4fcb (29),
 * TaskSwapSize 30th from 282437f (its two weeks at 6th, 4884890, not
 * read), GPU from 940e7cf (31), Thrashing and MaxThrashing from 39b5480
 * (33), the PSI averages from 014dd71 (38).  Every layout starts Pid,
 * Uid, OomAdj, MinOomAdj, TaskSize (kB), kill_reason; MemFree is 7th,
 * SwapTotal 13th and SwapFree 14th (kB). */
static int killinfo_layout(size_t count)
{
    return count == 25 || count == 29 || count == 30 || count == 31 || count == 33 ||
           count == 38;
}

/* lmkd's kill_reason number (statslog.h enum kill_reasons, appended to
 * since af2be4c, never renumbered; -1 NONE) as the model's reason. */
static mdl_lmkd_reason reason_of_number(int64_t k)
{
    return k >= 0 && k < MDL_LMKD_COUNT - 1 ? (mdl_lmkd_reason)(k + 1) : MDL_LMKD_NONE;
}

#define KILLINFO_MAX 40

/* "killinfo: [4321,10234,900,...]" of the events log (logcat -b events):
 * one kill, by number, no name (lmkd logs the name on its "Kill" line). */
static int read_killinfo(const char *s, size_t n, uint64_t line, rpl_exit *x)
{
    const char *k = rpl__find(s, n, "killinfo: [");
    if (k == NULL)
        return 0;
    const char *p = k + 11, *end = s + n;
    const char *close = memchr(p, ']', (size_t)(end - p));
    if (close == NULL)
        return 0;
    int64_t f[KILLINFO_MAX];
    size_t count = 0;
    while (p < close && count < KILLINFO_MAX) {
        const char *c = memchr(p, ',', (size_t)(close - p));
        const char *e = c != NULL ? c : close;
        const char *dot = memchr(p, '.', (size_t)(e - p)); /* the PSI averages are floats */
        if (!rpl__parse_int(p, (size_t)((dot != NULL ? dot : e) - p), &f[count]))
            return 0;
        count++;
        p = c != NULL ? c + 1 : close;
    }
    if (p < close || count < 6)
        return 0;
    rpl__exit_init(x, RPL_LMKD, line);
    x->killinfo = 1;
    x->pid = f[0];
    if (f[1] >= 0)
        x->uid = f[1];
    if (f[2] >= -1000 && f[2] <= 1001)
        x->has_adj = 1, x->adj = (int)f[2];
    if (f[4] >= 0)
        x->rss_kb = f[4];
    x->lmkd = reason_of_number(f[5]);
    int known = killinfo_layout(count);
    if (known && count >= 30 && f[29] >= 0)
        x->swap_kb = f[29];
    char th[48] = "";
    if (known && count >= 33)
        snprintf(th, sizeof th, ", thrashing %lld%% (max %lld%%)", (long long)f[31],
                 (long long)f[32]);
    if (!known)
        snprintf(x->description, sizeof x->description, "killinfo of %zu fields, a layout lmkd "
                 "never wrote: the first six read", count);
    else if (f[5] >= MDL_LMKD_COUNT - 1 || f[5] < -1)
        snprintf(x->description, sizeof x->description, "killinfo reason %lld: a vendor's "
                 "number, not one of lmkd's", (long long)f[5]);
    else {
        char d[320]; /* cut to the description's size below */
        snprintf(d, sizeof d, "killinfo reason %lld%s, min adj %lld%s, swap free %lld of %lld "
                 "kB", (long long)f[5], f[5] < 0 ? " (none: not lmkd's PSI decision)" : "",
                 (long long)f[3], th, (long long)f[13], (long long)f[12]);
        rpl__copy_text(x->description, d, strlen(d));
    }
    log_time(s, n, x);
    return 1;
}

int rpl__read_kill_line(const char *s, size_t n, uint64_t line, rpl_exit *x)
{
    static const char *const starts[] = {"Kill '", "Killing '", "Reclaim '"};
    const char *k = NULL;
    size_t skip = 0;
    for (size_t j = 0; j < 3 && k == NULL; j++)
        k = rpl__find(s, n, starts[j]), skip = strlen(starts[j]);
    if (k == NULL)
        return read_killinfo(s, n, line, x) || read_kernel(s, n, line, x);
    const char *p = k + skip, *end = s + n;
    const char *q = memchr(p, '\'', (size_t)(end - p));
    if (q == NULL)
        return 0;
    rpl__exit_init(x, RPL_LMKD, line);
    rpl__copy_text(x->process, p, (size_t)(q - p));
    lmkd_fields(q, end, x);
    log_time(s, n, x);
    return 1;
}

/* The start of a log line: a logcat prefix (a date, a month-day, epoch
 * seconds, or the brief "I lowmemorykiller:" / "I/lowmemorykiller("), a
 * kernel line's "<6>" or "[ 123.4]"; 0 for text that is none of them (a
 * line cut by whoever posted the log). */
static int log_start(const char *s, size_t n)
{
    size_t a = 0;
    if (n > 2 && s[0] == '<' && isdigit((unsigned char)s[1]))
        return 1;
    if (n > 0 && s[0] == '[')
        return 1;
    if (digits_at(s, n, a, 4) && n > 4 && s[4] == '-')
        return n > 11 && clock_at(s, n, 11) >= 0;
    if (digits_at(s, n, a, 2) && n > 5 && s[2] == '-' && s[5] == ' ')
        return clock_at(s, n, 6) >= 0;
    size_t k = 0;
    while (k < n && isdigit((unsigned char)s[k]))
        k++;
    if (k >= 9 && k <= 11 && k < n && s[k] == '.' && digits_at(s, n, k + 1, 3))
        return 1;
    if (n > 3 && strchr("VDIWEF", s[0]) != NULL && (s[1] == ' ' || s[1] == '/')) {
        size_t t = 2;
        while (t < n && (isalnum((unsigned char)s[t]) || s[t] == '_' || s[t] == '.'))
            t++;
        return t > 2 && t < n && (s[t] == ':' || s[t] == '(');
    }
    return 0;
}

/* A line that is itself a record: not a continuation. */
static int is_record(const char *s, size_t n)
{
    static const char *const marks[] = {"Kill '", "Killing '", "Reclaim '", "killinfo: [",
                                        "Killed process ", "ApplicationExitInfo"};
    for (size_t k = 0; k < sizeof marks / sizeof *marks; k++)
        if (rpl__find(s, n, marks[k]) != NULL)
            return 1;
    return 0;
}

int rpl__kill_line_open(const char *s, size_t n, const rpl_exit *x)
{
    if (x->source != RPL_LMKD || x->killinfo)
        return 0;
    int depth = 0;
    for (size_t k = 0; k < n; k++)
        depth += s[k] == '(' ? 1 : s[k] == ')' ? -1 : 0;
    char last = n > 0 ? s[n - 1] : ',';
    const char *rss = rpl__find(s, n, "rss,");
    return !x->has_adj || x->rss_kb < 0 || depth > 0 || strchr(",;:(", last) != NULL ||
           (n >= 7 && memcmp(s + n - 7, "because", 7) == 0) ||
           (rss != NULL && rpl__find(rss, (size_t)(s + n - rss), "swap") == NULL);
}

const char *rpl__kill_line_more(const char *s, size_t n, const char *next, size_t nn,
                                size_t *len)
{
    size_t a = 0;
    while (a < nn && (next[a] == ' ' || next[a] == '\t'))
        a++;
    while (nn > a && (next[nn - 1] == '\r' || next[nn - 1] == ' '))
        nn--;
    const char *t = next + a;
    size_t tn = nn - a;
    if (tn == 0 || is_record(t, tn))
        return NULL;
    if (log_start(t, tn)) {
        /* lmkd's and the driver's own next line: "to free ..." (or the
         * driver's "cache ... is below limit" after its "because") */
        const char *fr = rpl__find(t, tn, "to free ");
        int because = n >= 7 && memcmp(s + n - 7, "because", 7) == 0;
        const char *m = fr;
        if (m == NULL && because) {
            const char *c = rpl__find(t, tn, "] ");
            m = c != NULL ? c + 2 : NULL;
        }
        if (m == NULL)
            return NULL;
        while (m < t + tn && *m == ' ')
            m++;
        *len = (size_t)(t + tn - m);
        return m;
    }
    *len = tn; /* a line cut by whoever posted it: the rest of the same line */
    return t;
}

/* How far apart a kill line and a record are in time (-1: not known). */
static int64_t gap_of(const rpl_exit *line, const rpl_exit *rec)
{
    if (rec->timestamp_ms < 0)
        return -1;
    int64_t t = line->timestamp_ms >= 0 ? line->timestamp_ms
                : line->yearless_ms >= 0 ? rpl_yearless_near(line->yearless_ms, rec->timestamp_ms)
                                         : -1;
    if (t < 0)
        return -1;
    if (line->log_utc) /* UTC beside the phone's zone */
        return rpl__zone_gap(t, rec->timestamp_ms);
    return t > rec->timestamp_ms ? t - rec->timestamp_ms : rec->timestamp_ms - t;
}

/* The record a kill line joins: the exit-info record of its pid, not yet
 * joined, nearest in time within the window (or, when either time is
 * unknown, the only record of that pid). */
static size_t partner(const rpl_exit *v, size_t n, size_t line)
{
    size_t found = n, count = 0, near = n;
    int64_t best = 0;
    for (size_t k = 0; k < n; k++) {
        const rpl_exit *r = &v[k];
        if (r->source != RPL_EXIT_INFO || r->pid != v[line].pid || r->joined_line != 0)
            continue;
        int64_t gap = gap_of(&v[line], r);
        if (gap >= 0 && gap <= RPL_JOIN_WINDOW_MS && (near == n || gap < best))
            near = k, best = gap;
        if (gap < 0)
            found = k, count++;
    }
    return near != n ? near : count == 1 ? found : n;
}

/* How far apart two kill lines of one log are (-1: not known). */
static int64_t line_gap(const rpl_exit *a, const rpl_exit *b)
{
    int64_t d = a->timestamp_ms >= 0 && b->timestamp_ms >= 0 ? a->timestamp_ms - b->timestamp_ms
                : a->yearless_ms >= 0 && b->yearless_ms >= 0 ? a->yearless_ms - b->yearless_ms
                                                               : INT64_MIN;
    return d == INT64_MIN ? -1 : d < 0 ? -d : d;
}

/* A killinfo of the events log and lmkd's "Kill" line of the same kill
 * (lmkd writes both, one after the other): the line keeps its name and
 * takes what only killinfo gives (the reason's number, the swap, on
 * builds whose line has none); the killinfo leaves the list.  The line
 * taken is of the same pid within the window: the nearest in the same
 * file, else (the events log and the main log given as two files, whose
 * line numbers do not compare) the nearest in time. */
static void merge_killinfo(rpl_exit *v, size_t n)
{
    unsigned char *taken = NULL; /* lines that took a killinfo: made when one is found */
    for (size_t k = 0; k < n; k++) {
        if (!v[k].killinfo || v[k].pid < 0)
            continue;
        size_t best = n;
        uint64_t best_d = 0;
        int best_other = 1; /* the best so far is in another file */
        for (size_t j = 0; j < n; j++) {
            const rpl_exit *l = &v[j];
            int64_t gap = line_gap(l, &v[k]);
            if (l->source != RPL_LMKD || l->killinfo || l->pid != v[k].pid ||
                gap > RPL_JOIN_WINDOW_MS || (taken != NULL && taken[j]))
                continue;
            int other = l->file != v[k].file;
            uint64_t d = other ? (gap < 0 ? UINT64_MAX : (uint64_t)gap) /* a time unknown: last */
                         : l->line > v[k].line ? l->line - v[k].line : v[k].line - l->line;
            if (best == n || other < best_other || (other == best_other && d < best_d))
                best = j, best_d = d, best_other = other;
        }
        if (best == n || (taken == NULL && (taken = calloc(n, 1)) == NULL))
            continue; /* out of memory: the two stay two records */
        taken[best] = 1;
        rpl_exit *l = &v[best];
        if (l->lmkd == MDL_LMKD_NONE)
            l->lmkd = v[k].lmkd;
        if (l->swap_kb < 0)
            l->swap_kb = v[k].swap_kb;
        if (l->uid < 0)
            l->uid = v[k].uid;
        if (l->description[0] == '\0')
            snprintf(l->description, sizeof l->description, "%s", v[k].description);
        v[k].pid = -2;
    }
    free(taken);
}

size_t rpl_exits_join(rpl_exit *v, size_t n)
{
    size_t out = 0;
    merge_killinfo(v, n);
    for (size_t k = 0; k < n; k++) {
        int kill = (v[k].source == RPL_LMKD || v[k].source == RPL_KERNEL) && v[k].pid >= 0;
        size_t j = kill && v[k].pid >= 0 ? partner(v, n, k) : n;
        if (j == n)
            continue;
        rpl_exit *r = &v[j];
        r->joined_line = v[k].line;
        r->joined_source = v[k].source;
        r->joined_gap_ms = gap_of(&v[k], r);
        r->lmkd = v[k].lmkd;
        r->kernel_oom = v[k].kernel_oom;
        r->swap_kb = v[k].swap_kb;
        if (!r->has_adj && v[k].has_adj)
            r->has_adj = 1, r->adj = v[k].adj;
        v[k].pid = -2; /* joined: leaves the list below */
    }
    for (size_t k = 0; k < n; k++)
        if (v[k].pid != -2)
            v[out++] = v[k];
    return out;
}
