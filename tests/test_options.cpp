// test_options.cpp - the one parser and help printer of every subcommand's
// table of options (cli/options.c), on a table of its own; and, through
// the command line, that each subcommand's help shows every option its
// table takes.
#include <catch2/catch.hpp>

#include <cstddef>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "shim/capture.hpp"
#include "shim/shim.hpp"

extern "C" {
#include "cli/cli.h"
}

namespace {

struct Args {
    const char *name;
    const char *files[3];
    unsigned nfiles;
    const char *choice;
    const char *path;
    unsigned long long count;
    int has_count, flag;
    double seconds;
};

const char *const choices[] = {"alpha", "beta", nullptr};

#define AO(field) offsetof(Args, field)
const cli_opt opts[] = {
    {"--count", "-c", CLI_OPT_COUNT, AO(count), AO(has_count), 2, 9, nullptr,
     "--count is 2 to 9, got '%s'", 0, "  --count N   a count\n"},
    {"--flag", nullptr, CLI_OPT_FLAG, AO(flag), CLI_NOWHERE, 0, 0, nullptr, nullptr, 0,
     "  --flag      a flag\n"},
    {"--choice", nullptr, CLI_OPT_CHOICE, AO(choice), CLI_NOWHERE, 0, 0, choices,
     "--choice is alpha or beta", 1, nullptr},
    {"--file", nullptr, CLI_OPT_FILE, AO(path), CLI_NOWHERE, 0, 0, nullptr,
     "--file needs a file", 0, "  --file F    a file\n"},
    {"--wait", nullptr, CLI_OPT_SECONDS, AO(seconds), CLI_NOWHERE, 0, 10, nullptr,
     "--wait needs seconds from 0 to 10, got '%s'", 0, nullptr},
    {"--in", nullptr, CLI_OPT_LIST, AO(files), AO(nfiles), 0, 3, nullptr, nullptr, 0, nullptr},
    {"--other", nullptr, CLI_OPT_ELSEWHERE, 0, CLI_NOWHERE, 0, 0, nullptr, nullptr, 0,
     "  --other     another form's\n"},
    {"--help", "-h", CLI_OPT_HELP, 0, CLI_NOWHERE, 0, 0, nullptr, nullptr, 0, nullptr},
};

const cli_cmd cmd = {"demo", "usage: oomsim demo NAME\n", "  the end\n", opts,
                     sizeof opts / sizeof *opts, "unexpected argument '%s'",
                     "one name; '%s' is extra", AO(name), 0, 1, 0, nullptr, 0, nullptr};

// The parsed values point into the arguments: they live as long as p.
struct Parsed {
    int rc;
    Args a;
    std::string out, err;
    std::shared_ptr<std::vector<std::string>> words;
};

Parsed parse(const std::vector<std::string> &words, const cli_cmd &c = cmd)
{
    shim::TempDir dir;
    shim::Capture cap(dir);
    Parsed p{};
    p.words = std::make_shared<std::vector<std::string>>(words);
    std::vector<char *> argv;
    for (auto &w : *p.words)
        argv.push_back(&w[0]);
    p.a.seconds = -1;
    cap.begin();
    p.rc = cli_parse(&c, (int)argv.size(), argv.data(), &p.a);
    auto printed = cap.end();
    p.out = printed.first;
    p.err = printed.second;
    return p;
}

} // namespace

TEST_CASE("options: values land where the table says", "[cli][options]")
{
    Parsed p = parse({"x", "-c", "7", "--flag", "--choice", "beta", "--file", "f", "--wait",
                      "2.5", "--in", "a", "--in", "b"});
    INFO(p.err);
    REQUIRE(p.rc == CLI_OK);
    CHECK(std::string(p.a.name) == "x");
    CHECK(p.a.count == 7);
    CHECK(p.a.has_count == 1);
    CHECK(p.a.flag == 1);
    CHECK(std::string(p.a.choice) == "beta");
    CHECK(p.a.choice == choices[1]); // the table's own string
    CHECK(std::string(p.a.path) == "f");
    CHECK(p.a.seconds == 2.5);
    REQUIRE(p.a.nfiles == 2);
    CHECK(std::string(p.a.files[1]) == "b");
    CHECK(p.err.empty());
}

