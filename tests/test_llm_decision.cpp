// A decision rule for generation candidates (results/decide.c,
// results/context.c, docs/scenarios.md "target", docs/results.md "The
// largest context"): targets on time to first token, decode rate and
// context overflow; among the cells that meet them the largest context,
// then the fastest decode, then the lowest peak; per phone the largest
// context that meets them, by bisection.  Every expected cell is derived in
// a comment.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "cli/cli.h"
#include "results/results.h"
#include "scenarios/scenarios.h"
#include "shim/shim.hpp"
#include "shim/world.hpp"

namespace {

using shim::Loaded;

// Two iPhones under the plain rule, limits 1000 and 600 MiB; a model whose
// counted memory is its 10 MiB compute and its reserved KV, 128 KiB a token
// (C tokens: C / 8 MiB); ten requests a minute apart of 300 prompt and 100
// output tokens, the conversation kept, so request k needs 400 k tokens.
// Each takes 300 ms of prefill and 1 s of decode: TTFT 310 ms, 100 tokens/s.
const char *PLAN = R"(name: ctx
seed: 1
replications: 20
horizon: 15min
devices:
  - {name: big, os: ios, ram: 8GiB, system: 1GiB, kill: {rule: jetsam, limit: 1000MiB}}
  - {name: small, os: ios, ram: 8GiB, system: 1GiB, kill: {rule: jetsam, limit: 600MiB}}
candidates:
  - id: llm
    digest: 0a
    runtime: test-1
    parts:
      m:
        file: 100MiB
        load: {mode: mmap, time: 0ms}
        prepare: {time: 0ms}
        generation:
          prompt_tokens: 300
          output_tokens: 100
          context: 4096
          kv_per_token: 128KiB
          kv: reserved
          prefill: {per_token: 1ms}
          decode: {per_token: 10ms}
          weights: {mapped: 100MiB}
          compute: 10MiB
workload:
  path: [cold_start, {requests: {every: 60s, count: 10}}]
policies:
  context: [2048, 4096, 6144, 8192]
target: {deaths: 30%, ttft: {p95: 1s}, tokens_per_s: {p5: 50}, overflow: 20%}
)";

struct Run {
    scn_scenario &s;
    res_plan plan{};
    const char **labels = nullptr;
    res_result r{};
    explicit Run(scn_scenario &sc) : s(sc)
    {
        sim_error err;
        sim_error_clear(&err);
        REQUIRE(cli_plan_of(&s, &plan, &labels, &err) == SIM_OK);
        int rc = res_run(&plan, 2, nullptr, nullptr, &r, &err);
        INFO(err.msg);
        REQUIRE(rc == SIM_OK);
    }
    ~Run()
    {
        res_result_free(&r);
        std::free(labels);
    }
    Run(const Run &) = delete;
    Run &operator=(const Run &) = delete;
};

int parse(const std::string &yaml, std::string &msg)
{
    scn_scenario s{};
    sim_error err;
    sim_error_clear(&err);
    int rc = scn_scenario_parse(yaml.data(), yaml.size(), "t.yaml", &s, &err);
    msg = err.msg;
    if (rc == SIM_OK)
        scn_scenario_release(&s);
    return rc;
}

std::string with_target(const std::string &target)
{
    std::string y = PLAN;
    size_t at = y.find("target: ");
    y.replace(at, y.size() - at, target + "\n");
    return y;
}

const std::string GRID = "context: [2048, 4096, 6144, 8192]";

// Each phone's search for its largest context after `run`, in `steps`
// runs at most.
std::vector<res_context> find(const Run &run, unsigned steps = 12)
{
    std::vector<res_context> c(run.r.ncells);
    unsigned n = 0;
    sim_error err;
    sim_error_clear(&err);
    REQUIRE(res_context_find(&run.plan, &run.r, 2, steps, c.data(), &n, &err) == SIM_OK);
    REQUIRE(n == 2);
    return c;
}

// PLAN with `grid` for its policies (and `target`, when given): each
// phone's search for its largest context, in 12 runs at most.
std::vector<res_context> searched(const std::string &grid, const std::string &target = "")
{
    std::string y = target.empty() ? std::string(PLAN) : with_target(target);
    y.replace(y.find(GRID), GRID.size(), grid);
    Loaded l(y);
    Run run(l.s);
    return find(run);
}

} // namespace

