// test_alloc_sweep.cpp - every allocation, one at a time, fails: while a
// scenario loads, while a trace is read (its three encodings) and replayed
// with -o, and during a short run with -o.  For every N the code under
// test either gives a clean error (its status, one line that says memory
// ran out, no file) or, where the C library absorbs the failure (stdio
// falls back to unbuffered), the same result as a whole run; and it frees
// every block it allocated (failalloc's book, and LeakSanitizer in the
// sanitizer build, whose allocator hook is the C library's, so the
// engine's own allocations are swept there too).  docs/fuzzing.md,
// "Allocation failures", says what is swept and what is spared.
#include "alloc/failalloc.h"
#include "cli/cli.h"
#include "replay/replay.h"
#include "scenarios/scenarios.h"
#include "traces/traces.h"
#include "shim/capture.hpp"
#include "shim/shim.hpp"

#include <catch2/catch.hpp>

#include <dlfcn.h>

#include <cstdio>

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/lsan_interface.h>
#define OOMSIM_LSAN 1
#endif

namespace {

// FNV-1a, to compare results without allocating while armed.
struct Digest {
    uint64_t h = 1469598103934665603ull;
    void bytes(const void *p, size_t n)
    {
        const unsigned char *b = static_cast<const unsigned char *>(p);
        for (size_t i = 0; i < n; i++)
            h = (h ^ b[i]) * 1099511628211ull;
    }
    void str(const char *s) { bytes(s, std::strlen(s) + 1); }
    template <class T> void num(T v) { bytes(&v, sizeof v); }
};

// The shared object (file name) holding a code address.
std::string object_of(const void *addr)
{
    Dl_info info;
    if (addr == nullptr || ::dladdr(addr, &info) == 0 || info.dli_fname == nullptr)
        return "?";
    const char *slash = std::strrchr(info.dli_fname, '/');
    return slash != nullptr ? slash + 1 : info.dli_fname;
}

std::string describe_leak(const failalloc_report &rep)
{
    const void *callers[16];
    size_t n = failalloc_live_callers(callers, 16);
    std::ostringstream os;
    os << rep.live_blocks << " blocks (" << rep.live_bytes << " bytes) not freed after the "
       << "failure asked for by " << object_of(rep.fail_caller) << "; allocated by";
    for (size_t i = 0; i < n; i++) {
        char addr[32];
        std::snprintf(addr, sizeof addr, "%p", callers[i]);
        os << " " << object_of(callers[i]) << "(" << addr << ")";
    }
    return os.str();
}

// The code whose allocations fail in turn: oomsim's and the libraries'
// that survive their own failures (msgpack-c, GSL, jansson when it builds
// and dumps), and the C library's on their behalf.  The others are spared:
// - libfyaml 0.7.12: fy_parse_input_append checks the parser instead of
//   the input it just failed to create and dereferences NULL;
//   fy_parser_create keeps a reference to the diagnostics when its setup
//   fails;
// - PLplot 5.15 and its svg driver: pllib_init goes on after libltdl
//   fails and dereferences NULL; elsewhere plexit ends the process;
// - jansson 2.14's parser (json_loadb, wrapped by alloc/spare_jansson.c):
//   its lexer ignores a failed append to the token text and then copies
//   the string past its end.
void restrict_failures()
{
    static bool done = false;
    if (done)
        return;
    done = true;
    static const char *const failable[] = {"",          "libjansson.so", "libmsgpackc.so",
                                           "libgsl.so", "libz.so",      "libzstd.so"};
    REQUIRE(failalloc_only(failable, sizeof failable / sizeof *failable));
}

struct Tally {
    uint64_t calls = 0;    // failable allocations of a whole step
    uint64_t spared = 0;   // libfyaml's
    uint64_t errors = 0;   // failures that gave a clean error
    uint64_t absorbed = 0; // failures absorbed, with the same result
};

// Runs step() with the n-th allocation failing, for n = 1, 2, ... until a
// step does not reach its n-th allocation.  before() runs unarmed before
// each step; check(failed, result) after it, unarmed, and returns 1 when
// the step gave a clean error, 0 when it gave the whole step's result.
// step() itself must not allocate (it returns plain data).
template <class Before, class Step, class Check>
Tally sweep(const std::string &what, Before before, Step step, Check check)
{
    restrict_failures();
    before();
    check(false, step()); // warm-up: one-time allocations of the libraries
    before();
    failalloc_report whole;
    failalloc_arm(0);
    auto r0 = step();
    failalloc_disarm(&whole);
    INFO(what << ": a whole step");
    std::string leak = whole.live_blocks > 0 ? describe_leak(whole) : std::string();
    REQUIRE(check(false, r0) == 0); /* first: it ends a capture */
    REQUIRE(!whole.overflow);
    INFO(leak);
    REQUIRE(whole.live_blocks == 0);
    REQUIRE(whole.calls > 0);
    Tally t;
    t.calls = whole.calls;
    t.spared = whole.spared;
    for (uint64_t n = 1;; n++) {
        before();
        INFO(what << ": allocation " << n << " of " << whole.calls << " failed");
        failalloc_report rep;
        failalloc_arm(n);
        auto r = step();
        failalloc_disarm(&rep);
        std::string lost = rep.live_blocks > 0 ? describe_leak(rep) : std::string();
        int error = check(rep.failed != 0, r); /* first: it ends a capture */
        REQUIRE(!rep.overflow);
        INFO(lost);
        REQUIRE(rep.live_blocks == 0);
        if (!rep.failed)
            return t;
        (error ? t.errors : t.absorbed)++;
    }
}

void lsan_check()
{
#ifdef OOMSIM_LSAN
    REQUIRE(__lsan_do_recoverable_leak_check() == 0);
#endif
}

void report(const std::string &what, const Tally &t)
{
    WARN(what << ": " << t.calls << " allocations failed in turn (" << t.errors
              << " clean errors, " << t.absorbed << " absorbed; " << t.spared
              << " spared: libfyaml's, PLplot's, jansson's parser's)");
}

// A message says memory ran out.
bool says_memory(const std::string &msg)
{
    return msg.find("out of memory") != std::string::npos ||
           msg.find("Cannot allocate memory") != std::string::npos;
}

// A subcommand run in-process with -o OUT: either exit status 3 with one
// line saying memory ran out and no OUT, or the whole run's stdout and
// files.
Tally sweep_cli(const std::string &what, int (*fn)(int, char **), std::vector<std::string> args,
                const std::string &out, shim::Capture &cap)
{
    std::vector<char *> argv;
    for (auto &a : args)
        argv.push_back(&a[0]);
    argv.push_back(nullptr);
    int argc = static_cast<int>(args.size());
    bool have_reference = false;
    std::string ref_out, ref_files;
    return sweep(
        what,
        [&] {
            shim::remove_dir(out);
            cap.begin();
        },
        [&] { return fn(argc, argv.data()); },
        [&](bool failed, int status) {
            auto text = cap.end();
            INFO("exit status " << status << ", stderr: " << text.second);
            if (status == CLI_OK) {
                std::string files = shim::listing(out);
                if (!have_reference) {
                    REQUIRE(text.second.empty());
                    REQUIRE(std::count(files.begin(), files.end(), '\n') > 8);
                    ref_out = text.first;
                    ref_files = files;
                    have_reference = true;
                }
                REQUIRE(text.first == ref_out);
                if (files != ref_files) {
                    size_t at = 0;
                    while (at < files.size() && at < ref_files.size() && files[at] == ref_files[at])
                        at++;
                    size_t from = at > 200 ? at - 200 : 0;
                    INFO("the files differ at byte " << at << ":\n"
                         << ref_files.substr(from, 200) << "\n--- then:\n"
                         << ref_files.substr(at, 200) << "\n--- now:\n"
                         << files.substr(at, 200));
                    REQUIRE(files == ref_files);
                }
                return 0;
            }
            REQUIRE(failed);
            REQUIRE(status == CLI_FAILURE);
            REQUIRE(std::count(text.second.begin(), text.second.end(), '\n') == 1);
            REQUIRE(says_memory(text.second));
            REQUIRE(!shim::exists(out));
            return 1;
        });
}

const std::string teach = std::string(OOMSIM_SOURCE_DIR) + "/scenarios/catalog/teach/";

struct LoadResult {
    int rc;
    uint64_t digest;
    sim_error err;
};

} // namespace

