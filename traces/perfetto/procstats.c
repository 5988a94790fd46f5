/* procstats.c - pass 3: ProcessStats (TracePacket 9), the polled
 * /proc/PID/status counters (VmRSS split into anon, file and shmem, VmSwap)
 * and oom_score_adj, kept as memory and adj records like rss_stat's. */
#include "pf_int.h"

/* process_stats: each polled process's rss by kind and its adj. */
int pf__process_stats(imp *m, int64_t ts, const uint8_t *p, size_t len)
{
    pb_msg s = pb_msg_of(p, len);
    pb_field f;
    int r;
    while ((r = pb_next(&s, &f)) == 1) {
        if (f.num != 1 || f.wt != PB_LEN)
            continue;
        pb_msg q = pb_msg_of(f.p, f.len);
        pb_field g;
        int rr;
        int64_t pid = 0, adj = ADJ_UNKNOWN, kb[M_COUNT];
        int has[M_COUNT] = {0};
        while ((rr = pb_next(&q, &g)) == 1) {
            if (g.wt != PB_VARINT)
                continue;
            int member = -1;
            switch (g.num) {
            case 1: pid = pb_int(&g); break;
            case 4: member = M_ANON; break;   /* rss_anon_kb */
            case 5: member = M_FILE; break;   /* rss_file_kb */
            case 6: member = M_SHMEM; break;  /* rss_shmem_kb */
            case 7: member = M_SWAP; break;   /* vm_swap_kb */
            case 10: adj = pb_int(&g); break; /* oom_score_adj */
            default: break;
            }
            if (member >= 0) {
                if (g.v > (uint64_t)SIZE_MAX_ / 1024)
                    return pf__fail(m, SIM_EINPUT, "process_stats: a size of %" PRIu64 " kB (more "
                                "than 256 TiB)", g.v);
                kb[member] = (int64_t)g.v, has[member] = 1;
            }
        }
        if (rr < 0)
            return pf__fail(m, SIM_EINPUT, "malformed process_stats entry");
        if (!pf__chosen(m, pid))
            continue;
        for (int k = 0; k < M_COUNT; k++) {
            if (!has[k])
                continue;
            m->sum->memory_events++;
            rec x = {ts, kb[k] * 1024, 0, 0, (int32_t)pid, R_MEM, (uint8_t)k, 0};
            if (pf__add_rec(m, &x) != SIM_OK)
                return m->err->code;
        }
        if (adj != ADJ_UNKNOWN) {
            rec x = {ts, adj, 0, 0, (int32_t)pid, R_ADJ, 0, 0};
            if (pf__add_rec(m, &x) != SIM_OK)
                return m->err->code;
        }
    }
    return r < 0 ? pf__fail(m, SIM_EINPUT, "malformed process_stats") : SIM_OK;
}
