/* fuzz_traces.c - libFuzzer target for the trace readers: the same bytes
 * are read as a JSON array, as JSON Lines and as msgpack.  Each read must
 * end cleanly or fail with a message that names the input and an event;
 * every event read must survive a write and a read in each encoding
 * unchanged; never crash, leak or hang. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "traces/traces.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Writes e in format f to memory and reads it back: it must be equal. */
static void round_trip(const trc_event *e, trc_format f)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&buf, &len);
    if (out == NULL)
        return;
    sim_error err;
    sim_error_clear(&err);
    trc_writer *w = trc_writer_create(out, f, &err);
    if (w == NULL || trc_write(w, e, &err) != SIM_OK || trc_writer_finish(w, &err) != SIM_OK)
        abort();
    trc_writer_destroy(w);
    fclose(out);
    trc_reader *r = trc_open_buffer(buf, len, "rt", f, NULL, &err);
    trc_event back;
    if (r == NULL || trc_next(r, &back, &err) != 1 || !trc_event_equal(&back, e) ||
        trc_next(r, &back, &err) != 0)
        abort();
    trc_close(r);
    free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    for (int f = 0; f < TRC_FORMAT_COUNT; f++) {
        sim_error err;
        sim_error_clear(&err);
        trc_reader *r = trc_open_buffer((const char *)data, size, "fuzz", (trc_format)f, NULL,
                                        &err);
        if (r == NULL)
            abort();
        trc_event e;
        int rc;
        while ((rc = trc_next(r, &e, &err)) == 1)
            for (int g = 0; g < TRC_FORMAT_COUNT; g++)
                round_trip(&e, (trc_format)g);
        if (rc != 0 && strncmp(err.msg, "fuzz: event ", 12) != 0)
            abort();
        trc_close(r);
    }
    return 0;
}