TEST_CASE("options: each refusal says what the table says", "[cli][options]")
{
    // a bad value, with the value in the message
    CHECK(parse({"--count", "1"}).err == "oomsim demo: --count is 2 to 9, got '1'\n"
                                         "see oomsim demo --help\n");
    // a missing value gets the same message, with nothing for the value
    CHECK(parse({"--count"}).err.find("--count is 2 to 9, got ''\n") != std::string::npos);
    // ... unless a missing value is unexpected for that option
    CHECK(parse({"--choice"}).err.find("unexpected argument '--choice'\n") != std::string::npos);
    CHECK(parse({"--choice", "gamma"}).err.find("--choice is alpha or beta\n") !=
          std::string::npos);
    CHECK(parse({"--file", ""}).err.find("--file needs a file\n") != std::string::npos);
    CHECK(parse({"--wait", "11"}).err.find("got '11'") != std::string::npos);
    CHECK(parse({"--wait", "2x"}).err.find("got '2x'") != std::string::npos);
    // a list past its size, an option another form takes, an unknown one
    CHECK(parse({"--in", "a", "--in", "b", "--in", "c", "--in", "d"}).err.find(
              "unexpected argument '--in'") != std::string::npos);
    CHECK(parse({"--other", "x"}).err.find("unexpected argument '--other'") !=
          std::string::npos);
    CHECK(parse({"--nope"}).err.find("unexpected argument '--nope'") != std::string::npos);
    CHECK(parse({"a", "b"}).err.find("one name; 'b' is extra") != std::string::npos);
    // a lone dash is an option here
    CHECK(parse({"-"}).err.find("unexpected argument '-'") != std::string::npos);
    for (auto words : std::vector<std::vector<std::string>>{{"--count", "1"}, {"a", "b"}})
        CHECK(parse(words).rc == CLI_USAGE);
}

TEST_CASE("options: the first error wins, and the last value of a repeated option",
          "[cli][options]")
{
    Parsed p = parse({"--count", "1", "--nope"});
    CHECK(p.err.find("--count is 2") != std::string::npos);
    CHECK(p.err.find("--nope") == std::string::npos);
    Parsed q = parse({"-c", "3", "--count", "4"});
    CHECK(q.rc == CLI_OK);
    CHECK(q.a.count == 4);
}

TEST_CASE("options: the help is the table's, in its order", "[cli][options]")
{
    Parsed p = parse({"-h"});
    CHECK(p.rc == CLI_DONE);
    // an option without lines of its own gets one made from the table
    CHECK(p.out == "usage: oomsim demo NAME\n"
                   "  --count N   a count\n"
                   "  --flag      a flag\n"
                   "  --choice alpha|beta\n"
                   "  --file F    a file\n"
                   "  --wait SECONDS\n"
                   "  --in FILE           (may be given several times)\n"
                   "  --other     another form's\n"
                   "  --help, -h          this help\n"
                   "  the end\n");
    CHECK(p.err.empty());
}

TEST_CASE("options: a message is cut where the command asks, a lone dash may be an argument",
          "[cli][options]")
{
    cli_cmd cut = cmd;
    cut.message_max = 20;
    cut.dash_is_positional = 1;
    Parsed p = parse({"--count", "123456789"}, cut);
    // 19 bytes and the NUL: "--count is 2 to 9, " is 19
    CHECK(p.err == "oomsim demo: --count is 2 to 9, \nsee oomsim demo --help\n");
    Parsed d = parse({"-"}, cut);
    CHECK(d.rc == CLI_OK);
    CHECK(std::string(d.a.name) == "-");
}

TEST_CASE("options: a command that takes no argument refuses one", "[cli][options]")
{
    cli_cmd none = cmd;
    none.positionals = 0;
    Parsed p = parse({"x"}, none);
    CHECK(p.rc == CLI_USAGE);
    CHECK(p.err.find("one name; 'x' is extra") != std::string::npos);
    CHECK(p.a.name == nullptr);
}

