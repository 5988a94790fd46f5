/* packets.c - the packet walk: a trace from a file (a packet at a time,
 * never more than one packet and its bundle in memory) or from a buffer;
 * each TracePacket's fields dispatched to the decoder of the current pass,
 * the sequence's state first; compressed_packets (TracePacket 50, zlib)
 * and zstd bundles (133) inflated and walked in turn. */
#include "pf_int.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include <zlib.h>
#include <zstd.h>
#include <zstd_errors.h>

/* Room for more of a decompressed bundle (doubling from 1 MiB, at most
 * TRC_PF_PACKET_MAX); `what` names the bundle in the refusal. */
static int grow_inflated(imp *m, const char *what)
{
    if (m->inflated_cap >= TRC_PF_PACKET_MAX)
        return pf__fail(m, SIM_ELIMIT, "a %s bundle larger than %zu MiB decompressed", what,
                        TRC_PF_PACKET_MAX >> 20);
    size_t nc = m->inflated_cap ? m->inflated_cap * 2 : (size_t)1 << 20;
    uint8_t *q = realloc(m->inflated, nc);
    if (q == NULL)
        return pf__oom(m);
    m->inflated = q;
    m->inflated_cap = nc;
    return SIM_OK;
}

/* A zstd_compressed_packets bundle into m->inflated: *out bytes. */
static int inflate_zstd(imp *m, const uint8_t *p, size_t len, size_t *out)
{
    ZSTD_DStream *z = ZSTD_createDStream();
    if (z == NULL)
        return pf__oom(m);
    ZSTD_inBuffer in = {p, len, 0};
    size_t rc = 1;
    int code = SIM_OK;
    while (rc != 0 && code == SIM_OK) {
        if (*out == m->inflated_cap && (code = grow_inflated(m, "zstd")) != SIM_OK)
            break;
        ZSTD_outBuffer ob = {m->inflated, m->inflated_cap, *out};
        rc = ZSTD_decompressStream(z, &ob, &in);
        *out = ob.pos;
        if (ZSTD_isError(rc) && ZSTD_getErrorCode(rc) == ZSTD_error_memory_allocation)
            code = pf__oom(m);
        else if (ZSTD_isError(rc))
            code = pf__fail(m, SIM_EINPUT, "corrupt zstd_compressed_packets (%s)",
                            ZSTD_getErrorName(rc));
        else if (rc != 0 && in.pos == in.size && ob.pos < ob.size)
            code = pf__fail(m, SIM_EINPUT, "truncated zstd_compressed_packets");
    }
    ZSTD_freeDStream(z);
    return code;
}

/* A compressed_packets (zlib) bundle into m->inflated: *out bytes. */
static int inflate_zlib(imp *m, const uint8_t *p, size_t len, size_t *out)
{
    z_stream z;
    memset(&z, 0, sizeof z);
    if (inflateInit(&z) != Z_OK)
        return pf__oom(m);
    z.next_in = (Bytef *)(uintptr_t)p;
    z.avail_in = len > UINT_MAX ? UINT_MAX : (uInt)len;
    int rc = Z_OK, code = SIM_OK;
    while (rc != Z_STREAM_END && code == SIM_OK) {
        if (*out == m->inflated_cap && (code = grow_inflated(m, "compressed")) != SIM_OK)
            break;
        z.next_out = m->inflated + *out;
        z.avail_out = (uInt)(m->inflated_cap - *out);
        rc = inflate(&z, Z_NO_FLUSH);
        *out = m->inflated_cap - z.avail_out;
        if (rc == Z_MEM_ERROR)
            code = pf__oom(m);
        else if (rc != Z_OK && rc != Z_STREAM_END)
            code = pf__fail(m, SIM_EINPUT, rc == Z_BUF_ERROR ? "truncated compressed_packets"
                                                              : "corrupt compressed_packets (%s)",
                            z.msg != NULL ? z.msg : "zlib");
    }
    inflateEnd(&z);
    return code;
}

