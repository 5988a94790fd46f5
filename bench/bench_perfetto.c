/* bench_perfetto.c - `oomsim import perfetto` speed and memory (figures in
 * docs/perfetto.md and docs/performance.md).
 *
 *   bench_perfetto gen FILE MB   writes a synthetic Perfetto trace of about MB MiB
 *   bench_perfetto read FILE     imports the app's process from it: MB/s and max RSS
 *
 * The trace is what a busy phone records: a process tree of 300 processes,
 * then ftrace bundles of 2,000 events from 8 CPUs (scheduler switches,
 * every process's rss_stat, other apps' atrace sections) with a process
 * stats poll every 64 bundles; the app (com.example.app, pid 5000) has
 * about 0.5 % of the events: its rss_stat, its oomsim sections. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_clock.h"
#include "traces/traces.h"


/* A growing byte buffer with the wire format's writers. */
typedef struct buf {
    uint8_t *p;
    size_t n, cap;
} buf;

static void put(buf *b, const void *d, size_t n)
{
    if (b->n + n > b->cap) {
        size_t nc = b->cap ? b->cap * 2 : 4096;
        while (nc < b->n + n)
            nc *= 2;
        b->p = realloc(b->p, nc);
        if (b->p == NULL)
            abort();
        b->cap = nc;
    }
    memcpy(b->p + b->n, d, n);
    b->n += n;
}