TEST_CASE("llm decision: the largest context that meets TTFT, tokens/s and overflow is "
          "recommended, and each phone's largest is found",
          "[decision][generation]")
{
    Loaded l(PLAN);
    Run run(l.s);
    const res_result &r = run.r;
    REQUIRE(r.ncells == 8);
    // request k overflows a context C when 400 k > C: at 2048, k = 6..10,
    // half of them (over 20 %); at 4096, 6144 and 8192 none
    CHECK(res_overflow_share(&r.cells[0]) == 0.5);
    CHECK(res_overflow_share(&r.cells[1]) == 0.0);
    // every request alike: TTFT 300 ms + one 10 ms token, 100 tokens/s
    CHECK(r.cells[1].ttft_q[1] == 310000.0);
    CHECK(r.cells[1].tps_q[1] == 100.0);
    // the KV is written whole at the first request: 10 MiB + C / 8 MiB;
    // on big (1000 MiB) 8192 tokens need 1034 MiB and die every time, on
    // small (600 MiB) 6144 need 778 and die; 4096 needs 522
    CHECK(r.cells[3].any_rate == 1.0);
    CHECK(r.cells[2].any_rate == 0.0);
    CHECK(r.cells[6].any_rate == 1.0);
    CHECK(r.cells[5].any_rate == 0.0);
    std::vector<res_decision> d(r.ncells);
    REQUIRE(res_decisions(&run.plan, &r, d.data()) == 2);
    // big: 4096 and 6144 meet; the larger context wins
    CHECK(d[0].meeting == 2);
    CHECK(d[0].recommended == 2);
    CHECK(d[0].rule == RES_RULE_CONTEXT);
    // small: 4096 alone
    CHECK(d[1].meeting == 1);
    CHECK(d[1].recommended == 5);
    CHECK(d[1].rule == RES_RULE_ONLY);
    char why[256];
    res_verdict_text(&run.plan.target, &r.cells[0], why, sizeof why);
    CHECK(std::string(why) == "misses: context overflow 50%");
    // the largest context, on llama.cpp's steps of 256: big lives while
    // 10 + C/8 <= 1000 MiB, C <= 7920: 7680 meets, 7936 dies (from 6144:
    // 12288, 9216 miss; 7680 meets; 8448, 7936 miss).  small: C <= 4720:
    // 4608 meets, 4864 dies (from 4096: 8192, 6144, 5120 miss; 4608
    // meets; 4864 misses)
    std::vector<res_context> c = find(run);
    CHECK(c[0].searched == 1);
    CHECK(c[0].base == 2);
    CHECK(c[0].tokens == 7680);
    CHECK(c[0].upper == 7936);
    CHECK(c[0].step == 256);
    CHECK(c[0].runs == 5);
    CHECK(c[0].done == 1);
    CHECK(c[1].tokens == 4608);
    CHECK(c[1].upper == 4864);
    CHECK(c[1].runs == 5);
    char text[64];
    res_context_text(&c[0], text, sizeof text);
    CHECK(std::string(text) == "7680 (7936 missed)");
    // with too few steps the search says so: not converged
    c = find(run, 2);
    CHECK(c[0].done == 0);
    CHECK(c[0].tokens == 6144);
    CHECK(c[0].upper == 9216);
}

TEST_CASE("llm decision: with no context of the grid meeting the target, the search halves "
          "down to one that does",
          "[decision][generation]")
{
    // overflow at most 60 %: 2048 (50 %) meets it; with a grid of 8192
    // alone on small (dies): halving, 4096 meets; then 6144 and 5120 miss,
    // 4608 meets, 4864 misses
    std::vector<res_context> c =
        searched("context: [8192]", "target: {deaths: 30%, overflow: 60%}");
    CHECK(c[1].base == 1);
    CHECK(c[1].tokens == 4608);
    CHECK(c[1].upper == 4864);
}

