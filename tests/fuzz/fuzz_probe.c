/* fuzz_probe.c - libFuzzer target for the probe's reader (rpl_probe_buffer).
 *
 * Build: cmake -S . -B build/fuzz -DCMAKE_C_COMPILER=clang -DOOMSIM_FUZZ=ON
 *        -DOOMSIM_SANITIZE=ON -DOOMSIM_TESTS=OFF -DOOMSIM_BENCH=OFF
 * Run:   build/fuzz/fuzz_probe -max_total_time=60 CORPUS_DIR
 * Any input must give either a report or a clean SIM_EINPUT/SIM_ELIMIT
 * error with a message, never a crash, a leak or undefined behaviour. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "replay/replay.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *report = NULL;
    sim_error err;
    sim_error_clear(&err);
    int rc = rpl_probe_buffer((const char *)data, size, "fuzz.json", &report, &err);
    if (rc == SIM_OK) {
        if (report == NULL || report[0] != '{')
            abort();
        rpl_probe_free(report);
    } else if (report != NULL || err.msg[0] == '\0' ||
               (rc != SIM_EINPUT && rc != SIM_ENOMEM && rc != SIM_ELIMIT)) {
        abort();
    }
    return 0;
}
