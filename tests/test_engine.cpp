// Engine tests: ordering against a sorted reference, FIFO ties, cancel,
// reschedule, horizon, stop, abort and allocation failures.
#include <catch2/catch.hpp>

#include <cstdint>
#include <random>
#include <set>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "sim/sim.h"

namespace {

void record(sim_engine *, void *ctx, uint64_t arg)
{
    static_cast<std::vector<uint64_t> *>(ctx)->push_back(arg);
}

struct Engine {
    sim_engine *e;
    explicit Engine(sim_pending_kind kind = SIM_PENDING_DEFAULT, unsigned k = 0,
                    const sim_alloc *a = nullptr, uint32_t maxp = 0)
    {
        sim_engine_config cfg{a, kind, k, maxp, nullptr, nullptr};
        sim_error err;
        e = sim_engine_create(&cfg, &err);
        REQUIRE(e != nullptr);
    }
    ~Engine() { sim_engine_destroy(e); }
};

void require_valid(const sim_engine *e)
{
    sim_error err;
    sim_error_clear(&err);
    int rc = sim_queue_validate(e, &err);
    INFO(err.msg);
    REQUIRE(rc == SIM_OK);
}

// Reference: a sorted set of (time, priority, sequence, id).
using Key = std::tuple<int64_t, int, uint64_t, uint64_t>;

// Drain: the rest must come out in reference order.
void drain_in_order(sim_engine *e, std::vector<uint64_t> &fired, const std::set<Key> &ref)
{
    fired.clear();
    REQUIRE(sim_run(e, SIM_TIME_MAX) == SIM_RUN_EMPTY);
    REQUIRE(fired.size() == ref.size());
    size_t i = 0;
    for (const Key &k : ref)
        REQUIRE(fired[i++] == std::get<3>(k));
    require_valid(e);
}

void random_ops_against_reference(sim_pending_kind kind, unsigned arity_log2, uint64_t seed,
                                  int ops, int64_t spread)
{
    Engine eng(kind, arity_log2);
    sim_engine *e = eng.e;
    std::mt19937_64 rng(seed);
    std::set<Key> ref;
    std::unordered_map<uint64_t, std::pair<Key, sim_handle>> live;
    std::vector<uint64_t> live_ids, fired;
    std::vector<sim_handle> dead;
    uint64_t next_id = 1, seq = 0;

    auto remove_live = [&](size_t pos) {
        live_ids[pos] = live_ids.back();
        live_ids.pop_back();
    };
    for (int op = 0; op < ops; op++) {
        unsigned dice = static_cast<unsigned>(rng() % 100);
        if (dice < 45 || live_ids.empty()) {
            int64_t t = sim_now(e) + static_cast<int64_t>(rng() % static_cast<uint64_t>(spread));
            int prio = static_cast<int>(rng() % 3) - 1;
            uint64_t id = next_id++;
            sim_handle h = 0;
            REQUIRE(sim_schedule(e, t, prio, record, &fired, id, &h) == SIM_OK);
            REQUIRE(h != 0);
            Key k{t, prio, seq++, id};
            ref.insert(k);
            live[id] = {k, h};
            live_ids.push_back(id);
        } else if (dice < 60) {
            size_t pos = rng() % live_ids.size();
            uint64_t id = live_ids[pos];
            REQUIRE(sim_cancel(e, live[id].second) == SIM_OK);
            dead.push_back(live[id].second);
            ref.erase(live[id].first);
            live.erase(id);
            remove_live(pos);
        } else if (dice < 70) {
            size_t pos = rng() % live_ids.size();
            uint64_t id = live_ids[pos];
            int64_t t = sim_now(e) + static_cast<int64_t>(rng() % static_cast<uint64_t>(spread));
            REQUIRE(sim_reschedule(e, live[id].second, t) == SIM_OK);
            Key old = live[id].first;
            Key k{t, std::get<1>(old), seq++, id};
            ref.erase(old);
            ref.insert(k);
            live[id].first = k;
        } else if (dice < 72 && !dead.empty()) {
            sim_handle h = dead[rng() % dead.size()];
            REQUIRE(sim_cancel(e, h) == SIM_ENOTFOUND);
            REQUIRE(sim_reschedule(e, h, sim_now(e)) == SIM_ENOTFOUND);
        } else {
            fired.clear();
            REQUIRE(sim_step(e) == 1);
            REQUIRE(fired.size() == 1);
            Key top = *ref.begin();
            REQUIRE(fired[0] == std::get<3>(top));
            REQUIRE(sim_now(e) == std::get<0>(top));
            dead.push_back(live[fired[0]].second);
            ref.erase(ref.begin());
            live.erase(fired[0]);
            for (size_t i = 0; i < live_ids.size(); i++)
                if (live_ids[i] == fired[0]) {
                    remove_live(i);
                    break;
                }
        }
        REQUIRE(sim_pending(e) == ref.size());
        if (op % 997 == 0)
            require_valid(e);
    }
    require_valid(e);
    drain_in_order(e, fired, ref);
}

} // namespace

