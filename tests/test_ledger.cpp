// Memory ledger: balances, counted totals, peaks and the stage at the
// peak, refused operations that leave everything unchanged, leaks, and a
// random sequence checked against a plain reference.
#include <catch2/catch.hpp>

#include <cstring>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "models/models.h"

namespace {
constexpr int64_t MiB = int64_t{1} << 20;

struct Ledger {
    mdl_ledger *l;
    explicit Ledger(unsigned mask = MDL_COUNTS_DEFAULT, const sim_alloc *a = nullptr)
    {
        sim_error err;
        l = mdl_ledger_create(a, mask, &err);
        REQUIRE(l != nullptr);
    }
    ~Ledger() { mdl_ledger_destroy(l); }
    mdl_owner owner(mdl_owner_kind k, uint32_t id)
    {
        mdl_owner o;
        REQUIRE(mdl_ledger_owner(l, k, id, &o) == SIM_OK);
        return o;
    }
    void alloc(mdl_owner o, mdl_category c, int64_t b, mdl_stage s, sim_time t)
    {
        sim_error err;
        REQUIRE(mdl_ledger_alloc(l, o, c, b, s, t, &err) == SIM_OK);
    }
    void release(mdl_owner o, mdl_category c, int64_t b)
    {
        sim_error err;
        REQUIRE(mdl_ledger_free(l, o, c, b, &err) == SIM_OK);
    }
    mdl_ledger_stats stats() const
    {
        mdl_ledger_stats st;
        mdl_ledger_stats_get(l, &st);
        return st;
    }
    void valid() const
    {
        sim_error err;
        sim_error_clear(&err);
        int rc = mdl_ledger_validate(l, &err);
        INFO(err.msg);
        REQUIRE(rc == SIM_OK);
    }
};

// Field by field: the struct has padding, which memcmp would read.
bool same_stats(const mdl_ledger_stats &a, const mdl_ledger_stats &b)
{
    for (int c = 0; c < MDL_CAT_COUNT; c++)
        if (a.total[c] != b.total[c] || a.category_peak[c] != b.category_peak[c])
            return false;
    for (int s = 0; s < MDL_STAGE_COUNT; s++)
        if (a.stage_peak[s] != b.stage_peak[s])
            return false;
    return a.counted == b.counted && a.peak == b.peak && a.peak_time == b.peak_time &&
           a.peak_stage == b.peak_stage && a.allocs == b.allocs && a.frees == b.frees &&
           a.owners == b.owners && a.counts_mask == b.counts_mask;
}
} // namespace

TEST_CASE("ledger: only the device's counted categories make the counted total", "[ledger]")
{
    // A 48 MiB mmapped file (file pages) plus 20 MiB native: with the default
    // counts (java, native, gpu) only the 20 MiB count; counting file too, 68.
    for (unsigned mask : {unsigned{MDL_COUNTS_DEFAULT}, MDL_COUNTS_DEFAULT | MDL_CAT_BIT(MDL_CAT_FILE)}) {
        Ledger led(mask);
        mdl_owner part = led.owner(MDL_OWNER_PART, 0);
        led.alloc(part, MDL_CAT_FILE, 48 * MiB, MDL_STAGE_LOAD, 10);
        led.alloc(part, MDL_CAT_NATIVE, 20 * MiB, MDL_STAGE_RUNTIME_PREPARE, 20);
        int64_t expect = (mask & MDL_CAT_BIT(MDL_CAT_FILE)) ? 68 * MiB : 20 * MiB;
        REQUIRE(mdl_ledger_counted(led.l) == expect);
        REQUIRE(mdl_ledger_total(led.l, MDL_CAT_FILE) == 48 * MiB);
        REQUIRE(led.stats().peak == expect);
        led.valid();
    }
}

