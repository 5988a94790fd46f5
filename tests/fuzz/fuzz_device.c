/* fuzz_device.c - libFuzzer target for `oomsim import device`'s readers and
 * writer (replay/bugreport.c, replay/ips.c, replay/perfetto.c and the
 * Perfetto reader's phone pass, replay/device.c, replay/device_yaml.c): any bytes, read as they are and with a dumpstate
 * header put before them (so that the section reader is reached), alone
 * and twice (a profile over two captures), must give a refusal naming the
 * input (figures no profile can hold among them, by the loader's check)
 * or a profile the loader accepts; never crash, leak or hang. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "replay/replay.h"
#include "scenarios/scenarios.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The catalog's first profile of the OS (any class will do here). */
static int pick(void *ctx, int os, double ram, const char **name, const char **yaml,
                size_t *len, sim_error *err)
{
    (void)ctx;
    (void)ram;
    const char *want = os == MDL_OS_IOS ? "devices/iphone-4g.yaml" : "devices/android-4g.yaml";
    for (unsigned i = 0; i < scn_catalog_count(); i++) {
        scn_catalog_item it;
        scn_catalog_get(i, &it);
        if (strcmp(it.path, want) == 0) {
            *name = os == MDL_OS_IOS ? "iphone-4g" : "android-4g";
            *yaml = it.text;
            *len = it.len;
            return SIM_OK;
        }
    }
    return sim_error_set(err, SIM_EINTERNAL, "no catalog profile");
}

static int check(void *ctx, const char *yaml, const char *name, sim_error *err)
{
    (void)ctx;
    mdl_device d;
    int rc = scn_device_parse(yaml, strlen(yaml), name, &d, err);
    if (rc == SIM_OK)
        scn_device_release(&d);
    return rc;
}

static void one(const char *bytes, size_t n, unsigned copies)
{
    rpl_capture in[2] = {{"fuzz.txt", bytes, n, NULL}, {"fuzz2.txt", bytes, n, NULL}};
    rpl_device_opts o = {NULL, 0, pick, NULL, check};
    rpl_device_yaml *v = NULL;
    unsigned nv = 0;
    sim_error err;
    sim_error_clear(&err);
    if (rpl_device_import(in, copies, &o, &v, &nv, &err) == SIM_OK) {
        for (unsigned k = 0; k < nv; k++) {
            mdl_device d;
            sim_error e;
            sim_error_clear(&e);
            if (scn_device_parse(v[k].yaml, strlen(v[k].yaml), "fuzz", &d, &e) != SIM_OK)
                abort(); /* the writer wrote what the loader refuses */
            scn_device_release(&d);
        }
    } else if (err.code == SIM_EINPUT && strstr(err.msg, "fuzz") == NULL) {
        abort(); /* a refusal must name the input */
    }
    rpl_device_yaml_free(v, nv);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char head[] = "== dumpstate: 2026-01-01 00:00:00\n";
    one((const char *)data, size, 1);
    one((const char *)data, size, 2);
    char *with = malloc(sizeof head + size);
    if (with == NULL)
        return 0;
    memcpy(with, head, sizeof head - 1);
    memcpy(with + sizeof head - 1, data, size);
    one(with, sizeof head - 1 + size, 1);
    one(with, sizeof head - 1 + size, 2);
    free(with);
    return 0;
}
