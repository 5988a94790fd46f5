// `oomsim import device`: device profiles from a phone's own captures
// (replay/bugreport.c, replay/ips.c, replay/device.c, replay/device_yaml.c,
// cli/device.c), the `measured` map the loader reads, and what validate
// says of it.  The bugreports of tests/data/devices are written for the
// project with our own numbers (their README says in which layouts); the
// JetsamEvent reports are those of tests/data/ips.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>
#include <vector>

#include "scenarios/scenarios.h"
#include "traces/traces.h"
#include "shim/shim.hpp"

using namespace shim;

namespace {

std::string dev(const char *name) { return source_path(std::string("tests/data/devices/") + name); }
// a trace encoded at build time from tests/data/perfetto/*.textpb
std::string pf(const char *name) { return std::string(OOMSIM_PF_DATA) + "/" + name; }
const char *const ZIP = "bugreport-testphone-TP1A.220624.014-2026-11-20-10-15-02.zip";

const int64_t KiB = 1024;

// The profile a command writes, loaded back.
struct Profile {
    mdl_device d;
    std::string yaml;
    Profile(const std::vector<std::string> &args)
    {
        std::vector<std::string> a{"import", "device"};
        a.insert(a.end(), args.begin(), args.end());
        RunResult r = oomsim(a);
        INFO(r.err);
        REQUIRE(r.status == 0);
        yaml = r.out;
        sim_error err;
        sim_error_clear(&err);
        int rc = scn_device_parse(yaml.data(), yaml.size(), "imported", &d, &err);
        INFO(err.msg);
        REQUIRE(rc == SIM_OK);
    }
    ~Profile() { scn_device_release(&d); }
    bool measured(const char *value) const
    {
        unsigned n;
        const char *const *v = mdl_device_values(d.os, &n);
        for (unsigned k = 0; k < n; k++)
            if (std::string(v[k]) == value)
                return mdl_device_source(&d, k, nullptr) != nullptr;
        FAIL("no such value " << value);
        return false;
    }
    unsigned nmeasured() const { return d.measured != nullptr ? d.measured->n : 0; }
};

int64_t lmkd_prop(const mdl_device &d, const char *name)
{
    return mdl_lmkd_prop_get(&d.lmkd, mdl_lmkd_prop_named(name));
}

} // namespace

