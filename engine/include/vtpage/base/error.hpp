// The one error type of vtpage. Every failure in the library is thrown as vtpage::Error: it
// names the operation, a portable error code, the backend's own code and its name (for example
// CUDA_ERROR_OUT_OF_MEMORY or ENOMEM) and the arguments of the failed call.
#pragma once

#include <cstdint>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>

namespace vtpage {

enum class Errc {
    invalid_argument,    // a size, address, flag or name the call cannot accept
    out_of_range,        // an index or address outside what the object covers
    out_of_memory,       // the backend (or the budget) has no physical memory left
    not_supported,       // the backend or device lacks the capability
    not_mapped,          // the range (or part of it) has no mapping
    already_mapped,      // the range (or part of it) is mapped already
    partial_unmap,       // an unmap that would split a mapping or leave a hole
    invalid_handle,      // a handle that was released, never created, or a bad fd
    access_denied,       // the mapping's access flags forbid the read or write
    busy,                // the object is still in use (mapped, pinned, not fenced)
    budget_exhausted,    // every page in the budget is pinned or in flight
    io_error,            // a file or socket operation failed
    corrupt_data,        // a file or message failed its format or checksum checks
    device_unavailable,  // no driver or device to run on
    backend_failure,     // any other failure reported by the backend
    superseded,          // fits only by evicting what was wanted since it was asked for
};

std::string_view to_string(Errc code) noexcept;

class Error : public std::runtime_error {
public:
    // backend_code_name is empty where the failure did not come from a backend call.
    Error(Errc code, std::string operation, std::string detail, std::string arguments = {},
          std::int64_t backend_code = 0, std::string backend_code_name = {});

    Errc code() const noexcept { return code_; }
    const std::string& operation() const noexcept { return operation_; }
    const std::string& detail() const noexcept { return detail_; }
    const std::string& arguments() const noexcept { return arguments_; }
    std::int64_t backend_code() const noexcept { return backend_code_; }
    const std::string& backend_code_name() const noexcept { return backend_code_name_; }

private:
    Errc code_;
    std::string operation_;
    std::string detail_;
    std::string arguments_;
    std::int64_t backend_code_;
    std::string backend_code_name_;
};

namespace detail {
// Joins the arguments with operator<< into one string: the library's message builder.
template <typename... Parts>
std::string concat(const Parts&... parts) {
    std::ostringstream out;
    (out << ... << parts);
    return out.str();
}
}  // namespace detail

}  // namespace vtpage
