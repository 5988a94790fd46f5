// `oomsim probe` against the reference probe on a generated corpus.
//
// Every file is run through both: the reference over the whole corpus in one
// interpreter (tests/probe/reference_batch.py, checked against separate
// runs on the first files), oomsim once per file.  Where the reference succeeds, oomsim's
// stdout must be byte-identical.  Where the reference rejects with a
// message, oomsim must exit 1 with the same message.  Where the reference
// crashes (a traceback), oomsim must exit 1 with a clean one-line message.
// Files holding a boolean or an integer beyond int64 in a checked field,
// or non-standard JSON (NaN, 1e400), are deviations by design
// (docs/probe.md): oomsim rejects them cleanly whatever the reference does.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "shim/shim.hpp"

namespace {

const char *const kStages[] = {"download", "load", "runtime_prepare", "delegate_prepare",
                               "inference", "cache", "exit"};
const char *const kReasons[] = {"none", "low_memory", "anr", "native_crash",
                                "java_crash", "system_reclaim", "unknown"};

struct Gen {
    std::mt19937_64 r;
    explicit Gen(uint64_t seed) : r(seed) {}
    size_t pick(size_t n) { return static_cast<size_t>(r() % n); }
    bool chance(unsigned pct) { return pick(100) < pct; }
    template <typename T, size_t N> const T &of(const T (&a)[N]) { return a[pick(N)]; }
};

std::string quote(const std::string &s) { return "\"" + s + "\""; }

using Fields = std::vector<std::pair<std::string, std::string>>;

std::string rss_text(Gen &g)
{
    switch (g.pick(5)) {
    case 0:
        return std::to_string(static_cast<int64_t>(g.pick(201)) - 100);
    case 1:
        return g.chance(50) ? "9223372036854775807" : "-9223372036854775808";
    case 2:
        return std::to_string(g.pick(8) * 100); // ties for the peak
    default:
        return std::to_string(g.pick(4000));
    }
}

// Replaces one checked field with a bad or odd value; sets deviation when
// the value is one oomsim rejects on purpose.
void mutate(Gen &g, Fields &kv, size_t checked, bool &deviation)
{
    static const char *const odd[] = {"1.0", "\"5\"", "null", "[]", "{}", "-1", "-2", "0",
                                      "1E2", "-0", "2.5e3", "[\"load\"]"};
    size_t field = g.pick(checked); // the checked fields come first
    switch (g.pick(12)) {
    case 0:
    case 6:
        kv.erase(kv.begin() + static_cast<std::ptrdiff_t>(field));
        return;
    case 1:
        kv[field].second = g.chance(50) ? "true" : "false";
        deviation = true;
        return;
    case 2:
        kv[field].second = g.chance(50) ? "99999999999999999999" : "-9223372036854775809";
        deviation = true;
        return;
    case 3:
        if (kv[field].first == "stage" || kv[field].first == "exit_reason") {
            static const char *const bad[] = {"\"release\"", "\"Load\"", "\"\"",
                                              "\"LOW_MEMORY\"", "\"lo\\u0000ad\"",
                                              "\"\\u006coad\"", "{\"a\": 1}"};
            kv[field].second = g.of(bad);
            return;
        }
        [[fallthrough]];
    default:
        kv[field].second = g.of(odd);
        return;
    }
}

std::string event_text(Gen &g, int64_t &t, unsigned mutate_pct, bool &deviation)
{
    if (g.chance(2)) {
        static const char *const not_object[] = {"5", "\"load\"", "[1, 2]", "null", "true"};
        return g.of(not_object);
    }
    t += g.chance(35) ? 0 : static_cast<int64_t>(g.pick(1000));
    Fields kv{{"time_ms", std::to_string(t)},
              {"stage", quote(g.of(kStages))},
              {"rss_mb", rss_text(g)},
              {"budget_mb", g.chance(5) ? "9223372036854775807" : std::to_string(1 + g.pick(3000))},
              {"sessions", std::to_string(g.pick(5))}};
    if (g.chance(50))
        kv.push_back({"exit_reason", quote(g.of(kReasons))});
    const size_t checked = kv.size();
    if (g.chance(15))
        kv.push_back({"note", "\"z\\u00f3\\u0142w \\ud83d\\ude00 \\u0000 caf\xc3\xa9\""});
    if (g.chance(10))
        kv.push_back({"mem", "{\"java\": 1, \"gpu\": [1.5, null, {\"x\": []}]}"});
    if (g.pick(300) == 0) {
        static const char *const nonstandard[] = {"NaN", "Infinity", "1e400", "\"\\ud800\""};
        kv.push_back({"extra", g.of(nonstandard)});
        deviation = true;
    }
    if (g.chance(mutate_pct))
        mutate(g, kv, checked, deviation);
    if (g.chance(5) && !kv.empty()) {
        // A duplicate key: the last value wins in both implementations.
        size_t i = g.pick(kv.size());
        kv.insert(kv.begin(), {kv[i].first, "\"shadowed\""});
    }
    if (g.chance(30))
        std::shuffle(kv.begin(), kv.end(), g.r);
    const char *sep = g.chance(50) ? ", " : ",\n    ";
    std::string s = "{";
    for (size_t i = 0; i < kv.size(); i++)
        s += (i ? sep : "") + quote(kv[i].first) + ": " + kv[i].second;
    return s + "}";
}

struct Case {
    std::string text;
    bool deviation = false;
};

Case make_case(Gen &g, size_t index)
{
    Case c;
    // A few fixed shapes first, then random files.
    static const char *const fixed[] = {"[]", "{}", "\"events\"", "42", "null", "", "  \n",
                                        "[1,]", "[{\"time_ms\": 0}", "[\n]",
                                        "[{\"time_ms\":-1,\"stage\":\"load\",\"rss_mb\":1,"
                                        "\"budget_mb\":1,\"sessions\":0}]",
                                        "[{\"time_ms\":-2,\"stage\":\"load\",\"rss_mb\":1,"
                                        "\"budget_mb\":1,\"sessions\":0}]"};
    if (index < sizeof fixed / sizeof *fixed) {
        c.text = fixed[index];
        return c;
    }
    unsigned mutate_pct = g.chance(50) ? 0 : 8;
    size_t n = 1 + g.pick(g.chance(80) ? 12 : 200);
    int64_t t = g.chance(10) ? -1 : static_cast<int64_t>(g.pick(5000));
    std::string body = "[";
    const char *sep = g.chance(50) ? ",\n  " : (g.chance(50) ? "," : ",\r\n");
    for (size_t i = 0; i < n; i++)
        body += (i ? sep : "") + event_text(g, t, mutate_pct, c.deviation);
    body += "]";
    switch (g.pick(40)) {
    case 0:
        c.text = "\xEF\xBB\xBF" + body; // BOM
        break;
    case 1:
        c.text = body + " x"; // trailing garbage
        break;
    case 2:
        c.text = body.substr(0, g.pick(body.size())); // truncated
        break;
    case 3:
        c.text = "\n\t " + body + "\r\n";
        break;
    default:
        c.text = body;
    }
    return c;
}

bool one_clean_line(const std::string &s)
{
    return !s.empty() && s.back() == '\n' && std::count(s.begin(), s.end(), '\n') == 1 &&
           s.find("Traceback") == std::string::npos && s.find("Sanitizer") == std::string::npos &&
           s.find("runtime error") == std::string::npos;
}

} // namespace

