// Predictions against the field (docs/field.md): a scenario's `field`
// entries, the replications with a memory death while the app is visible,
// the predicted share of device-days with one beside the observed rate, and
// where the comparison appears (the table, results.json, the report).
#include <catch2/catch.hpp>

#include <cmath>
#include <string>
#include <vector>

#include "shim/shim.hpp"
#include "shim/world.hpp"

using namespace shim;

namespace {

// A phone on which every start dies in the foreground (an 800 MiB model
// against a 600 MiB jetsam limit: low_memory, visible), and a roomy one on
// which nothing dies; `field` is appended.
std::string plan(const std::string &field)
{
    return R"(name: fleet
seed: 3
replications: 50
horizon: 1min
devices:
  - name: small
    os: ios
    ram: 2GiB
    system: 1GiB
    kill: {rule: jetsam, limit: 600MiB}
    counts: [native, gpu]
    launch_watchdog: 20s
  - android-8g
candidates:
  - id: big
    digest: b1
    runtime: litert-1.4.0
    parts:
      model:
        file: 10MiB
        load: {mode: copy, time: 100ms}
        prepare: {time: 200ms, resident: {native: 800MiB}}
        inference: {time: 50ms}
workload:
  path: [cold_start, {requests: {every: 5s, for: 30s}}]
  relaunch: 10s
)" + field;
}

struct Run {
    Loaded l;
    std::vector<const char *> pj;
    res_plan p;
    res_result r;
    explicit Run(const std::string &yaml, uint64_t reps = 50) : l(yaml)
    {
        p = plan_of(l.s, reps, pj);
        sim_error err;
        sim_error_clear(&err);
        REQUIRE(res_run(&p, 1, nullptr, nullptr, &r, &err) == SIM_OK);
    }
    ~Run() { res_result_free(&r); }
};

double day(double p, double s)
{
    return 1 - std::pow(1 - p, s);
}

std::string load_error(const std::string &yaml)
{
    scn_scenario s;
    sim_error err;
    sim_error_clear(&err);
    int rc = scn_scenario_parse(yaml.data(), yaml.size(), "f.yaml", &s, &err);
    if (rc == SIM_OK)
        scn_scenario_release(&s);
    return rc == SIM_OK ? "" : err.msg;
}

} // namespace

TEST_CASE("field: a plan's entries, by device name and by RAM bucket", "[field]")
{
    Loaded l(plan("field:\n  sessions_per_day: 3\n  devices:\n"
                  "    - {device: small, memory_exit_rate: 0.5%, users: 1200, source: metrickit,\n"
                  "       background_rate: 2.5%}\n"
                  "    - {ram: 8GiB, lmk_rate: 0.2%, users: 50000, sessions_per_day: 5}\n"));
    REQUIRE(l.s.nfield == 2);
    CHECK(std::string(l.s.field[0].device) == "small");
    CHECK(l.s.field[0].metric == MDL_FIELD_MEMORY_EXIT_RATE);
    CHECK(l.s.field[0].rate == Approx(0.005));
    CHECK(l.s.field[0].users == 1200);
    CHECK(l.s.field[0].sessions_per_day == 3);
    CHECK(std::string(l.s.field[0].source) == "metrickit");
    CHECK(l.s.field[0].has_background == 1);
    CHECK(l.s.field[0].background_rate == Approx(0.025));
    CHECK(l.s.field[1].has_background == 0);
    CHECK(l.s.field[1].device[0] == '\0');
    CHECK(l.s.field[1].ram == 8LL << 30);
    CHECK(l.s.field[1].metric == MDL_FIELD_LMK_RATE);
    CHECK(l.s.field[1].sessions_per_day == 5);
    // refusals, each located
    CHECK(load_error(plan("field:\n  devices:\n    - {device: small, lmk_rate: 1%, users: 10}\n"))
              .find("sessions_per_day is needed") != std::string::npos);
    // an entry for a device the plan does not run is kept, and compared with nothing
    CHECK(load_error(plan("field:\n  sessions_per_day: 1\n  devices:\n"
                          "    - {device: nowhere, lmk_rate: 1%, users: 10}\n"
                          "    - {ram: 3GiB, lmk_rate: 1%, users: 10}\n")) == "");
    CHECK(load_error(plan("field:\n  sessions_per_day: 1\n  devices:\n"
                          "    - {devise: small, lmk_rate: 1%, users: 10}\n"))
              .find("devise") != std::string::npos);
    CHECK(load_error(plan("field:\n  sessions_per_day: 1\n  devices:\n"
                          "    - {device: small, ram: 2GiB, lmk_rate: 1%, users: 10}\n"))
              .find("one of the two") != std::string::npos);
    CHECK(load_error(plan("field:\n  sessions_per_day: 1\n  devices:\n"
                          "    - {device: small, lmk_rate: 1%, memory_exit_rate: 1%, "
                          "users: 10}\n"))
              .find("lmk_rate (Android) or memory_exit_rate (iOS)") != std::string::npos);
    CHECK(load_error(plan("field:\n  sessions_per_day: 1\n  devices:\n"
                          "    - {device: small, lmk_rate: 1%}\n"))
              .find("missing required key \"users\"") != std::string::npos);
    CHECK(load_error(plan("field:\n  sessions_per_day: 1\n  devices:\n"
                          "    - {device: small, lmk_rate: 120%, users: 4}\n")) != "");
    CHECK(load_error(plan("field:\n  sessions_per_day: 1\n  devices:\n"
                          "    - {device: small, lmk_rate: 1%, users: 4, background_rate: 2}\n"))
              .find("background_rate: expected a probability") != std::string::npos);
}

