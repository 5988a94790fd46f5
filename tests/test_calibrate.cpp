// test_calibrate.cpp - `oomsim calibrate` (models/knobs.c, scenarios/calibrate.c,
// results/calibrate.c, cli/calibrate.c): the device values a calibrate block
// may name, read and set through their distributions' constructors; the
// block's refusals; and fits against field counts drawn from a known value.
#include "cli/cli.h"
#include "results/calibrate.h"
#include "scenarios/scenarios.h"
#include "shim/shim.hpp"

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdlib>
#include <random>
#include <string>
#include <utility>

using namespace shim;

namespace {

const double MiB = 1048576.0;

// The phone: the catalog's android-go-2g with its pressure spikes' mean
// interval set (an llm-1b session dies of them in the foreground).
std::string go_device(const std::string &name, int pressure_s)
{
    std::string t = read_file(source_path("scenarios/catalog/devices/android-go-2g.yaml"));
    auto at = t.find("pressure: {dist: exponential, mean: 90s}");
    REQUIRE(at != std::string::npos);
    t.replace(at, 40, "pressure: {dist: exponential, mean: " + std::to_string(pressure_s) + "s}");
    at = t.find("name: android-go-2g");
    REQUIRE(at != std::string::npos);
    t.replace(at, 19, "name: " + name);
    return t;
}

// The calibrate block of one unknown: the spike interval of device "go".
const char *const fit_spikes = "calibrate:\n  fit:\n    - {key: devices.go.pressure.mean, min: "
                               "10s, max: 900s}\n  against: field\n";

std::string plan(const std::string &device_file, const std::string &device, int reps,
                 unsigned seed, const std::string &field, const std::string &calibrate)
{
    return "name: cal\nseed: " + std::to_string(seed) + "\nreplications: " +
           std::to_string(reps) + "\nhorizon: 10min\ndevices: [" + device_file +
           "]\ncandidates: [llm-1b]\nworkload:\n  path:\n    - cold_start\n"
           "    - requests: {rate: \"0.2/s\", for: 1min}\n" +
           (field.empty() ? "" : "field:\n  sessions_per_day: 2\n  devices:\n    - {device: " +
                                     device + ", " + field + "}\n") +
           calibrate;
}

struct Fitted {
    scn_scenario s{};
    res_plan p{};
    const char **labels = nullptr;
    res_calibration c{};
    int rc = -1;
    // max_reps: the replications' cap (0: the fit's default, 16 times the plan's)
    explicit Fitted(const std::string &path, uint64_t max_reps = 0)
    {
        sim_error err;
        sim_error_clear(&err);
        int lrc = cli_load_scenario(path.c_str(), &s, &err);
        INFO(err.msg);
        REQUIRE(lrc == SIM_OK);
        REQUIRE(s.calibrate == 1);
        REQUIRE(cli_plan_of(&s, &p, &labels, &err) == SIM_OK);
        res_cal_ctl ctl{2, 400, max_reps, nullptr, nullptr, nullptr, nullptr};
        rc = res_calibrate(&p, s.fit, s.nfit, &ctl, &c, &err);
        INFO(err.msg);
        REQUIRE(rc == SIM_OK);
    }
    ~Fitted()
    {
        std::free(labels);
        scn_scenario_release(&s);
    }
    Fitted(const Fitted &) = delete;
    Fitted &operator=(const Fitted &) = delete;
};

// The first cell of the plan at `path` run (2 threads): its replications
// with a visible memory death [0] and with a background one [1].
std::pair<double, double> death_shares(const std::string &path)
{
    scn_scenario s{};
    sim_error err;
    sim_error_clear(&err);
    REQUIRE(cli_load_scenario(path.c_str(), &s, &err) == SIM_OK);
    res_plan rp{};
    const char **labels = nullptr;
    REQUIRE(cli_plan_of(&s, &rp, &labels, &err) == SIM_OK);
    res_result r;
    REQUIRE(res_run(&rp, 2, nullptr, nullptr, &r, &err) == SIM_OK);
    double n = double(rp.replications);
    std::pair<double, double> shares{double(r.cells[0].with_visible_death) / n,
                                     double(r.cells[0].with_background_death) / n};
    res_result_free(&r);
    std::free(labels);
    scn_scenario_release(&s);
    return shares;
}

// The share of sessions with a visible memory death at the true value,
// from a run of many replications with another seed.
double true_session_rate(const TempDir &t, int pressure_s)
{
    t.write("truth.yaml", go_device("truth", pressure_s));
    return death_shares(t.write("truth-plan.yaml", plan("truth.yaml", "truth", 3200, 99, "", "")))
        .first;
}

} // namespace

