// `mpirun -np N oomsim run` (docs/scale-out.md): the same bytes as one
// process with one thread, rank 0 alone speaking, and a failing rank named
// with nothing written.  Registered only in a build with MPI; mpirun gets
// --oversubscribe (more ranks than this machine's cores is the point) and,
// when the tests run as root, --allow-run-as-root.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <set>
#include <string>
#include <vector>

#include "shim/shim.hpp"

using namespace shim;

namespace {

std::vector<std::string> mpirun(unsigned ranks)
{
    std::vector<std::string> argv{OOMSIM_MPIEXEC, "--oversubscribe"};
    if (::geteuid() == 0)
        argv.push_back("--allow-run-as-root");
    argv.push_back("-np");
    argv.push_back(std::to_string(ranks));
    return argv;
}

// `oomsim run ARGS -o DIR` on `ranks` ranks (0: no mpirun at all).
RunResult run_on(unsigned ranks, const std::vector<std::string> &args, const std::string &dir,
                 const std::vector<std::string> &wrapper = {})
{
    std::vector<std::string> argv = ranks > 0 ? mpirun(ranks) : std::vector<std::string>{};
    argv.insert(argv.end(), wrapper.begin(), wrapper.end());
    argv.push_back(OOMSIM_BIN);
    argv.push_back("run");
    argv.insert(argv.end(), args.begin(), args.end());
    if (!dir.empty()) {
        argv.push_back("-o");
        argv.push_back(dir);
    }
    return run(argv);
}

// Every file of a run's -o directory, and its stdout, byte for byte.
void same_bytes(const std::string &a, const RunResult &ra, const std::string &b,
                const RunResult &rb)
{
    CHECK(ra.out == rb.out);
    std::vector<std::string> fa = file_names(a), fb = file_names(b);
    std::sort(fa.begin(), fa.end());
    std::sort(fb.begin(), fb.end());
    REQUIRE(fa == fb);
    CHECK(std::find(fa.begin(), fa.end(), "results.json") != fa.end());
    for (const std::string &f : fa) {
        INFO(f);
        CHECK(read_file(a + "/" + f) == read_file(b + "/" + f));
    }
}

void same_as_one_process(const std::vector<std::string> &args)
{
    TempDir t;
    std::vector<std::string> one = args;
    one.insert(one.end(), {"-j", "1"});
    RunResult base = run_on(0, one, t.file("one"));
    INFO(base.err);
    REQUIRE(base.status == 0);
    for (unsigned ranks : {2u, 3u}) {
        INFO(ranks << " ranks");
        std::string dir = t.file("np" + std::to_string(ranks));
        RunResult r = run_on(ranks, one, dir);
        INFO(r.err);
        REQUIRE(r.status == 0);
        same_bytes(t.file("one"), base, dir, r);
    }
    // threads inside the ranks too
    std::vector<std::string> two = args;
    two.insert(two.end(), {"-j", "2"});
    RunResult r = run_on(2, two, t.file("np2j2"));
    INFO(r.err);
    REQUIRE(r.status == 0);
    same_bytes(t.file("one"), base, t.file("np2j2"), r);
}

} // namespace

TEST_CASE("mpirun: the default plan gives the bytes of one process", "[mpi][bytes]")
{
    // 6 cells x 1000 replications: slices of 500 and 333/333/334
    same_as_one_process({});
}

TEST_CASE("mpirun: a boot loop's exit records cross the ranks unchanged", "[mpi][bytes]")
{
    // every replication dies dozens of times: exit records of every rank
    same_as_one_process({"prewarm-boot-loop"});
}

TEST_CASE("mpirun: fewer replications than ranks, and the split-vs-preload grid",
          "[mpi][bytes]")
{
    same_as_one_process({"split-vs-preload", "-r", "2"});
}

TEST_CASE("mpirun: an LLM chat's exact request quantiles gather across the ranks",
          "[mpi][bytes]")
{
    // every rank's requests' times to first token and decode rates go to
    // rank 0 at each round's end: the same order statistics as one process
    same_as_one_process({"llm-chat-grows", "-r", "30"});
}

