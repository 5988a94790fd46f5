/* read.c - streaming trace readers: JSON Lines (jansson, one line at a
 * time), JSON arrays (a byte-level splitter that hands one element at a
 * time to jansson), msgpack (a bounds-checking scan of each object, then
 * msgpack-c's unpacker on exactly that object).
 *
 * Memory is one input buffer (64 KiB, growing to at most one event of
 * TRC_EVENT_MAX_BYTES) and one parsed event, whatever the trace's length.
 * The msgpack scan exists because msgpack-c allocates a container's
 * elements from the count in its header before their bytes arrive: a
 * 5-byte header could ask for gigabytes.  The scan refuses any count larger
 * than the bytes that could hold it, so allocation stays bounded by the
 * event size. */
#include "json.h"
#include "traces_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <msgpack.h>

#define CHUNK ((size_t)64 << 10)

struct trc_reader {
    trc_format fmt;
    trc__ctx cx;
    sim_error saved;  /* the error or end, repeated after it */
    int state;        /* 0 reading, 1 ended, 2 failed (saved holds the error) */
    int io_failed;
    char name[256];
    FILE *f;
    const char *mem;  /* buffer input */
    size_t mem_len, mem_pos;
    char *buf;        /* input bytes [pos, len) not consumed yet */
    size_t cap, len, pos;
    int eof;
    uint64_t line;    /* line of buf[pos] (text encodings), from 1 */
    /* JSON array */
    int in_array, after_element;
    char *elem;
    size_t elem_cap;
    /* msgpack */
    int header_done;
    msgpack_zone zone; /* one zone, cleared after each object */
};

/* ------------------------------------------------------------- input */

/* Ensures at least `want` unconsumed bytes when the input has them;
 * returns the number available. */
static size_t fill(trc_reader *r, size_t want)
{
    if (r->len - r->pos >= want || r->eof)
        return r->len - r->pos;
    if (r->pos > 0) {
        memmove(r->buf, r->buf + r->pos, r->len - r->pos);
        r->len -= r->pos;
        r->pos = 0;
    }
    while (r->len < want && !r->eof) {
        if (r->cap - r->len < CHUNK) {
            size_t cap = r->cap * 2;
            if (cap > TRC_EVENT_MAX_BYTES + 2 * CHUNK)
                cap = TRC_EVENT_MAX_BYTES + 2 * CHUNK;
            if (cap > r->cap) {
                char *b = realloc(r->buf, cap);
                if (b == NULL)
                    break;
                r->buf = b;
                r->cap = cap;
            }
            if (r->cap == r->len)
                break;
        }
        size_t room = r->cap - r->len, got;
        if (r->f != NULL) {
            got = fread(r->buf + r->len, 1, room, r->f);
            if (got < room && ferror(r->f)) {
                r->eof = 1;
                r->io_failed = 1; /* reported by trc_next as an I/O error */
            }
        } else {
            got = r->mem_len - r->mem_pos < room ? r->mem_len - r->mem_pos : room;
            memcpy(r->buf + r->len, r->mem + r->mem_pos, got);
            r->mem_pos += got;
        }
        if (got == 0)
            r->eof = 1;
        r->len += got;
    }
    return r->len - r->pos;
}


/* ------------------------------------------------------------ jansson */

static trc__value value_of_json(const json_t *j)
{
    trc__value v = {TRC_V_NIL, 0, NULL, 0};
    switch (json_typeof(j)) {
    case JSON_OBJECT: v.t = TRC_V_MAP; break;
    case JSON_ARRAY: v.t = TRC_V_ARRAY; break;
    case JSON_STRING:
        v.t = TRC_V_STR;
        v.s = json_string_value(j);
        v.len = json_string_length(j);
        break;
    case JSON_INTEGER: v.t = TRC_V_INT; v.i = (int64_t)json_integer_value(j); break;
    case JSON_REAL: v.t = TRC_V_REAL; break;
    case JSON_TRUE:
    case JSON_FALSE: v.t = TRC_V_BOOL; break;
    case JSON_NULL: break;
    }
    return v;
}