static void varint_raw(buf *b, uint64_t v)
{
    uint8_t t[10];
    size_t n = 0;
    while (v >= 0x80) {
        t[n++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    t[n++] = (uint8_t)v;
    put(b, t, n);
}

static void varint(buf *b, uint32_t field, uint64_t v)
{
    varint_raw(b, (uint64_t)field << 3);
    varint_raw(b, v);
}

static void bytes(buf *b, uint32_t field, const void *d, size_t n)
{
    varint_raw(b, (uint64_t)field << 3 | 2);
    varint_raw(b, n);
    put(b, d, n);
}

static void sub(buf *b, uint32_t field, buf *m)
{
    bytes(b, field, m->p, m->n);
    m->n = 0;
}

#define APP 5000
#define NPROC 300

static uint64_t rng = 88172645463325252ull;
static uint64_t next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

/* One ftrace event of the synthetic trace: the app's (0.5 %: rss_stat
 * or its inference slices), a sched_switch, another process's rss_stat or
 * atrace section. */
static void one_event(buf *ev, buf *m2, uint64_t *t, uint64_t *app_anon, int *open)
{
    *t += 1000 + next() % 1000;
    uint64_t r = next() % 1000;
    varint(ev, 1, *t);
    if (r < 5) { /* the app: 0.5 % */
        varint(ev, 2, APP + 100000);
        if (r < 3) {
            /* a walk between 50 and 400 MiB */
            if ((next() % 2 && *app_anon < (400u << 20)) || *app_anon <= (50u << 20))
                *app_anon += 1u << 20;
            else
                *app_anon -= 1u << 20;
            varint(m2, 1, 1);
            varint(m2, 2, *app_anon);
            varint(m2, 3, 1);
            varint(m2, 4, 777);
            sub(ev, 313, m2);
        } else {
            const char *s = *open ? "E|5000\n" : "B|5000|oomsim:inference:model\n";
            *open = !*open;
            bytes(m2, 2, s, strlen(s));
            sub(ev, 3, m2);
        }
    } else if (r < 600) { /* sched_switch */
        varint(ev, 2, 1000 + next() % NPROC);
        bytes(m2, 1, "some_thread", 11);
        varint(m2, 2, 1000 + next() % NPROC);
        bytes(m2, 5, "other_thread", 12);
        varint(m2, 6, 1000 + next() % NPROC);
        sub(ev, 4, m2);
    } else if (r < 850) { /* another process's rss_stat */
        uint64_t pid = 1001 + next() % (NPROC - 1);
        varint(ev, 2, pid);
        varint(m2, 1, next() % 4);
        varint(m2, 2, next() % (1u << 30));
        varint(m2, 3, 1);
        varint(m2, 4, pid * 7);
        sub(ev, 313, m2);
    } else { /* another app's atrace section */
        varint(ev, 2, 1001 + next() % (NPROC - 1));
        const char *s = r % 2 ? "B|1234|Choreographer#doFrame 123456\n" : "E|1234\n";
        bytes(m2, 2, s, strlen(s));
        sub(ev, 3, m2);
    }
}

/* A process stats poll of every process. */
static void stats_poll(buf *pkt, buf *top, buf *m1, buf *m2, uint64_t t, uint64_t app_anon)
{
    varint(pkt, 8, t);
    for (int k = 0; k < NPROC; k++) {
        varint(m2, 1, k == 0 ? APP : 1000 + (uint64_t)k);
        varint(m2, 4, (k == 0 ? app_anon : 50u << 20) >> 10);
        varint(m2, 5, 20480);
        varint(m2, 10, k == 0 ? 0 : 900);
        sub(m1, 1, m2);
    }
    sub(pkt, 9, m1);
    sub(top, 1, pkt);
}

static int gen(const char *path, double mb)
{
    FILE *f = fopen(path, "wb");
    if (f == NULL)
        return 1;
    buf pkt = {0}, top = {0}, m1 = {0}, m2 = {0}, ev = {0};
    /* the process tree */
    for (int k = 0; k < NPROC; k++) {
        int pid = k == 0 ? APP : 1000 + k;
        char name[64];
        snprintf(name, sizeof name, k == 0 ? "com.example.app" : "com.other.app%d", k);
        varint(&m2, 1, (uint64_t)pid);
        bytes(&m2, 3, name, strlen(name));
        sub(&m1, 1, &m2);
        varint(&m2, 1, (uint64_t)pid + 100000);
        varint(&m2, 3, (uint64_t)pid);
        sub(&m1, 2, &m2);
    }
    sub(&pkt, 2, &m1);
    sub(&top, 1, &pkt);
    uint64_t t = 1000000000ull, app_anon = 100u << 20, bundles = 0;
    int open = 0;
    size_t target = (size_t)(mb * 1048576.0);
    size_t written = 0;
    while (written < target) {
        varint(&m1, 1, bundles % 8);
        for (int k = 0; k < 2000; k++) {
            one_event(&ev, &m2, &t, &app_anon, &open);
            sub(&m1, 2, &ev);
        }
        sub(&pkt, 1, &m1);
        sub(&top, 1, &pkt);
        if (++bundles % 64 == 0) /* a process stats poll */
            stats_poll(&pkt, &top, &m1, &m2, t, app_anon);
        if (fwrite(top.p, 1, top.n, f) != top.n)
            return 1;
        written += top.n;
        top.n = 0;
    }
    free(pkt.p), free(top.p), free(m1.p), free(m2.p), free(ev.p);
    printf("wrote %s: %.1f MiB, %llu bundles of 2000 events\n", path, (double)written / 1048576.0,
           (unsigned long long)bundles);
    return fclose(f) != 0;
}

static int count(void *ctx, const trc_event *e, sim_error *err)
{
    (void)e;
    (void)err;
    ++*(uint64_t *)ctx;
    return SIM_OK;
}

int main(int argc, char **argv)
{
    if (argc == 4 && strcmp(argv[1], "gen") == 0)
        return gen(argv[2], atof(argv[3]));
    if (argc != 3 || strcmp(argv[1], "read") != 0) {
        fprintf(stderr, "usage: bench_perfetto gen FILE MB | read FILE\n");
        return 2;
    }
    trc_pf_opts o = {"com.example.app", -1, "app", 1};
    trc_pf_summary sum;
    sim_error err;
    sim_error_clear(&err);
    uint64_t n = 0;
    double t0 = now_s();
    int rc = trc_pf_import_file(argv[2], &o, count, &n, &sum, &err);
    double dt = now_s() - t0;
    if (rc != SIM_OK) {
        fprintf(stderr, "%s\n", err.msg);
        trc_pf_summary_free(&sum);
        return 1;
    }
    double mib = (double)sum.bytes / 1048576.0;
    printf("%s: %.1f MiB in %.2f s: %.0f MB/s (three passes); the app: %llu memory updates, "
           "%llu slices, %llu events written; max RSS %.1f MiB\n",
           argv[2], mib, dt, (double)sum.bytes / 1e6 / dt, (unsigned long long)sum.memory_events,
           (unsigned long long)sum.slices, (unsigned long long)n,
           (double)max_rss_kb() / 1024.0);
    trc_pf_summary_free(&sum);
    return 0;
}
