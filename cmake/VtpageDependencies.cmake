# The optional dependencies, each chosen by VTPAGE_WITH_<NAME>:
#   AUTO (default)  used when found; what needs it is left out, with a message, when not
#   ON              required: configuring fails, with the reason, when it is not found
#   OFF             not looked for: what needs it is left out, and the package does not link it
# Each sets VTPAGE_HAS_<NAME> (ON/OFF) for the rest of the build.
#
#   CUDA       the CUDA backend and kernels (a CUDA compiler; /usr/local/cuda is looked in)
#   VULKAN     Vulkan interop, the viewer and the embedding example (Vulkan and glslc)
#   NVTX       NVTX ranges in the trace points (the CUDA toolkit's header-only nvtx3; nothing linked)
#   LIBURING   FileReadQueue's io_uring backend (liburing-dev); threads read otherwise
#   LIBVIPS    vtpage-bake's image input (libvips-dev 8.12 or later); no vtpage-bake otherwise
#   GLFW_IMGUI the viewer's window and HUD (libglfw3-dev, libimgui-dev); no viewer otherwise
#   ASSIMP     the viewer's glTF scenes (libassimp-dev); no scene loading otherwise
# libvips, GLFW/ImGui and assimp are for the programs: looked for only where demos and tools are
# built.

# Declares VTPAGE_WITH_<name> (AUTO, ON or OFF) and normalises what was given: a cache from
# before these took AUTO held a BOOL option whose ON meant "where found", so it becomes AUTO.
function(vtpage_dependency_option name doc)
  get_property(type CACHE VTPAGE_WITH_${name} PROPERTY TYPE)
  if(type STREQUAL "BOOL" AND VTPAGE_WITH_${name})
    set_property(CACHE VTPAGE_WITH_${name} PROPERTY VALUE AUTO)
  endif()
  set(VTPAGE_WITH_${name} AUTO CACHE STRING "${doc}: AUTO (where found), ON (required) or OFF")
  set_property(CACHE VTPAGE_WITH_${name} PROPERTY TYPE STRING)
  set_property(CACHE VTPAGE_WITH_${name} PROPERTY STRINGS AUTO ON OFF)
  string(TOUPPER "${VTPAGE_WITH_${name}}" value)
  if(value MATCHES "^(ON|YES|TRUE|Y|1)$")
    set(value ON)
  elseif(value MATCHES "^(OFF|NO|FALSE|N|0|)$")
    set(value OFF)
  elseif(NOT value STREQUAL "AUTO")
    message(FATAL_ERROR "VTPAGE_WITH_${name} is '${VTPAGE_WITH_${name}}': AUTO, ON or OFF")
  endif()
  set(VTPAGE_WITH_${name} ${value} PARENT_SCOPE)
endfunction()

# After looking for dependency `name` (not looked for when OFF): sets VTPAGE_HAS_<name>.
# `found` is whether it was found, `missing` says what is missing and `left_out` what the build
# leaves out without it.
function(vtpage_dependency_result name found missing left_out)
  if(VTPAGE_WITH_${name} STREQUAL "OFF")
    set(has OFF)
    message(STATUS "vtpage: VTPAGE_WITH_${name}=OFF: ${left_out}")
  elseif(found)
    set(has ON)
  elseif(VTPAGE_WITH_${name} STREQUAL "ON")
    message(FATAL_ERROR "vtpage: VTPAGE_WITH_${name}=ON, but ${missing}. Install it, or "
                        "configure with -DVTPAGE_WITH_${name}=AUTO or OFF.")
  else()
    set(has OFF)
    message(STATUS "vtpage: ${missing}: ${left_out}")
  endif()
  set(VTPAGE_HAS_${name} ${has} PARENT_SCOPE)
endfunction()

