// The failure modes teams meet that the first teaching scenarios left out,
// one scenario each (docs/on-call.md "Failure modes, one teaching scenario
// each"): an LLM answer killed by its KV in front, a slow leak, a phone
// throttled by its heat, GPU memory the record leaves out, an OS update on
// every phone, an iOS memory warning ignored, the kernel's OOM killer and
// lmkd's thrashing kill.  As in test_teaching.cpp, each claim of the about
// is checked against the run, the trace of replication 0 and `explain`.
#include <catch2/catch.hpp>

#include <jansson.h>

#include <sstream>
#include <string>
#include <vector>

#include "shim/shim.hpp"
#include "teaching.hpp"

using namespace teaching;

namespace {

const double MiB = 1048576.0;

// The trace of replication 0 of a cell, as text.
std::string trace_of(const std::string &name, int cell = 0)
{
    TempDir dir;
    std::string t = dir.file("t.jsonl");
    RunResult g = oomsim({"gen", name, "--cell", std::to_string(cell), "-o", t});
    INFO(g.err);
    REQUIRE(g.status == 0);
    return read_file(t);
}

// The trace's events, each a line, whose text has every piece of `with`.
std::vector<std::string> events(const std::string &trace, std::vector<std::string> with)
{
    std::vector<std::string> out;
    std::istringstream in(trace);
    for (std::string line; std::getline(in, line);) {
        bool all = true;
        for (const std::string &w : with)
            all = all && has(line, w);
        if (all)
            out.push_back(line);
    }
    return out;
}

long long field(const std::string &event, const std::string &key)
{
    size_t at = event.find("\"" + key + "\":");
    REQUIRE(at != std::string::npos);
    return std::stoll(event.substr(at + key.size() + 3));
}

} // namespace

TEST_CASE("teaching: llm-kv-mid-answer dies in front in its 16th answer, and a capped "
          "context lives",
          "[teaching][about:llm-kv-mid-answer]")
{
    Results r("llm-kv-mid-answer");
    CHECK(r.at(0, "deaths.any_rate") == 1.0);
    CHECK(r.at(0, "deaths.by_reason.low_memory") == 20);
    CHECK(r.at(0, "deaths.memory_in_foreground") == 20);
    CHECK(r.at(0, "peak.app_bytes.max") == Approx(1647.6 * MiB).margin(0.1 * MiB));
    CHECK(r.at(0, "generation.kv_peak_bytes.max") == 15540.0 * 32768);
    CHECK(r.at(0, "requests.arrived") - r.at(0, "requests.completed") == 20);
    CHECK(r.at(0, "requests.lost") == 20); // the answer in flight, one a session
    std::vector<Death> d = deaths("llm-kv-mid-answer");
    REQUIRE_FALSE(d.empty());
    CHECK(d[0].cls == "low_memory");
    CHECK(d[0].importance == 100);
    CHECK(d[0].stage == "inference");
    CHECK(d[0].at_s == Approx(708.0).margin(0.001));
    std::string t = trace_of("llm-kv-mid-answer");
    std::vector<std::string> warn = events(t, {"\"memory_warning\""});
    REQUIRE_FALSE(warn.empty());
    CHECK(field(warn[0], "time_us") / 1e6 == Approx(447.8).margin(0.1));
    CHECK(events(t, {"\"error\":\"kv\""}).size() >= 15);
    std::string e = explain("llm-kv-mid-answer");
    CHECK(has(e, "then the failure mode's own fix: cap the context"));
    // 1162 MiB before any KV: its own 400, the 504 repacked, the 258 of compute at the first
    // turn, 15 s after the step begins (after_answer's first think time)
    CHECK(has(e, "    15.000 s    1162 MiB  "));
    // reopened 10 s after the death: from an empty context again
    CHECK(has(e, "718.000 s       0 MiB  the user reopens the app, 10.0 s after the death"));
    // closed loop: the next message 15 s after the answer the death cut short, 708 + 15
    CHECK(has(e, "723.000 s     904 MiB  request 16 arrives"));
    // the cap: 128 MiB of KV, 1290 MiB, no death, every answer
    CHECK(r.at(1, "deaths.any_rate") == 0.0);
    CHECK(r.at(1, "generation.kv_peak_bytes.max") == 128.0 * MiB);
    CHECK(r.at(1, "peak.app_bytes.max") == Approx(1290.0 * MiB).margin(0.1 * MiB));
    CHECK(r.completed_share(1) == 1.0);
    CHECK(r.at(1, "generation.context_overflow") == 13 * 20);
}