static int event_of_json(trc_reader *r, const json_t *o, trc_event *e)
{
    trc__ctx *cx = &r->cx;
    if (!json_is_object(o)) {
        trc__value v = value_of_json(o);
        static const char *const n[] = {"null", "a boolean", "an integer", "a real number",
                                        "a string", "a map", "a list"};
        return trc__fail(cx, NULL, SIM_EINPUT, "expected an event object, got %s", n[v.t]);
    }
    trc__begin_event(cx, e);
    const char *key;
    json_t *val;
    int rc;
    json_object_foreach((json_t *)o, key, val) {
        int k;
        if ((rc = trc__top_key(cx, key, strlen(key), &k)) != SIM_OK)
            return rc;
        if (k < 0)
            continue; /* dropped */
        trc__value v = value_of_json(val);
        if ((rc = trc__set(cx, e, k, &v)) != SIM_OK)
            return rc;
        if (TRC__IS_MAP(k)) {
            const char *sk;
            json_t *sv;
            json_object_foreach(val, sk, sv) {
                trc__value x = value_of_json(sv);
                if ((rc = trc__set_sub(cx, e, k, sk, strlen(sk), &x)) != SIM_OK)
                    return rc;
            }
        }
    }
    return trc__end_event(cx, e);
}

/* Parses one JSON text of exactly len bytes into an event. */
static int parse_json_event(trc_reader *r, const char *text, size_t len, trc_event *e)
{
    json_error_t je;
    int oom;
    json_t *o = trc_json_loadb(text, len, JSON_REJECT_DUPLICATES, &je, &oom);
    if (o == NULL && oom)
        return trc__fail(&r->cx, NULL, SIM_ENOMEM, "out of memory");
    if (o == NULL) /* jansson's text can quote the input: only its position is kept */
        return trc__fail(&r->cx, NULL, SIM_EINPUT, "not valid JSON (at byte %d of the event)",
                         je.position);
    int rc = event_of_json(r, o, e);
    json_decref(o);
    return rc;
}

/* --------------------------------------------------------- JSON Lines */

static int next_jsonl(trc_reader *r, trc_event *e)
{
    for (;;) {
        size_t avail = fill(r, 1);
        if (avail == 0)
            return 0;
        char *start = r->buf + r->pos;
        char *nl = memchr(start, '\n', avail);
        while (nl == NULL && !r->eof) {
            if (avail > TRC_EVENT_MAX_BYTES)
                break;
            avail = fill(r, avail + CHUNK);
            start = r->buf + r->pos;
            nl = memchr(start, '\n', avail);
        }
        size_t n = nl != NULL ? (size_t)(nl - start) : avail;
        r->cx.line = r->line;
        if (n > TRC_EVENT_MAX_BYTES)
            return trc__fail(&r->cx, NULL, SIM_ELIMIT, "a line of more than %zu bytes",
                             TRC_EVENT_MAX_BYTES);
        r->pos += n + (nl != NULL);
        r->line++;
        size_t k = 0;
        while (k < n && (start[k] == ' ' || start[k] == '\t' || start[k] == '\r'))
            k++;
        if (k == n)
            continue; /* a blank line */
        return parse_json_event(r, start, n, e) == SIM_OK ? 1 : -1;
    }
}

/* --------------------------------------------------------- JSON array */

static int skip_ws(trc_reader *r)
{
    for (;;) {
        if (fill(r, 1) == 0)
            return -1;
        char c = r->buf[r->pos];
        if (c == '\n')
            r->line++;
        else if (c != ' ' && c != '\t' && c != '\r')
            return (unsigned char)c;
        r->pos++;
    }
}

/* After the closing bracket only white space may follow. */
static int json_end(trc_reader *r)
{
    r->pos++;
    if (skip_ws(r) != -1)
        return trc__fail(&r->cx, NULL, SIM_EINPUT, "text after the end of the array"), -1;
    return 0;
}

