/* yaml_int.h - the YAML layer the scenario loaders share (internal).
 *
 * A scn__node is a libfyaml node plus where it is (file, line, column,
 * 1-based) and its key path ("kill.minfree[2].free"), so every message
 * can say `file:line:col: path: what`. */
#ifndef OOMSIM_SCENARIOS_YAML_INT_H
#define OOMSIM_SCENARIOS_YAML_INT_H

#include <libfyaml.h>

#include "scenarios.h"
#include "models/models.h"

#define SCN__PATH_MAX 256
#define SCN__FILE_MAX_BYTES ((size_t)16 << 20)

typedef struct scn__doc scn__doc;

typedef struct scn__node {
    struct fy_node *n;   /* NULL: the key is absent */
    const scn__doc *doc; /* its file name and source text */
    int line, col;
    char path[SCN__PATH_MAX];
} scn__node;

struct scn__doc {
    struct fy_parser *fyp; /* kept alive with its document (see yaml.c) */
    struct fy_document *doc;
    char *text;
    size_t len;
    const char *file;
};

/* Loads one YAML document from path: SIM_OK, or SIM_EINPUT with
 * file:line:col (syntax, empty, binary, several documents), SIM_ELIMIT
 * (over SCN__FILE_MAX_BYTES) or SIM_EIO. */
int scn__doc_load(scn__doc *d, const char *path, sim_error *err);
/* The same from memory; `file` names it in messages. */
int scn__doc_parse(scn__doc *d, const char *text, size_t len, const char *file,
                   sim_error *err);
void scn__doc_free(scn__doc *d);
/* The root node, whatever it is. */
void scn__doc_top(scn__doc *d, scn__node *root);
/* The root node (a mapping is required: SIM_EINPUT otherwise). */
int scn__doc_root(scn__doc *d, scn__node *root, sim_error *err);

/* Fails with "file:line:col: path: message". */
int scn__fail(const scn__node *at, sim_error *err, int code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

/* Checks that every key of mapping m is one of keys[0..n): an unknown key
 * fails naming it, with "did you mean" for a near miss. */
int scn__check_keys(const scn__node *m, const char *const *keys, size_t n, sim_error *err);
/* The index of the name within an edit distance of 2 of word (and shorter
 * than it), -1: none. */
int scn__nearest(const char *word, const char *const *names, size_t n);
/* The value of key in mapping m (child->n NULL when absent). */
void scn__get(const scn__node *m, const char *key, scn__node *child);
/* The i-th item of sequence s. */
void scn__item(const scn__node *s, size_t i, struct fy_node *item, scn__node *child);
/* Fails when the key is absent: "missing required key". */
int scn__require(const scn__node *m, const char *key, scn__node *child, sim_error *err);

int scn__expect_mapping(const scn__node *v, sim_error *err);
int scn__expect_sequence(const scn__node *v, sim_error *err);
/* Calls fn(ctx, item, err) on each item of the list `list`, in order, until
 * one fails; a list with no item fails: "expected at least one <what>". */
typedef int (*scn__item_fn)(void *ctx, const scn__node *item, sim_error *err);
int scn__each(const scn__node *list, const char *what, scn__item_fn fn, void *ctx,
              sim_error *err);
/* A scalar's text; fails for mappings and sequences. */
int scn__scalar(const scn__node *v, const char **s, size_t *len, sim_error *err);

int scn__size(const scn__node *v, int64_t *out, sim_error *err);
int scn__duration(const scn__node *v, sim_time *out, sim_error *err);
/* "400MiB/s": bytes a second, above 0 (device_pages.c). */
int scn__bandwidth(const scn__node *v, int64_t *out, sim_error *err);
int scn__probability(const scn__node *v, double *out, sim_error *err);
/* A rate ("0.5/s"), in events per second. */
int scn__rate(const scn__node *v, double *out, sim_error *err);
/* An integer in [min, max]. */
/* A real number in [min, max]: no unit, no inf or nan. */
int scn__real(const scn__node *v, double min, double max, double *out, sim_error *err);
int scn__int(const scn__node *v, int64_t min, int64_t max, int64_t *out, sim_error *err);
/* One of names[0..n) (index in *out). */
int scn__enum(const scn__node *v, const char *const *names, size_t n, int *out,
              sim_error *err);
/* A name: [a-z0-9-]+, at most MDL_NAME_MAX - 1 bytes. */
int scn__name(const scn__node *v, char *out, sim_error *err);
/* candidate.c: a token of 1..MDL_TEXT_MAX-1 bytes from [A-Za-z0-9._-]
 * (a lowercase hex digest when `hex`), into out (MDL_TEXT_MAX). */
int scn__token(const scn__node *v, int hex, char *out, sim_error *err);

/* A size, a duration or a count (a whole number of tokens, no unit),
 * fixed or a distribution map. */
enum { SCN__UNIT_SIZE, SCN__UNIT_DURATION, SCN__UNIT_COUNT };
/* An empirical distribution's values are malloc'ed into *store (the caller
 * frees it); *store is left NULL for the other kinds. */
int scn__dist(const scn__node *v, int unit, mdl_dist *out, int64_t **store, sim_error *err);

/* A distribution whose empirical values (if any) `owned` takes. */
int scn__owned_dist(mdl_owned *owned, const scn__node *v, int unit, mdl_dist *out,
                    sim_error *err);
/* Memory per category ({native: 48MiB, gpu: {dist: ...}}), into *out. */
int scn__amounts(mdl_owned *owned, const scn__node *v, mdl_amounts *out, sim_error *err);
void scn__owned_free(mdl_owned *owned);

/* A device or candidate profile from a mapping node (the loaders of
 * device.c and candidate.c, shared with include.c for inline profiles).
 * The struct must be zeroed; on failure release it. */
int scn__device(const scn__node *root, mdl_device *dev, sim_error *err);
/* device_pages.c: lmkd, reclaim_rate, storage_read, page_cache, swappiness */
int scn__device_pages(const scn__node *root, mdl_device *dev, sim_error *err);
/* device_xnu.c: others, compressor, pages, fc_thrashing (the iOS page model) */
int scn__device_xnu(const scn__node *root, mdl_device *dev, sim_error *err);
int scn__candidate(const scn__node *root, mdl_candidate *cand, sim_error *err);
/* generation.c: a part's `generation` block (the part's file and load mode
 * already read) */
int scn__generation(mdl_owned *owned, const scn__node *v, mdl_part *p, sim_error *err);

#endif
