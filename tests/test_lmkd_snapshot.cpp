// `oomsim lmkd SNAPSHOT_DIR`: the kernel's files as lmkd parses them
// (replay/snapshot.c), real-format snapshots, and the errors.
#include <catch2/catch.hpp>

#include <string>

#include <sys/stat.h>
#include <unistd.h>

#include "replay/replay.h"
#include "shim/shim.hpp"

using namespace shim;

namespace {

int parse(rpl_lmkd_snapshot *s, const char *file, const std::string &text, std::string *msg)
{
    sim_error err;
    sim_error_clear(&err);
    int rc = rpl_lmkd_snapshot_parse(s, file, text.data(), text.size(), &err);
    *msg = err.msg;
    return rc;
}

std::string refused(const char *file, const std::string &text)
{
    rpl_lmkd_snapshot s;
    rpl_lmkd_snapshot_init(&s);
    std::string msg;
    CHECK(parse(&s, file, text, &msg) == SIM_EINPUT);
    return msg;
}

} // namespace

TEST_CASE("lmkd snapshot: zoneinfo over nodes and zones, protection, unpopulated zones",
          "[lmkd]")
{
    // two nodes; node 0's DMA32 has the largest protection 5632 and adds it
    // to each of its watermarks; Movable (present 0) is skipped though its
    // watermarks are printed; lines lmkd does not read are skipped
    const std::string z =
        "Node 0, zone    DMA32\n  per-node stats\n      nr_inactive_file 10\n"
        "      nr_active_file 20\n  pages free     3840\n        boost    0\n"
        "        min      100\n        low      200\n        high     300\n"
        "        spanned  4095\n        present  3998\n        managed  3840\n"
        "        protection: (0, 0, 5632, 5632)\n      nr_free_pages 3840\n"
        "  pagesets\n    cpu: 0\n              count: 1\n  node_unreclaimable:  0\n"
        "Node 0, zone   Normal\n  pages free     100\n        min      1000\n"
        "        low      2000\n        high     3000\n        present  500000\n"
        "        protection: (0, 0, 0, 0)\n  pagesets\n"
        "Node 0, zone  Movable\n  pages free     0\n        min      32\n        low      32\n"
        "        high     32\n        present  0\n        protection: (0, 0, 0, 0)\n"
        "Node 1, zone   Normal\n  per-node stats\n      nr_inactive_file 1\n"
        "      nr_active_file 1\n  pages free     1\n        min      10\n"
        "        low      20\n        high     30\n        present  1000\n"
        "        protection: (0, 7)\n  pagesets\n";
    rpl_lmkd_snapshot s;
    rpl_lmkd_snapshot_init(&s);
    std::string msg;
    REQUIRE(parse(&s, "zoneinfo", z, &msg) == SIM_OK);
    CHECK(s.wake.wmark_min == (5632 + 100) + 1000 + (7 + 10));
    CHECK(s.wake.wmark_low == (5632 + 200) + 2000 + (7 + 20));
    CHECK(s.wake.wmark_high == (5632 + 300) + 3000 + (7 + 30));
}

