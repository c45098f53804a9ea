# Runs a program and checks its exit status, and optionally its output (stdout and stderr).
#   cmake -DTOOL=<path> "-DARGS=<args;...>" -DEXPECT_EXIT=<n> [-DEXPECT_OUTPUT=<regex>]
#         -P check_program_run.cmake
# Other scripts include it and check more (tests/stress/check_stress_run.cmake).
execute_process(COMMAND ${TOOL} ${ARGS} RESULT_VARIABLE status OUTPUT_VARIABLE out
                ERROR_VARIABLE err)
message("${out}")
message("${err}")
get_filename_component(tool_name "${TOOL}" NAME)
if(NOT "${status}" STREQUAL "${EXPECT_EXIT}")
  message(FATAL_ERROR "${tool_name} exited with ${status}, expected ${EXPECT_EXIT}")
endif()
if(DEFINED EXPECT_OUTPUT AND NOT "${out}${err}" MATCHES "${EXPECT_OUTPUT}")
  message(FATAL_ERROR "the output does not match '${EXPECT_OUTPUT}'")
endif()
