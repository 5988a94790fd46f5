// The scenario loader: a valid plan builds the grid; every class of error
// names file:line:col and the key path (issue: scenario loading).
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>

#include "scenarios/scenarios.h"
#include "shim/shim.hpp"

using namespace shim;

namespace {

// A valid scenario; tests replace one line to break it.
const std::string base = R"(name: plan
seed: 3
replications: 10
horizon: 10min
devices: [android-4g, catalog/devices/iphone-4g.yaml]
candidates: [ocr-v3]
workload:
  path:
    - cold_start
    - enter: ocr_page
    - requests: {rate: "0.5/s", for: 60s, needs: [detector, recognizer], payload: {java: 12MiB}}
    - background: 30s
    - repeat: {times: 3, steps: [{enter: ocr_page}, {requests: {every: 2s, count: 5, needs: [detector]}}, {leave: ocr_page}]}
  relaunch: {dist: exponential, mean: 20s}
policies:
  queue: 8
  sessions: [1, 2]
  residency: [preload, on_demand_overlap]
  prewarm: [detector]
)";

std::string replace(std::string s, const std::string &from, const std::string &to)
{
    size_t at = s.find(from);
    REQUIRE(at != std::string::npos);
    return s.replace(at, from.size(), to);
}

std::string error_of(const std::string &text, int code = SIM_EINPUT,
                     const std::string &file = "plan.yaml")
{
    scn_scenario s;
    sim_error err;
    sim_error_clear(&err);
    int rc = scn_scenario_parse(text.data(), text.size(), file.c_str(), &s, &err);
    INFO(err.msg);
    REQUIRE(rc == code);
    REQUIRE(s.cells == nullptr);
    return err.msg;
}

} // namespace

TEST_CASE("a valid plan builds devices x candidates x the policy axes", "[scenario]")
{
    scn_scenario s;
    sim_error err;
    sim_error_clear(&err);
    REQUIRE(scn_scenario_parse(base.data(), base.size(), "plan.yaml", &s, &err) == SIM_OK);
    CHECK(s.ndevices == 2);
    CHECK(s.ncandidates == 1);
    CHECK(s.npolicies == 4);
    CHECK(s.ncells == 8);
    CHECK(s.naxes == 2);
    CHECK(std::string(s.axes[0]) == "sessions");
    // the first axis varies slowest
    CHECK(std::string(s.policy_json[0]) == R"({"sessions": 1, "residency": "preload"})");
    CHECK(std::string(s.policy_json[1]) == R"({"sessions": 1, "residency": "on_demand_overlap"})");
    CHECK(std::string(s.policy_json[2]) == R"({"sessions": 2, "residency": "preload"})");
    CHECK(s.cells[3].policy.sessions == 2);
    CHECK(s.cells[3].policy.residency == MDL_RES_OVERLAP);
    CHECK(s.cells[3].policy.queue == 8);
    CHECK(std::string(s.cells[4].device->name) == "iphone-4g");
    // cold_start, enter, requests, background, then 3 x (enter, requests, leave)
    CHECK(s.workload.nsteps == 13);
    CHECK(s.workload.nrequests == 2);
    CHECK(s.workload.requests[1].count == 5);
    CHECK(s.workload.requests[1].duration == 10 * 1000000);
    CHECK(s.horizon == 600 * int64_t(1000000));
    scn_scenario_release(&s);
}

