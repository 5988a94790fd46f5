// The trace fuzz corpus as a regression suite: every file of
// tests/fuzz/corpus/traces/ goes through the fuzz target's checks
// (tests/fuzz/fuzz_traces.c: read as each encoding, every event round-
// tripped through every writer); a broken check aborts the test.
#include <catch2/catch.hpp>

#include <dirent.h>

#include <algorithm>
#include <string>
#include <vector>

#include "shim/shim.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

using namespace shim;

TEST_CASE("trace fuzz corpus: every input reads cleanly or fails with its place",
          "[fuzz][traces]")
{
    std::string dir = source_path("tests/fuzz/corpus/traces");
    std::vector<std::string> names;
    DIR *d = ::opendir(dir.c_str());
    REQUIRE(d != nullptr);
    while (struct dirent *e = ::readdir(d))
        if (e->d_name[0] != '.')
            names.push_back(e->d_name);
    ::closedir(d);
    std::sort(names.begin(), names.end());
    REQUIRE(names.size() >= 3);
    for (const std::string &n : names) {
        std::string bytes = read_file(dir + "/" + n);
        INFO(n);
        CHECK(LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t *>(bytes.data()),
                                     bytes.size()) == 0);
    }
}