TEST_CASE("loading a scenario survives every allocation failing", "[alloc]")
{
    for (const char *name : {"", "timeout-retry-storm.yaml", "split-switch-overlap.yaml"}) {
        std::string file = *name != '\0' ? teach + name : std::string();
        std::string what = *name != '\0' ? name : "the default plan";
        uint64_t reference = 0;
        Tally t = sweep(
            what, [] {},
            [&] {
                LoadResult r;
                sim_error_clear(&r.err);
                scn_scenario s;
                r.rc = file.empty() ? scn_scenario_load_catalog(SCN_DEFAULT_SCENARIO, &s, &r.err)
                                    : scn_scenario_load(file.c_str(), &s, &r.err);
                Digest d;
                if (r.rc == SIM_OK) {
                    d.str(s.name);
                    d.str(s.about);
                    d.num(s.seed);
                    d.num(s.replications);
                    d.num(s.horizon);
                    d.num(s.ncells);
                    for (unsigned i = 0; i < s.ndevices; i++)
                        d.str(s.devices[i].name);
                    for (unsigned i = 0; i < s.ncandidates; i++)
                        d.str(s.candidates[i].id);
                    for (unsigned i = 0; i < s.npolicies; i++)
                        d.str(s.policy_json[i]);
                    scn_scenario_release(&s);
                }
                r.digest = d.h;
                return r;
            },
            [&](bool failed, const LoadResult &r) {
                INFO("error: " << r.err.msg);
                if (r.rc == SIM_OK) {
                    if (reference == 0)
                        reference = r.digest;
                    REQUIRE(r.digest == reference);
                    return 0;
                }
                REQUIRE(failed);
                REQUIRE(r.rc == SIM_ENOMEM);
                REQUIRE(says_memory(r.err.msg));
                return 1;
            });
        report("loading " + what, t);
        lsan_check();
    }
}