TEST_CASE("named paths are the grid's first axis, each cell with its own steps",
          "[scenario][paths]")
{
    std::string text = replace(base, "  path:\n    - cold_start\n    - enter: ocr_page\n",
                               "  paths:\n    calm: [cold_start, {requests: {every: 1s, count: "
                               "2}}]\n    busy:\n    - cold_start\n    - enter: ocr_page\n");
    scn_scenario s;
    sim_error err;
    sim_error_clear(&err);
    int rc = scn_scenario_parse(text.data(), text.size(), "plan.yaml", &s, &err);
    INFO(err.msg);
    REQUIRE(rc == SIM_OK);
    CHECK(s.npaths == 2);
    CHECK(s.npolicies == 8); // 2 paths x 2 sessions x 2 residencies
    CHECK(s.ncells == 16);
    CHECK(s.naxes == 3);
    CHECK(std::string(s.axes[0]) == "path");
    CHECK(std::string(s.policy_json[0]) ==
          R"({"path": "calm", "sessions": 1, "residency": "preload"})");
    CHECK(std::string(s.policy_json[4]) ==
          R"({"path": "busy", "sessions": 1, "residency": "preload"})");
    CHECK(s.cells[0].workload->nsteps == 2);
    CHECK(s.cells[3].workload == s.cells[0].workload);
    CHECK(s.cells[4].workload->nsteps == 13);
    CHECK(s.cells[4].policy.sessions == 1);
    // what the paths share: the requests, pages, timeout and relaunch
    CHECK(s.cells[4].workload->requests == s.cells[0].workload->requests);
    CHECK(s.cells[0].workload->nrequests == 3);
    CHECK(s.cells[0].workload->has_relaunch == 1);
    scn_scenario_release(&s);
    // errors: both keys, a path with requests before its cold_start, a bad name
    std::string m = error_of(replace(text, "  paths:\n", "  path: [cold_start]\n  paths:\n"));
    CHECK(m.find("workload.paths: one of path or paths, not both") != std::string::npos);
    m = error_of(replace(text, "calm: [cold_start, ", "calm: ["));
    CHECK(m.find("workload.paths.calm[0].requests: requests before the first cold_start") !=
          std::string::npos);
    m = error_of(replace(text, "    calm:", "    Calm:"));
    CHECK(m.find("a name of") != std::string::npos);
    m = error_of("name: p\nhorizon: 1min\ndevices: [android-4g]\ncandidates: [ocr-v3]\n"
                 "workload: {paths: {}}\n");
    CHECK(m.find("workload.paths: expected at least one path") != std::string::npos);
}

TEST_CASE("an unknown key is named, with did you mean", "[scenario][errors]")
{
    std::string m = error_of(replace(base, "replications: 10", "replicatons: 10"));
    CHECK(m == "plan.yaml:3:1: unknown key \"replicatons\" (did you mean \"replications\"?)");
    m = error_of(replace(base, "  queue: 8", "  queu: 8"));
    CHECK(m == "plan.yaml:16:3: policies: unknown key \"queu\" (did you mean \"queue\"?)");
}

TEST_CASE("a wrong type names the expected one", "[scenario][errors]")
{
    std::string m = error_of(replace(base, "sessions: [1, 2]", "sessions: two"));
    CHECK(m == "plan.yaml:17:13: policies.sessions: expected a positive integer, got \"two\"");
    m = error_of(replace(base, "horizon: 10min", "horizon: [10min]"));
    CHECK(m == "plan.yaml:4:1: horizon: expected a value, got a list");
}

TEST_CASE("units: missing, unknown, or a bare number for a duration", "[scenario][errors]")
{
    std::string m = error_of(replace(base, "horizon: 10min", "horizon: 600"));
    CHECK(m == "plan.yaml:4:10: horizon: a duration needs a unit (us, ms, s, min or h), got \"600\"");
    m = error_of(replace(base, "for: 60s", "for: 60parsecs"));
    CHECK(m == "plan.yaml:11:38: workload.path[2].requests.for: expected a duration such as "
              "250ms or 1.5s, got \"60parsecs\"");
    m = error_of(replace(base, "payload: {java: 12MiB}", "payload: {java: 12MiBs}"));
    CHECK(m.find("workload.path[2].requests.payload.java: ") != std::string::npos);
}

TEST_CASE("a negative size or a probability outside [0, 1]", "[scenario][errors]")
{
    std::string m = error_of(replace(base, "payload: {java: 12MiB}", "payload: {java: -12MiB}"));
    CHECK(m.find("plan.yaml:11:90: workload.path[2].requests.payload.java: ") == 0);
    CHECK(m.find("negative") != std::string::npos);
    m = error_of(replace(base, "payload: {java: 12MiB}", "payload: {java: 2TiB}"), SIM_ELIMIT);
    CHECK(m.find("size \"2TiB\" exceeds the limit of 1TiB") != std::string::npos);
    std::string inline_cand = R"(candidates:
  - id: c
    digest: 0a
    runtime: r-1
    delegate: gpu
    parts:
      detector:
        file: 1MiB
        load: {mode: mmap, time: 1ms}
        prepare: {time: 1ms}
        delegate_prepare: {time: 1ms, fail: 1.5}
        inference: {time: 1ms}
      recognizer:
        file: 1MiB
        load: {mode: mmap, time: 1ms}
        prepare: {time: 1ms}
        delegate_prepare: {time: 1ms}
        inference: {time: 1ms}
)";
    m = error_of(replace(base, "candidates: [ocr-v3]\n", inline_cand));
    CHECK(m == "plan.yaml:16:45: candidates[0].parts.detector.delegate_prepare.fail: expected a "
              "probability between 0 and 1 (or 0% and 100%), got \"1.5\"");
}