TEST_CASE("lmkd snapshot: every malformed file is refused with its line", "[lmkd]")
{
    // a node's stats first, as every kernel from 4.8 writes them
    const std::string n = "Node 0, zone Normal\n  per-node stats\n  nr_inactive_file 1\n"
                          "  nr_active_file 2\n";
    CHECK(refused("zoneinfo", n + "  min 1\n  low x\n") ==
          "zoneinfo:6: not a page count a phone can have after \"low\"");
    CHECK(refused("zoneinfo", n + "  min 1\n  low 2\n  high 3\n") ==
          "zoneinfo:1: no present line in zone \"Normal\"");
    CHECK(refused("zoneinfo", n + "  present 9\n  min 1\n  high 3\n") ==
          "zoneinfo:1: no low line in zone Normal of node 0");
    CHECK(refused("zoneinfo", n + "  present 9\n  min 1\n  low 2\n  high 3\n"
                                  "  protection: (0, 1\n") ==
          "zoneinfo:9: not a protection array \"(a, b, ...)\" of page counts a phone can have");
    CHECK(refused("zoneinfo", "nothing\n") == "zoneinfo: no \"Node N, zone NAME\" line");
    CHECK(refused("zoneinfo", n + " present 9\n min 5\n low 2\n high 3\n") ==
          "zoneinfo: the summed watermarks are out of order (min 5, low 2, high 3)");
    CHECK(refused("meminfo", "MemFree: 12 kB\nSwapTotal: 1 MB\n") ==
          "meminfo:2: a unit other than kB: \"MB\"");
    CHECK(refused("meminfo", "MemFree: -12 kB\n") ==
          "meminfo:1: not a number of kB after \"MemFree:\"");
    CHECK(refused("meminfo", "MemFree: 12 kB\n") == "meminfo: no SwapTotal: line");
    CHECK(refused("vmstat.1", "nr_inactive_file 1\nnr_active_file 2\npgrefill 1\n"
                              "pgscan_kswapd 1\npgscan_direct 1\n") ==
          "vmstat.1: no workingset_refault_file line (nor workingset_refault, its name "
          "before kernel 5.9)");
    CHECK(refused("vmstat.0", "pgscan_direct 99999999999999999999\n") ==
          "vmstat.0:1: not a count a kernel keeps after \"pgscan_direct\"");
    CHECK(refused("pressure_memory", "some avg10=1.00\nfull avg10=101.00\n") ==
          "pressure_memory:2: avg10 is not a percent: \"101.00\"");
    CHECK(refused("pressure_memory", "some avg10=1.00 total=3\n") ==
          "pressure_memory: no \"full avg10=...\" line");
    CHECK(refused("event", "critical now\n") == "event:1: expected one word, found more: \"now\"");
    CHECK(refused("event", "high\n") ==
          "event: \"high\" is not a PSI level (low, medium or critical)");
    CHECK(refused("page_size", "5000\n") ==
          "page_size: \"5000\" is not a page size in bytes (a power of two from 4096 to "
          "1048576)");
    CHECK(refused("props", "ro.lmk.thrashing_limit=lots\n") ==
          "props:1: not a whole number: \"lots\"");
    CHECK(refused("props", "# a comment\nro.lmk.kill_heaviest_task=maybe\n") ==
          "props:2: not true or false: \"maybe\"");
    CHECK(refused("props", "just words\n") ==
          "props:1: expected NAME=VALUE or [NAME]: [VALUE]");
}

TEST_CASE("lmkd snapshot: properties as GET_LMK_PROPERTY reads them", "[lmkd]")
{
    rpl_lmkd_snapshot s;
    rpl_lmkd_snapshot_init(&s);
    std::string msg;
    // the experiment's value wins whatever the order; getprop's layout too;
    // a property this decision does not read is listed, not refused
    REQUIRE(parse(&s, "props",
                  "persist.device_config.lmkd_native.thrashing_limit=200\n"
                  "[ro.lmk.thrashing_limit]: [50]\n[ro.config.low_ram]: [true]\n"
                  "ro.lmk.swap_util_max=250\nro.lmk.low=1001\nro.build.id=X\n",
                  &msg) == SIM_OK);
    mdl_lmkd_props_resolve(&s.props);
    CHECK(s.props.thrashing_limit == 200);
    CHECK(s.props.thrashing_limit_critical == 600); // 3 x the limit in force
    // a limit whose triple passes INT32_MAX: held there, not overflowed (a
    // fuzz finding)
    rpl_lmkd_snapshot big;
    rpl_lmkd_snapshot_init(&big);
    REQUIRE(parse(&big, "props", "[ro.lmk.thrashing_limit]: [1033333333]\n", &msg) == SIM_OK);
    mdl_lmkd_props_resolve(&big.props);
    CHECK(big.props.thrashing_limit == 1033333333);
    CHECK(big.props.thrashing_limit_critical == INT32_MAX);
    CHECK(s.props.low_ram == 1);
    CHECK(s.props.psi_partial_stall_ms == 200);     // the low-RAM default
    CHECK(s.props.thrashing_limit_decay == 50);
    CHECK(s.props.swap_util_max == 100);            // clamp(0, 100, 250)
    REQUIRE(s.nignored == 1);
    CHECK(std::string(s.ignored[0]) == "ro.lmk.low");
    // ro.lmk.low_ram is not lmkd's switch (update_props reads
    // ro.config.low_ram alone): listed as ignored, the phone not low-RAM
    rpl_lmkd_snapshot a;
    rpl_lmkd_snapshot_init(&a);
    REQUIRE(parse(&a, "props", "ro.lmk.low_ram=true\n", &msg) == SIM_OK);
    CHECK(a.props.low_ram <= 0);
    REQUIRE(a.nignored == 1);
    CHECK(std::string(a.ignored[0]) == "ro.lmk.low_ram");
}