TEST_CASE("calibrate knobs: read and set through the distributions' constructors",
          "[calibrate]")
{
    mdl_device d{};
    sim_error err;
    sim_error_clear(&err);
    std::string y = read_file(source_path("scenarios/catalog/devices/android-4g.yaml"));
    REQUIRE(scn_device_parse(y.data(), y.size(), "android-4g.yaml", &d, &err) == SIM_OK);
    int max = mdl_knob_find("successor.size.max"), mean = mdl_knob_find("pressure.mean");
    int median = mdl_knob_find("successor.size.median"), sys = mdl_knob_find("system");
    REQUIRE(max >= 0);
    REQUIRE(mean >= 0);
    REQUIRE(mdl_knob_find("successor.size.maximum") == -1);
    double v = 0;
    // successor: {size: {dist: uniform, min: 150MiB, max: 500MiB}}
    REQUIRE(mdl_knob_get(&d, unsigned(max), &v, &err) == SIM_OK);
    CHECK(v == 500 * MiB);
    REQUIRE(mdl_knob_set(&d, unsigned(max), 800 * MiB, &err) == SIM_OK);
    CHECK(d.successor.kind == MDL_DIST_UNIFORM);
    CHECK(d.successor.p1 == 150 * MiB); // min kept
    CHECK(d.successor.p2 == 800 * MiB);
    // below its min: the constructor's refusal, the device unchanged
    CHECK(mdl_knob_set(&d, unsigned(max), 100 * MiB, &err) == SIM_EINPUT);
    CHECK(d.successor.p2 == 800 * MiB);
    // a uniform has no median
    CHECK(mdl_knob_get(&d, unsigned(median), &v, &err) == SIM_EINPUT);
    CHECK(std::string(err.msg).find("a uniform (min, max)") != std::string::npos);
    // pressure: {dist: exponential, mean: 90s}, in microseconds
    REQUIRE(mdl_knob_get(&d, unsigned(mean), &v, &err) == SIM_OK);
    CHECK(v == 90e6);
    REQUIRE(mdl_knob_set(&d, unsigned(mean), 200e6, &err) == SIM_OK);
    CHECK(d.pressure.p1 == 200e6);
    // a system share past the RAM leaves no room
    CHECK(mdl_knob_set(&d, unsigned(sys), double(d.ram), &err) == SIM_EINPUT);
    scn_device_release(&d);
}

