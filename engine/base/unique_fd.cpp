#include "vtpage/base/unique_fd.hpp"

#include <unistd.h>

namespace vtpage {

void UniqueFd::reset(int fd) noexcept {
    if (fd_ >= 0 && fd_ != fd) ::close(fd_);
    fd_ = fd;
}

}  // namespace vtpage
