// Candidate profiles from YAML: parts in order, every stage resolved, the
// delegate rules, and the error classes with file:line:col and key path.
#include <catch2/catch.hpp>

#include <set>
#include <string>

#include "scenarios/scenarios.h"
#include "shim/shim.hpp"

namespace {
constexpr int64_t MiB = int64_t{1} << 20;

// The example candidate of docs/scenarios.md, with its recognizer filled in.
const std::string kOcr = R"(id: ocr-v3
digest: 3f2a9c1e
runtime: litert-1.4.0
delegate: gpu
fallback: cpu
fallback_overlap: true
receipt_complete: true
last_known_good: ocr-v2
parts:
  detector:
    file: 48MiB
    load:
      mode: mmap
      time: {dist: lognormal, median: 80ms, p95: 200ms}
      transient: {native: 48MiB}
      thread: worker
    prepare:
      time: 150ms
      transient: {native: 60MiB}
      resident: {native: 20MiB}
    delegate_prepare:
      time: {dist: lognormal, median: 400ms, p95: 1.5s}
      transient: {gpu: 120MiB}
      resident: {gpu: 96MiB}
      fail: 0.03
      crash: 0.002
    inference:
      time: {dist: gamma, mean: 120ms, cv: 0.4}
      working_set: {native: {dist: lognormal, median: 40MiB, p95: 70MiB}}
      output: {native: 2MiB}
    session: {native: 8MiB}
  recognizer:
    file: 22MiB
    load: {mode: copy, time: 60ms, thread: main}
    prepare: {time: 90ms, resident: {native: 12MiB}}
    delegate_prepare: {time: 300ms, resident: {gpu: 40MiB}}
    inference: {time: 45ms, working_set: {native: 16MiB, java: 4MiB}}
cache:
  size: 30MiB
  hit: 0.9
  miss_time: 2s
  miss_transient: {native: 80MiB}
)";

std::string edit(const std::string &from, const std::string &to)
{
    std::string s = kOcr;
    size_t at = s.find(from);
    REQUIRE(at != std::string::npos);
    return s.replace(at, from.size(), to);
}

std::string error_of(const std::string &text, int code = SIM_EINPUT)
{
    mdl_candidate c;
    sim_error err;
    sim_error_clear(&err);
    int rc = scn_candidate_parse(text.data(), text.size(), "ocr.yaml", &c, &err);
    INFO(err.msg);
    REQUIRE(rc == code);
    REQUIRE(c.owned.v == nullptr);
    return err.msg;
}
} // namespace

TEST_CASE("candidate: the OCR example of docs/scenarios.md resolves", "[scenario][candidate]")
{
    mdl_candidate c;
    sim_error err;
    sim_error_clear(&err);
    int rc = scn_candidate_parse(kOcr.data(), kOcr.size(), "ocr.yaml", &c, &err);
    INFO(err.msg);
    REQUIRE(rc == SIM_OK);
    REQUIRE(std::string(c.id) == "ocr-v3");
    REQUIRE(std::string(c.digest) == "3f2a9c1e");
    REQUIRE(std::string(c.runtime) == "litert-1.4.0");
    REQUIRE(std::string(c.delegate) == "gpu");
    REQUIRE(std::string(c.fallback) == "cpu");
    REQUIRE(c.fallback_overlap == 1);
    REQUIRE(c.receipt_complete == 1);
    REQUIRE(std::string(c.last_known_good) == "ocr-v2");
    REQUIRE(c.nparts == 2);
    const mdl_part &d = c.parts[0];
    REQUIRE(std::string(d.name) == "detector"); // listed order is kept
    REQUIRE(d.file == 48 * MiB);
    REQUIRE(d.load_mode == MDL_LOAD_MMAP);
    REQUIRE(d.load.time.kind == MDL_DIST_LOGNORMAL);
    REQUIRE(d.load.transient.mask == MDL_CAT_BIT(MDL_CAT_NATIVE));
    REQUIRE(mdl_dist_mean(&d.load.transient.cat[MDL_CAT_NATIVE]) == 48.0 * MiB);
    REQUIRE(d.load.main_thread == 0);
    REQUIRE(mdl_dist_mean(&d.prepare.time) == 150000);
    REQUIRE(mdl_dist_mean(&d.prepare.resident.cat[MDL_CAT_NATIVE]) == 20.0 * MiB);
    REQUIRE(d.has_delegate_prepare == 1);
    REQUIRE(mdl_dist_mean(&d.delegate_prepare.resident.cat[MDL_CAT_GPU]) == 96.0 * MiB);
    REQUIRE(d.delegate_fail == 0.03);
    REQUIRE(d.delegate_crash == 0.002);
    REQUIRE(d.inference_time.kind == MDL_DIST_GAMMA);
    REQUIRE(mdl_dist_mean(&d.inference_time) == Approx(120000));
    REQUIRE(d.working_set.cat[MDL_CAT_NATIVE].kind == MDL_DIST_LOGNORMAL);
    REQUIRE(mdl_dist_mean(&d.output.cat[MDL_CAT_NATIVE]) == 2.0 * MiB);
    REQUIRE(mdl_dist_mean(&d.session.cat[MDL_CAT_NATIVE]) == 8.0 * MiB);
    const mdl_part &r = c.parts[1];
    REQUIRE(std::string(r.name) == "recognizer");
    REQUIRE(r.load_mode == MDL_LOAD_COPY);
    REQUIRE(r.load.main_thread == 1);
    REQUIRE(r.working_set.mask == (MDL_CAT_BIT(MDL_CAT_NATIVE) | MDL_CAT_BIT(MDL_CAT_JAVA)));
    REQUIRE(r.session.mask == 0);
    REQUIRE(r.delegate_fail == 0);
    REQUIRE(c.has_cache == 1);
    REQUIRE(c.cache_size == 30 * MiB);
    REQUIRE(c.cache_hit == 0.9);
    REQUIRE(c.cache_miss_time == 2000000);
    REQUIRE(mdl_dist_mean(&c.cache_miss_transient.cat[MDL_CAT_NATIVE]) == 80.0 * MiB);
    scn_candidate_release(&c);
}

