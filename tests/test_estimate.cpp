// test_estimate.cpp - the events a replication can need, estimated before
// it runs (models/estimate.c), and the loader refusing a scenario past
// MDL_EVENTS_MAX with the estimate in its message.
#include "models/models.h"
#include "scenarios/scenarios.h"
#include "shim/shim.hpp"
#include "shim/world.hpp"

#include <catch2/catch.hpp>

#include <cstdio>

namespace {

// Every scenario of the shipped catalog, loaded.
std::vector<std::string> catalog_scenarios()
{
    std::vector<std::string> paths;
    for (unsigned i = 0; i < scn_catalog_count(); i++) {
        scn_catalog_item it;
        scn_catalog_get(i, &it);
        if (it.kind == SCN_KIND_SCENARIO)
            paths.push_back(it.path);
    }
    return paths;
}

std::string replace(std::string text, const std::string &from, const std::string &to)
{
    size_t at = text.find(from);
    REQUIRE(at != std::string::npos);
    return text.replace(at, from.size(), to);
}

const std::string teach = std::string(OOMSIM_SOURCE_DIR) + "/scenarios/catalog/teach/";

// The loader's message refusing the scenario at path for its limit.
std::string refusal(const std::string &path)
{
    scn_scenario s;
    sim_error err;
    sim_error_clear(&err);
    REQUIRE(scn_scenario_load(path.c_str(), &s, &err) == SIM_ELIMIT);
    return err.msg;
}

} // namespace

TEST_CASE("the estimate bounds the events every shipped scenario's cells fire", "[estimate]")
{
    auto paths = catalog_scenarios();
    REQUIRE(paths.size() >= 10);
    double loosest = 0;
    for (const auto &path : paths) {
        scn_scenario s;
        sim_error err;
        sim_error_clear(&err);
        INFO(path << ": " << err.msg);
        REQUIRE(scn_scenario_load_catalog(path.c_str(), &s, &err) == SIM_OK);
        for (unsigned i = 0; i < s.ncells; i++) {
            mdl_estimate e;
            mdl_events_estimate(&s.cells[i], &e);
            // the page model's events are bounded by the horizon alone: they
            // are checked on their own, and the rest against the rest
            uint64_t most = 0, pages = 0;
            for (uint64_t rep = 0; rep < 5; rep++) {
                mdl_rep r = shim::run_replication(s.cells[i], rep, nullptr, false);
                most = std::max<uint64_t>(most, r.events - r.page_events);
                pages = std::max<uint64_t>(pages, r.page_events);
            }
            CHECK(static_cast<double>(pages) <= e.pages);
            e.total -= e.pages;
            INFO("cell " << i << ": estimate " << e.total << " (" << e.arrivals << " arrivals x "
                         << e.per_request << ", " << e.launches << " launches x " << e.per_launch
                         << ", " << e.samples << " samples, " << e.pressure
                         << " spikes), fired at most " << most);
            REQUIRE(most > 0);
            CHECK(static_cast<double>(most) <= e.total);
            // an upper end, not a wild one: within two orders of magnitude (or
            // a thousand events, for a replication that ends early)
            CHECK(e.total <= 100.0 * static_cast<double>(most) + 1000);
            loosest = std::max(loosest, e.total / static_cast<double>(most));
        }
        scn_scenario_release(&s);
    }
    WARN("the estimate is at most " << loosest << " times the events fired");
}

TEST_CASE("a scenario past the events limit is refused up front, with the estimate",
          "[estimate]")
{
    shim::TempDir dir;
    std::string text = shim::read_file(teach + "timeout-retry-storm.yaml");
    // 1000 requests a second for 29 days: about 2.5e9 arrivals
    std::string big = replace(replace(text, "horizon: 5min", "horizon: 720h"),
                              "{rate: \"0.2/s\", for: 4min", "{rate: \"1000/s\", for: 696h");
    std::string path = dir.write("big.yaml", big);
    std::string msg = refusal(path);
    INFO(msg);
    CHECK(msg.rfind(path + ":", 0) == 0);
    CHECK(msg.find(": workload: a replication would need about 1.1e+11 events") !=
          std::string::npos);
    CHECK(msg.find("2.51e+09 request arrivals") != std::string::npos);
    CHECK(msg.find("more than the limit of 100000000 per replication") != std::string::npos);

    // the CLI refuses it the same way: status 1, nothing run
    auto r = shim::run({OOMSIM_BIN, "run", path, "-r", "1"});
    CHECK(r.status == 1);
    CHECK(r.err.find("more than the limit of 100000000") != std::string::npos);
    CHECK(r.out.empty());

    // 10 requests a second for 2 days: 1.7e6 arrivals x 44 events, within
    std::string small = replace(replace(text, "horizon: 5min", "horizon: 72h"),
                                "{rate: \"0.2/s\", for: 4min", "{rate: \"10/s\", for: 48h");
    path = dir.write("small.yaml", small);
    scn_scenario s;
    sim_error err;
    sim_error_clear(&err);
    REQUIRE(scn_scenario_load(path.c_str(), &s, &err) == SIM_OK);
    mdl_estimate e;
    mdl_events_estimate(&s.cells[0], &e);
    CHECK(e.arrivals == Approx(10.0 * 2 * 86400).epsilon(1e-9));
    CHECK(e.per_request == Approx(4 * (2 + 9)).epsilon(1e-9)); // 1 + 3 retries, one part
    CHECK(e.total < MDL_EVENTS_MAX);
    scn_scenario_release(&s);
}

TEST_CASE("the system's memory samples count towards the events limit", "[estimate]")
{
    shim::TempDir dir;
    // an Android device sampled every millisecond for 30 days: 2.6e9 samples
    std::string text = shim::read_file(teach + "timeout-retry-storm.yaml");
    std::string device = shim::read_file(std::string(OOMSIM_SOURCE_DIR) +
                                         "/scenarios/catalog/devices/android-3g.yaml");
    dir.write("sampled.yaml", device + "\npss_sample: 1ms\n");
    // the teaching scenario's own device list gives way to the sampled device
    size_t from = text.find("\ndevices:\n"), to = text.find("\ncandidates:");
    REQUIRE(from != std::string::npos);
    REQUIRE(to > from);
    text.replace(from + 1, to - from - 1, "devices: [sampled.yaml]");
    std::string big = replace(text, "horizon: 5min", "horizon: 720h");
    std::string msg = refusal(dir.write("sampled-scenario.yaml", big));
    INFO(msg);
    CHECK(msg.find("2.59e+09 memory samples") != std::string::npos);
}
