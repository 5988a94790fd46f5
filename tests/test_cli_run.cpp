// `oomsim run`, `validate` and `catalog` through the command line.
#include <catch2/catch.hpp>

#include <algorithm>
#include <csignal>
#include <sys/stat.h>
#include <fstream>
#include <string>

#include "shim/shim.hpp"

using namespace shim;

TEST_CASE("run with no argument runs the default plan from any directory", "[cli][run]")
{
    TempDir dir;
    RunResult r = run({"/bin/sh", "-c", "cd " + dir.path() + " && " OOMSIM_BIN " run -r 20"});
    INFO(r.err);
    REQUIRE(r.status == 0);
    CHECK(r.out.find("capacity-plan: 20 replications of 10.0 min") == 0);
    CHECK(r.out.find("android-3g  ocr-v3     sessions=1") != std::string::npos);
    CHECK(r.out.find("MiB") != std::string::npos);
    CHECK(r.out.find("each policy against its baseline") != std::string::npos);
    CHECK(r.out.find("android-4g  ocr-v3     sessions=2  sessions=1  +") != std::string::npos);
    CHECK(r.err.empty());
}

TEST_CASE("run shows a progress bar on stderr only when stderr is a terminal", "[cli][run][tty]")
{
    // The test above: no terminal, no bar.  script(1) (util-linux, in every
    // Debian install) gives the command a pseudo-terminal; stdout goes to a
    // file so only stderr reaches the terminal.
    if (!exists("/usr/bin/script")) {
        WARN("no script(1) to make a terminal: not checked");
        return;
    }
    TempDir dir;
    std::string cmd = "OOMSIM_PROGRESS_AFTER=0 " OOMSIM_BIN " run -r 20 -j 2 > " +
                      dir.file("table.txt");
    RunResult r = run({"/usr/bin/script", "-qec", cmd, dir.file("tty.txt")});
    INFO(r.out << r.err);
    REQUIRE(r.status == 0);
    std::string tty = read_file(dir.file("tty.txt"));
    CHECK(tty.find("/120 replications, ") != std::string::npos);
    CHECK(tty.find("/s, ETA ") != std::string::npos);
    // and a run shorter than the delay shows nothing
    std::string quiet = "OOMSIM_PROGRESS_AFTER=1000 " OOMSIM_BIN " run -r 20 -j 2 > " +
                        dir.file("t2.txt");
    RunResult q = run({"/usr/bin/script", "-qec", quiet, dir.file("tty2.txt")});
    REQUIRE(q.status == 0);
    CHECK(read_file(dir.file("tty2.txt")).find("replications, ") == std::string::npos);
    CHECK(tty.find("\r\033[K") != std::string::npos); // erased at the end
    CHECK(read_file(dir.file("table.txt")).find("capacity-plan: 20 replications") == 0);
}

// Every entry of a directory, dot-files included (a temporary file left
// behind would start with a dot).
static std::vector<std::string> all_entries(const std::string &path)
{
    std::vector<std::string> out;
    DIR *d = ::opendir(path.c_str());
    REQUIRE(d != nullptr);
    while (struct dirent *e = ::readdir(d))
        if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0)
            out.push_back(e->d_name);
    ::closedir(d);
    std::sort(out.begin(), out.end());
    return out;
}

