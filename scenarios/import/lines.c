/* lines.c - the line reader every text importer shares: lines one at a
 * time with their numbers, a phrase found anywhere in a line (so logcat's
 * prefixes do not matter), numbers after a phrase. */
#include "import_int.h"

#include <ctype.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
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

/* ------------------------------------------------ what a log's lines drop */

void scn__tally(scn_tally *t, const char *kind, size_t n)
{
    char k[SCN_TALLY_KIND];
    scn__clean_copy(k, sizeof k, kind, n);
    for (unsigned i = 0; i < t->kinds; i++)
        if (strcmp(t->kind[i], k) == 0) {
            t->count[i]++;
            return;
        }
    if (t->kinds == SCN_TALLY_KINDS) {
        t->other++;
        return;
    }
    memcpy(t->kind[t->kinds], k, sizeof k);
    t->count[t->kinds++] = 1;
}

/* A line's kind: the tag before its first ':' ("print_info", "Num
 * threads"), after a logcat prefix and a level word ("INFO: "); a line
 * without a tag, its first word.  Lines without a letter (progress dots,
 * blank lines) hold no data and are not counted. */
void scn__tally_line(scn_tally *t, const line_iter *it)
{
    const char *s = it->s, *end = it->s + it->n;
    int letter = 0;
    for (const char *p = s; p < end && !letter; p++)
        letter = isalpha((unsigned char)*p);
    if (!letter)
        return;
    if (isdigit((unsigned char)*s)) { /* "12-04 10:23:45.678  1234  1234 I tag: ", once */
        const char *c = scn__find(it, ": ");
        if (c != NULL)
            s = c + 2;
    }
    while (s < end && *s == ' ')
        s++;
    static const char *const levels[] = {"INFO: ", "VERBOSE: ", "WARNING: ", "ERROR: "};
    for (size_t k = 0; k < sizeof levels / sizeof *levels; k++)
        if ((size_t)(end - s) > strlen(levels[k]) && memcmp(s, levels[k], strlen(levels[k])) == 0)
            s += strlen(levels[k]);
    const char *colon = memchr(s, ':', (size_t)(end - s));
    const char *eq = memchr(s, '=', (size_t)(end - s));
    if (eq != NULL && (colon == NULL || eq < colon) && memchr(s, ' ', (size_t)(eq - s)) == NULL)
        colon = eq; /* "count=19 first=..." is a count line */
    const char *e = s;
    if (colon != NULL && colon - s < SCN_TALLY_KIND) {
        e = colon;
    } else {
        while (e < end && *e != ' ' && e - s < SCN_TALLY_KIND - 1)
            e++;
    }
    while (e > s && e[-1] == ' ')
        e--;
    scn__tally(t, s, (size_t)(e - s));
}

void scn__tally_put(out *o, const char *unit)
{
    const scn_tally *t = &o->ignored;
    if (t->kinds == 0)
        return;
    put(o, "# ignored (read, not used):");
    size_t col = 28;
    for (unsigned i = 0; i <= t->kinds; i++) {
        char item[SCN_TALLY_KIND + 40];
        if (i < t->kinds)
            snprintf(item, sizeof item, "%u %s %s%s", t->count[i], t->kind[i], unit,
                     t->count[i] == 1 ? "" : "s");
        else if (t->other > 0)
            snprintf(item, sizeof item, "%u of other kinds", t->other);
        else
            break;
        if (col + strlen(item) + 2 > 92) {
            put(o, "%s\n#  ", i ? "," : "");
            col = 3;
        } else if (i) {
            put(o, ",");
            col++;
        }
        put(o, " %s", item);
        col += strlen(item) + 1;
    }
    put(o, "\n");
}
