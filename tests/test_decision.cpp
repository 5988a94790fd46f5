// The decision against a scenario's target, and what the cells table says
// of rows that would otherwise look healthy: on hand-made cells, so each
// rule is checked by its own numbers, then through `oomsim run`.
#include <catch2/catch.hpp>

#include <cstring>
#include <string>
#include <vector>

#include "shim/shim.hpp"
#include "shim/world.hpp"

using namespace shim;

namespace {

constexpr double MIB = 1024.0 * 1024.0;
constexpr int64_t MiB = 1024 * 1024;

// Two devices, one candidate, two policies each: cells 0-1 on "phone-a",
// 2-3 on "phone-b".
struct Fixture {
    mdl_device dev[2]{};
    mdl_candidate cand{};
    mdl_cell cell[4]{};
    const char *pj[4] = {"{\"sessions\": 1}", "{\"sessions\": 2}", "{\"sessions\": 1}",
                         "{\"sessions\": 2}"};
    res_cell rc[4]{};
    res_plan plan{};
    res_result r{};
    Fixture()
    {
        std::strcpy(dev[0].name, "phone-a");
        std::strcpy(dev[1].name, "phone-b");
        std::strcpy(cand.id, "model");
        for (int i = 0; i < 4; i++) {
            cell[i].device = &dev[i / 2];
            cell[i].candidate = &cand;
            // healthy by default: no death, everything completed in 300 ms
            rc[i].any_ci = {0, 0.004};
            rc[i].arrived = rc[i].completed = 100;
            rc[i].latency_us.p95 = 300e3;
            rc[i].peak.p95 = (400 + 10 * i) * MIB;
            rc[i].availability = 1;
        }
        plan.name = "decide";
        plan.cells = cell;
        plan.policy_json = pj;
        plan.ncells = 4;
        plan.replications = 1000;
        plan.horizon = 60000000;
        plan.target.set = 1;
        plan.target.has_deaths = 1;
        plan.target.deaths = 0.01;
        plan.target.latency_p95 = 1000000;
        r.cells = rc;
        r.ncells = 4;
    }
    std::string table()
    {
        char *t = res_document_table(&plan, &r);
        REQUIRE(t != nullptr);
        std::string s(t);
        std::free(t);
        return s;
    }
};

} // namespace

TEST_CASE("decision: the upper end of the interval, not the estimate, is held to the target",
          "[decision]")
{
    Fixture f;
    res_verdict v;
    f.rc[0].any_rate = 0.005; // the estimate is under 1 %
    f.rc[0].any_ci = {0.002, 0.012}; // its upper end is not
    res_cell_verdict(&f.plan.target, &f.rc[0], &v);
    CHECK_FALSE(v.meets);
    CHECK_FALSE(v.deaths_ok);
    CHECK(v.latency_ok);
    CHECK(v.shortfall == Approx(1.2));
    f.rc[0].any_ci.hi = 0.00999;
    res_cell_verdict(&f.plan.target, &f.rc[0], &v);
    CHECK(v.meets);
    // latency: at most the bound; nothing completed never meets it
    f.rc[0].latency_us.p95 = 1000001;
    res_cell_verdict(&f.plan.target, &f.rc[0], &v);
    CHECK_FALSE(v.latency_ok);
    f.rc[0].latency_us.p95 = 1000000;
    res_cell_verdict(&f.plan.target, &f.rc[0], &v);
    CHECK(v.latency_ok);
    f.rc[0].completed = 0;
    res_cell_verdict(&f.plan.target, &f.rc[0], &v);
    CHECK_FALSE(v.latency_ok);
    char text[256];
    res_verdict_text(&f.plan.target, &f.rc[0], text, sizeof text);
    CHECK(std::string(text) == "misses: no request completed");
    // an unset criterion holds
    mdl_target deaths_only = f.plan.target;
    deaths_only.latency_p95 = 0;
    res_cell_verdict(&deaths_only, &f.rc[0], &v);
    CHECK(v.meets);
}

