// The scenario fuzz corpus as a regression suite: every file of
// tests/fuzz/corpus/scenario/ (seeds and what libFuzzer kept) goes through
// the loader and, when it loads, one replication of the model, with the
// checks of the fuzz target (tests/fuzz/fuzz_scenario.c).
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include "scenarios/scenarios.h"
#include "shim/shim.hpp"

extern "C" const char *fuzz_scenario_check(const uint8_t *data, size_t size);

using namespace shim;

TEST_CASE("scenario fuzz corpus: every input loads and runs, or is refused with a place",
          "[fuzz][scenario]")
{
    std::string dir = source_path("tests/fuzz/corpus/scenario");
    std::vector<std::string> names = file_names(dir);
    REQUIRE(names.size() >= 5); // the seeds at least
    size_t seeds = 0;
    for (const std::string &n : names) {
        std::string bytes = read_file(dir + "/" + n);
        const char *bad =
            fuzz_scenario_check(reinterpret_cast<const uint8_t *>(bytes.data()), bytes.size());
        INFO(n);
        CHECK(bad == nullptr);
        if (n.size() > 5 && n.compare(n.size() - 5, 5, ".yaml") == 0) {
            // the seeds (named *.yaml) are valid scenarios, so the fuzzer
            // starts from inputs that reach the model
            scn_scenario s;
            sim_error err;
            sim_error_clear(&err);
            int rc = scn_scenario_parse(bytes.data(), bytes.size(), n.c_str(), &s, &err);
            INFO(err.msg);
            CHECK(rc == SIM_OK);
            scn_scenario_release(&s);
            seeds++;
        }
    }
    CHECK(seeds >= 5);
}