TEST_CASE("lmkd snapshot: oomsim lmkd on real-format directories", "[lmkd][cli]")
{
    // tests/lmkd/phone: a 6 GB phone's files (one populated zone: min 2508,
    // low 4081, high 5654 pages, protection 0).  MemFree 14000 kB = 3500
    // pages: under low, over min.  SwapTotal 2048000 kB = 512000 pages,
    // threshold 51200 pages = 204800 kB; SwapFree 123457 kB = 30864 pages
    // (meminfo_parse divides by 4) = 123456 kB, under MemFree + Inactive(file):
    // swap is low.  vmstat: pgscan_kswapd moved (kswapd); refaults 3000 over
    // a file LRU of 150000: thrashing 1.  So LOW_MEM_AND_SWAP, perceptible
    // apps spared (wmark > MIN, 1 < 300): min_score_adj 201.
    RunResult r = oomsim({"lmkd", source_path("tests/lmkd/phone")});
    INFO(r.err);
    REQUIRE(r.status == 0);
    CHECK(r.out.find("  wmark                  low\n") != std::string::npos);
    CHECK(r.out.find("  kill_reason            LOW_MEM_AND_SWAP\n") != std::string::npos);
    CHECK(r.out.find("  min_score_adj          201 ") != std::string::npos);
    CHECK(r.out.find("  description            low watermark is breached and swap is low "
                     "(123456kB < 204800kB)\n") != std::string::npos);
    CHECK(r.out.find("ignored: ro.lmk.low") != std::string::npos);
    // tests/lmkd/server: /proc files of a real x86 machine, read whole (five
    // zones, 200 fields to skip).  Watermarks: DMA 8650 + 29/36/43, DMA32
    // 5632 + 5886/7357/8828, Normal 0 + 10980/13725/16470; Movable and
    // Device unpopulated: 31177 / 35400 / 39623 pages.  11725 refaults over
    // 35241 + 82014 file pages: thrashing 1172500 / 117256 = 9.  No swap,
    // free far over high: no kill.
    r = oomsim({"lmkd", source_path("tests/lmkd/server"), "--format", "json"});
    REQUIRE(r.status == 0);
    CHECK(r.out.find("\"min\": 124708,\n    \"low\": 141600,\n    \"high\": 158492") !=
          std::string::npos);
    CHECK(r.out.find("\"thrashing\": 9,") != std::string::npos);
    CHECK(r.out.find("\"kill_reason\": \"NONE\",") != std::string::npos);
    CHECK(r.out.find("\"min_score_adj\": null,") != std::string::npos);
}

