// The rule for numeric flags: finite, within range, counts in plain digits; anything else is a
// bad flag (exit 2) with a message that names the flag. Each case here is a value that CLI11's
// own Range let through: NaN, a wrapped "-1", an overflowing duration.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "vtpage/app/command_line.hpp"
#include "vtpage/app/numeric_options.hpp"

namespace vtpage::app {
namespace {

struct Values {
    unsigned consumers = 1;
    double seconds = 1;
    std::uint32_t seed = 0;
    int level = 3;
};

// Parses `words` (without the program name); returns the exit status, if any, and stderr.
std::optional<int> parse(std::vector<std::string> words, Values& values, std::string& err) {
    CLI::App app{"a test program", "vtpage-test-tool"};
    app.add_option("--consumers", values.consumers)->check(count_in(1, 64));
    app.add_option("--seconds", values.seconds)->check(number_in(0, max_seconds));
    app.add_option("--seed", values.seed)->check(any_count<std::uint32_t>());
    app.add_option("--level", values.level)->check(integer_in(-10, 19))->check(not_zero());
    words.insert(words.begin(), "vtpage-test-tool");
    std::vector<char*> argv;
    for (auto& word : words) argv.push_back(word.data());
    testing::internal::CaptureStderr();
    const auto status = parse_command_line(app, int(argv.size()), argv.data());
    err = testing::internal::GetCapturedStderr();
    return status;
}

TEST(NumericOptionsTest, GoodValuesAreParsed) {
    Values values;
    std::string err;
    EXPECT_EQ(parse({"--consumers", "64", "--seconds", "0.5", "--seed", "4294967295"}, values, err),
              std::nullopt)
        << err;
    EXPECT_EQ(values.consumers, 64u);
    EXPECT_EQ(values.seconds, 0.5);
    EXPECT_EQ(values.seed, 4294967295u);
    EXPECT_EQ(parse({"--seconds", "1e3", "--consumers", "1"}, values, err), std::nullopt) << err;
    EXPECT_EQ(values.seconds, 1000.0);
    EXPECT_EQ(parse({"--seconds", "0", "--seed", "0"}, values, err), std::nullopt) << err;
    EXPECT_EQ(values.seconds, 0.0);
    EXPECT_EQ(parse({"--level", "-10"}, values, err), std::nullopt) << err;
    EXPECT_EQ(values.level, -10);
    EXPECT_EQ(parse({"--level", "-1"}, values, err), std::nullopt) << err;
    EXPECT_EQ(values.level, -1);
    EXPECT_EQ(parse({"--level", "19"}, values, err), std::nullopt) << err;
    EXPECT_EQ(values.level, 19);
}

TEST(NumericOptionsTest, BadValuesExitTwoNamingTheFlag) {
    const std::vector<std::pair<std::string, std::string>> bad = {
        {"--consumers", "-1"},
        {"--consumers", "0"},
        {"--consumers", "65"},
        {"--consumers", "1.5"},
        {"--consumers", "0x10"},
        {"--consumers", "010"},
        {"--consumers", "+3"},
        {"--consumers", ""},
        {"--consumers", "18446744073709551617"},
        {"--seconds", "nan"},
        {"--seconds", "NaN"},
        {"--seconds", "inf"},
        {"--seconds", "-inf"},
        {"--seconds", "-1"},
        {"--seconds", "1e300"},
        {"--seconds", "3e7x"},
        {"--seed", "-1"},
        {"--seed", "4294967296"},
        {"--level", "-11"},
        {"--level", "20"},
        {"--level", "-0"},
        {"--level", "0"},
        {"--level", "+3"},
        {"--level", "-"},
        {"--level", "03"},
        {"--level", "-03"},
        {"--level", "1.5"},
        {"--level", "--3"},
        {"--level", "-9223372036854775809"}};
    for (const auto& [flag, value] : bad) {
        Values values;
        std::string err;
        EXPECT_EQ(parse({flag, value}, values, err), exit_usage) << flag << " " << value;
        EXPECT_EQ(err.rfind("vtpage-test-tool: ", 0), 0u) << err;
        EXPECT_NE(err.find(flag), std::string::npos) << err;
    }
}

TEST(NumericOptionsTest, DurationsNeverOverflow) {
    using std::chrono::nanoseconds;
    EXPECT_EQ(to_duration(1.5), nanoseconds(1'500'000'000));
    EXPECT_EQ(to_duration(0), nanoseconds(0));
    EXPECT_EQ(to_duration(-3), nanoseconds(0));
    EXPECT_EQ(to_duration(NAN), nanoseconds(0));
    EXPECT_EQ(to_duration(1e300), to_duration(max_seconds));
    EXPECT_EQ(to_duration(INFINITY), to_duration(max_seconds));
    EXPECT_GT(to_duration(max_seconds).count(), 0);
}

}  // namespace
}  // namespace vtpage::app