namespace {
struct ReadResult {
    int rc;
    uint64_t events, digest;
    sim_error err;
};

// A read under a failing allocation: the whole read's events (the first
// whole read is the reference), or SIM_ENOMEM saying memory ran out.
int check_read(ReadResult &reference, bool failed, const ReadResult &r)
{
    INFO("error: " << r.err.msg);
    if (r.rc == SIM_OK) {
        if (reference.events == 0)
            reference = r;
        REQUIRE(r.events > 0);
        REQUIRE(r.events == reference.events);
        REQUIRE(r.digest == reference.digest);
        return 0;
    }
    REQUIRE(failed);
    REQUIRE(r.rc == SIM_ENOMEM);
    REQUIRE(says_memory(r.err.msg));
    return 1;
}
} // namespace

TEST_CASE("reading a trace survives every allocation failing", "[alloc]")
{
    shim::TempDir dir;
    shim::Capture cap(dir);
    std::string scenario = shim::short_scenario(dir);
    for (const char *ext : {"json", "jsonl", "msgpack"}) {
        std::string trace = dir.file(std::string("trace.") + ext);
        {
            std::string a0 = scenario, a1 = "-o", a2 = trace;
            char *argv[] = {&a0[0], &a1[0], &a2[0], nullptr};
            cap.begin();
            int status = cli_gen(3, argv);
            cap.end();
            REQUIRE(status == CLI_OK);
        }
        // the reader alone, every event
        ReadResult reference{};
        Tally t = sweep(
            ext, [] {},
            [&] {
                ReadResult r{};
                sim_error_clear(&r.err);
                trc_reader *rd = trc_open(trace.c_str(), -1, nullptr, &r.err);
                r.rc = rd == nullptr ? r.err.code : SIM_OK;
                Digest d;
                if (rd != nullptr) {
                    trc_event e;
                    while ((r.rc = trc_next(rd, &e, &r.err)) == 1) {
                        r.events++;
                        d.num(e.has);
                        d.num(e.time_us);
                        d.num(e.stage);
                        d.num(e.kind);
                        d.str(e.part);
                        d.bytes(e.mem, sizeof e.mem);
                        d.bytes(e.alloc, sizeof e.alloc);
                    }
                    trc_close(rd);
                }
                r.digest = d.h;
                return r;
            },
            [&](bool failed, const ReadResult &r) { return check_read(reference, failed, r); });
        report(std::string("reading a .") + ext + " trace", t);
        // replayed against the scenario, with every file of -o
        std::string out = dir.file(std::string("out-") + ext);
        t = sweep_cli(std::string("replay of a .") + ext + " trace", cli_replay,
                      {trace, "--scenario", scenario, "-o", out, "--format", "json"}, out, cap);
        report(std::string("replay -o of a .") + ext + " trace", t);
        lsan_check();
    }
}

