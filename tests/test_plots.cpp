// The timeline collector behind the plots, the plots' SVG text, the peak
// CDF points and report.html.  Well-formedness of every SVG and the page in
// a browser: tests/report/check_report.py.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "results/results.h"
#include "scenarios/scenarios.h"
#include "shim/shim.hpp"
#include "shim/world.hpp"

using namespace shim;

namespace {

const int64_t MiB = 1 << 20;

// The characters of an SVG's text, PLplot's &#xNN; entities decoded.
std::string text_of(const std::string &svg)
{
    std::string out;
    for (size_t i = 0; i < svg.size(); i++) {
        if (svg.compare(i, 3, "&#x") == 0) {
            size_t end = svg.find(';', i);
            out += (char)std::strtol(svg.substr(i + 3, end - i - 3).c_str(), nullptr, 16);
            i = end;
        } else {
            out += svg[i];
        }
    }
    return out;
}

// A device that counts java, native and gpu, with a 1000 s horizon for the
// collector (one column per second).
mdl_device device()
{
    mdl_device d;
    std::memset(&d, 0, sizeof d);
    std::snprintf(d.name, sizeof d.name, "test-device");
    d.rule = MDL_KILL_JETSAM;
    d.os = MDL_OS_IOS;
    d.jetsam_limit = 500 * MiB;
    d.jetsam_background_limit = 200 * MiB;
    d.counts_mask = MDL_COUNTS_DEFAULT;
    return d;
}

const sim_time SECOND = 1000000;

struct Feed {
    res_timeline *t;
    explicit Feed(const mdl_device &d) : t(res_timeline_create(&d, 1000 * SECOND)) { REQUIRE(t); }
    ~Feed() { res_timeline_free(t); }
    trc_event ev(double s, trc_kind kind, trc_stage stage, int64_t native_mib)
    {
        trc_event e;
        trc_event_clear(&e);
        e.time_us = (sim_time)(s * SECOND);
        e.kind = kind;
        e.stage = stage;
        e.has = TRC_F_KIND | TRC_F_MEM | TRC_F_PART;
        std::snprintf(e.part, sizeof e.part, "model");
        e.mem_has = 0xf;
        e.mem[TRC_MEM_NATIVE] = native_mib * MiB;
        return e;
    }
    void add(const trc_event &e)
    {
        sim_error err;
        sim_error_clear(&err);
        REQUIRE(res_timeline_add(t, &e, &err) == SIM_OK);
    }
    void begin(double s, trc_stage stage, int64_t native_mib, int64_t alloc_mib)
    {
        trc_event e = ev(s, TRC_BEGIN, stage, native_mib);
        e.has |= TRC_F_ALLOC;
        e.alloc_has = 0xf;
        e.alloc[TRC_MEM_NATIVE] = alloc_mib * MiB;
        add(e);
    }
    void note(double s, const char *what, int64_t native_mib)
    {
        trc_event e = ev(s, TRC_SAMPLE, TRC_LOAD, native_mib);
        e.has |= TRC_F_ERROR;
        std::snprintf(e.error, sizeof e.error, "%s", what);
        add(e);
    }
    res_timeline_info info()
    {
        res_timeline_info i;
        res_timeline_info_get(t, &i);
        return i;
    }
};

} // namespace

TEST_CASE("timeline: an announced allocation is held until the next event", "[plots]")
{
    mdl_device d = device();
    Feed f(d);
    f.begin(10, TRC_LOAD, 0, 300);                // 300 MiB from 10 s
    f.add(f.ev(20, TRC_END, TRC_LOAD, 100));      // 200 of it was transient
    res_timeline_finish(f.t);
    res_timeline_info i = f.info();
    CHECK(i.peak_counted == 300 * MiB);
    CHECK(i.peak_time == 10 * SECOND);
    CHECK(i.peak_mem[TRC_MEM_NATIVE] == 300 * MiB);
    CHECK(i.bands == 1);
}

