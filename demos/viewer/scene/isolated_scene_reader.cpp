#include "scene/isolated_scene_reader.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <new>
#include <string>
#include <vector>

#include "scene/child_output.hpp"
#include "scene/scene_wire.hpp"

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define VTPAGE_SCENE_READER_UNDER_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define VTPAGE_SCENE_READER_UNDER_SANITIZER 1
#endif
#endif

namespace vtpage::viewer {
namespace {

using Clock = std::chrono::steady_clock;

// The child's reply: a tag byte, then the scene's bytes (tag 0) or a message (tag 1).
constexpr std::uint8_t reply_scene = 0, reply_error = 1;

bool write_all(int fd, const std::uint8_t* bytes, std::size_t size) {
    while (size > 0) {
        const ssize_t written = ::write(fd, bytes, size);
        if (written < 0 && errno == EINTR) continue;
        if (written <= 0) return false;
        bytes += written;
        size -= std::size_t(written);
    }
    return true;
}

#if defined(VTPAGE_SCENE_READER_UNDER_SANITIZER)
// The address space the process has mapped, from /proc/self/statm (no allocation: this runs
// in a forked child); 0 where it cannot be read.
std::uint64_t mapped_bytes() {
    const int fd = ::open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 0;
    char text[64] = {};
    const ssize_t got = ::read(fd, text, sizeof text - 1);
    ::close(fd);
    std::uint64_t pages = 0;
    for (ssize_t i = 0; i < got && text[i] >= '0' && text[i] <= '9'; ++i) {
        pages = pages * 10 + std::uint64_t(text[i] - '0');
    }
    return pages * std::uint64_t(::sysconf(_SC_PAGESIZE));
}
#endif

// The child's address-space limit: memory_bytes, or under a sanitizer, whose shadow memory alone
// is far more address space than that and is mapped already, memory_bytes beyond what is mapped.
rlim_t address_space_limit(std::uint64_t memory_bytes) {
#if defined(VTPAGE_SCENE_READER_UNDER_SANITIZER)
    const std::uint64_t mapped = mapped_bytes();
    if (mapped == 0) return RLIM_INFINITY;
    return rlim_t(mapped + memory_bytes);
#else
    return rlim_t(memory_bytes);
#endif
}

[[noreturn]] void child_main(int fd, const std::filesystem::path& path,
                             const IsolatedReadSettings& settings) {
    const rlim_t memory = address_space_limit(settings.memory_bytes);
    const rlimit address_space{memory, memory};
    ::setrlimit(RLIMIT_AS, &address_space);
    const auto seconds = rlim_t(settings.deadline.count() / 1000 + 1);
    const rlimit cpu{seconds, seconds};
    ::setrlimit(RLIMIT_CPU, &cpu);
    std::vector<std::uint8_t> reply{reply_scene};
    try {
        const std::vector<std::uint8_t> scene =
            encode_scene(load_gltf_scene(path, settings.limits));
        reply.insert(reply.end(), scene.begin(), scene.end());
    } catch (const SceneError& error) {
        reply = {reply_error};
        reply.insert(reply.end(), error.what(), error.what() + std::strlen(error.what()));
    } catch (const std::bad_alloc&) {
        const std::string message = path.string() + ": reading it needs more than the " +
                                    std::to_string(settings.memory_bytes >> 20) + " MiB allowed";
        reply = {reply_error};
        reply.insert(reply.end(), message.begin(), message.end());
    } catch (const std::exception& error) {
        const std::string message = path.string() + ": " + error.what();
        reply = {reply_error};
        reply.insert(reply.end(), message.begin(), message.end());
    }
    _exit(write_all(fd, reply.data(), reply.size()) ? 0 : 1);
}

// The most bytes a scene within the limits encodes to: its vertices, triangles, instances and
// embedded images, and room for names.
std::uint64_t most_reply_bytes(const GltfSceneLimits& limits) {
    return std::uint64_t(limits.max_vertices) * 32 + std::uint64_t(limits.max_triangles) * 12 +
           std::uint64_t(limits.max_instances) * 80 + limits.max_file_bytes +
           (std::uint64_t{1} << 24);
}

std::string how_it_ended(int status) {
    if (WIFSIGNALED(status)) {
        const int signal = WTERMSIG(status);
        if (signal == SIGXCPU) return "reading it took more CPU time than allowed";
        const char* description = sigdescr_np(signal);  // strsignal is not thread-safe
        return "the scene reader crashed on it (signal " + std::to_string(signal) +
               (description ? std::string(", ") + description : std::string()) + ")";
    }
    // A sanitizer ends a crashed process with a status rather than the signal.
    return "the scene reader crashed on it (it ended with status " +
           std::to_string(WEXITSTATUS(status)) + ")";
}

}  // namespace

GltfScene read_gltf_scene_isolated(const std::filesystem::path& path,
                                   const IsolatedReadSettings& settings) {
    const std::string name = path.string();
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) throw SceneError(name + ": no pipe for the scene reader");
    const pid_t pid = ::fork();
    if (pid < 0) {
        ::close(fds[0]);
        ::close(fds[1]);
        throw SceneError(name + ": the scene reader could not be started");
    }
    if (pid == 0) {
        ::close(fds[0]);
        child_main(fds[1], path, settings);
    }
    ::close(fds[1]);
    std::vector<std::uint8_t> reply;
    const ChildOutput read = read_child_output(fds[0], Clock::now() + settings.deadline,
                                               most_reply_bytes(settings.limits), reply);
    ::close(fds[0]);
    if (read != ChildOutput::whole) ::kill(pid, SIGKILL);
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
    if (read == ChildOutput::late) {
        throw SceneError(name + ": reading it took longer than " +
                         std::to_string(settings.deadline.count()) + " ms");
    }
    if (read == ChildOutput::too_long)
        throw SceneError(name + ": the scene is larger than its limits allow");
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || reply.empty()) {
        throw SceneError(name + ": " + how_it_ended(status));
    }
    if (reply[0] == reply_error) throw SceneError(std::string(reply.begin() + 1, reply.end()));
    if (reply[0] != reply_scene)
        throw SceneError(name + ": the scene reader's reply is not a scene");
    return decode_scene(std::span(reply).subspan(1), settings.limits, name);
}

}  // namespace vtpage::viewer
