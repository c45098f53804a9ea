# Compile settings shared by every vtpage target.

if(VTPAGE_SANITIZE)
  # Only C++ code is instrumented: CUDA device code cannot be.
  add_compile_options($<$<COMPILE_LANGUAGE:CXX>:-fsanitize=${VTPAGE_SANITIZE}>
                      $<$<COMPILE_LANGUAGE:CXX>:-fno-omit-frame-pointer>
                      $<$<COMPILE_LANGUAGE:CXX>:-fno-sanitize-recover=all>)
  # Debug builds at -O1, as the sanitizers' docs advise: asserts stay, and the suite runs about
  # twice as fast as at -O0 (ThreadSanitizer's most of all).
  add_compile_options($<$<AND:$<COMPILE_LANGUAGE:CXX>,$<CONFIG:Debug>>:-O1>)
  add_link_options(-fsanitize=${VTPAGE_SANITIZE})
endif()

# The fuzz build (tests/fuzz, .ci/fuzz): every C++ file gets libFuzzer's coverage
# instrumentation, AddressSanitizer and UndefinedBehaviorSanitizer; the fuzz targets link
# libFuzzer itself. clang only (Debian: clang, libclang-rt-14-dev).
if(VTPAGE_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "VTPAGE_FUZZ needs clang (CXX=clang++ CC=clang)")
  endif()
  add_compile_options($<$<COMPILE_LANGUAGE:CXX>:-fsanitize=fuzzer-no-link,address,undefined>
                      $<$<COMPILE_LANGUAGE:CXX>:-fno-omit-frame-pointer>
                      $<$<COMPILE_LANGUAGE:CXX>:-fno-sanitize-recover=all>)
  add_link_options(-fsanitize=address,undefined)
endif()

# Warnings for our own targets (not for consumers of the installed package).
function(vtpage_target_defaults target)
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wno-missing-field-initializers>
    $<$<AND:$<COMPILE_LANGUAGE:CXX>,$<CXX_COMPILER_ID:GNU>>:-Wshadow=local>)
endfunction()
