// lmkd's kill lines as phones and people post them (docs/traces.md "Kill
// lines"): Samsung's "Reclaim" form, the events log's killinfo in each of
// its layouts (lmkd event.logtags), the two-line forms of lmkd before
// Android 10 and of the kernel driver, lines wrapped by whoever posted
// them, and the swap field among a vendor's extra sizes.  Every line here
// is written for the project, in the format, with our own numbers.
#include <catch2/catch.hpp>

#include <cstring>
#include <string>
#include <vector>

#include "replay/replay.h"
#include "shim/exits.hpp"
#include "shim/shim.hpp"

using namespace shim;

namespace {

std::vector<rpl_exit> parse(const std::string &text) { return shim::parse_exits(text); }

std::vector<rpl_exit> joined(const std::string &text)
{
    std::vector<rpl_exit> x = parse(text);
    x.resize(rpl_exits_join(x.data(), x.size()));
    return x;
}

// A killinfo list of `count` fields: pid 4327, uid 10234, adj 900, min adj
// 900, 81234 kB, the reason given; the meminfo fields 1000 + their index,
// SwapTotal (13th) 2097148 and SwapFree (14th) 0; TaskSwapSize (30th)
// 20480; Thrashing 45 and MaxThrashing 60; the PSI averages as floats.
std::string killinfo(size_t count, int reason)
{
    std::string s = "12-04 10:23:49.100  1203  1203 I killinfo: [4327,10234,900,900,81234," +
                    std::to_string(reason);
    for (size_t k = 7; k <= count; k++) {
        long v = k == 13 ? 2097148 : k == 14 ? 0 : k == 30 ? 20480 : k == 32 ? 45
                 : k == 33 ? 60 : 1000 + (long)k;
        s += "," + (k >= 34 ? std::to_string(k) + ".25" : std::to_string(v));
    }
    return s + "]";
}

} // namespace

TEST_CASE("killlines: Samsung's Reclaim form, with AOSP's reasons and a vendor's own",
          "[diagnose][killlines]")
{
    std::vector<rpl_exit> x = parse(
        "12-04 10:23:45.678  1203  1203 I lowmemorykiller: Reclaim 'com.example.chat' (4321), "
        "uid 10234, oom_score_adj 900, state 2 to free 81234kB rss, 20480kB swap; reason: min2x "
        "watermark is breached\n"
        "12-04 10:23:45.878  1203  1203 I lowmemorykiller: Reclaim 'com.example.chat' (4322), "
        "uid 10234, oom_score_adj 905, state 2 to free 1kB rss, 2kB swap; reason: low watermark "
        "is breached and thrashing (40%)\n");
    REQUIRE(x.size() == 2);
    CHECK(x[0].source == RPL_LMKD);
    CHECK(std::string(x[0].process) == "com.example.chat");
    CHECK(x[0].pid == 4321);
    CHECK(x[0].uid == 10234);
    CHECK(x[0].adj == 900);
    CHECK(x[0].rss_kb == 81234);
    CHECK(x[0].swap_kb == 20480);
    // "min2x" is not a watermark lmkd names (min, low, high): the vendor's
    // words are kept, not read as LOW_MEM
    CHECK(x[0].lmkd == MDL_LMKD_NONE);
    CHECK(std::string(x[0].description) == "min2x watermark is breached");
    CHECK(x[1].lmkd == MDL_LMKD_LOW_MEM_AND_THRASHING);
    rpl_verdict v;
    rpl_diagnose_all(x.data(), 1, nullptr, 0, &v);
    CHECK(std::string(v.supports).find("\"min2x watermark is breached\"") != std::string::npos);
}

TEST_CASE("killlines: the swap is the number before kB swap, past a vendor's anon rss",
          "[diagnose][killlines]")
{
    std::vector<rpl_exit> x =
        parse("I lowmemorykiller: Kill 'com.a' (4322), uid 10234, oom_score_adj 905 to free "
              "4000000kB rss, 3990164kB anon rss, 2413008kB swap, 0kB dmabuf; reason: low "
              "watermark is breached");
    REQUIRE(x.size() == 1);
    CHECK(x[0].rss_kb == 4000000);
    CHECK(x[0].swap_kb == 2413008);
    CHECK(x[0].lmkd == MDL_LMKD_LOW_MEM);
}