TEST_CASE("decision: the lowest peak among those that meet it, then the lowest latency",
          "[decision]")
{
    Fixture f;
    std::vector<res_decision> d(4);
    REQUIRE(res_decisions(&f.plan, &f.r, d.data()) == 2);
    CHECK(d[0].first == 0);
    CHECK(d[0].count == 2);
    CHECK(d[0].meeting == 2);
    CHECK(d[0].recommended == 0); // 400 MiB against 410 MiB
    CHECK(d[0].closest == -1);
    // equal peaks: the lower latency wins
    f.rc[3].peak.p95 = f.rc[2].peak.p95;
    f.rc[3].latency_us.p95 = 200e3;
    // the cell with the lower peak misses on deaths: the other is chosen
    f.rc[0].any_ci.hi = 0.05;
    REQUIRE(res_decisions(&f.plan, &f.r, d.data()) == 2);
    CHECK(d[0].meeting == 1);
    CHECK(d[0].recommended == 1);
    CHECK(d[1].recommended == 3);
    std::string t = f.table();
    INFO(t);
    CHECK(t.find("each device and candidate against the target: deaths under 1% (the upper end "
                 "of the 95% interval), latency p95 at most 1 s:") != std::string::npos);
    CHECK(t.find("1 of 2  sessions=2   the only one that meets it: peak p95 410.0 MiB, latency "
                 "p95 300 ms") != std::string::npos);
    // equal peaks: the table names the rule that chose, the lower latency
    CHECK(d[1].rule == RES_RULE_LATENCY);
    CHECK(d[0].rule == RES_RULE_ONLY);
    CHECK(t.find("2 of 2  sessions=2   the lowest latency of those that meet it: peak p95 420.0 "
                 "MiB, latency p95 200 ms") != std::string::npos);
    CHECK(t.find("misses: deaths up to 5%") != std::string::npos);
}

TEST_CASE("decision: when none meets it, the one that came closest is named", "[decision]")
{
    Fixture f;
    f.rc[0].any_ci.hi = 0.03;          // 3 times the target
    f.rc[1].any_ci.hi = 0.015;         // 1.5 times
    f.rc[1].latency_us.p95 = 1.2e6;    // 1.2 times
    std::vector<res_decision> d(4);
    REQUIRE(res_decisions(&f.plan, &f.r, d.data()) == 2);
    CHECK(d[0].meeting == 0);
    CHECK(d[0].recommended == -1);
    CHECK(d[0].closest == 1);
    std::string t = f.table();
    INFO(t);
    CHECK(t.find("0 of 2  none         closest: sessions=2 (deaths up to 1.5%, latency p95 1.2 "
                 "s; peak p95 410.0 MiB)") != std::string::npos);
    // without a target there is no decision and no target column
    f.plan.target = mdl_target{};
    t = f.table();
    CHECK(t.find("against the target") == std::string::npos);
    CHECK(t.find("  target") == std::string::npos);
}

TEST_CASE("decision: a share of requests completed, held to the target on its own",
          "[decision]")
{
    Fixture f;
    f.plan.target.has_completed = 1;
    f.plan.target.completed = 0.95;
    res_verdict v;
    f.rc[0].completed = 95; // 95 of 100: exactly the share, met
    res_cell_verdict(&f.plan.target, &f.rc[0], &v);
    CHECK(v.completed_ok);
    CHECK(v.meets);
    f.rc[0].completed = 90; // twice the 5 % of failures allowed
    res_cell_verdict(&f.plan.target, &f.rc[0], &v);
    CHECK_FALSE(v.completed_ok);
    CHECK(v.deaths_ok);
    CHECK_FALSE(v.meets);
    CHECK(v.shortfall == Approx(2.0));
    char text[256];
    res_verdict_text(&f.plan.target, &f.rc[0], text, sizeof text);
    CHECK(std::string(text) == "misses: 90% of requests completed");
    f.rc[0].any_ci.hi = 0.03;
    res_verdict_text(&f.plan.target, &f.rc[0], text, sizeof text);
    CHECK(std::string(text) == "misses: deaths up to 3%, 90% of requests completed");
    res_target_text(&f.plan.target, text, sizeof text);
    CHECK(std::string(text) == "deaths under 1% (the upper end of the 95% interval), latency "
                               "p95 at most 1 s, at least 95% of requests completed");
}

