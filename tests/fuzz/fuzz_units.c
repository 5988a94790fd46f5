/* fuzz_units.c - libFuzzer target for the unit parsers (scenarios/units.c).
 * Build as fuzz_probe (docs/probe.md); any input must be accepted with a
 * value in bounds or refused with a message, never crash. */
#include <stdint.h>
#include <stdlib.h>

#include "scenarios/scenarios.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *s = (const char *)data;
    sim_error err;
    int64_t bytes;
    sim_time us;
    double x;
    sim_error_clear(&err);
    if (scn_parse_size(s, size, &bytes, &err) == SIM_OK && (bytes < 0 || bytes > SCN_SIZE_MAX))
        abort();
    if (scn_parse_duration(s, size, &us, &err) == SIM_OK && (us < 0 || us > SCN_DURATION_MAX))
        abort();
    if (scn_parse_rate(s, size, &x, &err) == SIM_OK && !(x > 0))
        abort();
    if (scn_parse_probability(s, size, &x, &err) == SIM_OK && !(x >= 0 && x <= 1))
        abort();
    return 0;
}
