/* text.c - the growing text buffer every layer writes documents, labels
 * and tables into. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim.h"

/* Room for `need` more bytes and a NUL; SIM_OK, or SIM_ENOMEM (and oom). */
static int reserve(sim_text *t, size_t need)
{
    if (t->v != NULL && t->cap - t->n > need)
        return SIM_OK;
    size_t cap = t->cap == 0 ? 4096 : t->cap;
    while (cap - t->n <= need)
        cap *= 2;
    char *v = realloc(t->v, cap);
    if (v == NULL) {
        t->oom = 1;
        return SIM_ENOMEM;
    }
    t->v = v;
    t->cap = cap;
    return SIM_OK;
}

void sim_text_printf(sim_text *t, const char *fmt, ...)
{
    if (t->oom)
        return;
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int w = vsnprintf(t->v != NULL ? t->v + t->n : NULL, t->v != NULL ? t->cap - t->n : 0,
                          fmt, ap);
        va_end(ap);
        if (w < 0) {
            t->oom = 1;
            return;
        }
        if (t->v != NULL && t->n + (size_t)w < t->cap) {
            t->n += (size_t)w;
            return;
        }
        if (reserve(t, (size_t)w) != SIM_OK)
            return;
    }
}

void sim_text_put(sim_text *t, const char *bytes, size_t len)
{
    if (t->oom || reserve(t, len) != SIM_OK)
        return;
    memcpy(t->v + t->n, bytes, len);
    t->n += len;
    t->v[t->n] = '\0';
}

void sim_text_str(sim_text *t, const char *s) { sim_text_put(t, s, strlen(s)); }

char *sim_text_done(sim_text *t)
{
    if (t->oom) {
        free(t->v);
        t->v = NULL;
        return NULL;
    }
    return t->v;
}

int sim_decimal(const char *s, unsigned long long min, unsigned long long max,
                unsigned long long *out)
{
    if (s == NULL || *s < '0' || *s > '9')
        return SIM_EINVAL;
    errno = 0;
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno != 0 || *end != '\0' || v < min || v > max)
        return SIM_EINVAL;
    *out = v;
    return SIM_OK;
}
