// test_perfetto.cpp - `oomsim import perfetto` and the timeline export
// (docs/perfetto.md).  The recorded session is a binary trace encoded by
// protoc at build time from tests/data/perfetto/session.textpb; the
// variants (kill forms, compression, clocks, damage) are built here with a
// small wire-format writer, field numbers as in Perfetto's .proto files.
#include "cli/cli.h"
#include "results/results.h"
#include "scenarios/scenarios.h"
#include "shim/shim.hpp"
#include "traces/traces.h"

#include <catch2/catch.hpp>

#include <jansson.h>
#include <zlib.h>
#include <zstd.h>

#include <algorithm>
#include <dirent.h>
#include <map>
#include <string>
#include <vector>

namespace {

// ---------------------------------------------------------- wire writer

struct Pb {
    std::string b;
    void raw_varint(uint64_t v)
    {
        while (v >= 0x80) {
            b += static_cast<char>(v | 0x80);
            v >>= 7;
        }
        b += static_cast<char>(v);
    }
    Pb &varint(uint32_t field, uint64_t v)
    {
        raw_varint(uint64_t(field) << 3);
        raw_varint(v);
        return *this;
    }
    Pb &bytes(uint32_t field, const std::string &s)
    {
        raw_varint(uint64_t(field) << 3 | 2);
        raw_varint(s.size());
        b += s;
        return *this;
    }
    Pb &msg(uint32_t field, const Pb &m) { return bytes(field, m.b); }
};

// TracePacket fields and the messages inside them.
std::string trace_of(const std::vector<Pb> &packets)
{
    Pb t;
    for (const auto &p : packets)
        t.msg(1, p);
    return t.b;
}
Pb process(int pid, const std::string &name)
{
    return Pb().varint(1, uint64_t(pid)).bytes(3, name);
}
Pb tree(const std::vector<Pb> &procs, const std::vector<Pb> &threads = {})
{
    Pb t;
    for (const auto &p : procs)
        t.msg(1, p);
    for (const auto &p : threads)
        t.msg(2, p);
    return Pb().msg(2, t);
}
// An ftrace event: timestamp, pid, then the event's own message.
Pb fevent(uint64_t ts, int pid, uint32_t field, const Pb &body)
{
    return Pb().varint(1, ts).varint(2, uint64_t(pid)).msg(field, body);
}
Pb print(const std::string &buf) { return Pb().bytes(2, buf); }
Pb rss(int member, uint64_t size, int curr, uint32_t mm)
{
    return Pb().varint(1, uint64_t(member)).varint(2, size).varint(3, uint64_t(curr)).varint(4, mm);
}
Pb bundle(const std::vector<Pb> &events)
{
    Pb b;
    b.varint(1, 0);
    for (const auto &e : events)
        b.msg(2, e);
    return Pb().msg(1, b);
}

// ------------------------------------------------------------ importing

struct Imported {
    int rc;
    std::string msg;
    std::vector<trc_event> events;
    trc_pf_summary sum;
};

int collect(void *ctx, const trc_event *e, sim_error *)
{
    static_cast<std::vector<trc_event> *>(ctx)->push_back(*e);
    return SIM_OK;
}

Imported import(const std::string &bytes, const char *process, int64_t pid = -1)
{
    Imported r;
    sim_error err;
    sim_error_clear(&err);
    trc_pf_opts o = {process, pid, "camera", 1};
    r.rc = trc_pf_import_buffer(bytes.data(), bytes.size(), "t.pftrace", &o, collect, &r.events,
                                &r.sum, &err);
    r.msg = err.msg;
    trc_pf_summary_free(&r.sum);
    sim_error_clear(&err);
    // the summary again, for the tests that read it
    std::vector<trc_event> again;
    (void)trc_pf_import_buffer(bytes.data(), bytes.size(), "t.pftrace", &o, collect, &again,
                               &r.sum, &err);
    return r;
}

std::string session_bytes()
{
    return shim::read_file(std::string(OOMSIM_PF_DATA) + "/session.pftrace");
}

const trc_event *find(const std::vector<trc_event> &ev, int kind, const char *error = nullptr,
                      int stage = -1)
{
    for (const auto &e : ev)
        if (int(e.kind) == kind && (stage < 0 || int(e.stage) == stage) &&
            (error == nullptr || ((e.has & TRC_F_ERROR) && std::strcmp(e.error, error) == 0)))
            return &e;
    return nullptr;
}

int count(const std::vector<trc_event> &ev, int kind)
{
    return int(std::count_if(ev.begin(), ev.end(), [&](const trc_event &e) {
        return int(e.kind) == kind;
    }));
}

const int64_t MiB = 1 << 20;

// The top-level packets' byte offsets of a trace.
std::vector<size_t> packet_offsets(const std::string &t)
{
    std::vector<size_t> at;
    size_t p = 0;
    while (p < t.size()) {
        at.push_back(p);
        p++; // the tag (field 1, one byte)
        uint64_t n = 0;
        for (int shift = 0;; shift += 7) {
            uint8_t c = uint8_t(t[p++]);
            n |= uint64_t(c & 0x7f) << shift;
            if (c < 0x80)
                break;
        }
        p += n;
    }
    return at;
}

} // namespace

