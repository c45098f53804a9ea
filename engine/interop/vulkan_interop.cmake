# Vulkan interop: sources, the shaders (GLSL -> SPIR-V by glslc at build time, embedded in the
# library) and the GLSL header of layout constants generated from the C++ headers.

set(VTPAGE_VULKAN_INTEROP_SOURCES
  vulkan_error.cpp vulkan_context.cpp vulkan_buffer.cpp vulkan_image.cpp vulkan_barrier.cpp
  vulkan_lod_probe.cpp vulkan_sampler_set.cpp
  vulkan_timeline.cpp vulkan_page_importer.cpp vulkan_indirection_table.cpp
  vulkan_texture_directory.cpp
  vulkan_shader_module.cpp vulkan_shaders.cpp vulkan_compute_pipeline.cpp
  vulkan_indirection_scatter.cpp
  vulkan_cuda_timeline.cpp vulkan_device_handles.cpp virtual_texture_streaming.cpp
  visible_latency.cpp streaming_governance.cpp decode_thread_governance.cpp)
set(VTPAGE_VULKAN_INTEROP_DEPENDS Vulkan::Vulkan)

# The generator: a tiny program that prints the constants of texture_layout.hpp and
# feedback_entry.hpp as GLSL #defines.
add_executable(vtpage_shader_layout_generator ${VTPAGE_SHADER_SOURCE_DIR}/layout_generator.cpp)
target_include_directories(vtpage_shader_layout_generator PRIVATE
  ${PROJECT_SOURCE_DIR}/engine/include)
target_compile_features(vtpage_shader_layout_generator PRIVATE cxx_std_20)
vtpage_target_defaults(vtpage_shader_layout_generator)
add_custom_command(
  OUTPUT ${VTPAGE_LAYOUT_GLSL}
  COMMAND ${CMAKE_COMMAND} -E make_directory ${VTPAGE_SHADER_OUTPUT_DIR}/vtpage
  COMMAND vtpage_shader_layout_generator ${VTPAGE_LAYOUT_GLSL}
  DEPENDS vtpage_shader_layout_generator
  COMMENT "Generating vtpage/layout.glsl from the layout headers")
add_custom_target(vtpage_shader_layout DEPENDS ${VTPAGE_LAYOUT_GLSL})

function(vtpage_vulkan_interop_finish target)
  vtpage_add_shaders(${target} SHADERS indirection_scatter.comp)
  if(VTPAGE_HAS_CUDA)
    # cudaImportExternalSemaphore & co. from the static runtime: no binary links libcuda.
    target_link_libraries(${target} PUBLIC CUDA::cudart_static)
    target_compile_definitions(${target} PRIVATE VTPAGE_INTEROP_WITH_CUDA=1)
  endif()
  # The GLSL include an embedding app samples virtual textures with.
  install(FILES ${VTPAGE_SHADER_SOURCE_DIR}/vtpage/virtual_texture.glsl ${VTPAGE_LAYOUT_GLSL}
          DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/vtpage/shaders/vtpage)
endfunction()
