// oomsim explain: for each teaching scenario, the narration holds the
// events its `about` describes, in order (the teaching catalog's values are
// fixed, so the order is the model's, not luck).
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "shim/shim.hpp"
#include "shim/world.hpp"

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
             {"The app prewarms a large model at every cold start", // the about first
              "iphone-2g running big-v2", "model: load begins, 800.0 MiB",
              "model: runtime_prepare begins", "3.000 s     300 MiB  model: delegate_prepare begins",
              "1600 MiB  the process dies: low_memory, during delegate_prepare: counted 1600 MiB "
              "over the 1400 MiB foreground jetsam limit",
              "JetsamEvent (per-process-limit)",
              "... the same start-up death repeats 45 more times, every 13.0 s: a boot loop (the "
              "user reopened the app 10.0 s after each)",
              "598.000 s       0 MiB  the user reopens the app, 10.0 s after the death",
              "model: load begins", "46 deaths", "what the evidence supports",
              "supports low_memory",
              // advice that fits a start-up death
              "stop prewarm or start in safe mode"});
    in_order(explain("prewarm-boot-loop", "1"),
             {"the process dies: low_memory", "13.000 s       0 MiB  the user reopens the app, "
              "10.0 s after the death", "recovery in force for this start: safe_mode",
              "1 death;"});
    in_order(explain("delegate-fallback-two-sets"),
             {"model: delegate_prepare begins", "the delegate fails to prepare: the fallback",
              "model: runtime_prepare begins",
              "1800 MiB  the process dies: low_memory, during runtime_prepare"});
    in_order(explain("timeout-retry-storm"),
             {"request 4 arrives", "request 4 runs",
              "request 4 times out: the client gives up on attempt 1, which runs on",
              "the client retries request 4: attempt 2, payload 6.0 MiB, while the earlier "
              "attempt still runs", "model: request 4, attempt 2, runs (session", // a free one
              "lmk kills a cached app",
              "the process dies: low_memory, during inference",
              // memory never drops without a line saying why
              "model: request 12: an attempt the client gave up on finishes; only now is its "
              "working set freed"});
    in_order(explain("split-switch-overlap"),
             {"first: load begins", "first: runtime_prepare begins", "second: load begins",
              "second: runtime_prepare begins, 800.0 MiB (700.0 MiB of it stays)",
              "1500 MiB  the process dies: low_memory, during runtime_prepare"});
    in_order(explain("image-queue"),
             {"request 0 arrives: needs model, payload 24.0 MiB", "lmk kills a cached app",
              "a memory warning", "the process dies: low_memory, during inference",
              // the record as on-call reads it: the build it came from and the process
              "ApplicationExitInfo of app version 1 (dumpsys prints none",
              "process=com.example.app reason=3 (LOW_MEMORY)", "importance=100",
              "supports low_memory"});
    in_order(explain("java-heap-copy"),
             {"model: load begins", "model: runtime_prepare begins",
              // the copy alone: the prepare's Java objects are refused whole
              "150 MiB  the process dies: java_crash, during runtime_prepare",
              "reason=4 (CRASH)", "description=\"java.lang.OutOfMemoryError\"",
              "none before the death", "supports java_crash",
              "keep model bytes out of the Java heap"});
    in_order(explain("cache-every-start"),
             {"model: runtime_prepare begins", "the compiled cache is not valid: rebuilding",
              "1500 MiB  the process dies: low_memory, during cache"});
    in_order(explain("background-reclaim"),
             {"request 0 arrives", "30.000 s     600 MiB  other apps' memory spikes",
              "40.000 s     600 MiB  the user switches away: the app is in the background",
              "60.000 s     600 MiB  other apps' memory spikes",
              "60.000 s     600 MiB  the process dies: system_reclaim, while no stage was running",
              "348 MiB under the 948 MiB lmk line of the background: other apps' memory and the "
              "app's own mapped file pages (resident, not counted) took the rest",
              "reason=3 (LOW_MEMORY) status=0 importance=400 pss=614400kB",
              // the delay that happened: the user comes back two minutes after
              // leaving, 100 s after the death
              "160.000 s       0 MiB  the user reopens the app, 100.0 s after the death",
              "model: load begins", "supports system_reclaim"});
    in_order(explain("anr-main-thread-load"),
             {"model: load begins", "5.000 s", "the process dies: anr, during load: an input "
              "event waited 5.0 s behind the blocked main thread",
              "showed its dialog, and the process ended when the user closed it",
              "reason=6 (ANR)", "supports anr",
              // at start, no request in flight: the start's own work, step 2
              "> 2. stop prewarm and extra sessions", "load the model on a worker thread"});
    // a plan with no death says so
    in_order(explain("anr-main-thread-load", "1"), {"no death, so no exit record"});
    CHECK(oomsim({"explain"}).status == 2);
}

