/* bench_traces.c - trace reading speed and memory (figures in
 * docs/performance.md).
 *
 *   bench_traces gen DIR MB      writes DIR/t.json, t.jsonl, t.msgpack of about MB MiB each
 *   bench_traces read FILE       reads FILE with the oomsim reader: MB/s and max RSS
 *   bench_traces base FILE       the library alone on the same bytes: jansson per line for
 *                                .jsonl, msgpack-c's streaming unpacker for .msgpack
 *
 * The events are those of a generated session: stage begin/end pairs with
 * parts, samples with the memory breakdown, queue and session counts. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>
#include <msgpack.h>

#include "bench_clock.h"
#include "traces/traces.h"


static void event_k(uint64_t k, trc_event *e)
{
    static const char *const parts[] = {"detector", "recognizer"};
    trc_event_clear(e);
    e->time_us = (int64_t)(k * 1000);
    e->has = TRC_F_KIND;
    switch (k % 4) {
    case 0:
    case 2:
        e->stage = TRC_INFERENCE;
        e->kind = k % 4 == 0 ? TRC_BEGIN : TRC_END;
        e->has |= TRC_F_PART | TRC_F_SESSION | TRC_F_PAYLOAD;
        strcpy(e->part, parts[(k / 4) % 2]);
        e->session = (int64_t)(k / 4 % 3);
        e->payload = TRC_IMAGE;
        break;
    default:
        e->stage = TRC_INFERENCE;
        e->kind = TRC_SAMPLE;
        e->has |= TRC_F_SESSIONS | TRC_F_QUEUE | TRC_F_IN_FLIGHT | TRC_F_RSS_MB | TRC_F_MEM;
        e->sessions = 2;
        e->queue = (int64_t)(k % 7);
        e->in_flight = 1;
        e->rss_mb = 300 + (int64_t)(k % 97);
        e->mem_has = 0xf;
        e->mem[TRC_MEM_JAVA] = 12 << 20;
        e->mem[TRC_MEM_NATIVE] = (int64_t)(250 + k % 50) << 20;
        e->mem[TRC_MEM_GPU] = 96 << 20;
        e->mem[TRC_MEM_FILE] = 48 << 20;
        break;
    }
}

static int gen(const char *dir, long mb)
{
    const char *ext[] = {"json", "jsonl", "msgpack"};
    for (int f = 0; f < TRC_FORMAT_COUNT; f++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/t.%s", dir, ext[f]);
        FILE *out = fopen(path, "wb");
        if (out == NULL)
            return 1;
        sim_error err;
        sim_error_clear(&err);
        trc_writer *w = trc_writer_create(out, (trc_format)f, &err);
        trc_event e;
        for (uint64_t k = 0; ftell(out) < mb * (1L << 20); k++) {
            event_k(k, &e);
            if (trc_write(w, &e, &err) != SIM_OK)
                return 1;
        }
        trc_writer_finish(w, &err);
        trc_writer_destroy(w);
        printf("%s: %.1f MiB\n", path, (double)ftell(out) / (1 << 20));
        fclose(out);
    }
    return 0;
}

static long file_size(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return -1;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fclose(f);
    return n;
}

static int read_trace(const char *path)
{
    sim_error err;
    sim_error_clear(&err);
    double t0 = now_s();
    trc_reader *r = trc_open(path, -1, NULL, &err);
    if (r == NULL) {
        fprintf(stderr, "%s\n", err.msg);
        return 1;
    }
    trc_event e;
    int rc;
    int64_t check = 0;
    while ((rc = trc_next(r, &e, &err)) == 1)
        check += e.time_us;
    double dt = now_s() - t0;
    if (rc != 0) {
        fprintf(stderr, "%s\n", err.msg);
        return 1;
    }
    long n = file_size(path);
    printf("%s: %llu events, %.1f MiB in %.3f s: %.0f MB/s, max RSS %ld KiB (check %lld)\n", path,
           (unsigned long long)trc_events_read(r), (double)n / (1 << 20), dt, (double)n / dt / 1e6,
           max_rss_kb(), (long long)(check % 1000));
    trc_close(r);
    return 0;
}

/* The library alone: what the reader's overhead is measured against. */
static int base(const char *path)
{
    long n = file_size(path);
    FILE *f = fopen(path, "rb");
    if (f == NULL)
        return 1;
    uint64_t count = 0;
    double t0 = now_s();
    if (trc_format_of_path(path) == TRC_JSONL) {
        char *line = NULL;
        size_t cap = 0;
        ssize_t len;
        while ((len = getline(&line, &cap, f)) > 0) {
            json_t *o = json_loadb(line, (size_t)len, 0, NULL);
            count += o != NULL;
            json_decref(o);
        }
        free(line);
    } else {
        msgpack_unpacker up;
        msgpack_unpacked res;
        msgpack_unpacker_init(&up, 1 << 16);
        msgpack_unpacked_init(&res);
        for (;;) {
            msgpack_unpacker_reserve_buffer(&up, 1 << 16);
            size_t got = fread(msgpack_unpacker_buffer(&up), 1, 1 << 16, f);
            if (got == 0)
                break;
            msgpack_unpacker_buffer_consumed(&up, got);
            while (msgpack_unpacker_next(&up, &res) == MSGPACK_UNPACK_SUCCESS)
                count++;
        }
        msgpack_unpacked_destroy(&res);
        msgpack_unpacker_destroy(&up);
    }
    double dt = now_s() - t0;
    fclose(f);
    printf("%s (library alone): %llu objects in %.3f s: %.0f MB/s\n", path,
           (unsigned long long)count, dt, (double)n / dt / 1e6);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 4 && strcmp(argv[1], "gen") == 0)
        return gen(argv[2], atol(argv[3]));
    if (argc == 3 && strcmp(argv[1], "read") == 0)
        return read_trace(argv[2]);
    if (argc == 3 && strcmp(argv[1], "base") == 0)
        return base(argv[2]);
    fprintf(stderr, "usage: bench_traces gen DIR MB | read FILE | base FILE\n");
    return 2;
}
