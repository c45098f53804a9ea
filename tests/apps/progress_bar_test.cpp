// The programs' progress bar: frames redrawn in place on a terminal, a bounded number of plain
// lines elsewhere (0, 25, 50, 75%, then "done"), nothing when disabled.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "vtpage/app/progress_bar.hpp"

namespace vtpage::app {
namespace {

// A file the bar writes to, read back as text.
class Capture {
public:
    Capture() : file_(std::tmpfile(), &std::fclose) {}
    std::FILE* file() const { return file_.get(); }
    std::string text() const {
        std::fflush(file_.get());
        std::rewind(file_.get());
        std::string text;
        char buffer[4096];
        while (std::size_t n = std::fread(buffer, 1, sizeof(buffer), file_.get())) {
            text.append(buffer, n);
        }
        return text;
    }
    std::vector<std::string> lines() const {
        std::vector<std::string> lines;
        std::istringstream in(text());
        for (std::string line; std::getline(in, line);) lines.push_back(line);
        return lines;
    }

private:
    std::unique_ptr<std::FILE, int (*)(std::FILE*)> file_;
};

ProgressSettings log_settings(const Capture& capture, double line_seconds = 3600) {
    ProgressSettings settings;
    settings.label = "baking";
    settings.out = capture.file();
    settings.terminal = false;
    settings.line_seconds = line_seconds;
    return settings;
}

ProgressSettings terminal_settings(const Capture& capture, double redraw_seconds) {
    ProgressSettings settings;
    settings.label = "baking";
    settings.out = capture.file();
    settings.terminal = true;
    settings.redraw_seconds = redraw_seconds;
    settings.width = 10;
    return settings;
}

TEST(ProgressBarTest, ALogGetsAPlainLinePerQuarterAndOneWhenDone) {
    Capture capture;
    {
        ProgressBar bar(log_settings(capture));
        EXPECT_FALSE(bar.terminal());
        for (int i = 0; i < 1000; ++i) bar.update(i / 1000.0, "step " + std::to_string(i));
        bar.finish("1000 steps");
    }
    const std::vector<std::string> expected{"baking   0% step 0", "baking  25% step 250",
                                            "baking  50% step 500", "baking  75% step 750",
                                            "baking done: 1000 steps"};
    EXPECT_EQ(capture.lines(), expected);
    EXPECT_EQ(capture.text().find('\r'), std::string::npos);
}

TEST(ProgressBarTest, ALogGetsALineWhenTheIntervalHasPassed) {
    Capture capture;
    ProgressBar bar(log_settings(capture, 0));  // every update is due
    bar.update(0.1, "a");
    bar.update(0.11, "b");
    bar.update(0.12, "c");
    EXPECT_EQ(capture.lines(),
              (std::vector<std::string>{"baking  10% a", "baking  11% b", "baking  12% c"}));
}

TEST(ProgressBarTest, FractionsOutsideZeroToOneAreClamped) {
    Capture capture;
    ProgressBar bar(log_settings(capture, 0));
    bar.update(-0.5, "below");
    bar.update(std::nan(""), "not a number");
    bar.update(7.0, "above");
    EXPECT_EQ(capture.lines(),
              (std::vector<std::string>{"baking   0% below", "baking   0% not a number",
                                        "baking 100% above"}));
}

TEST(ProgressBarTest, ALogThatStopsShortShowsTheLastState) {
    Capture capture;
    {
        ProgressBar bar(log_settings(capture));
        bar.update(0.0, "start");
        bar.update(0.1, "working");
        bar.update(0.2, "stuck here");  // within the first quarter: not printed yet
    }                                   // ends without finish(), as on an error
    EXPECT_EQ(capture.lines(),
              (std::vector<std::string>{"baking   0% start", "baking  20% stuck here"}));
}

TEST(ProgressBarTest, ATerminalGetsFramesRedrawnInPlace) {
    Capture capture;
    {
        ProgressBar bar(terminal_settings(capture, 0));
        EXPECT_TRUE(bar.terminal());
        bar.update(0.0, "start");
        bar.update(0.5, "half");
        bar.finish("all");
    }
    EXPECT_EQ(capture.text(),
              "\rbaking [..........]   0% start\x1b[K"
              "\rbaking [#####.....]  50% half\x1b[K"
              "\rbaking [##########] 100% all\x1b[K\n");
}

TEST(ProgressBarTest, ATerminalIsRedrawnAtMostAtTheRedrawRate) {
    Capture capture;
    {
        ProgressBar bar(terminal_settings(capture, 3600));
        for (int i = 0; i <= 100; ++i) bar.update(i / 100.0, "step " + std::to_string(i));
        bar.end();  // stopped short: the latest state is drawn and the line ended
    }
    const std::string text = capture.text();
    EXPECT_EQ(std::count(text.begin(), text.end(), '\r'), 2) << text;
    EXPECT_EQ(text,
              "\rbaking [..........]   0% step 0\x1b[K"
              "\rbaking [##########] 100% step 100\x1b[K\n");
}

TEST(ProgressBarTest, ClearTakesTheBarOffATerminal) {
    Capture capture;
    {
        ProgressBar bar(terminal_settings(capture, 0));
        bar.update(0.3, "x");
        bar.clear();
    }
    EXPECT_EQ(capture.text(), "\rbaking [###.......]  30% x\x1b[K\r\x1b[K");
}

TEST(ProgressBarTest, DisabledPrintsNothing) {
    Capture capture;
    for (bool terminal : {false, true}) {
        ProgressSettings settings =
            terminal ? terminal_settings(capture, 0) : log_settings(capture);
        settings.enabled = false;
        ProgressBar bar(settings);
        bar.update(0.5, "x");
        bar.finish("done");
    }
    EXPECT_EQ(capture.text(), "");
}

TEST(ProgressBarTest, NothingAfterFinish) {
    Capture capture;
    {
        ProgressBar bar(log_settings(capture, 0));
        bar.finish("early");
        bar.update(0.5, "late");
        bar.finish("again");
        bar.end();
    }
    EXPECT_EQ(capture.lines(), std::vector<std::string>{"baking done: early"});
}

}  // namespace
}  // namespace vtpage::app
