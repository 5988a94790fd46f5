// When memorystatus posts a JetsamEvent and what it holds (models/memstat.c,
// docs/model.md "JetsamEvent reports"), after xnu-11417.101.15's
// bsd/kern/kern_memorystatus.c: the snapshot is made at a kill when none is
// open (memorystatus_kill_top_process makes none for a victim in band 0;
// memorystatus_kill_specific_process always makes one), with the pages and
// every process as they are then; each kill updates its process's entry;
// a pass posts it when it killed outside bands 0 and 10
// (memorystatus_should_post_snapshot), unless kern.jetsam_idle_snapshot is
// set; and memorystatus_post_snapshot sends it only 30 s after the last one
// (JETSAM_SNAPSHOT_TIMEOUT_SECS), else it stays open for the next.
//
// The phone: 4096 MiB, 512 for the system (3584 MiB for the rest), a limit
// of 3500 MiB, page levels critical 5 % (204.8 MiB), idle 10 % (409.6 MiB),
// pressure 15 % (614.4 MiB); no file pages and a compressor that gains
// nothing (ratio 1), so available pages are free pages.  Every figure is
// derived in a comment.
#include <catch2/catch.hpp>

#include <cstring>
#include <string>

#include <gsl/gsl_rng.h>

#include "shim/phone.hpp"

namespace {

using shim::MiB;
using shim::Phone;

const sim_time SECOND = 1000000;

std::string iphone(const std::string &others, const std::string &extra = "")
{
    return "name: phone\nos: ios\nram: 4096MiB\nsystem: 512MiB\n"
           "kill: {rule: jetsam, limit: 3500MiB}\n"
           "pages: {critical: 5%, idle: 10%, pressure: 15%}\n"
           "others: " + others + "\ncompressor: {ratio: 1}\n" + extra;
}

void settle(Phone &p)
{
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 1);
    p.setup(r);
    gsl_rng_free(r);
}

// The entry of the report for the process with this pid (nullptr: none).
const mdl_jetsam_proc *entry(const mdl_jetsam_event &ev, uint32_t pid)
{
    for (unsigned k = 0; k < ev.nprocs; k++)
        if (ev.procs[k].pid == pid)
            return &ev.procs[k];
    return nullptr;
}

} // namespace

TEST_CASE("jetsam reports: the pages are the snapshot's, made at the pass's first kill",
          "[memstat][ips]")
{
    // Two processes of 60 MiB in band 40 (pids 2000, 2001).  The app in
    // front allocates 3400 MiB: free 3584 - 120 - 3400 = 64 MiB, under
    // critical: the system is unhealthy, memorystatus kills up the bands,
    // vm-pageshortage: 2000 (free 124), 2001 (184), still under 204.8: the
    // app in front (band 100).  One pass: the snapshot is made at the first
    // kill, its pages then (64 MiB free), not at the app's death (184).
    Phone p(iphone("[{band: 40, count: 2, size: 60MiB}]"));
    settle(p);
    REQUIRE(p.pg.x.nother == 2);
    CHECK(p.alloc(3400 * MiB).gone);
    REQUIRE(p.kills.size() == 1);
    CHECK(p.kills[0].cause == MDL_JETSAM_VM_PAGESHORTAGE);
    CHECK(p.kills[0].report == 1); // a victim outside the idle bands: posted
    REQUIRE(p.events.size() == 1);
    const mdl_jetsam_event &ev = p.events[0];
    CHECK(ev.free == 64 * MiB);
    CHECK(ev.cause == MDL_JETSAM_VM_PAGESHORTAGE);
    // every process at the snapshot, by band: the two others, then the app
    REQUIRE(ev.nprocs == 3);
    CHECK(ev.procs[0].pid == 2000);
    CHECK(ev.procs[1].pid == 2001);
    CHECK(ev.procs[2].app == 1);
    CHECK(ev.procs[2].pid == 1000); // its first life
    for (unsigned k = 0; k < 3; k++)
        CHECK(ev.procs[k].killed == MDL_JETSAM_VM_PAGESHORTAGE);
    CHECK(ev.procs[2].footprint == 3400 * MiB);
}