TEST_CASE("explain: what the lmk line leaves names the app's mapped files only when it maps some",
          "[explain]")
{
    // background-reclaim maps its 100 MiB model: the gap under the line is
    // the other apps' memory and those pages (the narration test above)
    TempDir dir;
    std::string copy = read_file(source_path("scenarios/catalog/teach/background-reclaim.yaml"));
    copy.replace(copy.find("mode: mmap"), 10, "mode: copy");
    // read into native memory, no file mapped: the other apps' memory alone
    in_order(explain(dir.write("copy.yaml", copy)),
             {"the process dies: system_reclaim", "lmk line of the background: other apps' "
              "memory took the rest"});
}

TEST_CASE("explain: options are checked, and a cell out of range lists the cells", "[explain]")
{
    RunResult r = oomsim({"explain", "anr-main-thread-load", "--cell", "9"});
    CHECK(r.status == 2);
    CHECK(r.err.find("oomsim explain: --cell 9: the scenario has 2 cells:\n  0  ") == 0);
    CHECK(r.err.find("\n  1  ") != std::string::npos);
    RunResult b = oomsim({"explain", "anr-main-thread-load", "--replication", "first"});
    CHECK(b.status == 2);
    CHECK(b.err == "oomsim explain: --replication needs an integer from 0 to 9999999\n"
                   "see oomsim explain --help\n");
    CHECK(oomsim({"explain", "anr-main-thread-load", "--answers", "x"}).status == 2);
}

TEST_CASE("explain --first-death tells the first replication in which a process died",
          "[explain]")
{
    // llm-chat-grows' cell 1 (android-3g, llm-1b-touched at 4096 tokens):
    // replications 0 and 1 live, 2 dies (the loop below checks it)
    shim::Loaded l(read_file(source_path("scenarios/catalog/teach/llm-chat-grows.yaml")));
    uint64_t first = 0;
    for (;; first++) {
        REQUIRE(first < 200);
        mdl_rep r = l.run(1, first);
        uint32_t died = 0;
        for (int x = 0; x < MDL_EXIT_COUNT; x++)
            died += r.deaths[x];
        if (died > 0)
            break;
    }
    CHECK(first == 2);
    RunResult r = oomsim({"explain", "llm-chat-grows", "--cell", "1", "--first-death"});
    REQUIRE(r.status == 0);
    CHECK(r.err == "oomsim explain: --first-death: replication 2 of cell 1\n");
    CHECK(r.out.find("llm-chat-grows, replication 2: android-3g running llm-1b-touched") !=
          std::string::npos);
    CHECK(r.out.find("the process dies") != std::string::npos);
    // a cell where nobody dies: said, exit 1; with --replication: exit 2
    RunResult none = oomsim({"explain", "capacity-plan", "--cell", "5", "--first-death"});
    CHECK(none.status == 1);
    CHECK(none.err.find("no process died in the cell's 1000 replications") != std::string::npos);
    CHECK(none.out.empty());
    CHECK(oomsim({"explain", "llm-chat-grows", "--first-death", "--replication", "3"}).status ==
          2);
}