TEST_CASE("import device: an Android 13 bugreport, every value as derived by hand",
          "[device]")
{
    Profile p({dev("bugreport-android13.txt")});
    const mdl_device &d = p.d;
    CHECK(d.os == MDL_OS_ANDROID);
    CHECK(std::string(d.name) == "test-phone-4");
    // MemTotal: 3809280 kB (line 20), the 4 GB class
    CHECK(d.ram == 3809280 * KiB);
    // the kernel: Shmem 30000 + SUnreclaim 100000 + VmallocUsed 70000 +
    // PageTables 60000 + KernelStack 40000 = 300000 kB; the PSS groups lmkd
    // does not kill before the app in the background: Native 320000 +
    // System 250000 + Persistent 180000 + Persistent Service 30000 +
    // Visible 40000 + Perceptible 60000 + Perceptible Low 20000 + A Services
    // 50000 + Home 70000 = 1020000 kB; Lost RAM 80000 kB: 1400000 kB
    CHECK(d.system == 1400000 * KiB);
    // Foreground 150000 + Previous 90000 + B Services 40000 + Cached 300000
    // = 580000 kB in 1 + 1 + 2 + 5 = 9 processes: 64444.4 kB each
    CHECK(d.cached_apps.kind == MDL_DIST_FIXED);
    CHECK(d.cached_apps.p1 == Approx(580000.0 * 1024));
    CHECK(d.cached_app_size == 64444 * KiB);
    // zoneinfo: DMA32 min/low/high 1000/1800/2600 + its largest protection
    // 2048; Normal 2000/3600/5200 + 0; Movable not populated: 5048, 7448 and
    // 9848 pages of 4 KiB
    CHECK(d.lmk_psi == 1);
    CHECK(d.wmark_min == 5048 * 4 * KiB);
    CHECK(d.wmark_low == 7448 * 4 * KiB);
    CHECK(d.wmark_high == 9848 * 4 * KiB);
    // ZRAM: 600,000K in swap over 200,000K physical used; 2,097,148K total
    CHECK(d.has_zram == 1);
    CHECK(d.zram_size == 2097148 * KiB);
    CHECK(d.zram_ratio == Approx(3.0));
    // Active(file) + Inactive(file) = 400000 + 500000 kB; Active(file) the working set
    CHECK(d.page_cache == 900000 * KiB);
    CHECK(d.page_cache_ws == 400000 * KiB);
    // dalvik.vm.heapgrowthlimit 256m; SDK 33 keeps ApplicationExitInfo
    CHECK(d.java_heap_limit == 256 * 1024 * KiB);
    CHECK(d.no_exit_info == 0);
    // the ro.lmk properties the phone sets
    CHECK(lmkd_prop(d, "thrashing_limit") == 30);
    CHECK(lmkd_prop(d, "psi_complete_stall_ms") == 700);
    CHECK(lmkd_prop(d, "kill_heaviest_task") == 1);
    // measured and assumed, in the profile and its header
    CHECK(p.nmeasured() == 12);
    CHECK(p.measured("ram"));
    CHECK(p.measured("kill.watermarks"));
    CHECK_FALSE(p.measured("pressure"));
    CHECK_FALSE(p.measured("successor"));
    CHECK(p.yaml.find("ram: 3809280KiB   # bugreport-android13.txt:20: MemTotal") !=
          std::string::npos);
    CHECK(p.yaml.find("pressure: {dist: exponential, mean: 90s}   # assumed: not in these "
                      "captures (the catalog's android-4g)") != std::string::npos);
    CHECK(p.yaml.find("# Assumed, not in these captures (9, the catalog's android-4g figures") !=
          std::string::npos);
    // what was read and not used is counted
    CHECK(p.yaml.find("# ignored (read, not used):") != std::string::npos);
    CHECK(p.yaml.find("13 vmstat counters") != std::string::npos);
}

TEST_CASE("import device: the OOM table in the layouts of Android 9 and of Android 6",
          "[device]")
{
    // Android 9: PSS only, no Perceptible Low (so 20000 kB less of the
    // system), Heavy Weight before Backup, no PSI section; Android 6: the
    // same figures as "NNN kB:" rows and "kB" totals
    for (const char *f : {"bugreport-android9.txt", "bugreport-android6.txt"}) {
        INFO(f);
        Profile p({dev(f)});
        CHECK(p.d.system == 1380000 * KiB);
        CHECK(p.d.cached_apps.p1 == Approx(580000.0 * 1024));
        CHECK(p.d.cached_app_size == 64444 * KiB);
        CHECK(p.d.zram_ratio == Approx(3.0));
        CHECK(p.yaml.find("no PSI memory (/proc/pressure/memory) section") != std::string::npos);
    }
    // SDK 28 and 23: no ApplicationExitInfo
    Profile p9({dev("bugreport-android9.txt")});
    CHECK(p9.d.no_exit_info == 1);
}

TEST_CASE("import device: the zip adb bugreport writes reads as its main text", "[device]")
{
    Profile z({dev("bugreport-testphone-TP1A.220624.014-2026-11-20-10-15-02.zip")});
    Profile t({dev("bugreport-android13.txt")});
    CHECK(z.d.ram == t.d.ram);
    CHECK(z.d.system == t.d.system);
    CHECK(z.d.wmark_low == t.d.wmark_low);
    // the lines are the main entry's, named inside the zip
    CHECK(z.yaml.find(".zip:bugreport-testphone-TP1A.220624.014-2026-11-20-10-15-02.txt:20: "
                      "MemTotal") != std::string::npos);
    // a zip and a text of the same phone make one profile of two captures
    Profile both({dev("bugreport-android13.txt"),
                  dev("bugreport-testphone-TP1A.220624.014-2026-11-20-10-15-02.zip")});
    CHECK(both.yaml.find("from 2 captures of Test Phone 4") != std::string::npos);
    CHECK(both.d.ram == t.d.ram);
}