static int next_json(trc_reader *r, trc_event *e)
{
    trc__ctx *cx = &r->cx;
    int c = skip_ws(r);
    cx->line = r->line;
    if (!r->in_array) {
        if (c != '[')
            return trc__fail(cx, NULL, SIM_EINPUT, "expected a JSON array of events ('[')"),
                   -1;
        r->pos++;
        r->in_array = 1;
        c = skip_ws(r);
        cx->line = r->line;
        if (c == ']')
            return json_end(r);
    } else if (r->after_element) {
        if (c == ']')
            return json_end(r);
        if (c != ',')
            return trc__fail(cx, NULL, SIM_EINPUT, c == -1 ? "the array is not closed (']' "
                             "missing)" : "expected ',' or ']' after an event"), -1;
        r->pos++;
        c = skip_ws(r);
        cx->line = r->line;
    }
    if (c == -1)
        return trc__fail(cx, NULL, SIM_EINPUT, "the array is not closed (']' missing)"), -1;
    if (c != '{')
        return trc__fail(cx, NULL, SIM_EINPUT, "expected an event object ('{')"), -1;
    /* copy the element out, to its matching brace, strings skipped */
    size_t n = 0;
    int depth = 0, in_str = 0, esc = 0;
    for (;;) {
        if (fill(r, 1) == 0)
            return trc__fail(cx, NULL, SIM_EINPUT, "the trace ends inside an event"), -1;
        char ch = r->buf[r->pos++];
        if (n == r->elem_cap) {
            if (n >= TRC_EVENT_MAX_BYTES)
                return trc__fail(cx, NULL, SIM_ELIMIT, "an event of more than %zu bytes",
                                 TRC_EVENT_MAX_BYTES), -1;
            size_t cap = r->elem_cap ? r->elem_cap * 2 : 4096;
            char *b = realloc(r->elem, cap);
            if (b == NULL)
                return trc__fail(cx, NULL, SIM_ENOMEM, "out of memory"), -1;
            r->elem = b;
            r->elem_cap = cap;
        }
        r->elem[n++] = ch;
        if (ch == '\n')
            r->line++;
        if (in_str) {
            if (esc)
                esc = 0;
            else if (ch == '\\')
                esc = 1;
            else if (ch == '"')
                in_str = 0;
        } else if (ch == '"') {
            in_str = 1;
        } else if (ch == '{' || ch == '[') {
            depth++;
        } else if (ch == '}' || ch == ']') {
            if (--depth == 0)
                break;
        }
    }
    r->after_element = 1;
    return parse_json_event(r, r->elem, n, e) == SIM_OK ? 1 : -1;
}

/* ------------------------------------------------------------ msgpack */

/* The size of the msgpack object at b[0..n): > 0 when it is complete, 0
 * when more bytes are needed, -1 when malformed or a container's count
 * cannot fit in the remaining limit. */
