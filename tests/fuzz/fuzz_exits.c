/* fuzz_exits.c - libFuzzer target for the exit-record parser (dumpsys
 * exit-info in both layouts, lmkd's and the kernel's kill lines, joined to
 * the records of the same deaths) and the diagnosis: any bytes must
 * give records with bounded, NUL-terminated text and a verdict whose class
 * and evidence are among those of docs/on-call.md; never crash, leak or hang. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "replay/replay.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    rpl_exit *x = NULL;
    size_t n = 0;
    sim_error err;
    sim_error_clear(&err);
    if (rpl_exits_parse((const char *)data, size, "fuzz", &x, &n, &err) != SIM_OK)
        return 0;
    size_t before = n;
    n = rpl_exits_join(x, n);
    if (n > before)
        abort();
    static const char *const classes[] = {"low_memory", "java_crash", "native_crash", "anr",
                                          "system_reclaim", "watchdog", "kernel_oom", "other",
                                          "unknown"};
    for (size_t k = 0; k < n; k++) {
        if (memchr(x[k].process, '\0', sizeof x[k].process) == NULL ||
            memchr(x[k].description, '\0', sizeof x[k].description) == NULL)
            abort();
        rpl_verdict v;
        rpl_diagnose(&x[k], NULL, &v);
        int ok = 0;
        for (size_t c = 0; c < sizeof classes / sizeof *classes; c++)
            ok |= strcmp(v.cls, classes[c]) == 0;
        if (!ok || v.recovery == NULL || v.evidence == NULL || v.rec >= RPL_REC_COUNT)
            abort();
    }
    free(x);
    return 0;
}