TEST_CASE("candidate: without a delegate there is no delegate_prepare", "[scenario][candidate]")
{
    const std::string small = R"(id: classifier-v1
digest: 0a1b2c3d
runtime: litert-1.4.0
delegate: none
parts:
  main:
    file: 4MiB
    load: {mode: mmap, time: 10ms}
    prepare: {time: 20ms, resident: {native: 6MiB}}
    inference: {time: {dist: empirical, values: [8ms, 9ms, 15ms]}, working_set: {native: 3MiB}}
)";
    mdl_candidate c;
    sim_error err;
    REQUIRE(scn_candidate_parse(small.data(), small.size(), "c.yaml", &c, &err) == SIM_OK);
    REQUIRE(c.parts[0].has_delegate_prepare == 0);
    REQUIRE(c.has_cache == 0);
    REQUIRE(std::string(c.fallback) == "none");
    REQUIRE(c.owned.n == 1); // the empirical values
    REQUIRE(c.parts[0].inference_time.values[2] == 15000);
    scn_candidate_release(&c);
    REQUIRE(error_of(small + "    delegate_prepare: {time: 1ms}\n").find(
                "delegate_prepare with delegate: none") != std::string::npos);
}

TEST_CASE("candidate: errors name the place and the key", "[scenario][candidate][errors]")
{
    REQUIRE(error_of(edit("      mode: mmap", "      mode: mapped")) ==
            "ocr.yaml:13:13: parts.detector.load.mode: expected mmap, copy or decompress, got "
            "\"mapped\"");
    REQUIRE(error_of(edit("      fail: 0.03", "      fail: 1.5")) ==
            "ocr.yaml:25:13: parts.detector.delegate_prepare.fail: expected a probability "
            "between 0 and 1 (or 0% and 100%), got \"1.5\"");
    REQUIRE(error_of(edit("      time: 150ms", "      time: 150")) ==
            "ocr.yaml:18:13: parts.detector.prepare.time: a duration needs a unit (us, ms, s, "
            "min or h), got \"150\"");
    REQUIRE(error_of(edit("    session: {native: 8MiB}", "    sesion: {native: 8MiB}")) ==
            "ocr.yaml:31:5: parts.detector: unknown key \"sesion\" (did you mean \"session\"?)");
    REQUIRE(error_of(edit("{native: 2MiB}", "{vram: 2MiB}")) ==
            "ocr.yaml:30:16: parts.detector.inference.output: unknown key \"vram\"");
    REQUIRE(error_of(edit("digest: 3f2a9c1e", "digest: /data/model.tflite")) ==
            "ocr.yaml:2:9: digest: expected a lowercase hex digest of 1 to 63 characters, got "
            "\"/data/model.tflite\"");
    REQUIRE(error_of(edit("    delegate_prepare: {time: 300ms, resident: {gpu: 40MiB}}\n", "")) ==
            "ocr.yaml:32:3: parts.recognizer: missing required key \"delegate_prepare\" (the "
            "candidate's delegate is gpu)");
    REQUIRE(error_of(edit("    file: 22MiB\n", "")).find(
                "parts.recognizer: missing required key \"file\"") != std::string::npos);
    REQUIRE(error_of(edit("      crash: 0.002", "      crash: 0.98")) ==
            "ocr.yaml:21:5: parts.detector.delegate_prepare: fail + crash exceed 1");
    REQUIRE(error_of(edit("last_known_good: ocr-v2", "last_known_good: ocr-v3")).find(
                "cannot be its own last known good") != std::string::npos);
    REQUIRE(error_of(edit("fallback_overlap: true", "fallback_overlap: yes")) ==
            "ocr.yaml:6:19: fallback_overlap: expected false or true, got \"yes\"");
    REQUIRE(error_of(edit("  recognizer:", "  Recognizer:")).find(
                "parts: a part name is 1 to 63 characters from [a-z0-9_-]") != std::string::npos);
    // decompress needs a transient: the detector has one, so it loads ...
    std::string dec = edit("      mode: mmap", "      mode: decompress");
    mdl_candidate c;
    sim_error err;
    REQUIRE(scn_candidate_parse(dec.data(), dec.size(), "ocr.yaml", &c, &err) == SIM_OK);
    REQUIRE(c.parts[0].load_mode == MDL_LOAD_DECOMPRESS);
    scn_candidate_release(&c);
    // ... the recognizer has none, so it does not.
    REQUIRE(error_of(edit("    load: {mode: copy, time: 60ms, thread: main}",
                          "    load: {mode: decompress, time: 60ms}")).find(
                "parts.recognizer.load: decompress needs a transient") != std::string::npos);
}

