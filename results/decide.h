/* decide.h - a plan's decision against its target (decide.c): a cell's
 * verdict, the recommended policy of each device and candidate and the rule
 * that chose it, their texts (tables.c), and the largest context per
 * phone (context.c).  Included by results.h. */
#ifndef OOMSIM_RESULTS_DECIDE_H
#define OOMSIM_RESULTS_DECIDE_H

/* ------------------------------------------------------------ decision */

/* A cell against the plan's target: deaths_ok when the upper end of its
 * death-rate interval is under target.deaths, latency_ok when requests
 * completed and their p95 is at most target.latency_p95, and the LLM
 * criteria likewise (an unset criterion holds); meets when the target is
 * set and all hold.  shortfall: the largest measured/target ratio
 * (DBL_MAX when nothing was measured), which ranks the cells that miss. */
typedef struct res_verdict {
    int meets, deaths_ok, latency_ok, completed_ok;
    int ttft_ok, tps_ok, overflow_ok; /* an LLM's requests (1 when not checked) */
    double shortfall;
} res_verdict;
/* The share of a cell's LLM requests its context cut (0 with none); the
 * largest context its generation parts run with (0: none). */
double res_overflow_share(const res_cell *c);
uint32_t res_cell_context(const mdl_cell *cell);
void res_cell_verdict(const mdl_target *t, const res_cell *c, res_verdict *v);

/* The rule that chose a recommended cell: the only one that meets the
 * target; for an LLM candidate the largest context, then the fastest
 * decode (tokens/s p50); then the lowest peak p95, the lowest latency
 * p95, the first in the grid's order. */
typedef enum res_rule { RES_RULE_ONLY = 0, RES_RULE_CONTEXT, RES_RULE_DECODE, RES_RULE_PEAK,
                        RES_RULE_LATENCY, RES_RULE_ORDER } res_rule;
const char *res_rule_name(res_rule r);
/* The decision for one device and candidate: its cells first .. first +
 * count - 1, how many meet the target, the recommended one (among those
 * that meet it, by res_rule's order; -1 when none meets it) and, when none
 * does, the closest (the smallest shortfall, then the lowest peak p95 and
 * latency p95; -1 otherwise). */
typedef struct res_decision {
    unsigned first, count, meeting;
    int recommended, closest;
    /* a scenario's named paths: its cells are paths x policies (path
     * first), and a policy meets the target only on every path: meeting
     * counts such policies, recommended is the best one's cell on the first
     * path, closest the cell where the nearest policy misses */
    unsigned paths, policies;
    int heaviest; /* the recommended policy's worst cell (the highest peak p95, then latency) */
    res_rule rule; /* what set the recommended one apart from the next that meets it */
} res_decision;
/* One decision per run of cells sharing a device and candidate, into
 * out[] (room for r->ncells); returns how many.  Without named paths
 * (paths 1) every cell is a policy. */
unsigned res_decisions(const res_plan *plan, const res_result *r, res_decision *out);
/* "deaths under 0.1% (the upper end of the 95% interval), latency p95 at
 * most 2000 ms", and a cell's verdict: "meets" or "misses: deaths up to
 * 3.2%, latency p95 2300 ms". */
void res_target_text(const mdl_target *t, char *buf, size_t n);
/* A cell's commonest death reason, and for a memory death the limit that
 * was crossed and where the app was: "low_memory: background limit 300
 * MiB"; "-" without deaths. */
void res_death_text(const mdl_device *dev, const res_cell *c, char *buf, size_t n);
void res_verdict_text(const mdl_target *t, const res_cell *c, char *buf, size_t n);

/* The largest context per phone (context.c, docs/results.md): for a
 * decision whose candidate generates, the largest `context` at which its
 * recommended cell (or, when none meets the target, its closest), its
 * other settings kept, meets the target on every path: `tokens` (0: none,
 * down to 256), `upper` the smallest found to miss for anything but the
 * context overflow (0: none up to `cap`),
 * `step` the gap between them; `done` when the search converged (one step
 * of 256 tokens, the cap, or none at 256) rather than ran out of steps. */
#define RES_CONTEXT_PATHS 64u
typedef struct res_context {
    int searched, done;
    unsigned base;                     /* the cell whose settings it keeps */
    unsigned paths, cells[RES_CONTEXT_PATHS];
    uint32_t tokens, upper, step, cap;
    uint32_t low;                      /* the largest found too small (its overflow alone missed) */
    unsigned runs;                     /* the plan runs it took */
} res_context;
/* Runs the searches of r's decisions (out: room for r->ncells), at most
 * `steps` runs; *n the decisions.  Every search's cells share a run. */
int res_context_find(const res_plan *plan, const res_result *r, unsigned threads,
                     unsigned steps, res_context *out, unsigned *n, sim_error *err);

/* "7680 (7936 missed)", "4096 or more (the cap)", "none down to 256", "-"
 * (tables.c). */
void res_context_text(const res_context *x, char *buf, size_t n);

#endif /* OOMSIM_RESULTS_DECIDE_H */
