// Exit records read from text through the C API (replay/replay.h), for
// the groups that test the readers of dumpsys exit-info and kill lines.
#ifndef OOMSIM_TESTS_SHIM_EXITS_HPP
#define OOMSIM_TESTS_SHIM_EXITS_HPP

#include <catch2/catch.hpp>

#include <cstdlib>
#include <string>
#include <vector>

#include "replay/replay.h"

namespace shim {

// Every record of text, as rpl_exits_parse reads it; REQUIREs success.
inline std::vector<rpl_exit> parse_exits(const std::string &text)
{
    rpl_exit *v = nullptr;
    size_t n = 0;
    sim_error err;
    sim_error_clear(&err);
    REQUIRE(rpl_exits_parse(text.data(), text.size(), "x", &v, &n, &err) == SIM_OK);
    std::vector<rpl_exit> out(v, v + n);
    std::free(v);
    return out;
}

} // namespace shim

#endif