/* A compressed bundle: inflated, then its packets walked (one level deep). */
static int inflate_bundle(imp *m, const uint8_t *p, size_t len, int zstd)
{
    if (m->depth > 0)
        return pf__fail(m, SIM_EINPUT, "a compressed bundle inside a compressed bundle");
    size_t out = 0;
    int rc = zstd ? inflate_zstd(m, p, len, &out) : inflate_zlib(m, p, len, &out);
    if (rc != SIM_OK)
        return rc;
    if (m->pass == 1 || m->pass == PF_PASS_PHONE)
        m->sum->compressed++;
    if (out == 0)
        return SIM_OK; /* an empty bundle */
    m->depth = 1;
    rc = pf__packets(m, m->inflated, out, 0);
    m->depth = 0;
    return rc;
}

static int state_field(uint32_t num)
{
    return num == TP_INTERNED || num == TP_DEFAULTS || num == TP_CLOCK_SNAPSHOT ||
           num == TP_THREAD_DESC || num == TP_PROCESS_DESC || num == TP_TRACK_DESC;
}

/* A packet's own fields (timestamp, sequence, clock, flags) and the
 * fields that carry something a decoder reads, in any order. */
typedef struct packet_head {
    uint64_t ts;
    uint32_t seq_id, clock_id, flags;
    int cleared;
    pb_field body[16];
    int nbody;
} packet_head;

static int read_head(imp *m, const uint8_t *p, size_t len, packet_head *h)
{
    pb_msg d = pb_msg_of(p, len);
    pb_field f;
    int r;
    memset(h, 0, sizeof *h);
    while ((r = pb_next(&d, &f)) == 1) {
        switch (f.num) {
        case TP_TIMESTAMP: h->ts = f.v; break;
        case TP_SEQ_ID: h->seq_id = (uint32_t)f.v; break;
        case TP_CLOCK_ID: h->clock_id = (uint32_t)f.v; break;
        case TP_SEQ_FLAGS: h->flags = (uint32_t)f.v; break;
        case TP_INCR_CLEARED: h->cleared = f.v != 0; break;
        case TP_FTRACE: case TP_PROCESS_TREE: case TP_CLOCK_SNAPSHOT: case TP_PROCESS_STATS:
        case TP_TRACK_EVENT: case TP_INTERNED: case TP_PROCESS_DESC: case TP_THREAD_DESC:
        case TP_COMPRESSED: case TP_DEFAULTS: case TP_TRACK_DESC: case TP_ZSTD:
        case TP_SYS_STATS: case TP_SYSTEM_INFO:
            if (f.wt != PB_LEN)
                break;
            if (h->nbody == 16)
                return pf__fail(m, SIM_ELIMIT,
                                "more than 16 fields the importer reads in one packet");
            h->body[h->nbody++] = f;
            break;
        default: break;
        }
    }
    if (r < 0)
        return pf__fail(m, SIM_EINPUT, "malformed packet");
    /* the sequence's state (interned names, defaults, clocks, its thread)
     * before the events that use it, whatever the order of the fields */
    for (int i = 1; i < h->nbody; i++)
        for (int k = i; k > 0 && state_field(h->body[k].num) && !state_field(h->body[k - 1].num);
             k--) {
            pb_field t = h->body[k];
            h->body[k] = h->body[k - 1];
            h->body[k - 1] = t;
        }
    return SIM_OK;
}

/* The descriptors of pass 1 (and a thread descriptor's sequence later). */
static int descriptor(imp *m, seqstate *s, const pb_field *b)
{
    int rc = SIM_OK;
    if (b->num == TP_PROCESS_TREE)
        return m->pass == 1 ? pf__process_tree(m, b->p, b->len) : SIM_OK;
    if (b->num == TP_TRACK_DESC)
        return m->pass == 1 ? pf__track_descriptor(m, b->p, b->len) : SIM_OK;
    if (b->num == TP_PROCESS_DESC) {
        int64_t pid;
        int match;
        if (m->pass == 1 && (rc = pf__process_descriptor(m, b->p, b->len, &pid, &match)) ==
                                SIM_OK && match)
            rc = pf__choose(m, pid);
        return rc;
    }
    int64_t pid, tid; /* TP_THREAD_DESC */
    if (m->pass == 1 || s != NULL)
        rc = pf__thread_descriptor(m, b->p, b->len, &pid, &tid);
    if (rc == SIM_OK && m->pass == 1 && tid > 0 && tid != pid && pf__chosen(m, pid))
        rc = pf__map_put(&m->threads, (uint64_t)tid, pid) == SIM_OK ? SIM_OK : pf__oom(m);
    if (rc == SIM_OK && s != NULL)
        s->thread_pid = (int32_t)pid, s->thread_tid = (int32_t)tid;
    return rc;
}

