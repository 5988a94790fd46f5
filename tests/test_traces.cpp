// Trace readers and writers (docs/traces.md): round trips through every
// encoding, the allow-list, validation messages, begin/end pairing.
#include <catch2/catch.hpp>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "shim/shim.hpp"
#include "traces/traces.h"

using namespace shim;

namespace {

// Events that use every field at least once.
std::vector<trc_event> sample_events()
{
    std::vector<trc_event> v;
    trc_event e;
    trc_event_clear(&e);
    e.has = TRC_F_TIME_MS | TRC_F_KIND | TRC_F_PART | TRC_F_CANDIDATE | TRC_F_RUNTIME |
            TRC_F_DELEGATE | TRC_F_APP_VERSION | TRC_F_PROCESS;
    e.time_us = 12000;
    e.stage = TRC_LOAD;
    e.kind = TRC_BEGIN;
    std::strcpy(e.part, "detector");
    std::strcpy(e.candidate, "3f2a9c1e");
    std::strcpy(e.runtime, "litert-1.4.0");
    std::strcpy(e.delegate, "gpu");
    std::strcpy(e.app_version, "5.2.0");
    std::strcpy(e.process, "com.example.app");
    v.push_back(e);
    trc_event_clear(&e);
    e.has = TRC_F_KIND | TRC_F_SESSION | TRC_F_SESSIONS | TRC_F_QUEUE | TRC_F_IN_FLIGHT |
            TRC_F_PAYLOAD | TRC_F_RSS_MB | TRC_F_BUDGET_MB | TRC_F_MEM;
    e.time_us = 12345;
    e.stage = TRC_INFERENCE;
    e.kind = TRC_SAMPLE;
    e.session = 2;
    e.sessions = 2;
    e.queue = 7;
    e.in_flight = 1;
    e.payload = TRC_IMAGE;
    e.rss_mb = 812;
    e.budget_mb = 900;
    e.mem_has = 0xf;
    e.mem[TRC_MEM_JAVA] = 12 << 20;
    e.mem[TRC_MEM_NATIVE] = INT64_C(700) << 20;
    e.mem[TRC_MEM_GPU] = 96 << 20;
    e.mem[TRC_MEM_FILE] = 48 << 20;
    // the replay extensions
    e.has |= TRC_F_REQUEST | TRC_F_STEP | TRC_F_NEEDS | TRC_F_DURATION | TRC_F_ALLOC | TRC_F_KEEP;
    e.request = 41;
    e.step = 3;
    std::strcpy(e.needs, "detector,recognizer");
    e.duration_us = 120000;
    e.alloc_has = 0x2;
    e.alloc[TRC_MEM_NATIVE] = 40 << 20;
    e.keep_has = 0x3;
    e.keep[TRC_MEM_JAVA] = 0;
    e.keep[TRC_MEM_NATIVE] = 8 << 20;
    v.push_back(e);
    trc_event_clear(&e);
    e.has = TRC_F_KIND | TRC_F_EXIT_REASON | TRC_F_EXIT | TRC_F_ERROR;
    e.time_us = 20000000;
    e.stage = TRC_EXIT;
    e.kind = TRC_EXIT_EVENT;
    e.exit_reason = TRC_LOW_MEMORY;
    e.exit.has = 0x3f;
    e.exit.reason_code = 3;
    e.exit.importance = 100;
    e.exit.pss_kb = 700000;
    e.exit.rss_kb = 800000;
    e.exit.status = 0;
    e.exit.timestamp_ms = 1714332467967;
    std::strcpy(e.error, "alloc_failed");
    // the page model's map: every key, adj included (the only one that may be below 0)
    e.has |= TRC_F_PAGES;
    e.pages_has = (1u << TRC_PG_COUNT) - 1;
    for (int k = 0; k < TRC_PG_COUNT; k++)
        e.pages[k] = (int64_t)(k + 1) << 20;
    e.pages[TRC_PG_ADJ] = 700;
    // lmkd's kill line: longer than the other strings may be
    e.has |= TRC_F_LOG;
    std::strcpy(e.log, "lowmemorykiller: Kill 'm' (1001), uid 10000, oom_score_adj 700 to free "
                       "2822144kB rss, 0kB swap; reason: low watermark is breached and swap is "
                       "low (123456kB < 204800kB)");
    v.push_back(e);
    trc_event_clear(&e);
    e.has = TRC_F_KIND | TRC_F_ACTION | TRC_F_MEM;
    e.time_us = 20000001;
    e.stage = TRC_RELEASE;
    e.kind = TRC_RECOVERY;
    std::strcpy(e.action, "stop_prewarm");
    e.mem_has = 1u << TRC_MEM_GPU;
    e.mem[TRC_MEM_GPU] = 0;
    v.push_back(e);
    return v;
}

std::string write_all(const std::vector<trc_event> &events, trc_format f, const std::string &path)
{
    FILE *out = std::fopen(path.c_str(), "wb");
    REQUIRE(out != nullptr);
    sim_error err;
    sim_error_clear(&err);
    trc_writer *w = trc_writer_create(out, f, &err);
    REQUIRE(w != nullptr);
    for (const trc_event &e : events)
        REQUIRE(trc_write(w, &e, &err) == SIM_OK);
    REQUIRE(trc_writer_finish(w, &err) == SIM_OK);
    trc_writer_destroy(w);
    std::fclose(out);
    return read_file(path);
}

std::vector<trc_event> read_all(const std::string &path, int format = -1)
{
    sim_error err;
    sim_error_clear(&err);
    trc_reader *r = trc_open(path.c_str(), format, nullptr, &err);
    INFO(err.msg);
    REQUIRE(r != nullptr);
    std::vector<trc_event> v;
    trc_event e;
    int rc;
    while ((rc = trc_next(r, &e, &err)) == 1)
        v.push_back(e);
    INFO(err.msg);
    REQUIRE(rc == 0);
    trc_close(r);
    return v;
}

// The error of reading `text` as `f`, after `ok` good events.
std::string error_of(const std::string &text, trc_format f, uint64_t ok = 0,
                     int code = SIM_EINPUT)
{
    sim_error err;
    sim_error_clear(&err);
    trc_reader *r = trc_open_buffer(text.data(), text.size(), "t", f, nullptr, &err);
    REQUIRE(r != nullptr);
    trc_event e;
    int rc;
    uint64_t n = 0;
    while ((rc = trc_next(r, &e, &err)) == 1)
        n++;
    trc_close(r);
    CHECK(n == ok);
    REQUIRE(rc == code);
    return err.msg;
}

} // namespace