TEST_CASE("perfetto import: the recorded session, event by event", "[perfetto]")
{
    Imported r = import(session_bytes(), "com.example.camera");
    INFO(r.msg);
    REQUIRE(r.rc == SIM_OK);
    const auto &ev = r.events;
    // time order, from 0, every event the candidate's
    for (size_t i = 1; i < ev.size(); i++)
        CHECK(ev[i].time_us >= ev[i - 1].time_us);
    CHECK(ev.front().time_us == 0);
    for (const auto &e : ev)
        CHECK(std::string(e.candidate) == "camera");
    // the first poll: anon 50 MiB, file 20 MiB
    CHECK(ev.front().mem[TRC_MEM_NATIVE] == 50 * MiB);
    CHECK(ev.front().mem[TRC_MEM_FILE] == 20 * MiB);
    // load: the file grew from 20 to 60 MiB and stayed
    const trc_event *load = find(ev, TRC_BEGIN, nullptr, TRC_LOAD);
    REQUIRE(load != nullptr);
    CHECK(std::string(load->part) == "detector");
    CHECK(load->time_us == 100000);
    CHECK(load->duration_us == 200000);
    CHECK(load->alloc[TRC_MEM_FILE] == 40 * MiB);
    CHECK(load->keep[TRC_MEM_FILE] == 40 * MiB);
    // runtime_prepare: anon 50 -> 150 (+ 10 MiB swapped out by kswapd,
    // still the app's) -> 120: 110 MiB at its peak, 80 kept
    const trc_event *prep = find(ev, TRC_BEGIN, nullptr, TRC_RUNTIME_PREPARE);
    REQUIRE(prep != nullptr);
    CHECK(prep->duration_us == 300000);
    CHECK(prep->alloc[TRC_MEM_NATIVE] == 110 * MiB);
    CHECK(prep->keep[TRC_MEM_NATIVE] == 80 * MiB);
    bool swapped = false;
    for (const auto &e : ev)
        swapped |= e.time_us == 450000 && e.mem[TRC_MEM_NATIVE] == 160 * MiB;
    CHECK(swapped); // the rss_stat with curr 0 and the app's mm_id
    // the other app's memory (mm 88) never shows
    for (const auto &e : ev)
        CHECK(e.mem[TRC_MEM_NATIVE] != 7777777);
    // inference: a track event slice with an interned name, its request
    const trc_event *arrival = find(ev, TRC_SAMPLE, nullptr, TRC_INFERENCE);
    REQUIRE(arrival != nullptr);
    CHECK((arrival->has & TRC_F_REQUEST));
    CHECK(std::string(arrival->needs) == "detector");
    CHECK(arrival->step == 1);
    const trc_event *inf = find(ev, TRC_BEGIN, nullptr, TRC_INFERENCE);
    REQUIRE(inf != nullptr);
    CHECK(inf->time_us == 1000000);
    CHECK(inf->duration_us == 100000);
    CHECK(inf->alloc[TRC_MEM_NATIVE] == 50 * MiB); // 130 -> 170 -> 125 (+10 swapped)
    CHECK(count(ev, TRC_BEGIN) == 3);               // "inflate" is not an oomsim slice
    CHECK(count(ev, TRC_END) == 3);
    // adj 700: the background
    const trc_event *bg = find(ev, TRC_SAMPLE, "background");
    REQUIRE(bg != nullptr);
    CHECK(bg->time_us == 1500000);
    trc_pf_summary_free(&r.sum);
}