TEST_CASE("a missing required key is named at its mapping", "[scenario][errors]")
{
    std::string m = error_of(replace(base, "horizon: 10min\n", ""));
    CHECK(m == "plan.yaml:1:1: missing required key \"horizon\"");
    m = error_of(replace(base, "name: plan\n", ""));
    CHECK(m == "plan.yaml:1:1: missing required key \"name\"");
}

TEST_CASE("includes: relative paths, sets, cycles and missing files", "[scenario][errors]")
{
    TempDir dir;
    REQUIRE(run({"/bin/mkdir", dir.file("devs")}).status == 0);
    dir.write("devs/one.yaml", read_file(source_path("scenarios/catalog/devices/android-3g.yaml")));
    dir.write("devs/set.yaml", "- one.yaml\n- android-6g\n");
    dir.write("plan.yaml", replace(base, "devices: [android-4g, catalog/devices/iphone-4g.yaml]",
                                   "devices: [devs/set.yaml]"));
    scn_scenario s;
    sim_error err;
    sim_error_clear(&err);
    REQUIRE(scn_scenario_load(dir.file("plan.yaml").c_str(), &s, &err) == SIM_OK);
    CHECK(s.ndevices == 2);
    CHECK(std::string(s.devices[0].name) == "android-3g");
    CHECK(std::string(s.devices[1].name) == "android-6g");
    scn_scenario_release(&s);

    dir.write("devs/a.yaml", "- b.yaml\n");
    dir.write("devs/b.yaml", "- one.yaml\n- a.yaml\n");
    dir.write("cycle.yaml", replace(base, "devices: [android-4g, catalog/devices/iphone-4g.yaml]",
                                    "devices: [devs/a.yaml]"));
    REQUIRE(scn_scenario_load(dir.file("cycle.yaml").c_str(), &s, &err) == SIM_EINPUT);
    std::string m = err.msg;
    CHECK(m.find("devs/b.yaml:2:3: [1]: include cycle: ") != std::string::npos);
    CHECK(m.find("includes " + dir.path() + "/devs/a.yaml") != std::string::npos);

    dir.write("missing.yaml", replace(base, "devices: [android-4g, catalog/devices/iphone-4g.yaml]",
                                      "devices: [devs/nope.yaml]"));
    REQUIRE(scn_scenario_load(dir.file("missing.yaml").c_str(), &s, &err) == SIM_ENOTFOUND);
    m = err.msg;
    CHECK(m.find("missing.yaml:5:11: devices[0]: include \"devs/nope.yaml\": no such file") !=
          std::string::npos);

    m = error_of(replace(base, "candidates: [ocr-v3]", "candidates: [ocr-v9]"), SIM_ENOTFOUND);
    CHECK(m == "plan.yaml:6:14: candidates[0]: no candidate named 'ocr-v9' in the catalog "
               "(oomsim catalog lists them)");
}

TEST_CASE("a part in needs or prewarm that does not exist", "[scenario][errors]")
{
    std::string m = error_of(replace(base, "needs: [detector, recognizer]", "needs: [detector, recogniser]"));
    CHECK(m == "plan.yaml:11:61: workload.path[2].requests.needs[1]: candidate ocr-v3 has no "
               "part 'recogniser' (its parts: detector, recognizer)");
    m = error_of(replace(base, "prewarm: [detector]", "prewarm: [detectr]"));
    CHECK(m.find("plan.yaml:19:13: policies.prewarm[0]: candidate ocr-v3 has no part 'detectr'") == 0);
}

TEST_CASE("limits name the bound", "[scenario][errors]")
{
    std::string m = error_of(replace(base, "replications: 10", "replications: 100000000"),
                             SIM_ELIMIT);
    CHECK(m.find("plan.yaml:3:15: replications: ") == 0);
    CHECK(m.find("10000000") != std::string::npos);
    m = error_of(replace(base, "horizon: 10min", "horizon: 800h"), SIM_ELIMIT);
    CHECK(m.find("plan.yaml:4:10: horizon: ") == 0);
    m = error_of(replace(base, "payload: {java: 12MiB}", "payload: {java: 2TiB}"), SIM_ELIMIT);
    CHECK(m.find("requests.payload.java: ") != std::string::npos);
    m = error_of(replace(base, "times: 3", "times: 50000"), SIM_ELIMIT);
    CHECK(m.find("more than 100000 steps once repeat is unrolled") != std::string::npos);
    m = error_of(replace(base, "sessions: [1, 2]", "sessions: 5000"), SIM_ELIMIT);
    CHECK(m.find("plan.yaml:17:13: policies.sessions: ") == 0);
}