TEST_CASE("killlines: killinfo in each layout lmkd wrote, its reason numbers by name",
          "[diagnose][killlines]")
{
    // layouts by count (event.logtags): TaskSwapSize from 30, thrashing from 33
    struct Layout {
        size_t count;
        int64_t swap;
        bool thrashing;
    } layouts[] = {{25, -1, false}, {29, -1, false}, {30, 20480, false},
                   {31, 20480, false}, {33, 20480, true}, {38, 20480, true}};
    for (const Layout &l : layouts) {
        INFO(l.count);
        std::vector<rpl_exit> x = parse(killinfo(l.count, 4));
        REQUIRE(x.size() == 1);
        CHECK(x[0].source == RPL_LMKD);
        CHECK(x[0].killinfo == 1);
        CHECK(x[0].process[0] == '\0');
        CHECK(x[0].pid == 4327);
        CHECK(x[0].uid == 10234);
        CHECK(x[0].adj == 900);
        CHECK(x[0].rss_kb == 81234);
        CHECK(x[0].swap_kb == l.swap);
        CHECK(x[0].lmkd == MDL_LMKD_LOW_MEM_AND_THRASHING); // 4 in enum kill_reasons
        CHECK((std::string(x[0].description).find("thrashing 45% (max 60%)") !=
               std::string::npos) == l.thrashing);
        CHECK(std::string(x[0].description).find("swap free 0 of 2097148 kB") !=
              std::string::npos);
    }
    // statslog.h's numbers, 0 PRESSURE_AFTER_KILL to 8 LOW_MEM; -1 none
    const mdl_lmkd_reason by_number[] = {
        MDL_LMKD_PRESSURE_AFTER_KILL,       MDL_LMKD_NOT_RESPONDING,
        MDL_LMKD_LOW_SWAP_AND_THRASHING,    MDL_LMKD_LOW_MEM_AND_SWAP,
        MDL_LMKD_LOW_MEM_AND_THRASHING,     MDL_LMKD_DIRECT_RECL_AND_THRASHING,
        MDL_LMKD_LOW_MEM_AND_SWAP_UTIL,     MDL_LMKD_LOW_FILECACHE_AFTER_THRASHING,
        MDL_LMKD_LOW_MEM};
    for (int k = 0; k < 9; k++)
        CHECK(parse(killinfo(38, k))[0].lmkd == by_number[k]);
    std::vector<rpl_exit> none = parse(killinfo(38, -1));
    CHECK(none[0].lmkd == MDL_LMKD_NONE);
    CHECK(std::string(none[0].description).find("none") != std::string::npos);
    // a vendor's number past lmkd's: said so, no reason taken
    std::vector<rpl_exit> vendor = parse(killinfo(38, 17));
    CHECK(vendor[0].lmkd == MDL_LMKD_NONE);
    CHECK(std::string(vendor[0].description) ==
          "killinfo reason 17: a vendor's number, not one of lmkd's");
    // a count lmkd never wrote: the six fields every layout shares
    std::vector<rpl_exit> odd = parse(killinfo(27, 2));
    REQUIRE(odd.size() == 1);
    CHECK(odd[0].lmkd == MDL_LMKD_LOW_SWAP_AND_THRASHING);
    CHECK(odd[0].swap_kb == -1);
    CHECK(std::string(odd[0].description).find("27 fields") != std::string::npos);
    // not a list: not read
    CHECK(parse("I killinfo: [4327,10234,x]").empty());
}

TEST_CASE("killlines: killinfo joins lmkd's Kill line of the same kill", "[diagnose][killlines]")
{
    // Android 10's line has no reason: killinfo gives it, the line its name
    std::vector<rpl_exit> x = joined(
        "12-04 10:23:49.090  1203  1203 I lowmemorykiller: Kill 'com.example.chat' (4327), uid "
        "10234, oom_adj 900 to free 81234kB\n" + killinfo(38, 4) + "\n" + killinfo(38, 8) +
        "\n");
    // the second killinfo (pid 4327 again) has no line left to join: its own
    REQUIRE(x.size() == 2);
    CHECK(std::string(x[0].process) == "com.example.chat");
    CHECK(x[0].killinfo == 0);
    CHECK(x[0].lmkd == MDL_LMKD_LOW_MEM_AND_THRASHING);
    CHECK(x[0].swap_kb == 20480);
    CHECK(x[1].killinfo == 1);
    CHECK(x[1].lmkd == MDL_LMKD_LOW_MEM);
    // a killinfo an hour away from the line is another kill
    x = joined("12-04 09:23:49.090  1203  1203 I lowmemorykiller: Kill 'com.example.chat' "
               "(4327), uid 10234, oom_adj 900 to free 81234kB\n" + killinfo(38, 4));
    CHECK(x.size() == 2);
}