TEST_CASE("perfetto import: the recorded session's death, relaunch and summary", "[perfetto]")
{
    Imported r = import(session_bytes(), "com.example.camera");
    INFO(r.msg);
    REQUIRE(r.rc == SIM_OK);
    const auto &ev = r.events;
    // lmkd kills the app, not the other one (counted, not taken)
    REQUIRE(count(ev, TRC_EXIT_EVENT) == 1);
    const trc_event *death = find(ev, TRC_EXIT_EVENT);
    CHECK(death->time_us == 2000000);
    CHECK(std::string(death->error) == "LOW_MEM_AND_THRASHING");
    CHECK(death->exit_reason == TRC_SYSTEM_RECLAIM);
    CHECK(death->exit.reason_code == 3);
    CHECK(death->exit.importance == 400);
    CHECK(std::string(death->process) == "com.example.camera");
    CHECK(r.sum.kill_other == 1);
    // the user starts it again (pid 1100) 2 s later
    const trc_event *relaunch = nullptr;
    for (const auto &e : ev)
        if (e.stage == TRC_EXIT && e.kind == TRC_SAMPLE && (e.has & TRC_F_DURATION))
            relaunch = &e;
    REQUIRE(relaunch != nullptr);
    CHECK(relaunch->duration_us == 2000000);
    CHECK(ev.back().time_us == 4000000);
    CHECK(ev.back().mem[TRC_MEM_NATIVE] == 40 * MiB);
    CHECK(r.sum.pids == 2);
    CHECK(r.sum.kills == 1);
    // the skeleton's measures
    REQUIRE(r.sum.nparts == 1);
    CHECK(r.sum.stages[0][TRC_RUNTIME_PREPARE].n == 1);
    CHECK(r.sum.has_baseline);
    CHECK(r.sum.baseline[TRC_MEM_NATIVE] == 50 * MiB);
    trc_pf_summary_free(&r.sum);
}

TEST_CASE("perfetto import: compressed bundles read as the same packets", "[perfetto]")
{
    std::string plain = session_bytes();
    Imported a = import(plain, "com.example.camera");
    REQUIRE(a.rc == SIM_OK);
    trc_pf_summary_free(&a.sum);
    // the whole trace, deflated (zlib) into one compressed_packets packet
    uLongf zn = compressBound(uLong(plain.size()));
    std::string z(zn, '\0');
    REQUIRE(compress2(reinterpret_cast<Bytef *>(&z[0]), &zn,
                      reinterpret_cast<const Bytef *>(plain.data()), uLong(plain.size()), 9) ==
            Z_OK);
    z.resize(zn);
    std::string zs(ZSTD_compressBound(plain.size()), '\0');
    size_t zsn = ZSTD_compress(&zs[0], zs.size(), plain.data(), plain.size(), 3);
    REQUIRE(!ZSTD_isError(zsn));
    zs.resize(zsn);
    for (auto [field, body] : {std::pair<uint32_t, std::string>{50, z}, {133, zs}}) {
        INFO("field " << field);
        Imported b = import(trace_of({Pb().bytes(field, body)}), "com.example.camera");
        INFO(b.msg);
        REQUIRE(b.rc == SIM_OK);
        REQUIRE(b.events.size() == a.events.size());
        for (size_t i = 0; i < a.events.size(); i++)
            CHECK(trc_event_equal(&a.events[i], &b.events[i]));
        CHECK(b.sum.compressed == 1);
        trc_pf_summary_free(&b.sum);
    }
    // a damaged bundle is refused, naming the packet
    std::string bad = z;
    bad[bad.size() / 2] = char(bad[bad.size() / 2] ^ 0x5a);
    bad.resize(bad.size() - 3);
    Imported c = import(trace_of({Pb().bytes(50, bad)}), "com.example.camera");
    CHECK(c.rc == SIM_EINPUT);
    CHECK(c.msg.find("packet at byte 0") != std::string::npos);
    CHECK(c.msg.find("compressed_packets") != std::string::npos);
    trc_pf_summary_free(&c.sum);
}

