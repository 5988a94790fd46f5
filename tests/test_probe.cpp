// `oomsim probe` and rpl_probe_*: reports, the reference's messages, the
// clean errors where the reference crashes, and exit statuses.
#include <catch2/catch.hpp>

#include <string>

#include "replay/replay.h"
#include "shim/shim.hpp"

namespace {
const char *const kEvent =
    "{\"time_ms\": %T, \"stage\": \"load\", \"rss_mb\": 5, \"budget_mb\": 9, \"sessions\": 0}";

shim::RunResult probe_text(const std::string &text)
{
    shim::TempDir dir;
    return shim::oomsim({"probe", dir.write("events.json", text)});
}

std::string probe_ok(const std::string &text)
{
    char *report = nullptr;
    sim_error err;
    sim_error_clear(&err);
    int rc = rpl_probe_buffer(text.data(), text.size(), "mem.json", &report, &err);
    INFO(err.msg);
    REQUIRE(rc == SIM_OK);
    std::string s(report);
    rpl_probe_free(report);
    return s;
}

std::string probe_error(const std::string &text)
{
    char *report = nullptr;
    sim_error err;
    sim_error_clear(&err);
    int rc = rpl_probe_buffer(text.data(), text.size(), "mem.json", &report, &err);
    REQUIRE(rc == SIM_EINPUT);
    REQUIRE(report == nullptr);
    return err.msg;
}
} // namespace

TEST_CASE("probe: the shipped example gives the documented report", "[probe]")
{
    shim::RunResult r = shim::oomsim({"probe", shim::source_path("traces/examples/cold-start.json")});
    REQUIRE(r.status == 0);
    REQUIRE(r.err.empty());
    // Peak: the last event (1030 MiB); the first of the two 1012 samples is
    // not it.  Over budget: every event above 900 MiB, in order.
    REQUIRE(r.out == "{\n"
                     "  \"peak\": {\n"
                     "    \"stage\": \"exit\",\n"
                     "    \"rss_mb\": 1030,\n"
                     "    \"sessions\": 2\n"
                     "  },\n"
                     "  \"over_budget\": [\n"
                     "    {\n"
                     "      \"index\": 3,\n"
                     "      \"stage\": \"delegate_prepare\",\n"
                     "      \"rss_mb\": 958\n"
                     "    },\n"
                     "    {\n"
                     "      \"index\": 4,\n"
                     "      \"stage\": \"inference\",\n"
                     "      \"rss_mb\": 1012\n"
                     "    },\n"
                     "    {\n"
                     "      \"index\": 5,\n"
                     "      \"stage\": \"cache\",\n"
                     "      \"rss_mb\": 1012\n"
                     "    },\n"
                     "    {\n"
                     "      \"index\": 6,\n"
                     "      \"stage\": \"exit\",\n"
                     "      \"rss_mb\": 1030\n"
                     "    }\n"
                     "  ],\n"
                     "  \"exit_reason\": \"low_memory\",\n"
                     "  \"recovery\": \"stop new inference and isolate the candidate\"\n"
                     "}\n");
}

TEST_CASE("probe: the first highest sample is the peak, none over budget", "[probe]")
{
    std::string s = probe_ok(
        "[{\"time_ms\":1,\"stage\":\"load\",\"rss_mb\":7,\"budget_mb\":9,\"sessions\":1},"
        " {\"time_ms\":1,\"stage\":\"cache\",\"rss_mb\":7,\"budget_mb\":9,\"sessions\":3,"
        "  \"exit_reason\":\"anr\"}]");
    REQUIRE(s == "{\n  \"peak\": {\n    \"stage\": \"load\",\n    \"rss_mb\": 7,\n"
                 "    \"sessions\": 1\n  },\n  \"over_budget\": [],\n"
                 "  \"exit_reason\": \"anr\",\n"
                 "  \"recovery\": \"inspect main-thread and lock evidence\"\n}");
}

TEST_CASE("probe: the recovery advice follows the last event's reason", "[probe]")
{
    auto advice = [](const std::string &reason) {
        std::string ev = "[{\"time_ms\":0,\"stage\":\"exit\",\"rss_mb\":1,\"budget_mb\":1,"
                         "\"sessions\":0" +
                         (reason.empty() ? std::string() : ",\"exit_reason\":\"" + reason + "\"") +
                         "}]";
        std::string s = probe_ok(ev);
        return s.substr(s.find("\"recovery\""));
    };
    REQUIRE(advice("native_crash").find("preserve native evidence") != std::string::npos);
    REQUIRE(advice("low_memory").find("stop new inference") != std::string::npos);
    for (const char *r : {"", "none", "java_crash", "system_reclaim", "unknown"})
        REQUIRE(advice(r).find("keep the cause unconfirmed") != std::string::npos);
}

