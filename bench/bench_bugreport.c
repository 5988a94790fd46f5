/* bench_bugreport.c - `oomsim import device` on a large bugreport against
 * `wc -l` on the same file (figures in docs/performance.md).  The import
 * reads the text once, line by line; its target is at most 3x wc's time.
 *
 *   bench_bugreport gen FIXTURE OUT MB   OUT: FIXTURE's sections after about MB MiB of
 *                                        logcat and other dumpsys services
 *   bench_bugreport trace OUT MINUTES N  OUT: a Perfetto trace of a phone, a poll a second
 *                                        for MINUTES of N processes (a tenth of them
 *                                        changing at each) and a meminfo sample a second
 *   bench_bugreport read FILE            the import's wall time (the file read in pieces
 *                                        as the command reads it, the profile written),
 *                                        wc -l's (reading the bytes once), their ratio,
 *                                        max RSS */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "bench_clock.h"
#include "replay/replay.h"
#include "scenarios/scenarios.h"

static int gen(const char *fixture, const char *out, long mb)
{
    char *text = NULL;
    size_t len = 0;
    sim_error err;
    sim_error_clear(&err);
    if (sim_read_file(fixture, (size_t)16 << 20, &text, &len, &err) != SIM_OK) {
        fprintf(stderr, "%s\n", err.msg);
        return 1;
    }
    /* the fixture's header, then the padding, then its sections */
    const char *cut = strstr(text, "------ MEMORY INFO");
    FILE *f = fopen(out, "wb");
    if (cut == NULL || f == NULL)
        return 1;
    fwrite(text, 1, (size_t)(cut - text), f);
    long bytes = 0, target = mb << 20, k = 0;
    fputs("------ SYSTEM LOG (logcat -v threadtime -v printable -v uid -d *:v) ------\n", f);
    while (bytes < target * 3 / 4) {
        bytes += fprintf(f, "11-20 10:%02ld:%02ld.%03ld  1000  %5ld  %5ld I ActivityManager: "
                         "Start proc %ld:com.example.app%ld/u0a%ld for service {com.example."
                         "app%ld/.Sync}\n", k / 3600 % 60, k / 60 % 60, k % 1000, 1000 + k % 3000,
                         1000 + k % 3000, 20000 + k % 5000, k % 97, k % 97, k % 97);
        k++;
    }
    fputs("------ 1.234s was the duration of 'SYSTEM LOG' ------\n", f);
    fputs("------ DUMPSYS (/system/bin/dumpsys) ------\n", f);
    while (bytes < target) {
        bytes += fprintf(f, "-------------------------------------------------------------------"
                         "------------\nDUMP OF SERVICE package%ld:\n", k);
        for (int i = 0; i < 40; i++)
            bytes += fprintf(f, "  Package [com.example.app%ld] (%lx):\n    versionCode=%d "
                             "minSdk=26 targetSdk=34\n", k, (unsigned long)k * 2654435761ul, i);
        k++;
    }
    fputs("------ 2.345s was the duration of 'DUMPSYS' ------\n", f);
    fputs(cut, f);
    free(text);
    return fclose(f) == 0 ? 0 : 1;
}

/* ---- a Perfetto trace of a phone, in the protobuf wire format ---- */

typedef struct buf {
    unsigned char b[1 << 16];
    size_t n;
} buf;

static void varint(buf *o, uint64_t v)
{
    while (v >= 0x80) {
        o->b[o->n++] = (unsigned char)(v | 0x80);
        v >>= 7;
    }
    o->b[o->n++] = (unsigned char)v;
}

static void field_varint(buf *o, unsigned num, uint64_t v)
{
    varint(o, (uint64_t)num << 3);
    varint(o, v);
}

static void field_msg(buf *o, unsigned num, const buf *m)
{
    varint(o, (uint64_t)num << 3 | 2);
    varint(o, m->n);
    memcpy(o->b + o->n, m->b, m->n);
    o->n += m->n;
}

/* one TracePacket {timestamp 8, FIELD: body} to f, as a Trace's packet 1 */
static void packet(FILE *f, uint64_t ts, unsigned field, const buf *body)
{
    static buf p, t;
    p.n = 0, t.n = 0;
    field_varint(&p, 8, ts);
    field_msg(&p, field, body);
    field_msg(&t, 1, &p);
    fwrite(t.b, 1, t.n, f);
}

