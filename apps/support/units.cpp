#include "vtpage/app/units.hpp"

#include <cstdio>

namespace vtpage::app {

std::string mib(std::size_t bytes) {
    char text[32];
    std::snprintf(text, sizeof(text), "%.0f MiB", double(bytes) / double(std::size_t(1) << 20));
    return text;
}

std::string pool_usage(std::size_t reserved, std::size_t reserved_high, std::size_t used,
                       std::size_t used_high) {
    return "reserved " + mib(reserved) + " (high " + mib(reserved_high) + "), used " + mib(used) +
           " (high " + mib(used_high) + ")";
}

}  // namespace vtpage::app
