// The recovery ladder: one source (replay/ladder.c) for `explain`,
// `diagnose` and the quiz, its step chosen by what the death's life
// showed, else by the verdict's recovery (docs/on-call.md "The recovery
// ladder").
#include <catch2/catch.hpp>

#include <dirent.h>

#include <algorithm>
#include <string>
#include <vector>

#include "replay/replay.h"
#include "shim/shim.hpp"

using namespace shim;

namespace {

// The shipped teaching scenarios, by name.
std::vector<std::string> teaching()
{
    std::vector<std::string> names;
    DIR *d = opendir(source_path("scenarios/catalog/teach").c_str());
    REQUIRE(d != nullptr);
    while (struct dirent *e = readdir(d)) {
        std::string n = e->d_name;
        if (n.size() > 5 && n.compare(n.size() - 5, 5, ".yaml") == 0)
            names.push_back(n.substr(0, n.size() - 5));
    }
    closedir(d);
    std::sort(names.begin(), names.end());
    return names;
}

// The first ladder in a command's output: from its heading to the line of
// the mode's own fix, each line with its leading spaces taken off.
std::string first_ladder(const std::string &out)
{
    size_t a = out.find("recovery ladder, in the order of reversibility:");
    if (a == std::string::npos)
        return "";
    size_t fix = out.find("then the failure mode's own fix: ", a);
    REQUIRE(fix != std::string::npos);
    std::string block = out.substr(a, out.find('\n', fix) - a);
    std::string lines, line;
    for (size_t k = 0; k <= block.size(); k++) {
        if (k == block.size() || block[k] == '\n') {
            line.erase(0, line.find_first_not_of(' '));
            lines += line + "\n";
            line.clear();
        } else {
            line += block[k];
        }
    }
    return lines;
}

std::string ladder_text(rpl_recovery rec, unsigned signs)
{
    rpl_ladder l;
    rpl_ladder_of(rec, signs, &l);
    sim_text t = SIM_TEXT_INIT;
    rpl_ladder_text(&l, "", &t);
    char *s = sim_text_done(&t);
    REQUIRE(s != nullptr);
    std::string out = s;
    free(s);
    return out;
}

} // namespace

TEST_CASE("ladder: the four steps in order, the step marked with why, then the mode's fix",
          "[ladder]")
{
    std::string t = ladder_text(RPL_REC_START_UP, 0);
    size_t s1 = t.find("  1. reject new inference"), s2 = t.find("> 2. stop prewarm"),
           s3 = t.find("  3. clear rebuildable inactive caches"),
           s4 = t.find("  4. fall back to the last known good, only with a complete receipt"),
           never = t.find("never: delete the active model or the evidence");
    CHECK(s1 < s2);
    CHECK(s2 < s3);
    CHECK(s3 < s4);
    CHECK(s4 < never);
    CHECK(t.find("<- this death's step") == t.rfind("<- this death's step"));
    CHECK(t.find("why step 2: rejecting new inference does not suffice: no request had run") !=
          std::string::npos);
    // a native crash: step 4, only with the receipt; the evidence kept
    rpl_ladder l;
    rpl_ladder_of(RPL_REC_ISOLATE_DELEGATE, RPL_SIGN_QUEUE, &l);
    CHECK(l.step == RPL_STEP_LAST_GOOD);
    CHECK(std::string(l.fix) == rpl_recovery_text(RPL_REC_ISOLATE_DELEGATE));
    CHECK(std::string(l.fix).find("keep the evidence") != std::string::npos);
    // an unknown death: the first step only, and evidence to collect
    rpl_ladder_of(RPL_REC_COLLECT_EVIDENCE, RPL_SIGN_CACHE_REBUILD, &l);
    CHECK(l.step == RPL_STEP_REJECT);
    CHECK(std::string(l.fix).find("collect exit records before changing anything") !=
          std::string::npos);
    // not a memory failure: no step
    rpl_ladder_of(RPL_REC_NOT_MEMORY, 0, &l);
    CHECK(l.step == RPL_STEP_NONE);
    CHECK(ladder_text(RPL_REC_NOT_MEMORY, 0).find("<-") == std::string::npos);
    CHECK(ladder_text(RPL_REC_NOT_MEMORY, 0).find("no step: none") != std::string::npos);
}