TEST_CASE("decision: over named paths a policy meets the target only on every path",
          "[decision]")
{
    // one device and candidate, two paths x two policies: cells 0-1 path
    // "calm", 2-3 path "storm" (policy sessions=1 then sessions=2)
    Fixture f;
    mdl_workload calm{}, storm{};
    f.cell[0].device = f.cell[1].device = f.cell[2].device = f.cell[3].device = &f.dev[0];
    f.cell[0].workload = f.cell[1].workload = &calm;
    f.cell[2].workload = f.cell[3].workload = &storm;
    const char *pj[4] = {"{\"path\": \"calm\", \"sessions\": 1}",
                         "{\"path\": \"calm\", \"sessions\": 2}",
                         "{\"path\": \"storm\", \"sessions\": 1}",
                         "{\"path\": \"storm\", \"sessions\": 2}"};
    f.plan.policy_json = pj;
    f.plan.paths = 2;
    // sessions=1 has the lowest peak on calm but misses on storm
    f.rc[2].any_ci.hi = 0.04;
    std::vector<res_decision> d(4);
    REQUIRE(res_decisions(&f.plan, &f.r, d.data()) == 1);
    CHECK(d[0].paths == 2);
    CHECK(d[0].policies == 2);
    CHECK(d[0].meeting == 1);
    CHECK(d[0].recommended == 1); // sessions=2, named by its cell on the first path
    std::string t = f.table();
    INFO(t);
    CHECK(t.find("1 of 2 on all 2 paths  sessions=2   meets it on every path; the only one "
                 "that does: peak p95 430.0 MiB on its heaviest path") !=
          std::string::npos);
    // sessions=2 misses too, by less: none, the closest is its storm cell
    f.rc[3].any_ci.hi = 0.02;
    REQUIRE(res_decisions(&f.plan, &f.r, d.data()) == 1);
    CHECK(d[0].meeting == 0);
    CHECK(d[0].recommended == -1);
    CHECK(d[0].closest == 3);
    t = f.table();
    CHECK(t.find("0 of 2 on all 2 paths  none         closest: path=storm sessions=2 (deaths up "
                 "to 2%") != std::string::npos);
    // both meet on every path: the lowest peak on each one's heaviest path
    // wins (sessions=1: 400 and 420, sessions=2: 410 and 300), not the
    // lowest peak of a single cell
    f.rc[2].any_ci.hi = f.rc[3].any_ci.hi = 0.004;
    f.rc[3].peak.p95 = 300 * MIB;
    REQUIRE(res_decisions(&f.plan, &f.r, d.data()) == 1);
    CHECK(d[0].meeting == 2);
    CHECK(d[0].recommended == 1);
    f.rc[1].peak.p95 = 425 * MIB; // now sessions=2's heaviest is 425 against 420
    REQUIRE(res_decisions(&f.plan, &f.r, d.data()) == 1);
    CHECK(d[0].recommended == 0);
    CHECK(d[0].heaviest == 2);
    // equal peaks on its two paths: the heaviest is the one of the higher latency
    f.rc[2].peak.p95 = 400 * MIB;
    f.rc[2].latency_us.p95 = 800e3;
    REQUIRE(res_decisions(&f.plan, &f.r, d.data()) == 1);
    CHECK(d[0].heaviest == 2);
    t = f.table();
    CHECK(t.find("peak p95 400.0 MiB on its heaviest path (latency p95 800 ms there)") !=
          std::string::npos);
}

TEST_CASE("cells table: a row where requests did not complete says so", "[decision]")
{
    Fixture f;
    f.plan.target = mdl_target{};
    f.rc[0].completed = 0;
    f.rc[0].arrived = 57;
    f.rc[1].completed = 20;
    f.rc[1].arrived = 57;
    f.rc[1].latency_us.p95 = 900e3;
    // a death rate beside an availability that two decimals would round up
    f.rc[2].any_rate = 0.001;
    f.rc[2].availability = 0.99996;
    f.rc[3].availability = 0.9999999999;
    std::string t = f.table();
    INFO(t);
    CHECK(t.find("0 of 57 completed") != std::string::npos);
    CHECK(t.find("900 ms (20 of 57 completed)") != std::string::npos);
    auto line = [&](const std::string &dev, const std::string &pol) {
        size_t a = t.find(dev + "  model      " + pol);
        REQUIRE(a != std::string::npos);
        return t.substr(a, t.find('\n', a) - a);
    };
    CHECK(line("phone-a", "sessions=1").find("100.00%") != std::string::npos); // truly 1
    CHECK(line("phone-b", "sessions=1").find("  99.996%") != std::string::npos);
    CHECK(line("phone-b", "sessions=2").find("  under 100%") != std::string::npos);
}

