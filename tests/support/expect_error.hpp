// Checks of the vtpage::Error a call throws:
//
//   EXPECT_ERRC(table.commit(pages), Errc::out_of_memory);          throws, with that code
//   EXPECT_ERRC_WITH_OPERATION(backend->map(...), Errc::invalid_argument);
//                                                                   ... and names its operation
//   EXPECT_EQ(test::error_code_of([&] { table.pin(pages); }), Errc::not_mapped);
#pragma once

#include <gtest/gtest.h>

#include <functional>

#include "vtpage/base/error.hpp"

namespace vtpage::test {

// The code of the vtpage::Error that `call` throws. A call that throws none fails the test
// (and returns Errc::backend_failure, which no test expects).
inline Errc error_code_of(const std::function<void()>& call) {
    try {
        call();
    } catch (const Error& error) {
        return error.code();
    }
    ADD_FAILURE() << "no error";
    return Errc::backend_failure;
}

}  // namespace vtpage::test

#define VTPAGE_EXPECT_ERROR_(statement, expected, with_operation) \
    do {                                                          \
        try {                                                     \
            statement;                                            \
            ADD_FAILURE() << #statement " did not throw";         \
        } catch (const ::vtpage::Error& error) {                  \
            EXPECT_EQ(error.code(), expected) << error.what();    \
            if (with_operation) {                                 \
                EXPECT_FALSE(error.operation().empty());          \
            }                                                     \
        }                                                         \
    } while (0)

#define EXPECT_ERRC(statement, expected) VTPAGE_EXPECT_ERROR_(statement, expected, false)
#define EXPECT_ERRC_WITH_OPERATION(statement, expected) \
    VTPAGE_EXPECT_ERROR_(statement, expected, true)
