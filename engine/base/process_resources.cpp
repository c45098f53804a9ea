#include "vtpage/base/process_resources.hpp"

#include <dirent.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>

#include "vtpage/base/error.hpp"
#include "vtpage/base/system_error.hpp"

namespace vtpage {

namespace {

std::vector<OpenDescriptor> read_descriptors() {
    DIR* directory = opendir("/proc/self/fd");
    if (!directory) {
        throw_errno(Errc::io_error, "snapshot_process_resources", "cannot list /proc/self/fd");
    }
    const int own = dirfd(directory);
    std::vector<OpenDescriptor> descriptors;
    // NOLINTNEXTLINE(concurrency-mt-unsafe): glibc's readdir is safe on a stream of one thread
    while (dirent* entry = readdir(directory)) {
        char* end = nullptr;
        const long fd = std::strtol(entry->d_name, &end, 10);
        if (end == entry->d_name || *end != '\0' || fd == own) continue;
        const std::string link = std::string("/proc/self/fd/") + entry->d_name;
        char target[PATH_MAX];
        const ssize_t length = readlink(link.c_str(), target, sizeof(target) - 1);
        // A descriptor closed while we read is simply not there any more.
        if (length < 0) continue;
        descriptors.push_back({static_cast<int>(fd), std::string(target, std::size_t(length))});
    }
    closedir(directory);
    std::sort(descriptors.begin(), descriptors.end(),
              [](const OpenDescriptor& a, const OpenDescriptor& b) { return a.fd < b.fd; });
    return descriptors;
}

std::vector<MappedRange> read_mappings() {
    std::ifstream maps("/proc/self/maps");
    if (!maps) {
        throw Error(Errc::io_error, "snapshot_process_resources", "cannot read /proc/self/maps");
    }
    std::vector<MappedRange> mappings;
    std::string line;
    while (std::getline(maps, line)) {
        // start-end perms offset dev inode [path]
        std::istringstream fields(line);
        std::string range, permissions, offset, device, inode;
        if (!(fields >> range >> permissions >> offset >> device >> inode)) continue;
        const auto dash = range.find('-');
        if (dash == std::string::npos) continue;
        MappedRange mapping;
        mapping.start = std::strtoull(range.substr(0, dash).c_str(), nullptr, 16);
        mapping.end = std::strtoull(range.substr(dash + 1).c_str(), nullptr, 16);
        mapping.permissions = permissions;
        std::getline(fields >> std::ws, mapping.path);
        mappings.push_back(std::move(mapping));
    }
    return mappings;
}

std::string mebibytes(std::size_t bytes) {
    std::ostringstream out;
    out.precision(3);
    out << double(bytes) / double(1 << 20) << " MiB";
    return out.str();
}

}  // namespace

ProcessResources snapshot_process_resources() {
    ProcessResources resources;
    resources.descriptors = read_descriptors();
    resources.mappings = read_mappings();
    return resources;
}

ProcessResourceGrowth growth_between(const ProcessResources& before,
                                     const ProcessResources& after) {
    ProcessResourceGrowth growth;
    std::map<int, const std::string*> old_targets;
    for (const auto& descriptor : before.descriptors)
        old_targets[descriptor.fd] = &descriptor.target;
    for (const auto& descriptor : after.descriptors) {
        auto found = old_targets.find(descriptor.fd);
        if (found == old_targets.end() || *found->second != descriptor.target) {
            growth.descriptors.push_back(descriptor);
        }
    }
    // Each of after's ranges minus the parts that before mapped with the same permissions and
    // path. Both lists are sorted by address and their ranges do not overlap one another.
    std::size_t first_candidate = 0;
    for (const MappedRange& mapping : after.mappings) {
        while (first_candidate < before.mappings.size() &&
               before.mappings[first_candidate].end <= mapping.start) {
            ++first_candidate;
        }
        std::uint64_t cursor = mapping.start;
        auto emit = [&](std::uint64_t from, std::uint64_t to) {
            if (from >= to) return;
            MappedRange part = mapping;
            part.start = from;
            part.end = to;
            growth.mapped_bytes += part.size();
            growth.mappings.push_back(std::move(part));
        };
        for (std::size_t i = first_candidate;
             i < before.mappings.size() && before.mappings[i].start < mapping.end; ++i) {
            const MappedRange& old = before.mappings[i];
            if (old.permissions != mapping.permissions || old.path != mapping.path) continue;
            emit(cursor, std::max(cursor, old.start));
            cursor = std::max(cursor, std::min(mapping.end, old.end));
        }
        emit(cursor, mapping.end);
    }
    return growth;
}

std::string describe(const ProcessResourceGrowth& growth, std::size_t limit) {
    std::ostringstream out;
    if (!growth.descriptors.empty()) {
        out << growth.descriptors.size() << " new descriptor(s):";
        for (std::size_t i = 0; i < growth.descriptors.size() && i < limit; ++i) {
            out << " [fd " << growth.descriptors[i].fd << " -> " << growth.descriptors[i].target
                << "]";
        }
        if (growth.descriptors.size() > limit) out << " ...";
    }
    if (!growth.mappings.empty()) {
        if (!growth.descriptors.empty()) out << "; ";
        out << growth.mappings.size() << " new mapping(s), " << mebibytes(growth.mapped_bytes)
            << ":";
        for (std::size_t i = 0; i < growth.mappings.size() && i < limit; ++i) {
            const MappedRange& m = growth.mappings[i];
            out << " [" << std::hex << m.start << "-" << m.end << std::dec << " " << m.permissions
                << " " << mebibytes(m.size()) << (m.path.empty() ? "" : " " + m.path) << "]";
        }
        if (growth.mappings.size() > limit) out << " ...";
    }
    if (growth.empty()) out << "nothing new";
    return out.str();
}

}  // namespace vtpage
