// test_memcheck_control.cpp - the memcheck label's control: under the
// label's wrapper (valgrind), a program named oomsim that loses a block
// must exit 97; without a wrapper it exits 0.  Hidden from ordinary runs.
#include "shim/shim.hpp"

#include <catch2/catch.hpp>

TEST_CASE("memcheck: valgrind reports the control's leak", "[.][memcheck]")
{
    auto r = shim::run({OOMSIM_CONTROL_BIN});
    INFO(r.err);
    if (std::getenv("OOMSIM_TEST_WRAPPER") == nullptr) {
        CHECK(r.status == 0);
        return;
    }
    CHECK(r.status == 97);
    CHECK(r.err.find("definitely lost") != std::string::npos);
}
