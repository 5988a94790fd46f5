/* ftrace.c - passes 2 and 3: the kernel's events.  Reads FtraceEventBundle
 * (TracePacket 1): rss_stat and rss_stat_throttled (the mm counters: where
 * the kernel's rss_stat becomes a memory record, R_MEM by member; walk.c's
 * mem_of turns the members into oomsim's categories), oom_score_adj_update,
 * mark_victim (the kernel OOM killer), lowmemory_kill, and print (atrace
 * slices named oomsim:STAGE:PART, and lmkd's kill counters).  In the phone
 * pass (phone.c) only the kills and sched_process_free, which end a life. */
#include "pf_int.h"

#include <string.h>

static int64_t parse_int(const char **s, const char *end, int *ok)
{
    const char *p = *s;
    int neg = 0;
    if (p < end && *p == '-')
        neg = 1, p++;
    if (p >= end || *p < '0' || *p > '9') {
        *ok = 0;
        return 0;
    }
    int64_t v = 0;
    while (p < end && *p >= '0' && *p <= '9') {
        if (v > (INT64_MAX - 9) / 10) {
            *ok = 0;
            return 0;
        }
        v = v * 10 + (*p++ - '0');
    }
    *s = p;
    return neg ? -v : v;
}

/* "lmk,PID,REASON,ADJ[,MIN_SCORE,MAX_THRASHING]" (lmkd's kill, in its
 * instant and its slice form): a kill record for the chosen process. */
static int lmk_kill(imp *m, int64_t ts, const char *s, const char *end)
{
    int64_t num[5];
    int n = 0, ok = 1;
    s += 4; /* "lmk," */
    while (n < 5) {
        num[n++] = parse_int(&s, end, &ok);
        if (!ok)
            return SIM_OK; /* not lmkd's: left alone */
        if (s == end)
            break;
        if (*s != ',')
            return SIM_OK;
        s++;
    }
    if (n < 3)
        return SIM_OK;
    if (m->phone != NULL)
        return pf__phone_end(m, ts, num[0], 1);
    if (!pf__chosen(m, num[0])) {
        m->sum->kill_other++;
        return SIM_OK;
    }
    rec r = {ts, num[2], num[1], 0, (int32_t)num[0], R_KILL, K_LMKD, 0};
    return pf__add_rec(m, &r);
}

/* "oomsim:STAGE:PART": the stage and the part's index + 1 (0: no part), or
 * 0 when the name is not an oomsim stage slice. */
int pf__slice_name(imp *m, const char *s, size_t n, uint16_t *code)
{
    *code = 0;
    if (n < 8 || memcmp(s, "oomsim:", 7) != 0)
        return SIM_OK;
    s += 7, n -= 7;
    const char *colon = memchr(s, ':', n);
    size_t sl = colon != NULL ? (size_t)(colon - s) : n;
    int stage = -1;
    for (int k = 0; k < TRC_EXIT; k++) {
        const char *nm = trc_stage_name((trc_stage)k);
        if (strlen(nm) == sl && memcmp(nm, s, sl) == 0)
            stage = k;
    }
    if (stage < 0)
        return SIM_OK;
    unsigned part = 0;
    if (colon != NULL) {
        const char *pn = colon + 1;
        size_t pl = n - sl - 1;
        if (pl == 0)
            return SIM_OK;
        if (pl >= TRC_TEXT_MAX)
            return pf__fail(m, SIM_EINPUT, "slice oomsim:%s: a part name of %zu bytes (at most %d)",
                        trc_stage_name((trc_stage)stage), pl, TRC_TEXT_MAX - 1);
        for (size_t i = 0; i < pl; i++)
            if ((unsigned char)pn[i] <= 0x20 || (unsigned char)pn[i] >= 0x7f || pn[i] == ',')
                return pf__fail(m, SIM_EINPUT, "slice oomsim:%s: a part name may hold printable "
                            "ASCII other than a space or a comma only",
                            trc_stage_name((trc_stage)stage));
        trc_pf_summary *sum = m->sum;
        for (unsigned k = 0; k < sum->nparts && part == 0; k++)
            if (strlen(sum->parts[k]) == pl && memcmp(sum->parts[k], pn, pl) == 0)
                part = k + 1;
        if (part == 0) {
            if (sum->nparts == TRC_PF_PARTS_MAX)
                return pf__fail(m, SIM_ELIMIT, "more than %d part names in oomsim slices",
                            TRC_PF_PARTS_MAX);
            memcpy(sum->parts[sum->nparts], pn, pl);
            sum->parts[sum->nparts][pl] = '\0';
            part = ++sum->nparts;
        }
    }
    *code = (uint16_t)((unsigned)stage << 8 | part);
    return SIM_OK;
}

/* An atrace line (ftrace `print`): B|TGID|NAME, E|TGID, E, N|TGID|TRACK|NAME,
 * C|TGID|NAME|VALUE. */