# Turing through Hopper as kernel images, and Hopper's PTX, which the driver compiles for newer
# GPUs at load time. tests/cuda/check_cuda_architectures.cmake (CTest vtpage_cuda_architectures)
# checks the built objects against this list.
set(VTPAGE_DEFAULT_CUDA_ARCHITECTURES 75-real 80-real 86-real 89-real 90)

# CUDA.
vtpage_dependency_option(CUDA "The CUDA backend and kernels")
set(cuda_found OFF)
if(NOT VTPAGE_WITH_CUDA STREQUAL "OFF")
  if(NOT CMAKE_CUDA_COMPILER AND NOT DEFINED ENV{CUDACXX} AND EXISTS /usr/local/cuda/bin/nvcc)
    set(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc)
  endif()
  include(CheckLanguage)
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    set(cuda_found ON)
  endif()
endif()
vtpage_dependency_result(CUDA ${cuda_found} "no CUDA compiler was found (nvcc on PATH, CUDACXX \
or /usr/local/cuda/bin/nvcc)" "the CUDA backend and kernels are left out")
set(VTPAGE_CUDA_DEFAULT_ARCHITECTURES_USED OFF)
if(VTPAGE_HAS_CUDA)
  # A build folder configured when the default was Hopper alone takes the new default.
  get_property(help CACHE CMAKE_CUDA_ARCHITECTURES PROPERTY HELPSTRING)
  if(CMAKE_CUDA_ARCHITECTURES STREQUAL "90" AND help STREQUAL "CUDA architectures")
    unset(CMAKE_CUDA_ARCHITECTURES CACHE)
  endif()
  if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
    set(CMAKE_CUDA_ARCHITECTURES "${VTPAGE_DEFAULT_CUDA_ARCHITECTURES}" CACHE STRING
        "CUDA architectures (default: kernels for 75 80 86 89 90, PTX for 90; 'native': this GPU)")
  endif()
  if(CMAKE_CUDA_ARCHITECTURES STREQUAL "${VTPAGE_DEFAULT_CUDA_ARCHITECTURES}")
    set(VTPAGE_CUDA_DEFAULT_ARCHITECTURES_USED ON)
  endif()
  enable_language(CUDA)
  find_package(CUDAToolkit REQUIRED)
  # Our own .cu files are C++17 and include no public header. (CMake 3.25 knows no C++20 flag for
  # nvcc; engine/CMakeLists.txt gives consumers' .cu files theirs.)
  set(CMAKE_CUDA_STANDARD 17)
  set(CMAKE_CUDA_STANDARD_REQUIRED ON)
  # The static runtime finds the driver at run time: no binary of ours links libcuda.
  set(CMAKE_CUDA_RUNTIME_LIBRARY Static)
endif()

# Vulkan (and glslc, which compiles the library's shaders).
vtpage_dependency_option(VULKAN "Vulkan interop, the viewer and the embedding example")
set(vulkan_found OFF)
if(NOT VTPAGE_WITH_VULKAN STREQUAL "OFF")
  find_package(Vulkan QUIET COMPONENTS glslc)
  if(Vulkan_FOUND AND Vulkan_GLSLC_EXECUTABLE)
    set(vulkan_found ON)
  endif()
endif()
vtpage_dependency_result(VULKAN ${vulkan_found} "Vulkan (libvulkan-dev) or glslc was not found"
                         "Vulkan interop, the viewer and the embedding example are left out")
if(VTPAGE_HAS_VULKAN)
  include(VtpageShaders)  # GLSL -> SPIR-V for the library and the demos
endif()

# NVTX: nvtx3 is header-only (it finds a profiler's injection library at run time), so only
# the header is looked for: in the CUDA toolkit found above, else in /usr/local/cuda*.
vtpage_dependency_option(NVTX "NVTX ranges in the trace points (nvtx3, header-only)")
set(VTPAGE_NVTX_INCLUDE_DIR "")
if(NOT VTPAGE_WITH_NVTX STREQUAL "OFF")
  file(GLOB cuda_includes /usr/local/cuda/include /usr/local/cuda-*/include)
  find_path(VTPAGE_NVTX_INCLUDE nvtx3/nvToolsExt.h
            HINTS ${CUDAToolkit_INCLUDE_DIRS} PATHS ${cuda_includes})
  if(VTPAGE_NVTX_INCLUDE)
    set(VTPAGE_NVTX_INCLUDE_DIR ${VTPAGE_NVTX_INCLUDE})
  endif()
