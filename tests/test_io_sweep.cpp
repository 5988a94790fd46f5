// test_io_sweep.cpp - every write, fsync, close, rename and mkdir of a
// command's output fails in turn, with ENOSPC, EIO and EFBIG (io/failio.c):
// `run -o` into a directory that holds an earlier output and into a new
// one, `run --checkpoint`, `gen -o`, `explain -o`, `import perfetto -o
// --candidate` and `import meminfo -o`.  Each time the command either
// exits 3 with one line that names the file and the reason, leaves no
// temporary file and leaves what was there before as it was, or (where
// the failed call was not its output's: a close the C library absorbs)
// gives the whole command's result.  It frees every block it allocated
// (failalloc's book) and closes every descriptor it opened.
// docs/fuzzing.md, "I/O failures", says what is swept.
#include "alloc/failalloc.h"
#include "cli/cli.h"
#include "io/failio.h"
#include "shim/capture.hpp"
#include "shim/shim.hpp"

#include <catch2/catch.hpp>

#include <dirent.h>

#include <cerrno>
#include <cstring>
#include <functional>
#include <map>

namespace {

size_t open_fds()
{
    size_t n = 0;
    if (DIR *d = ::opendir("/proc/self/fd")) {
        while (::readdir(d) != nullptr)
            n++;
        ::closedir(d);
    }
    return n;
}

struct IoTally {
    uint64_t calls = 0, errors = 0, absorbed = 0;
    std::map<std::string, uint64_t> by_call; // the clean errors, by the call that failed
};

// Runs fn(args) in-process with the work directory `work` set up by
// prior() each time: once whole (its output, stdout and the number of
// output calls), then with output call n failing with each errno, for
// n = 1 .. all of them (with `rotate`, call n with one errno, in turn).
IoTally io_sweep(const std::string &what, int (*fn)(int, char **),
                 std::vector<std::string> args, const std::string &work,
                 const std::function<void()> &prior, shim::Capture &cap, bool rotate = false)
{
    // the book of the program's own blocks and of the libraries that
    // survive allocation failures (as test_alloc_sweep.cpp keeps it): the
    // dynamic loader's, PLplot's and libfyaml's caches stay
    static const char *const booked[] = {"",          "libjansson.so", "libmsgpackc.so",
                                         "libgsl.so", "libz.so",      "libzstd.so"};
    REQUIRE(failalloc_only(booked, sizeof booked / sizeof *booked));
    std::vector<char *> argv;
    for (auto &a : args)
        argv.push_back(&a[0]);
    argv.push_back(nullptr);
    int argc = static_cast<int>(args.size());
    auto reset = [&] {
        shim::empty_dir(work);
        prior();
    };
    reset();
    cap.begin();
    int warm = fn(argc, argv.data()); // the libraries' one-time set-up
    cap.end();
    REQUIRE(warm == CLI_OK);
    reset();
    failio_report whole;
    cap.begin();
    failio_arm(0, 0);
    int status = fn(argc, argv.data());
    failio_disarm(&whole);
    auto text = cap.end();
    INFO(what << ": the whole command; stderr: " << text.second);
    REQUIRE(status == CLI_OK);
    REQUIRE(whole.calls > 0);
    const std::string ref_tree = shim::listing(work), ref_out = text.first;
    IoTally t;
    t.calls = whole.calls;
    const int errnos[] = {ENOSPC, EIO, EFBIG};
    for (uint64_t n = 1; n <= whole.calls; n++) {
        for (int k = 0; k < 3; k++) {
            if (rotate && (uint64_t)k != n % 3)
                continue;
            int e = errnos[k];
            reset();
            const std::string before = shim::listing(work);
            size_t fds = open_fds();
            failalloc_report mem;
            failio_report rep;
            cap.begin();
            failalloc_arm(0);
            failio_arm(n, e);
            status = fn(argc, argv.data());
            failio_disarm(&rep);
            failalloc_disarm(&mem);
            text = cap.end();
            INFO(what << ": output call " << n << " of " << whole.calls << " (" << rep.which
                      << ") failed with " << std::strerror(e) << "; exit status " << status
                      << ", stderr: " << text.second);
            REQUIRE(rep.failed);
            REQUIRE(mem.live_blocks == 0);
            REQUIRE(open_fds() == fds);
            if (status == CLI_OK) { // the failed call was not one the output depends on
                REQUIRE(shim::listing(work) == ref_tree);
                REQUIRE(text.first == ref_out);
                t.absorbed++;
                continue;
            }
            REQUIRE(status == CLI_FAILURE);
            REQUIRE(std::count(text.second.begin(), text.second.end(), '\n') == 1);
            REQUIRE(text.second.rfind("oomsim: ", 0) == 0);
            REQUIRE(text.second.find(std::strerror(e)) != std::string::npos);
            REQUIRE(shim::listing(work) == before); // no temporary, nothing replaced
            t.errors++;
            t.by_call[rep.which]++;
        }
    }
    return t;
}

void report(const std::string &what, const IoTally &t)
{
    std::ostringstream calls;
    for (auto &[name, n] : t.by_call)
        calls << " " << name << " " << n;
    WARN(what << ": " << t.calls << " output calls failed in turn: "
              << t.errors << " clean failures (" << calls.str() << " ), " << t.absorbed
              << " absorbed");
    CHECK(t.errors > 0);
}

std::string perfetto_trace()
{
    return shim::source_path("tests/fuzz/corpus/perfetto/session");
}

} // namespace

