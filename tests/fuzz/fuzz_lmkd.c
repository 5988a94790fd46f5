/* fuzz_lmkd.c - libFuzzer target for the lmkd snapshot's readers
 * (rpl_lmkd_snapshot_parse) and the decision on what they read.
 *
 * The first byte picks the file (meminfo, zoneinfo, vmstat.0, vmstat.1,
 * pressure_memory, event, props, page_size); the rest is its text, read
 * into a snapshot already holding tests/lmkd/phone's figures so that the
 * decision runs on every accepted input.  Any input must give SIM_OK or a
 * clean SIM_EINPUT with a message, never a crash, a leak or undefined
 * behaviour; the decision must name a known reason. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "replay/replay.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const files[] = {"meminfo", "zoneinfo", "vmstat.0", "vmstat.1",
                                    "pressure_memory", "event", "props", "page_size"};

static void base(rpl_lmkd_snapshot *s)
{
    static const char *const text[][2] = {
        {"zoneinfo", "Node 0, zone Normal\n per-node stats\n nr_inactive_file 100000\n"
                     " nr_active_file 50000\n min 2508\n low 4081\n high 5654\n present 9\n"},
        {"meminfo", "MemFree: 14000 kB\nSwapTotal: 2048000 kB\nSwapFree: 123457 kB\n"
                    "Inactive(file): 400000 kB\nActive(anon): 1 kB\nInactive(anon): 1 kB\n"
                    "Shmem: 1 kB\n"},
        {"vmstat.0", "nr_inactive_file 100000\nnr_active_file 50000\n"
                     "workingset_refault_file 10\npgscan_kswapd 1\npgscan_direct 1\n"
                     "pgrefill 1\n"},
        {"vmstat.1", "nr_inactive_file 100000\nnr_active_file 50000\n"
                     "workingset_refault_file 3010\npgscan_kswapd 9\npgscan_direct 1\n"
                     "pgrefill 1\n"}};
    sim_error err;
    rpl_lmkd_snapshot_init(s);
    for (size_t k = 0; k < sizeof text / sizeof *text; k++)
        if (rpl_lmkd_snapshot_parse(s, text[k][0], text[k][1], strlen(text[k][1]), &err) !=
            SIM_OK)
            abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    rpl_lmkd_snapshot s;
    base(&s);
    sim_error err;
    sim_error_clear(&err);
    const char *file = files[data[0] % (sizeof files / sizeof *files)];
    int rc = rpl_lmkd_snapshot_parse(&s, file, (const char *)data + 1, size - 1, &err);
    if (rc != SIM_OK) {
        if (rc != SIM_EINPUT || err.msg[0] == '\0')
            abort();
        return 0;
    }
    mdl_lmkd_props_resolve(&s.props);
    mdl_lmkd_decision d;
    rpl_lmkd_snapshot_decide(&s, &d);
    if ((unsigned)d.reason >= MDL_LMKD_COUNT || d.description[0] == '\0')
        abort();
    return 0;
}