TEST_CASE("llm decision: a context whose overflow alone misses is searched upward",
          "[decision][generation]")
{
    // a grid of 2048 alone: half the requests overflow (over 20 %), the
    // memory holds; a larger context overflows less, so the search doubles:
    // 4096 meets; then as before, big: 8192 dies, 6144, 7168 and 7680 meet,
    // 7936 dies; small: 8192, 6144, 5120 die, 4608 meets, 4864 dies
    std::vector<res_context> c = searched("context: [2048]");
    CHECK(c[0].low == 2048);
    CHECK(c[0].tokens == 7680);
    CHECK(c[0].upper == 7936);
    CHECK(c[0].runs == 6);
    CHECK(c[1].tokens == 4608);
    CHECK(c[1].upper == 4864);
    CHECK(c[1].runs == 6);
    // a context that refuses what does not fit (on_full: fail) fails half
    // the requests at 2048 without a death: too small as well, not too large
    std::string y = with_target("target: {deaths: 30%, completed: 90%}");
    y.replace(y.find("          compute: 10MiB\n"), 25, "          compute: 10MiB\n          on_full: fail\n");
    y.replace(y.find(GRID), GRID.size(), "context: [2048]");
    Loaded l(y);
    Run run(l.s);
    CHECK(run.r.cells[0].failed == 100);
    std::vector<res_context> f = find(run);
    CHECK(f[0].low == 2048);
    CHECK(f[0].tokens == 7680);
    CHECK(f[0].upper == 7936);
    // what the table says of searches that found none
    res_context x{};
    x.searched = x.done = 1;
    x.low = 512, x.upper = 768;
    char text[64];
    res_context_text(&x, text, sizeof text);
    CHECK(std::string(text) == "none (512 overflows, 768 missed)");
    x.low = 0, x.upper = 256;
    res_context_text(&x, text, sizeof text);
    CHECK(std::string(text) == "none (256 missed)");
    x.done = 0, x.tokens = 4096, x.upper = 0;
    res_context_text(&x, text, sizeof text);
    CHECK(std::string(text) == "4096 or more (not converged)");
}

TEST_CASE("llm decision: a cell whose requests reach no LLM is not judged on TTFT or tokens/s",
          "[decision][generation]")
{
    mdl_target t{};
    t.set = 1;
    t.ttft = 1000000;
    t.ttft_q = 1;
    t.tokens_per_s = 10;
    res_cell c{};
    c.ttft_q[0] = c.ttft_q[1] = c.tps_q[0] = c.tps_q[1] = -1;
    res_verdict v;
    res_cell_verdict(&t, &c, &v); // no request reached a KV region
    CHECK(v.meets == 1);
    c.gen_started = 5; // requests reached one, none got a first token
    res_cell_verdict(&t, &c, &v);
    CHECK(v.meets == 0);
    CHECK(v.ttft_ok == 0);
    CHECK(v.tps_ok == 0);
}

// The hand plan with `slots` as its grid and a TTFT target, its plan, and
// cells whose figures a test sets: every one meeting the TTFT target.
struct SlotsPlan {
    Loaded l;
    res_plan plan{};
    const char **labels = nullptr;
    std::vector<res_cell> cells;
    explicit SlotsPlan(const std::string &slots, unsigned n) : l(grid(slots))
    {
        sim_error err;
        sim_error_clear(&err);
        REQUIRE(cli_plan_of(&l.s, &plan, &labels, &err) == SIM_OK);
        cells.resize(n);
        std::memset(cells.data(), 0, cells.size() * sizeof(res_cell));
        for (res_cell &x : cells) {
            x.ttft_q[0] = x.ttft_q[1] = 300000;
            x.gen_requests = x.gen_started = 10;
        }
    }
    static std::string grid(const std::string &slots)
    {
        std::string y = with_target("target: {ttft: {p95: 1s}}");
        y.replace(y.find(GRID), GRID.size(), slots);
        return y;
    }
    // res_decisions over the first n cells: the one decision
    res_decision decide(unsigned n)
    {
        res_result r{};
        r.cells = cells.data();
        r.ncells = n;
        std::vector<res_decision> d(4);
        REQUIRE(res_decisions(&plan, &r, d.data()) == 1);
        return d[0];
    }
    ~SlotsPlan() { std::free(labels); }
};

