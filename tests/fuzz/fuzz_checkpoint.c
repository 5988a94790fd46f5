/* fuzz_checkpoint.c - libFuzzer target for the checkpoint reader
 * (results/checkpoint.c): any bytes, their CRC-32 trailer made to hold so
 * that the fuzzer reaches the sections behind that check, are either
 * refused as invalid input or resume a run that ends with its result;
 * never a crash, a leak or a hang.  The run: the teaching scenario
 * timeout-retry-storm at 3 replications (corpus/checkpoint holds one of
 * its checkpoints, written by `oomsim run timeout-retry-storm -r 3
 * --checkpoint FILE --checkpoint-period 0` whose results could not be
 * written). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <zlib.h>

#include "cli/cli.h"
#include "results/results.h"
#include "scenarios/scenarios.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static scn_scenario scenario;
static res_plan plan;
static const char **labels;

static void setup(void)
{
    sim_error err;
    sim_error_clear(&err);
    if (scn_scenario_load_catalog("teach/timeout-retry-storm.yaml", &scenario, &err) != SIM_OK)
        abort();
    scenario.replications = 3;
    if (cli_plan_of(&scenario, &plan, &labels, &err) != SIM_OK)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (labels == NULL)
        setup();
    if (size < 16)
        return 0;
    uint8_t *bytes = malloc(size);
    if (bytes == NULL)
        return 0;
    memcpy(bytes, data, size);
    uint64_t crc = crc32(crc32(0L, Z_NULL, 0), bytes, (uInt)(size - 8));
    memcpy(bytes + size - 8, &crc, sizeof crc);
    res_resume *r = NULL;
    sim_error err;
    sim_error_clear(&err);
    int rc = res_resume_parse(&plan, bytes, size, "fuzz", &r, &err);
    free(bytes);
    if (rc != SIM_OK) {
        if (rc != SIM_EINPUT && rc != SIM_ENOMEM)
            abort();
        return 0;
    }
    res_checkpoint ck;
    memset(&ck, 0, sizeof ck);
    ck.resume = r;
    plan.checkpoint = &ck;
    res_result out;
    rc = res_run(&plan, 1, NULL, NULL, &out, &err);
    plan.checkpoint = NULL;
    res_resume_free(r);
    if (rc == SIM_OK) {
        free(res_document_json(&plan, &out));
        res_result_free(&out);
    } else if (rc != SIM_EINPUT && rc != SIM_ENOMEM) {
        abort();
    }
    return 0;
}
