# Runs vtpage-stress, checks its exit status and output (check_program_run.cmake), then the
# fields of its JSON report.
#   cmake -DTOOL=<path> "-DARGS=<args;...>" -DEXPECT_EXIT=<n> [-DEXPECT_OUTPUT=<regex>]
#         -DJSON=<path> -P check_stress_run.cmake
include(${CMAKE_CURRENT_LIST_DIR}/../../cmake/check_program_run.cmake)
file(READ "${JSON}" json)
foreach(field ops ops_per_second integrity_errors leaked_bytes commits evictions pool_hits
              p99_us)
  string(JSON value ERROR_VARIABLE missing GET "${json}" ${field})
  if(missing)
    message(FATAL_ERROR "the JSON report has no '${field}': ${missing}")
  endif()
endforeach()
string(JSON ops GET "${json}" ops)
string(JSON commits GET "${json}" commits)
string(JSON errors GET "${json}" integrity_errors)
string(JSON leaked GET "${json}" leaked_bytes)
string(JSON patterns LENGTH "${json}" patterns)
if(ops LESS_EQUAL 0 OR commits LESS_EQUAL 0 OR NOT errors EQUAL 0 OR NOT leaked EQUAL 0)
  message(FATAL_ERROR "the JSON report says ops=${ops}, commits=${commits}, "
                      "integrity_errors=${errors}, leaked_bytes=${leaked}")
endif()
if(NOT patterns EQUAL 5)
  message(FATAL_ERROR "the JSON report has ${patterns} patterns, expected 5")
endif()