static long mp_size(const unsigned char *b, size_t n, size_t limit, int depth)
{
    if (n == 0)
        return 0;
    if (depth > 8)
        return -1;
    unsigned t = b[0];
    size_t head = 1, body = 0;
    uint64_t items = 0; /* container entries (maps: 2 per pair) */
#define NEED(k) do { if (n < (k)) return 0; } while (0)
#define BE(p, k) be(b + (p), (k))
    if (t <= 0x7f || t >= 0xe0 || t == 0xc0 || t == 0xc2 || t == 0xc3) {
        return 1;
    } else if (t >= 0x80 && t <= 0x8f) {
        items = 2u * (t & 0x0f);
    } else if (t >= 0x90 && t <= 0x9f) {
        items = t & 0x0f;
    } else if (t >= 0xa0 && t <= 0xbf) {
        body = t & 0x1f;
    } else {
        switch (t) {
        case 0xcc: case 0xd0: head = 2; break;
        case 0xcd: case 0xd1: head = 3; break;
        case 0xca: case 0xce: case 0xd2: head = 5; break;
        case 0xcb: case 0xcf: case 0xd3: head = 9; break;
        case 0xd4: head = 3; break;
        case 0xd5: head = 4; break;
        case 0xd6: head = 6; break;
        case 0xd7: head = 10; break;
        case 0xd8: head = 18; break;
        case 0xc4: case 0xd9: NEED(2); head = 2; body = b[1]; break;
        case 0xc5: case 0xda: NEED(3); head = 3; body = (size_t)b[1] << 8 | b[2]; break;
        case 0xc6: case 0xdb:
            NEED(5);
            head = 5;
            body = (size_t)b[1] << 24 | (size_t)b[2] << 16 | (size_t)b[3] << 8 | b[4];
            break;
        case 0xc7: NEED(2); head = 3; body = b[1]; break;
        case 0xc8: NEED(3); head = 4; body = (size_t)b[1] << 8 | b[2]; break;
        case 0xc9:
            NEED(5);
            head = 6;
            body = (size_t)b[1] << 24 | (size_t)b[2] << 16 | (size_t)b[3] << 8 | b[4];
            break;
        case 0xdc: NEED(3); head = 3; items = (size_t)b[1] << 8 | b[2]; break;
        case 0xdd:
            NEED(5);
            head = 5;
            items = (uint64_t)b[1] << 24 | (uint64_t)b[2] << 16 | (uint64_t)b[3] << 8 | b[4];
            break;
        case 0xde: NEED(3); head = 3; items = 2u * ((size_t)b[1] << 8 | b[2]); break;
        case 0xdf:
            NEED(5);
            head = 5;
            items = 2u * ((uint64_t)b[1] << 24 | (uint64_t)b[2] << 16 | (uint64_t)b[3] << 8 |
                          b[4]);
            break;
        default: return -1; /* 0xc1: never used */
        }
    }
#undef NEED
#undef BE
    if (head + body > limit || items > limit)
        return -1; /* every item needs a byte at least */
    if (n < head)
        return 0;
    if (items == 0)
        return n >= head + body ? (long)(head + body) : 0;
    size_t off = head;
    for (uint64_t k = 0; k < items; k++) {
        long s = mp_size(b + off, n - off, limit - off, depth + 1);
        if (s <= 0)
            return s;
        off += (size_t)s;
        if (off > limit)
            return -1;
    }
    return (long)off;
}

static trc__value value_of_mp(const msgpack_object *o)
{
    trc__value v = {TRC_V_NIL, 0, NULL, 0};
    switch (o->type) {
    case MSGPACK_OBJECT_BOOLEAN: v.t = TRC_V_BOOL; break;
    case MSGPACK_OBJECT_POSITIVE_INTEGER:
        v.t = TRC_V_INT;
        if (o->via.u64 > (uint64_t)INT64_MAX)
            v.t = TRC_V_REAL; /* out of range: refused as not an integer */
        v.i = (int64_t)o->via.u64;
        break;
    case MSGPACK_OBJECT_NEGATIVE_INTEGER: v.t = TRC_V_INT; v.i = o->via.i64; break;
    case MSGPACK_OBJECT_FLOAT32:
    case MSGPACK_OBJECT_FLOAT64: v.t = TRC_V_REAL; break;
    case MSGPACK_OBJECT_STR: v.t = TRC_V_STR; v.s = o->via.str.ptr; v.len = o->via.str.size; break;
    case MSGPACK_OBJECT_ARRAY: v.t = TRC_V_ARRAY; break;
    case MSGPACK_OBJECT_MAP: v.t = TRC_V_MAP; break;
    default: v.t = TRC_V_ARRAY; break; /* bin, ext: not a trace value */
    }
    return v;
}

