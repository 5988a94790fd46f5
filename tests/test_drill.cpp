// explain --quiz and --drill: the evidence without the causes (the drill
// hides the reason codes, the importance and the class words too), the
// questions, answers checked for their form, the grading with why the
// right answer is right and why a chosen one is not, and --death.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cctype>
#include <regex>
#include <vector>
#include <string>

#include "shim/shim.hpp"

using namespace shim;

namespace {

RunResult drill(TempDir &dir, const std::string &scenario, const std::string &answers,
                const std::vector<std::string> &more = {})
{
    std::vector<std::string> a = {"explain", scenario, "--drill", "--answers",
                                  dir.write("a.txt", answers)};
    a.insert(a.end(), more.begin(), more.end());
    return oomsim(a);
}

bool has(const std::string &text, const std::string &what)
{
    return text.find(what) != std::string::npos;
}

// "reason=" or "importance=" followed by a digit.
bool shows_number(const std::string &text, const std::string &key)
{
    for (size_t at = 0; (at = text.find(key, at)) != std::string::npos; at++)
        if (at + key.size() < text.size() && std::isdigit((unsigned char)text[at + key.size()]))
            return true;
    return false;
}

} // namespace

TEST_CASE("drill: the evidence hides reason codes, importance and class words in every "
          "teaching scenario",
          "[quiz][drill]")
{
    TempDir dir;
    RunResult c = oomsim({"catalog"});
    REQUIRE(c.status == 0);
    size_t from = c.out.find("teaching scenarios (one failure mode each):\n");
    REQUIRE(from != std::string::npos);
    std::vector<std::string> names;
    for (size_t at = c.out.find('\n', from) + 1; at < c.out.size() && c.out[at] == ' ';
         at = c.out.find('\n', at) + 1) {
        size_t start = c.out.find_first_not_of(' ', at);
        names.push_back(c.out.substr(start, c.out.find(' ', start) - start));
    }
    REQUIRE(names.size() >= 16);
    // a class word, as a word of its own
    std::regex words("(^|[^A-Za-z_])(low_memory|system_reclaim|java_crash|native_crash|anr|"
                     "watchdog|kernel_oom|OutOfMemoryError|JetsamEvent|LOW_MEMORY|"
                     "CRASH_NATIVE|oom_score_adj|jetsam)([^A-Za-z_]|$)");
    int drilled = 0;
    for (const std::string &name : names) {
        INFO(name);
        RunResult r = drill(dir, name, "1\n1\n1\n1\n1\n1\n1\n1\n");
        REQUIRE(r.status == 0);
        size_t end = r.out.find("the drill: death 1 of ");
        if (end == std::string::npos) {
            CHECK(has(r.out, "no death in this replication"));
            // failed loads with the app alive, a plan whose first cell (the
            // cold-start path) passes, and a chat whose first session lives:
            // the three with no death in replication 0 of cell 0
            CHECK((name == "stale-cache-after-update" || name == "reenable-regression" ||
                   name == "llm-chat-grows"));
            continue;
        }
        std::string evidence = r.out.substr(0, end);
        CHECK_FALSE(shows_number(evidence, "reason="));
        CHECK_FALSE(shows_number(evidence, "importance="));
        std::smatch m;
        bool found = std::regex_search(evidence, m, words);
        INFO("found: " << (found ? m.str(0) : std::string()));
        CHECK_FALSE(found);
        CHECK_FALSE(has(evidence, name)); // the scenario's name tells the mode
        CHECK_FALSE(has(evidence, "supports"));
        CHECK_FALSE(has(evidence, "recovery ladder"));
        drilled++;
    }
    CHECK(drilled == (int)names.size() - 3); // every other one dies in its replication 0
}

namespace {

// The number question q shows for the choice whose text begins with what.
std::string shown_as(const std::string &out, int q, const std::string &what)
{
    size_t at = out.find("question " + std::to_string(q) + ":");
    REQUIRE(at != std::string::npos);
    size_t end = out.find("\n> ", at);
    for (int k = 1; k <= 9; k++) {
        size_t c = out.find("\n  " + std::to_string(k) + ") " + what, at);
        if (c != std::string::npos && c < end)
            return std::to_string(k);
    }
    FAIL("question " << q << " shows no choice \"" << what << "\"");
    return "";
}

// The drill answered right: names where a name is taken, the fix and the
// outcome found in the questions as shown.
RunResult drill_right(TempDir &dir, const std::string &scenario, const std::string &named,
                      const std::string &fix, const std::string &outcome,
                      const std::vector<std::string> &more = {})
{
    RunResult first = drill(dir, scenario, named + "1\n1\n", more);
    REQUIRE(first.status == 0);
    return drill(dir, scenario,
                 named + shown_as(first.out, 7, fix) + "\n" + shown_as(first.out, 8, outcome) +
                     "\n",
                 more);
}

} // namespace