TEST_CASE("jetsam reports: another process's kill outside the idle bands posts one",
          "[memstat][ips]")
{
    // One process of 100 MiB in band 40.  The app in front at 3300 MiB:
    // free 3584 - 100 - 3300 = 184 < 204.8: the other is killed
    // (vm-pageshortage), free 284: healthy, and with no idle process nothing
    // more.  The app lives; the report lists the kill, and the app beside it.
    Phone p(iphone("[{band: 40, count: 1, size: 100MiB}]"));
    settle(p);
    CHECK_FALSE(p.alloc(3300 * MiB).gone);
    CHECK(p.kills.empty());
    CHECK(p.pg.x.nother == 0);
    REQUIRE(p.events.size() == 1);
    const mdl_jetsam_event &ev = p.events[0];
    CHECK(ev.free == 184 * MiB);
    const mdl_jetsam_proc *other = entry(ev, 2000), *app = entry(ev, 1000);
    REQUIRE(other != nullptr);
    REQUIRE(app != nullptr);
    CHECK(other->killed == MDL_JETSAM_VM_PAGESHORTAGE);
    CHECK(other->band == 40);
    CHECK(app->killed == MDL_JETSAM_NONE);
    CHECK(app->band == 100);
}

TEST_CASE("jetsam reports: a kill in band 0 posts none unless kern.jetsam_idle_snapshot is set",
          "[memstat][ips]")
{
    // One idle process of 60 MiB (band 0).  The app at 3200 MiB: free 3584
    // - 60 - 3200 = 324 MiB, under idle (409.6) and over critical: healthy,
    // pick_action kills the idle band, idle-exit: the process (free 384).
    // No snapshot is made for a victim in band 0, none is posted.  Then
    // the app is in the idle band (aged, behind) under idle: its own
    // idle-exit, no report either: the world records MetricKit's count.
    for (int always : {0, 1}) {
        INFO("jetsam_idle_snapshot " << always);
        Phone p(iphone("[{band: 0, count: 1, size: 60MiB}]",
                       always ? "jetsam_idle_snapshot: true\n" : ""));
        settle(p);
        CHECK_FALSE(p.alloc(3200 * MiB).gone);
        CHECK(p.pg.x.nother == 0);
        CHECK(p.events.size() == (always ? 1u : 0u));
        p.at(40 * SECOND); // past the 30 s between two reports
        p.app_figures.fg = 0;
        p.app_figures.aged = 1;
        CHECK(pg_check(&p.pg, &p.a, 0, 1).gone);
        REQUIRE(p.kills.size() == 1);
        CHECK(p.kills[0].cause == MDL_JETSAM_IDLE_EXIT);
        CHECK(p.kills[0].report == always);
        REQUIRE(p.events.size() == (always ? 2u : 0u));
        if (always) {
            const mdl_jetsam_proc *app = entry(p.events[1], 1000);
            REQUIRE(app != nullptr);
            CHECK(app->killed == MDL_JETSAM_IDLE_EXIT);
            CHECK(app->band == 0);
            CHECK(p.events[1].time == 40 * SECOND);
        }
    }
}