endif()
if(VTPAGE_NVTX_INCLUDE_DIR)
  set(nvtx_found ON)
else()
  set(nvtx_found OFF)
endif()
vtpage_dependency_result(NVTX ${nvtx_found} "nvtx3/nvToolsExt.h (the CUDA toolkit) was not found"
                         "the trace points make no NVTX ranges")

find_package(PkgConfig REQUIRED)  # zstd (required) and liburing, libvips

# liburing.
vtpage_dependency_option(LIBURING "FileReadQueue's io_uring backend (liburing)")
set(VTPAGE_URING_FOUND OFF)
if(NOT VTPAGE_WITH_LIBURING STREQUAL "OFF")
  pkg_check_modules(VTPAGE_URING QUIET IMPORTED_TARGET GLOBAL liburing)
endif()
vtpage_dependency_result(LIBURING "${VTPAGE_URING_FOUND}" "liburing (liburing-dev) was not found"
                         "FileReadQueue reads with threads only (no io_uring)")

# libvips and GLFW / Dear ImGui: the programs only.
vtpage_dependency_option(LIBVIPS "vtpage-bake's image input (libvips 8.12 or later)")
vtpage_dependency_option(GLFW_IMGUI "The viewer's window and HUD (GLFW and Dear ImGui)")
vtpage_dependency_option(ASSIMP "The viewer's glTF scenes (assimp)")
set(VIPS_FOUND OFF)
set(VTPAGE_ASSIMP_FOUND OFF)
set(glfw_imgui_found OFF)
if(VTPAGE_BUILD_DEMOS)
  if(NOT VTPAGE_WITH_LIBVIPS STREQUAL "OFF")
    pkg_check_modules(VIPS QUIET IMPORTED_TARGET GLOBAL vips>=8.12)
  endif()
  if(NOT VTPAGE_WITH_GLFW_IMGUI STREQUAL "OFF")
    find_package(glfw3 CONFIG QUIET)
    find_path(VTPAGE_IMGUI_INCLUDE_DIR imgui.h PATH_SUFFIXES imgui)
    find_library(VTPAGE_IMGUI_LIBRARY imgui)
    if(glfw3_FOUND AND VTPAGE_IMGUI_INCLUDE_DIR AND VTPAGE_IMGUI_LIBRARY)
      set(glfw_imgui_found ON)
    endif()
  endif()
  if(NOT VTPAGE_WITH_ASSIMP STREQUAL "OFF")
    pkg_check_modules(VTPAGE_ASSIMP QUIET IMPORTED_TARGET GLOBAL assimp>=5.2)
  endif()
  vtpage_dependency_result(LIBVIPS "${VIPS_FOUND}" "libvips 8.12 or later (libvips-dev) was not \
found" "vtpage-bake and the out-of-core bake input are left out")
  vtpage_dependency_result(ASSIMP "${VTPAGE_ASSIMP_FOUND}" "assimp 5.2 or later (libassimp-dev) \
was not found" "the viewer's glTF scene loader and its tests are left out")
  vtpage_dependency_result(GLFW_IMGUI ${glfw_imgui_found} "GLFW (libglfw3-dev) or Dear ImGui \
(libimgui-dev) was not found" "vtpage-viewer and the window tests are left out")
else()
  set(VTPAGE_HAS_LIBVIPS OFF)
  set(VTPAGE_HAS_GLFW_IMGUI OFF)
  set(VTPAGE_HAS_ASSIMP OFF)
endif()