TEST_CASE("calibrate block: what the loader refuses, with the place", "[calibrate]")
{
    TempDir t;
    const std::string fit = "calibrate:\n  fit:\n"
                            "    - {key: devices.android-go-2g.pressure.mean, min: 10s, max: "
                            "900s}\n  against: field\n";
    const std::string field = "lmk_rate: 30%, users: 2000";
    struct Case {
        std::string text, message;
    } cases[] = {
        {plan("android-go-2g", "android-go-2g", 50, 3, "", fit),
         "calibrate fits against the plan's field block, and the plan has none"},
        {plan("android-go-2g", "android-3g", 50, 3, field, fit),
         "the field block has no entry for android-go-2g"},
        {plan("android-go-2g", "android-go-2g", 50, 3, field,
              "calibrate:\n  fit:\n    - {key: devices.android-go-2g.presure.mean, min: 10s, "
              "max: 900s}\n"),
         ":17:13: calibrate.fit[0].key: \"presure.mean\" is no value calibrate can set (did you "
         "mean \"pressure.mean\"?)"},
        {plan("android-go-2g", "android-go-2g", 50, 3, field,
              "calibrate:\n  fit:\n    - {key: devices.android-go.pressure.mean, min: 10s, "
              "max: 900s}\n"),
         "no device \"android-go\" in the plan"},
        {plan("android-go-2g", "android-go-2g", 50, 3, field,
              "calibrate:\n  fit:\n    - {key: devices.android-go-2g.pressure.median, min: 10s, "
              "max: 900s}\n"),
         "the device's pressure is an exponential (mean): `median` is not one of its parameters"},
        {plan("android-go-2g", "android-go-2g", 50, 3, field,
              "calibrate:\n  fit:\n    - {key: devices.android-go-2g.pressure.mean, min: 900s, "
              "max: 10s}\n"),
         "max must be above min"},
        {plan("android-go-2g", "android-go-2g", 50, 3, field,
              "calibrate:\n  fit:\n    - {key: devices.*.zram.ratio, min: 1.5, max: 20}\n"),
         "leave the value's own range on android-go-2g, [1, 10]"},
        {plan("android-go-2g", "android-go-2g", 50, 3, field,
              "calibrate:\n  fit:\n" + std::string(
                  "    - {key: devices.*.system, min: 1MiB, max: 2MiB}\n"
                  "    - {key: devices.*.cached_app_size, min: 1MiB, max: 2MiB}\n"
                  "    - {key: devices.*.warning_at, min: 1MiB, max: 2MiB}\n"
                  "    - {key: devices.*.page_cache.size, min: 1MiB, max: 2MiB}\n"
                  "    - {key: devices.*.page_cache.working_set, min: 1MiB, max: 2MiB}\n"
                  "    - {key: devices.*.reclaim_rate, min: 1MiB/s, max: 2MiB/s}\n"
                  "    - {key: devices.*.storage_read, min: 1MiB/s, max: 2MiB/s}\n")),
         "more than 6 unknowns to fit"},
    };
    for (const Case &c : cases) {
        std::string p = t.write("plan.yaml", c.text);
        RunResult r = oomsim({"calibrate", p});
        INFO(c.text);
        INFO(r.err);
        CHECK(r.status == 1);
        CHECK(r.err.find(c.message) != std::string::npos);
        CHECK(r.out.empty());
    }
    // bounds where few values can be set (the successor's uniform min past
    // its max of 300 MiB above about 190 MiB): refused at the fit, not
    // fitted on three points
    std::string few = t.write(
        "few.yaml", plan("android-go-2g", "android-go-2g", 20, 3, field,
                         "calibrate:\n  fit:\n    - {key: devices.android-go-2g.successor.size.min, "
                         "min: 95MiB, max: 2GiB}\n"));
    RunResult rf = oomsim({"calibrate", few});
    CHECK(rf.status == 1);
    CHECK(rf.err.find("only 3 of the design's 9 points can be set on the devices") !=
          std::string::npos);
    // a plan without the block: nothing to fit
    std::string p = t.write("plain.yaml", plan("android-go-2g", "android-go-2g", 50, 3, field, ""));
    RunResult r = oomsim({"calibrate", p});
    CHECK(r.status == 1);
    CHECK(r.err.find("the plan has no calibrate block") != std::string::npos);
}

TEST_CASE("calibrate recovers a known value within its interval, which narrows as the "
          "users grow", "[calibrate]")
{
    TempDir t;
    // the truth: spikes every 120 s on average; a session's visible-death
    // rate from 3200 replications of another seed.  The session's own
    // complete stalls kill it in about one session in seven whatever the
    // spikes (13.5 % at a 900 s interval, measured), so the truth sits where
    // the spikes still move the rate (about 44 % at 90 s, 25 % at 200 s),
    // and the fit starts away from it, at 300 s
    const int truth = 120;
    double p = true_session_rate(t, truth);
    REQUIRE(p > 0.05);
    REQUIRE(p < 0.5);
    double q = 1 - std::pow(1 - p, 2.0); // 2 sessions a day
    t.write("go.yaml", go_device("go", 300));
    double width[2];
    const uint64_t users[2] = {300, 3000};
    std::mt19937_64 rng(5);
    for (int k = 0; k < 2; k++) {
        // the fleet's users with a death, drawn binomially
        std::binomial_distribution<uint64_t> draw(users[k], q);
        uint64_t dead = draw(rng);
        char rate[64];
        std::snprintf(rate, sizeof rate, "lmk_rate: %.6f%%, users: %llu",
                      100.0 * double(dead) / double(users[k]), (unsigned long long)users[k]);
        std::string path = t.write(
            "fit.yaml", plan("go.yaml", "go", 40, 3, rate, fit_spikes));
        // replications up to 160: intervals that carry the simulation's noise are
        // wide, but must still hold the truth and narrow as the users grow
        Fitted f(path, 160);
        const res_cal_unknown &u = f.c.u[0];
        INFO("users " << users[k] << ", dead " << dead << ": fitted " << u.fitted / 1e6
                      << " s in [" << u.lo / 1e6 << ", " << u.hi / 1e6 << "]");
        CHECK(f.c.converged == 1);
        CHECK(u.identifiable == 1);
        CHECK(u.start == 300e6);
        CHECK(u.lo <= truth * 1e6);
        CHECK(u.hi >= truth * 1e6);
        CHECK(u.lo < u.fitted);
        CHECK(u.fitted < u.hi);
        // the fitted value reproduces the observed rate within the fit's noise
        CHECK(f.c.e[0].after_ci.lo <= f.c.e[0].observed_ci.hi);
        CHECK(f.c.e[0].after_ci.hi >= f.c.e[0].observed_ci.lo);
        CHECK(f.c.loglik > f.c.loglik_start);
        width[k] = u.hi - u.lo;
    }
    CHECK(width[1] < width[0]);
}

