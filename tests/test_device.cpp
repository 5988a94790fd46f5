// Device profiles from YAML: every field resolved, and each class of
// error named with file:line:col and the key path.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <set>
#include <string>

#include "scenarios/scenarios.h"
#include "shim/shim.hpp"

namespace {
constexpr int64_t MiB = int64_t{1} << 20;

// The example device of docs/scenarios.md.
const std::string kAndroid = R"(name: android-4g
about: "a mid-range 4 GB Android phone"
os: android
ram: 4GiB
system: 1.3GiB
cached_apps: {dist: normal, mean: 900MiB, sd: 200MiB}
cached_app_size: 120MiB
pressure: {dist: exponential, mean: 90s}
pressure_size: {dist: uniform, min: 100MiB, max: 400MiB}
kill:
  rule: lmk
  minfree:
    - {adj: 0,   free: 72MiB}
    - {adj: 100, free: 90MiB}
    - {adj: 200, free: 108MiB}
    - {adj: 250, free: 126MiB}
    - {adj: 900, free: 216MiB}
    - {adj: 950, free: 315MiB}
counts: [native, java, gpu]
java_heap_limit: 256MiB
anr_timeout: 5s
warning_at: 300MiB
)";

const std::string kIos = R"(name: iphone-4g
os: ios
ram: 4GiB
system: 1GiB
kill: {rule: jetsam, limit: 2098MiB, background_limit: 400MiB}
launch_watchdog: 20s
)";

std::string error_of(const std::string &text, int code = SIM_EINPUT)
{
    mdl_device dev;
    sim_error err;
    sim_error_clear(&err);
    int rc = scn_device_parse(text.data(), text.size(), "dev.yaml", &dev, &err);
    INFO(err.msg);
    REQUIRE(rc == code);
    REQUIRE(dev.owned[0] == nullptr); // nothing left to release
    return err.msg;
}

// kAndroid with one line replaced.
std::string edit(const std::string &from, const std::string &to)
{
    std::string s = kAndroid;
    size_t at = s.find(from);
    REQUIRE(at != std::string::npos);
    return s.replace(at, from.size(), to);
}
} // namespace

TEST_CASE("device: the android example of docs/scenarios.md resolves to bytes and microseconds",
          "[scenario][device]")
{
    shim::TempDir dir;
    mdl_device dev;
    sim_error err;
    sim_error_clear(&err);
    int rc = scn_device_load(dir.write("android-4g.yaml", kAndroid).c_str(), &dev, &err);
    INFO(err.msg);
    REQUIRE(rc == SIM_OK);
    REQUIRE(std::string(dev.name) == "android-4g");
    REQUIRE(dev.os == MDL_OS_ANDROID);
    REQUIRE(dev.ram == 4096 * MiB);
    REQUIRE(dev.system == 1395864371); // 1.3 GiB rounded to a byte
    REQUIRE(dev.cached_apps.kind == MDL_DIST_NORMAL);
    REQUIRE(dev.cached_app_size == 120 * MiB);
    REQUIRE(dev.has_pressure == 1);
    REQUIRE(mdl_dist_mean(&dev.pressure) == 90e6);
    REQUIRE(mdl_dist_mean(&dev.pressure_size) == 250.0 * MiB);
    REQUIRE(dev.rule == MDL_KILL_LMK);
    REQUIRE(dev.nminfree == 6);
    REQUIRE(dev.minfree[0].adj == 0);
    REQUIRE(dev.minfree[0].free == 72 * MiB);
    REQUIRE(dev.minfree[5].adj == 950);
    REQUIRE(dev.minfree[5].free == 315 * MiB);
    REQUIRE(dev.counts_mask == MDL_COUNTS_DEFAULT);
    REQUIRE(dev.java_heap_limit == 256 * MiB);
    REQUIRE(dev.anr_timeout == 5000000);
    REQUIRE(dev.launch_watchdog == 0);
    REQUIRE(dev.warning_at == 300 * MiB);
    scn_device_release(&dev);
}

TEST_CASE("device: an iOS jetsam profile and defaults", "[scenario][device]")
{
    mdl_device dev;
    sim_error err;
    REQUIRE(scn_device_parse(kIos.data(), kIos.size(), "ios.yaml", &dev, &err) == SIM_OK);
    REQUIRE(dev.rule == MDL_KILL_JETSAM);
    REQUIRE(dev.jetsam_limit == 2098 * MiB);
    REQUIRE(dev.jetsam_background_limit == 400 * MiB);
    REQUIRE(dev.launch_watchdog == 20000000);
    REQUIRE(dev.has_pressure == 0);
    REQUIRE(mdl_dist_mean(&dev.cached_apps) == 0);
    REQUIRE(dev.counts_mask == MDL_COUNTS_DEFAULT);
    scn_device_release(&dev);
}