TEST_CASE("perfetto import: lmkd's kill forms and the kernel's OOM kill", "[perfetto]")
{
    struct Form {
        const char *what;
        Pb event;
        const char *error;
        int64_t reason_code, importance;
        trc_exit_reason reason;
    };
    std::vector<Form> forms = {
        {"today's instant", fevent(2000, 300, 3, print("N|300|lowmemorykiller|lmk,1000,8,0,0,0\n")),
         "LOW_MEM", 3, 100, TRC_LOW_MEMORY},
        {"the three-number slice", fevent(2000, 300, 3, print("B|300|lmk,1000,3,900\n")),
         "LOW_MEM_AND_SWAP", 3, 400, TRC_SYSTEM_RECLAIM},
        {"the older counter", fevent(2000, 300, 3, print("C|300|kill_one_process|1000\n")),
         "lmkd", 3, 200, TRC_LOW_MEMORY},
        {"the kernel's OOM killer", fevent(2000, 0, 334, Pb().varint(1, 1000)), "kernel_oom", 2,
         200, TRC_LOW_MEMORY},
        {"the in-kernel lowmemorykiller", fevent(2000, 0, 35, Pb().bytes(1, "app").varint(2, 1000)),
         "lowmemorykiller", 3, 200, TRC_LOW_MEMORY},
    };
    for (auto &f : forms) {
        INFO(f.what);
        std::string t = trace_of(
            {tree({process(1000, "com.example.app"), process(300, "lmkd")}),
             bundle({fevent(1000, 1500, 326, Pb().varint(2, 100).varint(3, 1000)),
                     fevent(1500, 1000, 313, rss(1, 64 * MiB, 1, 5)), f.event,
                     // the counter's reset to 0 is not a kill
                     fevent(2500, 300, 3, print("C|300|kill_one_process|0\n"))})});
        Imported r = import(t, "com.example.app");
        INFO(r.msg);
        REQUIRE(r.rc == SIM_OK);
        REQUIRE(count(r.events, TRC_EXIT_EVENT) == 1);
        const trc_event *d = find(r.events, TRC_EXIT_EVENT);
        CHECK(std::string(d->error) == f.error);
        CHECK(d->exit.reason_code == f.reason_code);
        CHECK(d->exit.importance == f.importance);
        CHECK(d->exit_reason == f.reason);
        CHECK(d->exit.rss_kb == 64 * 1024);
        CHECK(d->exit.status == (f.reason_code == 2 ? 9 : 0));
        trc_pf_summary_free(&r.sum);
    }
    // a kill of another process is not the app's death
    std::string other = trace_of(
        {tree({process(1000, "com.example.app"), process(2000, "other")}),
         bundle({fevent(1000, 1000, 313, rss(1, MiB, 1, 5)),
                 fevent(2000, 300, 3, print("N|300|lowmemorykiller|lmk,2000,8,900,0,0\n")),
                 fevent(2100, 0, 334, Pb().varint(1, 2000))})});
    Imported r = import(other, "com.example.app");
    REQUIRE(r.rc == SIM_OK);
    CHECK(count(r.events, TRC_EXIT_EVENT) == 0);
    CHECK(r.sum.kill_other == 2);
    trc_pf_summary_free(&r.sum);
}

TEST_CASE("perfetto import: by pid, a comm name, and a process that is not there", "[perfetto]")
{
    Imported byname = import(session_bytes(), "com.example.camera");
    Imported bypid = import(session_bytes(), nullptr, 1000);
    REQUIRE(bypid.rc == SIM_OK);
    // one life only: pid 1100 is another process to --pid
    CHECK(bypid.sum.pids == 1);
    CHECK(count(bypid.events, TRC_EXIT_EVENT) == 1);
    CHECK(bypid.events.size() < byname.events.size());
    trc_pf_summary_free(&byname.sum);
    trc_pf_summary_free(&bypid.sum);
    // the kernel keeps the last 15 bytes of a long name as the comm
    Pb comm = Pb().varint(1, 1000).bytes(3, std::string("com.example.camera.pro").substr(7)).varint(9, 1);
    std::string t = trace_of({Pb().msg(2, Pb().msg(1, comm)),
                              bundle({fevent(10, 1000, 313, rss(1, 3 * MiB, 1, 9))})});
    Imported c = import(t, "com.example.camera.pro");
    INFO(c.msg);
    REQUIRE(c.rc == SIM_OK);
    REQUIRE(!c.events.empty());
    CHECK(c.events.back().mem[TRC_MEM_NATIVE] == 3 * MiB);
    trc_pf_summary_free(&c.sum);
    Imported none = import(session_bytes(), "com.absent");
    CHECK(none.rc == SIM_EINPUT);
    CHECK(none.msg.find("no process named 'com.absent'") != std::string::npos);
    trc_pf_summary_free(&none.sum);
}

TEST_CASE("perfetto import: truncated and corrupt input name the packet's byte offset",
          "[perfetto]")
{
    std::string t = session_bytes();
    std::vector<size_t> at = packet_offsets(t);
    REQUIRE(at.size() == 11);
    // every cut inside a packet is refused, naming that packet
    for (size_t k = 0; k < at.size(); k++) {
        size_t end = k + 1 < at.size() ? at[k + 1] : t.size();
        for (size_t cut : {at[k] + 1, (at[k] + end) / 2, end - 1}) {
            if (cut <= at[k] || cut >= end)
                continue;
            Imported r = import(t.substr(0, cut), "com.example.camera");
            INFO("cut at " << cut << ": " << r.msg);
            CHECK(r.rc == SIM_EINPUT);
            CHECK(r.msg.find("t.pftrace: packet at byte " + std::to_string(at[k]) + ":") == 0);
            trc_pf_summary_free(&r.sum);
        }
    }
    // a length that runs past the end, and a malformed field inside a packet
    std::string huge = t + std::string("\x0a\xff\xff\x03", 4);
    Imported r = import(huge, "com.example.camera");
    CHECK(r.rc == SIM_EINPUT);
    CHECK(r.msg.find("packet at byte " + std::to_string(t.size()) + ": truncated") !=
          std::string::npos);
    trc_pf_summary_free(&r.sum);
    std::string inner = trace_of({tree({process(1, "x")}), Pb().bytes(1, std::string("\x12\x05\x0a", 3))});
    Imported m = import(inner, "x");
    CHECK(m.rc == SIM_EINPUT);
    CHECK(m.msg.find("malformed") != std::string::npos);
    trc_pf_summary_free(&m.sum);
    // not a trace at all
    Imported text = import("hello, world\n", "x");
    CHECK(text.rc == SIM_EINPUT);
    CHECK(text.msg.find("packet at byte 0") != std::string::npos);
    trc_pf_summary_free(&text.sum);
}