static int gen_trace(const char *out, long minutes, long procs)
{
    FILE *f = fopen(out, "wb");
    if (f == NULL || procs < 1 || procs > 1000)
        return 1;
    static buf body, entry, kv;
    static const unsigned mi[] = {1, 11, 12, 15, 16, 21, 24, 25, 26, 30};
    for (long s = 0; s < minutes * 60; s++) {
        uint64_t ts = (uint64_t)(s + 1) * 1000000000u;
        body.n = 0;
        for (size_t k = 0; k < sizeof mi / sizeof *mi; k++) {
            kv.n = 0;
            field_varint(&kv, 1, mi[k]);
            field_varint(&kv, 2, mi[k] == 1 ? 3800000 : 100000 + (uint64_t)(s % 97) * 100);
            field_msg(&body, 1, &kv);
        }
        kv.n = 0;
        field_varint(&kv, 1, 93);
        field_varint(&kv, 2, 25000);
        field_msg(&body, 2, &kv);
        packet(f, ts, 7, &body);
        body.n = 0;
        for (long p = 0; p < procs; p++) {
            if (s > 0 && (p + s) % 10 != 0)
                continue; /* the probe writes what changed */
            entry.n = 0;
            field_varint(&entry, 1, (uint64_t)(100 + p));
            field_varint(&entry, 3, (uint64_t)(20000 + (p * 7919 + s * 13) % 200000));
            field_varint(&entry, 17, (uint64_t)(10000 + (p * 7919 + s * 13) % 150000));
            int64_t adj = p % 5 == 0 ? -900 : p % 5 == 1 ? 0 : p % 5 == 2 ? 200 : 900;
            field_varint(&entry, 10, (uint64_t)adj);
            field_msg(&body, 1, &entry);
        }
        packet(f, ts, 9, &body);
    }
    return fclose(f) == 0 ? 0 : 1;
}

static int pick(void *ctx, int os, double ram, const char **name, const char **yaml,
                size_t *len, sim_error *err)
{
    (void)ctx;
    (void)ram;
    for (unsigned i = 0; i < scn_catalog_count(); i++) {
        scn_catalog_item it;
        scn_catalog_get(i, &it);
        if (strcmp(it.path, os == MDL_OS_IOS ? "devices/iphone-4g.yaml"
                                             : "devices/android-4g.yaml") == 0) {
            *name = "android-4g";
            *yaml = it.text;
            *len = it.len;
            return SIM_OK;
        }
    }
    return sim_error_set(err, SIM_EINTERNAL, "no catalog profile");
}

static double wc_seconds(const char *file)
{
    char cmd[4200];
    snprintf(cmd, sizeof cmd, "wc -l '%s' > /dev/null", file);
    double best = 1e9;
    for (int r = 0; r < 5; r++) { /* the best of five: wc's own time, the file cached */
        double t0 = now_s();
        if (system(cmd) != 0)
            return -1;
        double t = now_s() - t0;
        best = t < best ? t : best;
    }
    return best;
}

static int read_one(const char *file)
{
    double wc = wc_seconds(file), best = 1e9;
    size_t size = 0;
    struct stat st;
    if (stat(file, &st) != 0)
        return 1;
    size = (size_t)st.st_size;
    for (int r = 0; r < 5; r++) {
        double t0 = now_s();
        sim_error err;
        sim_error_clear(&err);
        /* as the command reads it: from the file, in pieces */
        rpl_capture in = {"bench.txt", NULL, 0, file};
        rpl_device_opts o = {NULL, 0, pick, NULL, NULL};
        rpl_device_yaml *v = NULL;
        unsigned n = 0;
        int rc = rpl_device_import(&in, 1, &o, &v, &n, &err);
        double t = now_s() - t0;
        if (rc != SIM_OK) {
            fprintf(stderr, "%s\n", err.msg);
            return 1;
        }
        rpl_device_yaml_free(v, n);
        best = t < best ? t : best;
    }
    printf("%s %.1f MiB: import device %.3f s (%.0f MiB/s), wc -l %.3f s, ratio %.2f "
           "(bugreport target at most 3), max RSS %ld MiB\n",
           rpl_capture_kind_name(rpl_capture_kind_of_file(file)), (double)size / 1048576.0, best,
           (double)size / 1048576.0 / best, wc, best / wc, max_rss_kb() / 1024);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 5 && strcmp(argv[1], "gen") == 0)
        return gen(argv[2], argv[3], atol(argv[4]));
    if (argc == 5 && strcmp(argv[1], "trace") == 0)
        return gen_trace(argv[2], atol(argv[3]), atol(argv[4]));
    if (argc == 3 && strcmp(argv[1], "read") == 0)
        return read_one(argv[2]);
    fprintf(stderr, "usage: bench_bugreport gen FIXTURE OUT MB | trace OUT MINUTES N | read FILE\n");
    return 2;
}
