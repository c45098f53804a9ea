// How many descriptors this process has open. Taken before and after some work, the two are
// equal when the work closed every descriptor it opened.
#pragma once

#include <cstddef>

#include "vtpage/base/process_resources.hpp"

namespace vtpage::test {

inline std::size_t open_descriptor_count() {
    return snapshot_process_resources().descriptors.size();
}

}  // namespace vtpage::test