TEST_CASE("killlines: across two files killinfo joins the line nearest in time, not in line number",
          "[diagnose][killlines]")
{
    // the events log (file 0) holds the killinfo at its line 1, 10:23:49.100;
    // the main log (file 1) two Kill lines of pid 4327 within the window:
    // line 1 at 10:23:51.000 (the pid again, 1.9 s later) and line 2 at
    // 10:23:49.090, the same kill.  Line numbers of two files do not
    // compare: the nearest in time takes the killinfo (its reason, LOW_MEM)
    std::vector<rpl_exit> events = parse(killinfo(38, 8) + "\n");
    std::vector<rpl_exit> main = parse(
        "12-04 10:23:51.000  1203  1203 I lowmemorykiller: Kill 'com.example.chat' (4327), uid "
        "10234, oom_adj 900 to free 1000kB\n"
        "12-04 10:23:49.090  1203  1203 I lowmemorykiller: Kill 'com.example.chat' (4327), uid "
        "10234, oom_adj 900 to free 81234kB\n");
    REQUIRE(events.size() == 1);
    REQUIRE(main.size() == 2);
    std::vector<rpl_exit> x = events;
    for (rpl_exit e : main) {
        e.file = 1;
        x.push_back(e);
    }
    x.resize(rpl_exits_join(x.data(), x.size()));
    REQUIRE(x.size() == 2); // the killinfo left the list, merged
    for (const rpl_exit &e : x) {
        CHECK(e.killinfo == 0);
        if (e.rss_kb == 81234)
            CHECK(e.lmkd == MDL_LMKD_LOW_MEM);
        else
            CHECK(e.lmkd == MDL_LMKD_NONE);
    }
}

TEST_CASE("killlines: the two-line forms keep their size and their pressure",
          "[diagnose][killlines]")
{
    // lmkd before Android 10 (lmkd.c until d4dbf08): the victim's adj on the
    // first line, the kill's threshold on the second
    std::vector<rpl_exit> x = parse(
        "06-01 08:00:00.000   412   412 I lowmemorykiller: Killing 'com.example.chat' (4325), "
        "uid 10234, adj 906\n"
        "06-01 08:00:00.000   412   412 I lowmemorykiller:    to free 45000kB because system is "
        "under low memory pressure oom_adj 900\n");
    REQUIRE(x.size() == 1);
    CHECK(x[0].pid == 4325);
    CHECK(x[0].adj == 906);
    CHECK(x[0].rss_kb == 45000);
    CHECK(std::string(x[0].description) == "system is under low memory pressure oom_adj 900");
    CHECK(x[0].line == 1);
    // the kernel driver: three lines of one printk, the threshold's adj last
    x = parse("<6>[52794.911008] lowmemorykiller: Killing 'com.example.chat' (4326), adj 904,\n"
              "<6>[52794.911008]    to free 53160kB on behalf of 'kswapd0' (97) because\n"
              "<6>[52794.911008]    cache 199320kB is below limit 221184kB for oom_score_adj "
              "900\n"
              "<6>[52794.911008]    Free memory is 24024kB above reserved\n");
    REQUIRE(x.size() == 1);
    CHECK(x[0].pid == 4326);
    CHECK(x[0].adj == 904);
    CHECK(x[0].rss_kb == 53160);
    CHECK(std::string(x[0].description) ==
          "cache 199320kB is below limit 221184kB for oom_score_adj 900");
}

TEST_CASE("killlines: a line wrapped by whoever posted it is joined, or left out with a note",
          "[diagnose][killlines]")
{
    // cut after the uid: the rest on the next line, without a prefix
    std::vector<rpl_exit> x = parse(
        "12-04 10:23:47.100  1203  1203 I lowmemorykiller: Kill 'com.example.chat' (4323), uid "
        "10234,\n"
        "oom_score_adj 0 to free 812340kB rss, 201332kB swap; reason: device is low on swap "
        "(1000kB < 204800kB) and thrashing (134%)\n"
        "12-04 10:23:47.200  1203  1203 I lowmemorykiller: Kill 'com.example.chat' (4324), uid "
        "10234, oom_score_adj 905 to free 1kB rss,\n"
        "  7kB swap; reason: low watermark is breached\n");
    REQUIRE(x.size() == 2);
    CHECK(x[0].adj == 0);
    CHECK(x[0].has_adj == 1);
    CHECK(x[0].rss_kb == 812340);
    CHECK(x[0].swap_kb == 201332);
    CHECK(x[0].lmkd == MDL_LMKD_LOW_SWAP_AND_THRASHING);
    CHECK(x[0].cut == 0);
    CHECK(x[1].swap_kb == 7);
    CHECK(x[1].lmkd == MDL_LMKD_LOW_MEM);
    // cut, and the next line is a log line of its own: flagged, not guessed
    x = parse("12-04 10:23:48.100  1203  1203 I lowmemorykiller: Kill 'com.example.chat' (4324), "
              "uid 10234,\n"
              "12-04 10:23:48.200  1203  1203 I ActivityManager: Start proc 4400\n");
    REQUIRE(x.size() == 1);
    CHECK(x[0].cut == 1);
    CHECK(x[0].has_adj == 0);
    // diagnose leaves it out, saying where; a file of only such lines is refused
    TempDir dir;
    std::string f = dir.write("log.txt",
                              "12-04 10:23:48.100  1203  1203 I lowmemorykiller: Kill 'a' (1), "
                              "uid 2,\n\n"
                              "I lowmemorykiller: Kill 'b' (3), uid 2, oom_score_adj 900 to free "
                              "1kB rss, 0kB swap\n");
    std::vector<std::string> notes;
    rpl_record *items = nullptr;
    size_t n = 0;
    sim_error err;
    sim_error_clear(&err);
    const char *files[] = {f.c_str()};
    REQUIRE(rpl_gather(files, 1, nullptr, nullptr,
                       [](void *ctx, const char *text) {
                           static_cast<std::vector<std::string> *>(ctx)->push_back(text);
                       },
                       &notes, &items, &n, &err) == SIM_OK);
    REQUIRE(n == 1);
    CHECK(std::string(items[0].x.process) == "b");
    free(items);
    REQUIRE(notes.size() == 1);
    CHECK(notes[0] == f + ":1: an lmkd kill line cut short before its oom_score_adj, and the "
                          "next line does not go on with it: not read (join the wrapped line)");
    std::string g = dir.write("cut.txt", "Kill 'a' (1), uid 2,\n");
    const char *only[] = {g.c_str()};
    CHECK(rpl_gather(only, 1, nullptr, nullptr, nullptr, nullptr, &items, &n, &err) ==
          SIM_EINPUT);
    CHECK(std::string(err.msg).find("cut short") != std::string::npos);
}