// Users with a death among `users`, drawn binomially at the per-day rate
// of per-session rate p (2 sessions a day), as a field entry's rate.
static std::string drawn(std::mt19937_64 &rng, double p, uint64_t users)
{
    std::binomial_distribution<uint64_t> draw(users, 1 - std::pow(1 - p, 2.0));
    char rate[64];
    std::snprintf(rate, sizeof rate, "lmk_rate: %.6f%%, users: %llu",
                  100.0 * double(draw(rng)) / double(users), (unsigned long long)users);
    return rate;
}

TEST_CASE("calibrate recovers two known values, each within its interval, which narrow as the "
          "users grow", "[calibrate]")
{
    TempDir t;
    // the truth: spikes every 200 s on one phone and every 120 s on the
    // other, each phone's rate from 3200 replications of another seed
    const int truth[2] = {200, 120};
    const double p[2] = {true_session_rate(t, truth[0]), true_session_rate(t, truth[1])};
    REQUIRE(p[1] > p[0]);
    t.write("a.yaml", go_device("go-a", 90));
    t.write("b.yaml", go_device("go-b", 90));
    double width[2][2];
    const uint64_t users[2] = {300, 3000};
    std::mt19937_64 rng(7);
    for (int k = 0; k < 2; k++) {
        std::string path = t.write(
            "fit.yaml",
            "name: two\nseed: 3\nreplications: 40\nhorizon: 10min\ndevices: [a.yaml, b.yaml]\n"
            "candidates: [llm-1b]\nworkload:\n  path:\n    - cold_start\n"
            "    - requests: {rate: \"0.2/s\", for: 1min}\n"
            "field:\n  sessions_per_day: 2\n  devices:\n"
            "    - {device: go-a, " + drawn(rng, p[0], users[k]) + "}\n"
            "    - {device: go-b, " + drawn(rng, p[1], users[k]) + "}\n"
            "calibrate:\n  fit:\n"
            "    - {key: devices.go-a.pressure.mean, min: 30s, max: 900s}\n"
            "    - {key: devices.go-b.pressure.mean, min: 30s, max: 900s}\n");
        Fitted f(path, 160); // as in the test of one value
        CHECK(f.c.converged == 1);
        CHECK(f.c.loglik > f.c.loglik_start);
        for (int j = 0; j < 2; j++) {
            const res_cal_unknown &u = f.c.u[j];
            INFO("users " << users[k] << ", unknown " << j << ": fitted " << u.fitted / 1e6
                          << " s in [" << u.lo / 1e6 << ", " << u.hi / 1e6 << "]");
            CHECK(u.identifiable == 1);
            CHECK(u.lo <= truth[j] * 1e6);
            CHECK(u.hi >= truth[j] * 1e6);
            CHECK(u.lo < u.fitted);
            CHECK(u.fitted < u.hi);
            width[k][j] = u.hi - u.lo;
        }
    }
    CHECK(width[1][0] < width[0][0]);
    CHECK(width[1][1] < width[0][1]);
}

// A 2 GB phone whose lmk spares a foreground app holding 600 MiB through
// another app's 400 MiB spike but not a background one (the level for adj
// 700 is 200 MiB), and a session that leaves the app in the background for
// 2 min: its only memory deaths are in the background, one whenever a
// spike comes then, so the background rate alone tells the spikes' mean
// interval.  `field`: the entry's rates; `reps`, `seed` the plan's.
std::string background_plan(int pressure_s, const std::string &field, int reps, unsigned seed)
{
    return "name: bg\nseed: " + std::to_string(seed) + "\nreplications: " +
           std::to_string(reps) + "\nhorizon: 6min\ndevices:\n  - name: busy\n    os: android\n"
           "    ram: 2GiB\n    system: 900MiB\n    cached_apps: 0\n    cached_app_size: 80MiB\n"
           "    pressure: {dist: exponential, mean: " + std::to_string(pressure_s) + "s}\n"
           "    pressure_size: 400MiB\n"
           "    kill: {rule: lmk, minfree: [{adj: 0, free: 72MiB}, {adj: 700, free: 200MiB}]}\n"
           "    counts: [native, java, gpu]\n    anr_timeout: 5s\n    pss_sample: 20s\n"
           "candidates:\n  - id: resident-600\n    digest: 8b91\n    runtime: litert-1.4.0\n"
           "    parts:\n      model:\n        file: 100MiB\n"
           "        load: {mode: mmap, time: 300ms}\n"
           "        prepare: {time: 700ms, resident: {native: 600MiB}}\n"
           "        inference: {time: 200ms}\n"
           "workload:\n  path:\n    - cold_start\n    - {requests: {every: 3s, for: 40s}}\n"
           "    - background: 2min\n    - {requests: {every: 3s, for: 1min}}\n" +
           (field.empty() ? ""
                          : "field:\n  sessions_per_day: 1\n  devices:\n    - {device: busy, " +
                                field + "}\ncalibrate:\n  fit:\n    - {key: "
                                "devices.busy.pressure.mean, min: 20s, max: 1200s}\n");
}

