// imports.hpp - what the import tests share: a fixture by name, an import
// through the C API, a value of the YAML by its key, the candidate it loads.
#pragma once

#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "scenarios/scenarios.h"
#include "shim/shim.hpp"

namespace imports {


inline constexpr int64_t MiB = 1024 * 1024;

inline std::string fixture(const std::string &name)
{
    return shim::read_file(std::string(OOMSIM_SOURCE_DIR) + "/tests/data/imports/" + name);
}

struct Imported {
    int rc;
    std::string yaml, msg;
};

inline Imported import(scn_import_kind kind, const std::string &name, const std::string &text,
                const char *id = nullptr, const char *part = nullptr,
                const mdl_candidate *minus = nullptr, unsigned long long run = 0,
                const char *speed_of = nullptr, double speed_cpu = 0, double speed_gpu = 0)
{
    scn_import_input in = {name.c_str(), text.data(), text.size()};
    scn_import_opts o = {id, part, minus, run, speed_of, speed_cpu, speed_gpu};
    char *yaml = nullptr;
    sim_error err;
    sim_error_clear(&err);
    Imported r;
    r.rc = scn_import(kind, &in, 1, &o, &yaml, &err);
    r.msg = err.msg;
    if (yaml != nullptr)
        r.yaml = yaml;
    free(yaml);
    return r;
}

// The line of the YAML holding `key` (the first), without its comment.
inline std::string value_of(const std::string &yaml, const std::string &key)
{
    size_t at = yaml.find(key);
    if (at == std::string::npos)
        return "";
    size_t end = yaml.find('\n', at);
    std::string line = yaml.substr(at, end - at);
    size_t hash = line.find("  #");
    return hash == std::string::npos ? line : line.substr(0, hash);
}

// The candidate the YAML describes, loaded as the loader loads a file.
struct Cand {
    mdl_candidate c;
    int rc;
    std::string msg;
    explicit Cand(const std::string &yaml)
    {
        sim_error err;
        sim_error_clear(&err);
        rc = scn_candidate_parse(yaml.data(), yaml.size(), "imported.yaml", &c, &err);
        msg = err.msg;
    }
    ~Cand()
    {
        if (rc == SIM_OK)
            scn_candidate_release(&c);
    }
};


// One MetricKit payload whose peak memory is `peak`, as jsonRepresentation()
// writes it.
inline std::string payload(const std::string &peak, const char *type = "iPhone13,2")
{
    return std::string("{\"metaData\": {\"deviceType\": \"") + type +
           "\"}, \"memoryMetrics\": {\"peakMemoryUsage\": \"" + peak +
           "\"}, \"applicationExitMetrics\": {\"foregroundExitData\": {}}}";
}

inline std::string peak_comment(const std::string &yaml)
{
    size_t at = yaml.find("# peak memory up to ");
    if (at == std::string::npos)
        return "";
    at += 20;
    return yaml.substr(at, yaml.find(' ', at) - at);
}


// Every value of the YAML at its key, comments stripped; "SECTION>key: value"
// looks for the key after the section's line ("prepare:>time: 1us").
inline void values_are(const std::string &yaml, const std::vector<std::string> &lines)
{
    for (const std::string &entry : lines) {
        INFO(yaml);
        size_t gt = entry.find('>');
        std::string l = gt == std::string::npos ? entry : entry.substr(gt + 1);
        size_t from = gt == std::string::npos ? 0 : yaml.find(entry.substr(0, gt));
        REQUIRE(from != std::string::npos);
        // the key at a line's start, after its indentation
        std::string key = l.substr(0, l.find(':') + 1), in = yaml.substr(from);
        size_t at = 0;
        while ((at = in.find(key, at)) != std::string::npos &&
               in.find_first_not_of(' ', in.rfind('\n', at) + 1) != at)
            at++;
        CHECK((at == std::string::npos ? "" : value_of(in.substr(at), key)) == l);
    }
}

inline Imported llama(const std::string &file)
{
    Imported r = import(SCN_IMPORT_LLAMA_CPP, file, fixture(file), "m");
    INFO(r.msg);
    REQUIRE(r.rc == SIM_OK);
    return r;
}


} // namespace imports