TEST_CASE("timeline: a death inside the allocation shows what the kill saw", "[plots]")
{
    mdl_device d = device();
    Feed f(d);
    // announced 300 MiB, but the process dies when 120 MiB are made
    f.begin(5, TRC_RUNTIME_PREPARE, 0, 300);
    f.add(f.ev(5, TRC_EXIT_EVENT, TRC_EXIT, 120));
    f.add(f.ev(5, TRC_SAMPLE, TRC_EXIT, 0));
    res_timeline_finish(f.t);
    res_timeline_info i = f.info();
    CHECK(i.peak_counted == 120 * MiB);
    CHECK(i.deaths == 1);
    CHECK(i.bands == 1); // the stage the death interrupted ends with it
}

TEST_CASE("timeline: a warning half-way through an allocation keeps the announced state",
          "[plots]")
{
    mdl_device d = device();
    Feed f(d);
    f.begin(1, TRC_LOAD, 50, 200);              // 250 MiB once made
    f.note(1, "memory_warning", 120);           // raised with 70 of the 200 made
    f.note(1, "cached_app_killed", 150);
    f.add(f.ev(30, TRC_SAMPLE, TRC_LOAD, 250));
    res_timeline_finish(f.t);
    res_timeline_info i = f.info();
    CHECK(i.peak_counted == 250 * MiB);
    CHECK(i.peak_time == 1 * SECOND);
    CHECK(i.warnings == 1);
    CHECK(i.cached_kills == 1);
}

TEST_CASE("timeline: bands and marks beyond the bound are counted, not drawn", "[plots]")
{
    mdl_device d = device();
    Feed f(d);
    for (int k = 0; k < RES_TIMELINE_BANDS + 5; k++) {
        f.begin(k * 0.5, TRC_LOAD, 0, 1);
        f.add(f.ev(k * 0.5 + 0.25, TRC_END, TRC_LOAD, 0));
    }
    for (int k = 0; k < RES_TIMELINE_MARKS + 3; k++)
        f.note(600 + k * 0.1, "memory_warning", 0);
    res_timeline_finish(f.t);
    res_timeline_info i = f.info();
    CHECK(i.bands == RES_TIMELINE_BANDS);
    CHECK(i.bands_dropped == 5);
    CHECK(i.marks_dropped == 3);
    CHECK(i.warnings == RES_TIMELINE_MARKS + 3);
    size_t len = 0;
    char *svg = res_plot_timeline(f.t, "bounded", &len);
    REQUIRE(svg != nullptr);
    std::string s(svg, len);
    std::free(svg);
    // the plot says what it left out (PLplot writes text as character references)
    CHECK(s.find("&#x6e;&#x6f;&#x74;&#x20;&#x64;&#x72;&#x61;&#x77;&#x6e;") != std::string::npos);
}

TEST_CASE("timeline: the collector sees what the replication measured", "[plots]")
{
    // every teaching scenario, every cell: the peak, the deaths, the
    // warnings and the cached-app kills of the timeline match mdl_rep
    for (const Entry &e : yaml_files("scenarios/catalog/teach")) {
        scn_scenario s;
        sim_error err;
        sim_error_clear(&err);
        REQUIRE(scn_scenario_load(e.path.c_str(), &s, &err) == SIM_OK);
        for (unsigned c = 0; c < s.ncells; c++) {
            INFO(e.stem << " cell " << c);
            res_timeline *t = nullptr;
            mdl_rep r;
            REQUIRE(res_timeline_run(&s.cells[c], 0, &t, &r, nullptr, &err) == SIM_OK);
            res_timeline_info i;
            res_timeline_info_get(t, &i);
            CHECK(i.peak_counted == r.peak);
            CHECK(i.deaths == r.deaths_total);
            CHECK(i.warnings == r.warnings);
            CHECK(i.cached_kills == r.cached_kills);
            size_t len = 0;
            char *svg = res_plot_timeline(t, e.stem.c_str(), &len);
            REQUIRE(svg != nullptr);
            std::string text(svg, len);
            std::free(svg);
            CHECK(text.rfind("<?xml", 0) == 0);
            CHECK(text.find("</svg>") != std::string::npos);
            res_timeline_free(t);
        }
        scn_scenario_release(&s);
    }
}

