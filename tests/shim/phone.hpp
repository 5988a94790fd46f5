// A page model alone (models/pages.h) with no world: an engine only for the
// clock, a device from YAML, a ledger holding the app's memory, the other
// apps' state, and a host that records what the model hands the world (the
// verdicts on the app's processes, its notes, the looks it asks for, the
// JetsamEvents it posts) and, for a death, does what the world does: the
// app's memory goes and its process is gone.
#ifndef OOMSIM_TESTS_SHIM_PHONE_HPP
#define OOMSIM_TESTS_SHIM_PHONE_HPP

#include <catch2/catch.hpp>

#include <cstring>
#include <string>
#include <vector>

#include <gsl/gsl_rng.h>

#include "models/pages.h"
#include "scenarios/scenarios.h"

namespace shim {

const int64_t MiB = 1024 * 1024;
const sim_time MS = 1000;

struct Note {
    std::string what, why;
    int adj;
    int64_t refault;
    sim_time took;
};

struct Look {
    sim_time t;
    int what;
};

// The app's figures where the model reads them (the world's, in a run).
struct App {
    uint32_t epoch = 0;
    int alive = 1, fg = 1, aged = 0, bg = 0, svc = 0, main_alive = 0, ending = 0;
    int64_t hot = 0;
};

inline void nothing(sim_engine *, void *, uint64_t) {}

// The model, the app it sees, the clock and the world it talks to.
struct Phone {
    mdl_device dev;
    sim_engine *clock = nullptr;
    App app_figures;
    mdl_ledger *led = nullptr;
    mdl_owner app = 0;
    w_devstate ds{};
    mdl_rep out{};
    w_pages pg{};
    pg_app a{};
    pg_host host{};
    std::vector<pg_kill> kills;
    std::vector<mdl_jetsam_event> events;
    std::vector<Note> notes;
    std::vector<Look> looks;

    explicit Phone(const std::string &yaml, int64_t cached = 0)
    {
        std::memset(&dev, 0, sizeof dev);
        sim_error err;
        sim_error_clear(&err);
        REQUIRE(scn_device_parse(yaml.data(), yaml.size(), "phone.yaml", &dev, &err) == SIM_OK);
        led = mdl_ledger_create(nullptr, dev.counts_mask, &err);
        REQUIRE(led != nullptr);
        REQUIRE(mdl_ledger_owner(led, MDL_OWNER_APP, 0, &app) == SIM_OK);
        ds.cached = cached;
        out.min_margin = INT64_MAX;
        clock = sim_engine_create(nullptr, &err);
        REQUIRE(clock != nullptr);
        App &f = app_figures;
        a = {clock, &f.epoch, &f.alive, &f.fg, &f.aged, &f.bg, &f.svc, &f.main_alive, &f.ending,
             &f.hot};
        // the app's adj: 0 in front, 700 (the previous app) behind
        host.adj = [](void *ctx, int) { return static_cast<Phone *>(ctx)->app_figures.fg ? 0 : 700; };
        host.main_anon = [](void *) -> int64_t { return 0; };
        host.kill = [](void *ctx, const pg_kill *k) {
            auto *p = static_cast<Phone *>(ctx);
            p->kills.push_back(*k);
            mdl_ledger_clear(p->led); // the world: the process's memory goes with it,
            pg_app_gone(&p->pg);      // and the model forgets its pages (process.c)
            p->app_figures.alive = 0;
            p->app_figures.epoch++;
        };
        host.note = [](void *ctx, const char *what, const char *why, int64_t, int64_t refault,
                       int adj, sim_time took) {
            static_cast<Phone *>(ctx)->notes.push_back({what, why ? why : "", adj, refault, took});
        };
        host.at = [](void *ctx, sim_time t, int what) {
            static_cast<Phone *>(ctx)->looks.push_back({t, what});
            return 1;
        };
        host.report = [](void *ctx, const mdl_jetsam_event *ev) {
            static_cast<Phone *>(ctx)->events.push_back(*ev);
        };
        pg.dev = &dev;
        pg.led = led;
        pg.ds = &ds;
        pg.out = &out;
        pg.host = &host;
        pg.ctx = this;
    }
    ~Phone()
    {
        sim_engine_destroy(clock);
        mdl_ledger_destroy(led);
        scn_device_release(&dev);
    }
    void setup(gsl_rng *r = nullptr) { pg_setup(&pg, &a, r); }
    // The clock moves on to t (an event of nothing there).
    void at(sim_time t)
    {
        REQUIRE(sim_schedule(clock, t, 0, nothing, nullptr, 0, nullptr) == SIM_OK);
        REQUIRE(sim_run(clock, t) >= 0);
        REQUIRE(sim_now(clock) == t);
    }
    // The app allocates `bytes` of native memory, then the model checks.
    pg_result alloc(int64_t bytes)
    {
        REQUIRE(mdl_ledger_alloc(led, app, MDL_CAT_NATIVE, bytes, MDL_STAGE_LOAD,
                                 sim_now(clock), nullptr) == SIM_OK);
        return pg_check(&pg, &a, 0, 1);
    }
};

} // namespace shim

#endif
