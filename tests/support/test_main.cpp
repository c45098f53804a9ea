// The main of every vtpage test binary: GoogleTest, plus the child modes of child_process.hpp.
#include <gtest/gtest.h>

#include "child_process.hpp"

int main(int argc, char** argv) {
    int exit_code = 0;
    if (vtpage::test::run_child_mode_if_asked(argc, argv, exit_code)) return exit_code;
    // Death tests run in a fresh process of this binary: safe with threads and with CUDA.
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    testing::InitGoogleTest(&argc, argv);
    return RUN_ALL_TESTS();
}
