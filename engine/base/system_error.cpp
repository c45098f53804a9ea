#include "vtpage/base/system_error.hpp"

#include <array>
#include <cerrno>
#include <cstring>

namespace vtpage {

std::string errno_name(int error_number) {
    const char* name = ::strerrorname_np(error_number);
    return name ? std::string(name) : "errno " + std::to_string(error_number);
}

std::string errno_message(int error_number) {
    // GNU's strerror_r: the text is either in the buffer or a static string.
    std::array<char, 256> buffer{};
    return ::strerror_r(error_number, buffer.data(), buffer.size());
}

void throw_errno_value(int error_number, Errc code, std::string operation, std::string detail,
                       std::string arguments) {
    detail += std::string(detail.empty() ? "" : ": ") + errno_message(error_number);
    throw Error(code, std::move(operation), std::move(detail), std::move(arguments), error_number,
                errno_name(error_number));
}

void throw_errno(Errc code, std::string operation, std::string detail, std::string arguments) {
    throw_errno_value(errno, code, std::move(operation), std::move(detail), std::move(arguments));
}

}  // namespace vtpage