TEST_CASE("teaching: slow-leak leaks 6 MiB an entry and dies an hour in, its pss rising "
          "sample by sample",
          "[teaching][about:slow-leak]")
{
    Results r("slow-leak");
    CHECK(r.at(0, "deaths.any_rate") == 1.0);
    CHECK(r.at(0, "deaths.by_reason.low_memory") == 20);
    CHECK(r.at(0, "owners.leaked_sessions") == 180);
    CHECK(r.at(0, "peak.app_bytes.max") == 1876.0 * MiB);
    CHECK(r.completed_share(0) == 1.0); // none in flight at the death
    std::vector<Death> d = deaths("slow-leak");
    REQUIRE(d.size() == 1);
    CHECK(d[0].cls == "low_memory");
    CHECK(d[0].importance == 100);
    CHECK(d[0].stage.empty());
    CHECK(d[0].at_s == Approx(3600.0).margin(0.001));
    // the pss sampled once a minute: 814 MiB at 1 min to 1858 MiB at 59 min, +18 a sample
    std::string t = trace_of("slow-leak");
    std::vector<long long> rss;
    for (const std::string &ev : events(t, {"\"kind\":\"sample\"", "\"rss_mb\""}))
        if (!has(ev, "\"error\"") && !has(ev, "\"request\""))
            rss.push_back(field(ev, "rss_mb"));
    REQUIRE(rss.size() == 59);
    CHECK(rss.front() == 814);
    CHECK(rss.back() == 1858);
    for (size_t k = 1; k < rss.size(); k++)
        CHECK(rss[k] - rss[k - 1] == 18);
    CHECK(events(t, {"\"session_leaked\""}).size() == 180);
    std::string e = explain("slow-leak");
    CHECK(has(e, "pss=1902592kB"));
    CHECK(has(e, "3000.000 s    1696 MiB  a memory warning"));
    // the six cached apps, one every 400 s from 620 s to 2620 s
    for (int s = 620; s <= 2620; s += 400)
        CHECK(has(e, std::to_string(s) + ".000 s    "));
    CHECK(r.at(0, "cached_app_kills") == 6 * 20);
    CHECK(has(e, "3600.000 s    1876 MiB  the process dies: low_memory, while no stage was "
                 "running"));
    CHECK(has(e, "read the pss samples' trend"));
    CHECK(has(e, "the system's 59 periodic samples of this life rose from 814 MiB at 60 s to "
                 "1858 MiB at 3540 s, 18.0 MiB a sample: the memory grew and was not given back"));
    // the page whose owner closes its session: 796 MiB, no death, every request
    CHECK(r.at(1, "deaths.any_rate") == 0.0);
    CHECK(r.at(1, "peak.app_bytes.max") == 796.0 * MiB);
    CHECK(r.at(1, "requests.completed") == 600 * 20);
}