TEST_CASE("explain --full tells every repeat", "[explain]")
{
    RunResult r = oomsim({"explain", "prewarm-boot-loop", "--full"});
    REQUIRE(r.status == 0);
    size_t deaths = 0;
    for (size_t at = 0; (at = r.out.find("the process dies:", at)) != std::string::npos; at++)
        deaths++;
    CHECK(deaths == 46);
    CHECK(r.out.find("repeats") == std::string::npos);
    // collapsed, one death line is told
    RunResult c = oomsim({"explain", "prewarm-boot-loop"});
    CHECK(c.out.find("the process dies:") == c.out.rfind("the process dies:"));
}

TEST_CASE("explain tells a request that repeats the same way once, with its count",
          "[explain]")
{
    // background-reclaim's requests come every 3 s, each arriving, running
    // and done at the same offsets and memory: told once, then counted; a
    // request with something else between its lines (a spike) is told whole
    std::string c = explain("background-reclaim");
    in_order(c, {"3.200 s     600 MiB  model: request 0 done: its working set is freed\n",
                 "... the same request repeats 8 more times, every 3.0 s (requests 1 to 8)\n",
                 "30.000 s     600 MiB  request 9 arrives",
                 "the kill rules check the app against it", "request 9 done",
                 "33.200 s     600 MiB  model: request 10 done",
                 "... the same request repeats 2 more times, every 3.0 s (requests 11 to 12)\n",
                 "40.000 s     600 MiB  the user switches away",
                 "163.000 s     600 MiB  request 13 arrives"});
    CHECK(c.find("request 5 arrives") == std::string::npos);
    // --full tells every one
    RunResult f = oomsim({"explain", "background-reclaim", "--full"});
    REQUIRE(f.status == 0);
    CHECK(f.out.find("request 5 arrives: needs model, payload 0.0 MiB, 0 queued") !=
          std::string::npos);
    CHECK(f.out.find("the same request repeats") == std::string::npos);
    // requests whose memory differs from one to the next are all told
    std::string q = explain("image-queue");
    CHECK(q.find("the same request repeats") == std::string::npos);
    CHECK(q.find("request 5 arrives") != std::string::npos);
}

TEST_CASE("explain --quiz hides the cause, asks, then answers", "[explain][quiz]")
{
    TempDir dir;
    std::string right = dir.write("right.txt", "java_crash\n4\n");
    RunResult r = oomsim({"explain", "java-heap-copy", "--quiz", "--answers", right});
    INFO(r.err);
    REQUIRE(r.status == 0);
    std::string before = r.out.substr(0, r.out.find("the answer:"));
    // the evidence is there, the cause and the about are not
    CHECK(before.find("reason=4 (CRASH)") != std::string::npos);
    CHECK(before.find("the process is gone, during runtime_prepare") != std::string::npos);
    CHECK(before.find("java_crash,") == std::string::npos);
    CHECK(before.find("supports") == std::string::npos);
    CHECK(before.find("byte[]") == std::string::npos);
    in_order(r.out, {"question 1: what ended the process?", "> java_crash",
                     "question 2: which recovery fits it?", "> 4", "the answer:",
                     "1. java_crash (right)", "the Java heap would hold 150 + 60 = 210 MiB and pass its 192 MiB growth limit",
                     "2. 4) keep model bytes out of the Java heap", "(right)", "score: 2 of 2",
                     "the scenario: The app reads its 150 MiB model into a byte[]"});
    std::string wrong = dir.write("wrong.txt", "low_memory\n2\n");
    RunResult w = oomsim({"explain", "java-heap-copy", "--quiz", "--answers", wrong});
    CHECK(w.out.find("1. java_crash (your answer was not it)") != std::string::npos);
    CHECK(w.out.find("score: 0 of 2") != std::string::npos);
    // a start-up memory death: the start-up recovery is the right one
    std::string boot = dir.write("boot.txt", "low_memory\n1\n");
    RunResult b = oomsim({"explain", "prewarm-boot-loop", "--quiz", "--answers", boot});
    CHECK(b.out.find("score: 2 of 2") != std::string::npos);
    // Android memory deaths show lmkd's line as evidence
    RunResult a = oomsim({"explain", "image-queue", "--quiz", "--answers", boot});
    CHECK(a.out.find("lmkd logs: Kill 'com.example.app', oom_score_adj 0 to free") != std::string::npos);
    CHECK(a.out.find("1. low_memory (right)") != std::string::npos);
    CHECK(oomsim({"explain", "java-heap-copy", "--quiz", "--answers",
                  dir.file("missing.txt")}).status == 1);
    // a class by its number in the list (java_crash is the 3rd) is the class
    std::string num = dir.write("num.txt", "3\n4\n");
    RunResult n = oomsim({"explain", "java-heap-copy", "--quiz", "--answers", num});
    REQUIRE(n.status == 0);
    CHECK(n.out.find("3) java_crash") != std::string::npos);
    CHECK(n.out.find("score: 2 of 2") != std::string::npos);
    // an answer of the wrong form from a file: refused, exit 2, naming it
    for (const char *bad : {"banana\n4\n", "java_crash\n9\n", "java_crash\nfour\n", ""}) {
        INFO(bad);
        RunResult x = oomsim({"explain", "java-heap-copy", "--quiz", "--answers",
                              dir.write("bad.txt", bad)});
        CHECK(x.status == 2);
        CHECK(x.err.find(bad[0] ? "--quiz: answer " : "--quiz: the answers ended before answer "
                                                       "1") != std::string::npos);
    }
}