TEST_CASE("device: empirical values are owned and released", "[scenario][device]")
{
    std::string text = edit("cached_apps: {dist: normal, mean: 900MiB, sd: 200MiB}",
                            "cached_apps: {dist: empirical, values: [700MiB, 900MiB, 1GiB]}");
    mdl_device dev;
    sim_error err;
    REQUIRE(scn_device_parse(text.data(), text.size(), "dev.yaml", &dev, &err) == SIM_OK);
    REQUIRE(dev.owned[0] != nullptr);
    REQUIRE(dev.cached_apps.nvalues == 3);
    REQUIRE(dev.cached_apps.values[2] == 1024 * MiB);
    scn_device_release(&dev); // LeakSanitizer checks this in the sanitizer build
}

TEST_CASE("device: unknown keys, with did-you-mean", "[scenario][device][errors]")
{
    REQUIRE(error_of(edit("counts:", "cunts:")) ==
            "dev.yaml:19:1: unknown key \"cunts\" (did you mean \"counts\"?)");
    REQUIRE(error_of(edit("rule: lmk", "rule: lmk\n  limt: 5MiB")) ==
            "dev.yaml:12:3: kill: unknown key \"limt\"");
    REQUIRE(error_of(edit("{adj: 0,   free: 72MiB}", "{adj: 0, fre: 72MiB}")) ==
            "dev.yaml:13:16: kill.minfree[0]: unknown key \"fre\" (did you mean \"free\"?)");
    REQUIRE(error_of(kAndroid + "colour: blue\n") == "dev.yaml:23:1: unknown key \"colour\"");
    REQUIRE(error_of(edit("{dist: exponential, mean: 90s}", "{dist: exponential, mean: 90s, sd: 1s}")) ==
            "dev.yaml:8:42: pressure: unknown key \"sd\"");
}

TEST_CASE("device: wrong types, units and values", "[scenario][device][errors]")
{
    REQUIRE(error_of(edit("ram: 4GiB", "ram: [4GiB]")) ==
            "dev.yaml:4:1: ram: expected a value, got a list");
    REQUIRE(error_of(edit("ram: 4GiB", "ram: four")) ==
            "dev.yaml:4:6: ram: expected a size such as 230B, 48MiB or 1.5GiB, got \"four\"");
    REQUIRE(error_of(edit("anr_timeout: 5s", "anr_timeout: 5")) ==
            "dev.yaml:21:14: anr_timeout: a duration needs a unit (us, ms, s, min or h), got \"5\"");
    REQUIRE(error_of(edit("java_heap_limit: 256MiB", "java_heap_limit: 256mib")) ==
            "dev.yaml:20:18: java_heap_limit: unknown unit \"mib\" (did you mean \"MiB\"?)");
    REQUIRE(error_of(edit("system: 1.3GiB", "system: -1GiB")).find(
                "dev.yaml:5:9: system: expected a size such as 230B, 48MiB or 1.5GiB, got a "
                "negative value") == 0);
    REQUIRE(error_of(edit("ram: 4GiB", "ram: 2TiB"), SIM_ELIMIT) ==
            "dev.yaml:4:6: ram: size \"2TiB\" exceeds the limit of 1TiB");
    REQUIRE(error_of(edit("os: android", "os: windows")) ==
            "dev.yaml:3:5: os: expected android or ios, got \"windows\"");
    REQUIRE(error_of(edit("name: android-4g", "name: Android 4G")).find(
                "dev.yaml:1:7: name: expected a name of 1 to 63 characters from [a-z0-9-]") == 0);
    REQUIRE(error_of(edit("[native, java, gpu]", "[native, jvm]")) ==
            "dev.yaml:19:18: counts[1]: expected java, native, gpu or file, got \"jvm\"");
    REQUIRE(error_of(edit("{adj: 100, free: 90MiB}", "{adj: 0, free: 90MiB}")) ==
            "dev.yaml:14:13: kill.minfree[1].adj: levels must be in increasing adj: 0 follows 0");
    REQUIRE(error_of(edit("rule: lmk", "rule: jetsam")) ==
            "dev.yaml:11:9: kill.rule: android uses the lmk rule");
    REQUIRE(error_of(edit("system: 1.3GiB", "system: 4GiB")) ==
            "dev.yaml:5:9: system: the system's share leaves no memory for apps");
}