TEST_CASE("lmkd snapshot: a missing or broken file is exit 1 naming it", "[lmkd][cli]")
{
    TempDir dir;
    for (const char *f : {"meminfo", "zoneinfo", "vmstat.0", "vmstat.1", "props"})
        write_file(dir.file(f), read_file(source_path(std::string("tests/lmkd/phone/") + f)));
    RunResult r = oomsim({"lmkd", dir.path()});
    REQUIRE(r.status == 0); // pressure_memory, event and page_size are optional
    write_file(dir.file("props"), "ro.lmk.use_minfree_levels=true\n");
    r = oomsim({"lmkd", dir.path()});
    CHECK(r.status == 1);
    CHECK(r.err.find("use_minfree_levels is true: lmkd then runs its legacy strategy") !=
          std::string::npos);
    write_file(dir.file("props"), "");
    write_file(dir.file("vmstat.1"), "nr_inactive_file 1\nnr_active_file x\n");
    r = oomsim({"lmkd", dir.path()});
    CHECK(r.status == 1);
    CHECK(r.err.find(dir.file("vmstat.1") + ":2: not a count a kernel keeps after \"nr_active_file\"") !=
          std::string::npos);
    CHECK(r.out.empty());
    ::unlink(dir.file("vmstat.1").c_str());
    r = oomsim({"lmkd", dir.path()});
    CHECK(r.status == 1);
    CHECK(r.err.find("vmstat.1: missing") != std::string::npos);
    // a directory in the file's place: exit 1 saying so (before, exit 3)
    REQUIRE(::mkdir(dir.file("vmstat.1").c_str(), 0700) == 0);
    r = oomsim({"lmkd", dir.path()});
    CHECK(r.status == 1);
    CHECK(r.err.find("vmstat.1: a directory, not the file a snapshot needs") !=
          std::string::npos);
    ::rmdir(dir.file("vmstat.1").c_str());
    // no such directory, or a file given as the directory: said as such
    r = oomsim({"lmkd", dir.file("nowhere")});
    CHECK(r.status == 1);
    CHECK(r.err.find("nowhere: no such directory") != std::string::npos);
    r = oomsim({"lmkd", dir.file("meminfo")});
    CHECK(r.status == 1);
    CHECK(r.err.find("meminfo: not a directory") != std::string::npos);
    // a format it does not write names the ones it does
    r = oomsim({"lmkd", dir.path(), "--format", "xml"});
    CHECK(r.status == 2);
    CHECK(r.err.find("--format is table or json, got 'xml'") != std::string::npos);
    CHECK(oomsim({"lmkd"}).status == 2);
    RunResult h = oomsim({"lmkd", "--help"});
    CHECK(h.status == 0);
    CHECK(h.out.find(MDL_LMKD_VERSION) != std::string::npos);
    CHECK(h.out.find("thrashing_limit_critical") != std::string::npos);
}

TEST_CASE("lmkd snapshot: zoneinfo where lmkd's parser fails or drops zones", "[lmkd]")
{
    const std::string stats = "  per-node stats\n  nr_inactive_file 1\n  nr_active_file 2\n";
    const std::string zone = "  pages free 1\n  min 10\n  low 20\n  high 30\n  present 9\n"
                             "  protection: (0, 4)\n  pagesets\n";
    // a third node: MAX_NR_NODES is 2, zoneinfo_parse fails, no decision
    std::string three;
    for (int k = 0; k < 3; k++)
        three += "Node " + std::to_string(k) + ", zone Normal\n" + stats + zone;
    std::string m = refused("zoneinfo", three);
    CHECK(m.rfind("zoneinfo:23: a third node (lmkd reads at most two, MAX_NR_NODES): lmkd "
                  "18578a5's zoneinfo_parse fails on this file", 0) == 0);
    CHECK(m.find("makes no decision, so neither does oomsim lmkd") != std::string::npos);
    // no per-node stats at all: zoneinfo_parse_node meets "pagesets" (one word)
    m = refused("zoneinfo", "Node 0, zone Normal\n" + zone);
    CHECK(m.rfind("zoneinfo:8: node 0 has no per-node stats lmkd can read", 0) == 0);
    // the layout before 4.8: nr_inactive_file is a zone's; lmkd's node parser
    // reads the first zone's lines through nr_active_file, so that zone's
    // watermarks and present are never read: left out, said in a note; the
    // second zone counts (30 + 4 ...)
    const std::string old_first = "Node 0, zone DMA\n  pages free 1\n  min 100\n  low 200\n"
                                  "  high 300\n  present 4000\n  nr_inactive_file 1\n"
                                  "  nr_active_file 2\n  protection: (0, 0)\n  pagesets\n";
    rpl_lmkd_snapshot s;
    rpl_lmkd_snapshot_init(&s);
    REQUIRE(parse(&s, "zoneinfo", old_first + "Node 0, zone Normal\n" + zone, &m) == SIM_OK);
    CHECK(s.wake.wmark_min == 4 + 10);
    CHECK(s.wake.wmark_high == 4 + 30);
    REQUIRE(s.nnotes == 1);
    CHECK(std::string(s.notes[0]).rfind("zoneinfo:1: zone DMA of node 0 left out, as lmkd "
                                        "leaves it out: the file has no per-node stats", 0) ==
          0);
    // a zone whose header lmkd's node parser passes over is never a zone
    // for lmkd: an unpopulated DMA has no nr_*_file lines, so the scan runs
    // on into Normal, whose lines (protection, pagesets) then fill DMA's
    rpl_lmkd_snapshot_init(&s);
    REQUIRE(parse(&s, "zoneinfo", "Node 0, zone DMA\n  pages free 0\n  min 0\n  low 0\n"
                                  "  high 0\n  present 0\nNode 0, zone Normal\n  pages free 1\n"
                                  "  min 100\n  low 200\n  high 300\n  present 4000\n"
                                  "  nr_inactive_file 1\n  nr_active_file 2\n"
                                  "  protection: (0, 0)\n  pagesets\n", &m) == SIM_OK);
    REQUIRE(s.nnotes == 2);
    CHECK(std::string(s.notes[0]).rfind("zoneinfo:7: zone Normal of node 0 is never read as a "
                                        "zone", 0) == 0);
    CHECK(s.wake.wmark_min == 0);
    // no protection: line: taken as 0, said so
    rpl_lmkd_snapshot_init(&s);
    REQUIRE(parse(&s, "zoneinfo", "Node 0, zone Normal\n" + stats +
                                  "  min 10\n  low 20\n  high 30\n  present 9\n  pagesets\n",
                  &m) == SIM_OK);
    CHECK(s.wake.wmark_min == 10);
    REQUIRE(s.nnotes == 1);
    CHECK(std::string(s.notes[0]) == "zoneinfo:1: zone Normal of node 0 has no protection: "
                                     "line: its protection taken as 0, as lmkd takes it");
}

