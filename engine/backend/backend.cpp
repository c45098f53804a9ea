#include "vtpage/backend/backend.hpp"

namespace vtpage {

std::string_view to_string(Access access) noexcept {
    switch (access) {
        case Access::none:
            return "none";
        case Access::read:
            return "read";
        case Access::read_write:
            return "read_write";
    }
    return "?";
}

}  // namespace vtpage