TEST_CASE("jetsam reports: band 10 makes the snapshot without posting it, and the next post carries it",
          "[memstat][ips]")
{
    // Band 10 (60 MiB, pid 2000) and band 40 (three of 20 MiB, 2001-2003).
    // The app at 3340 MiB: free 3584 - 120 - 3340 = 124 < 204.8: band 10
    // first (vm-pageshortage; free 184), then band 40's first (204 < 204.8),
    // then its second (224): a post, at 0 s.  Then at 10 s the app takes
    // 30 MiB more: free 194 < 204.8: 2003 (214) goes, and the pass would
    // post, but 10 s is within 30 s of the last: the snapshot stays open.
    // At 45 s 15 MiB more: free 199, and no other process is left below
    // the app: the app itself (band 100) goes; the pass posts the open
    // snapshot, made at 10 s (free 194), listing 2003 and the app.
    Phone p(iphone("[{band: 10, count: 1, size: 60MiB}, {band: 40, count: 3, size: 20MiB}]"));
    settle(p);
    CHECK_FALSE(p.alloc(3340 * MiB).gone);
    REQUIRE(p.events.size() == 1);
    CHECK(p.events[0].free == 124 * MiB);
    CHECK(entry(p.events[0], 2000)->killed == MDL_JETSAM_VM_PAGESHORTAGE);
    CHECK(entry(p.events[0], 2001)->killed == MDL_JETSAM_VM_PAGESHORTAGE);
    CHECK(entry(p.events[0], 2002)->killed == MDL_JETSAM_VM_PAGESHORTAGE);
    CHECK(entry(p.events[0], 2003)->killed == MDL_JETSAM_NONE);
    p.at(10 * SECOND);
    CHECK_FALSE(p.alloc(30 * MiB).gone);
    CHECK(p.pg.x.nother == 0);
    CHECK(p.events.size() == 1); // held: within 30 s of the last
    CHECK(p.pg.x.snap_open == 1);
    p.at(45 * SECOND);
    CHECK(p.alloc(15 * MiB).gone);
    REQUIRE(p.events.size() == 2);
    const mdl_jetsam_event &ev = p.events[1];
    CHECK(ev.time == 45 * SECOND);
    CHECK(ev.free == 194 * MiB); // the pages at 10 s, when it was made
    REQUIRE(entry(ev, 2003) != nullptr);
    CHECK(entry(ev, 2003)->killed == MDL_JETSAM_VM_PAGESHORTAGE);
    REQUIRE(entry(ev, 1000) != nullptr);
    CHECK(entry(ev, 1000)->killed == MDL_JETSAM_VM_PAGESHORTAGE);
    CHECK(entry(ev, 1000)->footprint == 3385 * MiB);
}

TEST_CASE("jetsam reports: jetsam_idle_snapshot is an iOS device's true or false", "[memstat]")
{
    auto parse = [](const std::string &yaml, std::string &msg) {
        mdl_device dev;
        std::memset(&dev, 0, sizeof dev);
        sim_error err;
        sim_error_clear(&err);
        int rc = scn_device_parse(yaml.data(), yaml.size(), "phone.yaml", &dev, &err);
        msg = err.msg;
        int on = dev.xnu_idle_snapshot;
        scn_device_release(&dev);
        return rc == SIM_OK ? on : -1;
    };
    std::string msg;
    CHECK(parse(iphone("[{band: 0, count: 1, size: 1MiB}]"), msg) == 0); // off, as on phones
    CHECK(parse(iphone("[{band: 0, count: 1, size: 1MiB}]", "jetsam_idle_snapshot: true\n"), msg) == 1);
    // the plain rule reads it too
    CHECK(parse("name: p\nos: ios\nram: 4GiB\nsystem: 1GiB\nkill: {rule: jetsam, limit: 2GiB}\n"
                "jetsam_idle_snapshot: true\n", msg) == 1);
    CHECK(parse(iphone("[{band: 0, count: 1, size: 1MiB}]", "jetsam_idle_snapshot: yes\n"), msg) == -1);
    CHECK(msg.find("phone.yaml:") != std::string::npos);
    CHECK(parse("name: a\nos: android\nram: 4GiB\nsystem: 1GiB\nkill: {rule: lmk, mode: psi, watermarks: {min: 40MiB, low: 50MiB, high: 60MiB}}\n"
                "jetsam_idle_snapshot: false\n", msg) == -1);
    INFO(msg);
    CHECK(msg.find("an ios device's key") != std::string::npos);
}

