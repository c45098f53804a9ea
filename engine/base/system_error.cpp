#include "vtpage/base/system_error.hpp"

#include <cerrno>
#include <cstring>

namespace vtpage {

std::string errno_name(int error_number) {
    const char* name = ::strerrorname_np(error_number);
    return name ? std::string(name) : "errno " + std::to_string(error_number);
}

void throw_errno_value(int error_number, Errc code, std::string operation, std::string detail,
                       std::string arguments) {
    detail += std::string(detail.empty() ? "" : ": ") + std::strerror(error_number);
    throw Error(code, std::move(operation), std::move(detail), std::move(arguments), error_number,
                errno_name(error_number));
}

void throw_errno(Errc code, std::string operation, std::string detail, std::string arguments) {
    throw_errno_value(errno, code, std::move(operation), std::move(detail), std::move(arguments));
}

}  // namespace vtpage
