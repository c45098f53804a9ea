// Turns errno into a vtpage::Error that carries the errno value and its name (ENOMEM, EBADF...).
#pragma once

#include <string>

#include "vtpage/base/error.hpp"

namespace vtpage {

// Throws an Error with the current errno as the backend code.
[[noreturn]] void throw_errno(Errc code, std::string operation, std::string detail,
                              std::string arguments = {});
// Same, for an explicit errno value.
[[noreturn]] void throw_errno_value(int error_number, Errc code, std::string operation,
                                    std::string detail, std::string arguments = {});
// "ENOMEM", or "errno N" where the C library has no name.
std::string errno_name(int error_number);
// The C library's text for an errno value ("Cannot allocate memory"). Unlike std::strerror,
// safe while other threads do the same.
std::string errno_message(int error_number);

}  // namespace vtpage
