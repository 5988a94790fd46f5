/* spare_jansson.c - json_loadb, with its allocations spared: jansson
 * 2.14's lexer ignores a failed append to the token text and then copies
 * the string past its end (a heap overflow), so the allocation sweep does
 * not fail allocations inside it.  The program's calls to json_loadb bind
 * to this definition; it calls jansson's. */
#define _GNU_SOURCE
#include "failalloc.h"

#include <dlfcn.h>
#include <stdlib.h>

#include <jansson.h>

json_t *json_loadb(const char *buffer, size_t buflen, size_t flags, json_error_t *error)
{
    static json_t *(*next)(const char *, size_t, size_t, json_error_t *);
    if (next == NULL)
        *(void **)&next = dlsym(RTLD_NEXT, "json_loadb");
    if (next == NULL)
        abort();
    failalloc_spare_begin();
    json_t *v = next(buffer, buflen, flags, error);
    failalloc_spare_end();
    return v;
}
