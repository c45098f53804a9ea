#include "vtpage/core/eviction_policy.hpp"

#include <string>

#include "vtpage/base/error.hpp"

namespace vtpage {

std::unique_ptr<EvictionPolicy> make_eviction_policy(std::string_view name) {
    if (name == "lru") return make_lru_policy();
    if (name == "clock") return make_clock_policy();
    throw Error(Errc::invalid_argument, "make_eviction_policy",
                "unknown eviction policy (choose lru or clock)", "name=" + std::string(name));
}

}  // namespace vtpage
