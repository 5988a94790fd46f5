/* identity.c - pass 1: who the chosen process is.  Reads the packets that
 * name processes and threads: ProcessTree (TracePacket 2: its processes and
 * threads), ProcessDescriptor (43), ThreadDescriptor (44), TrackDescriptor
 * (60: the tracks of the process and of its threads). */
#include "pf_int.h"

#include <string.h>

int pf__process_tree(imp *m, const uint8_t *p, size_t len)
{
    pb_msg t = pb_msg_of(p, len);
    pb_field f;
    int r;
    while ((r = pb_next(&t, &f)) == 1) {
        if (f.wt != PB_LEN || (f.num != 1 && f.num != 2))
            continue;
        pb_msg s = pb_msg_of(f.p, f.len);
        pb_field g;
        int64_t pid = 0, tgid = 0;
        const uint8_t *cmd = NULL;
        size_t cmdlen = 0;
        int is_comm = 0, rr;
        while ((rr = pb_next(&s, &g)) == 1) {
            if (f.num == 1) { /* Process: pid 1, cmdline 3 (repeated), cmdline_is_comm 9 */
                if (g.num == 1 && g.wt == PB_VARINT)
                    pid = pb_int(&g);
                else if (g.num == 3 && g.wt == PB_LEN && cmd == NULL)
                    cmd = g.p, cmdlen = g.len;
                else if (g.num == 9 && g.wt == PB_VARINT)
                    is_comm = g.v != 0;
            } else { /* Thread: tid 1, tgid 3 */
                if (g.num == 1 && g.wt == PB_VARINT)
                    pid = pb_int(&g);
                else if (g.num == 3 && g.wt == PB_VARINT)
                    tgid = pb_int(&g);
            }
        }
        if (rr < 0)
            return pf__fail(m, SIM_EINPUT, "malformed process_tree entry");
        if (f.num == 1) {
            int match = m->o->process != NULL ? (cmd != NULL && pf__name_matches(m, cmd, cmdlen,
                                                                             is_comm))
                                              : pid == m->o->pid;
            if (match && pid > 0) {
                if (cmd != NULL)
                    pf__keep_name(m, cmd, cmdlen);
                if (pf__choose(m, pid) != SIM_OK)
                    return m->err->code;
            }
        } else if (pid > 0 && pid != tgid && pf__chosen(m, tgid)) {
            if (pf__map_put(&m->threads, (uint64_t)pid, tgid) != SIM_OK)
                return pf__oom(m);
        }
    }
    return r < 0 ? pf__fail(m, SIM_EINPUT, "malformed process_tree") : SIM_OK;
}

/* ProcessDescriptor {pid 1, cmdline 2, process_name 6}: *pid, and whether
 * it names the chosen process. */
int pf__process_descriptor(imp *m, const uint8_t *p, size_t len, int64_t *pid, int *match)
{
    pb_msg d = pb_msg_of(p, len);
    pb_field f;
    int r;
    *pid = 0;
    *match = 0;
    while ((r = pb_next(&d, &f)) == 1) {
        if (f.num == 1 && f.wt == PB_VARINT)
            *pid = pb_int(&f);
        else if ((f.num == 6 || f.num == 2) && f.wt == PB_LEN && pf__name_matches(m, f.p, f.len, 0)) {
            *match = 1;
            pf__keep_name(m, f.p, f.len);
        }
    }
    if (r < 0)
        return pf__fail(m, SIM_EINPUT, "malformed process descriptor");
    if (m->o->process == NULL)
        *match = *pid == m->o->pid;
    return SIM_OK;
}

/* ThreadDescriptor {pid 1, tid 2}. */
int pf__thread_descriptor(imp *m, const uint8_t *p, size_t len, int64_t *pid, int64_t *tid)
{
    pb_msg d = pb_msg_of(p, len);
    pb_field f;
    int r;
    *pid = *tid = 0;
    while ((r = pb_next(&d, &f)) == 1) {
        if (f.num == 1 && f.wt == PB_VARINT)
            *pid = pb_int(&f);
        else if (f.num == 2 && f.wt == PB_VARINT)
            *tid = pb_int(&f);
    }
    return r < 0 ? pf__fail(m, SIM_EINPUT, "malformed thread descriptor") : SIM_OK;
}

/* TrackDescriptor {uuid 1, process 3, thread 4, parent_uuid 5}: a track of
 * the chosen process is remembered with its pid. */
int pf__track_descriptor(imp *m, const uint8_t *p, size_t len)
{
    pb_msg d = pb_msg_of(p, len);
    pb_field f;
    int r;
    uint64_t uuid = 0, parent = 0;
    int64_t pid = 0, tid = 0;
    int match = 0;
    while ((r = pb_next(&d, &f)) == 1) {
        if (f.num == 1 && f.wt == PB_VARINT)
            uuid = f.v;
        else if (f.num == 5 && f.wt == PB_VARINT)
            parent = f.v;
        else if (f.num == 3 && f.wt == PB_LEN) {
            if (pf__process_descriptor(m, f.p, f.len, &pid, &match) != SIM_OK)
                return m->err->code;
            if (match && pf__choose(m, pid) != SIM_OK)
                return m->err->code;
        } else if (f.num == 4 && f.wt == PB_LEN) {
            if (pf__thread_descriptor(m, f.p, f.len, &pid, &tid) != SIM_OK)
                return m->err->code;
        }
    }
    if (r < 0)
        return pf__fail(m, SIM_EINPUT, "malformed track_descriptor");
    if (pid == 0 && parent != 0) {
        const int64_t *pp = pf__map_find(&m->tracks, parent);
        if (pp != NULL)
            pid = *pp;
    }
    if (uuid != 0 && pf__chosen(m, pid) && pf__map_put(&m->tracks, uuid, pid) != SIM_OK)
        return pf__oom(m);
    if (tid > 0 && tid != pid && pf__chosen(m, pid) &&
        pf__map_put(&m->threads, (uint64_t)tid, pid) != SIM_OK)
        return pf__oom(m);
    return SIM_OK;
}