TEST_CASE("import device: a section cut short is said, the rest still read", "[device]")
{
    Profile p({dev("bugreport-cut.txt")});
    CHECK(p.yaml.find("the ZONEINFO (/proc/zoneinfo) section is cut and unreadable") !=
          std::string::npos);
    CHECK(p.yaml.find("no dumpsys meminfo") != std::string::npos);
    CHECK(p.d.ram == 3809280 * KiB);
    CHECK_FALSE(p.measured("kill.watermarks"));
    CHECK_FALSE(p.measured("system"));
    // the catalog's 4 GB figures, marked assumed
    CHECK(p.yaml.find("system: 1.3GiB   # assumed: not in these captures") != std::string::npos);
}

TEST_CASE("import device: bad input is refused, naming the file", "[device]")
{
    TempDir t;
    write_file(t.path() + "/notes.txt", "hello\nworld\n");
    RunResult r = oomsim({"import", "device", t.path() + "/notes.txt"});
    CHECK(r.status == 1);
    CHECK(r.err.find("notes.txt:1: not a capture oomsim reads") != std::string::npos);
    r = oomsim({"import", "device", dev("not-a-bugreport.zip")});
    CHECK(r.status == 1);
    CHECK(r.err.find("not-a-bugreport.zip: a zip that is not a bugreport") != std::string::npos);
    // a number out of range in a section the lmkd reader checks
    std::string br = read_file(dev("bugreport-android13.txt"));
    std::string bad = br;
    bad.replace(bad.find("        min      1000"), 20, "        min      x000");
    write_file(t.path() + "/bad.txt", bad);
    r = oomsim({"import", "device", t.path() + "/bad.txt", "-o", t.path() + "/out.yaml"});
    CHECK(r.status == 1);
    CHECK(r.err.find("bad.txt:80: not a page count a phone can have after \"min\"") != std::string::npos);
    CHECK_FALSE(exists(t.path() + "/out.yaml")); // nothing half-written
    // a RAM of 100 MB under the catalog's assumed system share: refused,
    // naming the capture and what the loader finds wrong
    write_file(t.path() + "/tiny.txt",
               "== dumpstate: 2026-01-01 00:00:00\n------ MEMORY INFO (/proc/meminfo) ------\n"
               "MemTotal: 100000 kB\nMemFree: 1000 kB\nSwapTotal: 0 kB\nSwapFree: 0 kB\n"
               "Inactive(file): 100 kB\nActive(anon): 100 kB\nInactive(anon): 100 kB\n"
               "Shmem: 100 kB\n------ 0.001s was the duration of 'MEMORY INFO' ------\n");
    r = oomsim({"import", "device", t.path() + "/tiny.txt"});
    CHECK(r.status == 1);
    CHECK(r.err.find("tiny.txt: its figures make no phone a profile can hold") !=
          std::string::npos);
    CHECK(r.err.find("system's share leaves no memory for apps") != std::string::npos);
    // a phone of two models at once: refused, unless grouped
    r = oomsim({"import", "device", dev("bugreport-android13.txt"), dev("bugreport-android9.txt")});
    CHECK(r.status == 1);
    CHECK(r.err.find("is Test Phone 4 (Android, 4 GB) and") != std::string::npos);
    CHECK(r.err.find("--group-by model") != std::string::npos);
    r = oomsim({"import", "device", dev("bugreport-android13.txt"), dev("bugreport-android9.txt"),
                "--group-by", "model", "-o", t.path() + "/by-model"});
    CHECK(r.status == 0);
    CHECK(exists(t.path() + "/by-model/test-phone-4.yaml"));
    CHECK(exists(t.path() + "/by-model/test-phone-4-pie.yaml"));
}