TEST_CASE("ledger: the peak, its time and stage, and per-stage peaks", "[ledger]")
{
    Ledger led;
    mdl_owner part = led.owner(MDL_OWNER_PART, 0);
    mdl_owner req = led.owner(MDL_OWNER_REQUEST, 7);
    // load: 100 native (transient) -> released; prepare: 60 -> counted 60;
    // inference: +40 -> 100, equal to the load peak, which keeps it (first
    // to reach); inference +1 more -> 101 at t=50, the new peak.
    led.alloc(part, MDL_CAT_NATIVE, 100, MDL_STAGE_LOAD, 10);
    led.release(part, MDL_CAT_NATIVE, 100);
    led.alloc(part, MDL_CAT_NATIVE, 60, MDL_STAGE_RUNTIME_PREPARE, 20);
    led.alloc(req, MDL_CAT_JAVA, 40, MDL_STAGE_INFERENCE, 30);
    mdl_ledger_stats st = led.stats();
    REQUIRE(st.peak == 100);
    REQUIRE(st.peak_stage == MDL_STAGE_LOAD);
    REQUIRE(st.peak_time == 10);
    led.alloc(req, MDL_CAT_GPU, 1, MDL_STAGE_INFERENCE, 50);
    st = led.stats();
    REQUIRE(st.peak == 101);
    REQUIRE(st.peak_stage == MDL_STAGE_INFERENCE);
    REQUIRE(st.peak_time == 50);
    REQUIRE(st.stage_peak[MDL_STAGE_LOAD] == 100);
    REQUIRE(st.stage_peak[MDL_STAGE_RUNTIME_PREPARE] == 60);
    REQUIRE(st.stage_peak[MDL_STAGE_INFERENCE] == 101);
    REQUIRE(st.stage_peak[MDL_STAGE_DELEGATE_PREPARE] == -1);
    REQUIRE(st.category_peak[MDL_CAT_NATIVE] == 100);
    REQUIRE(st.allocs == 4);
    REQUIRE(st.frees == 1);
    int64_t freed = 0;
    REQUIRE(mdl_ledger_free_owner(led.l, req, &freed) == SIM_OK);
    REQUIRE(freed == 41);
    REQUIRE(mdl_ledger_counted(led.l) == 60);
    REQUIRE(led.stats().peak == 101);
    led.valid();
}

TEST_CASE("ledger: refused operations change nothing", "[ledger]")
{
    Ledger led;
    mdl_owner part = led.owner(MDL_OWNER_PART, 3);
    led.alloc(part, MDL_CAT_GPU, 96, MDL_STAGE_DELEGATE_PREPARE, 5);
    mdl_ledger_stats before = led.stats();
    sim_error err;
    REQUIRE(mdl_ledger_free(led.l, part, MDL_CAT_GPU, 97, &err) == SIM_ESTATE);
    REQUIRE(std::string(err.msg) == "ledger: part 3 releases 97 bytes of gpu but holds 96");
    REQUIRE(mdl_ledger_free(led.l, part, MDL_CAT_NATIVE, 1, &err) == SIM_ESTATE);
    REQUIRE(mdl_ledger_alloc(led.l, part, MDL_CAT_GPU, -1, MDL_STAGE_LOAD, 6, &err) == SIM_EINVAL);
    REQUIRE(mdl_ledger_alloc(led.l, 99, MDL_CAT_GPU, 1, MDL_STAGE_LOAD, 6, &err) == SIM_EINVAL);
    REQUIRE(mdl_ledger_alloc(led.l, part, MDL_CAT_COUNT, 1, MDL_STAGE_LOAD, 6, &err) ==
            SIM_EINVAL);
    REQUIRE(mdl_ledger_alloc(led.l, part, MDL_CAT_GPU, INT64_MAX, MDL_STAGE_LOAD, 6, &err) ==
            SIM_ERANGE);
    REQUIRE(mdl_ledger_retire(led.l, part, &err) == SIM_ESTATE);
    REQUIRE(std::string(err.msg) == "ledger: part 3 retired while holding 96 bytes of gpu");
    REQUIRE(same_stats(before, led.stats()));
    led.valid();
}

TEST_CASE("ledger: owners are retired and reused, leaks are listed", "[ledger]")
{
    Ledger led;
    mdl_owner a = led.owner(MDL_OWNER_SESSION, 1);
    mdl_owner b = led.owner(MDL_OWNER_SESSION, 2);
    mdl_owner c = led.owner(MDL_OWNER_CACHE, 0);
    led.alloc(a, MDL_CAT_NATIVE, 8, MDL_STAGE_INFERENCE, 1);
    led.alloc(c, MDL_CAT_NATIVE, 30, MDL_STAGE_CACHE, 1);
    sim_error err;
    REQUIRE(mdl_ledger_retire(led.l, b, &err) == SIM_OK);
    REQUIRE(mdl_ledger_held(led.l, b, MDL_CAT_NATIVE) == 0);
    mdl_owner d = led.owner(MDL_OWNER_REQUEST, 9);
    REQUIRE(d == b); // the retired slot is reused
    struct Leak {
        mdl_owner_kind kind;
        uint32_t id;
        int64_t native;
    };
    std::vector<Leak> leaks;
    uint32_t n = mdl_ledger_leaks(
        led.l,
        [](void *ctx, mdl_owner_kind kind, uint32_t id, const int64_t held[MDL_CAT_COUNT]) {
            static_cast<std::vector<Leak> *>(ctx)->push_back({kind, id, held[MDL_CAT_NATIVE]});
        },
        &leaks);
    REQUIRE(n == 2);
    REQUIRE(leaks.size() == 2);
    REQUIRE(leaks[0].kind == MDL_OWNER_SESSION);
    REQUIRE(leaks[0].native == 8);
    REQUIRE(leaks[1].kind == MDL_OWNER_CACHE);
    REQUIRE(led.stats().owners == 3);
    // A death releases everything at once: no leak, peak kept.
    mdl_ledger_clear(led.l);
    REQUIRE(mdl_ledger_leaks(led.l, nullptr, nullptr) == 0);
    REQUIRE(mdl_ledger_counted(led.l) == 0);
    REQUIRE(led.stats().peak == 38);
    led.valid();
}