TEST_CASE("teaching: thermal-throttling steps down to 30 % and the retries kill the app 2.8 s "
          "later, and a lighter effect never heats",
          "[teaching][about:thermal-throttling]")
{
    Results r("thermal-throttling");
    CHECK(r.at(0, "deaths.any_rate") == 1.0);
    CHECK(r.at(0, "deaths.by_reason.low_memory") == 20);
    CHECK(r.at(0, "peak.app_bytes.max") == 1920.0 * MiB);
    std::vector<Death> d = deaths("thermal-throttling");
    REQUIRE(d.size() == 1);
    CHECK(d[0].cls == "low_memory");
    CHECK(d[0].importance == 100);
    CHECK(d[0].stage == "inference");
    CHECK(d[0].at_s == Approx(677.6).margin(0.001));
    std::string e = explain("thermal-throttling");
    CHECK(has(e, "239.500 s     210 MiB  the phone is hot from sustained work (thermal status "
                 "light): every execution from now runs at 80% of its speed"));
    CHECK(has(e, "514.625 s     210 MiB  the phone is hot from sustained work (thermal status "
                 "moderate)"));
    CHECK(has(e, "674.833 s     210 MiB  the phone is hot from sustained work (thermal status "
                 "severe): every execution from now runs at 30% of its speed"));
    CHECK(has(e, "over the 1873 MiB lmk line of the foreground"));
    CHECK(has(e, "then the failure mode's own fix: watch the thermal status"));
    CHECK_FALSE(has(e, "periodic samples of this life rose")); // flat until the storm
    // the inference times step up with the same model and input: 500, 625, 833, 1667 ms
    std::string t = trace_of("thermal-throttling");
    std::vector<long long> took;
    for (const std::string &ev : events(t, {"\"stage\":\"inference\"", "\"kind\":\"begin\""}))
        took.push_back(field(ev, "duration_us"));
    REQUIRE(took.size() > 600);
    CHECK(took.front() == 500000);
    CHECK(took[300] == 625000);
    CHECK(took[600] == 833333);
    CHECK(took.back() == 1666667);
    // cancelling is not enough: dead 0.4 s later
    CHECK(r.at(1, "deaths.any_rate") == 1.0);
    std::vector<Death> c = deaths("thermal-throttling", 1);
    REQUIRE_FALSE(c.empty());
    CHECK(c[0].at_s == Approx(678.0).margin(0.001));
    // the lighter effect: never throttled, never dead, every request served (but the one
    // in flight at the horizon)
    for (size_t k = 2; k < 4; k++) {
        CHECK(r.at(k, "deaths.any_rate") == 0.0);
        CHECK(r.at(k, "requests.arrived") - r.at(k, "requests.completed") == 20);
        CHECK(r.at(k, "requests.failed") == 0);
    }
    CHECK_FALSE(has(trace_of("thermal-throttling", 2), "thermal:"));
}

TEST_CASE("teaching: gpu-memory-unseen dies at 2090 MiB while its record says 280 MiB, and "
          "half the buffers live",
          "[teaching][about:gpu-memory-unseen]")
{
    Results r("gpu-memory-unseen");
    CHECK(r.at(0, "deaths.any_rate") == 1.0);
    CHECK(r.at(0, "deaths.by_reason.low_memory") == 20);
    CHECK(r.at(0, "peak.app_bytes.max") == 2090.0 * MiB);
    std::vector<Death> d = deaths("gpu-memory-unseen");
    REQUIRE(d.size() == 1);
    CHECK(d[0].cls == "low_memory");
    CHECK(d[0].importance == 100);
    CHECK(d[0].stage == "inference");
    CHECK(d[0].at_s == Approx(60.25).margin(0.001));
    std::string e = explain("gpu-memory-unseen");
    CHECK(has(e, "1.500 s    1470 MiB  model: delegate_prepare ends"));
    CHECK(has(e, "60.250 s    2090 MiB  the process dies: low_memory, during inference: counted "
                 "2090 MiB over the 1873 MiB lmk line of the foreground"));
    CHECK(has(e, "pss=286720kB rss=491520kB"));
    CHECK(has(e, "to free 296960kB rss"));
    CHECK(has(e, "the record's pss (280 MiB) leaves out the 1800 MiB of GPU buffers"));
    // said of memory kills only: a native crash's record holding GPU buffers is not one
    CHECK_FALSE(has(explain("delegate-native-crash"), "of GPU buffers"));
    // the record's pss is the exit's, in the trace too
    std::string t = trace_of("gpu-memory-unseen");
    std::vector<std::string> x = events(t, {"\"kind\":\"exit\""});
    REQUIRE(x.size() == 1);
    CHECK(field(x[0], "pss_kb") == 286720);
    CHECK(r.at(1, "deaths.any_rate") == 0.0);
    CHECK(r.at(1, "peak.app_bytes.max") == 1240.0 * MiB);
    CHECK(r.completed_share(1) == 1.0);
}

