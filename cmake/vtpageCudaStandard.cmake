# Part of the installed package (included by vtpageConfig.cmake): CUDA consumers as people write
# them. vtpage's public headers are C++20, in .cu files too.
#
# CMake 3.25 knows no C++20 flag for nvcc, though nvcc has had -std=c++20 since CUDA 12: it
# passes no -std for CUDA_STANDARD 20 and refuses target_compile_features(... cuda_std_20). Where
# the CUDA language is enabled before find_package(vtpage), this teaches the caller's scope both
# (only where CMake does not know them itself). The targets' own -std=c++20 (for CUDA_STANDARD
# unset or 20) covers the rest.
if(CMAKE_CUDA_COMPILER_ID STREQUAL "NVIDIA" AND CMAKE_CUDA_COMPILER_VERSION VERSION_GREATER_EQUAL 12
   AND NOT DEFINED CMAKE_CUDA20_STANDARD_COMPILE_OPTION)
  set(CMAKE_CUDA20_STANDARD_COMPILE_OPTION "-std=c++20")
  set(CMAKE_CUDA20_EXTENSION_COMPILE_OPTION "-std=c++20")
  if(NOT "cuda_std_20" IN_LIST CMAKE_CUDA_COMPILE_FEATURES)
    set(CMAKE_CUDA20_COMPILE_FEATURES cuda_std_20)
    list(APPEND CMAKE_CUDA_COMPILE_FEATURES cuda_std_20)
  endif()
endif()

# A target with .cu files that links vtpage and sets CUDA_STANDARD below 20 (CMAKE_CUDA_STANDARD
# 17, say) would fail inside a vtpage header; it is refused at the end of the directory that
# found the package, with the reason, instead.
function(_vtpage_check_cuda_standards directory)
  get_property(targets DIRECTORY "${directory}" PROPERTY BUILDSYSTEM_TARGETS)
  foreach(target IN LISTS targets)
    get_target_property(type ${target} TYPE)
    if(type STREQUAL "INTERFACE_LIBRARY" OR type STREQUAL "UTILITY")
      continue()
    endif()
    get_target_property(standard ${target} CUDA_STANDARD)
    get_target_property(libraries ${target} LINK_LIBRARIES)
    get_target_property(sources ${target} SOURCES)
    if(standard AND standard LESS 20 AND "${libraries}" MATCHES
       "vtpage::" AND "${sources}" MATCHES "\\.cu(;|$)")
      message(FATAL_ERROR "vtpage: target ${target} compiles its .cu files as C++${standard} "
        "(CUDA_STANDARD ${standard}), but vtpage's headers need C++20. Set CMAKE_CUDA_STANDARD "
        "(or the target's CUDA_STANDARD) to 20, or leave it unset: vtpage then passes nvcc "
        "-std=c++20 itself.")
    endif()
  endforeach()
  get_property(subdirectories DIRECTORY "${directory}" PROPERTY SUBDIRECTORIES)
  foreach(subdirectory IN LISTS subdirectories)
    _vtpage_check_cuda_standards("${subdirectory}")
  endforeach()
endfunction()
get_property(_vtpage_check_deferred DIRECTORY PROPERTY _VTPAGE_CUDA_STANDARD_CHECK)
if(NOT _vtpage_check_deferred)
  set_property(DIRECTORY PROPERTY _VTPAGE_CUDA_STANDARD_CHECK ON)
  cmake_language(DEFER CALL _vtpage_check_cuda_standards "${CMAKE_CURRENT_SOURCE_DIR}")
endif()
unset(_vtpage_check_deferred)
