/* fuzz_calibrate.c - libFuzzer target for the reader of `calibrate
 * --checkpoint` files (results/calibrate_doc.c): any bytes are either
 * refused as invalid input naming the file, or read into runs that hold
 * the reader's bounds and come back the same through the writer and the
 * reader again; never a crash, a leak or a hang.  The plan's digest is
 * fixed (corpus/calibrate's seed carries it, written by `oomsim calibrate
 * --checkpoint` on the worked example of docs/calibration.md, its digest
 * replaced). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "results/calibrate.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define PLAN 0x0123456789abcdefull

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    res_cal_log l, again;
    sim_error err;
    sim_error_clear(&err);
    int rc = res_cal_log_parse((const char *)data, size, "f.json", PLAN, &l, &err);
    if (rc != SIM_OK) {
        if (rc != SIM_EINPUT && rc != SIM_ENOMEM)
            abort();
        if (rc == SIM_EINPUT && strncmp(err.msg, "f.json", 6) != 0)
            abort(); /* a refusal names the file */
        return 0;
    }
    for (unsigned i = 0; i < l.n; i++) {
        if (l.run[i].m == 0 || l.run[i].m > RES_CAL_CELLS_MAX)
            abort();
        for (unsigned c = 0; c < 2 * l.run[i].m; c++) /* the visible and background counts */
            if (l.run[i].k[c] > l.run[i].reps)
                abort();
    }
    char *text = res_cal_log_json(&l, PLAN);
    if (text == NULL)
        abort();
    if (res_cal_log_parse(text, strlen(text), "g.json", PLAN, &again, &err) != SIM_OK ||
        again.n != l.n)
        abort();
    for (unsigned i = 0; i < l.n; i++)
        if (again.run[i].reps != l.run[i].reps || again.run[i].digest != l.run[i].digest ||
            again.run[i].m != l.run[i].m ||
            memcmp(again.run[i].k, l.run[i].k, 2 * l.run[i].m * sizeof *l.run[i].k) != 0)
            abort();
    free(text);
    res_cal_log_free(&again);
    res_cal_log_free(&l);
    return 0;
}
