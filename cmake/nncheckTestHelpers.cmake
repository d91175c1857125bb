# nncheck_add_tests(<target> [SEEDS s...] [CASES n] [MAX_NODES n] [TIMEOUT seconds] [PROPERTIES ...])
#
# Registers one ctest entry per GoogleTest test of <target> and per seed (suffix ".seed<s>"),
# each run with NNCHECK_SEED=<s> and, when given, NNCHECK_CASES, NNCHECK_MAX_NODES and
# NNCHECK_TIMEOUT (the isolation time limit). PROPERTIES go to every entry (e.g. TIMEOUT 600).
#
#   nncheck_add_tests(compiler_props SEEDS 1 2 3 CASES 200)
function(nncheck_add_tests target)
  cmake_parse_arguments(ARG "" "CASES;MAX_NODES;TIMEOUT" "SEEDS;PROPERTIES" ${ARGN})
  if(ARG_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "nncheck_add_tests: unknown arguments: ${ARG_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT TARGET ${target})
    message(FATAL_ERROR "nncheck_add_tests: '${target}' is not a target")
  endif()
  if(NOT ARG_SEEDS)
    set(ARG_SEEDS 1)
  endif()
  include(GoogleTest)
  foreach(seed IN LISTS ARG_SEEDS)
    if(NOT seed MATCHES "^[0-9]+$")
      message(FATAL_ERROR "nncheck_add_tests: seed '${seed}' is not a non-negative integer")
    endif()
    set(env "NNCHECK_SEED=${seed}")
    if(ARG_CASES)
      list(APPEND env "NNCHECK_CASES=${ARG_CASES}")
    endif()
    if(ARG_MAX_NODES)
      list(APPEND env "NNCHECK_MAX_NODES=${ARG_MAX_NODES}")
    endif()
    if(ARG_TIMEOUT)
      list(APPEND env "NNCHECK_TIMEOUT=${ARG_TIMEOUT}")
    endif()
    # PRE_TEST: tests are listed when ctest runs, so corpus cases added since the build count.
    gtest_discover_tests(${target} TEST_SUFFIX ".seed${seed}" DISCOVERY_TIMEOUT 60
      DISCOVERY_MODE PRE_TEST
      PROPERTIES ENVIRONMENT "${env}" ${ARG_PROPERTIES})
  endforeach()
endfunction()
