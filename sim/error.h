/* error.h - errors: the one error table and the error with its context.
 * Part of sim/sim.h, which includes every header of sim/. */
#ifndef OOMSIM_SIM_ERROR_H
#define OOMSIM_SIM_ERROR_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The one error table of the project.  X(name, message): codes are
 * negative, SIM_OK is 0.  Every layer reports failures with these codes
 * and puts the context (file:line:col, event index, field, limit) in a
 * sim_error. */
#define SIM_ERRNO_MAP(X)                                   \
    X(NOMEM, "out of memory")                              \
    X(INVAL, "invalid argument")                           \
    X(INPUT, "invalid input")                              \
    X(RANGE, "value out of range")                         \
    X(LIMIT, "limit exceeded")                             \
    X(NOTFOUND, "not found")                               \
    X(IO, "input/output error")                            \
    X(STATE, "operation not valid in this state")          \
    X(INTERNAL, "internal error")                          \
    X(INTR, "interrupted")

enum {
    SIM_OK = 0,
#define SIM__ERR_ENUM(name, msg) SIM_E##name,
    SIM__ERR_FIRST = -100,
    SIM_ERRNO_MAP(SIM__ERR_ENUM)
#undef SIM__ERR_ENUM
    SIM__ERR_END
};
/* The codes are SIM__ERR_FIRST+1 .. SIM__ERR_END-1: all negative. */

#define SIM_ERROR_MSG_MAX 512

/* An error with its context.  The message is complete and meant for a
 * person ("events.json:3:14: invalid JSON: ...").  Caller-owned. */
typedef struct sim_error {
    int code;                     /* SIM_OK or a SIM_E* code */
    char msg[SIM_ERROR_MSG_MAX];  /* NUL-terminated, truncated if longer */
} sim_error;

/* Short name of a code ("NOMEM"), or "UNKNOWN".  Never NULL. */
const char *sim_err_name(int code);
/* Default message of a code ("out of memory").  Never NULL. */
const char *sim_strerror(int code);
/* Sets err (if not NULL) to code and the printf-style message; returns
 * code so callers can write `return sim_error_set(err, SIM_EINPUT, ...)`. */
int sim_error_set(sim_error *err, int code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
/* Resets err to SIM_OK with an empty message.  NULL is allowed. */
void sim_error_clear(sim_error *err);

#ifdef __cplusplus
}
#endif

#endif /* OOMSIM_SIM_ERROR_H */