int digest_event(void *ctx, const trc_event *e, sim_error *)
{
    Digest *d = static_cast<Digest *>(ctx);
    d->num(e->has);
    d->num(e->time_us);
    d->num(e->stage);
    d->num(e->kind);
    d->str(e->part);
    d->str(e->error);
    d->bytes(e->mem, sizeof e->mem);
    d->bytes(e->alloc, sizeof e->alloc);
    d->num(e->duration_us);
    return SIM_OK;
}

TEST_CASE("importing a Perfetto trace survives every allocation failing", "[alloc]")
{
    // the recorded session, plain and in zlib and zstd bundles (the fuzz
    // corpus's seeds), and the skeleton written from it
    for (const char *name : {"session", "session-zlib", "session-zstd"}) {
        std::string bytes = shim::read_file(std::string(OOMSIM_SOURCE_DIR) +
                                            "/tests/fuzz/corpus/perfetto/" + name);
        ReadResult reference{};
        Tally t = sweep(
            name, [] {},
            [&] {
                ReadResult r{};
                sim_error_clear(&r.err);
                trc_pf_opts o = {"com.example.camera", -1, "camera", 1};
                trc_pf_summary sum;
                Digest d;
                r.rc = trc_pf_import_buffer(bytes.data(), bytes.size(), name, &o, digest_event,
                                            &d, &sum, &r.err);
                if (r.rc == SIM_OK) {
                    char *yaml = scn_import_perfetto_candidate(&sum, "camera", "a test");
                    if (yaml == nullptr)
                        r.rc = sim_error_set(&r.err, SIM_ENOMEM, "out of memory");
                    else
                        d.str(yaml);
                    free(yaml);
                }
                r.events = sum.events;
                trc_pf_summary_free(&sum);
                r.digest = d.h;
                return r;
            },
            [&](bool failed, const ReadResult &r) { return check_read(reference, failed, r); });
        report(std::string("importing ") + name, t);
    }
    lsan_check();
}

TEST_CASE("every importer survives every allocation failing", "[alloc]")
{
    // scn_import on each format's fixture: the YAML whole, or SIM_ENOMEM
    // saying memory ran out
    struct Case {
        scn_import_kind kind;
        const char *file;
    } cases[] = {{SCN_IMPORT_BENCHMARK_MODEL, "benchmark_model_xnnpack.log"},
                 {SCN_IMPORT_MEMINFO, "meminfo_android13.txt"},
                 {SCN_IMPORT_LLAMA_CPP, "llama_cpp_android.log"},
                 {SCN_IMPORT_ONNXRUNTIME, "onnxruntime_profile.json"},
                 {SCN_IMPORT_METRICKIT, "metrickit_days.json"},
                 {SCN_IMPORT_PLAY_VITALS, "play_vitals_lmk.json"}};
    for (const auto &c : cases) {
        std::string text = shim::read_file(std::string(OOMSIM_SOURCE_DIR) + "/tests/data/imports/" +
                                           c.file);
        ReadResult reference{};
        Tally t = sweep(
            c.file, [] {},
            [&] {
                ReadResult r{};
                sim_error_clear(&r.err);
                scn_import_input in = {c.file, text.data(), text.size()};
                scn_import_opts o = {nullptr, nullptr, nullptr, 0, nullptr, 0, 0};
                char *yaml = nullptr;
                r.rc = scn_import(c.kind, &in, 1, &o, &yaml, &r.err);
                Digest d;
                if (yaml != nullptr) {
                    d.str(yaml);
                    r.events = std::strlen(yaml);
                }
                free(yaml);
                r.digest = d.h;
                return r;
            },
            [&](bool failed, const ReadResult &r) { return check_read(reference, failed, r); });
        report(std::string("importing ") + c.file, t);
    }
    lsan_check();
}