TEST_CASE("engine: 100k random schedule/cancel/reschedule match a sorted reference",
          "[engine]")
{
    // Kind 1 is the radix heap; kind 2 the d-ary heap with arity 2^k.
    auto kind = static_cast<sim_pending_kind>(GENERATE(1, 2));
    unsigned k = kind == SIM_PENDING_HEAP ? GENERATE(1u, 2u, 3u) : 0u;
    // Narrow spreads make many ties; wide ones spread over many buckets.
    int64_t spread = GENERATE(int64_t{50}, int64_t{1} << 40);
    INFO("kind " << kind << " arity 2^" << k << " spread " << spread);
    random_ops_against_reference(kind, k, 20261202u + k, 100000, spread);
}

TEST_CASE("engine: equal time and priority fire in insertion order", "[engine]")
{
    Engine eng(static_cast<sim_pending_kind>(GENERATE(1, 2)));
    std::vector<uint64_t> fired;
    for (uint64_t i = 0; i < 1000; i++)
        REQUIRE(sim_schedule(eng.e, 5, 0, record, &fired, i, nullptr) == SIM_OK);
    REQUIRE(sim_run(eng.e, SIM_TIME_MAX) == SIM_RUN_EMPTY);
    REQUIRE(fired.size() == 1000);
    for (uint64_t i = 0; i < 1000; i++)
        REQUIRE(fired[i] == i);
}

TEST_CASE("engine: time first, then priority, then sequence", "[engine]")
{
    Engine eng(static_cast<sim_pending_kind>(GENERATE(1, 2)));
    std::vector<uint64_t> fired;
    sim_engine *e = eng.e;
    REQUIRE(sim_schedule(e, 10, 5, record, &fired, 1, nullptr) == SIM_OK);
    REQUIRE(sim_schedule(e, 10, -3, record, &fired, 2, nullptr) == SIM_OK);
    REQUIRE(sim_schedule(e, 9, 100, record, &fired, 3, nullptr) == SIM_OK);
    REQUIRE(sim_schedule(e, 10, 5, record, &fired, 4, nullptr) == SIM_OK);
    REQUIRE(sim_schedule(e, 10, SIM_PRIO_MIN, record, &fired, 5, nullptr) == SIM_OK);
    REQUIRE(sim_schedule(e, 10, SIM_PRIO_MAX, record, &fired, 6, nullptr) == SIM_OK);
    REQUIRE(sim_run(e, SIM_TIME_MAX) == SIM_RUN_EMPTY);
    REQUIRE(fired == std::vector<uint64_t>{3, 5, 2, 1, 4, 6});
    REQUIRE(sim_schedule(e, 10, SIM_PRIO_MAX + 1, record, &fired, 7, nullptr) == SIM_EINVAL);
    REQUIRE(sim_schedule(e, 10, SIM_PRIO_MIN - 1, record, &fired, 7, nullptr) == SIM_EINVAL);
}