TEST_CASE("run -o writes the results, the plots and the report, the same bytes for any -j",
          "[cli][run]")
{
    TempDir dir;
    RunResult a = oomsim({"run", "-r", "30", "-j", "1", "-o", dir.file("a"), "--format", "json"});
    RunResult b = oomsim({"run", "-r", "30", "-j", "2", "-o", dir.file("b"), "--format", "csv"});
    INFO(a.err << b.err);
    REQUIRE(a.status == 0);
    REQUIRE(b.status == 0);
    std::vector<std::string> want = {"cells.csv", "comparison.svg", "peak-cdf.svg",
                                     "report.html", "results.json"};
    for (int i = 0; i < 6; i++) {
        want.push_back("timeline-cell-" + std::to_string(i) + ".svg");
        want.push_back("timeline-cell-" + std::to_string(i) + ".json"); // for the Perfetto UI
    }
    std::sort(want.begin(), want.end());
    CHECK(all_entries(dir.file("a")) == want);
    CHECK(all_entries(dir.file("b")) == want);
    for (const std::string &f : want)
        CHECK(read_file(dir.file("a/" + f)) == read_file(dir.file("b/" + f)));
    // the timeline of another replication is another picture
    RunResult t = oomsim({"run", "-r", "30", "-o", dir.file("t"), "--timeline", "7"});
    REQUIRE(t.status == 0);
    CHECK(read_file(dir.file("t/timeline-cell-0.svg")) !=
          read_file(dir.file("a/timeline-cell-0.svg")));
    CHECK(read_file(dir.file("t/peak-cdf.svg")) == read_file(dir.file("a/peak-cdf.svg")));
    std::string ja = read_file(dir.file("a/results.json"));
    CHECK(ja == read_file(dir.file("b/results.json")));
    CHECK(ja == a.out);
    CHECK(read_file(dir.file("a/cells.csv")) == b.out);
    CHECK(ja.find("\"replications\": 30") != std::string::npos);
    // sessions 2 against sessions 1 on each of the three devices
    CHECK(ja.find("\"metric\": \"peak.app_bytes.p95\",\n      \"baseline\": 0,\n      "
                  "\"cell\": 1") != std::string::npos);
    CHECK(ja.find("\"metric\": \"availability.mean\",\n      \"baseline\": 4,\n      "
                  "\"cell\": 5") != std::string::npos);
    CHECK(ja.find("\"timed_out\": 0") != std::string::npos);
    CHECK(b.out.find("device,candidate,policy,peak_mean_bytes") == 0);
    // one header and six cells
    CHECK(std::count(b.out.begin(), b.out.end(), '\n') == 7);
    RunResult c = oomsim({"run", "-r", "30", "--seed", "43", "--format", "json"});
    CHECK(c.out != ja);
}

// Waits until process pid catches signal sig (its SigCgt mask in /proc),
// at most 20 s, then sends it.
static void signal_when_ready(pid_t pid, int sig)
{
    for (int i = 0; i < 2000; i++) {
        std::ifstream st("/proc/" + std::to_string(pid) + "/status");
        std::string line;
        while (std::getline(st, line))
            if (line.rfind("SigCgt:", 0) == 0 &&
                (std::stoull(line.substr(7), nullptr, 16) >> (sig - 1) & 1u)) {
                ::usleep(100000); // into the replications
                ::kill(pid, sig);
                return;
            }
        ::usleep(10000);
    }
    ::kill(pid, sig);
}

static void interrupt_when_ready(pid_t pid) { signal_when_ready(pid, SIGINT); }
// SIGTERM: what an MPI launcher sends when it aborts a job.
static void terminate_when_ready(pid_t pid) { signal_when_ready(pid, SIGTERM); }

TEST_CASE("run: SIGTERM stops the run like SIGINT and exits 143", "[cli][run][interrupt]")
{
    TempDir dir;
    RunResult r = run({OOMSIM_BIN, "run", "-r", "200000", "-o", dir.file("out")},
                      terminate_when_ready);
    INFO(r.err);
    CHECK(r.signal == 0);
    CHECK(r.status == 143);
    CHECK(r.err.find("\noomsim: interrupted: ") != std::string::npos);
    CHECK(!exists(dir.file("out")));
}

