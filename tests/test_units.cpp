// Unit parsers: every accepted form, rounding, limits, and the messages of
// every rejected form.
#include <catch2/catch.hpp>

#include <string>

#include "scenarios/scenarios.h"

namespace {
int64_t size(const std::string &s)
{
    int64_t v = -1;
    sim_error err;
    sim_error_clear(&err);
    int rc = scn_parse_size(s.data(), s.size(), &v, &err);
    INFO(s << ": " << err.msg);
    REQUIRE(rc == SIM_OK);
    return v;
}
sim_time duration(const std::string &s)
{
    sim_time v = -1;
    sim_error err;
    sim_error_clear(&err);
    int rc = scn_parse_duration(s.data(), s.size(), &v, &err);
    INFO(s << ": " << err.msg);
    REQUIRE(rc == SIM_OK);
    return v;
}
template <typename F> std::string error(F parse, const std::string &s, int code = SIM_EINPUT)
{
    sim_error err;
    sim_error_clear(&err);
    int rc = parse(s, &err);
    INFO(s << ": " << err.msg);
    REQUIRE(rc == code);
    return err.msg;
}
auto size_p = [](const std::string &s, sim_error *e) {
    int64_t v = 77;
    int rc = scn_parse_size(s.data(), s.size(), &v, e);
    if (rc != SIM_OK)
        REQUIRE(v == 77); // untouched on failure
    return rc;
};
auto dur_p = [](const std::string &s, sim_error *e) {
    sim_time v = 77;
    int rc = scn_parse_duration(s.data(), s.size(), &v, e);
    if (rc != SIM_OK)
        REQUIRE(v == 77);
    return rc;
};
auto rate_p = [](const std::string &s, sim_error *e) {
    double v = 0;
    return scn_parse_rate(s.data(), s.size(), &v, e);
};
auto prob_p = [](const std::string &s, sim_error *e) {
    double v = 0;
    return scn_parse_probability(s.data(), s.size(), &v, e);
};
} // namespace

TEST_CASE("units: sizes", "[units]")
{
    REQUIRE(size("1048576B") == 1048576);
    REQUIRE(size("230B") == 230);
    REQUIRE(size("0") == 0);
    REQUIRE(size("48MiB") == 48 * 1048576);
    REQUIRE(size("1.5GiB") == 1610612736);
    REQUIRE(size("1.3GiB") == 1395864371); // 1.3 * 2^30 = 1395864371.2, rounded
    REQUIRE(size("120 MiB") == 120 * 1048576);
    REQUIRE(size("2KB") == 2000);
    REQUIRE(size("3MB") == 3000000);
    REQUIRE(size("4GB") == 4000000000);
    REQUIRE(size("512B") == 512);
    REQUIRE(size("1TiB") == SCN_SIZE_MAX);
    REQUIRE(size("1e3KiB") == 1024000);
}

TEST_CASE("units: size errors", "[units]")
{
    REQUIRE(error(size_p, "two") == "expected a size such as 230B, 48MiB or 1.5GiB, got \"two\"");
    REQUIRE(error(size_p, "48mib") == "unknown unit \"mib\" (did you mean \"MiB\"?)");
    REQUIRE(error(size_p, "48 parsecs").find("expected a size") == 0);
    REQUIRE(error(size_p, "-5MiB") ==
            "expected a size such as 230B, 48MiB or 1.5GiB, got a negative value \"-5MiB\"");
    // a bare number other than 0 is refused, as a bare duration is
    REQUIRE(error(size_p, "230") ==
            "a size needs a unit (B, KiB, MiB, GiB, TiB, KB, MB, GB, TB), got 230");
    REQUIRE(error(size_p, "1048576").find("a size needs a unit") == 0);
    REQUIRE(error(size_p, "1.5").find("a size needs a unit") == 0);
    REQUIRE(error(size_p, "1.1TiB", SIM_ELIMIT) == "size \"1.1TiB\" exceeds the limit of 1TiB");
    REQUIRE(error(size_p, std::string(100, '9') + "B", SIM_ELIMIT).find("exceeds the limit") !=
            std::string::npos);
    REQUIRE(error(size_p, "inf").find("expected a size") == 0);
    REQUIRE(error(size_p, "nan").find("expected a size") == 0);
    REQUIRE(error(size_p, "0x10").find("expected a size") == 0);
    REQUIRE(error(size_p, "").find("expected a size") == 0);
    // Long input is echoed cut to 40 bytes.
    std::string msg = error(size_p, std::string(60, 'x'));
    REQUIRE(msg.find(std::string(40, 'x') + "...\"") != std::string::npos);
    REQUIRE(msg.find(std::string(41, 'x')) == std::string::npos);
}

