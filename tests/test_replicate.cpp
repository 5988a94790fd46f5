// Replication tests: identical results for any thread count, deterministic
// errors, and per-replication arenas.
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <cstring>
#include <thread>
#include <string>
#include <vector>

#include "sim/sim.h"

namespace {

struct Out {
    sim_mm1_result mm1;
    uint64_t rep;
    uint64_t checksum;
    unsigned thread;
};

// One replication: a short M/M/1 run plus a burst of arena allocations that
// are never freed one by one (the arena frees them at once).
int rep_fn(void *ctx, const sim_rep_env *env, void *out, sim_error *err)
{
    const auto *fail = static_cast<const std::vector<uint64_t> *>(ctx);
    for (uint64_t f : *fail)
        if (f == env->replication)
            return sim_error_set(err, SIM_EINPUT, "planned failure");
    Out *o = static_cast<Out *>(out);
    std::memset(o, 0, sizeof *o);
    int rc = sim_mm1_run(env->alloc, 99, env->replication, 0.7, 1.0, 3000, &o->mm1, err);
    if (rc != SIM_OK)
        return rc;
    o->rep = env->replication;
    o->thread = env->thread;
    for (uint64_t i = 0; i < 500; i++) {
        auto *p = static_cast<uint64_t *>(sim_malloc(env->alloc, 64));
        if (p == nullptr)
            return sim_error_set(err, SIM_ENOMEM, "arena full");
        p[0] = i * env->replication;
        o->checksum += p[0];
    }
    return SIM_OK;
}

std::vector<Out> run_all(uint64_t count, unsigned threads)
{
    std::vector<uint64_t> none;
    std::vector<Out> outs(count);
    sim_error err;
    sim_error_clear(&err);
    int rc = sim_replicate(count, threads, rep_fn, &none, outs.data(), sizeof(Out), &err);
    INFO(err.msg);
    REQUIRE(rc == SIM_OK);
    return outs;
}

} // namespace

TEST_CASE("replicate: results are identical for 1, 2 and 4 threads", "[replicate]")
{
    const uint64_t r = 24;
    std::vector<Out> one = run_all(r, 1), two = run_all(r, 2), four = run_all(r, 4);
    for (auto *v : {&one, &two, &four})
        for (Out &o : *v)
            o.thread = 0; // which worker ran it is the schedule, not the result
    REQUIRE(std::memcmp(one.data(), two.data(), sizeof(Out) * r) == 0);
    REQUIRE(std::memcmp(one.data(), four.data(), sizeof(Out) * r) == 0);
    for (uint64_t k = 0; k < r; k++) {
        REQUIRE(one[k].rep == k);
        REQUIRE(one[k].mm1.customers == 3000);
    }
    // Replications differ from one another (their streams differ).
    REQUIRE(one[0].mm1.mean_wait_us != one[1].mm1.mean_wait_us);
}

// A replication that, on a worker other than 0, waits (up to 10 s) until
// worker 0 has run one: the test below then does not depend on whether
// the started threads could take every replication before the calling
// thread reached its loop (they could, on a loaded machine).
std::atomic<int> zero_ran{0};
int wait_for_zero(void *ctx, const sim_rep_env *env, void *out, sim_error *err)
{
    if (env->thread == 0)
        zero_ran.store(1);
    for (int i = 0; i < 10000 && env->thread != 0 && zero_ran.load() == 0; i++)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    return rep_fn(ctx, env, out, err);
}

TEST_CASE("replicate: each replication names its worker, below the thread count",
          "[replicate]")
{
    for (unsigned threads : {1u, 3u}) {
        std::vector<uint64_t> none;
        std::vector<Out> outs(30);
        sim_error err;
        sim_error_clear(&err);
        zero_ran.store(0);
        REQUIRE(sim_replicate(30, threads, wait_for_zero, &none, outs.data(), sizeof(Out),
                              &err) == SIM_OK);
        std::vector<unsigned> per(threads, 0);
        for (const Out &o : outs) {
            REQUIRE(o.thread < threads);
            per[o.thread]++;
        }
        CHECK(per[0] > 0); // the calling thread is worker 0 and takes work too
    }
}

TEST_CASE("replicate: the lowest failing replication is reported", "[replicate]")
{
    std::vector<uint64_t> fail{9, 5, 17};
    for (unsigned threads : {1u, 2u, 4u}) {
        std::vector<Out> outs(20);
        sim_error err;
        sim_error_clear(&err);
        int rc = sim_replicate(20, threads, rep_fn, &fail, outs.data(), sizeof(Out), &err);
        INFO("threads " << threads);
        REQUIRE(rc == SIM_EINPUT);
        REQUIRE(std::string(err.msg) == "replication 5: planned failure");
        for (uint64_t k = 0; k < 5; k++)
            REQUIRE(outs[k].rep == k); // everything below the failure ran
    }
}

TEST_CASE("replicate: argument checks and edge counts", "[replicate]")
{
    std::vector<uint64_t> none;
    sim_error err;
    REQUIRE(sim_replicate(0, 4, rep_fn, &none, nullptr, 0, &err) == SIM_OK);
    REQUIRE(sim_replicate(3, 1, nullptr, &none, nullptr, 0, &err) == SIM_EINVAL);
    std::vector<Out> outs(3);
    REQUIRE(sim_replicate(3, 64, rep_fn, &none, outs.data(), sizeof(Out), &err) == SIM_OK);
    REQUIRE(outs[2].rep == 2);
}

TEST_CASE("arena: accounting, realloc and wholesale release", "[arena]")
{
    sim_error err;
    sim_arena *a = sim_arena_create(&err);
    REQUIRE(a != nullptr);
    const sim_alloc *al = sim_arena_alloc(a);
    REQUIRE(sim_arena_bytes(a) == 0);
    std::vector<void *> blocks;
    for (size_t i = 1; i <= 100; i++) {
        void *p = sim_malloc(al, i * 16);
        REQUIRE(p != nullptr);
        std::memset(p, 0xab, i * 16);
        blocks.push_back(p);
    }
    REQUIRE(sim_arena_bytes(a) == 16 * 5050);
    void *q = sim_realloc(al, blocks[0], 16, 4096);
    REQUIRE(q != nullptr);
    REQUIRE(static_cast<unsigned char *>(q)[15] == 0xab);
    REQUIRE(sim_arena_bytes(a) == 16 * 5050 - 16 + 4096);
    sim_free(al, q, 4096);
    REQUIRE(sim_arena_bytes(a) == 16 * 5050 - 16);
    // The other 99 blocks are released by destroy; LeakSanitizer checks it
    // in the sanitizer build.
    sim_arena_destroy(a);
    std::string backend = sim_arena_backend();
    REQUIRE((backend == "jemalloc" || backend == "malloc"));
}

TEST_CASE("arena: many replications reuse arenas", "[arena]")
{
    // More replications than jemalloc could hold arenas at once (4096).
    std::vector<uint64_t> none;
    sim_error err;
    int rc = sim_replicate(
        6000, 2,
        [](void *, const sim_rep_env *env, void *out, sim_error *e) -> int {
            void *p = sim_malloc(env->alloc, 1024);
            if (p == nullptr)
                return sim_error_set(e, SIM_ENOMEM, "no memory");
            *static_cast<uint64_t *>(out) = env->replication;
            return SIM_OK;
        },
        &none, std::vector<uint64_t>(6000).data(), sizeof(uint64_t), &err);
    INFO(err.msg);
    REQUIRE(rc == SIM_OK);
}