TEST_CASE("ledger: random operations agree with a plain reference", "[ledger]")
{
    Ledger led(MDL_CAT_BIT(MDL_CAT_NATIVE) | MDL_CAT_BIT(MDL_CAT_GPU));
    std::mt19937_64 rng(77);
    std::vector<mdl_owner> owners;
    std::map<std::pair<mdl_owner, int>, int64_t> held;
    int64_t counted = 0, peak = 0;
    for (int i = 0; i < 20; i++)
        owners.push_back(led.owner(MDL_OWNER_REQUEST, static_cast<uint32_t>(i)));
    for (int op = 0; op < 200000; op++) {
        mdl_owner o = owners[rng() % owners.size()];
        int c = static_cast<int>(rng() % MDL_CAT_COUNT);
        bool is_counted = c == MDL_CAT_NATIVE || c == MDL_CAT_GPU;
        int64_t &h = held[{o, c}];
        if (rng() % 2 == 0) {
            int64_t b = static_cast<int64_t>(rng() % 1000);
            led.alloc(o, static_cast<mdl_category>(c), b, MDL_STAGE_INFERENCE, op);
            h += b;
            if (is_counted)
                counted += b;
            peak = std::max(peak, counted);
        } else {
            int64_t b = static_cast<int64_t>(rng() % 1000);
            sim_error err;
            int rc = mdl_ledger_free(led.l, o, static_cast<mdl_category>(c), b, &err);
            if (b > h) {
                REQUIRE(rc == SIM_ESTATE);
            } else {
                REQUIRE(rc == SIM_OK);
                h -= b;
                if (is_counted)
                    counted -= b;
            }
        }
        REQUIRE(mdl_ledger_counted(led.l) == counted);
        if (op % 5000 == 0)
            led.valid();
    }
    REQUIRE(led.stats().peak == peak);
    for (const auto &kv : held)
        REQUIRE(mdl_ledger_held(led.l, kv.first.first, static_cast<mdl_category>(kv.first.second)) ==
                kv.second);
    led.valid();
}

TEST_CASE("ledger: a failed owner-table growth leaves the ledger whole", "[ledger][alloc]")
{
    for (uint64_t n = 1; n <= 4; n++) {
        sim_failalloc fa;
        sim_failalloc_init(&fa, nullptr, n);
        sim_error err;
        mdl_ledger *l = mdl_ledger_create(&fa.alloc, MDL_COUNTS_DEFAULT, &err);
        if (l == nullptr) {
            REQUIRE(err.code == SIM_ENOMEM);
            REQUIRE(fa.live_blocks == 0);
            continue;
        }
        int failures = 0;
        for (uint32_t i = 0; i < 100; i++) {
            mdl_owner o;
            int rc = mdl_ledger_owner(l, MDL_OWNER_SESSION, i, &o);
            if (rc == SIM_ENOMEM) {
                failures++;
                continue;
            }
            REQUIRE(rc == SIM_OK);
            REQUIRE(mdl_ledger_alloc(l, o, MDL_CAT_NATIVE, 1, MDL_STAGE_INFERENCE, 0, &err) ==
                    SIM_OK);
        }
        REQUIRE(mdl_ledger_validate(l, &err) == SIM_OK);
        REQUIRE(mdl_ledger_counted(l) == 100 - failures);
        mdl_ledger_destroy(l);
        REQUIRE(fa.live_blocks == 0);
    }
}

TEST_CASE("ledger: names parse back", "[ledger]")
{
    for (int c = 0; c < MDL_CAT_COUNT; c++) {
        const char *name = mdl_category_name(static_cast<mdl_category>(c));
        mdl_category out;
        REQUIRE(mdl_category_parse(name, std::strlen(name), &out) == SIM_OK);
        REQUIRE(out == c);
    }
    for (int s = 0; s < MDL_STAGE_COUNT; s++) {
        const char *name = mdl_stage_name(static_cast<mdl_stage>(s));
        mdl_stage out;
        REQUIRE(mdl_stage_parse(name, std::strlen(name), &out) == SIM_OK);
        REQUIRE(out == s);
    }
    mdl_stage out;
    REQUIRE(mdl_stage_parse("loa", 3, &out) == SIM_ENOTFOUND);
    REQUIRE(std::string(mdl_stage_name(MDL_STAGE_NONE)) == "?");
}