TEST_CASE("llm decision: among cells of one context the fastest decode wins, then the lowest "
          "peak",
          "[decision][generation]")
{
    // two policies of the same context (slots 1 and 2); their figures set
    // by hand: both meet the target; the faster decode is recommended,
    // whatever their peaks, when the medians' 95% intervals are apart;
    // equal decode, or intervals that overlap (noise): the lower peak
    SlotsPlan h("slots: [1, 2]", 2);
    std::vector<res_cell> &cells = h.cells;
    cells[0].tps_q[0] = 20, cells[0].peak.p95 = 100;
    cells[0].tps_ci[0] = 19, cells[0].tps_ci[1] = 21;
    cells[1].tps_q[0] = 30, cells[1].peak.p95 = 200;
    cells[1].tps_ci[0] = 29, cells[1].tps_ci[1] = 31;
    res_decision d = h.decide(2); // the big phone's two cells
    CHECK(d.recommended == 1);
    CHECK(d.rule == RES_RULE_DECODE);
    // 21.5 in [20.8, 22]: faster, but within the noise of 20 in [19, 21]
    cells[1].tps_q[0] = 21.5, cells[1].tps_ci[0] = 20.8, cells[1].tps_ci[1] = 22;
    d = h.decide(2);
    CHECK(d.recommended == 0);
    CHECK(d.rule == RES_RULE_PEAK);
    cells[1].tps_q[0] = 20, cells[1].tps_ci[0] = 19, cells[1].tps_ci[1] = 21;
    d = h.decide(2);
    CHECK(d.recommended == 0);
    CHECK(d.rule == RES_RULE_PEAK);
}

TEST_CASE("llm decision: the fastest decodes are fixed before any two are compared, whatever "
          "the grid's order",
          "[decision][generation]")
{
    // three policies of one context: A 10 tokens/s in [9.5, 10.5], peak 80;
    // B 10.8 in [10.3, 11.3], peak 90; C 11.6 in [11.1, 12.1], peak 100.  C
    // is the fastest, its interval's lower end 11.1: B reaches it, A does
    // not.  Of B and C the lower peak: B, in every order of the grid.
    SlotsPlan h("slots: [1, 2, 3]", 3);
    struct Fig {
        double tps, lo, hi, peak;
    } figs[3] = {{10, 9.5, 10.5, 80}, {10.8, 10.3, 11.3, 90}, {11.6, 11.1, 12.1, 100}};
    const int orders[3][3] = {{0, 1, 2}, {1, 2, 0}, {2, 0, 1}};
    for (const auto &order : orders) {
        int b = -1;
        for (int k = 0; k < 3; k++) {
            const Fig &f = figs[order[k]];
            res_cell &c = h.cells[k];
            c.tps_q[0] = f.tps, c.tps_ci[0] = f.lo, c.tps_ci[1] = f.hi;
            c.peak.p95 = f.peak;
            if (order[k] == 1)
                b = k;
        }
        res_decision d = h.decide(3); // the big phone's three cells
        CHECK(d.recommended == b);
        CHECK(d.rule == RES_RULE_PEAK);
    }
}

TEST_CASE("cells.csv: an LLM plan's cells carry their context, TTFT, tokens/s and overflow",
          "[decision][generation][csv]")
{
    Loaded l(PLAN);
    Run run(l.s);
    char *csv = res_document_csv(&run.plan, &run.r);
    REQUIRE(csv != nullptr);
    std::string text(csv);
    std::free(csv);
    CHECK(text.find(",meets_target,context,ttft_p50_us,ttft_p95_us,tokens_per_s_p50,"
                    "tokens_per_s_p5,context_overflow,requests_started,kv_peak_max_bytes,"
                    "compute_bytes,mapped_file_bytes\n") != std::string::npos);
    // big at 4096 tokens: meets; 310 ms, 100 tokens/s; 200 requests, none
    // cut; the KV 4096 x 128 KiB = 512 MiB; compute 10 MiB; 100 MiB mapped
    CHECK(text.find("\"context=4096\",") != std::string::npos);
    CHECK(text.find(",1,4096,310000,310000,100,100,0,200,536870912,10485760,104857600\n") !=
          std::string::npos);
    // 2048: half of the 200 requests cut
    CHECK(text.find(",0,2048,310000,310000,100,100,100,200,268435456,10485760,104857600\n") !=
          std::string::npos);
    // beside a candidate that does not generate, every row has the header's
    // columns (its LLM ones empty)
    std::string y = PLAN;
    y.replace(y.find("candidates:\n"), 12, "candidates:\n  - classifier-v1\n");
    Loaded both(y);
    Run two(both.s);
    char *csv2 = res_document_csv(&two.plan, &two.r);
    REQUIRE(csv2 != nullptr);
    std::string rows(csv2);
    std::free(csv2);
    size_t header = std::count(rows.begin(), rows.begin() + rows.find('\n'), ',');
    for (size_t at = 0; at < rows.size();) {
        size_t end = std::min(rows.find('\n', at), rows.size());
        CHECK((size_t)std::count(rows.begin() + at, rows.begin() + end, ',') == header);
        at = end + 1;
    }
    CHECK(rows.find("classifier-v1") != std::string::npos);
}