TEST_CASE("ladder: what the life showed names the failure mode and its own fix", "[ladder]")
{
    rpl_ladder l;
    rpl_ladder_of(RPL_REC_RELEASE_IDLE, RPL_SIGN_RETRY_DUPLICATE | RPL_SIGN_QUEUE, &l);
    CHECK(l.step == RPL_STEP_REJECT); // the retry storm first
    CHECK(std::string(l.fix).find("cancel the timed-out attempt") == 0);
    rpl_ladder_of(RPL_REC_RELEASE_IDLE, RPL_SIGN_QUEUE, &l);
    CHECK(l.step == RPL_STEP_REJECT);
    CHECK(std::string(l.fix).find("drop the stale requests") != std::string::npos);
    rpl_ladder_of(RPL_REC_START_UP, RPL_SIGN_DELEGATE_FAILED, &l);
    CHECK(l.step == RPL_STEP_STOP_EXTRA);
    CHECK(std::string(l.fix).find("release the failed delegate's buffers") == 0);
    rpl_ladder_of(RPL_REC_START_UP, RPL_SIGN_CACHE_REBUILD, &l);
    CHECK(l.step == RPL_STEP_CLEAR_CACHES);
    CHECK(std::string(l.fix).find("the model digest, the runtime and the OS version") !=
          std::string::npos);
    // without a sign: the recovery's own step and sentence
    rpl_ladder_of(RPL_REC_RELEASE_IDLE, 0, &l);
    CHECK(l.step == RPL_STEP_STOP_EXTRA);
    CHECK(std::string(l.fix) == rpl_recovery_text(RPL_REC_RELEASE_IDLE));
}

TEST_CASE("ladder: explain, diagnose and the quiz give the same ladder for every teaching "
          "scenario's first death",
          "[ladder][teaching]")
{
    TempDir dir;
    std::string answers = dir.write("a.txt", "low_memory\n1\n");
    int compared = 0;
    for (const std::string &name : teaching()) {
        INFO(name);
        RunResult e = oomsim({"explain", name});
        REQUIRE(e.status == 0);
        std::string from_explain = first_ladder(e.out);
        if (e.out.find("no death, so no exit record") != std::string::npos) {
            CHECK(from_explain.empty());
            continue;
        }
        REQUIRE_FALSE(from_explain.empty());
        std::string trace = dir.file(name + ".jsonl");
        REQUIRE(oomsim({"gen", name, "-o", trace}).status == 0);
        RunResult d = oomsim({"diagnose", trace});
        REQUIRE(d.status == 0);
        RunResult q = oomsim({"explain", name, "--quiz", "--answers", answers});
        REQUIRE(q.status == 0);
        CHECK(first_ladder(d.out) == from_explain);
        CHECK(first_ladder(q.out.substr(q.out.find("the answer:"))) == from_explain);
        compared++;
    }
    CHECK(compared >= 11);
}

TEST_CASE("ladder: a sign holds only while what it names does", "[ladder]")
{
    TempDir dir;
    // a cache rebuilt and done, then a death in inference: not the cache's
    auto trace = [&](const std::string &name, const std::string &middle) {
        return dir.write(name,
                         "{\"time_ms\":0,\"stage\":\"load\",\"kind\":\"begin\",\"part\":\"m\"}\n"
                         "{\"time_ms\":1,\"stage\":\"load\",\"kind\":\"end\",\"part\":\"m\"}\n" +
                             middle +
                             "{\"time_ms\":9,\"stage\":\"inference\",\"kind\":\"begin\","
                             "\"part\":\"m\",\"session\":0,\"in_flight\":1}\n"
                             "{\"time_ms\":10,\"stage\":\"exit\",\"kind\":\"exit\","
                             "\"exit_reason\":\"low_memory\",\"exit\":{\"reason_code\":3,"
                             "\"importance\":100,\"timestamp_ms\":10}}\n");
    };
    std::string done = trace("done.jsonl",
                             "{\"time_ms\":2,\"stage\":\"cache\",\"kind\":\"begin\",\"part\":\"m\"}\n"
                             "{\"time_ms\":3,\"stage\":\"cache\",\"kind\":\"end\",\"part\":\"m\"}\n");
    RunResult d = oomsim({"diagnose", done});
    REQUIRE(d.status == 0);
    CHECK(d.out.find("> 2. stop prewarm and extra sessions") != std::string::npos);
    CHECK(d.out.find("cache rebuild") == std::string::npos);
    // still rebuilding at the death: step 3
    std::string open = trace("open.jsonl",
                             "{\"time_ms\":2,\"stage\":\"cache\",\"kind\":\"begin\",\"part\":\"m\"}\n");
    CHECK(oomsim({"diagnose", open}).out.find("> 3. clear rebuildable inactive caches") !=
          std::string::npos);
    // a long queue that drained before the death: not the queue's
    std::string drained = trace("q.jsonl",
                                "{\"time_ms\":2,\"stage\":\"inference\",\"kind\":\"sample\","
                                "\"queue\":12}\n"
                                "{\"time_ms\":3,\"stage\":\"inference\",\"kind\":\"sample\","
                                "\"queue\":0}\n");
    CHECK(oomsim({"diagnose", drained}).out.find("drop the stale requests") == std::string::npos);
}