TEST_CASE("jetsam reports: a kill in band 0 makes no snapshot, and a pass posts only its own",
          "[memstat][ips]")
{
    // Bands 0, 10 and 40, 60 MiB each (pids 2000, 2001, 2002).  The app at
    // 3200 MiB: free 3584 - 180 - 3200 = 204 < 204.8: band 0 goes first
    // (vm-pageshortage), free 264: no snapshot is made for it.  Then 100
    // MiB more: free 164: band 10 goes (224): the snapshot is made (free
    // 164), not posted.  Then 40 MiB more: free 184: band 40 goes, a post:
    // pages of the band-10 kill, the two kills listed, band 0's absent.
    Phone p(iphone("[{band: 0, count: 1, size: 60MiB}, {band: 10, count: 1, size: 60MiB}, "
                   "{band: 40, count: 1, size: 60MiB}]"));
    settle(p);
    CHECK_FALSE(p.alloc(3200 * MiB).gone);
    CHECK(p.pg.x.nother == 2);
    CHECK(p.pg.x.snap_open == 0);
    CHECK_FALSE(p.alloc(100 * MiB).gone);
    CHECK(p.pg.x.nother == 1);
    CHECK(p.pg.x.snap_open == 1);
    CHECK(p.events.empty());
    CHECK_FALSE(p.alloc(40 * MiB).gone);
    REQUIRE(p.events.size() == 1);
    const mdl_jetsam_event &ev = p.events[0];
    CHECK(ev.free == 164 * MiB);
    CHECK(entry(ev, 2000) == nullptr);
    REQUIRE(entry(ev, 2001) != nullptr);
    CHECK(entry(ev, 2001)->killed == MDL_JETSAM_VM_PAGESHORTAGE);
    REQUIRE(entry(ev, 2002) != nullptr);
    CHECK(entry(ev, 2002)->killed == MDL_JETSAM_VM_PAGESHORTAGE);
    // A later pass that kills only in band 10 posts nothing, though the
    // pass before posted (the post is each pass's own): a second phone,
    // the app over its limit at 0 s (a report at once), then at 40 s,
    // alive again at 3330 MiB: free 3584 - 60 - 3330 = 194: band 10 goes.
    Phone q(iphone("[{band: 10, count: 1, size: 60MiB}]"));
    settle(q);
    CHECK(q.alloc(3501 * MiB).gone);
    REQUIRE(q.events.size() == 1);
    q.app_figures.alive = 1; // relaunched: a new life
    q.at(40 * SECOND);
    CHECK_FALSE(q.alloc(3330 * MiB).gone);
    CHECK(q.pg.x.nother == 0);
    CHECK(q.events.size() == 1);
    CHECK(q.pg.x.snap_open == 1);
}

TEST_CASE("jetsam reports: the app killed in band 0 while a snapshot is open is in it",
          "[memstat][ips]")
{
    // Band 10 (60 MiB, pid 2000).  The app at 3400 MiB: free 3584 - 60 -
    // 3400 = 124 < 204.8: band 10 goes (free 184, still under critical),
    // then the app in front would be next; at 3350 instead: free 174, band
    // 10 goes, free 234: the snapshot made (free 174), not posted.  Then
    // the app is in the idle band: 234 < 409.6, healthy: its idle-exit.
    // No snapshot is made for band 0, but one is open: the kill goes into
    // it, and the next pass that posts sends it: the record is a JetsamEvent.
    Phone p(iphone("[{band: 10, count: 1, size: 60MiB}]"));
    settle(p);
    CHECK_FALSE(p.alloc(3350 * MiB).gone);
    CHECK(p.pg.x.snap_open == 1);
    p.app_figures.fg = 0;
    p.app_figures.aged = 1;
    CHECK(pg_check(&p.pg, &p.a, 0, 1).gone);
    REQUIRE(p.kills.size() == 1);
    CHECK(p.kills[0].cause == MDL_JETSAM_IDLE_EXIT);
    CHECK(p.kills[0].report == 1);
    CHECK(p.events.empty()); // an idle-band kill posts nothing itself
    const mdl_jetsam_proc *app = entry(p.pg.x.snap, 1000);
    REQUIRE(app != nullptr);
    CHECK(app->killed == MDL_JETSAM_IDLE_EXIT);
    CHECK(app->band == 0);
}