TEST_CASE("calibrate fits a background rate as a second binomial: it alone recovers a known "
          "value the visible rate cannot tell",
          "[calibrate]")
{
    TempDir t;
    // the truth: spikes every 300 s on average; the share of sessions with
    // a background memory death from 3200 replications of another seed
    const int truth = 300;
    std::pair<double, double> shares =
        death_shares(t.write("truth.yaml", background_plan(truth, "", 3200, 99)));
    CHECK(shares.first == 0);
    double p = shares.second;
    REQUIRE(p > 0.2);
    REQUIRE(p < 0.5);
    std::mt19937_64 rng(11);
    std::binomial_distribution<uint64_t> draw(3000, p); // one session a day
    char rates[128];
    std::snprintf(rates, sizeof rates, "lmk_rate: 0%%, users: 3000, background_rate: %.6f%%",
                  100.0 * double(draw(rng)) / 3000.0);
    std::string path = t.write("fit.yaml", background_plan(200, rates, 40, 3));
    Fitted f(path, 160);
    const res_cal_unknown &u = f.c.u[0];
    INFO("fitted " << u.fitted / 1e6 << " s in [" << u.lo / 1e6 << ", " << u.hi / 1e6 << "]");
    CHECK(f.c.converged == 1);
    CHECK(u.identifiable == 1);
    CHECK(u.lo <= truth * 1e6);
    CHECK(u.hi >= truth * 1e6);
    CHECK(u.lo < u.fitted);
    CHECK(u.fitted < u.hi);
    // two rates of the one entry: the visible one first, then the background one
    REQUIRE(f.c.nentries == 2);
    CHECK(f.c.e[0].background == 0);
    CHECK(f.c.e[1].background == 1);
    CHECK(f.c.e[1].after_ci.lo <= f.c.e[1].observed_ci.hi);
    CHECK(f.c.e[1].after_ci.hi >= f.c.e[1].observed_ci.lo);
    CHECK(f.c.df == 1);
    RunResult cli = oomsim({"calibrate", path, "--max-replications", "160", "--holdout", "-o",
                            t.file("o")});
    CHECK(cli.status == 0);
    CHECK(cli.out.find("against 1 field entry (2 rates: 1 background)") != std::string::npos);
    CHECK(cli.out.find("busy (background) ") != std::string::npos);
    std::string doc = read_file(t.file("o/calibration.json"));
    CHECK(doc.find("\"rate\": \"background\"") != std::string::npos);
    // held out, the one entry leaves nothing to fit on: both its rates say so,
    // with no prediction
    size_t held = doc.find("\"holdout\"");
    REQUIRE(held != std::string::npos);
    std::string rows = doc.substr(held);
    size_t unfitted = 0;
    for (size_t at = 0; (at = rows.find("\"fitted\": false", at)) != std::string::npos; at++)
        unfitted++;
    CHECK(unfitted == 2);
    CHECK(rows.find("\"predicted\"") == std::string::npos);
    std::string page = read_file(t.file("o/report.html"));
    CHECK(page.find("<td class=\"n\">-</td><td class=\"n\"></td><td>nothing left to fit on "
                    "without it</td>") != std::string::npos);

    // without the background rate the visible one (none die) tells nothing
    std::string flat = t.write("flat.yaml", background_plan(200, "lmk_rate: 0%, users: 3000",
                                                            40, 3));
    Fitted g(flat, 160);
    CHECK(g.c.u[0].identifiable == 0);
    CHECK(g.c.nentries == 1);
}

