/* fuzz_import.c - libFuzzer targets for the importers of what teams
 * measure (scenarios/import/), one per parser: this file built with
 * FUZZ_IMPORT_KIND set to a scn_import_kind (CMakeLists.txt).  Any bytes
 * must either give YAML that the loader accepts as what it claims (a
 * candidate, or a scenario's app, field or candidates block), or YAML whose only fault
 * is a value the input did not hold, marked REQUIRED for the user to fill
 * in (the loader then names it), or be refused with a message that names
 * the input and a line; never crash, leak or hang. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "scenarios/scenarios.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    scn_import_input in = {"fuzz.txt", (const char *)data, size};
    scn_import_opts o = {NULL, NULL, NULL, 0, NULL, 0, 0};
    char *yaml = NULL;
    sim_error err;
    sim_error_clear(&err);
    int rc = scn_import((scn_import_kind)FUZZ_IMPORT_KIND, &in, 1, &o, &yaml, &err);
    if (rc != SIM_OK) {
        if (rc != SIM_ENOMEM && strncmp(err.msg, "fuzz.txt:", 9) != 0)
            abort();
        return 0;
    }
    size_t len = strlen(yaml);
    scn_kind kind = scn_kind_of_text(yaml, len);
    /* a value the input did not hold, or held as a server's rather than a
     * phone's, is left REQUIRED: the loader names it */
    int required = strstr(yaml, ": REQUIRED, not in the") != NULL ||
                   (strstr(yaml, ": REQUIRED, ") != NULL && strstr(yaml, "# NOT A PHONE") != NULL);
    if (kind == SCN_KIND_CANDIDATE) {
        mdl_candidate c;
        if (scn_candidate_parse(yaml, len, "out.yaml", &c, &err) == SIM_OK)
            scn_candidate_release(&c);
        else if (strstr(err.msg, "missing required key") == NULL || !required)
            abort();
    } else if (kind == SCN_KIND_FRAGMENT) {
        if (scn_fragment_check(yaml, len, "out.yaml", &err) != SIM_OK &&
            (strstr(err.msg, "missing required key") == NULL || !required))
            abort();
    } else {
        abort();
    }
    free(yaml);
    return 0;
}