TEST_CASE("scenario: target values and errors", "[decision][scenario]")
{
    const std::string base = "name: t\nhorizon: 1min\ndevices: [android-3g]\n"
                             "candidates: [classifier-v1]\n"
                             "workload: {path: [cold_start]}\n";
    {
        Loaded l(base + "target: {deaths: 0.1%, latency_p95: 2s}\n");
        CHECK(l.s.target.set == 1);
        CHECK(l.s.target.deaths == Approx(0.001));
        CHECK(l.s.target.latency_p95 == 2000000);
    }
    {
        Loaded l(base + "target: {deaths: 0.02}\n");
        CHECK(l.s.target.deaths == 0.02);
        CHECK(l.s.target.latency_p95 == 0);
    }
    {
        Loaded l(base);
        CHECK(l.s.target.set == 0);
    }
    auto error_of = [&](const std::string &extra) {
        std::string y = base + extra;
        scn_scenario s;
        sim_error err;
        sim_error_clear(&err);
        int rc = scn_scenario_parse(y.data(), y.size(), "t.yaml", &s, &err);
        CHECK(rc != SIM_OK);
        return std::string(err.msg);
    };
    CHECK(error_of("target: {}\n") ==
          "t.yaml:6:1: target: a target needs deaths, latency_p95, completed, ttft, tokens_per_s or overflow, or several of them");
    {
        Loaded l(base + "target: {completed: 99%}\n");
        CHECK(l.s.target.set == 1);
        CHECK(l.s.target.has_completed == 1);
        CHECK(l.s.target.completed == Approx(0.99));
        CHECK(l.s.target.has_deaths == 0);
    }
    CHECK(error_of("target: {completed: 0}\n").find("target.completed: a completed-share target "
                                                     "must be above 0") != std::string::npos);
    CHECK(error_of("target: {completed: 120%}\n").find("expected a probability") !=
          std::string::npos);
    CHECK(error_of("target: {deaths: 0%}\n").find("target.deaths: a death-rate target must be "
                                                  "above 0") != std::string::npos);
    CHECK(error_of("target: {deaths: 1%, latency: 2s}\n").find("unknown key \"latency\"") !=
          std::string::npos);
    CHECK(error_of("target: {latency_p95: 2}\n").find("a duration needs a unit") !=
          std::string::npos);
}

TEST_CASE("run split-vs-preload recommends a policy per device", "[decision][cli][slow]")
{
    RunResult r = run({OOMSIM_BIN, "run", "split-vs-preload", "-j", "2"});
    INFO(r.err);
    REQUIRE(r.status == 0);
    INFO(r.out);
    size_t at = r.out.find("each device and candidate against the target: deaths under 1%");
    REQUIRE(at != std::string::npos);
    std::string decision = r.out.substr(at);
    for (const char *dev : {"android-go-2g", "android-3g", "iphone-2g"}) {
        size_t row = decision.find(std::string("\n") + dev + " ");
        REQUIRE(row != std::string::npos);
        std::string line = decision.substr(row + 1, decision.find('\n', row + 1) - row - 1);
        CHECK((line.find("residency=") != std::string::npos ||
               line.find("none         closest:") != std::string::npos));
    }
    // the peak during switches, which decides between on-demand and preload
    CHECK(r.out.find("  switch peak p95  target\n") != std::string::npos);
    RunResult plan = run({OOMSIM_BIN, "run", "-r", "20"});
    CHECK(plan.out.find("  switch peak p95  ") == std::string::npos); // no switch, no column
    // the JSON carries the same decision
    RunResult j = run({OOMSIM_BIN, "run", "split-vs-preload", "-r", "50", "--format", "json"});
    REQUIRE(j.status == 0);
    CHECK(j.out.find("\"decisions\": [") != std::string::npos);
    CHECK(j.out.find("\"deaths\": 0.01,") != std::string::npos);
    CHECK(j.out.find("\"latency_p95_us\": 2000000") != std::string::npos);
    CHECK(j.out.find("\"recommended\": ") != std::string::npos);
}

TEST_CASE("comparisons: cells identical by construction get identical intervals",
          "[decision][cli]")
{
    // lru:1 is on_demand_overlap by definition with two parts
    RunResult r = run({OOMSIM_BIN, "run", "split-vs-preload", "-r", "100", "-j", "2"});
    REQUIRE(r.status == 0);
    std::string cmp = r.out.substr(r.out.find("each policy against its baseline"));
    auto row = [&](const std::string &dev, const std::string &pol) {
        size_t a = 0;
        std::string line;
        while ((a = cmp.find("\n" + dev + " ", a)) != std::string::npos) {
            line = cmp.substr(a + 1, cmp.find('\n', a + 1) - a - 1);
            if (line.find("residency=" + pol + " ") != std::string::npos)
                break;
            a++;
        }
        REQUIRE(a != std::string::npos);
        return line.substr(line.find("residency=preload"));
    };
    for (const char *dev : {"android-go-2g", "android-3g", "iphone-2g"})
        CHECK(row(dev, "on_demand_overlap") == row(dev, "lru:1"));
}