TEST_CASE("drill: eight questions in on-call's order, graded right with the reasoning",
          "[quiz][drill]")
{
    TempDir dir;
    RunResult r = drill_right(dir, "prewarm-boot-loop",
                              "low_memory\nforeground\nmain\ndelegate_prepare\nsupported\n2\n",
                              "a death during start-up", "the same class");
    INFO(r.out << r.err);
    REQUIRE(r.status == 0);
    size_t q = r.out.find("the drill: death 1 of 46, at 3.000 s");
    REQUIRE(q != std::string::npos);
    // what the record says first, then the stage, the level, the step, the fix
    size_t at = q;
    for (const char *s : {"question 1: what ended the process?", "question 2: was the app in "
                          "front", "question 3: which process died?", "question 4: which stage",
                          "question 5: read alone", "question 6: which step",
                          "question 7: which fix", "question 8: what would the verdict become"
                          " for the same death after the user left the app"}) {
        INFO(s);
        size_t k = r.out.find(s, at);
        CHECK(k != std::string::npos);
        at = k == std::string::npos ? at : k;
    }
    CHECK(has(r.out, "1. low_memory (right)"));
    CHECK(has(r.out, "2. foreground (right)"));
    CHECK(has(r.out, "3. main (right)"));
    CHECK(has(r.out, "4. delegate_prepare (right)"));
    CHECK(has(r.out, "5. supported (right)"));
    CHECK(has(r.out, "6. 2, or 4 (the guidance allows the last known good for a start-up "
                     "death, only with a complete receipt) (right)"));
    CHECK(has(r.out, "7. a death during start-up, before any request: stop prewarm"));
    // an iPhone's per-process limit holds in front and behind alike: the class stays
    CHECK(has(r.out, "8. the same class: the change does not move the verdict's class (right)"));
    CHECK(has(r.out, "> 2. stop prewarm and extra sessions  <- this death's step"));
    CHECK(has(r.out, "score: 8 of 8"));
    // the guidance allows step 4 for a start-up death: also right
    RunResult four = drill_right(dir, "prewarm-boot-loop",
                                 "LOW_MEMORY\nforeground\nmain\ndelegate_prepare\n"
                                 "supported\n4\n",
                                 "a death during start-up", "the same class");
    CHECK(has(four.out, "score: 8 of 8"));
    // the scenario is told only after the answer
    CHECK(r.out.find("the scenario: The app prewarms") > r.out.find("score:"));
}

TEST_CASE("drill: the choices are shuffled by --seed, the same seed the same drill",
          "[quiz][drill]")
{
    TempDir dir;
    const std::string any = "1\n1\n1\n1\n1\n0\n1\n1\n";
    RunResult a = drill(dir, "image-queue", any, {"--seed", "1"});
    RunResult b = drill(dir, "image-queue", any, {"--seed", "1"});
    REQUIRE(a.status == 0);
    CHECK(a.out == b.out);
    // another seed moves the choices: over a few seeds the first shown class differs
    std::vector<std::string> firsts;
    for (const char *seed : {"1", "2", "3", "4", "5", "6"}) {
        RunResult r = drill(dir, "image-queue", any, {"--seed", seed});
        size_t c = r.out.find("question 1:");
        REQUIRE(c != std::string::npos);
        size_t line = r.out.find("\n  1) ", c);
        firsts.push_back(r.out.substr(line, r.out.find('\n', line + 1) - line));
    }
    std::sort(firsts.begin(), firsts.end());
    CHECK(std::unique(firsts.begin(), firsts.end()) - firsts.begin() >= 3);
    // the default is the scenario's seed (image-queue's is 15)
    CHECK(drill(dir, "image-queue", any).out == drill(dir, "image-queue", any,
                                                      {"--seed", "15"}).out);
    CHECK(oomsim({"explain", "image-queue", "--seed", "3"}).status == 2);
}

TEST_CASE("drill: a wrong answer says why the right one is right and the chosen one is not",
          "[quiz][drill]")
{
    TempDir dir;
    RunResult r = drill(dir, "image-queue", "anr\nbackground\nservice\nnone\nunconfirmed\n4\n"
                                            "1\n1\n",
                        {"--death", "2"});
    INFO(r.out << r.err);
    REQUIRE(r.status == 0);
    CHECK(has(r.out, "the drill: death 2 of 5, at 46.022 s"));
    CHECK(has(r.out, "1. low_memory (your answer was not it)"));
    CHECK(has(r.out, "yours, anr, needs an ANR record"));
    CHECK(has(r.out, "2. foreground (your answer was not it)"));
    CHECK(has(r.out, "3. main (your answer was not it)"));
    CHECK(has(r.out, "4. inference (your answer was not it)"));
    CHECK(has(r.out, "yours, none, is not it: inference had begun and not ended."));
    // lmkd's kill line shown beside the record: the two are one death, confirmed
    CHECK(has(r.out, "5. confirmed (your answer was not it)"));
    CHECK(has(r.out, "The kill line shown beside the record is the system's own account"));
    CHECK(has(r.out, "6. 1 (your answer was not it): the first step suffices: the memory was "
                     "the queue's payloads"));
    CHECK(has(r.out, "yours, step 4, is harder to undo, and step 1 already answers it."));
    CHECK(has(r.out, "8. a background memory death (system_reclaim)"));
    // an earlier step than the death's: it does not suffice
    RunResult early = drill(dir, "delegate-fallback-two-sets",
                            "low_memory\nforeground\nmain\n2\n2\n1\n1\n1\n");
    CHECK(has(early.out, "yours, step 1, does not suffice (see why step 2 above)."));
    // a death no record names: everything is missing, and the process is the timeline's
    RunResult none = drill(dir, "no-exit-record", "unknown\nforeground\nmain\nnone\n"
                                                  "unconfirmed\n1\n1\n1\n");
    CHECK(has(none.out, "Still missing with the timeline: everything: no record names a "
                        "reason."));
    CHECK(has(none.out, "3. main (right): the timeline's process; no record names one."));
    CHECK(has(early.out, "why step 2: rejecting new inference does not suffice: the failed "
                         "delegate's buffers are held"));
}