TEST_CASE("engine: rescheduling takes a new sequence", "[engine]")
{
    Engine eng;
    std::vector<uint64_t> fired;
    sim_handle h1 = 0;
    REQUIRE(sim_schedule(eng.e, 20, 0, record, &fired, 1, &h1) == SIM_OK);
    REQUIRE(sim_schedule(eng.e, 10, 0, record, &fired, 2, nullptr) == SIM_OK);
    REQUIRE(sim_reschedule(eng.e, h1, 10) == SIM_OK);
    sim_time t = 0;
    REQUIRE(sim_is_pending(eng.e, h1, &t));
    REQUIRE(t == 10);
    REQUIRE(sim_run(eng.e, SIM_TIME_MAX) == SIM_RUN_EMPTY);
    REQUIRE(fired == std::vector<uint64_t>{2, 1});
    REQUIRE_FALSE(sim_is_pending(eng.e, h1, nullptr));
}

TEST_CASE("engine: handles go stale and are never confused with later events", "[engine]")
{
    Engine eng;
    std::vector<uint64_t> fired;
    sim_handle h1 = 0, h2 = 0;
    REQUIRE(sim_schedule(eng.e, 1, 0, record, &fired, 1, &h1) == SIM_OK);
    REQUIRE(sim_cancel(eng.e, h1) == SIM_OK);
    REQUIRE(sim_cancel(eng.e, h1) == SIM_ENOTFOUND);
    // The freed slot is reused with a new generation.
    REQUIRE(sim_schedule(eng.e, 1, 0, record, &fired, 2, &h2) == SIM_OK);
    REQUIRE(h2 != h1);
    REQUIRE(sim_cancel(eng.e, h1) == SIM_ENOTFOUND);
    REQUIRE(sim_is_pending(eng.e, h2, nullptr));
    REQUIRE(sim_cancel(eng.e, 0) == SIM_ENOTFOUND);
    REQUIRE(sim_cancel(eng.e, (uint64_t{7} << 32) | 100000u) == SIM_ENOTFOUND);
    REQUIRE(sim_run(eng.e, SIM_TIME_MAX) == SIM_RUN_EMPTY);
    REQUIRE(fired == std::vector<uint64_t>{2});
    REQUIRE(sim_cancel(eng.e, h2) == SIM_ENOTFOUND);
}

TEST_CASE("engine: horizon, empty and the clock", "[engine]")
{
    Engine eng(static_cast<sim_pending_kind>(GENERATE(1, 2)));
    std::vector<uint64_t> fired;
    sim_engine *e = eng.e;
    for (uint64_t t : {10, 20, 30})
        REQUIRE(sim_schedule(e, static_cast<sim_time>(t), 0, record, &fired, t, nullptr) ==
                SIM_OK);
    REQUIRE(sim_run(e, 5) == SIM_RUN_HORIZON);
    REQUIRE(sim_now(e) == 5);
    REQUIRE(sim_run(e, 20) == SIM_RUN_HORIZON);
    REQUIRE(fired == std::vector<uint64_t>{10, 20});
    REQUIRE(sim_now(e) == 20);
    REQUIRE(sim_run(e, 25) == SIM_RUN_HORIZON);
    REQUIRE(sim_now(e) == 25);
    REQUIRE(sim_schedule(e, 24, 0, record, &fired, 99, nullptr) == SIM_EINVAL);
    REQUIRE(sim_schedule_in(e, -1, 0, record, &fired, 99, nullptr) == SIM_EINVAL);
    REQUIRE(sim_schedule(e, 25, 0, nullptr, &fired, 99, nullptr) == SIM_EINVAL);
    // Between the clock and the next pending event: must still come first
    // (the radix heap must not have moved its base past the clock).
    REQUIRE(sim_schedule(e, 27, 0, record, &fired, 27, nullptr) == SIM_OK);
    require_valid(e);
    REQUIRE(sim_run(e, SIM_TIME_MAX) == SIM_RUN_EMPTY);
    REQUIRE(fired == std::vector<uint64_t>{10, 20, 27, 30});
    REQUIRE(sim_now(e) == 30);
    REQUIRE(sim_events_fired(e) == 4);
    REQUIRE(sim_step(e) == 0);
}

