// oomsim explain: for each teaching scenario, the narration holds the
// events its `about` describes, in order (the teaching catalog's values are
// fixed, so the order is the model's, not luck).
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "shim/shim.hpp"

using namespace shim;

namespace {

// Each expected piece must appear after the previous one.
void in_order(const std::string &text, const std::vector<std::string> &pieces)
{
    size_t at = 0;
    for (const std::string &p : pieces) {
        size_t k = text.find(p, at);
        INFO("looking for \"" << p << "\" after offset " << at);
        REQUIRE(k != std::string::npos);
        at = k + p.size();
    }
}

std::string explain(const std::string &scenario, const std::string &cell = "0")
{
    RunResult r = oomsim({"explain", scenario, "--cell", cell});
    INFO(r.err);
    REQUIRE(r.status == 0);
    return r.out;
}

} // namespace

TEST_CASE("explain: each teaching scenario's narration, in order", "[explain]")
{
    in_order(explain("prewarm-boot-loop"),
             {"iphone-2g running big-v2", "model: load begins, 800.0 MiB",
              "model: runtime_prepare begins", "3.000 s     300 MiB  model: delegate_prepare begins",
              "1600 MiB  the process dies: low_memory, during delegate_prepare",
              "EXC_RESOURCE RESOURCE_TYPE_MEMORY", "the user reopens the app 10.0 s later",
              "13.000 s", "model: load begins", "46 deaths", "what the evidence supports",
              "supports low_memory"});
    in_order(explain("prewarm-boot-loop", "1"),
             {"the process dies: low_memory", "recovery in force for this start: safe_mode",
              "1 deaths"});
    in_order(explain("delegate-fallback-two-sets"),
             {"model: delegate_prepare begins", "the delegate fails to prepare: the fallback",
              "model: runtime_prepare begins",
              "1800 MiB  the process dies: low_memory, during runtime_prepare"});
    in_order(explain("timeout-retry-storm"),
             {"request 0 arrives", "request 0 runs", "a request times out",
              "retries while the earlier attempt still runs", "lmk kills a cached app"});
    in_order(explain("split-switch-overlap"),
             {"first: load begins", "first: runtime_prepare begins", "second: load begins",
              "second: runtime_prepare begins, 800.0 MiB (700.0 MiB of it stays)",
              "1500 MiB  the process dies: low_memory, during runtime_prepare"});
    in_order(explain("image-queue"),
             {"request 0 arrives: needs model, payload 24.0 MiB", "lmk kills a cached app",
              "a memory warning", "the process dies: low_memory, during inference",
              "ApplicationExitInfo: reason=3 (LOW_MEMORY)", "importance=100",
              "supports low_memory"});
    in_order(explain("java-heap-copy"),
             {"model: load begins", "model: runtime_prepare begins",
              // the copy alone: the prepare's Java objects are refused whole
              "150 MiB  the process dies: java_crash, during runtime_prepare",
              "reason=4 (CRASH)", "none before the death", "supports java_crash",
              "keep model bytes out of the Java heap"});
    in_order(explain("cache-every-start"),
             {"model: runtime_prepare begins", "the compiled cache is not valid: rebuilding",
              "1500 MiB  the process dies: low_memory, during cache"});
    in_order(explain("background-reclaim"),
             {"request 0 arrives", "30.000 s     600 MiB  other apps' memory spikes",
              "60.000 s     600 MiB  the user switches away: the app is in the background",
              "60.000 s     600 MiB  other apps' memory spikes",
              "60.000 s     600 MiB  the process dies: system_reclaim",
              "reason=3 (LOW_MEMORY) status=0 importance=400 pss=614400kB",
              "the user reopens the app 5.0 s later", "180.000 s", "model: load begins",
              "supports system_reclaim"});
    in_order(explain("anr-main-thread-load"),
             {"model: load begins", "5.000 s", "the process dies: anr, during load",
              "reason=6 (ANR)", "supports anr", "move model work off the main thread"});
    // a plan with no death says so
    in_order(explain("anr-main-thread-load", "1"), {"no death, so no exit record"});
    CHECK(oomsim({"explain"}).status == 2);
    CHECK(oomsim({"explain", "anr-main-thread-load", "--cell", "9"}).status == 2);
}
