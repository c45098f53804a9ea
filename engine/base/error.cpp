#include "vtpage/base/error.hpp"

namespace vtpage {

std::string_view to_string(Errc code) noexcept {
    switch (code) {
        case Errc::invalid_argument:
            return "invalid_argument";
        case Errc::out_of_range:
            return "out_of_range";
        case Errc::out_of_memory:
            return "out_of_memory";
        case Errc::not_supported:
            return "not_supported";
        case Errc::not_mapped:
            return "not_mapped";
        case Errc::already_mapped:
            return "already_mapped";
        case Errc::partial_unmap:
            return "partial_unmap";
        case Errc::invalid_handle:
            return "invalid_handle";
        case Errc::access_denied:
            return "access_denied";
        case Errc::busy:
            return "busy";
        case Errc::budget_exhausted:
            return "budget_exhausted";
        case Errc::io_error:
            return "io_error";
        case Errc::corrupt_data:
            return "corrupt_data";
        case Errc::device_unavailable:
            return "device_unavailable";
        case Errc::backend_failure:
            return "backend_failure";
        case Errc::superseded:
            return "superseded";
    }
    return "unknown";
}

namespace {
std::string format_message(Errc code, const std::string& operation, const std::string& detail,
                           const std::string& arguments, std::int64_t backend_code,
                           const std::string& backend_code_name) {
    std::string text =
        "vtpage: " + operation + "(" + arguments + ") failed: " + std::string(to_string(code));
    if (!detail.empty()) text += ": " + detail;
    if (!backend_code_name.empty()) {
        text += " [" + backend_code_name + " = " + std::to_string(backend_code) + "]";
    }
    return text;
}
}  // namespace

Error::Error(Errc code, std::string operation, std::string detail, std::string arguments,
             std::int64_t backend_code, std::string backend_code_name)
    : std::runtime_error(
          format_message(code, operation, detail, arguments, backend_code, backend_code_name)),
      code_(code),
      operation_(std::move(operation)),
      detail_(std::move(detail)),
      arguments_(std::move(arguments)),
      backend_code_(backend_code),
      backend_code_name_(std::move(backend_code_name)) {}

}  // namespace vtpage