TEST_CASE("lmkd snapshot: overflowing numbers, duplicate lines, CRLF, a 3.4-era vmstat",
          "[lmkd]")
{
    // SwapTotal at INT64_MAX kB: every threshold lmkd computes from it overflows
    CHECK(refused("meminfo", "MemFree: 1 kB\nSwapTotal: 9223372036854775807 kB\n") ==
          "meminfo:2: more than a phone has (over 1 PiB): \"9223372036854775807\"");
    CHECK(refused("meminfo", "MemFree: 1 kB\nSwapTotal: 1 kB\nMemFree: 2 kB\n") ==
          "meminfo:3: a second MemFree: line (the first at line 1): two files pasted together?");
    CHECK(refused("vmstat.0", "pgrefill 1\npgrefill 2\n") ==
          "vmstat.0:2: a second pgrefill line (the first at line 1): two files pasted "
          "together?");
    CHECK(refused("zoneinfo", "Node 0, zone Normal\n  per-node stats\n  nr_inactive_file 1\n"
                              "  nr_active_file 2\n  min 1\n  min 2\n") ==
          "zoneinfo:6: a second min line in zone Normal (the first at line 5): two files "
          "pasted together?");
    CHECK(refused("zoneinfo", "Node 0, zone Normal\n  per-node stats\n  nr_inactive_file 1\n"
                              "  nr_active_file 2\n  min 274877906945\n") ==
          "zoneinfo:5: not a page count a phone can have after \"min\"");
    // a kernel before 3.15 and 4.8: the counters lmkd's PSI mode needs are not there
    CHECK(refused("vmstat.1", "nr_inactive_file 1\nnr_active_file 2\npgrefill_normal 1\n"
                              "pgscan_kswapd_normal 1\npgscan_direct_normal 1\n") ==
          "vmstat.1: no pgscan_kswapd and no workingset_refault line (only the per-zone "
          "pgscan_kswapd_* of kernels before 4.8): this kernel predates the counters lmkd's "
          "PSI mode reads (workingset_refault from 3.15, one pgscan_kswapd for the node from "
          "4.8, PSI itself from 4.20); on it lmkd runs its vmpressure mode, which oomsim lmkd "
          "does not decide");
    // a snapshot copied through Windows (CRLF) decides as its LF original
    std::string src = source_path("tests/lmkd/phone");
    TempDir dir;
    for (const char *f : {"meminfo", "zoneinfo", "vmstat.0", "vmstat.1", "pressure_memory",
                          "event", "props"}) {
        std::string t = read_file(src + "/" + f), crlf;
        for (char ch : t)
            crlf += ch == '\n' ? std::string("\r\n") : std::string(1, ch);
        dir.write(f, crlf);
    }
    RunResult a = oomsim({"lmkd", src, "--format", "json"});
    RunResult b = oomsim({"lmkd", dir.path(), "--format", "json"});
    INFO(b.err);
    REQUIRE(a.status == 0);
    CHECK(b.status == 0);
    CHECK(a.out == b.out);
}
