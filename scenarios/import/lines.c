/* lines.c - the line reader every text importer shares: lines one at a
 * time with their numbers, a phrase found anywhere in a line (so logcat's
 * prefixes do not matter), numbers after a phrase. */
#include "import_int.h"

#include <ctype.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

void scn__lines_of(line_iter *it, const char *text, size_t len)
{
    it->p = text;
    it->end = text + len;
    it->no = 0;
}

int scn__next_line(line_iter *it)
{
    if (it->p >= it->end)
        return 0;
    const char *nl = memchr(it->p, '\n', (size_t)(it->end - it->p));
    it->s = it->p;
    it->n = nl != NULL ? (size_t)(nl - it->p) : (size_t)(it->end - it->p);
    if (it->n > 0 && it->s[it->n - 1] == '\r')
        it->n--;
    it->p = nl != NULL ? nl + 1 : it->end;
    it->no++;
    return 1;
}

/* Where `what` starts in the line, or NULL. */
const char *scn__find(const line_iter *it, const char *what)
{
    size_t w = strlen(what);
    for (size_t i = 0; i + w <= it->n; i++)
        if (it->s[i] == what[0] && memcmp(it->s + i, what, w) == 0)
            return it->s + i;
    return NULL;
}

/* A decimal number (with an exponent, as C++ streams print 2.71985e+06)
 * at *s before end: 1 and *v, *s past it; 0 when there is none. */
int scn__number_at(const char **s, const char *end, double *v)
{
    char buf[64];
    size_t k = 0;
    const char *p = *s;
    while (p < end && *p == ' ')
        p++;
    while (p < end && k + 1 < sizeof buf &&
           (isdigit((unsigned char)*p) || *p == '.' || *p == '-' || *p == '+' ||
            ((*p == 'e' || *p == 'E') && k > 0)))
        buf[k++] = *p++;
    buf[k] = '\0';
    if (k == 0 || !isdigit((unsigned char)buf[k - 1]))
        return 0;
    char *stop;
    double d = strtod(buf, &stop);
    if (*stop != '\0' || !isfinite(d))
        return 0;
    *v = d == 0 ? 0 : d; /* "-0" is 0: never a "-0us" in the YAML */
    *s = p;
    return 1;
}

/* The number after `key` in the line: 1 and *v; 0 when the key is absent;
 * an error naming the line when the key is there without a number. */
int scn__number_after(const line_iter *it, const char *key, double *v, int *bad)
{
    const char *at = scn__find(it, key);
    if (at == NULL)
        return 0;
    const char *p = at + strlen(key);
    if (!scn__number_at(&p, it->s + it->n, v) || *v < 0) {
        *bad = 1;
        return 0;
    }
    return 1;
}

void scn__set(measure *m, double v, unsigned line)
{
    m->v = v;
    m->line = line;
}