TEST_CASE("syntax errors, empty files and binary garbage", "[scenario][errors]")
{
    std::string m = error_of(replace(base, "seed: 3", "seed: [3"));
    CHECK(m.find("plan.yaml:") == 0);
    CHECK(m.find("YAML syntax error") != std::string::npos);
    CHECK(error_of("") == "plan.yaml:1:1: empty file");
    CHECK(error_of("  \n\n") == "plan.yaml:1:1: empty file");
    m = error_of(std::string("name: x\n\x01\xff\xfe garbage", 19));
    CHECK(m.find("plan.yaml:2:") == 0);
    CHECK(error_of("- a\n- b\n") == "plan.yaml:1:3: expected a mapping of keys at the top level");
}

TEST_CASE("requests before cold_start, recovery errors and what is not modelled yet", "[scenario][errors]")
{
    std::string m = error_of(replace(base, "    - cold_start\n", ""));
    CHECK(m.find("requests before the first cold_start") != std::string::npos);
    m = error_of(replace(base, "    - background: 30s", "    - update: firmware"));
    CHECK(m == "plan.yaml:12:15: workload.path[3].update: expected os or runtime, got "
               "\"firmware\"");
    m = error_of(replace(base, "    - background: 30s", "    - update: runtime"));
    CHECK(m.find("requests after an update with no cold_start since: the update stopped the "
                 "app") != std::string::npos);
    m = error_of(replace(base, "    - background: 30s", "    - {update: os, background: 30s}"));
    CHECK(m.find("a step is one key: enter, leave, requests, background, update or repeat") !=
          std::string::npos);
    m = error_of(replace(base, "  queue: 8", "  recovery: rebuild"));
    CHECK(m == "plan.yaml:16:13: policies.recovery: expected naive, safe_mode or fallback_lkg, "
               "got \"rebuild\"");
    m = error_of(replace(base, "  queue: 8", "  recovery: {ladder: [release_idle, reject_new]}"));
    CHECK(m.find("plan.yaml:16:37: policies.recovery.ladder[1]: reject_new is out of order") ==
          0);
    m = error_of(replace(base, "  relaunch:", "  trace: t.jsonl\n  relaunch:"));
    CHECK(m.find("workload.trace: a trace-driven workload is not modelled") != std::string::npos);
    m = error_of(replace(base, "  queue: 8", "  on_warning: [reject_new, fallback_lkg]"));
    CHECK(m.find("policies.on_warning[1]: this action on a memory warning is not modelled") !=
          std::string::npos);
}

