// The verdict each teaching scenario teaches (docs/on-call.md "The verdict
// table"): for its first death, the class, foreground or background, the
// ladder's step and the failure mode's fix, stated here once and checked
// against `explain`, `diagnose` on the scenario's own records, and the
// drill's answer key.  A scenario without a death still ends with what to
// do: an outage its row, a quiet session no step.
#include <catch2/catch.hpp>

#include <string>

#include <jansson.h>

#include "shim/shim.hpp"

using namespace shim;

namespace {

struct Expect {
    const char *scenario, *cell;
    const char *rep;   // the replication told: the cell's first with a death
    const char *cls;   // the class; "" when the session has no death
    int background;    // 1 background, 0 foreground, -1 the record does not say
    int step;          // the ladder's step, 0 none
    const char *fix;   // a piece of the fix
    bool same_for_all; // every death of the session gets the same fix
};

const Expect expected[] = {
    {"anr-main-thread-load", "0", "0", "anr", 0, 2, "load the model on a worker thread", true},
    {"background-reclaim", "0", "0", "system_reclaim", 1, 3, "restores the user's state", true},
    {"cache-every-start", "0", "0", "low_memory", 0, 2, "never answer it by clearing the cache",
     true},
    {"delegate-fallback-two-sets", "0", "0", "low_memory", 0, 2,
     "release the failed delegate's buffers", true},
    {"delegate-native-crash", "0", "0", "native_crash", 0, 4,
     "turn the GPU delegate off on the affected devices first", true},
    {"image-queue", "0", "0", "low_memory", 0, 1, "drop the stale requests", false},
    {"java-heap-copy", "0", "0", "java_crash", 0, 2, "out of the Java heap", true},
    {"launch-watchdog", "0", "0", "watchdog", 0, 2, "take model work out of the launch", true},
    // a user who reads each answer: the Android phone's first death is its
    // third session's, in the background
    {"llm-chat-grows", "0", "2", "system_reclaim", 1, 3, "keep the conversation as text", true},
    // the iPhone: reclaimed as the user leaves, an answer still decoding
    // (replication 3: with the free target XNU derives for 2 GiB, the first
    // session lives)
    {"llm-chat-grows", "6", "3", "system_reclaim", 1, 3,
     "stop generating when the app leaves the foreground", true},
    {"no-exit-record", "0", "0", "unknown", -1, 1, "collect exit records", true},
    {"owner-leak", "0", "0", "system_reclaim", 1, 2, "close the sessions a page's owner holds", true},
    {"preload-startup-pressure", "0", "0", "low_memory", 0, 2, "do not preload", true},
    {"prewarm-boot-loop", "0", "0", "low_memory", 0, 2, "stop prewarm or start in safe mode", true},
    {"reenable-regression", "0", "0", "", -1, 0, "", true},
    {"remote-inference-service", "0", "0", "low_memory", 0, 1, "BIND_IMPORTANT", true},
    {"split-switch-overlap", "0", "0", "low_memory", 0, 3,
     "release the first part before the second loads", true},
    {"stale-cache-after-update", "0", "0", "", -1, 1, "the remote kill switch", true},
    {"timeout-retry-storm", "0", "0", "low_memory", 0, 1, "cancel the timed-out attempt", false},
    {"llm-kv-mid-answer", "0", "0", "low_memory", 0, 1, "cap the context", true},
    {"slow-leak", "0", "0", "low_memory", 0, 2, "read the pss samples' trend", true},
    {"thermal-throttling", "0", "0", "low_memory", 0, 1, "watch the thermal status", true},
    {"gpu-memory-unseen", "0", "0", "low_memory", 0, 2, "fewer resident models, sessions and tasks",
     true},
    {"os-update-every-phone", "0", "0", "low_memory", 0, 2, "keep the key", true},
    {"ios-warning-ignored", "0", "0", "low_memory", 0, 3, "act on the memory warning", true},
    {"kernel-oom-kill", "0", "0", "kernel_oom", 0, 2, "cut the peak of one step", true},
    {"thrashing-kill", "0", "0", "low_memory", 0, 2, "mapped weights read at every token", true},
};

bool has(const std::string &s, const std::string &what)
{
    return s.find(what) != std::string::npos;
}

std::string marker(int step)
{
    return "> " + std::to_string(step) + ". ";
}

} // namespace