TEST_CASE("plots: the peak CDF points are the cell's quantiles", "[plots]")
{
    scn_scenario s;
    sim_error err;
    sim_error_clear(&err);
    REQUIRE(scn_scenario_load_catalog("scenarios/split-vs-preload.yaml", &s, &err) == SIM_OK);
    std::vector<const char *> pj;
    res_plan plan = plan_of(s, 40, pj);
    res_result r;
    REQUIRE(res_run(&plan, 2, nullptr, nullptr, &r, &err) == SIM_OK);
    for (unsigned i = 0; i < r.ncells; i++) {
        const res_cell &c = r.cells[i];
        CHECK(c.peak_cdf[0] <= c.peak.p50);
        CHECK(c.peak_cdf[50] == Approx(c.peak.p50));
        CHECK(c.peak_cdf[95] == Approx(c.peak.p95));
        CHECK(c.peak_cdf[99] == Approx(c.peak.p99));
        CHECK(c.peak_cdf[RES_CDF_POINTS - 1] == c.peak.max);
        for (int k = 1; k < RES_CDF_POINTS; k++)
            CHECK(c.peak_cdf[k] >= c.peak_cdf[k - 1]);
    }
    char label[256];
    res_cell_label(&plan, 1, label, sizeof label);
    CHECK(std::string(label) == "android-go-2g / residency=on_demand_overlap");

    size_t len = 0;
    char *cmp = res_plot_comparison(&plan, &r, &len);
    REQUIRE(cmp != nullptr);
    std::string svg(cmp, len);
    std::free(cmp);
    CHECK(svg.find("</svg>") != std::string::npos);
    char *cdf = res_plot_peak_cdf(&plan, &r, 0, r.ncells, &len);
    REQUIRE(cdf != nullptr);
    std::string cdf_text = text_of(std::string(cdf, len));
    std::free(cdf);
    // lines drawn over one another say so in the legend: lru:1 is
    // on_demand_overlap by construction, and a sibling on another device
    // names that device
    CHECK(cdf_text.find("android-go-2g / residency=lru:1 (= residency=on_demand_overlap)") !=
          std::string::npos);
    CHECK(cdf_text.find("android-go-2g / residency=preload (=") == std::string::npos);

    // the report: self-contained, escaped, every figure inline
    res_figure fig[1];
    std::memset(fig, 0, sizeof fig);
    std::snprintf(fig[0].name, sizeof fig[0].name, "comparison.svg");
    std::snprintf(fig[0].caption, sizeof fig[0].caption, "caption <&>");
    std::string copy = svg;
    fig[0].svg = &copy[0];
    fig[0].len = copy.size();
    plan.about = "a <b>planner's</b> & note\n\nsecond paragraph";
    char *html = res_report_html(&plan, &r, fig, 1);
    REQUIRE(html != nullptr);
    std::string page(html);
    std::free(html);
    CHECK(page.find("<p>a &lt;b&gt;planner's&lt;/b&gt; &amp; note</p>") != std::string::npos);
    CHECK(page.find("<p>second paragraph</p>") != std::string::npos);
    CHECK(page.find("caption &lt;&amp;&gt;") != std::string::npos);
    CHECK(page.find("<table id=\"cells-table\">") != std::string::npos);
    CHECK(page.find("<table id=\"comparison-table\">") != std::string::npos);
    CHECK(page.find("<figure id=\"comparison.svg\">\n<svg") != std::string::npos);
    CHECK(page.find("<?xml") == std::string::npos); // the prolog is not inlined
    for (const char *outside : {"<script", "<link", "src=", "href=", "@import", "url(http"})
        CHECK(page.find(outside) == std::string::npos);
    res_result_free(&r);
    scn_scenario_release(&s);
}

TEST_CASE("timeline: the Java heap limit is drawn over the java band only", "[plots]")
{
    TempDir dir;
    RunResult r = oomsim({"explain", "java-heap-copy", "-o", dir.file("java")});
    REQUIRE(r.status == 0);
    std::string svg = text_of(read_file(dir.file("java/timeline.svg")));
    CHECK(svg.find("Java heap limit, over the java band") != std::string::npos);
    // no Java memory, no Java limit drawn (an iPhone)
    RunResult i = oomsim({"explain", "prewarm-boot-loop", "-o", dir.file("ios")});
    REQUIRE(i.status == 0);
    CHECK(text_of(read_file(dir.file("ios/timeline.svg"))).find("Java heap limit") ==
          std::string::npos);
}
