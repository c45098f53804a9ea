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
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/vtpage)