TEST_CASE("perfetto import: track events on a sequence-scoped incremental clock", "[perfetto]")
{
    // The Perfetto SDK's way: a clock snapshot ties clock 64 (incremental,
    // in microseconds) to the boot clock; the packets carry deltas.
    Pb clocks;
    clocks.msg(1, Pb().varint(1, 6).varint(2, 5000000000ull));
    clocks.msg(1, Pb().varint(1, 64).varint(2, 1000).varint(3, 1).varint(4, 1000));
    Pb defaults = Pb().varint(58, 64).msg(11, Pb().varint(11, 42));
    Pb desc = Pb().varint(1, 42).msg(3, Pb().varint(1, 777).bytes(6, "com.sdk.app"));
    auto ev = [](uint64_t delta, int type, uint64_t iid) {
        Pb te = Pb().varint(9, uint64_t(type));
        if (iid)
            te.varint(10, iid);
        return Pb().varint(8, delta).varint(10, 3).varint(13, 2).msg(11, te);
    };
    std::string t = trace_of(
        {Pb().varint(10, 3).varint(13, 1).msg(60, desc).msg(6, clocks).msg(59, defaults),
         Pb().varint(10, 3).varint(13, 2).msg(12, Pb().msg(2, Pb().varint(1, 1).bytes(
                                                                  2, "oomsim:load:weights"))),
         ev(500, 1, 1),   // begins 500 us after the snapshot
         ev(2000, 2, 0),  // ends 2 ms later
         // the app's memory on the boot clock, between the two
         bundle({fevent(5000000000ull + 1000000, 777, 313, rss(0, 30 * MiB, 1, 3))})});
    Imported r = import(t, "com.sdk.app");
    INFO(r.msg);
    REQUIRE(r.rc == SIM_OK);
    const trc_event *b = find(r.events, TRC_BEGIN, nullptr, TRC_LOAD);
    REQUIRE(b != nullptr);
    CHECK(std::string(b->part) == "weights");
    CHECK(b->duration_us == 2000);
    CHECK(b->keep[TRC_MEM_FILE] == 30 * MiB);
    // the rss_stat at snapshot + 1000 us falls inside the slice
    CHECK(b->time_us == 0);
    CHECK(r.events.back().kind == TRC_END);
    CHECK(r.events.back().time_us == 2000);
    trc_pf_summary_free(&r.sum);
}

TEST_CASE("perfetto import: the shipped trace config parses and asks for what is read",
          "[perfetto]")
{
    // protoc encoded it at build time (a syntax error fails the build);
    // its text asks for every data source the importer reads
    CHECK(shim::exists(std::string(OOMSIM_PF_DATA) + "/config.bin"));
    std::string cfg = shim::read_file(std::string(OOMSIM_SOURCE_DIR) +
                                      "/docs/perfetto/oomsim-trace-config.pbtxt");
    for (const char *want :
         {"linux.process_stats", "scan_all_processes_on_start: true", "proc_stats_poll_ms",
          "\"kmem/rss_stat\"", "\"synthetic/rss_stat_throttled\"", "\"oom/oom_score_adj_update\"",
          "\"oom/mark_victim\"", "\"lowmemorykiller/lowmemory_kill\"", "\"ftrace/print\"",
          "atrace_apps: \"lmkd\"", "track_event"})
        CHECK(cfg.find(want) != std::string::npos);
}