TEST_CASE("explain tells the app's own memory, page holds and background life",
          "[explain][phone]")
{
    // the default plan on android-3g: the app's baseline at the launch, the
    // scan page's camera hold, then 90 s in the background, cached after
    // the phone's 60 s previous_ttl (240 s + 60 s)
    in_order(explain("capacity-plan"),
             {"0.000 s       0 MiB  the app's own memory (UI, caches, libraries)",
              "detector: load begins", "the page holds 64.0 MiB (camera buffers, a preview)",
              "240.000 s", "the user switches away",
              // the counted memory there depends on the app's drawn baseline
              "300.000 s", "the app has been in the background long enough to be cached (adj 900)",
              "330.000 s", "the user returns"});
}

TEST_CASE("explain prints a death's time the same way in the timeline and the verdicts",
          "[explain]")
{
    for (const char *s : {"image-queue", "prewarm-boot-loop", "llm-chat-grows"}) {
        RunResult r = oomsim({"explain", s, "--full", "--first-death"});
        REQUIRE(r.status == 0);
        size_t at = 0;
        unsigned n = 0;
        while ((at = r.out.find("\n- the death at ", at)) != std::string::npos) {
            at += 16;
            std::string t = r.out.substr(at, r.out.find(' ', at) - at);
            INFO(s << " " << t);
            // the timeline's line of that death: right-aligned seconds, then "s"
            CHECK(r.out.find(" " + t + " s ") != std::string::npos);
            n++;
        }
        CHECK(n > 0);
    }
}

TEST_CASE("explain tells an update: the app stopped, or not running, a relaunch pending "
          "forgotten",
          "[explain]")
{
    // the app dies at 1 s (a 900 MiB working set over a 600 MiB jetsam limit),
    // the user would come back 30 s later, but the OS is updated at 10 s and
    // the path's cold_start starts the app there; an update before the first
    // start finds no app to stop
    TempDir dir;
    std::string y = R"(name: upd
horizon: 40s
replications: 1
devices:
  - {name: p, os: ios, ram: 2GiB, system: 500MiB, kill: {rule: jetsam, limit: 600MiB},
     counts: [native]}
candidates:
  - id: c
    digest: 0a
    runtime: test-1
    parts:
      m:
        file: 1MiB
        load: {mode: mmap, time: 100ms}
        prepare: {time: 100ms, resident: {native: 100MiB}}
        inference: {time: 100ms, working_set: {native: 900MiB}}
workload:
  path:
    - update: runtime
    - cold_start
    - requests: {every: 1s, count: 1}
    - background: 9s
    - update: os
    - cold_start
  relaunch: 30s
)";
    RunResult r = oomsim({"explain", dir.write("upd.yaml", y), "--full"});
    INFO(r.out << r.err);
    REQUIRE(r.status == 0);
    in_order(r.out, {"0.000 s       0 MiB  the model's runtime is updated while the app is not "
                     "running: its next start meets the new version",
                     "the process dies",
                     "10.000 s       0 MiB  the phone's OS is updated while the app is not running",
                     "10.000 s       0 MiB  m: load begins"});
    CHECK(r.out.find("the user reopens the app") == std::string::npos);
}