TEST_CASE("traces: every encoding round-trips every field, and converts to the others",
          "[traces]")
{
    TempDir dir;
    const std::vector<trc_event> events = sample_events();
    const char *ext[] = {"json", "jsonl", "msgpack"};
    for (int a = 0; a < TRC_FORMAT_COUNT; a++) {
        std::string pa = dir.file(std::string("a.") + ext[a]);
        write_all(events, (trc_format)a, pa);
        std::vector<trc_event> back = read_all(pa);
        REQUIRE(back.size() == events.size());
        for (size_t k = 0; k < events.size(); k++) {
            INFO(ext[a] << " event " << k);
            CHECK(trc_event_equal(&back[k], &events[k]));
            CHECK(back[k].has == events[k].has); // time_ms stays time_ms
        }
        for (int b = 0; b < TRC_FORMAT_COUNT; b++) {
            std::string pb = dir.file(std::string("b") + ext[a] + "." + ext[b]);
            write_all(back, (trc_format)b, pb);
            std::vector<trc_event> again = read_all(pb);
            REQUIRE(again.size() == events.size());
            for (size_t k = 0; k < events.size(); k++)
                CHECK(trc_event_equal(&again[k], &events[k]));
        }
    }
    // what the writers produce, spelled out for the text encodings
    std::string jl = read_file(dir.file("a.jsonl"));
    CHECK(jl.find("{\"time_ms\":12,\"stage\":\"load\",\"kind\":\"begin\",\"part\":\"detector\"") ==
          0);
    CHECK(jl.find("\"mem\":{\"java\":12582912,\"native\":734003200") != std::string::npos);
    std::string js = read_file(dir.file("a.json"));
    CHECK(js.front() == '[');
    CHECK(js.find("\n]\n") == js.size() - 3);
    std::string mp = read_file(dir.file("a.msgpack"));
    CHECK(mp.compare(0, 15, std::string("\x81\xacoomsim_trace\x01", 15)) == 0);
}