TEST_CASE("every subcommand's help shows each option of its table", "[cli][options][many]")
{
    // the tables themselves (oomsim --options, from the tables the parsers
    // read), against each command's --help: every option, by name, at a
    // line's start after its indentation
    shim::RunResult all = shim::oomsim({"--options"});
    REQUIRE(all.status == 0);
    std::istringstream lines(all.out);
    std::string line;
    unsigned checked = 0;
    std::set<std::string> commands;
    while (std::getline(lines, line)) {
        std::istringstream words(line);
        std::string cmd, opt;
        words >> cmd >> opt;
        std::vector<std::string> args{cmd};
        if (cmd == "import" && (opt == "perfetto" || opt == "device")) {
            args.push_back(opt);
            words >> opt;
        }
        args.push_back("--help");
        commands.insert(cmd);
        shim::RunResult h = shim::oomsim(args);
        INFO(line << "\n" << h.out);
        REQUIRE(h.status == 0);
        bool found = h.out.find("\n  " + opt + " ") != std::string::npos ||
                     h.out.find("\n  " + opt + ",") != std::string::npos ||
                     h.out.find(", " + opt + " ") != std::string::npos ||
                     h.out.find("\n  " + opt + "\n") != std::string::npos;
        CHECK(found);
        checked++;
    }
    CHECK(checked > 60);
    // ... and the top level names every command and the packaging forms
    shim::RunResult top = shim::oomsim({"--help"});
    for (const std::string &c : commands)
        CHECK(top.out.find("\n  " + c + " ") != std::string::npos);
    for (const char *o : {"--options", "--man", "--completions bash|zsh", "--version"})
        CHECK(top.out.find(o) != std::string::npos);
    // an unexpected argument names itself
    shim::RunResult bad = shim::oomsim({"replay", "t.jsonl", "--timelime", "0"});
    CHECK(bad.status == 2);
    CHECK(bad.err.find("'--timelime'") != std::string::npos);
    CHECK(shim::oomsim({"--completions", "fish"}).status == 2);
}

TEST_CASE("catalog NAME prints the entry's YAML as shipped, with its comments", "[cli][catalog]")
{
    std::string shipped =
        shim::read_file(shim::source_path("scenarios/catalog/candidates/llm-1b.yaml"));
    for (const char *name : {"llm-1b", "candidates/llm-1b", "candidates/llm-1b.yaml"}) {
        shim::RunResult r = shim::oomsim({"catalog", name});
        INFO(name << r.err);
        REQUIRE(r.status == 0);
        CHECK(r.out == shipped);
    }
    CHECK(shipped.find("# ") != std::string::npos); // the comments: sources, assumptions
    shim::RunResult none = shim::oomsim({"catalog", "no-such-entry"});
    CHECK(none.status == 1);
    CHECK(none.err.find("no entry named 'no-such-entry'") != std::string::npos);
    CHECK(shim::oomsim({"catalog", "a", "b"}).status == 2);
}

// (probe's messages are the reference probe's, byte for byte: not here)
TEST_CASE("every message on stderr starts with oomsim", "[cli][many]")
{
    shim::TempDir d;
    std::string bad = d.path() + "/bad.yaml";
    shim::write_file(bad, "scenario: x\ndevices: [android-4g\n");
    std::string trace = d.path() + "/t.jsonl";
    std::string empty = d.path() + "/empty.log";
    shim::write_file(empty, "nothing here\n");
    struct Case {
        std::vector<std::string> args;
        int status;
    } cases[] = {
        {{"run", d.path() + "/none.yaml"}, 1},
        {{"validate", bad}, 1},
        {{"frobnicate"}, 2},
        {{}, 2}, // no command: the usage
        {{"explain", "prewarm-boot-loop", "--cell", "999"}, 2},
        {{"gen", "timeout-retry-storm", "-o", trace}, 0},
        {{"replay", trace, "--scenario", "capacity-plan"}, 1},
        {{"diagnose", "--exits", empty}, 1},
        {{"import", "llama-cpp", empty}, 1},
        {{"catalog", "no-such-entry"}, 1},
    };
    for (const Case &c : cases) {
        shim::RunResult r = shim::oomsim(c.args);
        INFO((c.args.empty() ? "(none)" : c.args[0]) << ": " << r.err);
        CHECK(r.status == c.status);
        CHECK(!r.err.empty());
        if (r.err.rfind("usage: oomsim COMMAND", 0) == 0)
            continue; // no command: the top-level help, not a message
        std::istringstream lines(r.err);
        for (std::string line; std::getline(lines, line);) {
            INFO(line);
            // a message, the hint after it, or a list under it
            CHECK((line.rfind("oomsim", 0) == 0 || line.rfind("see oomsim ", 0) == 0 ||
                   line.rfind("  ", 0) == 0 || line.empty()));
        }
    }
}