TEST_CASE("run -o: every output call failing leaves the earlier output as it was", "[io]")
{
    shim::TempDir dir;
    shim::Capture cap(dir);
    std::string scenario = shim::short_scenario(dir), work = dir.file("work");
    REQUIRE(::mkdir(work.c_str(), 0777) == 0);
    std::string out = work + "/out";
    // an earlier output, and a file of the user's beside it
    auto prior = [&] {
        REQUIRE(::mkdir(out.c_str(), 0777) == 0);
        shim::write_file(out + "/results.json", "{\"an earlier\": \"run\"}\n");
        shim::write_file(out + "/report.html", "<p>an earlier report</p>\n");
        shim::write_file(out + "/notes.txt", "the user's own\n");
    };
    IoTally t = io_sweep("run -o (an earlier output)", cli_run,
                         {scenario, "-r", "3", "-j", "1", "-o", out}, work, prior, cap);
    report("run -o into an earlier output", t);
    CHECK(t.by_call["rename"] > 0);
    CHECK(t.by_call["fsync"] > 0);
    CHECK(t.by_call["close"] > 0);
    CHECK(t.by_call["write"] > 0);
}

TEST_CASE("run -o: every output call failing into a new directory leaves none", "[io]")
{
    shim::TempDir dir;
    shim::Capture cap(dir);
    std::string scenario = shim::short_scenario(dir), work = dir.file("work");
    REQUIRE(::mkdir(work.c_str(), 0777) == 0);
    // the errors in turn, one per call: the sweep above tries each on each
    IoTally t = io_sweep("run -o (a new directory)", cli_run,
                         {scenario, "-r", "2", "-j", "1", "-o", work + "/new"}, work, [] {}, cap,
                         true);
    report("run -o into a new directory", t);
    CHECK(t.by_call["mkdir"] > 0);
}

TEST_CASE("gen -o and explain -o: every output call failing leaves the earlier files", "[io]")
{
    shim::TempDir dir;
    shim::Capture cap(dir);
    std::string scenario = shim::short_scenario(dir), work = dir.file("work");
    REQUIRE(::mkdir(work.c_str(), 0777) == 0);
    for (const char *name : {"trace.json", "trace.msgpack"}) {
        std::string trace = work + "/" + name;
        IoTally t = io_sweep(std::string("gen -o ") + name, cli_gen, {scenario, "-o", trace},
                             work, [&] { shim::write_file(trace, "an earlier trace\n"); }, cap);
        report(std::string("gen -o ") + name, t);
    }
    std::string ex = work + "/explained";
    IoTally t = io_sweep(
        "explain -o", cli_explain, {scenario, "-o", ex}, work,
        [&] {
            REQUIRE(::mkdir(ex.c_str(), 0777) == 0);
            shim::write_file(ex + "/timeline.svg", "<svg/>\n");
        },
        cap);
    report("explain -o", t);
}

TEST_CASE("import -o: every output call failing leaves the earlier files", "[io]")
{
    shim::TempDir dir;
    shim::Capture cap(dir);
    std::string work = dir.file("work");
    REQUIRE(::mkdir(work.c_str(), 0777) == 0);
    std::string trace = work + "/camera.jsonl", cand = work + "/camera.yaml";
    // the trace and the candidate are a pair: both or neither
    IoTally t = io_sweep(
        "import perfetto", cli_import,
        {"perfetto", perfetto_trace(), "--process", "com.example.camera", "--id", "camera", "-o",
         trace, "--candidate", cand},
        work,
        [&] {
            shim::write_file(trace, "an earlier trace\n");
            shim::write_file(cand, "an earlier candidate\n");
        },
        cap);
    report("import perfetto -o --candidate", t);
    std::string yaml = work + "/device.yaml";
    t = io_sweep("import meminfo", cli_import,
                 {"meminfo", shim::source_path("tests/data/imports/meminfo_android13.txt"), "-o",
                  yaml},
                 work, [&] { shim::write_file(yaml, "an earlier device\n"); }, cap);
    report("import meminfo -o", t);
}

TEST_CASE("run --checkpoint: every output call failing leaves the earlier checkpoint", "[io]")
{
    shim::TempDir dir;
    shim::Capture cap(dir);
    // one cell of the short scenario: one round, so one checkpoint
    std::string text = shim::read_file(shim::short_scenario(dir));
    const std::string axis = "cancel_on_timeout: [false, true]";
    size_t at = text.find(axis);
    REQUIRE(at != std::string::npos);
    text.replace(at, axis.size(), "cancel_on_timeout: true");
    std::string scenario = dir.write("one-cell.yaml", text), work = dir.file("work");
    REQUIRE(::mkdir(work.c_str(), 0777) == 0);
    std::string ck = work + "/run.ck";
    // the run writes its checkpoint after its one round, and removes it
    // once the results are out
    IoTally t = io_sweep("run --checkpoint", cli_run,
                         {scenario, "-r", "5", "-j", "1", "--checkpoint", ck,
                          "--checkpoint-period", "0"},
                         work, [&] { shim::write_file(ck, "an earlier checkpoint\n"); }, cap);
    report("run --checkpoint", t);
    CHECK(t.by_call["write"] > 0);
    CHECK(t.by_call["rename"] > 0);
}
