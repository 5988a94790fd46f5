// The recovery ladder: one source (replay/ladder.c) for `explain`,
// `diagnose` and the quiz, its step chosen by what the death's life
// showed, else by the verdict's recovery (docs/on-call.md "The recovery
// ladder").
#include <catch2/catch.hpp>

#include <dirent.h>

#include <algorithm>
#include <map>
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
           s3 = t.find("  3. release idle parts and clear rebuildable inactive caches"),
           s4 = t.find("  4. fall back to the last known good, only with a complete receipt"),
           never = t.find("never: delete the active model or the evidence");
    CHECK(s1 < s2);
    CHECK(s2 < s3);
    CHECK(s3 < s4);
    CHECK(s4 < never);
    CHECK(t.find("<- this death's step") == t.rfind("<- this death's step"));
    CHECK(t.find("why step 2: rejecting new inference does not suffice: no request had run") !=
          std::string::npos);
    // not a memory failure: no step
    CHECK(ladder_text(RPL_REC_NOT_MEMORY, 0).find("<-") == std::string::npos);
    CHECK(ladder_text(RPL_REC_NOT_MEMORY, 0).find("no step: none") != std::string::npos);
    // an outage without a death says so
    CHECK(ladder_text(RPL_REC_STALE_CACHE, 0).find("> 1. reject new inference: keep the app "
                                                   "usable, start no new request  <- this "
                                                   "outage's step") != std::string::npos);
}