TEST_CASE("calibrate: a value no rate depends on is not identifiable, and stays at its start",
          "[calibrate]")
{
    TempDir t;
    t.write("go.yaml", go_device("go", 200));
    // the session never leaves the foreground: the app users switch to
    // never matters
    std::string path = t.write(
        "fit.yaml", plan("go.yaml", "go", 60, 3, "lmk_rate: 30%, users: 2000",
                         "calibrate:\n  fit:\n    - {key: devices.go.successor.size.max, min: "
                         "300MiB, max: 1500MiB}\n  against: field\n"));
    Fitted f(path);
    CHECK(f.c.u[0].identifiable == 0);
    CHECK(f.c.u[0].fitted == f.c.u[0].start);
    CHECK(f.c.u[0].start == 900 * MiB); // the catalog's uniform max
    RunResult r = oomsim({"calibrate", path, "-o", t.file("out")});
    CHECK(r.status == 0);
    CHECK(r.out.find("devices.go.successor.size.max") != std::string::npos);
    CHECK(r.out.find("not identifiable from these rates (left at its start)") !=
          std::string::npos);
    // nothing fitted: no profile written, the page says why
    CHECK(exists(t.file("out/report.html")));
    CHECK(!exists(t.file("out/devices/go.yaml")));
    CHECK(read_file(t.file("out/report.html")).find("not identifiable from these rates") !=
          std::string::npos);
}

TEST_CASE("calibrate: two values one rate cannot tell apart are named together",
          "[calibrate]")
{
    TempDir t;
    t.write("go.yaml", go_device("go", 200));
    // more frequent spikes and larger spikes both kill: one field entry
    // fixes a combination of the two
    std::string path = t.write(
        "fit.yaml",
        plan("go.yaml", "go", 60, 3, "lmk_rate: 30%, users: 2000",
             "calibrate:\n  fit:\n    - {key: devices.go.pressure.mean, min: 60s, max: 600s}\n"
             "    - {key: devices.go.pressure_size.max, min: 120MiB, max: 400MiB}\n"
             "  against: field\n"));
    // the ridge shows at the first stage's replications: no growth needed
    RunResult r = oomsim({"calibrate", path, "-j", "2", "--max-replications", "60"});
    INFO(r.out << r.err);
    CHECK(r.status == 0);
    CHECK(r.out.find("devices.go.pressure.mean and devices.go.pressure_size.max trade off") !=
          std::string::npos);
}

// What `calibrate -o` wrote for the two phones of the held-out plan (doc:
// its calibration.json): the page, the plot, and each phone's profile,
// which loads, carries the fit, and runs.
static void check_written(const TempDir &t, const std::string &doc)
{
    // the page: the three tables and the plot inline; the plot as a file
    std::string page = read_file(t.file("out/report.html"));
    CHECK(page.find("<h1>ho, calibrated</h1>") != std::string::npos);
    CHECK(page.find("id=\"unknowns-table\"") != std::string::npos);
    CHECK(page.find("id=\"entries-table\"") != std::string::npos);
    CHECK(page.find("id=\"holdout-table\"") != std::string::npos);
    CHECK(page.find("<figure id=\"calibration.svg\">\n<svg") != std::string::npos);
    CHECK(read_file(t.file("out/calibration.svg")).find("<svg") != std::string::npos);
    // each phone's profile: the fitted value in place, said fitted, dated
    auto fitted_at = doc.find("\"fitted\": ");
    REQUIRE(fitted_at != std::string::npos);
    double fitted = std::strtod(doc.c_str() + fitted_at + 10, nullptr);
    for (const char *name : {"go-a", "go-b"}) {
        std::string file = t.file(std::string("out/devices/") + name + ".yaml");
        std::string text = read_file(file);
        INFO(text);
        CHECK(text.rfind(std::string("# ") + name + ", calibrated: oomsim calibrate on "
                         "1970-01-02 fitted", 0) == 0);
        CHECK(text.find("# pressure.mean: ") != std::string::npos);
        CHECK(text.find("  pressure: \"fitted: pressure.mean ") != std::string::npos);
        mdl_device d{};
        sim_error err;
        sim_error_clear(&err);
        REQUIRE(scn_device_load(file.c_str(), &d, &err) == SIM_OK);
        CHECK(std::fabs(d.pressure.p1 - fitted) <= 500.0); // written to the millisecond
        unsigned nv = 0;
        const char *const *values = mdl_device_values(d.os, &nv);
        int is_fitted = 0;
        for (unsigned k = 0; k < nv; k++)
            if (std::string(values[k]) == "pressure")
                CHECK(mdl_device_source(&d, k, &is_fitted) != nullptr);
        CHECK(is_fitted == 1);
        scn_device_release(&d);
    }
    // the next plan on the same phones: it loads, runs, and says which value was fitted
    std::string next = t.write(
        "next.yaml", "name: next\nseed: 5\nreplications: 20\nhorizon: 10min\n"
                     "devices: [out/devices/go-a.yaml, out/devices/go-b.yaml]\n"
                     "candidates: [llm-1b]\nworkload:\n  path:\n    - cold_start\n"
                     "    - requests: {rate: \"0.2/s\", for: 1min}\n");
    RunResult n = oomsim({"run", next, "-o", t.file("next")});
    INFO(n.out << n.err);
    CHECK(n.status == 0);
    CHECK(n.out.find("go-a: 2 of its 21 values measured or fitted (pressure fitted: "
                     "pressure.mean ") != std::string::npos);
}

