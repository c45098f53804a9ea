#include <gtest/gtest.h>

#include "vtpage/backend/backend_factory.hpp"

namespace vtpage {
namespace {

TEST(BackendFactory, UnknownNameIsRefused) {
    BackendSettings settings;
    settings.name = "opengl";
    try {
        make_backend(settings);
        FAIL() << "an unknown backend name was accepted";
    } catch (const Error& error) {
        EXPECT_EQ(error.code(), Errc::invalid_argument);
        EXPECT_NE(std::string(error.what()).find("opengl"), std::string::npos);
    }
}

TEST(BackendFactory, AutoLogsItsChoiceAndReason) {
    std::vector<std::string> lines;
    BackendSettings settings;
    settings.log = Log([&](LogLevel, std::string_view line) { lines.emplace_back(line); });
    auto backend = make_backend(settings);
    ASSERT_TRUE(backend);
    bool found = false;
    for (const auto& line : lines) {
        if (line.find("chosen by auto") != std::string::npos &&
            line.find(std::string(backend->name())) != std::string::npos) {
            found = true;
        }
    }
    EXPECT_TRUE(found) << "no log line names the choice";
}

TEST(BackendFactory, HostIsAlwaysAvailable) {
    BackendSettings settings;
    settings.name = "host";
    EXPECT_EQ(make_backend(settings)->name(), "host");
    auto names = backend_names();
    EXPECT_EQ(names.front(), "auto");
    EXPECT_NE(std::find(names.begin(), names.end(), "host"), names.end());
}

}  // namespace
}  // namespace vtpage
