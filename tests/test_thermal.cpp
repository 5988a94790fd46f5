// A phone's heat (`thermal`, models/thermal.h, docs/model.md "The phone:
// speed and delegates"): the loader's rules, the heat's arithmetic, and an
// execution slowed by the step in force at its start.
#include <catch2/catch.hpp>

#include <jansson.h>

#include <sstream>
#include <string>
#include <vector>

#include "models/thermal.h"
#include "scenarios/scenarios.h"
#include "shim/shim.hpp"

using namespace shim;

namespace {

const std::string kPhone = R"(name: hot-phone
os: android
ram: 4GiB
system: 1GiB
kill: {rule: lmk, minfree: [{adj: 0, free: 72MiB}]}
thermal:
  steps:
    - {after: 1min, speed: 0.8}
    - {after: 2min, speed: 0.5}
  cooling: 0.5
)";

std::string with(const std::string &from, const std::string &to)
{
    std::string s = kPhone;
    size_t at = s.find(from);
    REQUIRE(at != std::string::npos);
    return s.replace(at, from.size(), to);
}

std::string error_of(const std::string &text)
{
    mdl_device dev;
    sim_error err;
    sim_error_clear(&err);
    int rc = scn_device_parse(text.data(), text.size(), "dev.yaml", &dev, &err);
    REQUIRE(rc != SIM_OK);
    return err.msg;
}

} // namespace

TEST_CASE("thermal: the loader reads the steps, the cooling and the hysteresis",
          "[thermal][device]")
{
    mdl_device dev;
    sim_error err;
    REQUIRE(scn_device_parse(kPhone.data(), kPhone.size(), "dev.yaml", &dev, &err) == SIM_OK);
    REQUIRE(dev.thermal.nsteps == 2);
    CHECK(dev.thermal.after[0] == 60000000);
    CHECK(dev.thermal.after[1] == 120000000);
    CHECK(dev.thermal.speed[1] == 0.5);
    CHECK(dev.thermal.cooling == 0.5);
    CHECK(dev.thermal.hysteresis == 30000000); // the default
    scn_device_release(&dev);
    CHECK(std::string(mdl_thermal_name(MDL_OS_ANDROID, 2)) == "moderate");
    CHECK(std::string(mdl_thermal_name(MDL_OS_IOS, 1)) == "fair");
    CHECK(std::string(mdl_thermal_name(MDL_OS_IOS, 0)) == "nominal");
}

TEST_CASE("thermal: each bad step is named with its place", "[thermal][device][errors]")
{
    CHECK(error_of(with("{after: 2min, speed: 0.5}", "{after: 30s, speed: 0.5}")) ==
          "dev.yaml:9:15: thermal.steps[1].after: a step comes after the one before it");
    CHECK(error_of(with("{after: 2min, speed: 0.5}", "{after: 2min, speed: 0.9}")) ==
          "dev.yaml:9:28: thermal.steps[1].speed: a step is slower than the one before it");
    CHECK(error_of(with("speed: 0.5}", "speed: 1}")).find("thermal.steps[1].speed: ") !=
          std::string::npos);
    CHECK(error_of(with("cooling: 0.5", "cooling: 0.5\n  hysteresis: 1min")) ==
          "dev.yaml:11:15: thermal.hysteresis: hysteresis must be shorter than the first "
          "step's after (the phone could never cool)");
    CHECK(error_of(with("cooling: 0.5", "colling: 0.5")).find("unknown key \"colling\"") !=
          std::string::npos);
    std::string ios = with("os: android", "os: ios");
    ios = ios.replace(ios.find("kill: {rule: lmk, minfree: [{adj: 0, free: 72MiB}]}"), 51,
                      "kill: {rule: jetsam, limit: 2GiB}");
    ios += "    - {after: 3min, speed: 0.4}\n    - {after: 4min, speed: 0.3}\n";
    ios = ios.replace(ios.find("  cooling: 0.5\n"), 15, "") + "  cooling: 0.5\n";
    CHECK(error_of(ios).find("3 steps at most on ios (fair to critical)") != std::string::npos);
}