namespace {

// One case per row of the verdict table: the verdict, the signs, the step
// and a piece of the fix it must give (docs/on-call.md "The verdict table").
struct Row {
    const char *name;
    rpl_recovery rec;
    unsigned signs;
    rpl_step step;
    const char *fix;
};
const unsigned BG = RPL_SIGN_BACKGROUND;
const Row rows[] = {
    {"isolated", RPL_REC_ISOLATED, RPL_SIGN_QUEUE, RPL_STEP_NONE, "an isolated process"},
    {"not-memory", RPL_REC_NOT_MEMORY, 0, RPL_STEP_NONE, "not a memory failure"},
    {"stale-cache", RPL_REC_STALE_CACHE, 0, RPL_STEP_REJECT, "the remote kill switch"},
    {"unknown", RPL_REC_COLLECT_EVIDENCE, RPL_SIGN_CACHE_REBUILD, RPL_STEP_REJECT,
     "collect exit records before changing anything"},
    {"native-crash", RPL_REC_ISOLATE_DELEGATE, RPL_SIGN_QUEUE, RPL_STEP_LAST_GOOD,
     "turn the GPU delegate off on the affected devices first"},
    {"anr-at-start", RPL_REC_OFF_MAIN_THREAD, RPL_SIGN_STARTING, RPL_STEP_STOP_EXTRA,
     "load the model on a worker thread"},
    {"anr", RPL_REC_OFF_MAIN_THREAD, 0, RPL_STEP_REJECT, "move model work off the main thread"},
    {"java-heap", RPL_REC_HEAP_OUT_OF_JAVA, 0, RPL_STEP_STOP_EXTRA, "out of the Java heap"},
    {"watchdog", RPL_REC_OUT_OF_LAUNCH, 0, RPL_STEP_STOP_EXTRA, "out of the launch"},
    {"thermal", RPL_REC_RELEASE_IDLE, RPL_SIGN_THERMAL | RPL_SIGN_RETRY_DUPLICATE,
     RPL_STEP_REJECT, "lower the work as it rises"},
    {"retry-duplicate", RPL_REC_RELEASE_IDLE, RPL_SIGN_RETRY_DUPLICATE | RPL_SIGN_QUEUE,
     RPL_STEP_REJECT, "cancel the timed-out attempt"},
    {"delegate-failed", RPL_REC_START_UP, RPL_SIGN_DELEGATE_FAILED, RPL_STEP_STOP_EXTRA,
     "release the failed delegate's buffers"},
    {"update-rebuild", RPL_REC_START_UP, RPL_SIGN_CACHE_REBUILD | RPL_SIGN_UPDATED,
     RPL_STEP_STOP_EXTRA, "keep the key"},
    {"cache-rebuild", RPL_REC_START_UP, RPL_SIGN_CACHE_REBUILD, RPL_STEP_STOP_EXTRA,
     "never answer it by clearing the cache"},
    {"preload", RPL_REC_START_UP, RPL_SIGN_PRELOAD, RPL_STEP_STOP_EXTRA, "do not preload"},
    {"queue", RPL_REC_RELEASE_IDLE, RPL_SIGN_QUEUE, RPL_STEP_REJECT, "drop the stale requests"},
    {"service", RPL_REC_RELEASE_IDLE, RPL_SIGN_SERVICE, RPL_STEP_REJECT, "BIND_IMPORTANT"},
    {"warning-ignored", RPL_REC_RELEASE_IDLE, RPL_SIGN_WARNED | RPL_SIGN_SWITCH,
     RPL_STEP_CLEAR_CACHES, "act on the memory warning"},
    {"switch", RPL_REC_RELEASE_IDLE, RPL_SIGN_SWITCH, RPL_STEP_CLEAR_CACHES,
     "release the first part before the second loads"},
    {"slow-leak", RPL_REC_RELEASE_IDLE, RPL_SIGN_LEAKED | RPL_SIGN_WARNED, RPL_STEP_STOP_EXTRA,
     "read the pss samples' trend"},
    {"leaked-session", RPL_REC_RELEASE_IN_BACKGROUND, RPL_SIGN_LEAKED | BG, RPL_STEP_STOP_EXTRA,
     "close the sessions a page's owner holds"},
    {"kv-foreground", RPL_REC_RELEASE_IDLE, RPL_SIGN_KV, RPL_STEP_REJECT, "cap the context"},
    {"kv-background-answering", RPL_REC_RELEASE_IN_BACKGROUND,
     RPL_SIGN_KV | BG | RPL_SIGN_ANSWERING, RPL_STEP_CLEAR_CACHES,
     "stop generating when the app leaves the foreground"},
    {"kv-background", RPL_REC_SWAP_LOW, RPL_SIGN_KV | BG, RPL_STEP_CLEAR_CACHES,
     "keep the conversation as text and restore it"},
    {"start-up", RPL_REC_START_UP, RPL_SIGN_STARTING, RPL_STEP_STOP_EXTRA,
     "stop prewarm or start in safe mode"},
    {"thrashing", RPL_REC_THRASHING, 0, RPL_STEP_STOP_EXTRA, "mapped weights read at every"},
    {"swap-thrashing", RPL_REC_SWAP_THRASHING, BG, RPL_STEP_STOP_EXTRA,
     "hold less anonymous memory first"},
    {"swap-low", RPL_REC_SWAP_LOW, BG, RPL_STEP_STOP_EXTRA, "swap (zram) was nearly full"},
    {"kernel-oom", RPL_REC_KERNEL_OOM, 0, RPL_STEP_STOP_EXTRA, "cut the peak of one step"},
    {"background", RPL_REC_RELEASE_IN_BACKGROUND, BG, RPL_STEP_CLEAR_CACHES,
     "restores the user's state on relaunch"},
    {"foreground", RPL_REC_RELEASE_IDLE, 0, RPL_STEP_STOP_EXTRA,
     "fewer resident models, sessions and tasks"},
};

// docs/on-call.md's verdict table: row name -> the step it documents.
std::map<std::string, std::string> documented_rows()
{
    std::string doc = read_file(source_path("docs/on-call.md"));
    size_t a = doc.find("## The verdict table");
    REQUIRE(a != std::string::npos);
    std::map<std::string, std::string> out;
    // the table's rows: the lines from the first "| `" to the first that is not one
    size_t at = doc.find("\n| `", a);
    REQUIRE(at != std::string::npos);
    while (doc.compare(at, 4, "\n| `") == 0) {
        size_t name_end = doc.find('`', at + 4);
        size_t line_end = doc.find('\n', at + 1);
        std::string line = doc.substr(at + 1, line_end - at - 1);
        // the step is the third cell: "| `name` | when | step | fix |"
        std::vector<std::string> cells;
        size_t c = 0;
        while ((c = line.find('|', c)) != std::string::npos) {
            size_t d = line.find('|', c + 1);
            if (d == std::string::npos)
                break;
            std::string cell = line.substr(c + 1, d - c - 1);
            cell.erase(0, cell.find_first_not_of(' '));
            cell.erase(cell.find_last_not_of(' ') + 1);
            cells.push_back(cell);
            c = d;
        }
        if (cells.size() >= 3)
            out[doc.substr(at + 4, name_end - at - 4)] = cells[2];
        at = line_end;
    }
    return out;
}

} // namespace

TEST_CASE("ladder: every row of the verdict table gives its step and fix, as documented",
          "[ladder]")
{
    std::map<std::string, std::string> doc = documented_rows();
    size_t k = 0;
    rpl_step step;
    const char *row_fix;
    for (const char *name; (name = rpl_ladder_row(k, &step, &row_fix)) != nullptr; k++) {
        INFO(name);
        REQUIRE(k < sizeof rows / sizeof *rows);
        const Row &r = rows[k];
        CHECK(std::string(r.name) == name); // the cases in the table's order
        rpl_ladder l;
        rpl_ladder_of(r.rec, r.signs, &l);
        CHECK(l.step == r.step);
        CHECK(step == r.step);
        CHECK(std::string(l.fix).find(r.fix) != std::string::npos);
        CHECK(std::string(row_fix) == l.fix);
        REQUIRE(doc.count(name) == 1);
        CHECK(doc[name] == (step == RPL_STEP_NONE ? std::string("none")
                                                  : std::to_string((int)step)));
    }
    CHECK(k == sizeof rows / sizeof *rows);
    CHECK(doc.size() == k); // the docs list no row the code lacks
}