TEST_CASE("traces: the allow-list names an unknown key and never echoes its value", "[traces]")
{
    const std::string secret = "the user's own words";
    std::string line = "{\"time_ms\":1,\"stage\":\"inference\",\"prompt\":\"" + secret + "\"}\n";
    for (trc_format f : {TRC_JSON, TRC_JSONL}) {
        std::string text = f == TRC_JSON ? "[" + line + "]" : line;
        std::string m = error_of(text, f);
        INFO(m);
        CHECK(m.find("t: event 0 (line 1): key \"prompt\" is not in the trace allow-list") == 0);
        CHECK(m.find(secret) == std::string::npos);
        CHECK(m.find("user") == std::string::npos);
    }
    // a key that is itself text is not quoted either
    std::string m = error_of("{\"time_ms\":1,\"stage\":\"load\",\"my photo of 2024\":1}\n", TRC_JSONL);
    CHECK(m.find("a key of 16 bytes is not in the trace allow-list") != std::string::npos);
    CHECK(m.find("photo") == std::string::npos);
    // inside mem
    m = error_of("{\"time_ms\":1,\"stage\":\"load\",\"mem\":{\"native\":1,\"vram\":2}}\n", TRC_JSONL);
    CHECK(m.find("mem: key \"vram\" is not in the trace allow-list") != std::string::npos);
    // with drop_unknown the key is skipped and counted
    sim_error err;
    sim_error_clear(&err);
    trc_read_opts opts{1};
    trc_reader *r = trc_open_buffer(line.data(), line.size(), "t", TRC_JSONL, &opts, &err);
    trc_event e;
    REQUIRE(trc_next(r, &e, &err) == 1);
    CHECK(trc_next(r, &e, &err) == 0);
    CHECK(trc_unknown_dropped(r) == 1);
    trc_close(r);
}