TEST_CASE("perfetto import: the recorded session replays on other phones and diagnoses",
          "[perfetto]")
{
    shim::TempDir dir;
    std::string trace = std::string(OOMSIM_PF_DATA) + "/session.pftrace";
    auto imp = shim::run({OOMSIM_BIN, "import", "perfetto", trace, "--process",
                          "com.example.camera", "--id", "camera", "-o", dir.file("s.jsonl"),
                          "--candidate", dir.file("camera.yaml")});
    INFO(imp.err);
    REQUIRE(imp.status == 0);
    CHECK(imp.err.find("2 lives") != std::string::npos);
    std::string cand = shim::read_file(dir.file("camera.yaml"));
    CHECK(cand.find("MEASURED") != std::string::npos);
    CHECK(cand.find("prepare: {time: 300000us, transient: {native: 30720KiB}, resident: "
                    "{native: 81920KiB}}") != std::string::npos);
    dir.write("plan.yaml", "name: camera-replay\n"
                           "about: \"the recorded camera session on two phones\"\n"
                           "seed: 1\nreplications: 1\nhorizon: 1min\n"
                           "devices: [android-4g, android-go-2g]\n"
                           "candidates: [camera.yaml]\n"
                           "workload:\n  path:\n    - cold_start\n"
                           "    - {requests: {every: 1s, count: 1}}\n    - background: 1s\n"
                           "  relaunch: 2s\n");
    auto rp = shim::run({OOMSIM_BIN, "replay", dir.file("s.jsonl"), "--scenario",
                         dir.file("plan.yaml"), "--format", "json"});
    INFO(rp.err);
    REQUIRE(rp.status == 0);
    json_error_t je;
    json_t *doc = json_loads(rp.out.c_str(), 0, &je);
    REQUIRE(doc != nullptr);
    json_t *cells = json_object_get(doc, "cells");
    REQUIRE(json_array_size(cells) == 2);
    for (size_t i = 0; i < 2; i++) {
        json_t *c = json_array_get(cells, i);
        // the recorded stages: 40 MiB of file, 80 resident + 30 transient,
        // then the 50 MiB inference working set
        json_t *peak = json_object_get(json_object_get(c, "peak"), "app_bytes");
        CHECK(json_integer_value(json_object_get(peak, "max")) == 130 * MiB);
    }
    json_decref(doc);
    auto dg = shim::run({OOMSIM_BIN, "diagnose", dir.file("s.jsonl"), "--format", "json"});
    REQUIRE(dg.status == 0);
    CHECK(dg.out.find("\"class\": \"system_reclaim\"") != std::string::npos);
    CHECK(dg.out.find("\"evidence\": \"confirmed\"") != std::string::npos);
    CHECK(dg.out.find("lmkd: LOW_MEM_AND_THRASHING") != std::string::npos);
    // bad input: exit 1, nothing written
    shim::write_file(dir.file("bad.pftrace"), session_bytes().substr(0, 300));
    auto bad = shim::run({OOMSIM_BIN, "import", "perfetto", dir.file("bad.pftrace"), "--pid",
                          "1000", "-o", dir.file("bad.jsonl")});
    CHECK(bad.status == 1);
    CHECK(bad.err.find("packet at byte") != std::string::npos);
    CHECK(!shim::exists(dir.file("bad.jsonl")));
}

// ---------------------------------------------------------------- export

namespace {

// The checks of the JSON trace event format every exported timeline
// passes; returns the highest counted total.
int64_t check_trace_events(const std::string &text)
{
    json_error_t je;
    json_t *doc = json_loads(text.c_str(), 0, &je);
    INFO(je.text);
    REQUIRE(doc != nullptr);
    json_t *events = json_object_get(doc, "traceEvents");
    REQUIRE(json_is_array(events));
    REQUIRE(json_array_size(events) > 0);
    std::map<std::string, int64_t> last_ts;
    int64_t counted = -1;
    size_t i;
    json_t *e;
    std::map<char, int> phases;
    json_array_foreach(events, i, e)
    {
        INFO("event " << i);
        REQUIRE(json_is_object(e));
        const char *ph = json_string_value(json_object_get(e, "ph"));
        REQUIRE(ph != nullptr);
        REQUIRE(std::strlen(ph) == 1);
        phases[ph[0]]++;
        CHECK(json_is_integer(json_object_get(e, "pid")));
        CHECK(json_is_integer(json_object_get(e, "tid")));
        REQUIRE(json_is_string(json_object_get(e, "name")));
        std::string name = json_string_value(json_object_get(e, "name"));
        json_t *ts = json_object_get(e, "ts");
        json_t *args = json_object_get(e, "args");
        switch (ph[0]) {
        case 'X':
            REQUIRE(json_is_integer(ts));
            CHECK(json_integer_value(ts) >= 0);
            REQUIRE(json_is_integer(json_object_get(e, "dur")));
            CHECK(json_integer_value(json_object_get(e, "dur")) >= 0);
            break;
        case 'C': {
            REQUIRE(json_is_integer(ts));
            REQUIRE(json_is_object(args));
            REQUIRE(json_object_size(args) > 0);
            const char *k;
            json_t *v;
            json_object_foreach(args, k, v) CHECK(json_is_number(v));
            auto prev = last_ts.find(name);
            if (prev != last_ts.end())
                CHECK(json_integer_value(ts) >= prev->second); // never back in time
            last_ts[name] = json_integer_value(ts);
            if (name == "counted")
                counted = std::max<int64_t>(counted,
                                            json_integer_value(json_object_get(args, "bytes")));
            break;
        }
        case 'i':
            REQUIRE(json_is_integer(ts));
            CHECK(std::string(json_string_value(json_object_get(e, "s"))) == "p");
            break;
        case 'M':
            CHECK((name == "process_name" || name == "thread_name"));
            REQUIRE(json_is_string(json_object_get(args, "name")));
            break;
        default:
            FAIL("phase " << ph);
        }
    }
    CHECK(phases['M'] >= 3);
    CHECK(phases['C'] >= 2);
    json_decref(doc);
    return counted;
}

} // namespace