TEST_CASE("verdicts: explain, diagnose and the drill agree with each teaching scenario's "
          "verdict",
          "[verdicts][teaching]")
{
    TempDir dir;
    std::string answers = dir.write("a.txt", "unknown\nforeground\nmain\nnone\nconfirmed\n0\n"
                                             "1\n1\n");
    for (const Expect &x : expected) {
        INFO(x.scenario << " cell " << x.cell);
        RunResult e = oomsim({"explain", x.scenario, "--cell", x.cell, "--replication", x.rep});
        REQUIRE(e.status == 0);
        size_t at = e.out.find(std::string(x.cls).empty() ? "\nno death, so no exit record"
                                                          : "\nwhat the evidence supports:");
        REQUIRE(at != std::string::npos);
        std::string verdict = e.out.substr(at);
        if (x.step == 0) {
            CHECK(!has(verdict, "recovery ladder,"));
            CHECK(has(verdict, "Nothing in this session calls for a step"));
            continue;
        }
        CHECK(has(verdict, marker(x.step)));
        CHECK(has(verdict, x.fix));
        if (std::string(x.cls).empty()) { // an outage: diagnose gives its row too
            std::string trace = dir.file(std::string(x.scenario) + ".jsonl");
            REQUIRE(oomsim({"gen", x.scenario, "-o", trace}).status == 0);
            RunResult d = oomsim({"diagnose", trace});
            CHECK(has(d.out, marker(x.step)));
            CHECK(has(d.out, x.fix));
            continue;
        }
        CHECK((has(verdict, std::string("supports ") + x.cls + " (") ||
               has(verdict, std::string("stays ") + x.cls + " (")));
        // diagnose, on the scenario's own records
        std::string trace = dir.file(std::string(x.scenario) + x.cell + ".jsonl");
        REQUIRE(oomsim({"gen", x.scenario, "--cell", x.cell, "--replication", x.rep, "-o", trace})
                    .status == 0);
        RunResult d = oomsim({"diagnose", trace, "--format", "json"});
        REQUIRE(d.status == 0);
        json_error_t je;
        json_t *doc = json_loads(d.out.c_str(), 0, &je);
        REQUIRE(doc != nullptr);
        json_t *exits = json_object_get(doc, "exits");
        REQUIRE(json_array_size(exits) >= 1);
        json_t *first = json_array_get(exits, 0);
        CHECK(std::string(json_string_value(json_object_get(first, "class"))) == x.cls);
        json_t *imp = json_object_get(first, "importance");
        if (x.background < 0)
            CHECK(json_is_null(imp));
        else
            CHECK((json_integer_value(imp) >= 400) == (x.background == 1));
        json_t *ladder = json_object_get(first, "ladder");
        CHECK(json_integer_value(json_object_get(ladder, "step")) == x.step);
        std::string fix = json_string_value(json_object_get(ladder, "fix"));
        CHECK(has(fix, x.fix));
        for (size_t k = 1; x.same_for_all && k < json_array_size(exits); k++) {
            json_t *l = json_object_get(json_array_get(exits, k), "ladder");
            CHECK(std::string(json_string_value(json_object_get(l, "fix"))) == fix);
        }
        json_decref(doc);
        // the drill's answer key: the class, front or behind, the step, the fix
        RunResult q = oomsim({"explain", x.scenario, "--cell", x.cell, "--replication", x.rep,
                              "--drill", "--answers", answers});
        REQUIRE(q.status == 0);
        std::string key = q.out.substr(q.out.find("the answer:"));
        CHECK(has(key, std::string("\n1. ") + x.cls + " ("));
        if (x.background >= 0)
            CHECK(has(key, x.background ? "\n2. background (" : "\n2. foreground ("));
        // (a start-up death also allows step 4, the last known good)
        CHECK((has(key, "\n6. " + std::to_string(x.step) + " (") ||
               has(key, "\n6. " + std::to_string(x.step) + ", or 4 (")));
        size_t seven = key.find("\n7. ");
        REQUIRE(seven != std::string::npos);
        CHECK(has(key.substr(seven, key.find('\n', seven + 1) - seven), x.fix));
    }
}