namespace {

const char *kTwice = R"(name: t
seed: 1
replications: 1
horizon: 2min
devices:
  - name: d
    os: android
    ram: 6GiB
    system: 1.6GiB
    kill:
      rule: lmk
      minfree:
        - {adj: 0,   free: 72MiB}
        - {adj: 900, free: 216MiB}
    counts: [native, java, gpu]
candidates:
  - id: c
    digest: 9e41
    runtime: litert-1.4.0
    parts:
      model:
        file: 300MiB
        load: {mode: mmap, time: 300ms}
        prepare: {time: 300ms, resident: {native: 200MiB}}
        inference: {time: 150ms}
    cache: {size: 40MiB, hit: 1, miss_time: 8s, miss_transient: {native: 300MiB}, key: [digest]}
workload:
  path: [cold_start, {enter: {page: x, holds: {native: 10MiB}}}, {enter: {page: x, holds: {native: 20MiB}}}, {background: 5s}, {leave: x}]
)";

const char *kDfail = R"(name: dfail
seed: 1
replications: 1
horizon: 1min
devices:
  - name: d
    os: android
    ram: 6GiB
    system: 1.6GiB
    kill:
      rule: lmk
      minfree:
        - {adj: 0,   free: 72MiB}
        - {adj: 900, free: 216MiB}
    counts: [native, java, gpu]
candidates:
  - id: c
    digest: 9e41
    runtime: litert-1.4.0
    delegate: gpu
    fallback: none
    parts:
      model:
        file: 300MiB
        load: {mode: mmap, time: 300ms}
        prepare: {time: 300ms, resident: {native: 200MiB}}
        delegate_prepare: {time: 1s, fail: 1, transient: {gpu: 100MiB}, resident: {gpu: 300MiB}}
        inference: {time: 150ms}
workload:
  path: [cold_start, {requests: {every: 2s, count: 3}}]
)";

const char *kSvc = R"(name: svc2
seed: 7
replications: 1
horizon: 6min
devices:
- name: d
  os: android
  ram: 2GiB
  system: 900MiB
  cached_apps: 0
  cached_app_size: 80MiB
  pressure: 15s
  pressure_size: 500MiB
  kill:
    rule: lmk
    minfree:
    - adj: 0
      free: 72MiB
    - adj: 100
      free: 90MiB
    - adj: 200
      free: 108MiB
    - adj: 250
      free: 126MiB
    - adj: 900
      free: 144MiB
    - adj: 950
      free: 180MiB
  counts:
  - native
  - java
  - gpu
  anr_timeout: 5s
  pss_sample: 20s
candidates:
- id: scan-app
  digest: 5e21
  runtime: litert-1.4.0
  parts:
    detector:
      file: 40MiB
      load:
        mode: mmap
        time: 300ms
      prepare:
        time: 500ms
        resident:
          native: 400MiB
      session:
        native: 20MiB
      inference:
        time: 200ms
  cache:
    size: 40MiB
    hit: 0.7
    miss_time: 3s
    miss_transient:
      native: 100MiB
    key:
    - digest
    - runtime
processes:
  ml:
    kind: service
    bound_by: main
    restart: 1s
app:
  baseline:
    native: 120MiB
  processes:
    ml:
      baseline:
        native: 40MiB
owners:
  camera:
    kind: page
    page: cam
    needs:
    - detector