TEST_CASE("traces: validation names the event, the line and the field", "[traces]")
{
    std::string ok = "{\"time_ms\":1,\"stage\":\"load\"}\n";
    CHECK(error_of(ok + ok + "{\"time_ms\":2,\"stage\":\"load\",\"sessions\":-1}\n", TRC_JSONL, 2) ==
          "t: event 2 (line 3): sessions: -1 is out of range [0, 2147483647]");
    CHECK(error_of(ok + "\n{\"time_ms\":2}\n", TRC_JSONL, 1) ==
          "t: event 1 (line 3): missing stage");
    CHECK(error_of("{\"time_ms\":5,\"stage\":\"load\"}\n{\"time_ms\":4,\"stage\":\"load\"}\n",
                   TRC_JSONL, 1) ==
          "t: event 1 (line 2): time_ms: time goes back (events are in time order)");
    CHECK(error_of("{\"time_ms\":1,\"stage\":\"loading\"}\n", TRC_JSONL)
              .find("stage: expected one of download, load, runtime_prepare") != std::string::npos);
    CHECK(error_of("{\"time_ms\":1,\"stage\":\"load\",\"pages\":{\"free\":-1}}\n", TRC_JSONL) ==
          "t: event 0 (line 1): pages.free: -1 is out of range [0, 1125899906842624]");
    CHECK(error_of("{\"time_ms\":1,\"stage\":\"load\",\"pages\":{\"adj\":1001}}\n", TRC_JSONL) ==
          "t: event 0 (line 1): pages.adj: 1001 is out of range [-1000, 1000]");
    CHECK(error_of("{\"time_ms\":1,\"stage\":\"load\",\"pages\":[1]}\n", TRC_JSONL) ==
          "t: event 0 (line 1): pages: expected a map, got a list");
    CHECK(error_of("{\"time_ms\":1,\"stage\":\"load\",\"log\":\"" + std::string(256, 'x') +
                       "\"}\n",
                   TRC_JSONL) == "t: event 0 (line 1): log: a string of 256 bytes (at most 255)");
    CHECK(error_of("{\"time_ms\":1.5,\"stage\":\"load\"}\n", TRC_JSONL) ==
          "t: event 0 (line 1): time_ms: expected an integer, got a real number");
    CHECK(error_of("{\"time_ms\":1,\"time_us\":1000,\"stage\":\"load\"}\n", TRC_JSONL) ==
          "t: event 0 (line 1): time_us: give time_ms or time_us, not both");
    CHECK(error_of("{\"time_ms\":1,\"stage\":\"load\",\"part\":\"" + std::string(80, 'x') + "\"}\n",
                   TRC_JSONL) == "t: event 0 (line 1): part: a string of 80 bytes (at most 63)");
    // syntax: the position only, never the text
    std::string m = error_of("{\"time_ms\":1,\"stage\":\"load\" \"secret\"}\n", TRC_JSONL);
    CHECK(m.find("t: event 0 (line 1): not valid JSON (at byte") == 0);
    CHECK(m.find("secret") == std::string::npos);
    // JSON arrays: structure errors, with lines
    CHECK(error_of("[" + ok + ",\n" + ok + "", TRC_JSON, 2) ==
          "t: event 2 (line 4): the array is not closed (']' missing)");
    CHECK(error_of("[" + ok + ",]", TRC_JSON, 1) ==
          "t: event 1 (line 2): expected an event object ('{')");
    CHECK(error_of("[" + ok + "] x", TRC_JSON, 1) ==
          "t: event 1 (line 2): text after the end of the array");
    CHECK(error_of("{}", TRC_JSON) == "t: event 0 (line 1): expected a JSON array of events ('[')");
    CHECK(error_of("[1]", TRC_JSON) == "t: event 0 (line 1): expected an event object ('{')");
    CHECK(error_of("", TRC_JSON) == "t: event 0 (line 1): expected a JSON array of events ('[')");
    // msgpack: the header, and a container count that cannot fit is refused
    // before anything is allocated for it
    CHECK(error_of("\x81\xa1x\x01", TRC_MSGPACK) ==
          "t: event 0: the first object must be the header {\"oomsim_trace\": 1}");
    CHECK(error_of("", TRC_MSGPACK) == "t: event 0: empty: no {\"oomsim_trace\": 1} header");
    std::string header("\x81\xacoomsim_trace\x01", 15);
    CHECK(error_of(header + std::string("\xdd\xff\xff\xff\xff", 5), TRC_MSGPACK)
              .find("not valid msgpack, or an object larger than") != std::string::npos);
    CHECK(error_of(header + std::string("\x82\xa7time_ms\x01", 10), TRC_MSGPACK) ==
          "t: event 0: the trace ends inside an event");
    // text must be UTF-8 in every encoding (JSON's parser refuses it; msgpack
    // carries bytes): a lone 0xff, an overlong '/', a surrogate
    for (std::string bad : {std::string("\xff", 1), std::string("\xc0\xaf", 2),
                            std::string("\xed\xa0\x80", 3)}) {
        std::string ev = std::string("\x83\xa7time_us\x00\xa5stage\xa4load\xa4part", 26);
        ev += char(0xa0 | bad.size());
        ev += bad;
        CHECK(error_of(header + ev, TRC_MSGPACK) == "t: event 0: part: a string that is not UTF-8");
    }
    // a line too long to be an event
    CHECK(error_of(std::string(70000, ' ') + "x", TRC_JSONL, 0, SIM_ELIMIT)
              .find("a line of more than 65536 bytes") != std::string::npos);
}