TEST_CASE("probe parity: oomsim probe matches the reference on a generated corpus",
          "[probe][parity]")
{
    shim::TempDir dir;
    Gen g(20261202);
    const size_t files = 320;
    size_t valid = 0, rejected = 0, crashed = 0, deviations = 0;
    // the corpus, then the reference over all of it in one interpreter
    std::vector<Case> cases;
    std::vector<std::string> batch = {OOMSIM_PYTHON, OOMSIM_REFERENCE_BATCH,
                                      OOMSIM_REFERENCE_PROBE, dir.path()};
    for (size_t i = 0; i < files; i++) {
        cases.push_back(make_case(g, i));
        batch.push_back(dir.write("case" + std::to_string(i) + ".json", cases.back().text));
    }
    shim::RunResult all = shim::run(batch);
    INFO(all.err);
    REQUIRE(all.status == 0);
    auto reference = [&](size_t i) {
        std::string base = dir.file("case" + std::to_string(i) + ".json");
        shim::RunResult r;
        r.out = shim::read_file(base + ".out");
        r.err = shim::read_file(base + ".err");
        r.status = std::stoi(shim::read_file(base + ".status"));
        return r;
    };
    // the batch is what separate runs give: checked on the first files
    for (size_t i = 0; i < 12; i++) {
        shim::RunResult alone =
            shim::run({OOMSIM_PYTHON, OOMSIM_REFERENCE_PROBE, batch[4 + i]});
        shim::RunResult in_batch = reference(i);
        INFO("case " << i);
        REQUIRE(alone.status == in_batch.status);
        REQUIRE(alone.out == in_batch.out);
        if (alone.err.find("Traceback") == std::string::npos)
            REQUIRE(alone.err == in_batch.err);
        else
            REQUIRE(in_batch.err.find("Traceback") != std::string::npos);
    }
    for (size_t i = 0; i < files; i++) {
        const Case &c = cases[i];
        const std::string &path = batch[4 + i];
        shim::RunResult ref = reference(i);
        shim::RunResult ours = shim::oomsim({"probe", path});
        INFO("case " << i << " file:\n" << c.text.substr(0, 2000));
        INFO("reference status " << ref.status << " stderr: " << ref.err);
        INFO("oomsim status " << ours.status << " stderr: " << ours.err);
        REQUIRE(ours.status <= 1); // never a crash or a sanitizer report
        if (c.deviation) {
            deviations++;
            REQUIRE(ours.status == 1);
            REQUIRE(ours.out.empty());
            REQUIRE(one_clean_line(ours.err));
        } else if (ref.status == 0) {
            valid++;
            REQUIRE(ours.status == 0);
            REQUIRE(ours.out == ref.out);
            REQUIRE(ours.err.empty());
        } else if (ref.err.find("Traceback") != std::string::npos) {
            crashed++;
            REQUIRE(ours.status == 1);
            REQUIRE(ours.out.empty());
            REQUIRE(one_clean_line(ours.err));
        } else {
            rejected++;
            REQUIRE(ref.status == 1);
            REQUIRE(ours.status == 1);
            REQUIRE(ours.err == ref.err);
        }
    }
    // The corpus must exercise every branch, or the test proves little.
    INFO("valid " << valid << " rejected " << rejected << " crashed " << crashed
                  << " deviations " << deviations);
    CHECK(valid >= 60);
    CHECK(rejected >= 40);
    CHECK(crashed >= 10);
    CHECK(deviations >= 10);
}

TEST_CASE("probe parity: a missing file and a directory", "[probe][parity]")
{
    shim::TempDir dir;
    for (const std::string &path : {dir.file("absent.json"), dir.path()}) {
        shim::RunResult ref = shim::run({OOMSIM_PYTHON, OOMSIM_REFERENCE_PROBE, path});
        shim::RunResult ours = shim::oomsim({"probe", path});
        REQUIRE(ref.status == 1);
        REQUIRE(ours.status == 1);
        REQUIRE(ours.err == ref.err);
    }
}