workload:
  path:
  - cold_start
  - enter:
      page: cam
      holds:
        native: 50MiB
  - requests:
      every: 1s
      for: 60s
      owner: camera
  - leave: cam
  - requests:
      every: 1s
      for: 10s
  - update: os
  - cold_start
  - requests:
      every: 1s
      for: 20s
  relaunch: 5s
  timeout: 2s
policies:
  retry:
    kind: fixed
    delay: 500ms
    max: 2
)";

const char *kLife = R"(name: life
horizon: 12s
replications: 1
devices:
  - {name: p, os: android, ram: 2GiB, system: 1GiB, cached_apps: 0, cached_app_size: 1MiB,
     pressure: 10s, pressure_size: 500MiB,
     kill: {rule: lmk, minfree: [{adj: 0, free: 72MiB}]}, counts: [native, gpu]}
candidates:
  - id: c
    digest: 0a
    runtime: test-1
    delegate: gpu
    fallback: cpu
    parts:
      m:
        file: 1MiB
        load: {mode: mmap, time: 100ms}
        prepare: {time: 100ms, resident: {native: 100MiB}}
        delegate_prepare: {time: 4s, transient: {gpu: 200MiB}, resident: {gpu: 300MiB}}
        inference: {time: 100ms}
workload:
  path: [cold_start, {requests: {every: 1s, count: 6}}, {update: runtime}, cold_start]
)";

} // namespace

TEST_CASE("explain tells each release with its size: a page entered twice, a delegate with no "
          "fallback, a page hold through its service's deaths",
          "[explain]")
{
    TempDir dir;
    // a page entered twice holds both (10 + 20 MiB), released together
    RunResult a = oomsim({"explain", dir.write("twice.yaml", kTwice)});
    REQUIRE(a.status == 0);
    CHECK(a.out.find("5.000 s     200 MiB  the user leaves x: its hold of 30.0 MiB is released") !=
          std::string::npos);
    // a delegate that fails with no fallback: the part goes, its memory with it
    RunResult b = oomsim({"explain", dir.write("dfail.yaml", kDfail)});
    REQUIRE(b.status == 0);
    CHECK(b.out.find("model: the delegate fails to prepare: no fallback: the part cannot be used "
                     "in this process, its memory is released") != std::string::npos);
    CHECK(b.out.find("the fallback takes over") == std::string::npos);
    // the model in a service process that dies three times: the main
    // process's page hold survives (50 MiB at the leave); then an update
    // stops both processes, and the next cold_start brings the service back
    RunResult c = oomsim({"explain", dir.write("svc.yaml", kSvc), "--full"});
    INFO(c.out << c.err);
    REQUIRE(c.status == 0);
    in_order(c.out, {"15.000 s     630 MiB  the service process com.example.app:ml dies",
                     "60.000 s     120 MiB  the user leaves cam: its hold of 50.0 MiB is released",
                     "70.000 s     580 MiB  the phone's OS is updated: the app stops",
                     "70.000 s     120 MiB  the model's service process starts"});
}

TEST_CASE("an update forgets the relaunch pending, and a death after it is read in its own "
          "life",
          "[explain][diagnose]")
{
    TempDir dir;
    // dies at its first request (1 s); the user would reopen it 5 s later,
    // but the OS is updated at once and the path ends: the app stays stopped
    const std::string dev = R"(devices:
  - {name: p, os: ios, ram: 2GiB, system: 500MiB, kill: {rule: jetsam, limit: 600MiB},
     counts: [native]}
)";
    std::string y = "name: stop\nhorizon: 30s\nreplications: 1\n" + dev + R"(candidates:
  - id: c
    digest: 0a
    runtime: test-1
    parts:
      m:
        file: 1MiB
        load: {mode: mmap, time: 100ms}
        prepare: {time: 100ms, resident: {native: 100MiB}}
        inference: {time: 100ms, working_set: {native: 900MiB}}
