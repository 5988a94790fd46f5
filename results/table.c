/* table.c - the table the documents and the report render (render_int.h):
 * its cells made in one allocation, its header row filled, and freed.
 * tables.c and tables_gen.c fill tables; this file only holds them. */
#include "results.h"
#include "internal.h"
#include "render_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int res__table_alloc(res__table *t, unsigned rows, unsigned cols, const char *const *head,
                     const int *right)
{
    if (cols > RES_TABLE_COLS_MAX)
        return SIM_EINTERNAL;
    t->cell = calloc((size_t)rows * cols, sizeof *t->cell);
    t->rows = rows;
    t->cols = cols;
    memcpy(t->right, right, cols * sizeof *right);
    if (t->cell == NULL)
        return SIM_ENOMEM;
    for (unsigned k = 0; k < cols; k++)
        snprintf(t->cell[k], RES_TEXT_MAX, "%s", head[k]);
    return SIM_OK;
}

void res__table_free(res__table *t)
{
    free(t->cell);
    t->cell = NULL;
}