TEST_CASE("llm decision: over named paths, a policy's decode is its slowest where its LLM ran",
          "[decision][generation]")
{
    // paths chat and idle (no request) x slots [1, 2]: on each phone the
    // cells are chat/1, chat/2, idle/1, idle/2.  By hand: the idle cells
    // are the heavier (the policies' worst) and have no decode; on chat,
    // slots 2 decodes faster.  The decode compared is chat's: slots 2.
    std::string y = with_target("target: {ttft: {p95: 1s}}");
    y.replace(y.find(GRID), GRID.size(), "slots: [1, 2]");
    const std::string path = "workload:\n  path: [cold_start, {requests: {every: 60s, count: 10}}]\n";
    y.replace(y.find(path), path.size(),
              "workload:\n  paths:\n    chat: [cold_start, {requests: {every: 60s, count: 10}}]\n"
              "    idle: [cold_start]\n");
    Loaded l(y);
    res_plan plan{};
    const char **labels = nullptr;
    sim_error err;
    sim_error_clear(&err);
    REQUIRE(cli_plan_of(&l.s, &plan, &labels, &err) == SIM_OK);
    REQUIRE(l.s.ncells == 8);
    std::vector<res_cell> cells(4);
    std::memset(cells.data(), 0, cells.size() * sizeof(res_cell));
    for (int k = 0; k < 4; k++) {
        cells[k].ttft_q[0] = cells[k].ttft_q[1] = k < 2 ? 300000 : -1;
        cells[k].tps_q[0] = cells[k].tps_q[1] = -1;
        cells[k].gen_started = k < 2 ? 10 : 0;
        cells[k].peak.p95 = k < 2 ? 100 : 500;
    }
    cells[0].tps_q[0] = 20, cells[0].tps_ci[0] = 19, cells[0].tps_ci[1] = 21;
    cells[1].tps_q[0] = 30, cells[1].tps_ci[0] = 29, cells[1].tps_ci[1] = 31;
    cells[3].peak.p95 = 400; // idle/2 lighter: peaks alone would choose slots 2 too...
    cells[2].peak.p95 = 300; // ...so make idle/1 the lighter: peaks would choose slots 1
    res_result r{};
    r.cells = cells.data();
    r.ncells = 4;
    std::vector<res_decision> d(4);
    REQUIRE(res_decisions(&plan, &r, d.data()) == 1);
    CHECK(d[0].paths == 2);
    CHECK(d[0].meeting == 2);
    CHECK(d[0].recommended == 1);
    CHECK(d[0].rule == RES_RULE_DECODE);
    std::free(labels);
}

TEST_CASE("llm decision: the LLM criteria of a target are checked with file:line",
          "[decision][generation][scenario]")
{
    std::string msg;
    CHECK(parse(with_target("target: {ttft: {p99: 1s}}"), msg) == SIM_EINPUT);
    CHECK(msg.find("t.yaml:") == 0);
    CHECK(msg.find("p99") != std::string::npos);
    CHECK(parse(with_target("target: {ttft: {p50: 1s, p95: 2s}}"), msg) == SIM_EINPUT);
    CHECK(parse(with_target("target: {ttft: {p95: 0s}}"), msg) == SIM_EINPUT);
    CHECK(parse(with_target("target: {tokens_per_s: {p5: 0}}"), msg) != SIM_OK);
    CHECK(msg.find("t.yaml:") == 0);
    CHECK(parse(with_target("target: {tokens_per_s: {p5: 10}, overflow: 120%}"), msg) ==
          SIM_EINPUT);
    CHECK(parse(with_target("target: {overflow: 0%}"), msg) == SIM_OK);
    // a plan whose candidate does not generate has no tokens to judge
    std::string y = with_target("target: {ttft: {p95: 1s}}");
    size_t g = y.find("        generation:");
    size_t w = y.find("workload:");
    y.replace(g, w - g, "        inference: {time: 100ms}\n");
    y.replace(y.find("policies:"), y.find("target:") - y.find("policies:"), "");
    CHECK(parse(y, msg) == SIM_EINPUT);
    CHECK(msg.find("generation part") != std::string::npos);
}