workload:
  path: [cold_start, {requests: {every: 1s, count: 1}}, {update: os}]
  relaunch: 5s
)";
    RunResult r = oomsim({"explain", dir.write("stop.yaml", y), "--full"});
    INFO(r.out);
    REQUIRE(r.status == 0);
    CHECK(r.out.find("the phone's OS is updated while the app is not running") !=
          std::string::npos);
    CHECK(r.out.find("6.000 s") == std::string::npos); // no relaunch at 6 s
    CHECK(r.out.find("1 death;") != std::string::npos);
    // requests run, the runtime is updated at 6 s, and the start after it
    // is in its 4 s delegate_prepare (600 MiB) when a 500 MiB spike comes at
    // 10 s: a start-up death, read in the life after the update (no request
    // ran in it), not as a death after requests ran (the first start, ready
    // at 400 MiB, would have lived through the spike)
    std::string trace = dir.file("life.jsonl");
    REQUIRE(oomsim({"gen", dir.write("life.yaml", kLife), "-o", trace}).status == 0);
    RunResult d = oomsim({"diagnose", trace});
    INFO(d.out);
    REQUIRE(d.status == 0);
    CHECK(d.out.find("stage:     delegate_prepare") != std::string::npos);
    CHECK(d.out.find("recovery:  a death during start-up, before any request") !=
          std::string::npos);
}

static bool has(const std::string &s, const std::string &what)
{
    return s.find(what) != std::string::npos;
}

TEST_CASE("explain tells an LLM's death: the context made, the memory split, one state, and "
          "the lever that would have saved it",
          "[explain][generation]")
{
    // llm-kv-mid-answer's cell 0 (docs/on-call.md "An LLM's death, told"):
    // the context made at the first request, 15 s in: 258 MiB of compute and
    // a KV of 32 KiB a token as written; the death at 708 s, 15540 tokens in
    // (485.6 MiB), the app in front mid-answer; its weights 504 MiB repacked,
    // 226 mapped besides; the rest 1647.6 - 504 - 485.6 - 258 = 400, the
    // app's own.  Its grid's one lever, the context: 4096
    // lives in the same replication.
    RunResult r = oomsim({"explain", "llm-kv-mid-answer"});
    REQUIRE(r.status == 0);
    CHECK(has(r.out, "    15.000 s     904 MiB  decoder: the context is made at its first "
                     "request, for 16384 tokens: the compute buffer, 258.0 MiB, and the KV "
                     "cache, 32.0 KiB a token as tokens are written (kv: touched)"));
    CHECK(has(r.out, "at the death, the counted 1647.6 MiB: weights 504.0 MiB (repacked 504.0, "
                     "on the accelerator 0.0), KV cache 485.6 MiB, compute buffer 258.0 MiB, "
                     "the rest 400.0 MiB"));
    CHECK(has(r.out, "226.0 MiB of weights mapped besides, not counted"));
    CHECK(has(r.out, "the app in front, an answer still decoding: its KV cache held 15540 "
                     "tokens, the conversation lost with the process"));
    CHECK(has(r.out, "the grid's levers: this replication again, one setting changed:\n"
                     "  context=4096: lives\n"
                     "  what would have saved it: the context (context=4096)\n"));
    // llm-chat-grows on the iPhone (cell 6, replication 3), reclaimed 2 s
    // after it was suspended with an answer begun: one state, suspended; the
    // ladder's row
    RunResult i = oomsim({"explain", "llm-chat-grows", "--cell", "6", "--replication", "3"});
    REQUIRE(i.status == 0);
    CHECK(has(i.out, "the app suspended in the background (the idle band), an answer begun "
                     "before and left unfinished"));
    CHECK(!has(i.out, "an answer still decoding"));
    CHECK(has(i.out, "why step 3: the steps before it do not suffice: no new request came, and "
                     "the answer still decoding after the user left"));
    CHECK(has(i.out, "context=4096: "));
    // a plan without an LLM has no such lines
    RunResult p = oomsim({"explain", "image-queue"});
    CHECK(!has(p.out, "the grid's levers"));
    CHECK(!has(p.out, "the context is made"));
}