TEST_CASE("run: the default plan's document is the golden one, for -j 1, 2 and 4, every time",
          "[cli][run][golden]")
{
    // tests/golden/update rewrites it, on purpose only (docs/results.md)
    std::string golden = read_file(source_path("tests/golden/capacity-plan.json"));
    REQUIRE(golden.size() > 1000);
#if defined(__SANITIZE_ADDRESS__)
    // under the sanitizers, once: the thread counts are the Release build's to compare
    for (const char *j : {"2"}) {
#else
    for (const char *j : {"1", "2", "4", "4"}) {
#endif
        RunResult r = oomsim({"run", "--format", "json", "-j", j});
        INFO("-j " << j << ": " << r.err);
        REQUIRE(r.status == 0);
        CHECK(r.out == golden);
    }
#if !defined(__SANITIZE_ADDRESS__) // the sanitizer build has no other allocator
    // the same bytes from the C library's allocator (the memcheck label's)
    ::setenv("OOMSIM_ALLOCATOR", "malloc", 1);
    RunResult r = oomsim({"run", "--format", "json", "-j", "2"});
    ::unsetenv("OOMSIM_ALLOCATOR");
    INFO(r.err);
    REQUIRE(r.status == 0);
    CHECK(r.out == golden);
#endif
}

TEST_CASE("run: a plan without the phone keys gives the results it always gave",
          "[cli][run][golden]")
{
    // tests/golden/plain: the default plan and its three devices as they were before
    // devices had speeds, delegates, a successor app or background life and before the
    // app's own memory was counted; plain.json was written by the last version without
    // those keys, and no later version may change a byte of it (when the random streams
    // changed, that last version wrote it again with the new streams: docs/results.md)
    std::string golden = read_file(source_path("tests/golden/plain/plain.json"));
    REQUIRE(golden.size() > 1000);
    RunResult r = oomsim({"run", source_path("tests/golden/plain/plan.yaml"), "--format", "json",
                          "-j", "2"});
    INFO(r.err);
    REQUIRE(r.status == 0);
    // the devices' provenance (docs/devices.md) came later, as a key of its own
    // before the cells: the results around it are the ones plain.json holds
    size_t from = r.out.find("\n  \"provenance\": {"), to = r.out.find("\n  \"cells\": [");
    REQUIRE(from != std::string::npos);
    REQUIRE(to > from);
    CHECK(r.out.substr(from, to - from).find("\"assumed\"") != std::string::npos);
    CHECK(r.out.substr(0, from) + r.out.substr(to) == golden);
}

TEST_CASE("run: SIGINT stops the run, says what was done, writes nothing, exits 130",
          "[cli][run][interrupt]")
{
    TempDir dir;
    // 1.2 million replications: far from done when the signal comes
    RunResult r = run({OOMSIM_BIN, "run", "-r", "200000", "-o", dir.file("out")},
                      interrupt_when_ready);
    INFO(r.err);
    CHECK(r.signal == 0); // handled, not killed by it
    CHECK(r.status == 130);
    // first the estimate of a long run, then what the interruption left
    CHECK(r.err.find("oomsim: this run may take up to about ") == 0);
    CHECK(r.err.find("\noomsim: interrupted: ") != std::string::npos);
    CHECK(r.err.find(" of 1200000 replications done, nothing written") != std::string::npos);
    CHECK(r.out.empty());
    CHECK(!exists(dir.file("out")));
    // into a directory that holds an earlier run's files: they stay as they were
    REQUIRE(oomsim({"run", "-r", "5", "-o", dir.file("kept")}).status == 0);
    std::vector<std::string> before = all_entries(dir.file("kept"));
    std::string json = read_file(dir.file("kept/results.json"));
    RunResult again = run({OOMSIM_BIN, "run", "-r", "200000", "-o", dir.file("kept")},
                          interrupt_when_ready);
    CHECK(again.status == 130);
    CHECK(all_entries(dir.file("kept")) == before);
    CHECK(read_file(dir.file("kept/results.json")) == json);
}

TEST_CASE("run: bad input is exit 1 and writes nothing, bad usage is exit 2", "[cli][run]")
{
    TempDir dir;
    std::string bad = dir.write("bad.yaml", "name: x\nhorizon: 10\n");
    RunResult r = oomsim({"run", bad, "-o", dir.file("out")});
    CHECK(r.status == 1);
    CHECK(r.err.find("oomsim: " + bad + ":2:10: horizon: ") == 0);
    CHECK(!exists(dir.file("out")));
    CHECK(oomsim({"run", "-r", "0"}).status == 2);
    CHECK(oomsim({"run", "--format", "xml"}).status == 2);
    CHECK(oomsim({"run", "--timeline", "first"}).status == 2);
    CHECK(oomsim({"run", "a.yaml", "b.yaml"}).status == 2);
    RunResult nf = oomsim({"run", "no-such-plan"});
    CHECK(nf.status == 1); // a missing name is invalid input
    CHECK(nf.err.find("no such file, and no catalog scenario") != std::string::npos);
    CHECK(oomsim({"run", dir.file("missing.yaml")}).status == 1); // and so is a missing path
    CHECK(oomsim({"explain", "no-such-plan"}).status == 1);
}

TEST_CASE("run: -o is checked before the run starts", "[cli][run]")
{
    TempDir dir;
    std::string file = dir.write("plain", "x");
    // under a plain file: no directory can be made there (whoever runs it)
    RunResult r = oomsim({"run", "-r", "200000", "-o", file + "/out"});
    CHECK(r.status == 3);
    CHECK(r.err == "oomsim: -o " + file + "/out: cannot create it: " + file +
                       " is not a directory\n");
    CHECK(r.out.empty()); // refused at once, not after 1.2 million replications
    RunResult f = oomsim({"run", "-r", "5", "-o", file});
    CHECK(f.status == 3);
    CHECK(f.err == "oomsim: -o " + file + ": not a directory\n");
    // files that cannot be written after the run: the results are still shown
    std::string blocked = dir.file("blocked");
    REQUIRE(::mkdir(blocked.c_str(), 0777) == 0);
    REQUIRE(::mkdir((blocked + "/results.json").c_str(), 0777) == 0); // where a file goes
    REQUIRE(::mkdir((blocked + "/results.json/x").c_str(), 0777) == 0);
    RunResult w = oomsim({"run", "-r", "5", "-o", blocked});
    CHECK(w.status == 3);
    CHECK(w.err.find("cannot write " + blocked + "/results.json") != std::string::npos);
    CHECK(w.out.find("capacity-plan: 5 replications of 10.0 min") == 0);
    CHECK(!exists(blocked + "/cells.csv")); // and nothing half-written
    // a new directory in a writable one is fine
    CHECK(oomsim({"run", "-r", "5", "-o", dir.file("new")}).status == 0);
    CHECK(exists(dir.file("new/results.json")));
}

TEST_CASE("help: every command's options, and usage errors in one line", "[cli]")
{
    for (const char *cmd : {"run", "replay", "explain", "gen", "diagnose", "validate", "catalog",
                            "probe"}) {
        RunResult a = oomsim({"help", cmd});
        RunResult b = oomsim({cmd, "--help"});
        INFO(cmd);
        CHECK(a.status == 0);
        CHECK(a.out.find(std::string("usage: oomsim ") + cmd) == 0);
        CHECK(a.out == b.out);
    }
    RunResult u = oomsim({"help", "nope"});
    CHECK(u.status == 2);
    CHECK(u.err == "oomsim: unknown command 'nope'\nsee oomsim --help\n");
    RunResult o = oomsim({"run", "-j2"});
    CHECK(o.status == 2);
    CHECK(o.err == "oomsim run: unknown option '-j2'\nsee oomsim run --help\n");
    RunResult g = oomsim({"gen", "x"});
    CHECK(g.status == 2);
    CHECK(std::count(g.err.begin(), g.err.end(), '\n') == 2);
    CHECK(g.err.find("see oomsim gen --help\n") != std::string::npos);
    // counts agree in number
    CHECK(oomsim({"run", "anr-main-thread-load", "-r", "1"}).out.find(
              "anr-main-thread-load: 1 replication of 3.0 min") == 0);
    CHECK(oomsim({"validate", source_path("scenarios/catalog/candidates/classifier-v1.yaml")})
              .out.find("(candidate classifier-v1, 1 part)") != std::string::npos);
    CHECK(oomsim({"explain", "anr-main-thread-load", "--cell", "1"}).out.find("; 0 deaths; ") !=
          std::string::npos);
    CHECK(oomsim({"validate"}).err == "oomsim validate: a file to check is needed\n"
                                      "see oomsim validate --help\n");
}

TEST_CASE("validate checks scenarios and profiles, stopping at the first bad file", "[cli]")
{
    TempDir dir;
    std::string ok = source_path("scenarios/catalog/scenarios/capacity-plan.yaml");
    std::string dev = source_path("scenarios/catalog/devices/android-4g.yaml");
    std::string bad = dir.write("bad.yaml", "name: x\nhorizon: 1s\ndevices: [android-4g]\n"
                                            "candidates: [ocr-v3]\nworkload: {path: [warm]}\n");
    RunResult r = oomsim({"validate", ok, dev});
    INFO(r.err);
    CHECK(r.status == 0);
    CHECK(r.out.find("ok (scenario capacity-plan, 6 cells x 1000 replications, up to about "
                     "7.51e+04 events per replication: a run of at most about ") != std::string::npos);
    CHECK(r.out.find("ok (device android-4g)") != std::string::npos);
    r = oomsim({"validate", ok, bad, dev});
    CHECK(r.status == 1);
    CHECK(r.err.find("oomsim: " + bad + ":5:19: workload.path[0]: expected cold_start") == 0);
    CHECK(r.out.find("ok (device android-4g)") == std::string::npos);
    CHECK(oomsim({"validate"}).status == 2);
}

TEST_CASE("catalog lists every shipped entry with its about line", "[cli]")
{
    RunResult r = oomsim({"catalog"});
    REQUIRE(r.status == 0);
    for (const auto &f : yaml_files("scenarios/catalog/devices"))
        CHECK(r.out.find("  " + f.stem + " ") != std::string::npos);
    for (const auto &f : yaml_files("scenarios/catalog/candidates"))
        CHECK(r.out.find("  " + f.stem + " ") != std::string::npos);
    CHECK(r.out.find("  capacity-plan              Capacity plan for ocr-v3") !=
          std::string::npos);
    size_t teach = r.out.find("teaching scenarios (one failure mode each):");
    REQUIRE(teach != std::string::npos);
    for (const auto &f : yaml_files("scenarios/catalog/teach"))
        CHECK(r.out.find("  " + f.stem + " ", teach) != std::string::npos);
    // a teaching scenario runs by its name
    RunResult t = oomsim({"run", "anr-main-thread-load", "-r", "2"});
    CHECK(t.status == 0);
    CHECK(t.out.find("ui-thread-load") != std::string::npos);
}

TEST_CASE("run: map and list policy values are labelled as a scenario writes them", "[cli][run]")
{
    RunResult r = oomsim({"run", source_path("tests/fuzz/corpus/scenario/failures.yaml"), "-r",
                          "2"});
    INFO(r.err);
    REQUIRE(r.status == 0);
    CHECK(r.out.find("retry=backoff(base=100ms,factor=2,cap=1s,jitter=0.3,max=3)") !=
          std::string::npos);
    CHECK(r.out.find("retry=on_new_condition(max=2)") != std::string::npos);
    CHECK(r.out.find("on_warning=[reduce_concurrency,clear_rebuildable_cache]") !=
          std::string::npos);
}

#ifndef OOMSIM_HAVE_MPI
TEST_CASE("run: a build without MPI started as several ranks refuses to run", "[cli][run]")
{
    // what Open MPI's launcher sets: each copy would run the whole plan
    TempDir dir;
    RunResult r = run({"/usr/bin/env", "OMPI_COMM_WORLD_SIZE=2", OOMSIM_BIN, "run", "-r", "1",
                       "-o", dir.file("out")});
    CHECK(r.status == 3);
    CHECK(r.err == "oomsim: this oomsim was built without MPI, so 2 copies started by an MPI "
                   "launcher would each run everything; build it with Open MPI installed "
                   "(docs/scale-out.md)\n");
    CHECK(r.out.empty());
    CHECK(!exists(dir.file("out")));
    // one copy is a job of one
    r = run({"/usr/bin/env", "OMPI_COMM_WORLD_SIZE=1", OOMSIM_BIN, "run", "-r", "1"});
    CHECK(r.status == 0);
}
#endif
