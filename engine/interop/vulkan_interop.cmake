# Vulkan interop: sources, the shaders (GLSL -> SPIR-V by glslc at build time, embedded in the
# library) and the GLSL header of layout constants generated from the C++ headers.

set(VTPAGE_VULKAN_INTEROP_SOURCES
  vulkan_error.cpp vulkan_context.cpp vulkan_buffer.cpp vulkan_image.cpp vulkan_timeline.cpp
  vulkan_page_importer.cpp vulkan_indirection_table.cpp vulkan_texture_directory.cpp
  vulkan_shaders.cpp vulkan_ground_plane_pipeline.cpp vulkan_indirection_scatter.cpp
  vulkan_frame_slot.cpp
  vulkan_renderer.cpp vulkan_swapchain.cpp vulkan_screenshot.cpp vulkan_cuda_timeline.cpp)
set(VTPAGE_VULKAN_INTEROP_DEPENDS Vulkan::Vulkan)

set(vtpage_shader_source_dir ${PROJECT_SOURCE_DIR}/shaders)
set(vtpage_shader_output_dir ${PROJECT_BINARY_DIR}/shaders)

# The generator: a tiny program that prints the constants of texture_layout.hpp and
# feedback_entry.hpp as GLSL #defines.
add_executable(vtpage_shader_layout_generator ${vtpage_shader_source_dir}/layout_generator.cpp)
target_include_directories(vtpage_shader_layout_generator PRIVATE
  ${PROJECT_SOURCE_DIR}/engine/include)
target_compile_features(vtpage_shader_layout_generator PRIVATE cxx_std_20)
vtpage_target_defaults(vtpage_shader_layout_generator)
set(vtpage_layout_glsl ${vtpage_shader_output_dir}/vtpage/layout.glsl)
add_custom_command(
  OUTPUT ${vtpage_layout_glsl}
  COMMAND ${CMAKE_COMMAND} -E make_directory ${vtpage_shader_output_dir}/vtpage
  COMMAND vtpage_shader_layout_generator ${vtpage_layout_glsl}
  DEPENDS vtpage_shader_layout_generator
  COMMENT "Generating vtpage/layout.glsl from the layout headers")

# Each shader becomes <name>.spv.inc: its SPIR-V words as a C initializer list (glslc -mfmt=num)
# that vulkan_shaders.cpp includes.
set(vtpage_shaders ground_plane.vert ground_plane.frag ground_plane_feedback.frag
                   indirection_scatter.comp)
set(vtpage_shader_outputs "")
foreach(shader ${vtpage_shaders})
  set(output ${vtpage_shader_output_dir}/${shader}.spv.inc)
  # Compute shaders as SPIR-V 1.5: for 1.6 glslc declares the work group size with LocalSizeId,
  # which needs the maintenance4 feature enabled.
  set(target_env vulkan1.3)
  if(shader MATCHES "\\.comp$")
    set(target_env vulkan1.2)
  endif()
  add_custom_command(
    OUTPUT ${output}
    COMMAND ${Vulkan_GLSLC_EXECUTABLE} --target-env=${target_env} -O -Werror -mfmt=num
            -I ${vtpage_shader_source_dir} -I ${vtpage_shader_output_dir}
            -MD -MF ${output}.d -MT ${output}
            ${vtpage_shader_source_dir}/${shader} -o ${output}
    DEPENDS ${vtpage_shader_source_dir}/${shader} ${vtpage_layout_glsl}
    DEPFILE ${output}.d
    COMMENT "Compiling shader ${shader}")
  list(APPEND vtpage_shader_outputs ${output})
endforeach()
add_custom_target(vtpage_shaders DEPENDS ${vtpage_shader_outputs})

function(vtpage_vulkan_interop_finish target)
  add_dependencies(${target} vtpage_shaders)
  target_include_directories(${target} PRIVATE ${vtpage_shader_output_dir})
  set_source_files_properties(vulkan_shaders.cpp PROPERTIES OBJECT_DEPENDS
                              "${vtpage_shader_outputs}")
  if(VTPAGE_HAS_CUDA)
    # cudaImportExternalSemaphore & co. from the static runtime: no binary links libcuda.
    target_link_libraries(${target} PUBLIC CUDA::cudart_static)
    target_compile_definitions(${target} PRIVATE VTPAGE_INTEROP_WITH_CUDA=1)
  endif()
  # The GLSL include an embedding app samples virtual textures with.
  install(FILES ${vtpage_shader_source_dir}/vtpage/virtual_texture.glsl ${vtpage_layout_glsl}
          DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/vtpage/shaders/vtpage)
endfunction()