static int print_event(imp *m, int64_t ts, int64_t tid, const uint8_t *buf, size_t len)
{
    const char *s = (const char *)buf, *end = s + len;
    while (end > s && (end[-1] == '\n' || end[-1] == '\0'))
        end--;
    if (end - s < 1)
        return SIM_OK;
    char ph = s[0];
    int64_t tgid = 0;
    const char *rest = end;
    if (end - s >= 2 && s[1] == '|') {
        int ok = 1;
        const char *q = s + 2;
        tgid = parse_int(&q, end, &ok);
        if (!ok)
            return SIM_OK;
        rest = q < end && *q == '|' ? q + 1 : end;
    } else if (!(ph == 'E' && end - s == 1)) {
        return SIM_OK;
    }
    size_t rl = (size_t)(end - rest);
    switch (ph) {
    case 'B': {
        if (rl >= 4 && memcmp(rest, "lmk,", 4) == 0)
            return lmk_kill(m, ts, rest, end);
        int32_t pid = (int32_t)tgid;
        if (!pf__chosen(m, pid))
            return SIM_OK;
        rec r = {ts, 0, tid, 0, pid, R_BEGIN, LANE_THREAD, 0};
        if (pf__slice_name(m, rest, rl, &r.name) != SIM_OK)
            return m->err->code;
        m->sum->slices++;
        return pf__add_rec(m, &r);
    }
    case 'E': {
        int32_t pid = tgid > 0 ? (int32_t)tgid : pf__tgid_of(m, tid);
        if (!pf__chosen(m, pid))
            return SIM_OK;
        rec r = {ts, 0, tid, 0, pid, R_END, LANE_THREAD, 0};
        return pf__add_rec(m, &r);
    }
    case 'N': { /* N|TGID|TRACK|NAME */
        const char *bar = memchr(rest, '|', rl);
        if (bar == NULL)
            return SIM_OK;
        const char *nm = bar + 1;
        if (end - nm >= 4 && memcmp(nm, "lmk,", 4) == 0)
            return lmk_kill(m, ts, nm, end);
        return SIM_OK;
    }
    case 'C': { /* lmkd's older counter: kill_one_process = the victim's pid, then 0 */
        static const char k1p[] = "kill_one_process|";
        if (rl < sizeof k1p || memcmp(rest, k1p, sizeof k1p - 1) != 0)
            return SIM_OK;
        const char *q = rest + sizeof k1p - 1;
        int ok = 1;
        int64_t victim = parse_int(&q, end, &ok);
        if (!ok || victim <= 0)
            return SIM_OK;
        if (!pf__chosen(m, victim)) {
            m->sum->kill_other++;
            return SIM_OK;
        }
        rec r = {ts, ADJ_UNKNOWN, -1, 0, (int32_t)victim, R_KILL, K_LMKD, 0};
        return pf__add_rec(m, &r);
    }
    default:
        return SIM_OK;
    }
}

/* rss_stat and rss_stat_throttled: the member's new size, for the process
 * the event is about. */
static int rss_stat(imp *m, int64_t ts, int64_t tid, int throttled, const uint8_t *p,
                    size_t len)
{
    pb_msg d = pb_msg_of(p, len);
    pb_field f;
    int r;
    int64_t member = -1, size = -1, mm = 0;
    int has_curr = 0, curr = 0, has_mm = 0;
    while ((r = pb_next(&d, &f)) == 1) {
        if (f.wt != PB_VARINT)
            continue;
        unsigned n = f.num;
        if (throttled) /* curr 1, member 2, mm_id 3, size 4 */
            n = n == 1 ? 3 : n == 2 ? 1 : n == 3 ? 4 : n == 4 ? 2 : 0;
        switch (n) { /* member 1, size 2, curr 3, mm_id 4 */
        case 1: member = pb_int(&f); break;
        case 2: size = pb_int(&f); break;
        case 3: has_curr = 1, curr = f.v != 0; break;
        case 4: has_mm = 1, mm = (int64_t)(uint32_t)f.v; break;
        default: break;
        }
    }
    if (r < 0)
        return pf__fail(m, SIM_EINPUT, "malformed rss_stat event");
    if (member < 0 || member >= M_COUNT || size < 0)
        return SIM_OK;
    int32_t pid;
    if (has_curr && has_mm) {
        if (curr) {
            pid = pf__tgid_of(m, tid);
            if (m->pass == 2 && pid > 0) /* the process's own mm */
                return pf__map_put(&m->mms, (uint64_t)mm, pid) == SIM_OK ? SIM_OK : pf__oom(m);
        } else {
            const int64_t *owner = pf__map_find(&m->mms, (uint64_t)mm);
            pid = owner != NULL ? (int32_t)*owner : -1;
        }
    } else {
        pid = pf__tgid_of(m, tid);
    }
    if (m->pass != 3 || pid <= 0)
        return SIM_OK;
    m->sum->memory_events++;
    rec rr = {ts, size, 0, 0, pid, R_MEM, (uint8_t)member, 0};
    return pf__add_rec(m, &rr);
}