TEST_CASE("timeline export: every teaching scenario's timeline passes the format checks",
          "[perfetto]")
{
    std::string teach = std::string(OOMSIM_SOURCE_DIR) + "/scenarios/catalog/teach/";
    DIR *d = opendir(teach.c_str());
    REQUIRE(d != nullptr);
    std::vector<std::string> names;
    while (struct dirent *f = readdir(d))
        if (std::strstr(f->d_name, ".yaml") != nullptr)
            names.push_back(f->d_name);
    closedir(d);
    std::sort(names.begin(), names.end());
    REQUIRE(names.size() >= 9);
    for (const auto &n : names) {
        INFO(n);
        scn_scenario s;
        sim_error err;
        sim_error_clear(&err);
        REQUIRE(scn_scenario_load((teach + n).c_str(), &s, &err) == SIM_OK);
        for (unsigned c = 0; c < s.ncells && c < 2; c++) {
            const mdl_cell *cell = &s.cells[c];
            mdl_device dv;
            mdl_device_in_force(cell->device, &cell->policy, &dv);
            res_chrome *ch = res_chrome_create(&dv);
            REQUIRE(ch != nullptr);
            mdl_trace_sink sink = {res_chrome_add, ch, NULL};
            mdl_rep r;
            REQUIRE(mdl_run_replication_traced(cell, 0, nullptr, nullptr, &sink, &r, &err) ==
                    SIM_OK);
            char *text;
            size_t len;
            REQUIRE(res_chrome_finish(ch, cell->horizon, n.c_str(), &text, &len, &err) == SIM_OK);
            res_chrome_free(ch);
            std::string doc(text, len);
            free(text);
            CHECK(check_trace_events(doc) == r.peak);
            // a death is an instant with its exit record (none on a phone
            // that keeps no record: exit_info false)
            if (r.deaths_total > 0) {
                CHECK(doc.find("\"name\":\"death: ") != std::string::npos);
                CHECK((doc.find("\"reason_code\":") != std::string::npos ||
                       doc.find("\"report\":") != std::string::npos ||
                       r.deaths_unrecorded == r.deaths_total));
            }
        }
        scn_scenario_release(&s);
    }
}

TEST_CASE("timeline export: gen, explain -o and run -o write it", "[perfetto]")
{
    shim::TempDir dir;
    auto g = shim::run({OOMSIM_BIN, "gen", "background-reclaim", "-o", dir.file("t.json"),
                        "--trace-format", "perfetto"});
    INFO(g.err);
    REQUIRE(g.status == 0);
    std::string gen = shim::read_file(dir.file("t.json"));
    CHECK(check_trace_events(gen) == 600 * MiB);
    CHECK(gen.find("\"name\":\"cached_adj\"") == std::string::npos); // minfree phone, no ttl
    CHECK(gen.find("\"name\":\"background\"") != std::string::npos);
    CHECK(gen.find("\"name\":\"kill line\"") != std::string::npos);
    auto x = shim::run({OOMSIM_BIN, "explain", "background-reclaim", "-o", dir.file("x")});
    REQUIRE(x.status == 0);
    CHECK(shim::read_file(dir.file("x/timeline.json")) == gen);
    auto r = shim::run({OOMSIM_BIN, "run", "background-reclaim", "-r", "2", "-o", dir.file("r")});
    REQUIRE(r.status == 0);
    check_trace_events(shim::read_file(dir.file("r/timeline-cell-0.json")));
}