namespace {
struct StopCtx {
    std::vector<uint64_t> fired;
    uint64_t stop_at;
    int abort_code;
};
void stopper(sim_engine *e, void *ctx, uint64_t arg)
{
    auto *c = static_cast<StopCtx *>(ctx);
    c->fired.push_back(arg);
    if (arg == c->stop_at) {
        if (c->abort_code != 0)
            sim_abort(e, c->abort_code);
        else
            sim_stop(e);
    }
}
} // namespace

TEST_CASE("engine: stop and abort from a handler", "[engine]")
{
    Engine eng;
    StopCtx c{{}, 3, 0};
    for (uint64_t i = 1; i <= 5; i++)
        REQUIRE(sim_schedule(eng.e, static_cast<sim_time>(i), 0, stopper, &c, i, nullptr) ==
                SIM_OK);
    REQUIRE(sim_run(eng.e, SIM_TIME_MAX) == SIM_RUN_STOPPED);
    REQUIRE(c.fired == std::vector<uint64_t>{1, 2, 3});
    REQUIRE(sim_pending(eng.e) == 2);
    c.stop_at = 4;
    c.abort_code = SIM_ENOMEM;
    REQUIRE(sim_run(eng.e, SIM_TIME_MAX) == SIM_ENOMEM);
    REQUIRE(sim_run(eng.e, SIM_TIME_MAX) == SIM_RUN_EMPTY);
    REQUIRE(c.fired == std::vector<uint64_t>{1, 2, 3, 4, 5});
}

TEST_CASE("engine: max_pending is a hard limit", "[engine]")
{
    Engine eng(SIM_PENDING_DEFAULT, 0, nullptr, 100);
    std::vector<uint64_t> fired;
    for (uint64_t i = 0; i < 100; i++)
        REQUIRE(sim_schedule(eng.e, 1, 0, record, &fired, i, nullptr) == SIM_OK);
    REQUIRE(sim_schedule(eng.e, 1, 0, record, &fired, 100, nullptr) == SIM_ELIMIT);
    require_valid(eng.e);
    REQUIRE(sim_run(eng.e, SIM_TIME_MAX) == SIM_RUN_EMPTY);
    REQUIRE(fired.size() == 100);
}

TEST_CASE("engine: every allocation failure leaves the engine whole", "[engine][alloc]")
{
    auto kind = static_cast<sim_pending_kind>(GENERATE(1, 2));
    for (uint64_t n = 1;; n++) {
        sim_failalloc fa;
        sim_failalloc_init(&fa, nullptr, n);
        sim_engine_config cfg{&fa.alloc, kind, 0, 0, nullptr, nullptr};
        sim_error err;
        sim_engine *e = sim_engine_create(&cfg, &err);
        if (e == nullptr) {
            REQUIRE(err.code == SIM_ENOMEM);
            REQUIRE(fa.live_blocks == 0);
            continue;
        }
        std::vector<uint64_t> fired;
        bool failed = false;
        uint64_t scheduled = 0;
        for (uint64_t i = 0; i < 1000; i++) {
            int rc = sim_schedule(e, static_cast<sim_time>(1000 - i), 0, record, &fired, i,
                                  nullptr);
            if (rc == SIM_ENOMEM) {
                failed = true;
                continue;
            }
            REQUIRE(rc == SIM_OK);
            scheduled++;
        }
        require_valid(e);
        REQUIRE(sim_pending(e) == scheduled);
        REQUIRE(sim_run(e, SIM_TIME_MAX) == SIM_RUN_EMPTY);
        REQUIRE(fired.size() == scheduled);
        sim_engine_destroy(e);
        REQUIRE(fa.live_blocks == 0);
        REQUIRE(fa.live_bytes == 0);
        if (!failed && fa.calls < n)
            break; // the Nth allocation was never reached: all paths covered
    }
}