TEST_CASE("calibrate --holdout refits without each entry and predicts it, and -o writes the "
          "document, the page, the plot and profiles that load and run", "[calibrate]")
{
    TempDir t;
    // two phones of one class, one spike interval they share
    std::string a = go_device("go-a", 90), b = go_device("go-b", 90);
    t.write("a.yaml", a);
    t.write("b.yaml", b);
    std::string path = t.write(
        "fit.yaml",
        "name: ho\nseed: 3\nreplications: 40\nhorizon: 10min\ndevices: [a.yaml, b.yaml]\n"
        "candidates: [llm-1b]\nworkload:\n  path:\n    - cold_start\n"
        "    - requests: {rate: \"0.2/s\", for: 1min}\n"
        "field:\n  sessions_per_day: 2\n  devices:\n"
        "    - {device: go-a, lmk_rate: 30%, users: 2000}\n"
        "    - {device: go-b, lmk_rate: 30%, users: 2000}\n"
        "calibrate:\n  fit:\n    - {key: devices.*.pressure.mean, min: 10s, max: 900s}\n");
    setenv("SOURCE_DATE_EPOCH", "86400", 1); // the profiles' date: 1970-01-02
    RunResult r = oomsim({"calibrate", path, "--holdout", "--max-replications", "40", "-o",
                          t.file("out")});
    unsetenv("SOURCE_DATE_EPOCH");
    INFO(r.out << r.err);
    REQUIRE(r.status == 0);
    // the document: the unknown, the two entries, the two held-out rows
    std::string doc = read_file(t.file("out/calibration.json"));
    CHECK(doc.find("\"key\": \"devices.*.pressure.mean\"") != std::string::npos);
    CHECK(doc.find("\"unit\": \"us\"") != std::string::npos);
    CHECK(doc.find("\"device\": \"go-b\"") != std::string::npos);
    CHECK(doc.find("\"holdout\": [") != std::string::npos);
    CHECK(doc.find("\"inside\": true") != std::string::npos);
    CHECK(doc.find("\"converged\": true") != std::string::npos);
    auto at = r.out.find("held out: each entry refitted without it, then predicted");
    REQUIRE(at != std::string::npos);
    std::string table = r.out.substr(at);
    // each phone predicted from the other's fit: the same rate, inside its
    // interval (the two are the same phone)
    CHECK(table.find("\ngo-a ") != std::string::npos);
    CHECK(table.find("\ngo-b ") != std::string::npos);
    size_t yes = 0;
    for (size_t p = table.find("     yes"); p != std::string::npos; p = table.find("     yes", p + 1))
        yes++;
    CHECK(yes == 2);

    check_written(t, doc);
}