TEST_CASE("thermal: the heat rises with work, falls with rest, and a step holds its "
          "hysteresis",
          "[thermal]")
{
    mdl_thermal t = {};
    t.nsteps = 2;
    t.after[0] = 60000000;
    t.after[1] = 120000000;
    t.speed[0] = 0.8;
    t.speed[1] = 0.5;
    t.cooling = 0.5;
    t.hysteresis = 10000000;
    mdl_heat h = {};
    mdl_heat_to(&t, &h, 0, 1);               // work begins
    mdl_heat_to(&t, &h, 90000000, 0);        // 90 s of it
    CHECK(h.heat == Approx(90.0));
    unsigned k = mdl_heat_step(&t, &h, 0);
    CHECK(k == 1);
    CHECK(mdl_heat_speed(&t, k) == 0.8);
    mdl_heat_to(&t, &h, 150000000, 0);       // 60 s of rest: 30 s of heat shed
    CHECK(h.heat == Approx(60.0));
    CHECK(mdl_heat_step(&t, &h, k) == 1);    // at the threshold: still light
    mdl_heat_to(&t, &h, 160000000, 1);       // 10 s more rest: 55 s, inside the hysteresis
    CHECK(mdl_heat_step(&t, &h, k) == 1);
    CHECK(mdl_heat_step(&t, &h, 0) == 0);    // not reached from below
    mdl_heat_to(&t, &h, 230000000, 0);       // 70 s of work: 125 s, then rest
    CHECK(mdl_heat_step(&t, &h, 1) == 2);
    CHECK(mdl_heat_speed(&t, 2) == 0.5);
    mdl_heat_to(&t, &h, 230000000 + 1000000000, 0); // a long rest: never under 0
    CHECK(h.heat == 0.0);
    CHECK(mdl_heat_step(&t, &h, 2) == 0);
    CHECK(mdl_heat_speed(&t, 0) == 1.0);
}

TEST_CASE("thermal: an execution runs at the speed of the step in force at its start",
          "[thermal]")
{
    TempDir dir;
    std::string plan = dir.write("hot.yaml", R"(name: hot
seed: 1
replications: 1
horizon: 10min
devices:
  - name: hot-phone
    os: android
    ram: 8GiB
    system: 1GiB
    kill: {rule: lmk, minfree: [{adj: 0, free: 72MiB}]}
    thermal: {steps: [{after: 30s, speed: 0.5}], cooling: 1, hysteresis: 5s}
candidates:
  - id: m
    digest: 1
    runtime: r
    parts:
      m:
        file: 10MiB
        load: {mode: mmap, time: 100ms}
        prepare: {time: 100ms}
        inference: {time: 1s}
workload:
  path: [cold_start, {requests: {every: 1s, for: 2min}}]
)");
    std::string trace = dir.file("t.jsonl");
    RunResult g = oomsim({"gen", plan, "-o", trace});
    INFO(g.err);
    REQUIRE(g.status == 0);
    // the inference ends' durations in order, and the thermal notes
    std::vector<long long> took;
    std::vector<std::string> notes;
    std::istringstream lines(read_file(trace));
    for (std::string line; std::getline(lines, line);) {
        json_error_t e;
        json_t *x = json_loads(line.c_str(), 0, &e);
        REQUIRE(x != nullptr);
        const char *stage = json_string_value(json_object_get(x, "stage"));
        const char *kind = json_string_value(json_object_get(x, "kind"));
        const char *err = json_string_value(json_object_get(x, "error"));
        json_t *d = json_object_get(x, "duration_us");
        if (stage && kind && std::string(stage) == "inference" && std::string(kind) == "begin" &&
            json_is_integer(d))
            took.push_back((long long)json_integer_value(d));
        if (err && std::string(err).rfind("thermal:", 0) == 0)
            notes.push_back(err);
        json_decref(x);
    }
    // busy all the time from 0.2 s: the step comes 30 s in, and stays
    REQUIRE(notes.size() == 1);
    CHECK(notes[0] == "thermal:light");
    REQUIRE(took.size() > 40);
    CHECK(took[0] == 1000000);
    CHECK(took.back() == 2000000);
    size_t slow = 0;
    while (slow < took.size() && took[slow] == 1000000)
        slow++;
    CHECK(slow == 30); // requests 0 to 29 start before 30 s of heat
    for (size_t k = slow; k < took.size(); k++)
        CHECK(took[k] == 2000000);
}
