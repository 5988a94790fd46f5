/* error.c - the error table: names and messages generated from SIM_ERRNO_MAP. */
#include "sim.h"

#include <stdarg.h>
#include <stdio.h>

const char *sim_err_name(int code)
{
    switch (code) {
    case SIM_OK:
        return "OK";
#define SIM__ERR_NAME(name, msg) \
    case SIM_E##name:            \
        return #name;
        SIM_ERRNO_MAP(SIM__ERR_NAME)
#undef SIM__ERR_NAME
    default:
        return "UNKNOWN";
    }
}

const char *sim_strerror(int code)
{
    switch (code) {
    case SIM_OK:
        return "success";
#define SIM__ERR_MSG(name, msg) \
    case SIM_E##name:           \
        return msg;
        SIM_ERRNO_MAP(SIM__ERR_MSG)
#undef SIM__ERR_MSG
    default:
        return "unknown error";
    }
}

int sim_error_set(sim_error *err, int code, const char *fmt, ...)
{
    if (err == NULL)
        return code;
    err->code = code;
    if (fmt == NULL) {
        snprintf(err->msg, sizeof err->msg, "%s", sim_strerror(code));
        return code;
    }
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->msg, sizeof err->msg, fmt, ap);
    va_end(ap);
    return code;
}

void sim_error_clear(sim_error *err)
{
    if (err == NULL)
        return;
    err->code = SIM_OK;
    err->msg[0] = '\0';
}