TEST_CASE("field: every session dies visibly, so the model predicts more than the field",
          "[field]")
{
    Run run(plan("field:\n  sessions_per_day: 2\n  devices:\n"
                 "    - {device: small, memory_exit_rate: 1%, users: 10000}\n"
                 "    - {device: android-8g, lmk_rate: 0.5%, users: 20000}\n"),
            50);
    // small: every replication has a foreground low_memory death
    CHECK(run.r.cells[0].with_visible_death == 50);
    res_field_cmp f;
    res_field_compare(&run.p, 0, &run.r.cells[0], &f);
    REQUIRE(f.f != nullptr);
    CHECK(f.visible.session_rate == 1.0);
    CHECK(f.visible.predicted == 1.0);
    res_interval w = res_wilson95(50, 50);
    CHECK(f.visible.predicted_ci.lo == Approx(day(w.lo, 2)).epsilon(1e-12));
    res_interval o = res_wilson95(100, 10000);
    CHECK(f.visible.observed_ci.lo == Approx(o.lo).epsilon(1e-12));
    CHECK(f.visible.observed_ci.hi == Approx(o.hi).epsilon(1e-12));
    CHECK(f.visible.verdict == RES_FIELD_HIGHER);
    // android-8g: nothing dies; the prediction's interval still reaches the
    // observed 0.5 % at 50 replications: they agree
    res_field_compare(&run.p, 1, &run.r.cells[1], &f);
    REQUIRE(f.f != nullptr);
    CHECK(run.r.cells[1].with_visible_death == 0);
    CHECK(f.visible.predicted == 0);
    CHECK(f.visible.predicted_ci.hi == Approx(day(res_wilson95(0, 50).hi, 2)).epsilon(1e-12));
    CHECK(f.visible.verdict == RES_FIELD_AGREES);
}

TEST_CASE("field: no death over many sessions against a high field rate predicts fewer",
          "[field]")
{
    // 1000 sessions without a death: the predicted day rate is at most
    // 1 - (1 - 3.84/1003.84)^2 = 0.76 %, below the observed 5 % of 10000
    // users [4.59, 5.44]
    Run run(plan("field:\n  sessions_per_day: 2\n  devices:\n"
                 "    - {ram: 8GiB, lmk_rate: 5%, users: 10000}\n"),
            1000);
    res_field_cmp f;
    res_field_compare(&run.p, 0, &run.r.cells[0], &f);
    CHECK(f.f == nullptr); // no entry for the small phone
    res_field_compare(&run.p, 1, &run.r.cells[1], &f);
    REQUIRE(f.f != nullptr);
    CHECK(f.visible.predicted_ci.hi == Approx(day(res_wilson95(0, 1000).hi, 2)).epsilon(1e-12));
    CHECK(f.visible.predicted_ci.hi < 0.0077);
    CHECK(f.visible.verdict == RES_FIELD_LOWER);
}