TEST_CASE("mpirun: progress comes from rank 0 alone, a line per tenth", "[mpi][progress]")
{
    std::string cmd = "OOMSIM_PROGRESS_AFTER=0 exec";
    for (const std::string &w : mpirun(3))
        cmd += " " + w;
    cmd += " " OOMSIM_BIN " run -r 400 -j 1 --format csv";
    RunResult r = run({"/bin/sh", "-c", cmd});
    INFO(r.err);
    REQUIRE(r.status == 0);
    // 6 cells of 400: a report after each, at 16 %, 33 %, 50 %, 66 % and 83 %
    std::vector<std::string> lines;
    std::set<std::string> seen;
    size_t at = 0;
    for (size_t nl; (nl = r.err.find('\n', at)) != std::string::npos; at = nl + 1) {
        std::string line = r.err.substr(at, nl - at);
        CHECK(line.find("oomsim: ") == 0);
        CHECK(line.find("replications on 3 ranks") != std::string::npos);
        CHECK(seen.insert(line.substr(0, 13)).second); // each percentage once
        lines.push_back(line);
    }
    CHECK(lines.size() == 5);
    CHECK(r.err.find(" 16%  400/2400 replications on 3 ranks") != std::string::npos);
    // one CSV, from rank 0: a header and 6 cells
    CHECK(std::count(r.out.begin(), r.out.end(), '\n') == 7);
}

namespace {

// About 100 s of work on `ranks` ranks, -o into t; rank `rank` gets `sig`
// after half a second.  Whatever the failure, nothing is written.
RunResult signalled(unsigned ranks, const char *rank, const char *sig)
{
    TempDir t;
    RunResult r = run_on(ranks, {"-r", "50000", "-j", "1"}, t.file("out"),
                         {source_path("tests/mpi/signal_rank.sh"), rank, sig, "0.5"});
    CHECK(!exists(t.file("out")));
    CHECK(r.out.empty());
    return r;
}

} // namespace

TEST_CASE("mpirun: a rank killed mid-run fails the run, named, with nothing written",
          "[mpi][failure]")
{
    RunResult r = signalled(2, "1", "KILL");
    INFO(r.err);
    CHECK(r.status != 0);
    CHECK(r.err.find("rank 1") != std::string::npos);
    CHECK(r.err.find("exited on signal 9") != std::string::npos);
}

TEST_CASE("mpirun: a rank interrupted stops every rank, named, with nothing written",
          "[mpi][failure]")
{
    RunResult r = signalled(3, "2", "INT");
    INFO(r.err);
    CHECK(r.status == 130);
    // how many rounds were gathered before the signal depends on the
    // machine's speed: any count, then rank 2 named
    size_t at = r.err.find("oomsim: interrupted: ");
    REQUIRE(at != std::string::npos);
    unsigned long long gathered = 0;
    REQUIRE(std::sscanf(r.err.c_str() + at, "oomsim: interrupted: %llu of", &gathered) == 1);
    CHECK(gathered < 300000);
    CHECK(r.err.find(" of 300000 replications gathered, nothing written (the first to stop: "
                     "rank 2: cell ", at) != std::string::npos);
}

namespace {

// The short teaching scenario (timeout-retry-storm at 40 s: two cells,
// cheap replications) in t, run whole by one process into t/whole.
struct Resumable {
    TempDir t;
    std::string scenario;
    RunResult whole;
    Resumable()
    {
        std::string text = read_file(source_path("scenarios/catalog/teach/timeout-retry-storm.yaml"));
        for (auto [from, to] : {std::pair<std::string, std::string>{"horizon: 5min", "horizon: 40s"},
                                {"for: 4min", "for: 20s"}})
            text.replace(text.find(from), from.size(), to);
        scenario = t.write("short.yaml", text);
        whole = run_on(0, {scenario, "-r", "60000", "-j", "2"}, t.file("whole"));
        INFO(whole.err);
        REQUIRE(whole.status == 0);
    }
};

} // namespace

