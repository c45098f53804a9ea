// The programs' command-line rules: exit 2 with "<program>: <problem>" on a bad flag or a failed
// check, 0 after --help or --version, go on otherwise; output paths checked before the work.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "../support/temporary_folder.hpp"
#include "vtpage/app/command_line.hpp"
#include "vtpage/config.hpp"  // VTPAGE_VERSION: the project's version, as the library has it

namespace vtpage::app {
namespace {

struct Parsed {
    std::optional<int> status;
    std::string out, err;
};

// Parses `words` (without the program name) into a small program's options.
Parsed parse(std::vector<std::string> words, const std::function<void()>& check = {},
             std::string* json = nullptr) {
    CLI::App app{"a test program", "vtpage-test-tool"};
    int count = 1;
    std::string backend = "auto", json_path;
    app.add_option("--count", count)->check(CLI::Range(1, 10));
    add_backend_option(app, backend);
    app.add_option("--json", json_path)->check(writable_file());
    words.insert(words.begin(), "vtpage-test-tool");
    std::vector<char*> argv;
    for (auto& word : words) argv.push_back(word.data());
    Parsed parsed;
    testing::internal::CaptureStdout();
    testing::internal::CaptureStderr();
    parsed.status = parse_command_line(app, int(argv.size()), argv.data(), check);
    parsed.err = testing::internal::GetCapturedStderr();
    parsed.out = testing::internal::GetCapturedStdout();
    if (json) *json = json_path;
    return parsed;
}

TEST(CommandLineTest, GoodFlagsGoOn) {
    const Parsed parsed = parse({"--count", "3", "--backend", "host"});
    EXPECT_EQ(parsed.status, std::nullopt);
    EXPECT_EQ(parsed.err, "");
}

TEST(CommandLineTest, BadFlagsExitTwoNamingTheProgramAndTheFlag) {
    for (const std::vector<std::string>& words : {std::vector<std::string>{"--no-such-flag"},
                                                  {"--count", "11"},
                                                  {"--count", "x"},
                                                  {"--backend", "tape"}}) {
        const Parsed parsed = parse(words);
        EXPECT_EQ(parsed.status, exit_usage) << words[0];
        EXPECT_EQ(parsed.err.rfind("vtpage-test-tool: ", 0), 0u) << parsed.err;
        EXPECT_NE(parsed.err.find(words[0]), std::string::npos) << parsed.err;
        EXPECT_NE(parsed.err.find("--help"), std::string::npos) << parsed.err;
    }
}

TEST(CommandLineTest, HelpExitsZeroOnStdout) {
    const Parsed parsed = parse({"--help"});
    EXPECT_EQ(parsed.status, exit_success);
    EXPECT_NE(parsed.out.find("--count"), std::string::npos) << parsed.out;
    EXPECT_EQ(parsed.err, "");
}

TEST(CommandLineTest, VersionExitsZeroWithTheNameAndTheProjectVersionOnStdout) {
    const Parsed parsed = parse({"--version"});
    EXPECT_EQ(parsed.status, exit_success);
    EXPECT_EQ(parsed.out, std::string("vtpage-test-tool ") + VTPAGE_VERSION + "\n");
    EXPECT_EQ(parsed.err, "");
    EXPECT_EQ(version_line("vtpage-bake"), std::string("vtpage-bake ") + VTPAGE_VERSION);
}

TEST(CommandLineTest, AFailedCheckIsABadFlag) {
    bool checked = false;
    const Parsed parsed = parse({"--count", "2"}, [&] {
        checked = true;
        throw CLI::ValidationError("--count", "must be odd");
    });
    EXPECT_TRUE(checked);
    EXPECT_EQ(parsed.status, exit_usage);
    EXPECT_NE(parsed.err.find("vtpage-test-tool: --count: must be odd"), std::string::npos)
        << parsed.err;
}

TEST(CommandLineTest, OutputPathsAreCheckedBeforeTheWork) {
    test::TemporaryFolder folder;
    std::string json;
    EXPECT_EQ(parse({"--json", folder.file("results.json")}, {}, &json).status, std::nullopt);
    EXPECT_EQ(json, folder.file("results.json"));
    EXPECT_FALSE(std::filesystem::exists(json)) << "the check must not create the file";
    std::ofstream(folder.file("old.json")) << "{}";
    EXPECT_EQ(parse({"--json", folder.file("old.json")}).status, std::nullopt);

    const Parsed missing_folder = parse({"--json", folder.file("no-such-folder/results.json")});
    EXPECT_EQ(missing_folder.status, exit_usage);
    EXPECT_NE(missing_folder.err.find("no folder"), std::string::npos) << missing_folder.err;
    const Parsed a_folder = parse({"--json", folder.path().string()});
    EXPECT_EQ(a_folder.status, exit_usage);
    EXPECT_NE(a_folder.err.find("is a folder"), std::string::npos) << a_folder.err;
}

TEST(CommandLineTest, ReportPrintsTheProgramAndReturnsTheStatus) {
    testing::internal::CaptureStderr();
    EXPECT_EQ(report("vtpage-test-tool", exit_failure, "it broke"), exit_failure);
    EXPECT_EQ(testing::internal::GetCapturedStderr(), "vtpage-test-tool: it broke\n");
}

}  // namespace
}  // namespace vtpage::app
