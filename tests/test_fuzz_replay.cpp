// A fuzz corpus as a regression suite: every file of
// tests/fuzz/corpus/OOMSIM_FUZZ_CORPUS/ goes through its fuzz target's checks
// (tests/fuzz/fuzz_OOMSIM_FUZZ_CORPUS.c, linked in); a broken check aborts
// the test.  Built once per target (tests/CMakeLists.txt).
#include <catch2/catch.hpp>

#include <algorithm>
#include <string>
#include <vector>

#include "shim/shim.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

using namespace shim;

TEST_CASE("fuzz corpus " OOMSIM_FUZZ_CORPUS ": every input passes the target's checks", "[fuzz]")
{
    std::string dir = source_path(std::string("tests/fuzz/corpus/") + OOMSIM_FUZZ_CORPUS);
    std::vector<std::string> names = file_names(dir);
    REQUIRE(names.size() >= 1);
    for (const std::string &n : names) {
        std::string bytes = read_file(dir + "/" + n);
        INFO(n);
        CHECK(LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t *>(bytes.data()),
                                     bytes.size()) == 0);
    }
}
