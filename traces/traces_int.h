/* traces_int.h - what the trace readers share (not a public header). */
#ifndef OOMSIM_TRACES_INT_H
#define OOMSIM_TRACES_INT_H

#include "traces.h"

typedef enum trc__vtype { TRC_V_NIL = 0, TRC_V_BOOL, TRC_V_INT, TRC_V_REAL, TRC_V_STR, TRC_V_MAP,
                          TRC_V_ARRAY } trc__vtype;

/* A value in any encoding: strings point into the reader's buffer. */
typedef struct trc__value {
    trc__vtype t;
    int64_t i;
    const char *s;
    size_t len;
} trc__value;

/* Where the reader is, for messages, and what it checks across events. */
typedef struct trc__ctx {
    const char *name;
    uint64_t index;      /* the event being read */
    uint64_t line;       /* its first line (text encodings), 0: none */
    uint32_t seen;       /* keys given in this event (1 << trc__key) */
    int64_t last_time;
    int drop_unknown;
    uint64_t dropped;
    sim_error *err;
} trc__ctx;

int trc__fail(trc__ctx *cx, const char *key, int code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;
/* 1 when the n bytes at s are UTF-8 (no overlong form, no surrogate, at
 * most U+10FFFF): every encoding's text must be, as JSON's is. */
int trc__utf8_valid(const char *s, size_t n);
/* The allow-list index of a top-level key, or -1. */
int trc__key(const char *key, size_t len);
const char *trc__key_name(int k);
#define TRC__KEY_MEM 15
#define TRC__KEY_EXIT 17
#define TRC__KEY_ALLOC 26
#define TRC__KEY_KEEP 27
#define TRC__KEY_PAGES 28
/* 1 when key k's value is a map walked with trc__set_sub. */
#define TRC__IS_MAP(k) ((k) == TRC__KEY_MEM || (k) == TRC__KEY_EXIT || (k) == TRC__KEY_ALLOC || \
                        (k) == TRC__KEY_KEEP || (k) == TRC__KEY_PAGES)
/* An unknown key: counted with drop_unknown, refused otherwise (`where`
 * describes it without its value). */
int trc__unknown(trc__ctx *cx, const char *where);
void trc__unknown_label(const char *key, size_t len, char *out, size_t n);
/* A top-level key: SIM_OK with its index, or with -1 when it is outside the
 * allow-list and dropped; the allow-list error otherwise. */
int trc__top_key(trc__ctx *cx, const char *key, size_t len, int *k);
int trc__begin_event(trc__ctx *cx, trc_event *e);
int trc__set(trc__ctx *cx, trc_event *e, int k, const trc__value *v);
/* A key of the map value of top-level key k (mem, alloc, keep or exit). */
const char *trc__page_name(int k);
int trc__set_sub(trc__ctx *cx, trc_event *e, int k, const char *key, size_t len,
                 const trc__value *v);
int trc__set_exit(trc__ctx *cx, trc_event *e, const char *key, size_t len, const trc__value *v);
/* Required keys, time order. */
int trc__end_event(trc__ctx *cx, trc_event *e);
const char *trc__mem_name(int k);
const char *trc__exit_name(int k);

#endif