TEST_CASE("probe: the reference's rejections keep their messages", "[probe]")
{
    auto ev = [](const std::string &fields) { return "[" + fields + "]"; };
    const std::string ok = "\"stage\":\"load\",\"rss_mb\":5,\"budget_mb\":9,\"sessions\":0";
    REQUIRE(probe_error("[]") == "events must be a nonempty list");
    REQUIRE(probe_error("{\"events\": []}") == "events must be a nonempty list");
    REQUIRE(probe_error("7") == "events must be a nonempty list");
    REQUIRE(probe_error(ev("{\"time_ms\":5," + ok + "},{\"time_ms\":4," + ok + "}")) ==
            "invalid event time at index 1");
    REQUIRE(probe_error(ev("{\"time_ms\":-2," + ok + "}")) == "invalid event time at index 0");
    REQUIRE(probe_error(ev("{\"time_ms\":1.0," + ok + "}")) == "invalid event time at index 0");
    REQUIRE(probe_error(ev("{\"time_ms\":0,\"stage\":\"release\",\"rss_mb\":5,\"budget_mb\":9,"
                           "\"sessions\":0}")) == "invalid stage or reason at index 0");
    REQUIRE(probe_error(ev("{\"time_ms\":0," + ok + ",\"exit_reason\":null}")) ==
            "invalid stage or reason at index 0");
    REQUIRE(probe_error(ev("{\"time_ms\":0,\"stage\":\"load\",\"rss_mb\":5,\"budget_mb\":0,"
                           "\"sessions\":0}")) == "invalid memory sample at index 0");
    REQUIRE(probe_error(ev("{\"time_ms\":0,\"stage\":\"load\",\"rss_mb\":\"5\",\"budget_mb\":9,"
                           "\"sessions\":0}")) == "invalid memory sample at index 0");
    REQUIRE(probe_error(ev("{\"time_ms\":0,\"stage\":\"load\",\"rss_mb\":5,\"budget_mb\":9,"
                           "\"sessions\":-1}")) == "invalid session count at index 0");
}

TEST_CASE("probe: booleans are not integers", "[probe]")
{
    REQUIRE(probe_error("[{\"time_ms\":true,\"stage\":\"load\",\"rss_mb\":5,\"budget_mb\":9,"
                        "\"sessions\":0}]") == "invalid event time at index 0");
    REQUIRE(probe_error("[{\"time_ms\":0,\"stage\":\"load\",\"rss_mb\":5,\"budget_mb\":9,"
                        "\"sessions\":false}]") == "invalid session count at index 0");
}

TEST_CASE("probe: clean errors where the reference crashes", "[probe]")
{
    REQUIRE(probe_error("[5]") == "mem.json: event at index 0 is not an object");
    std::string good = "{\"time_ms\":0,\"stage\":\"load\",\"rss_mb\":5,\"budget_mb\":9,"
                       "\"sessions\":0}";
    REQUIRE(probe_error("[" + good + ",[1]]") == "mem.json: event at index 1 is not an object");
    REQUIRE(probe_error("\xEF\xBB\xBF[" + good + "]") ==
            "mem.json:1:1: invalid JSON: unexpected UTF-8 byte order mark");
    REQUIRE(probe_error("").rfind("mem.json:", 0) == 0);
    REQUIRE(probe_error("[" + good + "] x").find("invalid JSON") != std::string::npos);
    REQUIRE(probe_error("[\"\xff\"]").find("invalid JSON") != std::string::npos);
    // An integer jansson cannot hold: rejected with its position.
    std::string big = probe_error("[{\"time_ms\":0,\n \"rss_mb\":99999999999999999999}]");
    REQUIRE(big.rfind("mem.json:2:", 0) == 0);
    REQUIRE(probe_error("[{\"time_ms\":0,\"stage\":[\"load\"],\"rss_mb\":5,\"budget_mb\":9,"
                        "\"sessions\":0}]") == "invalid stage or reason at index 0");
}

TEST_CASE("probe: NUL in strings and escaped stage names", "[probe]")
{
    REQUIRE(probe_error("[{\"time_ms\":0,\"stage\":\"lo\\u0000ad\",\"rss_mb\":5,"
                        "\"budget_mb\":9,\"sessions\":0}]") ==
            "invalid stage or reason at index 0");
    std::string s = probe_ok("[{\"time_ms\":0,\"stage\":\"\\u006coad\",\"rss_mb\":5,"
                             "\"budget_mb\":9,\"sessions\":0,\"x\":\"a\\u0000b\"}]");
    REQUIRE(s.find("\"stage\": \"load\"") != std::string::npos);
}

TEST_CASE("probe: command line statuses", "[probe][cli]")
{
    shim::TempDir dir;
    REQUIRE(shim::oomsim({"probe"}).status == 2);
    REQUIRE(shim::oomsim({"probe", "a.json", "b.json"}).status == 2);
    REQUIRE(shim::oomsim({"frobnicate"}).status == 2);
    REQUIRE(shim::oomsim({}).status == 2);
    // the version, then the MPI library the build has (docs/scale-out.md)
    std::string version = shim::oomsim({"--version"}).out;
    REQUIRE(version.find("oomsim " SIM_VERSION "\nMPI: ") == 0);
#ifdef OOMSIM_HAVE_MPI
    REQUIRE(version.find("\nMPI: Open MPI v") != std::string::npos);
#else
    REQUIRE(version.find("\nMPI: none (runs as one process)\n") != std::string::npos);
#endif
    shim::RunResult missing = shim::oomsim({"probe", dir.file("none.json")});
    REQUIRE(missing.status == 1);
    REQUIRE(missing.err == "event file does not exist\n");
    shim::RunResult directory = shim::oomsim({"probe", dir.path()});
    REQUIRE(directory.status == 1);
    REQUIRE(directory.err == "event file does not exist\n");
    shim::RunResult bad = probe_text("[1");
    REQUIRE(bad.status == 1);
    REQUIRE(bad.out.empty());
    REQUIRE(bad.err.find("events.json:1:") != std::string::npos);
    std::string one = kEvent;
    one.replace(one.find("%T"), 2, "3");
    shim::RunResult good = probe_text("[" + one + "]");
    REQUIRE(good.status == 0);
    REQUIRE(good.out.back() == '\n');
    REQUIRE(good.out.find("\"over_budget\": []") != std::string::npos);
}
