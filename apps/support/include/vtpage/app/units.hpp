// How the programs write sizes, so that the same statistics read the same in every tool.
#pragma once

#include <cstddef>
#include <string>

namespace vtpage::app {

// "12 MiB" (rounded to whole MiB).
std::string mib(std::size_t bytes);

// "reserved 64 MiB (high 64 MiB), used 56 MiB (high 64 MiB)": the words of the page pool's and
// the stream-ordered pools' statistics.
std::string pool_usage(std::size_t reserved, std::size_t reserved_high, std::size_t used,
                       std::size_t used_high);

}  // namespace vtpage::app
