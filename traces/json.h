/* json.h - jansson as every layer uses it: parsing that tells memory
 * running out from bad JSON, and building that notices a value or a key
 * lost to an allocation failure (a document must not go out without it). */
#ifndef OOMSIM_TRACES_JSON_H
#define OOMSIM_TRACES_JSON_H

#include <stddef.h>

#include <jansson.h>

#ifdef __cplusplus
extern "C" {
#endif

/* json_loadb(), failing whenever an allocation failed during the call
 * (jansson reports some of those as a syntax error, and can return a value
 * short of a key after one, so its allocations are watched); when it
 * returns NULL, *out_of_memory (may be NULL) says which it was. */
json_t *trc_json_loadb(const char *buf, size_t len, size_t flags, json_error_t *je,
                       int *out_of_memory);

/* json_dumps(), failing (NULL) whenever an allocation failed during the
 * call (jansson 2.14 can leave a key out of the text after one). */
char *trc_json_dumps(const json_t *v, size_t flags);

/* o[k] = v and a[] += v, taking v; a NULL v (its allocation failed) or a
 * failed insertion sets *failed (and v is released). */
void trc_json_set(json_t *o, const char *k, json_t *v, int *failed);
void trc_json_append(json_t *a, json_t *v, int *failed);

#ifdef __cplusplus
}
#endif

#endif
