// explain --quiz and --drill: the evidence without the causes (the drill
// hides the reason codes, the importance and the class words too), the
// questions, answers checked for their form, the grading with why the
// right answer is right and why a chosen one is not, and --death.
#include <catch2/catch.hpp>

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
        RunResult r = drill(dir, name, "1\n1\n1\nabcd\n1\n");
        REQUIRE(r.status == 0);
        size_t end = r.out.find("the drill: death 1 of ");
        if (end == std::string::npos) {
            CHECK(has(r.out, "no death in this replication"));
            // failed loads with the app alive, and a plan whose first cell (the
            // cold-start path) passes: the two with no death in cell 0
            CHECK((name == "stale-cache-after-update" || name == "reenable-regression"));
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
    CHECK(drilled == (int)names.size() - 2); // every other one dies in its replication 0
}

TEST_CASE("drill: five questions, graded right with the reasoning", "[quiz][drill]")
{
    TempDir dir;
    RunResult r = drill(dir, "prewarm-boot-loop", "delegate_prepare\nsupported\n1\nb d a c\n2\n");
    INFO(r.out << r.err);
    REQUIRE(r.status == 0);
    size_t q = r.out.find("the drill: death 1 of 46, at 3.000 s");
    REQUIRE(q != std::string::npos);
    for (const char *s : {"question 1: which stage", "question 2: read alone",
                          "question 3: with this timeline", "question 4: put the recovery "
                          "ladder's steps in the order", "question 5: which step"})
        CHECK(r.out.find(s, q) != std::string::npos);
    CHECK(has(r.out, "1. delegate_prepare (right)"));
    CHECK(has(r.out, "2. supported (right)"));
    CHECK(has(r.out, "3. 1) nothing for the class (right)"));
    CHECK(has(r.out, "4. b d a c (right): in the order of reversibility"));
    CHECK(has(r.out, "5. 2, or 4 (the guidance allows the last known good for a start-up "
                     "death, only with a complete receipt) (right)"));
    CHECK(has(r.out, "> 2. stop prewarm and extra sessions  <- this death's step"));
    CHECK(has(r.out, "score: 5 of 5"));
    // the guidance allows step 4 for a start-up death: also right
    RunResult four = drill(dir, "prewarm-boot-loop", "3\n2\n1\nbdac\n4\n");
    CHECK(has(four.out, "score: 5 of 5"));
    // the scenario is told only after the answer
    CHECK(r.out.find("the scenario: The app prewarms") > r.out.find("score:"));
}

TEST_CASE("drill: a wrong answer says why the right one is right and the chosen one is not",
          "[quiz][drill]")
{
    TempDir dir;
    RunResult r = drill(dir, "image-queue", "none\nconfirmed\n2\na b c d\n4\n", {"--death", "2"});
    INFO(r.out << r.err);
    REQUIRE(r.status == 0);
    CHECK(has(r.out, "the drill: death 2 of 5, at 46.022 s"));
    CHECK(has(r.out, "1. inference (your answer was not it)"));
    CHECK(has(r.out, "yours, none, is not it: inference had begun and not ended."));
    CHECK(has(r.out, "yours, confirmed, would need a system record that matches a timeline"));
    CHECK(has(r.out, "yours, 2) the device's heap growth limit, is what is missing for another "
                     "death"));
    CHECK(has(r.out, "yours puts \"release idle parts and clear rebuildable inactive caches\" "
                     "where \"reject new inference"));
    CHECK(has(r.out, "5. 1 (your answer was not it): the first step suffices: the memory was "
                     "the queue's payloads"));
    CHECK(has(r.out, "yours, step 4, is harder to undo, and step 1 already answers it."));
    CHECK(has(r.out, "score: 0 of 5"));
    // an earlier step than the death's: it does not suffice
    RunResult early = drill(dir, "delegate-fallback-two-sets", "2\n2\n1\nbdac\n1\n");
    CHECK(has(early.out, "yours, step 1, does not suffice (see why step 2 above)."));
    CHECK(has(early.out, "why step 2: rejecting new inference does not suffice: the failed "
                         "delegate's buffers are held"));
    CHECK(has(early.out, "score: 4 of 5"));
}

TEST_CASE("drill: answers of the wrong form are refused from a file, and --death is checked",
          "[quiz][drill]")
{
    TempDir dir;
    struct {
        const char *answers, *message;
    } bad[] = {
        {"somewhere\n", "answer 1 'somewhere' is not a stage's name or its number, 1 to 6"},
        {"3\nprobably\n", "answer 2 'probably' is not confirmed, supported, unconfirmed, or "
                          "1 to 3"},
        {"3\n2\n9\n", "answer 3 '9' is not the number of a choice, 1 to 7"},
        {"3\n2\n1\nabca\n", "answer 4 'abca' is not the four letters a to d, each once"},
        {"3\n2\n1\nbdac\n5\n", "answer 5 '5' is not a step, 0 to 4"},
        {"3\n2\n1\nbdac\n", "--drill: the answers ended before answer 5 (a step, 0 to 4)"},
    };
    for (const auto &b : bad) {
        INFO(b.answers);
        RunResult r = drill(dir, "prewarm-boot-loop", b.answers);
        CHECK(r.status == 2);
        CHECK(has(r.err, b.message));
        CHECK_FALSE(has(r.out, "the answer:"));
    }
    RunResult past = drill(dir, "image-queue", "4\n2\n1\nbdac\n1\n", {"--death", "9"});
    CHECK(past.status == 2);
    CHECK(has(past.err, "--death 9: this replication told 5 deaths"));
    CHECK(oomsim({"explain", "image-queue", "--death", "2"}).status == 2);
    CHECK(oomsim({"explain", "image-queue", "--quiz", "--death", "0"}).status == 2);
    // another replication's deaths
    RunResult rep = drill(dir, "image-queue", "4\n2\n1\nbdac\n1\n", {"--replication", "3"});
    CHECK(rep.status == 0);
    CHECK(has(rep.out, "a scenario, replication 3: an Android phone, 2048 MiB of RAM"));
    CHECK(has(rep.out, "score: 5 of 5"));
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
