// Linked into every program that loads Vulkan or assimp (the viewer, the Vulkan and scene test
// binaries, the scene fuzz target) for the sanitizer builds, faults of those libraries that the
// sanitizers see:
// - The Khronos validation layer (1.3.239) and lavapipe (Mesa 22.3): small leaks per instance
//   and device, a race between the layer's fence thread and the destruction of its lock, and now
//   and then a lock-order cycle among three of the layer's own locks. The loader unloads both
//   with the instance, which leaves the sanitizers no name to tell them by; kept loaded, their
//   frames carry their names and the suppressions below match exactly those.
// - assimp (5.2.5): a buffer decoded from a data URI is leaked when the scene is then refused.
#if defined(__has_feature)
#if __has_feature(address_sanitizer) && !defined(__SANITIZE_ADDRESS__)
#define __SANITIZE_ADDRESS__ 1  // clang's spelling of what gcc defines
#endif
#if __has_feature(thread_sanitizer) && !defined(__SANITIZE_THREAD__)
#define __SANITIZE_THREAD__ 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#include <dlfcn.h>

#include <initializer_list>

namespace {
const bool vulkan_libraries_kept_loaded = [] {
    for (const char* library : {"libVkLayer_khronos_validation.so", "libvulkan_lvp.so"}) {
        dlopen(library, RTLD_NOW | RTLD_NODELETE);  // where installed; the loader's own load
    }                                               // then finds this one
    return true;
}();
}  // namespace
#endif
#if defined(__SANITIZE_ADDRESS__)
extern "C" const char* __lsan_default_suppressions() {
    return "leak:libVkLayer_khronos_validation.so\nleak:libvulkan_lvp.so\nleak:libassimp.so\n";
}
#endif
#if defined(__SANITIZE_THREAD__)
extern "C" const char* __tsan_default_suppressions() {
    return "race:libVkLayer_khronos_validation.so\nrace:libvulkan_lvp.so\n"
           "mutex:libVkLayer_khronos_validation.so\ndeadlock:libVkLayer_khronos_validation.so\n";
}
#endif