TEST_CASE("mpirun: a rank killed mid-run leaves its last checkpoint, which three ranks resume "
          "to one process's bytes",
          "[mpi][checkpoint]")
{
    Resumable r;
    std::string ck = r.t.file("run.ck");
    // checkpoints every 0.1 s; rank 1 is killed 0.3 s after the first
    RunResult killed = run_on(2, {r.scenario, "-r", "60000", "-j", "1", "--checkpoint", ck,
                                  "--checkpoint-period", "0.1"},
                              r.t.file("never"),
                              {source_path("tests/mpi/signal_rank.sh"), "1", "KILL", "0.3",
                               "--after", ck});
    INFO(killed.err);
    CHECK(killed.status != 0);
    CHECK(killed.err.find("exited on signal 9") != std::string::npos);
    CHECK(!exists(r.t.file("never")));
    REQUIRE(exists(ck));
    RunResult resumed = run_on(3, {r.scenario, "-r", "60000", "-j", "1", "--resume", ck},
                               r.t.file("resumed"));
    INFO(resumed.err);
    REQUIRE(resumed.status == 0);
    unsigned long long done = 0, total = 0;
    size_t at = resumed.err.find("resuming from ");
    REQUIRE(at != std::string::npos);
    REQUIRE(std::sscanf(resumed.err.c_str() + at + 14 + ck.size(), ": %llu of %llu", &done,
                        &total) == 2);
    CHECK(done > 0);
    CHECK(done < total);
    same_bytes(r.t.file("whole"), r.whole, r.t.file("resumed"), resumed);
}

TEST_CASE("mpirun: SIGTERM to one rank checkpoints every rank's work and stops, and one process "
          "resumes it to the same bytes",
          "[mpi][checkpoint]")
{
    Resumable r;
    std::string ck = r.t.file("run.ck");
    RunResult stopped = run_on(3, {r.scenario, "-r", "60000", "-j", "1", "--checkpoint", ck},
                               r.t.file("never"),
                               {source_path("tests/mpi/signal_rank.sh"), "2", "TERM", "0.3"});
    INFO(stopped.err);
    CHECK(stopped.status == 143);
    CHECK(stopped.err.find("oomsim: interrupted by SIGTERM: checkpoint written to " + ck +
                           " after ") != std::string::npos);
    CHECK(!exists(r.t.file("never")));
    RunResult resumed = run_on(0, {r.scenario, "-r", "60000", "-j", "2", "--resume", ck,
                                   "--checkpoint", ck},
                               r.t.file("resumed"));
    INFO(resumed.err);
    REQUIRE(resumed.status == 0);
    same_bytes(r.t.file("whole"), r.whole, r.t.file("resumed"), resumed);
    CHECK(!exists(ck)); // the results are out: it has served
}

TEST_CASE("mpirun: ranks that load different plans, or cannot load one, do not run",
          "[mpi][failure]")
{
    TempDir t;
    // two programs in one job (mpirun's A : B), rank 1's plan differs
    std::vector<std::string> argv = mpirun(1);
    argv.insert(argv.end(), {OOMSIM_BIN, "run", "-r", "20", "-o", t.file("a"), ":", "-np",
                             "1", OOMSIM_BIN, "run", "-r", "21", "-o", t.file("a")});
    RunResult r = run(argv);
    CHECK(r.status == 1);
    CHECK(r.err.find("rank 1: the plan (scenario text, its includes, seed, replications, or "
                     "the oomsim build) differs from rank 0's") != std::string::npos);
    CHECK(!exists(t.file("a")));

    // a scenario file only rank 0 has
    std::string yaml = read_file(source_path("scenarios/catalog/teach/image-queue.yaml"));
    std::string here = t.write("here.yaml", yaml);
    argv = mpirun(1);
    argv.insert(argv.end(), {OOMSIM_BIN, "run", here, "-o", t.file("b"), ":", "-np", "1",
                             OOMSIM_BIN, "run", t.file("gone.yaml"), "-o", t.file("b")});
    r = run(argv);
    CHECK(r.status == 1);
    CHECK(r.err.find("rank 1: cannot read " + t.file("gone.yaml")) != std::string::npos);
    CHECK(!exists(t.file("b")));

    // checkpoints asked of rank 0 only: they would wait for each other
    argv = mpirun(1);
    argv.insert(argv.end(), {OOMSIM_BIN, "run", "-r", "20", "--checkpoint", t.file("ck"), ":",
                             "-np", "1", OOMSIM_BIN, "run", "-r", "20"});
    r = run(argv);
    CHECK(r.status == 1);
    CHECK(r.err.find("rank 1: --checkpoint or --resume differs from rank 0's") !=
          std::string::npos);
    CHECK(!exists(t.file("ck")));
}

