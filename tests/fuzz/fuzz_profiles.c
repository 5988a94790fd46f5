/* fuzz_profiles.c - libFuzzer target for the YAML layer and the profile
 * loaders (scenarios/yaml.c, device.c, candidate.c): the same bytes go
 * through the device and the candidate loader.  Any input must load or be
 * refused with a located message; never crash or leak. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "scenarios/scenarios.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    mdl_device dev;
    sim_error err;
    sim_error_clear(&err);
    int rc = scn_device_parse((const char *)data, size, "fuzz.yaml", &dev, &err);
    if (rc == SIM_OK) {
        if (dev.ram <= dev.system || dev.counts_mask == 0)
            abort();
        scn_device_release(&dev);
    } else if (strncmp(err.msg, "fuzz.yaml", 9) != 0) {
        abort();
    }
    mdl_candidate cand;
    sim_error_clear(&err);
    rc = scn_candidate_parse((const char *)data, size, "fuzz.yaml", &cand, &err);
    if (rc == SIM_OK) {
        if (cand.nparts == 0 || cand.nparts > MDL_PARTS_MAX)
            abort();
        scn_candidate_release(&cand);
    } else if (strncmp(err.msg, "fuzz.yaml", 9) != 0) {
        abort();
    }
    return 0;
}