TEST_CASE("drill: answers of the wrong form are refused from a file, and --death is checked",
          "[quiz][drill]")
{
    TempDir dir;
    struct {
        const char *answers, *message;
    } bad[] = {
        {"somewhere\n", "answer 1 'somewhere' is not a class's name or the number of a choice, "
                        "1 to 9"},
        {"1\nsideways\n", "answer 2 'sideways' is not foreground, background, or the number of "
                          "a choice, 1 to 2"},
        {"1\n1\n5\n", "answer 3 '5' is not main, service, isolated, other, or the number of a "
                      "choice, 1 to 4"},
        {"1\n1\n1\nnowhere\n", "answer 4 'nowhere' is not a stage's name, none, or the number "
                               "of a choice, 1 to 8"},
        {"1\n1\n1\n1\nprobably\n", "answer 5 'probably' is not confirmed, supported, "
                                   "unconfirmed, or the number of a choice, 1 to 3"},
        {"1\n1\n1\n1\n1\n5\n", "answer 6 '5' is not a step, 0 to 4"},
        {"1\n1\n1\n1\n1\n2\n0\n", "answer 7 '0' is not the number of a choice, 1 to 4"},
        {"1\n1\n1\n1\n1\n2\n1\n", "--drill: the answers ended before answer 8 (the number of "
                                  "a choice, 1 to 4)"},
    };
    for (const auto &b : bad) {
        INFO(b.answers);
        RunResult r = drill(dir, "prewarm-boot-loop", b.answers);
        CHECK(r.status == 2);
        CHECK(has(r.err, b.message));
        CHECK_FALSE(has(r.out, "the answer:"));
    }
    const std::string any = "1\n1\n1\n1\n1\n0\n1\n1\n";
    RunResult past = drill(dir, "image-queue", any, {"--death", "9"});
    CHECK(past.status == 2);
    CHECK(has(past.err, "--death 9: this replication told 5 deaths"));
    CHECK(oomsim({"explain", "image-queue", "--death", "2"}).status == 2);
    CHECK(oomsim({"explain", "image-queue", "--quiz", "--death", "0"}).status == 2);
    // another replication's deaths
    RunResult rep = drill(dir, "image-queue", any, {"--replication", "3"});
    CHECK(rep.status == 0);
    CHECK(has(rep.out, "a scenario, replication 3: an Android phone, 2048 MiB of RAM"));
    CHECK(has(rep.out, "score: "));
}

TEST_CASE("quiz: a wrong class or recovery says what it would need", "[quiz]")
{
    TempDir dir;
    RunResult r = oomsim({"explain", "java-heap-copy", "--quiz", "--answers",
                          dir.write("w.txt", "low_memory\n2\n")});
    REQUIRE(r.status == 0);
    CHECK(has(r.out, "yours, low_memory, needs a memory kill of the app in front"));
    CHECK(has(r.out, "yours, 2), is the recovery for low_memory after the start: too much held "
                     "at once."));
    CHECK(has(r.out, "score: 0 of 2"));
}

TEST_CASE("drill: a phone without exit records still shows whose kill lmkd logged",
          "[quiz][drill]")
{
    // thrashing-kill on the same phone as Android 10 (no ApplicationExitInfo):
    // lmkd's line is the only record; the drill names its process and hides
    // its adj and reason, as it does beside an exit record
    TempDir dir;
    std::string y = read_file(source_path("scenarios/catalog/teach/thrashing-kill.yaml"));
    size_t at = y.find("    os: android\n");
    REQUIRE(at != std::string::npos);
    y.insert(at + 16, "    exit_info: false\n");
    std::string f = dir.write("t10.yaml", y);
    RunResult plain = oomsim({"explain", f});
    INFO(plain.out << plain.err);
    REQUIRE(plain.status == 0);
    CHECK(plain.out.find("no exit record: the phone keeps no ApplicationExitInfo") !=
          std::string::npos);
    CHECK(plain.out.find("lmkd logs: lowmemorykiller: Kill 'com.example.app' (") !=
          std::string::npos);
    RunResult d = oomsim({"explain", f, "--drill", "--answers", dir.write("a.txt", "1\n")});
    CHECK(d.out.find("lmkd logs a kill of 'com.example.app' (its adj and reason hidden)") !=
          std::string::npos);
    CHECK(d.out.find("oom_score_adj") == std::string::npos);
}
