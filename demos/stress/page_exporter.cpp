#include "page_exporter.hpp"

namespace vtpage::stress {

void PageExporter::attach(PagePoolSettings& settings) {
    settings.on_created = [this](const PooledPage& page) {
        UniqueFd fd = backend_.export_fd(page.handle);  // a refusal undoes the creation
        std::lock_guard lock(mutex_);
        ++exports_;
        if (!fds_.emplace(page.slot, std::move(fd)).second) {
            stats_.integrity_error(detail::concat("slot ", page.slot, " created twice"));
        }
    };
    settings.on_destroyed = [this](const PooledPage& page) {
        std::lock_guard lock(mutex_);
        if (fds_.erase(page.slot) == 0) {
            stats_.integrity_error(
                detail::concat("slot ", page.slot, " destroyed twice or never created"));
        }
    };
}

std::size_t PageExporter::open_descriptors() const {
    std::lock_guard lock(mutex_);
    return fds_.size();
}

std::uint64_t PageExporter::exports() const {
    std::lock_guard lock(mutex_);
    return exports_;
}

}  // namespace vtpage::stress