static int event_of_mp(trc_reader *r, const msgpack_object *o, trc_event *e)
{
    trc__ctx *cx = &r->cx;
    if (o->type != MSGPACK_OBJECT_MAP)
        return trc__fail(cx, NULL, SIM_EINPUT, "expected an event map");
    trc__begin_event(cx, e);
    int rc;
    for (uint32_t i = 0; i < o->via.map.size; i++) {
        const msgpack_object *ko = &o->via.map.ptr[i].key, *vo = &o->via.map.ptr[i].val;
        if (ko->type != MSGPACK_OBJECT_STR)
            return trc__fail(cx, NULL, SIM_EINPUT, "a key that is not a string");
        int k;
        if ((rc = trc__top_key(cx, ko->via.str.ptr, ko->via.str.size, &k)) != SIM_OK)
            return rc;
        if (k < 0)
            continue; /* dropped */
        trc__value v = value_of_mp(vo);
        if ((rc = trc__set(cx, e, k, &v)) != SIM_OK)
            return rc;
        if (TRC__IS_MAP(k)) {
            for (uint32_t j = 0; j < vo->via.map.size; j++) {
                const msgpack_object *sk = &vo->via.map.ptr[j].key;
                if (sk->type != MSGPACK_OBJECT_STR)
                    return trc__fail(cx, trc__key_name(k), SIM_EINPUT,
                                     "a key that is not a string");
                trc__value x = value_of_mp(&vo->via.map.ptr[j].val);
                if ((rc = trc__set_sub(cx, e, k, sk->via.str.ptr, sk->via.str.size, &x)) !=
                    SIM_OK)
                    return rc;
            }
        }
    }
    return trc__end_event(cx, e);
}

/* The next complete object: SIM_OK and its bytes at buf[pos, pos+*size),
 * 1 at a clean end, or an error. */
static int mp_object(trc_reader *r, size_t *size)
{
    size_t want = 1;
    for (;;) {
        size_t avail = fill(r, want);
        if (avail == 0)
            return 1;
        long s = mp_size((const unsigned char *)r->buf + r->pos, avail, TRC_EVENT_MAX_BYTES, 0);
        if (s > 0) {
            *size = (size_t)s;
            return SIM_OK;
        }
        if (s < 0)
            return trc__fail(&r->cx, NULL, SIM_EINPUT, "not valid msgpack, or an object larger "
                             "than %zu bytes", TRC_EVENT_MAX_BYTES);
        if (r->eof)
            return trc__fail(&r->cx, NULL, SIM_EINPUT, "the trace ends inside an event");
        want = avail + CHUNK;
    }
}

static int next_msgpack(trc_reader *r, trc_event *e)
{
    trc__ctx *cx = &r->cx;
    for (;;) {
        size_t size = 0;
        int rc = mp_object(r, &size);
        if (rc == 1) {
            if (!r->header_done)
                return trc__fail(cx, NULL, SIM_EINPUT, "empty: no {\"oomsim_trace\": 1} header"),
                       -1;
            return 0;
        }
        if (rc != SIM_OK)
            return -1;
        size_t off = 0;
        msgpack_object obj;
        msgpack_zone_clear(&r->zone);
        msgpack_unpack_return ur = msgpack_unpack(r->buf + r->pos, size, &off, &r->zone, &obj);
        r->pos += size;
        if (ur != MSGPACK_UNPACK_SUCCESS || off != size)
            return trc__fail(cx, NULL, SIM_EINPUT, "not valid msgpack"), -1;
        const msgpack_object *o = &obj;
        if (!r->header_done) {
            int ok = o->type == MSGPACK_OBJECT_MAP && o->via.map.size == 1 &&
                     o->via.map.ptr[0].key.type == MSGPACK_OBJECT_STR &&
                     o->via.map.ptr[0].key.via.str.size == 12 &&
                     memcmp(o->via.map.ptr[0].key.via.str.ptr, "oomsim_trace", 12) == 0 &&
                     o->via.map.ptr[0].val.type == MSGPACK_OBJECT_POSITIVE_INTEGER &&
                     o->via.map.ptr[0].val.via.u64 == 1;
            if (!ok)
                return trc__fail(cx, NULL, SIM_EINPUT, "the first object must be the header "
                                 "{\"oomsim_trace\": 1}"), -1;
            r->header_done = 1;
            continue;
        }
        return event_of_mp(r, o, e) == SIM_OK ? 1 : -1;
    }
}

