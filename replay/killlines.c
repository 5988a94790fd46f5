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
#include <stdlib.h>
#include <string.h>

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
    for (size_t k = 0; k < sizeof phrases / sizeof *phrases; k++)
        if (rpl__find(s, n, phrases[k].words) != NULL &&
            (phrases[k].also == NULL || rpl__find(s, n, phrases[k].also) != NULL))
            return phrases[k].r;
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
    if (!digits_at(s, n, at, 2) || s[at + 2] != ':' || !digits_at(s, n, at + 3, 2) ||
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

/* "... (PID), uid U, oom_score_adj A to free N kB rss, M kB swap; reason: ..."
 * after lmkd's process name, the fields by name. */
static void lmkd_fields(const char *q, const char *end, rpl_exit *x)
{
    int64_t v;
    size_t n = (size_t)(end - q);
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
    const char *fr = rpl__find(q, n, "to free ");
    if (fr != NULL && rpl__parse_int(fr + 8, (size_t)(end - fr - 8), &v) && v >= 0)
        x->rss_kb = v;
    const char *sw = rpl__find(q, n, "rss, ");
    if (sw != NULL && rpl__parse_int(sw + 5, (size_t)(end - sw - 5), &v) && v >= 0 &&
        rpl__find(sw, (size_t)(end - sw), "swap") != NULL)
        x->swap_kb = v;
    const char *why = rpl__find(q, n, "reason: ");
    if (why != NULL) {
        rpl__copy_text(x->description, why + 8, (size_t)(end - why - 8));
        x->lmkd = reason_of_words(why + 8, (size_t)(end - why - 8));
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

int rpl__read_kill_line(const char *s, size_t n, uint64_t line, rpl_exit *x)
{
    const char *k = rpl__find(s, n, "Kill '");
    size_t skip = 6;
    if (k == NULL)
        k = rpl__find(s, n, "Killing '"), skip = 9;
    if (k == NULL)
        return read_kernel(s, n, line, x);
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

size_t rpl_exits_join(rpl_exit *v, size_t n)
{
    size_t out = 0;
    for (size_t k = 0; k < n; k++) {
        int kill = v[k].source == RPL_LMKD || v[k].source == RPL_KERNEL;
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