TEST_CASE("mpirun: only run and calibrate spread over ranks, other commands are refused once",
          "[mpi][failure]")
{
    std::vector<std::string> argv = mpirun(2);
    argv.insert(argv.end(), {OOMSIM_BIN, "catalog"});
    RunResult r = run(argv);
    CHECK(r.status == 2);
    const std::string msg = "oomsim: only `oomsim run` and `oomsim calibrate` spread over the "
                            "ranks of an MPI job; start oomsim catalog without mpirun, or with "
                            "one rank";
    size_t at = r.err.find(msg);
    CHECK(at != std::string::npos);
    CHECK(r.err.find(msg, at + 1) == std::string::npos);
    CHECK(r.out.empty());

    // one rank is a job of one: every command works
    argv = mpirun(1);
    argv.insert(argv.end(), {OOMSIM_BIN, "catalog"});
    r = run(argv);
    CHECK(r.status == 0);
    CHECK(r.out.find("capacity-plan") != std::string::npos);
}

namespace {

// A fit for calibrate over ranks: two copies of the catalog's 2 GB
// Android Go phone held against two entries, each with a background rate
// (the session spends a minute in the background, where llm-1b dies on
// that phone in most replications), their shared spike interval the
// unknown.
std::string calibrate_plan(const TempDir &t)
{
    std::string go = read_file(source_path("scenarios/catalog/devices/android-go-2g.yaml"));
    for (const char *name : {"go-a", "go-b"}) {
        std::string d = go;
        size_t at = d.find("name: android-go-2g");
        REQUIRE(at != std::string::npos);
        d.replace(at, 19, std::string("name: ") + name);
        t.write(std::string(name) + ".yaml", d);
    }
    return t.write("fit.yaml",
                   "name: ho\nseed: 3\nreplications: 40\nhorizon: 10min\n"
                   "devices: [go-a.yaml, go-b.yaml]\ncandidates: [llm-1b]\n"
                   "workload:\n  path:\n    - cold_start\n"
                   "    - requests: {rate: \"0.2/s\", for: 1min}\n    - background: 1min\n"
                   "    - requests: {rate: \"0.2/s\", for: 30s}\n"
                   // a daily rate well inside what spikes every 10 to 900 s give on
                   // this path
                   "field:\n  sessions_per_day: 2\n  devices:\n"
                   "    - {device: go-a, lmk_rate: 55%, users: 2000, background_rate: 90%}\n"
                   "    - {device: go-b, lmk_rate: 55%, users: 2000, background_rate: 90%}\n"
                   "calibrate:\n  fit:\n    - {key: devices.*.pressure.mean, min: 10s, "
                   "max: 900s}\n");
}

// calibrate's -o directories a and b: the same files, byte for byte.
void same_fit_files(const std::string &a, const std::string &b)
{
    const std::vector<std::string> files = {"calibration.json", "report.html",
                                            "calibration.svg", "devices/go-a.yaml",
                                            "devices/go-b.yaml"};
    REQUIRE(file_names(b) == file_names(a));
    REQUIRE(file_names(b + "/devices") == file_names(a + "/devices"));
    for (const std::string &f : files) {
        INFO(f);
        REQUIRE(exists(a + "/" + f));
        CHECK(read_file(a + "/" + f) == read_file(b + "/" + f));
    }
}

RunResult calibrate_on(unsigned ranks, const std::vector<std::string> &args)
{
    std::vector<std::string> argv = ranks > 0 ? mpirun(ranks) : std::vector<std::string>{};
    argv.push_back(OOMSIM_BIN);
    argv.push_back("calibrate");
    argv.insert(argv.end(), args.begin(), args.end());
    return run(argv);
}

} // namespace