/* One field of a packet, to the decoder of this pass. */
static int field(imp *m, seqstate *s, const packet_head *h, const pb_field *b)
{
    switch (b->num) {
    case TP_COMPRESSED:
    case TP_ZSTD: return inflate_bundle(m, b->p, b->len, b->num == TP_ZSTD);
    case TP_PROCESS_TREE:
    case TP_TRACK_DESC:
    case TP_PROCESS_DESC:
    case TP_THREAD_DESC: return descriptor(m, s, b);
    case TP_FTRACE: return m->pass >= 2 ? pf__ftrace_bundle(m, b->p, b->len) : SIM_OK;
    case TP_PROCESS_STATS:
        if (m->pass == PF_PASS_PHONE)
            return pf__phone_process_stats(m, (int64_t)h->ts, b->p, b->len);
        return m->pass == 3 ? pf__process_stats(m, (int64_t)h->ts, b->p, b->len) : SIM_OK;
    case TP_SYS_STATS:
        return m->pass == PF_PASS_PHONE ? pf__phone_sys_stats(m, (int64_t)h->ts, b->p, b->len)
                                        : SIM_OK;
    case TP_SYSTEM_INFO:
        return m->pass == PF_PASS_PHONE ? pf__phone_system_info(m, b->p, b->len) : SIM_OK;
    case TP_INTERNED: return s != NULL ? pf__interned(m, s, b->p, b->len) : SIM_OK;
    case TP_DEFAULTS: return s != NULL ? pf__defaults(m, s, b->p, b->len) : SIM_OK;
    case TP_CLOCK_SNAPSHOT: return s != NULL ? pf__clock_snapshot(m, s, b->p, b->len) : SIM_OK;
    case TP_TRACK_EVENT:
        if (m->pass != 3)
            return SIM_OK;
        return pf__track_event(m, s, pf__packet_time(s, h->ts, h->clock_id), b->p, b->len);
    default: return SIM_OK;
    }
}

/* One TracePacket: its sequence's state first, then each field. */
static int packet(imp *m, const uint8_t *p, size_t len)
{
    packet_head h;
    int rc = read_head(m, p, len, &h);
    if (rc != SIM_OK)
        return rc;
    if (m->pass == 1 || m->pass == PF_PASS_PHONE)
        m->sum->packets++;
    if (m->pass == PF_PASS_PHONE && h.nbody == 0)
        m->phone->ignored_packets++;
    seqstate *s = NULL;
    if (m->pass == 3 && h.seq_id != 0) {
        if ((s = pf__seq_of(m, h.seq_id)) == NULL)
            return m->err->code;
        if (h.cleared || (h.flags & SEQ_INCREMENTAL_STATE_CLEARED)) {
            s->gen++;
            s->seq_clock = 0;
        }
    }
    for (int i = 0; i < h.nbody && rc == SIM_OK; i++)
        rc = field(m, s, &h, &h.body[i]);
    return rc;
}

/* The packets of a Trace message held in memory (a decompressed bundle, or
 * a whole trace given as a buffer); `base`: the offset of p[0] in the file,
 * for messages. */
int pf__packets(imp *m, const uint8_t *p, size_t len, uint64_t base)
{
    pb_msg t = pb_msg_of(p, len);
    uint64_t outer = m->packet_off;
    for (;;) {
        const uint8_t *at = t.p;
        if (m->depth == 0)
            m->packet_off = base + (uint64_t)(at - p);
        pb_field f;
        int r = pb_next(&t, &f);
        if (r == 0)
            break;
        if (r < 0) {
            if (m->depth > 0)
                m->packet_off = outer;
            return pf__fail(m, SIM_EINPUT, "truncated or malformed packet (%zu bytes left)",
                        (size_t)(p + len - at));
        }
        if (f.num != 1 || f.wt != PB_LEN) {
            if (m->depth > 0)
                m->packet_off = outer;
            return pf__fail(m, SIM_EINPUT, "not a Perfetto trace: field %u (wire type %d) where a "
                        "packet (field 1) should be", f.num, f.wt);
        }
        if (m->depth == 0)
            m->sum->bytes += m->pass == 1 || m->pass == PF_PASS_PHONE ? (uint64_t)(t.p - at) : 0;
        int rc = packet(m, f.p, f.len);
        if (rc != SIM_OK)
            return rc;
    }
    if (m->depth > 0)
        m->packet_off = outer;
    return SIM_OK;
}

