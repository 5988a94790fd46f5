/* pbwire.h - the protobuf wire format, read in place (not a public
 * header): varints, fixed-width values and length-delimited fields over a
 * bounded byte range, unknown fields skipped by their wire type.  Nothing
 * here allocates; a malformed or truncated field stops the walk. */
#ifndef OOMSIM_TRACES_PBWIRE_H
#define OOMSIM_TRACES_PBWIRE_H

#include <stddef.h>
#include <stdint.h>

enum { PB_VARINT = 0, PB_I64 = 1, PB_LEN = 2, PB_I32 = 5 };

/* One field of a message: its number, its wire type, and its value (v for
 * the numeric types, p/len for PB_LEN). */
typedef struct pb_field {
    uint32_t num;
    int wt;
    uint64_t v;
    const uint8_t *p;
    size_t len;
} pb_field;

/* A walk over the fields of one message. */
typedef struct pb_msg {
    const uint8_t *p, *end, *start;
} pb_msg;

static inline pb_msg pb_msg_of(const uint8_t *p, size_t len)
{
    pb_msg m = {p, p + len, p};
    return m;
}

/* Reads a varint at *p (at most 10 bytes, before end): 1 and *v, or 0 when
 * it is truncated or too long. */
static inline int pb_varint(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
    const uint8_t *q = *p;
    if (q < end && *q < 0x80) { /* the common one-byte case */
        *v = *q;
        *p = q + 1;
        return 1;
    }
    uint64_t r = 0;
    for (unsigned shift = 0; shift < 70 && q < end; shift += 7) {
        uint8_t b = *q++;
        r |= (uint64_t)(b & 0x7f) << shift;
        if (b < 0x80) {
            *v = r;
            *p = q;
            return 1;
        }
    }
    return 0;
}

/* The next field: 1 with *f, 0 at the end, -1 when the message is
 * malformed (a truncated field, a group, a field number 0). */
static inline int pb_next(pb_msg *m, pb_field *f)
{
    f->v = 0;
    f->p = NULL;
    f->len = 0;
    if (m->p >= m->end)
        return 0;
    uint64_t tag;
    if (!pb_varint(&m->p, m->end, &tag) || (tag >> 3) == 0 || (tag >> 3) > 0x1fffffff)
        return -1;
    f->num = (uint32_t)(tag >> 3);
    f->wt = (int)(tag & 7);
    switch (f->wt) {
    case PB_VARINT:
        return pb_varint(&m->p, m->end, &f->v) ? 1 : -1;
    case PB_I64:
        if (m->end - m->p < 8)
            return -1;
        f->v = 0;
        for (int i = 7; i >= 0; i--)
            f->v = f->v << 8 | m->p[i];
        m->p += 8;
        return 1;
    case PB_I32:
        if (m->end - m->p < 4)
            return -1;
        f->v = (uint64_t)m->p[0] | (uint64_t)m->p[1] << 8 | (uint64_t)m->p[2] << 16 |
               (uint64_t)m->p[3] << 24;
        m->p += 4;
        return 1;
    case PB_LEN: {
        uint64_t n;
        if (!pb_varint(&m->p, m->end, &n) || n > (uint64_t)(m->end - m->p))
            return -1;
        f->p = m->p;
        f->len = (size_t)n;
        m->p += n;
        return 1;
    }
    default:
        return -1;
    }
}

/* A varint field read as a signed 64-bit integer (int32 and int64 are
 * sign-extended on the wire). */
static inline int64_t pb_int(const pb_field *f)
{
    return (int64_t)f->v;
}

#endif