TEST_CASE("calibrate --checkpoint and --resume: a fit resumed from its first plan runs is the "
          "same to the byte, and a checkpoint of another plan or a broken one is refused",
          "[calibrate]")
{
    TempDir t;
    t.write("go.yaml", go_device("go", 90));
    std::string path = t.write(
        "fit.yaml", plan("go.yaml", "go", 40, 3, "lmk_rate: 30%, users: 2000",
                         fit_spikes));
    RunResult whole = oomsim({"calibrate", path, "--max-replications", "160", "--checkpoint",
                              t.file("a.json")});
    INFO(whole.out << whole.err);
    REQUIRE(whole.status == 0);
    std::string a = read_file(t.file("a.json"));
    // cut after the second run: the first two replayed, the rest run again
    size_t cut = a.find("]},{", a.find("]},{") + 1);
    REQUIRE(cut != std::string::npos);
    t.write("b.json", a.substr(0, cut) + "]}]}");
    RunResult resumed = oomsim({"calibrate", path, "--max-replications", "160", "--resume",
                                t.file("b.json"), "--checkpoint", t.file("c.json")});
    INFO(resumed.err);
    CHECK(resumed.status == 0);
    CHECK(resumed.out == whole.out);
    CHECK(read_file(t.file("c.json")) == a);
    // another option: the runs would differ
    RunResult other = oomsim({"calibrate", path, "--max-replications", "320", "--resume",
                              t.file("b.json")});
    CHECK(other.status == 1);
    CHECK(other.err.find("b.json: a checkpoint of another plan") != std::string::npos);
    // a count past its run's replications (the first background count made one)
    std::string bad = a;
    size_t k = bad.find("\"background\":[");
    REQUIRE(k != std::string::npos);
    bad.insert(k + 14, "999999");
    t.write("bad.json", bad);
    RunResult broken = oomsim({"calibrate", path, "--max-replications", "160", "--resume",
                               t.file("bad.json")});
    CHECK(broken.status == 1);
    CHECK(broken.err.find("bad.json: runs[0].background[0]: a count from 0 to the run's "
                          "replications") != std::string::npos);
    // a background count more than the cells' visible counts
    std::string more = a;
    more.insert(more.find("\"background\":[") + 14, "0,");
    t.write("more.json", more);
    RunResult uneven = oomsim({"calibrate", path, "--max-replications", "160", "--resume",
                               t.file("more.json")});
    CHECK(uneven.status == 1);
    CHECK(uneven.err.find("more.json: runs[0].background: as many counts as k") !=
          std::string::npos);
}

TEST_CASE("a calibrated profile: each value in its unit, the page cache written whole, each "
          "marked fitted and read back", "[calibrate]")
{
    TempDir t;
    std::string dev = go_device("go", 90);
    auto at = dev.find("\npage_cache:");
    REQUIRE(at != std::string::npos);
    dev.erase(at + 1, dev.find('\n', at + 1) - at); // the cache left to its default
    t.write("go.yaml", dev);
    std::string path = t.write(
        "fit.yaml", plan("go.yaml", "go", 10, 3, "lmk_rate: 30%, users: 2000", fit_spikes));
    scn_scenario s{};
    sim_error err;
    sim_error_clear(&err);
    REQUIRE(cli_load_scenario(path.c_str(), &s, &err) == SIM_OK);
    const scn_fitted v[3] = {
        {unsigned(mdl_knob_find("reclaim_rate")), 300 * MiB, "reclaim_rate 300 MiB/s"},
        {unsigned(mdl_knob_find("page_cache.size")), 250 * MiB, "page_cache.size 250 MiB"},
        {unsigned(mdl_knob_find("pressure.mean")), 123.4567e6, "pressure.mean 123.5 s"}};
    char *yaml = nullptr;
    int rc = scn_device_fitted(&s, 0, v, 3, "# go, calibrated\n", &yaml, &err);
    INFO(err.msg);
    REQUIRE(rc == SIM_OK);
    std::string text(yaml);
    std::free(yaml);
    INFO(text);
    CHECK(text.rfind("# go, calibrated\nname: go\n", 0) == 0);
    CHECK(text.find("reclaim_rate: 300.000MiB/s") != std::string::npos);
    CHECK(text.find("  size: 250.000MiB") != std::string::npos);
    CHECK(text.find("  working_set: ") != std::string::npos); // the default, written beside it
    CHECK(text.find("  mean: 123.457s") != std::string::npos);
    mdl_device d{};
    REQUIRE(scn_device_parse(text.data(), text.size(), "go.yaml", &d, &err) == SIM_OK);
    CHECK(d.reclaim_rate == int64_t(300 * MiB));
    CHECK(d.page_cache == int64_t(250 * MiB));
    CHECK(std::fabs(d.pressure.p1 - 123.457e6) < 1.0);
    unsigned nv = 0, fitted_n = 0;
    const char *const *values = mdl_device_values(d.os, &nv);
    for (unsigned k = 0; k < nv; k++) {
        int fitted = 0;
        const char *src = mdl_device_source(&d, k, &fitted);
        if (src != nullptr && fitted) {
            fitted_n++;
            CHECK(std::string(src).rfind("fitted: " + std::string(values[k]), 0) == 0);
        }
    }
    CHECK(fitted_n == 3); // reclaim_rate, page_cache.size, pressure
    scn_device_release(&d);
    scn_scenario_release(&s);
}