TEST_CASE("device: distributions", "[scenario][device][errors]")
{
    REQUIRE(error_of(edit("{dist: normal, mean: 900MiB, sd: 200MiB}", "{dist: normall, mean: 900MiB}")) ==
            "dev.yaml:6:21: cached_apps.dist: expected lognormal, exponential, uniform, normal, "
            "gamma or empirical, got \"normall\"");
    REQUIRE(error_of(edit("{dist: normal, mean: 900MiB, sd: 200MiB}", "{dist: lognormal, median: 900MiB, p95: 800MiB}")) ==
            "dev.yaml:6:1: cached_apps: lognormal: p95 must be greater than the median");
    REQUIRE(error_of(edit("{dist: normal, mean: 900MiB, sd: 200MiB}", "{dist: uniform, min: 1MiB}")) ==
            "dev.yaml:6:1: cached_apps: missing required key \"max\"");
    REQUIRE(error_of(edit("{dist: exponential, mean: 90s}", "{dist: exponential, mean: 90}")) ==
            "dev.yaml:8:37: pressure.mean: a duration needs a unit (us, ms, s, min or h), got \"90\"");
}

TEST_CASE("device: missing keys", "[scenario][device][errors]")
{
    REQUIRE(error_of(edit("ram: 4GiB\n", "")) == "dev.yaml:1:1: missing required key \"ram\"");
    REQUIRE(error_of(edit("  minfree:", "  minfre:")).find("kill: unknown key \"minfre\"") !=
            std::string::npos);
    REQUIRE(error_of(edit("cached_app_size: 120MiB\n", "")) ==
            "dev.yaml:1:1: missing required key \"cached_app_size\"");
    REQUIRE(error_of(kIos.substr(0, kIos.find("kill:"))) ==
            "dev.yaml:1:1: missing required key \"kill\"");
}

TEST_CASE("device: YAML syntax, empty files, binary garbage", "[scenario][device][errors]")
{
    // an unclosed bracket is reported where it opens
    REQUIRE(error_of("name: [a, b\n").rfind("dev.yaml:1:7: YAML syntax error: this '[' is never closed", 0) == 0);
    // ... past an escaped backslash that ends a quoted scalar, and past a
    // bracket or a quote inside a plain scalar, which open nothing
    CHECK(error_of("about: \"a\\\\\"\nname: [a, b\n")
              .rfind("dev.yaml:2:7: YAML syntax error: this '[' is never closed", 0) == 0);
    CHECK(error_of("about: 5\" screen [old\nname: [a, b\n")
              .rfind("dev.yaml:2:7: YAML syntax error: this '[' is never closed", 0) == 0);
    CHECK(error_of("about: ratio 16:\"9 - [x\nname: [a, b\n")
              .rfind("dev.yaml:2:7: YAML syntax error: this '[' is never closed", 0) == 0);
    // '' inside single quotes is a quote, not the end (no test of the old
    // scanner's: it closed and reopened there, to the same effect)
    CHECK(error_of("name: ['a'', [b', c\n")
              .rfind("dev.yaml:1:7: YAML syntax error: this '[' is never closed", 0) == 0);
    REQUIRE(error_of("name: a\nname: b\n") ==
            "dev.yaml:2:1: YAML syntax error: duplicate key 'name' (a key may appear once in a "
            "mapping)");
    REQUIRE(error_of("") == "dev.yaml:1:1: empty file");
    REQUIRE(error_of("  \n\n") == "dev.yaml:1:1: empty file");
    REQUIRE(error_of(std::string("name: a\nos: \0x", 14)) ==
            "dev.yaml:2:5: not a YAML text (a NUL byte or invalid UTF-8)");
    REQUIRE(error_of("name: \xff\xfe\n") ==
            "dev.yaml:1:7: not a YAML text (a NUL byte or invalid UTF-8)");
    REQUIRE(error_of("- a\n- b\n") == "dev.yaml:1:3: expected a mapping of keys at the top level");
    REQUIRE(error_of(kIos + "---\n" + kIos) ==
            "dev.yaml: more than one YAML document (---); a scenario file holds one");
    REQUIRE(error_of("name: *nope\n").rfind("dev.yaml:", 0) == 0);
}

TEST_CASE("device: inputs that broke libfyaml are refused before it", "[scenario][device][errors]")
{
    // A code point above U+10FFFF made libfyaml 0.7.12 loop forever.
    REQUIRE(error_of("\xf7\xba\x8c\x86s") ==
            "dev.yaml:1:1: not a YAML text (a NUL byte or invalid UTF-8)");
    REQUIRE(error_of("a: \xed\xa0\x80\n") ==
            "dev.yaml:1:4: not a YAML text (a NUL byte or invalid UTF-8)"); // a surrogate
    REQUIRE(error_of("a: \xc0\xaf\n") ==
            "dev.yaml:1:4: not a YAML text (a NUL byte or invalid UTF-8)"); // overlong
    // Quoted text with five escapes in a row made it leak a buffer.
    REQUIRE(error_of(std::string(60, '\'') + ":\n") ==
            "dev.yaml:1:1: a key must be a plain name (unquoted)");
    REQUIRE(error_of("name: '" + std::string(10, '\'') + "'\n", SIM_ELIMIT) ==
            "dev.yaml:1:7: name: a quoted value may hold at most 3 escapes or line breaks; "
            "write it unquoted or as a block scalar (|)");
    // and four '' in a row between other characters leaked 512 bytes
    REQUIRE(error_of("name: '6''''''''&'\n", SIM_ELIMIT).find("at most 3 escapes") !=
            std::string::npos);
    // Three are fine: 'it''s' style text still loads.
    REQUIRE(error_of("name: 'a''b''c''d'\n").find("name: expected a name") != std::string::npos);
}