TEST_CASE("traces: the writer refuses text that is not UTF-8, and UTF-8 reads back",
          "[traces]")
{
    std::string header("\x81\xacoomsim_trace\x01", 15);
    // the writer says so, rather than that memory ran out
    trc_event e;
    trc_event_clear(&e);
    e.has |= TRC_F_PART;
    std::strcpy(e.part, "\xff");
    sim_error err;
    sim_error_clear(&err);
    char *buf = nullptr;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    REQUIRE(f != nullptr);
    trc_writer *w = trc_writer_create(f, TRC_JSONL, &err);
    REQUIRE(w != nullptr);
    CHECK(trc_write(w, &e, &err) == SIM_EINPUT);
    CHECK(std::string(err.msg) == "trace: part: a string that is not UTF-8");
    trc_writer_destroy(w);
    fclose(f);
    free(buf);
    // valid UTF-8 beyond ASCII is text like any other
    std::string fr = header + std::string("\x83\xa7time_us\x00\xa5stage\xa4load\xa4part", 26) +
                     std::string("\xaa" "d\xc3\xa9tecteur", 11);
    trc_reader *r = trc_open_buffer(fr.data(), fr.size(), "t", TRC_MSGPACK, nullptr, &err);
    REQUIRE(r != nullptr);
    trc_event back;
    CHECK(trc_next(r, &back, &err) == 1);
    CHECK(std::string(back.part) == "d\xc3\xa9tecteur");
    trc_close(r);
}

TEST_CASE("traces: begin/end pairs left open or stray are reported", "[traces]")
{
    std::string text = "{\"time_ms\":1,\"stage\":\"load\",\"kind\":\"begin\",\"part\":\"a\"}\n"
                       "{\"time_ms\":2,\"stage\":\"load\",\"kind\":\"begin\",\"part\":\"b\"}\n"
                       "{\"time_ms\":3,\"stage\":\"load\",\"kind\":\"end\",\"part\":\"a\"}\n"
                       "{\"time_ms\":4,\"stage\":\"inference\",\"kind\":\"end\",\"session\":1}\n"
                       "{\"time_ms\":5,\"stage\":\"inference\",\"kind\":\"begin\",\"session\":2}\n";
    sim_error err;
    sim_error_clear(&err);
    trc_reader *r = trc_open_buffer(text.data(), text.size(), "t", TRC_JSONL, nullptr, &err);
    trc_pairs *p = trc_pairs_create(&err);
    trc_event e;
    while (trc_next(r, &e, &err) == 1)
        REQUIRE(trc_pairs_add(p, &e, trc_events_read(r) - 1, &err) == SIM_OK);
    size_t n = 0;
    const trc_unpaired *u = trc_pairs_report(p, &n);
    REQUIRE(n == 3);
    CHECK(u[0].index == 1); // b's load begin
    CHECK(std::string(u[0].part) == "b");
    CHECK(u[0].is_end == 0);
    CHECK(u[1].index == 4); // session 2's inference begin
    CHECK(u[1].session == 2);
    CHECK(u[2].index == 3); // an end for session 1, never begun
    CHECK(u[2].is_end == 1);
    trc_pairs_destroy(p);
    trc_close(r);
}

