/* fuzz_perfetto.c - libFuzzer target for the Perfetto importer: any bytes,
 * read as a trace of the process com.example.camera and of pid 1000, must
 * either import or fail with a message naming the input; every event
 * imported must come in time order and survive a write and a read as an
 * oomsim trace unchanged, and a skeleton must be written for what was
 * measured; never crash, leak or hang. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "scenarios/scenarios.h"
#include "traces/traces.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef struct seen {
    int64_t last;
    uint64_t n;
} seen;

static int check(void *ctx, const trc_event *e, sim_error *err)
{
    seen *s = ctx;
    if (e->time_us < s->last)
        abort();
    s->last = e->time_us;
    s->n++;
    char *buf = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&buf, &len);
    if (out == NULL)
        return SIM_OK;
    trc_writer *w = trc_writer_create(out, TRC_JSONL, err);
    if (w == NULL || trc_write(w, e, err) != SIM_OK || trc_writer_finish(w, err) != SIM_OK)
        abort();
    trc_writer_destroy(w);
    fclose(out);
    trc_reader *r = trc_open_buffer(buf, len, "rt", TRC_JSONL, NULL, err);
    trc_event back;
    if (r == NULL || trc_next(r, &back, err) != 1 || !trc_event_equal(&back, e))
        abort();
    trc_close(r);
    free(buf);
    return SIM_OK;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const trc_pf_opts opts[2] = {{"com.example.camera", -1, "camera", 1},
                                 {NULL, 1000, NULL, 0}};
    for (int k = 0; k < 2; k++) {
        seen s = {INT64_MIN, 0};
        trc_pf_summary sum;
        sim_error err;
        sim_error_clear(&err);
        int rc = trc_pf_import_buffer(data, size, "fuzz", &opts[k], check, &s, &sum, &err);
        if (rc != SIM_OK && strncmp(err.msg, "fuzz:", 5) != 0)
            abort();
        if (rc == SIM_OK) {
            char *yaml = scn_import_perfetto_candidate(&sum, "camera", "fuzz");
            if (yaml == NULL)
                abort();
            free(yaml);
        }
        trc_pf_summary_free(&sum);
    }
    return 0;
}
