// Checkpoints and resumed runs (docs/results.md "Checkpoints"): a run
// stopped at every round in turn and resumed each time, on other thread
// counts, gives the uninterrupted run's document to the byte; so does one
// interrupted by SIGINT, SIGTERM or SIGUSR1 at about half; a checkpoint of
// another run, a truncated, corrupt or foreign one is refused with what is
// wrong; and a file size limit or a read-only directory fails a command
// cleanly.  (tests/test_mpi.cpp resumes across MPI ranks; the I/O sweep,
// tests/test_io_sweep.cpp, fails every output call of a checkpoint.)
#include "cli/cli.h"
#include "results/results.h"
#include "scenarios/scenarios.h"
#include "shim/capture.hpp"
#include "shim/shim.hpp"

#include <catch2/catch.hpp>

#include <csignal>
#include <chrono>
#include <cstring>
#include <thread>

#include <zlib.h>

using namespace shim;

namespace {

// A scenario file loaded as `oomsim run` loads it ("": the default
// plan), and its plan.
struct Planned {
    scn_scenario s{};
    res_plan plan{};
    const char **labels = nullptr;
    Planned(const std::string &path, uint64_t reps)
    {
        sim_error err;
        sim_error_clear(&err);
        int rc = cli_load_scenario(path.empty() ? nullptr : path.c_str(), &s, &err);
        INFO(err.msg);
        REQUIRE(rc == SIM_OK);
        s.replications = reps;
        REQUIRE(cli_plan_of(&s, &plan, &labels, &err) == SIM_OK);
    }
    ~Planned()
    {
        std::free(labels);
        scn_scenario_release(&s);
    }
    Planned(const Planned &) = delete;
    Planned &operator=(const Planned &) = delete;
};

// The document of a run's result, which it frees.
std::string document_of(const res_plan &plan, res_result &r)
{
    char *json = res_document_json(&plan, &r);
    res_result_free(&r);
    REQUIRE(json != nullptr);
    std::string doc(json);
    std::free(json);
    return doc;
}

// The plan's result document, run whole on `threads` threads.
std::string document(const res_plan &plan, unsigned threads)
{
    res_result r;
    sim_error err;
    sim_error_clear(&err);
    int rc = res_run(&plan, threads, nullptr, nullptr, &r, &err);
    INFO(err.msg);
    REQUIRE(rc == SIM_OK);
    return document_of(plan, r);
}

// Runs the plan one round at a time: each call stops after the round
// that follows the checkpoint it resumed from (a request set from the
// start), until the run ends; the threads change from call to call.
// Returns the document and counts the calls.
std::string round_by_round(res_plan plan, const std::string &ck, unsigned *calls,
                           uint64_t *largest)
{
    volatile sig_atomic_t asked = 1;
    res_checkpoint c{};
    c.path = ck.c_str();
    c.period = 1e6;
    c.request = &asked;
    plan.checkpoint = &c;
    const unsigned threads[] = {1, 3, 2};
    *largest = 0;
    for (*calls = 0;; (*calls)++) {
        REQUIRE(*calls < 100);
        res_resume *resume = nullptr;
        sim_error err;
        sim_error_clear(&err);
        if (*calls > 0) {
            int rc = res_resume_load(&plan, ck.c_str(), &resume, &err);
            INFO(err.msg);
            REQUIRE(rc == SIM_OK);
        }
        c.resume = resume;
        c.written = 0;
        res_result r;
        int rc = res_run(&plan, threads[*calls % 3], nullptr, nullptr, &r, &err);
        res_resume_free(resume);
        INFO("call " << *calls << ": " << err.msg);
        if (rc == SIM_EINTR) {
            REQUIRE(c.written == 1);
            uint64_t size = read_file(ck).size();
            *largest = std::max(*largest, size);
            continue;
        }
        REQUIRE(rc == SIM_OK);
        return document_of(plan, r);
    }
}

// The CRC-32 trailer of a checkpoint recomputed after a change, so that
// what is tested is the check behind it.
void reseal(std::string &bytes)
{
    uLong crc = crc32(0L, Z_NULL, 0);
    crc = crc32(crc, reinterpret_cast<const Bytef *>(bytes.data()),
                static_cast<uInt>(bytes.size() - 8));
    uint64_t v = crc;
    std::memcpy(&bytes[bytes.size() - 8], &v, 8);
}

void put_u64(std::string &bytes, size_t at, uint64_t v)
{
    std::memcpy(&bytes[at], &v, 8);
}

// Waits until process pid catches signal sig (its SigCgt mask), at most
// 20 s: a signal sent before oomsim installed its handler would end it.
void wait_caught(pid_t pid, int sig)
{
    for (int i = 0; i < 2000; i++) {
        std::string status;
        try {
            status = read_file("/proc/" + std::to_string(pid) + "/status");
        } catch (const std::exception &) {
            return;
        }
        size_t at = status.find("SigCgt:");
        if (at != std::string::npos) {
            unsigned long long mask = std::strtoull(status.c_str() + at + 7, nullptr, 16);
            if ((mask >> (sig - 1)) & 1u)
                return;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
}

// The replications a checkpoint of a 6000-replication run says are done
// (ck_header in results/checkpoint.c: the cell at byte 168, the running
// cell's replications at 176); 0 while there is none.
uint64_t done_so_far(const std::string &ck)
{
    std::string bytes;
    try {
        bytes = read_file(ck);
    } catch (const std::exception &) {
        return 0;
    }
    if (bytes.size() < 184)
        return 0;
    uint64_t cell = 0, done = 0;
    std::memcpy(&cell, &bytes[168], 8);
    std::memcpy(&done, &bytes[176], 8);
    return cell * 6000 + done;
}

// "after N of M replications" in a message: N (M in *total).
uint64_t done_in(const std::string &err, uint64_t *total)
{
    size_t at = err.find(" after ");
    REQUIRE(at != std::string::npos);
    unsigned long long n = 0, m = 0;
    REQUIRE(std::sscanf(err.c_str() + at, " after %llu of %llu", &n, &m) == 2);
    *total = m;
    return n;
}

// Every file of two -o directories and the two stdouts, byte for byte.
void same_output(const std::string &a, const RunResult &ra, const std::string &b,
                 const RunResult &rb)
{
    CHECK(ra.out == rb.out);
    std::vector<std::string> fa = file_names(a), fb = file_names(b);
    REQUIRE(fa == fb);
    REQUIRE(std::find(fa.begin(), fa.end(), "results.json") != fa.end());
    for (const std::string &f : fa) {
        INFO(f);
        CHECK(read_file(a + "/" + f) == read_file(b + "/" + f));
    }
}

// The command run with the file size limit `blocks` (512 bytes each) and
// SIGXFSZ ignored, so that a write past it fails with EFBIG.
RunResult limited(unsigned blocks, const std::vector<std::string> &args)
{
    std::vector<std::string> argv{"/bin/sh", "-c",
                                  "ulimit -f " + std::to_string(blocks) +
                                      " && trap '' XFSZ && exec \"$0\" \"$@\"",
                                  OOMSIM_BIN};
    argv.insert(argv.end(), args.begin(), args.end());
    return run(argv);
}

// The command run unable to write into directories it does not own the
// right to: as root, without the capabilities that override permissions.
RunResult unprivileged(const std::vector<std::string> &args)
{
    std::vector<std::string> argv;
    if (::geteuid() == 0)
        argv = {"/usr/bin/setpriv", "--bounding-set=-dac_override,-dac_read_search,-fowner",
                "--inh-caps=-dac_override,-dac_read_search,-fowner"};
    argv.push_back(OOMSIM_BIN);
    argv.insert(argv.end(), args.begin(), args.end());
    return run(argv);
}

std::string tree_names(const std::string &dir)
{
    std::string all;
    for (const std::string &n : file_names(dir))
        all += n + "\n";
    // file_names leaves out names starting with '.': temporaries are such
    if (DIR *d = ::opendir(dir.c_str())) {
        while (struct dirent *e = ::readdir(d))
            if (e->d_name[0] == '.' && std::strcmp(e->d_name, ".") != 0 &&
                std::strcmp(e->d_name, "..") != 0)
                all += std::string(e->d_name) + "\n";
        ::closedir(d);
    }
    return all;
}

} // namespace

TEST_CASE("resume: stopped after every round in turn, on 1, 3 and 2 threads, the document is "
          "the uninterrupted run's",
          "[checkpoint]")
{
    TempDir t;
    std::string ck = t.file("run.ck");
    {
        // the default plan with a 1 min horizon: six cells, baselines and
        // comparisons; 2100 replications, two rounds a cell; 600 values
        // kept, so the sketches past them are checkpointed too
        std::string text =
            read_file(source_path("scenarios/catalog/scenarios/capacity-plan.yaml"));
        size_t at = text.find("\nhorizon: 10min");
        REQUIRE(at != std::string::npos);
        text.replace(at, 15, "\nhorizon: 1min");
        Planned p(t.write("plan-1min.yaml", text), 2100);
        p.plan.exact_max = 600;
        std::string whole = document(p.plan, 2);
        unsigned calls = 0;
        uint64_t largest = 0;
        std::string resumed = round_by_round(p.plan, ck, &calls, &largest);
        CHECK(calls == 12); // 6 cells x 2 rounds, each ending in a checkpoint
        REQUIRE(resumed == whole);
        // the bound docs/results.md states holds
        CHECK(largest > 0);
        CHECK(largest <= res_checkpoint_bound(&p.plan));
    }
    {
        // every value kept (the short scenario: two cells, one compared)
        Planned p(short_scenario(t), 4500);
        std::string whole = document(p.plan, 1);
        unsigned calls = 0;
        uint64_t largest = 0;
        CHECK(round_by_round(p.plan, ck, &calls, &largest) == whole);
        CHECK(calls == 6);
        CHECK(largest <= res_checkpoint_bound(&p.plan));
    }
}

TEST_CASE("resume: an LLM cell's exact request quantiles, and its buckets past them, survive "
          "a checkpoint at every round",
          "[checkpoint][generation]")
{
    // one phone, a 1B-like model, 5 requests a replication: 4500
    // replications are three rounds (2048, 2048, 404), 22,500 requests.
    // Kept whole, the pairs cross every checkpoint; with 15,000 kept, the
    // second round's push the cell past them, and its `over` must survive
    // (a restored cell that is not over must hold every request so far);
    // with 3,000, one thread's own buffer overflows within the first round.
    TempDir t;
    std::string ck = t.file("llm.ck");
    std::string path = t.write(
        "llm.yaml",
        "name: llm-ck\nhorizon: 2min\nreplications: 1\ndevices:\n"
        "  - {name: phone, os: ios, ram: 8GiB, system: 1GiB, kill: {rule: jetsam, limit: 7GiB}}\n"
        "candidates:\n  - id: llm\n    digest: 0a\n    runtime: test-1\n    parts:\n"
        "      m:\n        file: 100MiB\n        load: {mode: mmap, time: 0ms}\n"
        "        prepare: {time: 0ms}\n        generation:\n"
        "          prompt_tokens: {dist: uniform, min: 10, max: 400}\n"
        "          output_tokens: {dist: uniform, min: 10, max: 200}\n"
        "          context: 4096\n          kv_per_token: 1KiB\n"
        "          prefill: {per_token: {dist: lognormal, median: 2ms, p95: 5ms}}\n"
        "          decode: {per_token: {dist: lognormal, median: 30ms, p95: 60ms}}\n"
        "          weights: {mapped: 100MiB}\n          compute: 10MiB\n"
        "workload: {path: [cold_start, {requests: {every: 10s, count: 5}}]}\n");
    for (uint64_t kept : {UINT64_C(0), UINT64_C(15000), UINT64_C(3000)}) {
        INFO("kept " << kept);
        Planned p(path, 4500);
        p.plan.exact_max = kept;
        std::string whole = document(p.plan, 2);
        CHECK(whole.find(kept == 0 ? "\"quantiles\": \"exact\"" : "\"quantiles\": \"buckets\"") !=
              std::string::npos);
        unsigned calls = 0;
        uint64_t largest = 0;
        CHECK(round_by_round(p.plan, ck, &calls, &largest) == whole);
        CHECK(calls == 3);
        CHECK(largest <= res_checkpoint_bound(&p.plan));
    }
}

TEST_CASE("run --checkpoint: interrupted at about half by SIGINT, SIGTERM or SIGUSR1, resumed "
          "on other threads, gives the uninterrupted run's files",
          "[checkpoint][cli]")
{
    TempDir t;
    std::string scenario = short_scenario(t);
    const std::vector<std::string> args{"run", scenario, "-r", "6000"};
    std::vector<std::string> whole_args{OOMSIM_BIN};
    whole_args.insert(whole_args.end(), args.begin(), args.end());
    whole_args.insert(whole_args.end(), {"-j", "2", "-o", t.file("whole")});
    RunResult whole = run(whole_args);
    INFO(whole.err);
    REQUIRE(whole.status == 0);
    int k = 0;
    for (int sig : {SIGINT, SIGTERM, SIGUSR1}) {
        INFO("signal " << sig);
        std::string ck = t.file("run" + std::to_string(k) + ".ck");
        std::vector<std::string> argv{OOMSIM_BIN};
        argv.insert(argv.end(), args.begin(), args.end());
        argv.insert(argv.end(), {"-j", "1", "-o", t.file("never"), "--checkpoint", ck,
                                 "--checkpoint-period", "0"});
        // a checkpoint after every round: the signal once one says half
        // the replications are done, whatever the machine's speed
        RunResult stopped = run(argv, [&](pid_t pid) {
            wait_caught(pid, sig);
            for (int i = 0; i < 60000 && done_so_far(ck) < 6000; i++)
                std::this_thread::sleep_for(std::chrono::milliseconds(2));
            ::kill(pid, sig);
        });
        INFO(stopped.err);
        REQUIRE(stopped.status == 128 + sig);
        CHECK(stopped.out.empty());
        CHECK(!exists(t.file("never")));
        uint64_t total = 0, done = done_in(stopped.err, &total);
        CHECK(total == 12000);
        CHECK(done >= total / 2);
        CHECK(done < total);
        CHECK(stopped.err.find("continue with --resume " + ck) != std::string::npos);
        // resumed on two threads; with --checkpoint again the file goes once
        // the results are out, without it it stays
        std::string out = t.file("resumed" + std::to_string(k));
        argv = {OOMSIM_BIN};
        argv.insert(argv.end(), args.begin(), args.end());
        argv.insert(argv.end(), {"-j", "2", "-o", out, "--resume", ck});
        if (k != 1)
            argv.insert(argv.end(), {"--checkpoint", ck});
        RunResult resumed = run(argv);
        INFO(resumed.err);
        REQUIRE(resumed.status == 0);
        CHECK(resumed.err.find("resuming from " + ck + ": " + std::to_string(done) + " of " +
                               std::to_string(total)) != std::string::npos);
        same_output(t.file("whole"), whole, out, resumed);
        CHECK(exists(ck) == (k == 1));
        k++;
    }
}

// A checkpoint after the first round of 3000 replications of the scenario,
// written at ck; its bytes.
static std::string first_round_checkpoint(const std::string &scenario, const std::string &ck)
{
    Planned p(scenario, 3000);
    volatile sig_atomic_t asked = 1;
    res_checkpoint c{};
    c.path = ck.c_str();
    c.period = 1e6;
    c.request = &asked;
    p.plan.checkpoint = &c;
    res_result r;
    sim_error err;
    sim_error_clear(&err);
    REQUIRE(res_run(&p.plan, 1, nullptr, nullptr, &r, &err) == SIM_EINTR);
    REQUIRE(c.written == 1);
    CHECK(c.done == 2048);
    return read_file(ck);
}

TEST_CASE("run --resume: a checkpoint of another run, truncated, corrupt or not one at all is "
          "refused, saying why",
          "[checkpoint][cli]")
{
    TempDir t;
    std::string scenario = short_scenario(t), ck = t.file("run.ck");
    const std::string good = first_round_checkpoint(scenario, ck);
    auto resume = [&](const std::string &bytes, std::vector<std::string> more) {
        write_file(ck, bytes);
        std::vector<std::string> args{"run", scenario, "-r", "3000", "--resume", ck};
        args.insert(args.end(), more.begin(), more.end());
        return oomsim(args);
    };
    auto refused = [&](const RunResult &r, const std::string &why) {
        INFO(r.err);
        CHECK(r.status == 1);
        CHECK(r.out.empty());
        CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
        CHECK(r.err.find(why) != std::string::npos);
    };
    // the checkpoint itself resumes
    RunResult ok = resume(good, {});
    INFO(ok.err);
    CHECK(ok.status == 0);
    // another run: what differs is said
    refused(resume(good, {"--seed", "7"}), "a checkpoint of another run: seed 13, this run's 7");
    RunResult other_reps = oomsim({"run", scenario, "-r", "4000", "--resume", ck});
    refused(other_reps, "3000 replications, this run's 4000");
    std::string other = read_file(scenario);
    other.replace(other.find("seed: 13"), 8, "seed: 13 ");
    std::string edited = t.write("edited.yaml", other);
    refused(oomsim({"run", edited, "-r", "3000", "--resume", ck}),
            "the scenario's text differs");
    refused(oomsim({"run", "-r", "3000", "--resume", ck}), "the scenario's text differs");
    // another build: the version, the record sizes (ck_header in
    // results/checkpoint.c: the version at byte 24, the cell record's
    // size at byte 40), resealed so that its check holds
    std::string bytes = good;
    size_t v = bytes.find(SIM_VERSION);
    REQUIRE(v == 24);
    bytes.replace(v, std::strlen(SIM_VERSION), std::string(std::strlen(SIM_VERSION), '9'));
    reseal(bytes);
    refused(resume(bytes, {}), "written by oomsim 99999");
    bytes = good;
    put_u64(bytes, 40, sizeof(res_cell) + 8);
    reseal(bytes);
    refused(resume(bytes, {}), "written by a build whose records differ");
    // where it stopped, past the run's end (byte 176: the replications
    // done of the running cell), resealed: the sections are checked too
    bytes = good;
    put_u64(bytes, 176, 3001);
    reseal(bytes);
    refused(resume(bytes, {}), "the replications done");
    // truncated, one byte changed, not a checkpoint, no file
    refused(resume(good.substr(0, good.size() / 2), {}), "truncated or corrupt");
    refused(resume(good.substr(0, good.size() - 1), {}), "truncated or corrupt");
    bytes = good;
    bytes[bytes.size() / 2] ^= 0x10;
    refused(resume(bytes, {}), "truncated or corrupt");
    refused(resume("timeout-retry-storm: 3000 replications\n", {}), "not an oomsim checkpoint");
    refused(resume("", {}), "not an oomsim checkpoint");
    ::unlink(ck.c_str());
    refused(oomsim({"run", scenario, "-r", "3000", "--resume", ck}), "cannot read " + ck);
}

TEST_CASE("run --checkpoint-period and --resume: usage errors are exit 2", "[checkpoint][cli]")
{
    TempDir t;
    std::string scenario = short_scenario(t), ck = t.file("run.ck");
    // a period without a checkpoint, a period that is not one, no file
    CHECK(oomsim({"run", scenario, "--checkpoint-period", "5"}).status == 2);
    CHECK(oomsim({"run", scenario, "--checkpoint", ck, "--checkpoint-period", "-1"}).status ==
          2);
    CHECK(oomsim({"run", scenario, "--checkpoint", ck, "--checkpoint-period", "1e9"}).status ==
          2);
    CHECK(oomsim({"run", scenario, "--resume"}).status == 2);
}

TEST_CASE("a file size limit fails the output cleanly: one line, exit 3, no temporary, the "
          "earlier files as they were",
          "[checkpoint][cli][io]")
{
    TempDir t;
    std::string scenario = short_scenario(t);
    std::string out = t.file("out");
    REQUIRE(::mkdir(out.c_str(), 0777) == 0);
    write_file(out + "/results.json", "an earlier result\n");
    write_file(out + "/report.html", "an earlier report\n");
    // 16 blocks: 8 KiB, less than the report
    RunResult r = limited(16, {"run", scenario, "-r", "3", "-o", out});
    INFO(r.err);
    CHECK(r.status == 3);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    CHECK(r.err.find("File too large") != std::string::npos);
    CHECK(tree_names(out) == "report.html\nresults.json\n");
    CHECK(read_file(out + "/results.json") == "an earlier result\n");
    CHECK(read_file(out + "/report.html") == "an earlier report\n");
    // a checkpoint larger than the limit (the default plan's, after its
    // first round), and the earlier one kept
    std::string ck = t.file("run.ck");
    write_file(ck, "an earlier checkpoint\n");
    r = limited(16, {"run", "-r", "3000", "-j", "1", "--checkpoint", ck, "--checkpoint-period",
                     "0"});
    INFO(r.err);
    CHECK(r.status == 3);
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 2); // the run's time estimate first
    CHECK(r.err.find("oomsim: cannot write " + ck + ": File too large") != std::string::npos);
    CHECK(read_file(ck) == "an earlier checkpoint\n");
    CHECK(tree_names(t.path()).find(".tmp.") == std::string::npos);
    // a trace
    std::string trace = t.file("trace.json");
    write_file(trace, "an earlier trace\n");
    r = limited(1, {"gen", scenario, "-o", trace});
    CHECK(r.status == 3);
    CHECK(r.err.find("File too large") != std::string::npos);
    CHECK(read_file(trace) == "an earlier trace\n");
    CHECK(tree_names(t.path()).find(".tmp.") == std::string::npos);
}

TEST_CASE("a read-only directory fails every writing command cleanly, before any work",
          "[checkpoint][cli][io]")
{
    TempDir t;
    std::string scenario = short_scenario(t);
    std::string ro = t.file("ro");
    REQUIRE(::mkdir(ro.c_str(), 0777) == 0);
    write_file(ro + "/kept.txt", "kept\n");
    REQUIRE(::chmod(ro.c_str(), 0555) == 0);
    // can this process's children be kept from writing there at all?
    RunResult probe = unprivileged({"gen", scenario, "-o", ro + "/probe.json"});
    if (probe.status == 0 || probe.err.find("Permission denied") == std::string::npos) {
        WARN("cannot drop the right to write into a read-only directory here: " << probe.err);
        ::chmod(ro.c_str(), 0755);
        return;
    }
    struct Case {
        std::vector<std::string> args;
    } cases[] = {
        {{"run", scenario, "-r", "3", "-o", ro + "/out"}},
        {{"run", scenario, "-r", "3", "--checkpoint", ro + "/run.ck"}},
        {{"gen", scenario, "-o", ro + "/trace.json"}},
        {{"explain", scenario, "-o", ro + "/explained"}},
        {{"import", "meminfo", source_path("tests/data/imports/meminfo_android13.txt"), "-o",
          ro + "/device.yaml"}},
    };
    for (const Case &c : cases) {
        RunResult r = unprivileged(c.args);
        INFO(c.args[0] << " " << c.args.back() << ": " << r.err);
        CHECK(r.status == 3);
        CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
        CHECK(r.err.find("Permission denied") != std::string::npos);
        CHECK(tree_names(ro) == "kept.txt\n");
    }
    ::chmod(ro.c_str(), 0755);
}