namespace {
// A 1000 MiB foreground and 300 MiB background jetsam limit; one part
// whose load copies `file` into native memory; the user leaves after 5 s.
std::string margin_plan(const std::string &file)
{
    return "name: margins\nhorizon: 20s\nreplications: 3\n"
           "devices:\n  - name: phone\n    os: ios\n    ram: 4GiB\n    system: 1GiB\n"
           "    kill: {rule: jetsam, limit: 1000MiB, background_limit: 300MiB}\n"
           "    counts: [native, gpu]\n"
           "candidates:\n  - id: m\n    digest: 0a\n    runtime: t-1\n    parts:\n"
           "      p:\n        file: " + file + "\n        load: {mode: copy, time: 100ms}\n"
           "        prepare: {time: 50ms, transient: {native: 100MiB}}\n"
           "        inference: {time: 100ms}\n"
           "workload: {path: [cold_start, {requests: {every: 1s, count: 3}}, "
           "{background: 10s}]}\n";
}
} // namespace

TEST_CASE("limits and margins: the smallest headroom under the limit in force",
          "[decision][margins]")
{
    {
        // 200 MiB held: 800 MiB under the foreground limit at the load,
        // 700 MiB while the 100 MiB prepare transient is held, and 100 MiB
        // under the 300 MiB background limit: the margin is 100 MiB.
        Loaded l(margin_plan("200MiB"));
        mdl_rep r = l.run(0);
        CHECK(r.deaths_total == 0);
        CHECK(r.min_margin == 100 * MiB);
    }
    {
        // 350 MiB held: it lives in the foreground (650 MiB to spare) and dies
        // when the user leaves, 50 MiB over the background limit.
        Loaded l(margin_plan("350MiB"));
        mdl_rep r = l.run(0);
        CHECK(r.deaths_total == 1);
        CHECK(r.first_death == MDL_EXIT_LOW_MEMORY);
        CHECK(r.first_death_foreground == 0);
        CHECK(r.min_margin == -50 * MiB);
        // and the table names the limit crossed
        std::vector<const char *> pj;
        res_plan plan = plan_of(l.s, 3, pj);
        res_result res;
        sim_error err;
        sim_error_clear(&err);
        REQUIRE(res_run(&plan, 1, nullptr, nullptr, &res, &err) == SIM_OK);
        CHECK(res.cells[0].has_margin);
        CHECK(res.cells[0].margin_p50 == -50 * MiB);
        CHECK(res.cells[0].memory_deaths[0] == 3);
        char text[256];
        res_death_text(l.s.cells[0].device, &res.cells[0], text, sizeof text);
        CHECK(std::string(text) == "low_memory: background limit 300 MiB");
        char *t = res_document_table(&plan, &res);
        REQUIRE(t != nullptr);
        std::string table(t);
        std::free(t);
        INFO(table);
        CHECK(table.find("1000 / 300 MiB") != std::string::npos);
        CHECK(table.find("-50 / -50 MiB") != std::string::npos);
        char *csv = res_document_csv(&plan, &res);
        REQUIRE(csv != nullptr);
        CHECK(std::string(csv).find(",1048576000,314572800,-52428800,-52428800,") !=
              std::string::npos);
        std::free(csv);
        res_result_free(&res);
    }
}

TEST_CASE("comparisons: the latency column is the difference of the cells' own p95s",
          "[decision][latency]")
{
    scn_scenario s;
    sim_error err;
    sim_error_clear(&err);
    REQUIRE(scn_scenario_load_catalog("scenarios/split-vs-preload.yaml", &s, &err) == SIM_OK);
    std::vector<const char *> pj;
    res_plan plan = plan_of(s, 200, pj);
    res_result one, two;
    REQUIRE(res_run(&plan, 1, nullptr, nullptr, &one, &err) == SIM_OK);
    REQUIRE(res_run(&plan, 2, nullptr, nullptr, &two, &err) == SIM_OK);
    unsigned seen = 0;
    for (unsigned k = 0; k < one.ncmp; k++) {
        const res_comparison &c = one.cmp[k];
        if (c.metric != RES_CMP_LATENCY_P95)
            continue;
        seen++;
        INFO("cell " << c.cell << " against " << c.baseline);
        CHECK(c.diff == one.cells[c.cell].latency_us.p95 - one.cells[c.baseline].latency_us.p95);
        CHECK(c.ci.lo <= c.diff);
        CHECK(c.diff <= c.ci.hi);
        CHECK(c.ci.hi > c.ci.lo); // the resamples differ
        // the same resamples whatever the threads
        CHECK(c.ci.lo == two.cmp[k].ci.lo);
        CHECK(c.ci.hi == two.cmp[k].ci.hi);
    }
    CHECK(seen == 9);
    res_result_free(&one);
    res_result_free(&two);
    scn_scenario_release(&s);
}