TEST_CASE("teaching: os-update-every-phone rebuilds on every phone and dies in a loop on the "
          "small ones",
          "[teaching][about:os-update-every-phone]")
{
    Results r("os-update-every-phone");
    // cells: each device, whole rebuild then in pieces; small phones 0, 2, 4
    for (size_t c : {0, 2, 4}) {
        INFO("cell " << c);
        CHECK(r.at(c, "deaths.any_rate") == 1.0);
        CHECK(r.at(c, "boot_loops.rate") == 1.0);
        CHECK(r.at(c, "deaths.per_replication.mean") == 29);
        CHECK(r.at(c, "peak.app_bytes.max") == 2000.0 * MiB);
        CHECK(r.at(c, "requests.completed") == 24 * 20);
        std::vector<Death> d = deaths("os-update-every-phone", (int)c);
        REQUIRE_FALSE(d.empty());
        CHECK(d[0].cls == "low_memory");
        CHECK(d[0].stage == "cache");
        CHECK(d[0].at_s == Approx(122.3).margin(0.001));
    }
    CHECK(has(explain("os-update-every-phone", 0), "over the 1076 MiB lmk line of the "
                                                    "foreground"));
    CHECK(has(explain("os-update-every-phone", 2), "over the 1873 MiB lmk line"));
    CHECK(has(explain("os-update-every-phone", 4), "JetsamEvent (per-process-limit)"));
    CHECK(has(explain("os-update-every-phone", 0), "then the failure mode's own fix: keep the "
                                                    "key"));
    for (size_t c : {6, 8}) { // the big phones rebuild and live
        INFO("cell " << c);
        CHECK(r.at(c, "deaths.any_rate") == 0.0);
        CHECK(r.completed_share(c) == 1.0);
        CHECK(has(explain("os-update-every-phone", (int)c), "130.600 s"));
    }
    for (size_t c : {1, 3, 5, 7, 9}) { // in pieces: every phone
        INFO("cell " << c);
        CHECK(r.at(c, "deaths.any_rate") == 0.0);
        CHECK(r.at(c, "peak.app_bytes.max") == 750.0 * MiB);
        CHECK(r.completed_share(c) == 1.0);
    }
}

TEST_CASE("teaching: ios-warning-ignored is warned at 42 s, releases nothing and is killed at "
          "62.5 s, and releasing on the warning lives",
          "[teaching][about:ios-warning-ignored]")
{
    Results r("ios-warning-ignored");
    CHECK(r.at(0, "deaths.any_rate") == 1.0);
    CHECK(r.at(0, "deaths.memory_in_foreground") == 20);
    CHECK(r.at(0, "deaths.by_jetsam_reason.per-process-limit") == 20);
    CHECK(r.at(0, "peak.app_bytes.max") == 2130.0 * MiB);
    std::vector<Death> d = deaths("ios-warning-ignored");
    REQUIRE(d.size() == 1);
    CHECK(d[0].cls == "low_memory");
    CHECK(d[0].importance == 100);
    CHECK(d[0].stage.empty());
    CHECK(d[0].at_s == Approx(62.5).margin(0.001));
    std::string t = trace_of("ios-warning-ignored");
    std::vector<std::string> w = events(t, {"\"memory_warning\""});
    REQUIRE(w.size() == 1);
    CHECK(field(w[0], "time_us") == 42000000);
    CHECK(events(t, {"\"stage\":\"release\""}).empty()); // nothing released before the kill
    std::string e = explain("ios-warning-ignored");
    CHECK(has(e, "42.000 s    1700 MiB"));
    CHECK(has(e, "then the failure mode's own fix: act on the memory warning"));
    // releasing on the warning: 700 MiB after it, 1700 at the peak, no death
    CHECK(r.at(1, "deaths.any_rate") == 0.0);
    CHECK(r.at(1, "peak.app_bytes.max") == 1700.0 * MiB);
    CHECK(r.completed_share(1) == 1.0);
    CHECK(has(explain("ios-warning-ignored", 1), "43.000 s     700 MiB"));
}

