# Compile settings shared by every vtpage target.

if(VTPAGE_SANITIZE)
  # Only C++ code is instrumented: CUDA device code cannot be.
  add_compile_options($<$<COMPILE_LANGUAGE:CXX>:-fsanitize=${VTPAGE_SANITIZE}>
                      $<$<COMPILE_LANGUAGE:CXX>:-fno-omit-frame-pointer>
                      $<$<COMPILE_LANGUAGE:CXX>:-fno-sanitize-recover=all>)
  add_link_options(-fsanitize=${VTPAGE_SANITIZE})
endif()

# Warnings for our own targets (not for consumers of the installed package).
function(vtpage_target_defaults target)
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wshadow=local -Wno-missing-field-initializers>)
endfunction()