/* The read buffer of a trace file: buf[lo..hi) is unread, `base` the file
 * offset of buf[0]. */
typedef struct reader {
    FILE *in;
    uint8_t *buf;
    size_t cap, lo, hi;
    uint64_t base;
    int eof;
} reader;

static int read_error(imp *m)
{
    return sim_error_set(m->err, SIM_EIO, "%s: read error: %s", m->name, strerror(errno));
}

/* Moves the unread bytes to the front of the buffer. */
static void compact(reader *r)
{
    memmove(r->buf, r->buf + r->lo, r->hi - r->lo);
    r->base += r->lo, r->hi -= r->lo, r->lo = 0;
}

/* Reads until `need` bytes are unread or the file ends, growing the
 * buffer (need is at most a packet's bound plus its tag and length). */
static int fill(imp *m, reader *r, size_t need)
{
    compact(r);
    if (need > r->cap) {
        size_t nc = r->cap;
        while (nc < need)
            nc *= 2;
        uint8_t *g = realloc(r->buf, nc);
        if (g == NULL)
            return pf__oom(m);
        r->buf = g, r->cap = nc;
    }
    while (r->hi < need && !r->eof) {
        size_t got = fread(r->buf + r->hi, 1, r->cap - r->hi, r->in);
        if (got == 0 && ferror(r->in))
            return read_error(m);
        r->eof = got == 0;
        r->hi += got;
    }
    return SIM_OK;
}

/* The next packet's tag and length at buf[lo]: *head bytes of them and a
 * body of *n bytes. */
static int packet_size(imp *m, const reader *r, size_t *head, uint64_t *n)
{
    const uint8_t *q = r->buf + r->lo, *end = r->buf + r->hi;
    uint64_t tag = 0;
    if (!pb_varint(&q, end, &tag) || tag != (1u << 3 | PB_LEN))
        return pf__fail(m, SIM_EINPUT, "not a Perfetto trace: no packet (field 1) here");
    if (!pb_varint(&q, end, n))
        return pf__fail(m, SIM_EINPUT, "truncated: the packet's length is cut");
    *head = (size_t)(q - (r->buf + r->lo));
    if (*n > TRC_PF_PACKET_MAX)
        return pf__fail(m, SIM_ELIMIT, "a packet of %" PRIu64 " bytes (at most %zu MiB)", *n,
                        TRC_PF_PACKET_MAX >> 20);
    return SIM_OK;
}

/* A trace read from a file a packet at a time. */
int pf__packets_file(imp *m, FILE *in)
{
    reader r = {in, malloc((size_t)1 << 20), (size_t)1 << 20, 0, 0, 0, 0};
    if (r.buf == NULL)
        return pf__oom(m);
    int rc = SIM_OK;
    for (;;) {
        /* at least a tag and a length, or the rest of the file */
        if (r.hi - r.lo < 20 && !r.eof) {
            if ((rc = fill(m, &r, r.hi - r.lo + 1)) != SIM_OK)
                break;
            continue;
        }
        if (r.lo == r.hi)
            break;
        m->packet_off = r.base + r.lo;
        size_t head = 0;
        uint64_t n = 0;
        if ((rc = packet_size(m, &r, &head, &n)) != SIM_OK)
            break;
        size_t need = head + (size_t)n;
        if (r.hi - r.lo < need) {
            if (r.eof) {
                rc = pf__fail(m, SIM_EINPUT, "truncated: the packet needs %" PRIu64 " bytes, "
                              "%zu are left", n, r.hi - r.lo - head);
                break;
            }
            if ((rc = fill(m, &r, need)) != SIM_OK)
                break;
            continue;
        }
        m->sum->bytes += m->pass == 1 || m->pass == PF_PASS_PHONE ? need : 0;
        if ((rc = packet(m, r.buf + r.lo + head, (size_t)n)) != SIM_OK)
            break;
        r.lo += need;
    }
    free(r.buf);
    return rc;
}
