// teaching.hpp - what the teaching scenarios' tests read of a run: the
// results document, the deaths `diagnose` finds in replication 0's trace,
// and `explain`'s narration (test_teaching.cpp, test_teaching_modes.cpp).
#pragma once

#include <catch2/catch.hpp>

#include <jansson.h>

#include <string>
#include <vector>

#include "shim/shim.hpp"

namespace teaching {

using namespace shim;

// The results document of `oomsim run NAME`.
struct Results {
    json_t *doc = nullptr;
    explicit Results(const std::string &name)
    {
        TempDir dir;
        RunResult r = oomsim({"run", name, "--format", "json", "-o", dir.path()});
        INFO(r.err);
        REQUIRE(r.status == 0);
        json_error_t e;
        doc = json_load_file(dir.file("results.json").c_str(), 0, &e);
        REQUIRE(doc != nullptr);
    }
    ~Results() { json_decref(doc); }
    Results(const Results &) = delete;
    Results &operator=(const Results &) = delete;
    // cell c's value at a dotted path ("deaths.any_rate")
    double at(size_t c, const std::string &path) const
    {
        json_t *v = json_array_get(json_object_get(doc, "cells"), c);
        size_t from = 0;
        while (v != nullptr && from <= path.size()) {
            size_t dot = path.find('.', from);
            std::string key = path.substr(from, dot == std::string::npos ? dot : dot - from);
            v = json_object_get(v, key.c_str());
            if (dot == std::string::npos)
                break;
            from = dot + 1;
        }
        INFO("cell " << c << " " << path);
        REQUIRE(json_is_number(v));
        return json_number_value(v);
    }
    double completed_share(size_t c) const
    {
        return at(c, "requests.completed") / at(c, "requests.arrived");
    }
};

// A death of replication 0 as `diagnose` reads it from the trace.
struct Death {
    std::string cls, stage, evidence;
    double at_s; // the trace's own clock: seconds from its start
    long long importance;
};

inline std::vector<Death> deaths(const std::string &name, int cell = 0)
{
    TempDir dir;
    std::string trace = dir.file("t.jsonl");
    REQUIRE(oomsim({"gen", name, "--cell", std::to_string(cell), "-o", trace}).status == 0);
    RunResult d = oomsim({"diagnose", trace, "--format", "json"});
    INFO(d.err);
    REQUIRE(d.status == 0);
    json_error_t e;
    json_t *doc = json_loads(d.out.c_str(), 0, &e);
    REQUIRE(doc != nullptr);
    std::vector<Death> out;
    size_t k;
    json_t *x;
    json_array_foreach(json_object_get(doc, "exits"), k, x)
    {
        json_t *st = json_object_get(x, "matched_stage"), *imp = json_object_get(x, "importance");
        out.push_back({json_string_value(json_object_get(x, "class")),
                       json_is_string(st) ? json_string_value(st) : "",
                       json_string_value(json_object_get(x, "evidence")),
                       (double)json_integer_value(json_object_get(x, "timestamp_ms")) / 1e3,
                       json_is_integer(imp) ? (long long)json_integer_value(imp) : -1});
    }
    json_decref(doc);
    return out;
}

inline std::string explain(const std::string &name, int cell = 0)
{
    RunResult r = oomsim({"explain", name, "--cell", std::to_string(cell)});
    INFO(r.err);
    REQUIRE(r.status == 0);
    return r.out;
}

inline bool has(const std::string &text, const std::string &what)
{
    return text.find(what) != std::string::npos;
}


} // namespace teaching