TEST_CASE("perfetto import: a clock snapshot puts the exits on the wall clock, and diagnose "
          "matches an exit record by pid and time", "[perfetto][clock]")
{
    // 2024-12-04 10:23:45 UTC on REALTIME when BOOTTIME read 1 s
    const uint64_t real = 1733307825000000000ull;
    Pb clocks;
    clocks.msg(1, Pb().varint(1, 6).varint(2, 1000000000ull));
    clocks.msg(1, Pb().varint(1, 1).varint(2, real));
    auto story = [](bool with_clock, const Pb &c) {
        std::vector<Pb> p = {tree({process(1000, "com.example.app"), process(300, "lmkd")})};
        if (with_clock)
            p.push_back(Pb().varint(10, 7).msg(6, c));
        p.push_back(bundle({fevent(1500000000ull, 1000, 313, rss(1, 64 * MiB, 1, 5)),
                            fevent(3000000000ull, 300, 3,
                                   print("N|300|lowmemorykiller|lmk,1000,8,900,0,0\n"))}));
        return trace_of(p);
    };
    Imported r = import(story(true, clocks), "com.example.app");
    INFO(r.msg);
    REQUIRE(r.rc == SIM_OK);
    CHECK(r.sum.has_realtime == 1);
    const trc_event *d = find(r.events, TRC_EXIT_EVENT);
    REQUIRE(d != nullptr);
    CHECK(d->exit.timestamp_ms == 1733307827000); // boot 3 s: 2 s after the snapshot
    CHECK(d->exit.pid == 1000);
    trc_pf_summary_free(&r.sum);
    Imported plain = import(story(false, clocks), "com.example.app");
    REQUIRE(plain.rc == SIM_OK);
    CHECK(plain.sum.has_realtime == 0);
    d = find(plain.events, TRC_EXIT_EVENT);
    REQUIRE(d != nullptr);
    CHECK(d->exit.timestamp_ms == 1500); // from the trace's first event, as before
    trc_pf_summary_free(&plain.sum);

    shim::TempDir dir;
    shim::write_file(dir.file("c.pftrace"), story(true, clocks));
    shim::write_file(dir.file("p.pftrace"), story(false, clocks));
    for (const char *t : {"c", "p"}) {
        auto imp = shim::run({OOMSIM_BIN, "import", "perfetto", dir.file(std::string(t) + ".pftrace"),
                              "--process", "com.example.app", "-o",
                              dir.file(std::string(t) + ".jsonl")});
        INFO(imp.err);
        REQUIRE(imp.status == 0);
        CHECK(imp.err.find(t[0] == 'c' ? "on the wall clock (UTC)" : "no clock snapshot gives "
                           "REALTIME") != std::string::npos);
    }
    // the phone's exit record, printed in its zone (UTC+1), 0.4 s after
    // the kill, and another death of a reused pid a day later
    shim::write_file(dir.file("exits.txt"),
                     "ApplicationExitInfo #0:\n"
                     "  timestamp=2024-12-04 11:23:47.400 pid=1000 realUid=10123 user=0\n"
                     "  process=com.example.app reason=3 (LOW_MEMORY) status=0 importance=400\n"
                     "ApplicationExitInfo #1:\n"
                     "  timestamp=2024-12-05 11:23:47.400 pid=1000 realUid=10123 user=0\n"
                     "  process=com.example.app reason=3 (LOW_MEMORY) status=0 importance=400\n");
    auto dg = shim::run({OOMSIM_BIN, "diagnose", dir.file("c.jsonl"), "--exits",
                         dir.file("exits.txt"), "--format", "json"});
    INFO(dg.out << dg.err);
    REQUIRE(dg.status == 0);
    json_error_t je;
    json_t *doc = json_loads(dg.out.c_str(), 0, &je);
    REQUIRE(doc != nullptr);
    json_t *ex = json_object_get(doc, "exits");
    REQUIRE(json_array_size(ex) == 2);
    json_t *first = json_array_get(ex, 0), *second = json_array_get(ex, 1);
    CHECK(json_is_true(json_object_get(first, "matched")));
    CHECK(std::string(json_string_value(json_object_get(first, "matched_on")))
              .find("pid and time (a whole number of quarter hours") == 0);
    CHECK(std::string(json_string_value(json_object_get(first, "evidence"))) == "confirmed");
    CHECK(json_is_false(json_object_get(second, "matched"))); // a day later: not this death
    json_decref(doc);
    // without a snapshot the trace's own times are relative, and say so
    auto rel = shim::run({OOMSIM_BIN, "diagnose", dir.file("p.jsonl")});
    REQUIRE(rel.status == 0);
    CHECK(rel.out.find("+1.500 s from the trace's start (no wall clock)") != std::string::npos);
    CHECK(rel.out.find("1970-01-01") == std::string::npos);
}
