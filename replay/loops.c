/* loops.c - repeated deaths of one process, read from its records: two or
 * more deaths of the same process, each within RPL_LOOP_WINDOW_MS of the
 * one before, are a loop (a boot loop when they come during start-up),
 * which `diagnose` names as such rather than telling each death alone
 * (docs/on-call.md "Loops"). */
#include "exits_int.h"

#include <stdlib.h>
#include <string.h>

typedef struct dated {
    int64_t ms;
    size_t k;
} dated;

static int by_time(const void *a, const void *b)
{
    const dated *x = a, *y = b;
    if (x->ms != y->ms)
        return x->ms < y->ms ? -1 : 1;
    return x->k < y->k ? -1 : x->k > y->k;
}

/* A death that counts: a failure of a named process of the app, dated. */
static int counts(const rpl_record *r, const rpl_verdict *v)
{
    return r->x.timestamp_ms >= 0 && r->x.process[0] != '\0' && v->kind != RPL_CLASS_OTHER &&
           !rpl_exit_isolated(&r->x);
}

/* Adds death k to the open chain of its process, or opens one. */
static void chain_add(rpl_loop *c, size_t *nc, const rpl_record *r, const rpl_verdict *v)
{
    size_t j = *nc;
    while (j-- > 0) /* the newest chain of the process */
        if (strcmp(c[j].process, r->x.process) == 0)
            break;
    int64_t ms = r->x.timestamp_ms;
    if (j == (size_t)-1 || ms - c[j].last_ms > RPL_LOOP_WINDOW_MS) {
        j = (*nc)++;
        memset(&c[j], 0, sizeof c[j]);
        memcpy(c[j].process, r->x.process, sizeof c[j].process);
        c[j].first_ms = ms;
    }
    c[j].deaths++;
    c[j].start_up += v->started == 0;
    c[j].background += v->kind == RPL_CLASS_SYSTEM_RECLAIM;
    c[j].last_ms = ms;
}

int rpl_loops(const rpl_record *items, const rpl_verdict *vs, size_t n, rpl_loop **out,
              size_t *nout)
{
    *out = NULL;
    *nout = 0;
    dated *d = malloc((n + 1) * sizeof *d);
    rpl_loop *c = malloc((n + 1) * sizeof *c);
    if (d == NULL || c == NULL) {
        free(d), free(c);
        return SIM_ENOMEM;
    }
    size_t m = 0, nc = 0;
    for (size_t k = 0; k < n; k++)
        if (counts(&items[k], &vs[k]))
            d[m].ms = items[k].x.timestamp_ms, d[m++].k = k;
    qsort(d, m, sizeof *d, by_time);
    for (size_t j = 0; j < m; j++)
        chain_add(c, &nc, &items[d[j].k], &vs[d[j].k]);
    free(d);
    size_t kept = 0;
    for (size_t j = 0; j < nc; j++)
        if (c[j].deaths >= 2)
            c[kept++] = c[j];
    *out = c;
    *nout = kept;
    return SIM_OK;
}