TEST_CASE("device: a missing file", "[scenario][device][errors]")
{
    shim::TempDir dir;
    mdl_device dev;
    sim_error err;
    std::string path = dir.file("none.yaml");
    REQUIRE(scn_device_load(path.c_str(), &dev, &err) == SIM_EINPUT);
    REQUIRE(std::string(err.msg) == "cannot read " + path + ": No such file or directory");
}

TEST_CASE("device: every shipped device profile loads and is what its name says",
          "[scenario][device][catalog]")
{
    std::set<std::string> names;
    for (const shim::Entry &entry : shim::yaml_files("scenarios/catalog/devices")) {
        mdl_device dev;
        sim_error err;
        sim_error_clear(&err);
        int rc = scn_device_load(entry.path.c_str(), &dev, &err);
        INFO(entry.path << ": " << err.msg);
        REQUIRE(rc == SIM_OK);
        std::string name = dev.name;
        REQUIRE(name == entry.stem);
        names.insert(name);
        // The RAM in the name ("-4g") is the profile's RAM.
        size_t dash = name.rfind('-');
        int64_t gib = std::stoll(name.substr(dash + 1, name.size() - dash - 2));
        REQUIRE(dev.ram == gib * 1024 * MiB);
        if (name.rfind("android", 0) == 0) {
            REQUIRE(dev.os == MDL_OS_ANDROID);
            // lmkd's PSI mode with the kernel's watermarks for this RAM:
            // min_free_kbytes = sqrt(16 x RAM kB), low and high a step of
            // max(min / 4, RAM / 1000) above it (watermark_scale_factor 10)
            REQUIRE(dev.lmk_psi == 1);
            int64_t ram_kb = dev.ram / 1024;
            int64_t min_kb = (int64_t)std::sqrt((double)(ram_kb * 16));
            int64_t step = std::max(min_kb / 4, ram_kb * 10 / 10000);
            REQUIRE(dev.wmark_min == min_kb * 1024);
            REQUIRE(dev.wmark_low == (min_kb + step) * 1024);
            REQUIRE(dev.wmark_high == (min_kb + 2 * step) * 1024);
            // zram: half the RAM (AOSP's zramsize=50%)
            REQUIRE(dev.has_zram == 1);
            REQUIRE(dev.zram_size == dev.ram / 2);
            REQUIRE(dev.java_heap_limit > 0);
            REQUIRE(dev.anr_timeout == 5000000);
            REQUIRE(dev.warning_at > 0);
            // AOSP's DEFAULT_MAX_PREVIOUS_TIME: 60 s at adj 700, then cached
            REQUIRE(dev.previous_ttl == 60000000);
        } else {
            REQUIRE(dev.os == MDL_OS_IOS);
            REQUIRE(dev.rule == MDL_KILL_JETSAM);
            REQUIRE(dev.jetsam_limit < dev.ram);
            // a suspended app is held to the same limit and reclaimed by page
            // shortage: XNU's idle threshold, 10 % of DRAM up to 3 GB, 9 % up
            // to 6 GB, 8 % above
            REQUIRE(dev.jetsam_background_limit == dev.jetsam_limit);
            int pct = gib <= 3 ? 10 : gib <= 6 ? 9 : 8;
            REQUIRE(dev.pageshortage == (int64_t)((double)dev.ram * pct / 100.0 + 0.5));
            REQUIRE(dev.launch_watchdog == 20000000);
            REQUIRE(dev.warning_share == Approx(0.2)); // XNU's 80 % ledger warning
            REQUIRE(dev.background_gpu_deny == 1);
            if (dev.entitled_limit > 0)
                REQUIRE(dev.entitled_limit > dev.jetsam_limit);
        }
        // every device says how fast it is, and something of its GPU
        REQUIRE(dev.speed_cpu > 0);
        REQUIRE(dev.speed_gpu > 0);
        REQUIRE(dev.ndelegates == 1);
        REQUIRE(std::string(dev.delegates[0].name) == "gpu");
        REQUIRE(dev.has_successor == 1);
        scn_device_release(&dev);
    }
    // The profiles issue 3 asks for, at least.
    for (const char *want : {"android-go-2g", "android-3g", "android-4g", "android-6g",
                             "android-8g", "iphone-2g", "iphone-4g", "iphone-6g", "iphone-8g"})
        REQUIRE(names.count(want) == 1);
}
