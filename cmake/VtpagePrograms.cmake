# CTest checks of the command-line programs (demos/, tools/, bench/).

set(VTPAGE_CHECK_PROGRAM_RUN ${CMAKE_CURRENT_LIST_DIR}/check_program_run.cmake)

# A run of `target` with the given arguments that must exit with `exit` and print output
# matching `regex` (on stdout or stderr).
function(vtpage_add_program_check name target exit regex)
  if(NOT VTPAGE_BUILD_TESTS)
    return()
  endif()
  add_test(NAME ${name} COMMAND ${CMAKE_COMMAND} -DTOOL=$<TARGET_FILE:${target}>
           "-DARGS=${ARGN}" -DEXPECT_EXIT=${exit} "-DEXPECT_OUTPUT=${regex}"
           -P ${VTPAGE_CHECK_PROGRAM_RUN})
  set_tests_properties(${name} PROPERTIES TIMEOUT 120)
endfunction()

# The program rejects a flag it does not know: exit 2, and a message that names it.
function(vtpage_add_bad_flag_check target)
  vtpage_add_program_check(${target}_bad_flag ${target} 2 "${target}: .*--no-such-flag"
                           --no-such-flag)
endfunction()

# Every program (an executable named vtpage-* in `directories` or below) answers --version with
# "<name> <project version>" and exits 0. Called once every program is added.
function(vtpage_add_version_checks)
  if(NOT VTPAGE_BUILD_TESTS)
    return()
  endif()
  set(pending ${ARGN})
  list(TRANSFORM pending PREPEND ${PROJECT_SOURCE_DIR}/)
  string(REPLACE "." "\\." version "${PROJECT_VERSION}")
  while(pending)
    list(POP_FRONT pending directory)
    get_property(subdirectories DIRECTORY ${directory} PROPERTY SUBDIRECTORIES)
    list(APPEND pending ${subdirectories})
    get_property(targets DIRECTORY ${directory} PROPERTY BUILDSYSTEM_TARGETS)
    foreach(target IN LISTS targets)
      get_target_property(type ${target} TYPE)
      if(type STREQUAL "EXECUTABLE" AND target MATCHES "^vtpage-")
        vtpage_add_program_check(${target}_version ${target} 0 "^${target} ${version}.?$"
                                 --version)
      endif()
    endforeach()
  endwhile()
endfunction()