TEST_CASE("import device: a JetsamEvent report, every value as derived by hand", "[device]")
{
    Profile p({source_path("tests/data/ips/JetsamEvent-2024-03-02-101500.ips")});
    const mdl_device &d = p.d;
    CHECK(d.os == MDL_OS_IOS);
    CHECK(std::string(d.name) == "iphone12-1");
    // pages of 16384 bytes: free 2961 + active 70123 + inactive 68234 +
    // speculative 311 + throttled 0 + wired 48211 + compressorSize 51234 =
    // 241074 pages
    CHECK(d.ram == 241074 * 16 * KiB);
    // wired 48211 pages + SpringBoard (band 160, rpages 5120); LLMChat is
    // frontmost: the app, left out
    CHECK(d.system == (48211 + 5120) * 16 * KiB);
    // band 0: assistantd 901 and WeatherWidgetExtension 310 pages
    REQUIRE(d.nothers == 1);
    CHECK(d.others[0].band == 0);
    CHECK(d.others[0].count.kind == MDL_DIST_FIXED);
    CHECK(d.others[0].count.p1 == Approx(2));
    CHECK(d.others[0].size.kind == MDL_DIST_EMPIRICAL);
    // uncompressed 153771 over compressorSize 51234
    CHECK(d.compressor_ratio == Approx(153771.0 / 51234.0).epsilon(0.005));
    // fileBacked 51234 pages
    CHECK(d.page_cache == 51234 * 16 * KiB);
    CHECK(p.measured("others"));
    CHECK_FALSE(p.measured("kill.limit"));
    CHECK_FALSE(p.measured("page_cache.working_set"));
}

TEST_CASE("import device: a directory of reports from two phones, grouped by model",
          "[device]")
{
    RunResult r = oomsim({"import", "device", source_path("tests/data/ips")});
    CHECK(r.status == 1);
    CHECK(r.err.find("iPhone12,1 (iOS, 4 GB)") != std::string::npos);
    CHECK(r.err.find("iPhone14,7 (iOS, 6 GB)") != std::string::npos);
    TempDir t;
    r = oomsim({"import", "device", source_path("tests/data/ips"), "--group-by", "model", "-o",
                t.path()});
    INFO(r.err);
    REQUIRE(r.status == 0);
    // README.md is passed over, and said
    CHECK(r.err.find("README.md: passed over") != std::string::npos);
    std::string three = read_file(t.path() + "/iphone12-1.yaml");
    CHECK(three.find("from 3 captures of iPhone12,1") != std::string::npos);
    // counts over the captures as a range; the footprints pooled and fitted
    CHECK(three.find("count: {min: 1, max: 2}") != std::string::npos);
    CHECK(three.find("dist: lognormal") != std::string::npos);
    CHECK(three.find("a lognormal fitted to 4 values") != std::string::npos);
    r = oomsim({"validate", t.path() + "/iphone12-1.yaml", t.path() + "/iphone14-7.yaml"});
    CHECK(r.status == 0);
}

