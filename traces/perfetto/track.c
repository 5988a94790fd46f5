/* track.c - pass 3: track events and the sequence state they need.  Reads
 * InternedData (TracePacket 12: event names), TracePacketDefaults (59: the
 * default track and clock), ClockSnapshot (6: sequence-scoped clocks) and
 * TrackEvent (11: slice begin and end on a thread's or the process's
 * tracks, kept as R_BEGIN / R_END records). */
#include "pf_int.h"

#include <stdlib.h>
#include <string.h>

seqstate *pf__seq_of(imp *m, uint32_t id)
{
    const int64_t *at = pf__map_find(&m->seq_index, id); /* every packet asks: a hash, not a scan */
    if (at != NULL)
        return &m->seqs[*at];
    if (m->nseq == SEQS_MAX) {
        pf__fail(m, SIM_ELIMIT, "more than %d packet sequences", SEQS_MAX);
        return NULL;
    }
    if (m->nseq == m->capseq) {
        seqstate *p = pf__grow(m, m->seqs, &m->capseq, sizeof *p, 16);
        if (p == NULL)
            return NULL;
        m->seqs = p;
    }
    if (pf__map_put(&m->seq_index, id, (int64_t)m->nseq) != SIM_OK) {
        pf__oom(m);
        return NULL;
    }
    seqstate *s = &m->seqs[m->nseq++];
    memset(s, 0, sizeof *s);
    s->id = id;
    return s;
}

static uint64_t name_key(const imp *m, const seqstate *s, uint64_t iid)
{
    return (uint64_t)(s - m->seqs) << 48 | (uint64_t)(s->gen & 0xffff) << 32 | iid;
}

/* InternedData {event_names 2: EventName {iid 1, name 2}}: the oomsim
 * stage names are kept (the others are not oomsim slices). */
int pf__interned(imp *m, seqstate *s, const uint8_t *p, size_t len)
{
    pb_msg d = pb_msg_of(p, len);
    pb_field f;
    int r;
    while ((r = pb_next(&d, &f)) == 1) {
        if (f.num != 2 || f.wt != PB_LEN)
            continue;
        pb_msg e = pb_msg_of(f.p, f.len);
        pb_field g;
        int rr;
        uint64_t iid = 0;
        const uint8_t *nm = NULL;
        size_t nl = 0;
        while ((rr = pb_next(&e, &g)) == 1) {
            if (g.num == 1 && g.wt == PB_VARINT)
                iid = g.v;
            else if (g.num == 2 && g.wt == PB_LEN)
                nm = g.p, nl = g.len;
        }
        if (rr < 0)
            return pf__fail(m, SIM_EINPUT, "malformed interned event name");
        if (nm == NULL || iid == 0 || iid > UINT32_MAX)
            continue;
        uint16_t code;
        if (pf__slice_name(m, (const char *)nm, nl, &code) != SIM_OK)
            return m->err->code;
        if (code != 0 && pf__map_put(&m->names, name_key(m, s, iid), code) != SIM_OK)
            return pf__oom(m);
    }
    return r < 0 ? pf__fail(m, SIM_EINPUT, "malformed interned_data") : SIM_OK;
}

/* TracePacketDefaults {timestamp_clock_id 58, track_event_defaults 11
 * {track_uuid 11}}. */
int pf__defaults(imp *m, seqstate *s, const uint8_t *p, size_t len)
{
    pb_msg d = pb_msg_of(p, len);
    pb_field f;
    int r;
    while ((r = pb_next(&d, &f)) == 1) {
        if (f.num == 58 && f.wt == PB_VARINT)
            s->clock_id = (uint32_t)f.v;
        else if (f.num == 11 && f.wt == PB_LEN) {
            pb_msg e = pb_msg_of(f.p, f.len);
            pb_field g;
            int rr;
            while ((rr = pb_next(&e, &g)) == 1)
                if (g.num == 11 && g.wt == PB_VARINT)
                    s->default_track = g.v;
            if (rr < 0)
                return pf__fail(m, SIM_EINPUT, "malformed track_event_defaults");
        }
    }
    return r < 0 ? pf__fail(m, SIM_EINPUT, "malformed trace_packet_defaults") : SIM_OK;
}

/* ClockSnapshot {clocks 1: Clock {clock_id 1, timestamp 2, is_incremental
 * 3, unit_multiplier_ns 4}}: a sequence-scoped clock and where it stands
 * against the boot clock. */