/* A kill (mark_victim: pid 1; lowmemory_kill: pid 2) or a task freed
 * (sched_process_free: pid 2; the phone pass only): 0, -1 malformed, or 1
 * with an error set. */
static int life_ends(imp *m, int64_t ts, uint32_t num, pb_msg *e)
{
    unsigned want = num == FE_MARK_VICTIM ? 1 : 2;
    int64_t pid = 0;
    pb_field g;
    int rr;
    while ((rr = pb_next(e, &g)) == 1)
        if (g.num == want && g.wt == PB_VARINT)
            pid = (int32_t)g.v;
    if (rr != 0)
        return rr;
    if (m->phone != NULL)
        return pid > 0 && pf__phone_end(m, ts, pid, num != FE_SCHED_PROCESS_FREE) != SIM_OK;
    if (num == FE_SCHED_PROCESS_FREE)
        return 0;
    if (!pf__chosen(m, pid)) {
        if (pid > 0)
            m->sum->kill_other++;
        return 0;
    }
    rec x = {ts, ADJ_UNKNOWN, -1, 0, (int32_t)pid, R_KILL,
             num == FE_MARK_VICTIM ? K_KERNEL_OOM : K_LOWMEMORYKILLER, 0};
    return pf__add_rec(m, &x) != SIM_OK;
}

static int ftrace_event(imp *m, const uint8_t *p, size_t len)
{
    pb_msg d = pb_msg_of(p, len);
    pb_field f;
    int r;
    int64_t ts = 0, tid = 0;
    while ((r = pb_next(&d, &f)) == 1) {
        if (f.num == 1 && f.wt == PB_VARINT) {
            ts = (int64_t)f.v;
            continue;
        }
        if (f.num == 2 && f.wt == PB_VARINT) {
            tid = (int64_t)(uint32_t)f.v;
            continue;
        }
        if (f.wt != PB_LEN)
            continue;
        if (m->phone == NULL && (f.num == FE_RSS_STAT || f.num == FE_RSS_STAT_THROTTLED)) {
            if (rss_stat(m, ts, tid, f.num == FE_RSS_STAT_THROTTLED, f.p, f.len) != SIM_OK)
                return m->err->code;
            continue;
        }
        if (m->pass != 3 && m->phone == NULL)
            continue;
        pb_msg e = pb_msg_of(f.p, f.len);
        pb_field g;
        int rr = 0;
        switch (f.num) {
        case FE_PRINT: /* buf 2 */
            while ((rr = pb_next(&e, &g)) == 1)
                if (g.num == 2 && g.wt == PB_LEN && print_event(m, ts, tid, g.p, g.len) != SIM_OK)
                    return m->err->code;
            break;
        case FE_OOM_SCORE_ADJ: { /* oom_score_adj 2, pid 3 */
            int64_t adj = ADJ_UNKNOWN, pid = 0;
            while ((rr = pb_next(&e, &g)) == 1) {
                if (g.num == 2 && g.wt == PB_VARINT)
                    adj = (int32_t)g.v;
                else if (g.num == 3 && g.wt == PB_VARINT)
                    pid = (int32_t)g.v;
            }
            if (rr == 0 && adj != ADJ_UNKNOWN && m->phone == NULL && pf__chosen(m, pid)) {
                rec x = {ts, adj, 0, 0, (int32_t)pid, R_ADJ, 0, 0};
                if (pf__add_rec(m, &x) != SIM_OK)
                    return m->err->code;
            }
            break;
        }
        case FE_MARK_VICTIM:    /* pid 1 */
        case FE_LOWMEMORY_KILL: /* pid 2 */
        case FE_SCHED_PROCESS_FREE: /* pid 2 */
            if ((rr = life_ends(m, ts, f.num, &e)) > 0)
                return m->err->code;
            break;
        default:
            break;
        }
        if (rr < 0)
            return pf__fail(m, SIM_EINPUT, "malformed ftrace event (field %u)", f.num);
    }
    return r < 0 ? pf__fail(m, SIM_EINPUT, "malformed ftrace event") : SIM_OK;
}

int pf__ftrace_bundle(imp *m, const uint8_t *p, size_t len)
{
    pb_msg b = pb_msg_of(p, len);
    pb_field f;
    int r;
    while ((r = pb_next(&b, &f)) == 1)
        if (f.num == 2 && f.wt == PB_LEN && ftrace_event(m, f.p, f.len) != SIM_OK)
            return m->err->code;
    return r < 0 ? pf__fail(m, SIM_EINPUT, "malformed ftrace_events bundle") : SIM_OK;
}
