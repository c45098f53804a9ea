# Installs the library so that find_package(vtpage CONFIG) gives vtpage::vtpage.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

install(TARGETS ${VTPAGE_LIBRARY_TARGETS} EXPORT vtpageTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/engine/include/vtpage
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} FILES_MATCHING PATTERN "*.hpp")
install(FILES ${PROJECT_BINARY_DIR}/include/vtpage/config.hpp
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/vtpage)
install(EXPORT vtpageTargets NAMESPACE vtpage::
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/vtpage)
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/vtpageConfig.cmake.in
  ${PROJECT_BINARY_DIR}/vtpageConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/vtpage)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/vtpageConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/vtpageConfig.cmake
              ${PROJECT_BINARY_DIR}/vtpageConfigVersion.cmake
              ${PROJECT_SOURCE_DIR}/cmake/vtpageCudaStandard.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/vtpage)

# vtpage.pc for builds that use pkg-config: its link dependencies follow the VTPAGE_WITH_*
# options, as the CMake package's do.
set(VTPAGE_PC_LIBS "")
set(VTPAGE_PC_LAYERS ${VTPAGE_LIBRARY_TARGETS})
list(REMOVE_ITEM VTPAGE_PC_LAYERS vtpage)
list(REVERSE VTPAGE_PC_LAYERS)  # each layer before the ones it calls
foreach(layer IN LISTS VTPAGE_PC_LAYERS)
  string(APPEND VTPAGE_PC_LIBS "-l${layer} ")
endforeach()
set(VTPAGE_PC_REQUIRES "libzstd libxxhash")
if(VTPAGE_HAS_LIBURING)
  string(APPEND VTPAGE_PC_REQUIRES " liburing")
endif()
if(VTPAGE_HAS_VULKAN)
  string(APPEND VTPAGE_PC_REQUIRES " vulkan")
endif()
if(VTPAGE_HAS_CUDA)
  # The CUDA runtime, statically: it opens the driver at run time.
  get_filename_component(cudart_dir "${CUDA_cudart_static_LIBRARY}" DIRECTORY)
  string(APPEND VTPAGE_PC_LIBS "-L${cudart_dir} -lcudart_static -lrt ")
endif()
if(CMAKE_DL_LIBS)
  string(APPEND VTPAGE_PC_LIBS "-l${CMAKE_DL_LIBS} ")
endif()
string(APPEND VTPAGE_PC_LIBS "-pthread")
set(pc_dir ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
file(RELATIVE_PATH VTPAGE_PC_PREFIX_FROM_PCDIR /prefix/${pc_dir} /prefix)
string(REGEX REPLACE "/$" "" VTPAGE_PC_PREFIX_FROM_PCDIR "${VTPAGE_PC_PREFIX_FROM_PCDIR}")  # ../..
configure_file(${PROJECT_SOURCE_DIR}/cmake/vtpage.pc.in ${PROJECT_BINARY_DIR}/vtpage.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/vtpage.pc DESTINATION ${pc_dir})