TEST_CASE("import device: five captures of one phone make distributions", "[device]")
{
    // the same bugreport five times, its Cached group holding 100000 to
    // 500000 kB: cached_apps is then Foreground + Previous + B Services
    // (280000 kB) + that, fitted as a lognormal by its logs' mean and sd
    const std::string br = read_file(dev("bugreport-android13.txt"));
    const std::string row = "  300,000K: Cached";
    TempDir t;
    std::vector<std::string> files;
    std::vector<double> logs;
    const char *cached[] = {"100,000", "200,000", "300,000", "400,000", "500,000"};
    for (int k = 0; k < 5; k++) {
        std::string b = br;
        size_t at = b.find(row);
        REQUIRE(at != std::string::npos);
        b.replace(at, row.size(), std::string("  ") + cached[k] + "K: Cached");
        files.push_back(t.path() + "/br" + std::to_string(k) + ".txt");
        write_file(files.back(), b);
        logs.push_back(std::log((280000.0 + 100000.0 * (k + 1)) * 1024));
    }
    double mu = 0, sd = 0;
    for (double l : logs)
        mu += l / 5;
    for (double l : logs)
        sd += (l - mu) * (l - mu) / 4;
    sd = std::sqrt(sd);
    Profile p(files);
    CHECK(p.yaml.find("from 5 captures of Test Phone 4") != std::string::npos);
    REQUIRE(p.d.cached_apps.kind == MDL_DIST_LOGNORMAL);
    CHECK(p.yaml.find("a lognormal fitted to 5 values by their logs' mean and sd") !=
          std::string::npos);
    // the loader's lognormal: median e^mu (written in KiB)
    double median = std::exp(mu) / 1024, p95 = std::exp(mu + 1.6448536 * sd) / 1024;
    char want[96];
    std::snprintf(want, sizeof want, "median: %lldKiB, p95: %lldKiB", std::llround(median),
                  std::llround(p95));
    CHECK(p.yaml.find(want) != std::string::npos);
    // the rest: their median over the five
    CHECK(p.d.system == 1400000 * KiB);
    CHECK(p.yaml.find("the median of 5 captures") != std::string::npos);
}

TEST_CASE("device profiles: the measured map, and what validate and run say of it",
          "[device]")
{
    TempDir t;
    const std::string base = "name: p\nos: android\nram: 4GiB\nsystem: 1GiB\n"
                             "kill: {rule: lmk, mode: psi, watermarks: {min: 8MiB, low: 12MiB, "
                             "high: 16MiB}}\n";
    write_file(t.path() + "/ok.yaml", base + "measured:\n  ram: \"a.txt:3: MemTotal\"\n"
                                             "  successor: \"fitted: calibrate\"\n");
    RunResult r = oomsim({"validate", t.path() + "/ok.yaml"});
    INFO(r.err);
    CHECK(r.status == 0);
    CHECK(r.out.find("  p: 2 of its 21 values measured or fitted (ram: a.txt:3, successor "
                     "fitted: calibrate); 19 assumed: system,") != std::string::npos);
    write_file(t.path() + "/bad.yaml", base + "measured: {ramm: \"x\"}\n");
    r = oomsim({"validate", t.path() + "/bad.yaml"});
    CHECK(r.status == 1);
    CHECK(r.err.find("bad.yaml:6:12: measured: unknown key \"ramm\"") != std::string::npos);
    CHECK(r.err.find("ramm") != std::string::npos);
    CHECK(r.err.find("did you mean") != std::string::npos);
    // an iOS value on Android: refused
    write_file(t.path() + "/ios.yaml", base + "measured: {others: \"x\"}\n");
    CHECK(oomsim({"validate", t.path() + "/ios.yaml"}).status == 1);
    // an empty source: refused
    write_file(t.path() + "/empty.yaml", base + "measured: {ram: \"\"}\n");
    CHECK(oomsim({"validate", t.path() + "/empty.yaml"}).status == 1);
}