TEST_CASE("killlines: swap exhausted and thrashing names the anonymous memory first",
          "[diagnose][killlines]")
{
    // LOW_SWAP_AND_THRASHING: zram full, so reclaim can take only the page
    // cache; the app's anonymous memory is what filled it
    for (const char *text :
         {"I lowmemorykiller: Kill 'com.example.chat' (507), uid 10234, oom_score_adj 0 to free "
          "812340kB rss, 201332kB swap; reason: device is low on swap (1000kB < 204800kB) and "
          "thrashing (134%)",
          "12-04 10:23:49.100  1203  1203 I killinfo: [507,10234,0,0,812340,2]"}) {
        INFO(text);
        std::vector<rpl_exit> x = parse(text);
        REQUIRE(x.size() == 1);
        rpl_verdict v;
        rpl_diagnose_all(x.data(), 1, nullptr, 0, &v);
        CHECK(v.rec == RPL_REC_SWAP_THRASHING);
        std::string r = v.recovery;
        size_t anon = r.find("hold less anonymous memory first"), mapped = r.find("mapped weights");
        CHECK(anon != std::string::npos);
        CHECK(mapped != std::string::npos);
        CHECK(anon < mapped);
        CHECK(v.ladder.step == RPL_STEP_STOP_EXTRA);
    }
    // thrashing with swap to spare stays the mapped weights' advice
    std::vector<rpl_exit> t = parse("Kill 'a' (1), uid 1, oom_score_adj 0 to free 1kB rss, 0kB "
                                    "swap; reason: low watermark is breached and thrashing "
                                    "(40%)");
    rpl_verdict v;
    rpl_diagnose_all(t.data(), 1, nullptr, 0, &v);
    CHECK(v.rec == RPL_REC_THRASHING);
}

TEST_CASE("killlines: with --process, a killinfo stays only when a record of the app gives its uid",
          "[diagnose][killlines]")
{
    // killinfo names a pid and a uid, no process: another app's kill must
    // not pass for the app's
    TempDir dir;
    std::string log = dir.write(
        "events.txt",
        "ApplicationExitInfo(timestamp=2024-12-04 10:23:59.000 pid=4000 realUid=10234 "
        "process=com.example.chat reason=3 (LOW_MEMORY) importance=400 description=lmk)\n"
        "12-04 10:23:49.100  1203  1203 I killinfo: [4327,10234,900,900,81234,8]\n"
        "12-04 10:23:49.300  1203  1203 I killinfo: [5555,10999,905,900,1234,8]\n");
    RunResult r = oomsim({"diagnose", "--exits", log, "--process", "com.example.chat"});
    INFO(r.out << r.err);
    REQUIRE(r.status == 0);
    CHECK(r.out.find("pid 4327 (uid 10234; killinfo names no process)") != std::string::npos);
    CHECK(r.out.find("pid 5555") == std::string::npos);
    CHECK(r.out.find("(a killinfo of a uid no record of the app gives)") != std::string::npos);
    // without --process every record is read
    r = oomsim({"diagnose", "--exits", log});
    CHECK(r.out.find("pid 5555 (uid 10999; killinfo names no process)") != std::string::npos);
}
