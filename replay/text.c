/* text.c - the small text helpers the readers of exit records share
 * (diagnose.c's dumpsys records, killlines.c's kill lines, ips.c's iOS
 * reports): a bounded copy, a decimal, a day count and a timestamp, a
 * record's defaults, a search in a bounded text.  They read nothing of a
 * format themselves. */
#include "exits_int.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

void rpl__copy_text(char *dst, const char *s, size_t n)
{
    size_t k = 0;
    for (; k < n && k + 1 < RPL_TEXT_MAX; k++)
        dst[k] = (unsigned char)s[k] < 0x20 ? ' ' : s[k];
    dst[k] = '\0';
}

int rpl__parse_int(const char *s, size_t n, int64_t *out)
{
    size_t k = 0;
    int neg = 0;
    if (k < n && s[k] == '-')
        neg = 1, k++;
    if (k == n || !isdigit((unsigned char)s[k]))
        return 0;
    int64_t v = 0;
    for (; k < n && isdigit((unsigned char)s[k]); k++) {
        if (v > (INT64_MAX - 9) / 10)
            return 0;
        v = v * 10 + (s[k] - '0');
    }
    *out = neg ? -v : v;
    return 1;
}

/* Days from 1970-01-01 to y-m-d (proleptic Gregorian). */
int64_t rpl__days_from_civil(int64_t y, unsigned m, unsigned d)
{
    y -= m <= 2;
    int64_t era = (y >= 0 ? y : y - 399) / 400;
    unsigned yoe = (unsigned)(y - era * 400);
    unsigned doy = (153 * (m + (m > 2 ? (unsigned)-3 : 9)) + 2) / 5 + d - 1;
    unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + (int64_t)doe - 719468;
}

/* "2024-04-28 19:27:47.967" (UTC, no zone), the same with a zone offset
 * after a space ("2025-05-28 01:35:47.00 -0500", as iOS's reports write
 * it), or epoch milliseconds; -1 when not readable unambiguously (a
 * locale-formatted date). */
int64_t rpl__timestamp_ms(const char *s, size_t n)
{
    int64_t v;
    size_t k = 0;
    while (k < n && isdigit((unsigned char)s[k]))
        k++;
    if (k == n && n >= 10 && rpl__parse_int(s, n, &v))
        return v <= INT64_C(253402300799999) ? v : -1; /* epoch ms, to the year 9999 */
    int Y, M, D, h, mi, sec, ms = 0, used = 0;
    char buf[64];
    if (n >= sizeof buf)
        return -1;
    memcpy(buf, s, n);
    buf[n] = '\0';
    if (sscanf(buf, "%4d-%2d-%2d %2d:%2d:%2d%n", &Y, &M, &D, &h, &mi, &sec, &used) != 6)
        return -1;
    if (buf[used] == '.') {
        int frac = 0, digits = 0;
        for (int j = used + 1; isdigit((unsigned char)buf[j]) && digits < 3; j++, digits++)
            frac = frac * 10 + (buf[j] - '0');
        while (digits < 3)
            frac *= 10, digits++;
        ms = frac;
        while (isdigit((unsigned char)buf[++used]))
            ;
    }
    int64_t zone = 0; /* minutes east of UTC */
    const char *z = buf + used;
    if (z[0] == ' ' && (z[1] == '+' || z[1] == '-') && isdigit((unsigned char)z[2]) &&
        isdigit((unsigned char)z[3]) && isdigit((unsigned char)z[4]) &&
        isdigit((unsigned char)z[5]) && z[6] == '\0') {
        zone = ((z[2] - '0') * 10 + (z[3] - '0')) * 60 + (z[4] - '0') * 10 + (z[5] - '0');
        if (z[1] == '-')
            zone = -zone;
    }
    if (M < 1 || M > 12 || D < 1 || D > 31 || h > 23 || mi > 59 || sec > 60)
        return -1;
    int64_t days = rpl__days_from_civil(Y, (unsigned)M, (unsigned)D);
    return ((days * 24 + h) * 60 + mi - zone) * 60000 + (int64_t)sec * 1000 + ms;
}

int rpl__timestamp_local(const char *s, size_t n)
{
    size_t k = 0;
    while (k < n && isdigit((unsigned char)s[k]))
        k++;
    if (k == n) /* epoch milliseconds */
        return 0;
    while (n > 0 && s[n - 1] == ' ')
        n--;
    return !(n >= 6 && s[n - 6] == ' ' && (s[n - 5] == '+' || s[n - 5] == '-'));
}

void rpl__exit_init(rpl_exit *x, rpl_source src, uint64_t line)
{
    memset(x, 0, sizeof *x);
    x->source = src;
    x->timestamp_ms = -1;
    x->reason_code = -1;
    x->pss_kb = x->rss_kb = -1;
    x->pid = -1;
    x->uid = -1;
    x->line = line;
    x->priority = -1;
    x->lifetime_max_kb = x->free_kb = x->compressor_kb = -1;
    x->lmkd = MDL_LMKD_NONE;
    x->swap_kb = x->yearless_ms = x->joined_gap_ms = -1;
}

const char *rpl__find(const char *s, size_t n, const char *what)
{
    size_t w = strlen(what);
    for (size_t i = 0; i + w <= n; i++)
        if (memcmp(s + i, what, w) == 0)
            return s + i;
    return NULL;
}

/* How a record's time compares with a trace exit's: 1 within the window;
 * 2 a whole number of quarter hours apart within the window (the record
 * printed in the phone's zone, the trace on UTC: a zone offset, up to
 * 14 h, as zones are); 0 neither, or a time not known. */
int64_t rpl__zone_gap(int64_t a, int64_t b)
{
    int64_t d = a > b ? a - b : b - a;
    if (d > 14 * INT64_C(3600000))
        return d;
    const int64_t q = 15 * 60000;
    int64_t off = (d + q / 2) / q * q;
    return d > off ? d - off : off - d;
}