TEST_CASE("field: a background kill is not a visible one", "[field]")
{
    // background-reclaim: the app dies only in the background (system_reclaim)
    Loaded l(shim::read_file(std::string(OOMSIM_SOURCE_DIR) +
                             "/scenarios/catalog/teach/background-reclaim.yaml"));
    mdl_rep r = l.run(0);
    CHECK(r.deaths_total > 0);
    CHECK(r.visible_memory_deaths == 0);
}

TEST_CASE("field: a background_rate is compared with the background deaths, beside the "
          "visible rate",
          "[field]")
{
    // background-reclaim: every session dies in the background (system_reclaim), none in front
    std::string yaml = shim::read_file(std::string(OOMSIM_SOURCE_DIR) +
                                       "/scenarios/catalog/teach/background-reclaim.yaml");
    Run run(yaml + "field:\n  sessions_per_day: 1\n  devices:\n"
                   "    - {device: busy-2g, lmk_rate: 0.1%, users: 5000, background_rate: 4%}\n",
            20);
    CHECK(run.r.cells[0].with_visible_death == 0);
    CHECK(run.r.cells[0].with_background_death == 20);
    res_field_cmp f;
    res_field_compare(&run.p, 0, &run.r.cells[0], &f);
    REQUIRE(f.f != nullptr);
    CHECK(f.visible.predicted == 0);
    CHECK(f.visible.verdict == RES_FIELD_AGREES);
    CHECK(f.background.session_rate == 1.0);
    CHECK(f.background.observed == Approx(0.04));
    CHECK(f.background.verdict == RES_FIELD_HIGHER);
    char *t = res_document_table(&run.p, &run.r);
    REQUIRE(t != nullptr);
    std::string table(t);
    free(t);
    CHECK(table.find("busy-2g (background)") != std::string::npos);
    CHECK(table.find("background_rate") != std::string::npos);
    char *j = res_document_json(&run.p, &run.r);
    REQUIRE(j != nullptr);
    std::string json(j);
    free(j);
    size_t bg = json.find("\"background\": {");
    REQUIRE(bg != std::string::npos);
    CHECK(json.find("\"verdict\": \"predicts_higher\"", bg) != std::string::npos);
    CHECK(json.find("\"verdict\": \"agrees\"") < bg); // the visible rate's, before it
}

TEST_CASE("field: the comparison in the table, results.json and the report", "[field]")
{
    Run run(plan("field:\n  sessions_per_day: 2\n  devices:\n"
                 "    - {device: small, memory_exit_rate: 1%, users: 10000, source: metrickit}\n"),
            50);
    char *t = res_document_table(&run.p, &run.r);
    REQUIRE(t != nullptr);
    std::string table(t);
    free(t);
    CHECK(table.find("each cell against the fleet") != std::string::npos);
    CHECK(table.find("100.00% [") != std::string::npos);
    CHECK(table.find("1.00% [0.82, 1.21]") != std::string::npos);
    CHECK(table.find("DISAGREES: predicts more deaths") != std::string::npos);
    char *j = res_document_json(&run.p, &run.r);
    REQUIRE(j != nullptr);
    std::string json(j);
    free(j);
    CHECK(json.find("\"field\": {\n        \"predicted\": {\n          \"rate\": 1.0,") !=
          std::string::npos);
    CHECK(json.find("\"verdict\": \"predicts_higher\"") != std::string::npos);
    CHECK(json.find("\"field\": null") != std::string::npos); // android-8g: no entry
    CHECK(json.find("\"source\": \"metrickit\"") != std::string::npos);
    char *h = res_report_html(&run.p, &run.r, nullptr, 0);
    REQUIRE(h != nullptr);
    std::string html(h);
    free(h);
    CHECK(html.find("<section id=\"field\">") != std::string::npos);
    // without field data, none of it
    Run plain(plan(""), 5);
    char *j2 = res_document_json(&plain.p, &plain.r);
    REQUIRE(j2 != nullptr);
    CHECK(std::string(j2).find("\"field\"") == std::string::npos);
    free(j2);
}
