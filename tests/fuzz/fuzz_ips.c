/* fuzz_ips.c - libFuzzer target for the JetsamEvent (.ips) reader and the
 * diagnosis of its entries: any bytes must give an error or records with
 * NUL-terminated text and a verdict among docs/on-call.md's classes;
 * never crash, leak or hang.  Both ways of choosing entries: a process's
 * (one name longer than the report's cut at 32 characters) and every
 * killed one. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "replay/replay.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(const rpl_exit *x, size_t n)
{
    static const char *const classes[] = {"low_memory", "system_reclaim", "java_crash",
                                          "native_crash", "anr", "watchdog", "other",
                                          "unknown"};
    for (size_t k = 0; k < n; k++) {
        if (memchr(x[k].process, '\0', sizeof x[k].process) == NULL ||
            memchr(x[k].cause, '\0', sizeof x[k].cause) == NULL ||
            memchr(x[k].largest, '\0', sizeof x[k].largest) == NULL ||
            memchr(x[k].states, '\0', sizeof x[k].states) == NULL)
            abort();
        rpl_verdict v;
        rpl_diagnose(&x[k], NULL, &v);
        int ok = 0;
        for (size_t c = 0; c < sizeof classes / sizeof *classes; c++)
            ok |= strcmp(v.cls, classes[c]) == 0;
        if (!ok || v.recovery == NULL || v.evidence == NULL)
            abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const names[] = {"LLMChat", "HealthMentalHealthWidgetExtension", NULL};
    (void)rpl_ips_detect((const char *)data, size);
    for (size_t i = 0; i < 3; i++) {
        rpl_exit *x = NULL;
        size_t n = 0;
        sim_error err;
        sim_error_clear(&err);
        if (rpl_ips_parse((const char *)data, size, "fuzz", names[i], &x, &n, &err) == SIM_OK)
            check(x, n);
        free(x);
    }
    return 0;
}