TEST_CASE("candidate: the cache's key, and its errors", "[scenario][candidate][errors]")
{
    mdl_candidate c;
    sim_error err;
    REQUIRE(scn_candidate_parse(kOcr.data(), kOcr.size(), "ocr.yaml", &c, &err) == SIM_OK);
    CHECK(c.cache_key == MDL_KEY_ALL); // the default: digest, runtime and OS version
    scn_candidate_release(&c);
    std::string k = edit("  miss_time: 2s", "  miss_time: 2s\n  key: [digest, os]");
    REQUIRE(scn_candidate_parse(k.data(), k.size(), "ocr.yaml", &c, &err) == SIM_OK);
    CHECK(c.cache_key == (MDL_KEY_DIGEST | MDL_KEY_OS));
    scn_candidate_release(&c);
    CHECK(error_of(edit("  miss_time: 2s", "  miss_time: 2s\n  key: [runtime, os]")) ==
          "ocr.yaml:42:3: cache.key: the key must hold the model's digest: another model's "
          "artefact would be found valid");
    CHECK(error_of(edit("  miss_time: 2s", "  miss_time: 2s\n  key: [digest, build_time]")) ==
          "ocr.yaml:42:17: cache.key[1]: expected digest, runtime or os, got \"build_time\"");
    CHECK(error_of(edit("  miss_time: 2s", "  miss_time: 2s\n  key: [digest, os, os]")) ==
          "ocr.yaml:42:21: cache.key[2]: os is listed twice");
}

TEST_CASE("candidate: every shipped candidate profile loads", "[scenario][candidate][catalog]")
{
    std::set<std::string> ids;
    for (const shim::Entry &entry : shim::yaml_files("scenarios/catalog/candidates")) {
        mdl_candidate c;
        sim_error err;
        sim_error_clear(&err);
        int rc = scn_candidate_load(entry.path.c_str(), &c, &err);
        INFO(entry.path << ": " << err.msg);
        REQUIRE(rc == SIM_OK);
        REQUIRE(std::string(c.id) == entry.stem);
        ids.insert(c.id);
        scn_candidate_release(&c);
    }
    REQUIRE(ids == std::set<std::string>{"classifier-v1", "llm-1b", "ocr-v3"});
    // The shapes issue 3 asks for: one part on XNNPACK; two parts on the GPU with a CPU
    // fallback; mmapped weights with a large working set on the GPU.
    mdl_candidate c;
    sim_error err;
    REQUIRE(scn_candidate_load(shim::source_path("scenarios/catalog/candidates/classifier-v1.yaml").c_str(), &c, &err) == SIM_OK);
    REQUIRE(c.nparts == 1);
    REQUIRE(std::string(c.delegate) == "xnnpack");
    scn_candidate_release(&c);
    REQUIRE(scn_candidate_load(shim::source_path("scenarios/catalog/candidates/ocr-v3.yaml").c_str(), &c, &err) == SIM_OK);
    REQUIRE(c.nparts == 2);
    REQUIRE(std::string(c.delegate) == "gpu");
    REQUIRE(std::string(c.fallback) == "cpu");
    scn_candidate_release(&c);
    REQUIRE(scn_candidate_load(shim::source_path("scenarios/catalog/candidates/llm-1b.yaml").c_str(), &c, &err) == SIM_OK);
    REQUIRE(c.parts[0].load_mode == MDL_LOAD_MMAP);
    // an LLM by tokens: mapped weights read every token, repacked ones, a KV of
    // 32 KiB a token (16 layers x 8 KV heads x 64 x 2 bytes, K and V)
    REQUIRE(c.parts[0].has_generation);
    CHECK(c.parts[0].gen.mapped == 226 * MiB);
    CHECK(c.parts[0].gen.repacked == 504 * MiB);
    CHECK(c.parts[0].gen.kv_per_token == 2 * 16 * 8 * 64 * 2);
    CHECK(c.parts[0].gen.mapped + c.parts[0].gen.repacked == c.parts[0].file);
    scn_candidate_release(&c);
}