TEST_CASE("import device: a Perfetto trace of the phone, every value as derived by hand",
          "[device]")
{
    // tests/data/perfetto/phone.textpb: seven samples a minute apart
    Profile p({pf("phone.pftrace")});
    const mdl_device &d = p.d;
    CHECK(d.os == MDL_OS_ANDROID);
    CHECK(std::string(d.name) == "android-4g-measured"); // a trace names no model
    CHECK(d.ram == 3800000 * KiB);
    // the kernel 200000 kB + Native 100 + System 200 + Persistent 100 +
    // Home 50 MiB (460800 kB) in every poll
    CHECK(d.system == 660800 * KiB);
    // the groups killed before the app, poll by poll (MiB): the one in
    // front (100, 150, 200, 120, 130, 130, 170) + Previous (80 until its
    // task is freed at 330 s) + Cached (100, then 50 once lmkd killed 601
    // at 200 s): 280, 330, 380, 300, 260, 260, 220, median 280, in 4, 4,
    // 4, 4, 3, 3, 2 processes, median 4: 70 MiB a process.  Without the
    // ends of 601 and 700 the median would be 310 MiB.
    CHECK(d.cached_apps.kind == MDL_DIST_LOGNORMAL);
    CHECK(d.cached_app_size == 70 * 1024 * KiB);
    CHECK(p.yaml.find("sized by Pss (smaps_rollup), over 7 samples") != std::string::npos);
    // the foreground's rises: 100 -> 200 MiB (ended by the fall to 120),
    // 120 -> 170 MiB (at the trace's end): 2 in 360 s, one per 180 s
    CHECK(d.has_pressure == 1);
    CHECK(d.pressure.kind == MDL_DIST_EXPONENTIAL);
    CHECK(p.yaml.find("pressure: {dist: exponential, mean: 180s}") != std::string::npos);
    REQUIRE(d.pressure_size.kind == MDL_DIST_EMPIRICAL);
    REQUIRE(d.pressure_size.nvalues == 2);
    CHECK(d.pressure_size.values[0] == 100 * 1024 * KiB);
    CHECK(d.pressure_size.values[1] == 50 * 1024 * KiB);
    // zram: SwapTotal 2000000 kB; (2000000 - 1700000) kB stored in 25000
    // zspages of 4 KiB (100000 kB): 3.0
    CHECK(d.zram_size == 2000000 * KiB);
    CHECK(d.zram_ratio == Approx(3.0));
    // Active(file) 300000..420000 kB, median 360000; + Inactive(file) 400000
    CHECK(d.page_cache == 760000 * KiB);
    CHECK(d.page_cache_ws == 360000 * KiB);
    // SystemInfo's SDK 33
    CHECK(d.no_exit_info == 0);
    // one lmkd kill in the 6 minutes the samples span: 10 an hour
    CHECK(p.yaml.find("kills of processes it records (lmkd's, the kernel's): 1, 10.0 per hour") !=
          std::string::npos);
    CHECK(p.yaml.find("8 processes (8 sized by Pss, 0 by VmRSS), 2 seen to end") !=
          std::string::npos);
    CHECK(p.yaml.find("the build's device testphone") != std::string::npos);
    CHECK(p.yaml.find("1 trace packets of other data sources") != std::string::npos);
    // a trace holds no zoneinfo nor properties: the catalog's, marked
    CHECK(p.measured("pressure"));
    CHECK(p.measured("page_cache.working_set"));
    CHECK_FALSE(p.measured("kill.watermarks"));
    CHECK_FALSE(p.measured("java_heap_limit"));
}

TEST_CASE("import device: a bugreport's text, its zip and a Perfetto trace make one profile",
          "[device][run]")
{
    TempDir t;
    std::string out = t.path() + "/phone.yaml";
    RunResult r = oomsim({"import", "device", dev("bugreport-android13.txt"), dev(ZIP),
                          pf("phone.pftrace"), "-o", out});
    INFO(r.err);
    REQUIRE(r.status == 0);
    std::string yaml = read_file(out);
    Profile p({dev("bugreport-android13.txt"), dev(ZIP), pf("phone.pftrace")});
    // named by the bugreports' model; the trace joins them (same OS, same class)
    CHECK(std::string(p.d.name) == "test-phone-4");
    // the system: 1400000 kB in each bugreport, 660800 kB in each of the
    // trace's 7 polls: the median of 9 samples is 660800 kB
    CHECK(p.d.system == 660800 * KiB);
    CHECK(yaml.find("the median of 9 samples from 3 captures, 7 of them a trace's polls") !=
          std::string::npos);
    // the spikes from the trace, the watermarks and the heap limit from the bugreports
    CHECK(p.measured("pressure"));
    CHECK(p.measured("kill.watermarks"));
    CHECK(p.d.java_heap_limit == 256 * 1024 * KiB);
    write_file(t.path() + "/plan.yaml",
               "name: mixed\nseed: 7\nreplications: 10\nhorizon: 2min\n"
               "devices: [phone.yaml]\ncandidates: [ocr-v3]\n"
               "workload:\n  path:\n    - cold_start\n"
               "    - requests: {rate: \"0.5/s\", for: 1min, needs: [detector, recognizer]}\n");
    r = oomsim({"run", t.path() + "/plan.yaml", "-o", t.path() + "/out"});
    INFO(r.err);
    CHECK(r.status == 0);
}