TEST_CASE("teaching: kernel-oom-kill is the kernel's kill, not lmkd's, and preparing in "
          "pieces lives",
          "[teaching][about:kernel-oom-kill]")
{
    Results r("kernel-oom-kill");
    CHECK(r.at(0, "deaths.any_rate") == 1.0);
    CHECK(r.at(0, "deaths.per_replication.mean") == 1.0);
    CHECK(r.at(0, "peak.app_bytes.max") == Approx(2028.8 * MiB).margin(0.1 * MiB));
    CHECK(r.at(0, "peak.stage_at_peak.runtime_prepare") == 1.0);
    std::vector<Death> d = deaths("kernel-oom-kill");
    REQUIRE(d.size() == 1);
    CHECK(d[0].cls == "kernel_oom");
    CHECK(d[0].evidence == "confirmed");
    CHECK(d[0].importance == 100);
    CHECK(d[0].stage == "runtime_prepare");
    CHECK(d[0].at_s == Approx(22.0).margin(0.001));
    std::string t = trace_of("kernel-oom-kill");
    std::vector<std::string> x = events(t, {"\"kind\":\"exit\""});
    REQUIRE(x.size() == 1);
    CHECK(has(x[0], "\"error\":\"kernel_oom\""));
    CHECK_FALSE(has(x[0], "\"log\""));        // no lmkd kill line
    CHECK(field(x[0], "reason_code") == 2);   // SIGNALED, not LOW_MEMORY
    CHECK(r.at(0, "deaths.by_lmkd_reason.LOW_MEM") == 0); // no lmkd reason counted for it
    CHECK(r.at(0, "deaths.by_lmkd_reason.NOT_RESPONDING") == 0);
    CHECK(has(explain("kernel-oom-kill"), "the kernel's OOM killer kills a cached app"));
    CHECK(r.at(1, "deaths.any_rate") == 0.0);
    CHECK(r.at(1, "peak.app_bytes.max") == Approx(1428.8 * MiB).margin(0.1 * MiB));
    CHECK(r.at(1, "pages.kernel_oom_kills") == 0);
    CHECK(r.completed_share(1) == 1.0);
}

TEST_CASE("teaching: thrashing-kill is lmkd's LOW_MEM_AND_THRASHING with the counted memory "
          "flat, and the smaller model lives",
          "[teaching][about:thrashing-kill]")
{
    Results r("thrashing-kill");
    CHECK(r.at(0, "deaths.any_rate") == 1.0);
    CHECK(r.at(0, "deaths.memory_in_foreground") == 20);
    CHECK(r.at(0, "deaths.by_lmkd_reason.LOW_MEM_AND_THRASHING") ==
          r.at(0, "deaths.by_reason.low_memory"));
    CHECK(r.at(0, "peak.app_bytes.max") == 2300.0 * MiB);
    CHECK(r.at(0, "pages.kernel_oom_kills") == 0);
    std::vector<Death> d = deaths("thrashing-kill");
    REQUIRE(d.size() >= 2);
    for (const Death &x : d) {
        CHECK(x.cls == "low_memory");
        CHECK(x.importance == 100);
        CHECK(x.stage == "inference");
    }
    CHECK(d[0].at_s == Approx(4.97).margin(0.001));
    // 4 to 6 s after it opens, in every session
    for (int k = 0; k < 20; k++) {
        TempDir dir;
        std::string t = dir.file("t.jsonl");
        REQUIRE(oomsim({"gen", "thrashing-kill", "--replication", std::to_string(k), "-o", t})
                    .status == 0);
        std::vector<std::string> x = events(read_file(t), {"\"kind\":\"exit\""});
        REQUIRE_FALSE(x.empty());
        INFO("session " << k);
        CHECK(field(x[0], "time_us") >= 4000000);
        CHECK(field(x[0], "time_us") <= 6000000);
    }
    std::string e = explain("thrashing-kill");
    CHECK(has(e, "reason: low watermark is breached and thrashing"));
    CHECK(has(e, "of its dropped weights back"));
    CHECK(has(e, "then the failure mode's own fix: the phone thrashed or stalled on memory"));
    CHECK(r.at(1, "deaths.any_rate") == 0.0);
    CHECK(r.completed_share(1) == 1.0);
}
