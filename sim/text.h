/* text.h - text: a buffer that grows, the version, plurals.
 * Part of sim/sim.h, which includes every header of sim/. */
#ifndef OOMSIM_SIM_TEXT_H
#define OOMSIM_SIM_TEXT_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The version every document and `oomsim --version` print. */
#define SIM_VERSION "0.1.0"

/* The plural ending a count takes in a message: "1 death", "2 deaths". */
#define SIM_S(n) ((n) == 1 ? "" : "s")

/* A text buffer that grows (doubling from 4 KiB; the C library's realloc,
 * so its text is free()d by whoever takes it).  After an allocation
 * failure it only records that: sim_text_done then returns NULL.  Start
 * from SIM_TEXT_INIT. */
typedef struct sim_text {
    char *v;    /* NUL-terminated once anything was written; NULL before */
    size_t n;   /* bytes written */
    size_t cap;
    int oom;    /* an allocation failed */
} sim_text;
#define SIM_TEXT_INIT {NULL, 0, 0, 0}

/* Appends len bytes as they are. */
void sim_text_put(sim_text *t, const char *bytes, size_t len);
/* Appends a NUL-terminated string. */
void sim_text_str(sim_text *t, const char *s);
/* Appends printf-style. */
void sim_text_printf(sim_text *t, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* A decimal integer in [min, max], digits only (no sign, no space), into
 * *out: SIM_OK, or SIM_EINVAL (nothing written). */
int sim_decimal(const char *s, unsigned long long min, unsigned long long max,
                unsigned long long *out);
/* The text (the caller frees it; NULL when nothing was written), or NULL
 * after an allocation failure, in which case the buffer is freed. */
char *sim_text_done(sim_text *t);

#ifdef __cplusplus
}
#endif

#endif /* OOMSIM_SIM_TEXT_H */
