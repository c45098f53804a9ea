// VTPAGE_UNDER_SANITIZER is defined in builds with AddressSanitizer, ThreadSanitizer or
// MemorySanitizer (gcc and clang spell it differently): memory measurements skip there, since
// the sanitizers' shadow memory and quarantine are what they would measure.
#pragma once

#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || \
    __has_feature(memory_sanitizer)
#define VTPAGE_UNDER_SANITIZER 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define VTPAGE_UNDER_SANITIZER 1
#endif

namespace vtpage::test {
// The same, for code that chooses at compile time without an #if.
#if defined(VTPAGE_UNDER_SANITIZER)
inline constexpr bool under_sanitizer = true;
#else
inline constexpr bool under_sanitizer = false;
#endif
}  // namespace vtpage::test