TEST_CASE("timeouts and retry policies: values, axes and errors", "[scenario][errors]")
{
    std::string with_timeout = replace(base, "  relaunch:", "  timeout: 2s\n  relaunch:");
    auto retry = [&](const std::string &r) { return replace(with_timeout, "  queue: 8", "  retry: " + r); };
    scn_scenario s;
    sim_error err;
    sim_error_clear(&err);
    std::string axis = retry("[{kind: none}, {kind: backoff, base: 500ms, factor: 3, cap: 4s, "
                             "jitter: 0.2, max: 3}]");
    REQUIRE(scn_scenario_parse(axis.data(), axis.size(), "plan.yaml", &s, &err) == SIM_OK);
    CHECK(s.workload.timeout == 2000000);
    CHECK(s.npolicies == 8); // retry x sessions x residency
    const mdl_retry &b = s.cells[s.npolicies / 2].policy.retry;
    CHECK(b.kind == MDL_RETRY_BACKOFF);
    CHECK(b.base == 500000);
    CHECK(b.factor == 3.0);
    CHECK(b.cap == 4000000);
    CHECK(b.jitter == 0.2);
    CHECK(b.max == 3);
    CHECK(std::string(s.policy_json[s.npolicies / 2]).find("\"kind\": \"backoff\"") !=
          std::string::npos);
    scn_scenario_release(&s);

    CHECK(error_of(retry("{kind: backof, base: 1s, max: 2}")) ==
          "plan.yaml:17:17: policies.retry.kind: expected none, fixed, backoff or "
          "on_new_condition, got \"backof\"");
    CHECK(error_of(retry("{kind: backoff, base: 1s}")) ==
          "plan.yaml:17:3: policies.retry: missing required key \"max\"");
    CHECK(error_of(retry("{kind: backoff, base: 1s, factor: 0.5, max: 2}"), SIM_ERANGE) ==
          "plan.yaml:17:44: policies.retry.factor: 0.5 is out of range [1, 1000]");
    CHECK(error_of(retry("{kind: backoff, base: 1s, jitter: 1.5, max: 2}"))
              .find("policies.retry.jitter: expected a probability between 0 and 1") !=
          std::string::npos);
    CHECK(error_of(retry("{kind: fixed, delay: 1s, max: 2, base: 1s}")) ==
          "plan.yaml:17:43: policies.retry: unknown key \"base\"");
    CHECK(error_of(retry("{kind: fixed, delay: 1s, max: 500}"), SIM_ELIMIT)
              .find("policies.retry.max: 500 is out of range [1, 100]") != std::string::npos);
    // a retry follows a timeout: without workload.timeout it could never fire
    CHECK(error_of(replace(base, "  queue: 8", "  retry: {kind: fixed, delay: 1s, max: 2}"))
              .find("policies.retry: a retry policy needs workload.timeout") !=
          std::string::npos);
    std::string none = replace(base, "  queue: 8", "  retry: {kind: none}");
    REQUIRE(scn_scenario_parse(none.data(), none.size(), "plan.yaml", &s, &err) == SIM_OK);
    scn_scenario_release(&s);
    CHECK(error_of(replace(base, "  relaunch:", "  timeout: 0s\n  relaunch:")) ==
          "plan.yaml:14:12: workload.timeout: a timeout must be longer than 0");
    CHECK(error_of(replace(base, "  queue: 8", "  on_warning: [reject_new, reject_new]"))
              .find("policies.on_warning[1]: reject_new is listed twice") != std::string::npos);
    CHECK(error_of(replace(base, "  queue: 8", "  copy_runtime: yes")).find(
              "policies.copy_runtime: expected false or true, got \"yes\"") != std::string::npos);
}

TEST_CASE("parse errors point at the fault and say what would be right", "[scenario][errors]")
{
    auto error_of = [](const std::string &yaml) {
        scn_scenario s{};
        sim_error err;
        sim_error_clear(&err);
        int rc = scn_scenario_parse(yaml.data(), yaml.size(), "p.yaml", &s, &err);
        if (rc == SIM_OK)
            scn_scenario_release(&s);
        return std::string(err.msg);
    };
    const std::string tail = "seed: 1\nreplications: 1\ndevices: [android-4g]\n"
                             "candidates: [classifier-v1]\nworkload: {path: [cold_start]}\n";
    // an unclosed bracket: where it opens, not the end of the file
    CHECK(error_of("name: x\nhorizon: 1s\ndevices: [android-4g\ncandidates: [a]\n")
              .rfind("p.yaml:3:10: YAML syntax error: this '[' is never closed", 0) == 0);
    // a duplicate key: by its name
    CHECK(error_of("name: x\nname: y\n").find("duplicate key 'name'") != std::string::npos);
    // a number past its bounds: out of range, with the range
    CHECK(error_of("name: x\nhorizon: 1s\nseed: 1\nreplications: 999999999\n")
              .find("out of range [") != std::string::npos);
    // a unit written out: the unit it means
    for (const char *h : {"10 minutes", "10mins", "10 min."}) {
        std::string m = error_of(std::string("name: x\nhorizon: ") + h + "\n" + tail);
        INFO(h << ": " << m);
        if (std::string(h) != "10 min.")
            CHECK(m.find("did you mean \"10min\"?") != std::string::npos);
        CHECK(m.rfind("p.yaml:2:10: horizon: ", 0) == 0);
    }
    CHECK(error_of("name: x\nhorizon: 2 hours\n" + tail).find("did you mean \"2h\"?") !=
          std::string::npos);
    CHECK(error_of("name: x\nhorizon: 1s\napp: {baseline: {native: 40 megabytes}}\n" + tail)
              .find("did you mean \"40MiB\"?") != std::string::npos);
}