TEST_CASE("import device: a damaged Perfetto trace is refused, naming the packet", "[device]")
{
    TempDir t;
    std::string whole = read_file(pf("phone.pftrace"));
    write_file(t.path() + "/cut.pftrace", whole.substr(0, whole.size() - 40));
    RunResult r = oomsim({"import", "device", t.path() + "/cut.pftrace"});
    CHECK(r.status == 1);
    CHECK(r.err.find("cut.pftrace: packet at byte") != std::string::npos);
    CHECK(r.err.find("truncated") != std::string::npos);
    CHECK(r.out.empty());
    // a process_stats entry {pid 5, oom_score_adj 5000}: outside the kernel's range
    const std::string bad("\x0a\x09\x4a\x07\x0a\x05\x08\x05\x50\x88\x27", 11);
    write_file(t.path() + "/adj.pftrace", bad);
    r = oomsim({"import", "device", t.path() + "/adj.pftrace"});
    CHECK(r.status == 1);
    CHECK(r.err.find("adj.pftrace: packet at byte 0: process_stats: pid 5 has an oom_score_adj "
                     "of 5000") != std::string::npos);
    // a trace of no phone memory at all names what it lacks
    const std::string empty("\x0a\x02\x48\x01", 4);
    write_file(t.path() + "/none.pftrace", empty);
    r = oomsim({"import", "device", t.path() + "/none.pftrace"});
    CHECK(r.status == 1);
    CHECK(r.err.find("none.pftrace: the phone's RAM is in none of its sections") !=
          std::string::npos);
}

TEST_CASE("import device: run uses the imported profile as it is, with its provenance",
          "[device][run]")
{
    TempDir t;
    RunResult r = oomsim({"import", "device", dev("bugreport-android13.txt"), "-o",
                          t.path() + "/phone.yaml"});
    REQUIRE(r.status == 0);
    write_file(t.path() + "/plan.yaml",
               "name: measured\nseed: 7\nreplications: 20\nhorizon: 2min\n"
               "devices: [phone.yaml]\ncandidates: [ocr-v3]\n"
               "workload:\n  path:\n    - cold_start\n"
               "    - requests: {rate: \"0.5/s\", for: 1min, needs: [detector, recognizer]}\n"
               "    - background: 30s\n");
    r = oomsim({"run", t.path() + "/plan.yaml", "-o", t.path() + "/out"});
    INFO(r.err);
    REQUIRE(r.status == 0);
    CHECK(r.out.find("  test-phone-4: 12 of its 21 values measured (ram: "
                     "bugreport-android13.txt:20,") != std::string::npos);
    std::string doc = read_file(t.path() + "/out/results.json");
    CHECK(doc.find("\"provenance\"") != std::string::npos);
    CHECK(doc.find("\"source\": \"bugreport-android13.txt:20: MemTotal, 3809280 kB (the 4 GB "
                   "class)\"") != std::string::npos);
    std::string html = read_file(t.path() + "/out/report.html");
    CHECK(html.find("<section id=\"devices\">") != std::string::npos);
    CHECK(html.find("<td>test-phone-4</td>") != std::string::npos);
}