TEST_CASE("ladder: the first row that fits wins, and a foreground sign never takes a background "
          "death",
          "[ladder]")
{
    rpl_ladder l;
    // a retry storm that also queued: the retries first
    rpl_ladder_of(RPL_REC_RELEASE_IDLE, RPL_SIGN_RETRY_DUPLICATE | RPL_SIGN_QUEUE, &l);
    CHECK(l.step == RPL_STEP_REJECT);
    CHECK(std::string(l.fix).find("cancel the timed-out attempt") == 0);
    // a cache rebuilt at start is the rebuild's death, never "clear the cache"
    rpl_ladder_of(RPL_REC_START_UP, RPL_SIGN_CACHE_REBUILD | RPL_SIGN_STARTING, &l);
    CHECK(l.step == RPL_STEP_STOP_EXTRA);
    CHECK(std::string(l.why).find("clearing the cache would make the next start rebuild") !=
          std::string::npos);
    // the KV cache: in front, cap it; behind, release it and restore the chat
    rpl_ladder_of(RPL_REC_THRASHING, RPL_SIGN_KV, &l);
    CHECK(l.step == RPL_STEP_REJECT);
    rpl_ladder_of(RPL_REC_THRASHING, RPL_SIGN_KV | BG, &l);
    CHECK(l.step == RPL_STEP_CLEAR_CACHES);
    // a service process's death in the background is not the bound service's row
    rpl_ladder_of(RPL_REC_RELEASE_IN_BACKGROUND, RPL_SIGN_SERVICE | BG, &l);
    CHECK(std::string(l.fix).find("BIND_IMPORTANT") == std::string::npos);
    // signs name no mode for a death that is not memory's
    rpl_ladder_of(RPL_REC_ISOLATE_DELEGATE, RPL_SIGN_QUEUE | RPL_SIGN_SWITCH, &l);
    CHECK(l.step == RPL_STEP_LAST_GOOD);
    rpl_ladder_of(RPL_REC_COLLECT_EVIDENCE, RPL_SIGN_KV, &l);
    CHECK(l.step == RPL_STEP_REJECT);
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
            // an outage still ends with its ladder; a session with neither, with none
            CHECK(from_explain.empty() ==
                  (e.out.find("but an outage") == std::string::npos));
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

namespace {

// A life that loads, shows `middle`, then dies in inference in front.
std::string sign_trace(TempDir &dir, const std::string &name, const std::string &middle)
{
    return dir.write(name, "{\"time_ms\":0,\"stage\":\"load\",\"kind\":\"begin\",\"part\":\"m\"}\n"
                           "{\"time_ms\":1,\"stage\":\"load\",\"kind\":\"end\",\"part\":\"m\"}\n" +
                               middle +
                               "{\"time_ms\":9,\"stage\":\"inference\",\"kind\":\"begin\","
                               "\"part\":\"m\",\"session\":0,\"in_flight\":1}\n"
                               "{\"time_ms\":10,\"stage\":\"exit\",\"kind\":\"exit\","
                               "\"exit_reason\":\"low_memory\",\"exit\":{\"reason_code\":3,"
                               "\"importance\":100,\"timestamp_ms\":10}}\n");
}

} // namespace

TEST_CASE("ladder: a sign holds only while what it names does", "[ladder]")
{
    TempDir dir;
    // a cache rebuilt and done, then a death in inference: not the cache's
    auto trace = [&](const std::string &name, const std::string &middle) {
        return sign_trace(dir, name, middle);
    };
    std::string done = trace("done.jsonl",
                             "{\"time_ms\":2,\"stage\":\"cache\",\"kind\":\"begin\",\"part\":\"m\"}\n"
                             "{\"time_ms\":3,\"stage\":\"cache\",\"kind\":\"end\",\"part\":\"m\"}\n");
    RunResult d = oomsim({"diagnose", done});
    REQUIRE(d.status == 0);
    CHECK(d.out.find("> 2. stop prewarm and extra sessions") != std::string::npos);
    CHECK(d.out.find("cache rebuild") == std::string::npos);
    // still rebuilding at the death: the rebuild's death, step 2, never "clear it"
    std::string open = trace("open.jsonl",
                             "{\"time_ms\":2,\"stage\":\"cache\",\"kind\":\"begin\",\"part\":\"m\"}\n");
    RunResult o = oomsim({"diagnose", open});
    CHECK(o.out.find("> 2. stop prewarm and extra sessions") != std::string::npos);
    CHECK(o.out.find("the rebuild is what killed it") != std::string::npos);
    // a long queue that drained before the death: not the queue's
    std::string drained = trace("q.jsonl",
                                "{\"time_ms\":2,\"stage\":\"inference\",\"kind\":\"sample\","
                                "\"queue\":12}\n"
                                "{\"time_ms\":3,\"stage\":\"inference\",\"kind\":\"sample\","
                                "\"queue\":0}\n");
    CHECK(oomsim({"diagnose", drained}).out.find("drop the stale requests") == std::string::npos);
}

TEST_CASE("ladder: a warning, a thermal step and an update hold only while what they name does",
          "[ladder]")
{
    TempDir dir;
    auto trace = [&](const std::string &name, const std::string &middle) {
        return sign_trace(dir, name, middle);
    };
    // a memory warning: ignored until a part is released
    auto note = [](int ms, const std::string &what) {
        return "{\"time_ms\":" + std::to_string(ms) +
               ",\"stage\":\"inference\",\"kind\":\"sample\",\"error\":\"" + what + "\"}\n";
    };
    const std::string warned = "act on the memory warning";
    CHECK(oomsim({"diagnose", trace("w.jsonl", note(2, "memory_warning"))}).out.find(warned) !=
          std::string::npos);
    std::string released = trace("wr.jsonl", note(2, "memory_warning") +
                                                 "{\"time_ms\":3,\"stage\":\"release\","
                                                 "\"kind\":\"begin\",\"part\":\"m\"}\n"
                                                 "{\"time_ms\":4,\"stage\":\"release\","
                                                 "\"kind\":\"end\",\"part\":\"m\"}\n");
    CHECK(oomsim({"diagnose", released}).out.find(warned) == std::string::npos);
    // a thermal step until the phone reports none again
    const std::string hot = "lower the work as it rises";
    CHECK(oomsim({"diagnose", trace("t.jsonl", note(2, "thermal:severe"))}).out.find(hot) !=
          std::string::npos);
    CHECK(oomsim({"diagnose", trace("tc.jsonl", note(2, "thermal:severe") +
                                                    note(3, "thermal:none"))})
              .out.find(hot) == std::string::npos);
    // an update until a rebuild ends: the rebuild after it is the update's, a later one not
    const std::string cache_begin =
        "{\"time_ms\":5,\"stage\":\"cache\",\"kind\":\"begin\",\"part\":\"m\"}\n";
    const std::string prepared =
        "{\"time_ms\":1,\"stage\":\"runtime_prepare\",\"kind\":\"begin\",\"part\":\"m\"}\n"
        "{\"time_ms\":2,\"stage\":\"runtime_prepare\",\"kind\":\"end\",\"part\":\"m\"}\n";
    CHECK(oomsim({"diagnose", trace("u.jsonl", prepared + note(2, "os_update") + cache_begin)})
              .out.find("keep the key") != std::string::npos);
    // a cache never found valid before the update: its rebuild is not the update's
    CHECK(oomsim({"diagnose", trace("un.jsonl", note(2, "os_update") + cache_begin)})
              .out.find("keep the key") == std::string::npos);
    // a warning whose memory fell back under its level: no longer ignored
    auto mem = [](int ms, int mb, const std::string &what) {
        return "{\"time_ms\":" + std::to_string(ms) +
               ",\"stage\":\"inference\",\"kind\":\"sample\",\"rss_mb\":" +
               std::to_string(mb) + (what.empty() ? "" : ",\"error\":\"" + what + "\"") +
               "}\n";
    };
    CHECK(oomsim({"diagnose", trace("wf.jsonl", mem(2, 900, "memory_warning") + mem(3, 700, ""))})
              .out.find(warned) == std::string::npos);
    CHECK(oomsim({"diagnose", trace("wk.jsonl", mem(2, 900, "memory_warning") + mem(3, 950, ""))})
              .out.find(warned) != std::string::npos);
    std::string later = trace("ul.jsonl", prepared + note(2, "os_update") +
                                              "{\"time_ms\":3,\"stage\":\"cache\","
                                              "\"kind\":\"begin\",\"part\":\"m\"}\n"
                                              "{\"time_ms\":4,\"stage\":\"cache\","
                                              "\"kind\":\"end\",\"part\":\"m\"}\n" +
                                              cache_begin);
    RunResult u = oomsim({"diagnose", later});
    CHECK(u.out.find("keep the key") == std::string::npos);
    CHECK(u.out.find("the rebuild is what killed it") != std::string::npos);
}