TEST_CASE("mpirun: calibrate over 2 and 3 ranks is one process's fit, to the byte, and its "
          "checkpoint resumes on another number of ranks",
          "[mpi][bytes][calibrate]")
{
    TempDir t;
    std::string plan = calibrate_plan(t);
    setenv("SOURCE_DATE_EPOCH", "86400", 1); // the profiles' date
    const std::vector<std::string> fit = {plan, "--holdout", "--max-replications", "80",
                                          "-j", "1"};
    std::vector<std::string> one = fit;
    one.insert(one.end(), {"-o", t.file("one")});
    RunResult base = calibrate_on(0, one);
    INFO(base.out << base.err);
    REQUIRE(base.status == 0);
    CHECK(base.out.find("go-b (background)") != std::string::npos);
    // each held-out background rate is predicted from the other phone's
    // background counts, and its observed 90 % falls inside (with the
    // counts lost it would be 0 %, outside)
    size_t held = base.out.find("held out:");
    REQUIRE(held != std::string::npos);
    unsigned inside = 0;
    for (size_t at = held; (at = base.out.find("(background)", at)) != std::string::npos; at++)
        inside += base.out.compare(base.out.find('\n', at) - 3, 3, "yes") == 0;
    CHECK(inside == 2);
    CHECK(read_file(t.file("one/calibration.json")).find("\"rate\": \"background\"") !=
          std::string::npos);
    for (unsigned ranks : {2u, 3u}) {
        INFO(ranks << " ranks");
        std::string dir = t.file("np" + std::to_string(ranks));
        std::vector<std::string> args = fit;
        args.insert(args.end(), {"-o", dir, "--checkpoint", dir + ".ck"});
        RunResult r = calibrate_on(ranks, args);
        INFO(r.err);
        REQUIRE(r.status == 0);
        CHECK(r.out == base.out); // once, from rank 0
        // on stderr at most rank 0's progress (a plan run over a second)
        size_t at = 0;
        for (size_t nl; (nl = r.err.find('\n', at)) != std::string::npos; at = nl + 1) {
            std::string line = r.err.substr(at, nl - at);
            INFO(line);
            CHECK(line.find("oomsim: ") == 0);
            CHECK(line.find(" replications on " + std::to_string(ranks) + " ranks") !=
                  std::string::npos);
        }
        CHECK(at == r.err.size());
        same_fit_files(t.file("one"), dir);
        CHECK(exists(dir + ".ck")); // rank 0 wrote it
    }
    // the checkpoint of 3 ranks replayed by 2 (rank 0 reads it, every rank
    // takes its counts): the same fit
    std::vector<std::string> again = fit;
    again.insert(again.end(), {"-o", t.file("resumed"), "--resume", t.file("np3.ck")});
    RunResult resumed = calibrate_on(2, again);
    unsetenv("SOURCE_DATE_EPOCH");
    INFO(resumed.err);
    REQUIRE(resumed.status == 0);
    CHECK(resumed.out == base.out);
    same_fit_files(t.file("one"), t.file("resumed"));
}

TEST_CASE("mpirun: calibrate on ranks given different fit options does not run, and says which",
          "[mpi][failure][calibrate]")
{
    TempDir t;
    std::string plan = calibrate_plan(t);
    // --holdout on rank 0 only: the ranks would ask for different runs
    std::vector<std::string> argv = mpirun(1);
    argv.insert(argv.end(), {OOMSIM_BIN, "calibrate", plan, "--holdout", "-o", t.file("out"), ":",
                             "-np", "1", OOMSIM_BIN, "calibrate", plan});
    RunResult r = run(argv);
    CHECK(r.status == 1);
    CHECK(r.err.find("rank 1: the plan (scenario text, its includes) or the fit's options") !=
          std::string::npos);
    CHECK(r.out.empty());
    CHECK(!exists(t.file("out")));
    // a rank whose plan has no calibrate block
    std::string bare = t.write("bare.yaml", read_file(plan).substr(0, read_file(plan).find(
                                                "calibrate:")));
    argv = mpirun(1);
    argv.insert(argv.end(), {OOMSIM_BIN, "calibrate", plan, ":", "-np", "1", OOMSIM_BIN,
                             "calibrate", bare});
    r = run(argv);
    CHECK(r.status == 1);
    CHECK(r.err.find("rank 1: ") != std::string::npos);
    CHECK(r.err.find("the plan has no calibrate block") != std::string::npos);
}