TEST_CASE("units: durations", "[units]")
{
    REQUIRE(duration("250ms") == 250000);
    REQUIRE(duration("1.5s") == 1500000);
    REQUIRE(duration("10min") == 600000000);
    REQUIRE(duration("2h") == 7200000000);
    REQUIRE(duration("7us") == 7);
    REQUIRE(duration("0.4us") == 0);
    REQUIRE(duration("0.5us") == 1);
    REQUIRE(duration("720h") == SCN_DURATION_MAX);
}

TEST_CASE("units: duration errors", "[units]")
{
    REQUIRE(error(dur_p, "5") == "a duration needs a unit (us, ms, s, min or h), got \"5\"");
    REQUIRE(error(dur_p, "5S") == "unknown unit \"S\" (did you mean \"s\"?)");
    REQUIRE(error(dur_p, "5 days").find("expected a duration such as 250ms") == 0);
    REQUIRE(error(dur_p, "-1s").find("negative") != std::string::npos);
    REQUIRE(error(dur_p, "721h", SIM_ELIMIT) == "duration \"721h\" exceeds the limit of 30 days");
}

TEST_CASE("units: rates and probabilities", "[units]")
{
    double v = 0;
    sim_error err;
    REQUIRE(scn_parse_rate("0.5/s", 5, &v, &err) == SIM_OK);
    REQUIRE(v == 0.5);
    REQUIRE(scn_parse_rate("30/min", 6, &v, &err) == SIM_OK);
    REQUIRE(v == Approx(0.5).epsilon(1e-15));
    REQUIRE(scn_parse_rate("36 / h", 6, &v, &err) == SIM_OK);
    REQUIRE(v == Approx(0.01).epsilon(1e-15));
    REQUIRE(error(rate_p, "0.5").find("expected a rate such as 0.5/s") == 0);
    REQUIRE(error(rate_p, "0.5/day").find("expected a rate") == 0);
    REQUIRE(error(rate_p, "0/s", SIM_ELIMIT).find("must be above 0") != std::string::npos);
    REQUIRE(error(rate_p, "5ms/s").find("expected a rate") == 0);
    REQUIRE(scn_parse_probability("0.03", 4, &v, &err) == SIM_OK);
    REQUIRE(v == 0.03);
    REQUIRE(scn_parse_probability("1", 1, &v, &err) == SIM_OK);
    REQUIRE(error(prob_p, "1.2") ==
            "expected a probability between 0 and 1 (or 0% and 100%), got \"1.2\"");
    REQUIRE(scn_parse_probability("0.1%", 4, &v, &err) == SIM_OK);
    REQUIRE(v == Approx(0.001).epsilon(1e-15));
    REQUIRE(scn_parse_probability("100%", 4, &v, &err) == SIM_OK);
    REQUIRE(v == 1.0);
    REQUIRE(error(prob_p, "101%").find("expected a probability") == 0);
    REQUIRE(error(prob_p, "-0.1").find("negative") != std::string::npos);
    REQUIRE(error(prob_p, "high").find("expected a probability") == 0);
}
