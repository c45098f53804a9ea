# GLSL -> SPIR-V at build time: each shader in shaders/ becomes <name>.spv.inc, its SPIR-V words
# as a C initializer list (glslc -mfmt=num) that a .cpp file includes. Shaders may include
# shaders/vtpage/*.glsl and the generated vtpage/layout.glsl (vtpage_shader_layout).

set(VTPAGE_SHADER_SOURCE_DIR ${PROJECT_SOURCE_DIR}/shaders)
set(VTPAGE_SHADER_OUTPUT_DIR ${PROJECT_BINARY_DIR}/shaders)
set(VTPAGE_LAYOUT_GLSL ${VTPAGE_SHADER_OUTPUT_DIR}/vtpage/layout.glsl)

# Compiles `SHADERS` (names in shaders/, or in SOURCE_DIR where given: a test's own shaders)
# for `target`, which includes the results.
function(vtpage_add_shaders target)
  cmake_parse_arguments(ARG "" "SOURCE_DIR" "SHADERS" ${ARGN})
  if(NOT ARG_SOURCE_DIR)
    set(ARG_SOURCE_DIR ${VTPAGE_SHADER_SOURCE_DIR})
  endif()
  set(outputs "")
  foreach(shader ${ARG_SHADERS})
    set(output ${VTPAGE_SHADER_OUTPUT_DIR}/${shader}.spv.inc)
    # Compute shaders as SPIR-V 1.5: for 1.6 glslc declares the work group size with
    # LocalSizeId, which needs the maintenance4 feature enabled.
    set(target_env vulkan1.3)
    if(shader MATCHES "\\.comp$")
      set(target_env vulkan1.2)
    endif()
    add_custom_command(
      OUTPUT ${output}
      COMMAND ${Vulkan_GLSLC_EXECUTABLE} --target-env=${target_env} -O -Werror -mfmt=num
              -I ${VTPAGE_SHADER_SOURCE_DIR} -I ${VTPAGE_SHADER_OUTPUT_DIR}
              -MD -MF ${output}.d -MT ${output}
              ${ARG_SOURCE_DIR}/${shader} -o ${output}
      DEPENDS ${ARG_SOURCE_DIR}/${shader} ${VTPAGE_LAYOUT_GLSL}
      DEPFILE ${output}.d
      COMMENT "Compiling shader ${shader}")
    list(APPEND outputs ${output})
  endforeach()
  add_custom_target(${target}_shaders DEPENDS ${outputs})
  add_dependencies(${target}_shaders vtpage_shader_layout)
  add_dependencies(${target} ${target}_shaders)
  target_include_directories(${target} PRIVATE ${VTPAGE_SHADER_OUTPUT_DIR})
endfunction()