TEST_CASE("run --headroom finds the factor a known death line gives", "[device][run]")
{
    // an iPhone whose jetsam limit is 1000 MiB, a candidate that holds a
    // fixed 100 MiB (nothing drawn, no app baseline): the app dies once
    // 100 MiB x F exceeds 1000 MiB, so the largest factor that meets a 2 %
    // target is 10 (+900 MiB). The search: 1, 2, 4, 8 hold, 16 and 12 fail,
    // 10 holds, 11, 10.5 and 10.25 fail
    TempDir t;
    write_file(t.path() + "/dev.yaml", "name: fixed-phone\nos: ios\nram: 4GiB\nsystem: 1GiB\n"
                                       "kill: {rule: jetsam, limit: 1000MiB}\ncounts: [native]\n");
    write_file(t.path() + "/cand.yaml",
               "id: fixed\ndigest: 00000001\nruntime: test-1\ndelegate: none\nfallback: none\n"
               "receipt_complete: true\nparts:\n  model:\n    file: 1MiB\n"
               "    load: {mode: mmap, time: 10ms}\n"
               "    prepare: {time: 10ms, resident: {native: 100MiB}}\n"
               "    inference: {time: 10ms, working_set: {native: 0MiB}}\n");
    write_file(t.path() + "/plan.yaml",
               "name: known-line\ntarget: {deaths: 2%}\nseed: 1\nreplications: 200\n"
               "horizon: 1min\ndevices: [dev.yaml]\ncandidates: [cand.yaml]\n"
               "workload:\n  path:\n    - cold_start\n"
               "    - requests: {rate: \"1/s\", for: 30s, needs: [model]}\n");
    RunResult r = oomsim({"run", t.path() + "/plan.yaml", "--headroom", "-o", t.path() + "/out"});
    INFO(r.err);
    REQUIRE(r.status == 0);
    CHECK(r.out.find("  fixed-phone, fixed, -: +900 MiB (x10), deaths 0.00% [0.00, 1.88] there") !=
          std::string::npos);
    CHECK(r.err.find("--headroom: 10 more runs of the plan") != std::string::npos);
    std::string doc = read_file(t.path() + "/out/results.json");
    CHECK(doc.find("\"factor\": 10.0") != std::string::npos);
    CHECK(doc.find("\"extra_bytes\": 943718400") != std::string::npos);
    CHECK(doc.find("\"first_failing\": 10.25") != std::string::npos);
    CHECK(read_file(t.path() + "/out/report.html").find("<section id=\"headroom\">") !=
          std::string::npos);
    // without a target there is nothing to hold
    std::string plain = read_file(t.path() + "/plan.yaml");
    plain.erase(plain.find("target: {deaths: 2%}\n"), 21);
    write_file(t.path() + "/plain.yaml", plain);
    r = oomsim({"run", t.path() + "/plain.yaml", "--headroom"});
    CHECK(r.status == 1);
    CHECK(r.err.find("--headroom needs the plan's target") != std::string::npos);
}

TEST_CASE("import device: a trace's processes go to dumpsys meminfo's OOM groups as AOSP's "
          "loop puts them", "[device]")
{
    // ActivityManagerService's DUMP_MEM_OOM_ADJ (releases since Android 13:
    // ..., 200, 250, 225, 300, ...) and dumpApplicationMemoryUsage's loop:
    // the first i with adj_i <= adj < adj_i+1, else the last group
    struct {
        int adj;
        const char *label;
    } cases[] = {
        {-1000, "Native"},          {-901, "Native"},       {-900, "System"},
        {-800, "Persistent"},       {-700, "Persistent Service"}, {-1, "Persistent Service"},
        {0, "Foreground"},          {99, "Foreground"},     {100, "Visible"},
        {200, "Perceptible"},       {225, "Perceptible"},   {249, "Perceptible"},
        // [250, 225) holds nothing: 250 to 299 fall in [225, 300), Perceptible
        // Medium, and Perceptible Low is never reached (as in the source)
        {250, "Perceptible Medium"}, {299, "Perceptible Medium"}, {300, "Backup"},
        {400, "Heavy Weight"},      {500, "A Services"},    {600, "Home"},
        {700, "Previous"},          {800, "B Services"},    {900, "Cached"},
        {999, "Cached"},            {1000, "Cached"},
    };
    for (const auto &c : cases) {
        INFO("adj " << c.adj);
        CHECK(std::string(trc_pf_group_label[trc_pf_group_of(c.adj)]) == c.label);
    }
}