TEST_CASE("traces: oomsim validate reads a trace and lists what is unpaired", "[traces][cli]")
{
    TempDir dir;
    std::string t = dir.write("s.jsonl", "{\"time_ms\":1,\"stage\":\"load\",\"kind\":\"begin\"}\n");
    RunResult r = oomsim({"validate", t});
    CHECK(r.status == 0);
    CHECK(r.out.find("event 0: begin of load without its end") != std::string::npos);
    CHECK(r.out.find("ok (trace, 1 event, 1 unpaired begin/end)") != std::string::npos);
    std::string bad = dir.write("b.jsonl", "{\"time_ms\":1,\"stage\":\"load\",\"prompt\":\"x\"}\n");
    RunResult b = oomsim({"validate", bad});
    CHECK(b.status == 1);
    CHECK(b.err.find("oomsim: " + bad + ": event 0 (line 1): key \"prompt\"") == 0);
    RunResult d = oomsim({"validate", "--drop-unknown", bad});
    CHECK(d.status == 0);
    CHECK(d.out.find("1 keys outside the allow-list dropped") != std::string::npos);
    CHECK(d.out.find("\"x\"") == std::string::npos);
}

TEST_CASE("gen: the timeline of a replication, the same events in every encoding", "[traces][gen]")
{
    // prewarm-boot-loop, fallback_lkg (cell 2): big-v2 dies in
    // delegate_prepare at 3 s, the relaunch at 13 s runs small-v1
    TempDir dir;
    const char *ext[] = {"json", "jsonl", "msgpack"};
    std::vector<trc_event> first;
    for (int f = 0; f < TRC_FORMAT_COUNT; f++) {
        std::string path = dir.file(std::string("g.") + ext[f]);
        RunResult r = oomsim({"gen", "prewarm-boot-loop", "--cell", "2", "--replication", "3",
                              "-o", path});
        INFO(r.err);
        REQUIRE(r.status == 0);
        CHECK(r.err.find("peak 1600.0 MiB, 1 death\n") != std::string::npos);
        std::vector<trc_event> ev = read_all(path);
        if (f == 0) {
            first = ev;
            continue;
        }
        REQUIRE(ev.size() == first.size());
        for (size_t k = 0; k < ev.size(); k++)
            CHECK(trc_event_equal(&ev[k], &first[k]));
    }
    // read, write in another encoding, read again: the same events
    for (int f = 0; f < TRC_FORMAT_COUNT; f++) {
        std::string out = dir.file(std::string("rt.") + ext[f]);
        write_all(first, (trc_format)f, out);
        std::vector<trc_event> back = read_all(out);
        REQUIRE(back.size() == first.size());
        for (size_t k = 0; k < back.size(); k++)
            CHECK(trc_event_equal(&back[k], &first[k]));
    }
    // what the timeline holds
    size_t begins = 0, exits = 0, recoveries = 0;
    for (const trc_event &e : first) {
        begins += e.kind == TRC_BEGIN;
        if (e.kind == TRC_EXIT_EVENT) {
            exits++;
            CHECK(e.stage == TRC_EXIT);
            CHECK(e.exit_reason == TRC_LOW_MEMORY);
            CHECK(e.exit.importance == 100);
            CHECK(e.time_us == 3000000);
            CHECK((e.mem[TRC_MEM_NATIVE] + e.mem[TRC_MEM_GPU]) == INT64_C(1600) << 20);
        }
        if (e.kind == TRC_RECOVERY) {
            recoveries++;
            CHECK(std::string(e.action) == "fallback_lkg");
            CHECK(std::string(e.candidate) == "small-v1");
            CHECK(e.time_us == 13000000);
        }
    }
    CHECK(exits == 1);
    CHECK(recoveries == 1);
    CHECK(begins >= 6); // big-v2's three stages, then small-v1's three
    // the same replication, the same bytes
    std::string again = dir.file("again.jsonl");
    REQUIRE(oomsim({"gen", "prewarm-boot-loop", "--cell", "2", "--replication", "3", "-o",
                    again}).status == 0);
    CHECK(read_file(again) == read_file(dir.file("g.jsonl")));
    // bad usage, and nothing left behind on a failure
    CHECK(oomsim({"gen", "prewarm-boot-loop", "-o", dir.file("x.txt")}).status == 2);
    CHECK(oomsim({"gen", "prewarm-boot-loop", "--cell", "99", "-o", dir.file("y.json")}).status ==
          2);
    CHECK(!exists(dir.file("y.json")));
}