TEST_CASE("reading JetsamEvent reports survives every allocation failing", "[alloc]")
{
    // rpl_ips_parse on each fixture, the app's entry and every killed one:
    // the records whole, or SIM_ENOMEM saying memory ran out
    for (const char *file : {"JetsamEvent-2024-03-02-101500.ips", "JetsamEvent-2025-06-14-091230.ips"}) {
        std::string text = shim::read_file(std::string(OOMSIM_SOURCE_DIR) + "/tests/data/ips/" +
                                           file);
        for (const char *process : {"LLMChat", static_cast<const char *>(nullptr)}) {
            ReadResult reference{};
            Tally t = sweep(
                file, [] {},
                [&] {
                    ReadResult r{};
                    sim_error_clear(&r.err);
                    rpl_exit *x = nullptr;
                    size_t n = 0;
                    r.rc = rpl_ips_parse(text.data(), text.size(), file, process, &x, &n, &r.err);
                    Digest d;
                    for (size_t k = 0; k < n; k++) {
                        d.str(x[k].process);
                        d.str(x[k].cause);
                        d.num(x[k].rss_kb);
                    }
                    std::free(x);
                    r.events = n;
                    r.digest = d.h;
                    return r;
                },
                [&](bool failed, const ReadResult &r) { return check_read(reference, failed, r); });
            report(std::string("reading ") + file, t);
        }
    }
    lsan_check();
}

namespace {
// The catalog profile of the class, for rpl_device_import under the sweep:
// a fixed text, so that nothing but the import allocates.
const char *const device_catalog_text =
    "name: base\nos: android\nram: 4GiB\nsystem: 1GiB\ncached_apps: 500MiB\n"
    "kill: {rule: lmk, mode: psi, watermarks: {min: 8MiB, low: 12MiB, high: 16MiB}}\n";
const char *const device_catalog_ios =
    "name: base\nos: ios\nram: 4GiB\nsystem: 1GiB\nkill: {rule: jetsam, limit: 2GiB}\n";
int device_catalog(void *, int os, double, const char **name, const char **yaml, size_t *len,
                   sim_error *)
{
    *name = "base";
    *yaml = os == MDL_OS_IOS ? device_catalog_ios : device_catalog_text;
    *len = std::strlen(*yaml);
    return SIM_OK;
}
} // namespace

TEST_CASE("importing a device profile survives every allocation failing", "[alloc]")
{
    // rpl_device_import on a bugreport, on JetsamEvent reports (three
    // make the fitted distributions) and on a Perfetto trace with a
    // bugreport: the profile whole, or SIM_ENOMEM
    // saying memory ran out.  The zip is left out: libarchive (whose own
    // allocations are spared) keeps a small block of the C library's from
    // one archive to the next, which the sweep would count as ours; valgrind
    // finds no leak in a whole import of it (memcheck_import_device)
    auto data = [](const char *rel) {
        return shim::read_file(std::string(OOMSIM_SOURCE_DIR) + "/tests/data/" + rel);
    };
    const std::vector<std::vector<std::string>> sets = {
        {data("devices/bugreport-android13.txt")},
        {data("devices/bugreport-android13.txt"), data("devices/bugreport-android13.txt"),
         data("devices/bugreport-android9.txt")},
        {data("ips/JetsamEvent-2024-03-02-101500.ips"), data("ips/JetsamEvent-2024-03-02-101800.ips"),
         data("ips/JetsamEvent-2024-03-02-102000.ips")},
        // a Perfetto trace of the phone (phone.textpb, encoded), beside a bugreport
        {data("../fuzz/corpus/device/seed-phone.pftrace"), data("devices/bugreport-android13.txt")},
    };
    for (const auto &set : sets) {
        std::vector<rpl_capture> in;
        for (const std::string &t : set)
            in.push_back(rpl_capture{"capture.txt", t.data(), t.size(), nullptr});
        ReadResult reference{};
        Tally t = sweep(
            "device", [] {},
            [&] {
                ReadResult r{};
                sim_error_clear(&r.err);
                rpl_device_opts o = {nullptr, 1, device_catalog, nullptr, nullptr};
                rpl_device_yaml *v = nullptr;
                unsigned n = 0;
                r.rc = rpl_device_import(in.data(), static_cast<unsigned>(in.size()), &o, &v, &n,
                                         &r.err);
                Digest d;
                for (unsigned k = 0; k < n; k++)
                    d.str(v[k].yaml);
                rpl_device_yaml_free(v, n);
                r.events = n;
                r.digest = d.h;
                return r;
            },
            [&](bool failed, const ReadResult &r) { return check_read(reference, failed, r); });
        report("importing a device profile", t);
    }
    lsan_check();
}

TEST_CASE("a short run survives every allocation failing", "[alloc]")
{
    shim::TempDir dir;
    shim::Capture cap(dir);
    std::string out = dir.file("out");
    Tally t = sweep_cli("run", cli_run,
                        {shim::short_scenario(dir), "-r", "3", "-j", "1", "-o", out}, out, cap);
    report("run -r 3 -o", t);
    lsan_check();
}