/* --------------------------------------------------------------- API */

static trc_reader *open_common(const char *name, trc_format fmt, const trc_read_opts *opts,
                               sim_error *err)
{
    trc_reader *r = calloc(1, sizeof *r);
    char *buf = malloc(CHUNK * 2);
    if (r == NULL || buf == NULL) {
        free(r);
        free(buf);
        sim_error_set(err, SIM_ENOMEM, "%s: out of memory", name);
        return NULL;
    }
    r->fmt = fmt;
    r->buf = buf;
    r->cap = CHUNK * 2;
    r->line = 1;
    snprintf(r->name, sizeof r->name, "%s", name);
    r->cx.name = r->name;
    r->cx.drop_unknown = opts != NULL && opts->drop_unknown;
    if (!msgpack_zone_init(&r->zone, 16 << 10)) {
        free(r->buf);
        free(r);
        sim_error_set(err, SIM_ENOMEM, "%s: out of memory", name);
        return NULL;
    }
    return r;
}

trc_reader *trc_open(const char *path, int format, const trc_read_opts *opts, sim_error *err)
{
    int fmt = format >= 0 ? format : trc_format_of_path(path);
    if (fmt < 0 || fmt >= TRC_FORMAT_COUNT) {
        sim_error_set(err, SIM_EINPUT, "%s: unknown trace encoding (.json, .jsonl, .msgpack or "
                      ".mp; or --trace-format)", path);
        return NULL;
    }
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        if (errno == ENOMEM)
            sim_error_set(err, SIM_ENOMEM, "%s: out of memory", path);
        else
            sim_error_set(err, errno == ENOENT ? SIM_ENOTFOUND : SIM_EIO, "%s: %s", path,
                          strerror(errno));
        return NULL;
    }
    trc_reader *r = open_common(path, (trc_format)fmt, opts, err);
    if (r == NULL) {
        fclose(f);
        return NULL;
    }
    r->f = f;
    return r;
}

trc_reader *trc_open_buffer(const char *data, size_t len, const char *name, trc_format format,
                            const trc_read_opts *opts, sim_error *err)
{
    trc_reader *r = open_common(name, format, opts, err);
    if (r != NULL) {
        r->mem = data;
        r->mem_len = len;
    }
    return r;
}

int trc_next(trc_reader *r, trc_event *e, sim_error *err)
{
    if (r->state == 1)
        return 0;
    if (r->state == 2) {
        if (err != NULL)
            *err = r->saved;
        return r->saved.code;
    }
    sim_error_clear(&r->saved);
    r->cx.err = &r->saved;
    int got = r->fmt == TRC_JSONL ? next_jsonl(r, e)
              : r->fmt == TRC_JSON ? next_json(r, e)
                                   : next_msgpack(r, e);
    if (r->io_failed) {
        sim_error_set(&r->saved, SIM_EIO, "%s: read error", r->name);
        got = -1;
    }
    if (got == 1) {
        r->cx.index++;
        return 1;
    }
    if (got == 0) {
        r->state = 1;
        return 0;
    }
    if (r->saved.code == SIM_OK)
        sim_error_set(&r->saved, SIM_EINTERNAL, "%s: read failed", r->name);
    r->state = 2;
    if (err != NULL)
        *err = r->saved;
    return r->saved.code;
}

uint64_t trc_events_read(const trc_reader *r) { return r->cx.index; }
uint64_t trc_unknown_dropped(const trc_reader *r) { return r->cx.dropped; }

void trc_close(trc_reader *r)
{
    if (r == NULL)
        return;
    if (r->f != NULL)
        fclose(r->f);
    msgpack_zone_destroy(&r->zone);
    free(r->buf);
    free(r->elem);
    free(r);
}
