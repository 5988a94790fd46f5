/* json.c - the jansson helpers of json.h. */
#include "json.h"

#include <pthread.h>
#include <stdlib.h>

/* jansson allocates through these: malloc and free, and a note of a
 * failure for the parse in progress on this thread. */
static _Thread_local int alloc_failed;

static void *json_alloc(size_t n)
{
    void *p = malloc(n);
    if (p == NULL)
        alloc_failed = 1;
    return p;
}

static void json_release(void *p)
{
    free(p);
}

static pthread_once_t hooked = PTHREAD_ONCE_INIT;

static void hook(void)
{
    json_set_alloc_funcs(json_alloc, json_release);
}

json_t *trc_json_loadb(const char *buf, size_t len, size_t flags, json_error_t *je,
                       int *out_of_memory)
{
    json_error_t local;
    if (je == NULL)
        je = &local;
    pthread_once(&hooked, hook);
    alloc_failed = 0;
    json_t *v = json_loadb(buf, len, flags, je);
    /* jansson 2.14 can return a value short of a key or with a cut string
     * when an allocation fails inside its lexer: any failure fails the parse */
    if (v != NULL && alloc_failed) {
        json_decref(v);
        v = NULL;
    }
    if (out_of_memory != NULL)
        *out_of_memory =
            v == NULL && (alloc_failed || json_error_code(je) == json_error_out_of_memory);
    return v;
}

char *trc_json_dumps(const json_t *v, size_t flags)
{
    pthread_once(&hooked, hook);
    alloc_failed = 0;
    char *text = json_dumps(v, flags);
    /* jansson 2.14 can leave a key out of the text when an allocation
     * fails while dumping: any failure fails the dump */
    if (text != NULL && alloc_failed) {
        free(text);
        text = NULL;
    }
    return text;
}

void trc_json_set(json_t *o, const char *k, json_t *v, int *failed)
{
    if (v == NULL || o == NULL || json_object_set_new(o, k, v) != 0) {
        if (v != NULL && o == NULL)
            json_decref(v);
        *failed = 1;
    }
}

void trc_json_append(json_t *a, json_t *v, int *failed)
{
    if (v == NULL || a == NULL || json_array_append_new(a, v) != 0) {
        if (v != NULL && a == NULL)
            json_decref(v);
        *failed = 1;
    }
}