int pf__clock_snapshot(imp *m, seqstate *s, const uint8_t *p, size_t len)
{
    pb_msg d = pb_msg_of(p, len);
    pb_field f;
    int r;
    int64_t boot = -1, real = -1;
    uint32_t id = 0;
    uint64_t value = 0, unit = 1;
    int incremental = 0;
    while ((r = pb_next(&d, &f)) == 1) {
        if (f.num != 1 || f.wt != PB_LEN)
            continue;
        pb_msg c = pb_msg_of(f.p, f.len);
        pb_field g;
        int rr;
        uint32_t cid = 0;
        uint64_t ts = 0, mult = 1;
        int inc = 0;
        while ((rr = pb_next(&c, &g)) == 1) {
            if (g.wt != PB_VARINT)
                continue;
            if (g.num == 1)
                cid = (uint32_t)g.v;
            else if (g.num == 2)
                ts = g.v;
            else if (g.num == 3)
                inc = g.v != 0;
            else if (g.num == 4)
                mult = g.v ? g.v : 1;
        }
        if (rr < 0)
            return pf__fail(m, SIM_EINPUT, "malformed clock snapshot");
        if (cid == CLOCK_BOOTTIME && ts < (uint64_t)TS_MAX)
            boot = (int64_t)ts;
        else if (cid == CLOCK_REALTIME && ts < (uint64_t)TS_MAX && mult == 1)
            real = (int64_t)ts;
        else if (cid >= CLOCK_SEQUENCE_FIRST && cid < CLOCK_SEQUENCE_END)
            id = cid, value = ts, unit = mult, incremental = inc;
    }
    if (r < 0)
        return pf__fail(m, SIM_EINPUT, "malformed clock snapshot");
    if (boot >= 0 && real >= 0 && !m->sum->has_realtime) { /* the wall clock's anchor */
        m->sum->has_realtime = 1;
        m->sum->realtime_offset_ns = real - boot;
    }
    if (id != 0 && boot >= 0) {
        s->seq_clock = id;
        s->snap_value = s->value = value;
        s->unit_ns = unit;
        s->incremental = incremental;
        s->boot_ref = boot;
    }
    return SIM_OK;
}

/* The packet's time on the boot clock (ns). */
int64_t pf__packet_time(seqstate *s, uint64_t ts, uint32_t clock_id)
{
    if (clock_id == 0 && s != NULL)
        clock_id = s->clock_id;
    if (s == NULL || clock_id == 0 || clock_id != s->seq_clock)
        return (int64_t)ts;
    if (s->incremental)
        s->value += ts;
    else
        s->value = ts;
    /* unsigned: a corrupt clock wraps, and add_rec refuses the time */
    return (int64_t)((uint64_t)s->boot_ref + (s->value - s->snap_value) * s->unit_ns);
}

/* TrackEvent {type 9, name_iid 10, track_uuid 11, name 23}. */
int pf__track_event(imp *m, seqstate *s, int64_t ts, const uint8_t *p, size_t len)
{
    pb_msg d = pb_msg_of(p, len);
    pb_field f;
    int r;
    uint64_t type = 0, iid = 0, track = s != NULL ? s->default_track : 0;
    const uint8_t *nm = NULL;
    size_t nl = 0;
    while ((r = pb_next(&d, &f)) == 1) {
        if (f.num == 9 && f.wt == PB_VARINT)
            type = f.v;
        else if (f.num == 10 && f.wt == PB_VARINT)
            iid = f.v;
        else if (f.num == 11 && f.wt == PB_VARINT)
            track = f.v;
        else if (f.num == 23 && f.wt == PB_LEN)
            nm = f.p, nl = f.len;
    }
    if (r < 0)
        return pf__fail(m, SIM_EINPUT, "malformed track_event");
    if (type != TE_SLICE_BEGIN && type != TE_SLICE_END)
        return SIM_OK;
    int32_t pid = -1;
    uint8_t lane_kind = LANE_TRACK;
    int64_t lane = (int64_t)track;
    if (track != 0) {
        const int64_t *tp = pf__map_find(&m->tracks, track);
        pid = tp != NULL ? (int32_t)*tp : -1;
    } else if (s != NULL && s->thread_pid > 0) { /* the sequence's thread */
        pid = s->thread_pid;
        lane_kind = LANE_THREAD;
        lane = s->thread_tid;
    }
    if (!pf__chosen(m, pid))
        return SIM_OK;
    rec x = {ts, 0, lane, 0, pid, type == TE_SLICE_BEGIN ? R_BEGIN : R_END, lane_kind, 0};
    if (type == TE_SLICE_BEGIN) {
        m->sum->slices++;
        if (nm != NULL) {
            if (pf__slice_name(m, (const char *)nm, nl, &x.name) != SIM_OK)
                return m->err->code;
        } else if (iid != 0 && s != NULL) {
            const int64_t *code = pf__map_find(&m->names, name_key(m, s, iid));
            x.name = code != NULL ? (uint16_t)*code : 0;
        }
    }
    return pf__add_rec(m, &x);
}
