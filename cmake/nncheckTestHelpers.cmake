# nncheck_add_tests(<target> [SEEDS s...] [CASES n] [MAX_NODES n] [TIMEOUT seconds]
#                   [CORPUS dir] [PROPERTIES ...])
#
# Registers the GoogleTest tests of <target> with ctest:
# - every property test once per seed, named like GoogleTest names it plus ".seed<s>"
#   (e.g. Optimize/MyProps.MatchesReference/1.seed2), run with NNCHECK_SEED=<s>;
# - every corpus test (NNCHECK_CORPUS_TEST: <Suite>.corpus/<case folder>) once, since it replays
#   a saved case and depends on no seed.
# Each entry runs with NNCHECK_CASES, NNCHECK_MAX_NODES, NNCHECK_TIMEOUT (the isolation time
# limit) and NNCHECK_CORPUS (where failures are saved and replayed first; relative paths are
# taken from the current source folder) set when given. PROPERTIES, last, go to every entry as
# they are (e.g. TIMEOUT 600, ctest's own time limit). Tests are listed when ctest runs, and the
# corpus tests at every run, so a case saved since the last run is replayed without a rebuild.
#
#   nncheck_add_tests(compiler_props SEEDS 1 2 3 CASES 200 CORPUS tests/corpus)
function(nncheck_add_tests target)
  # Everything after PROPERTIES is ctest's, taken as it is: its TIMEOUT is not ours.
  set(options ${ARGN})
  set(ARG_PROPERTIES)
  list(FIND options PROPERTIES at)
  if(at GREATER -1)
    list(SUBLIST options ${at} -1 ARG_PROPERTIES)
    list(POP_FRONT ARG_PROPERTIES)
    list(SUBLIST options 0 ${at} options)
  endif()
  cmake_parse_arguments(ARG "" "CASES;MAX_NODES;TIMEOUT;CORPUS" "SEEDS" ${options})
  if(ARG_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "nncheck_add_tests: unknown arguments: ${ARG_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT TARGET ${target})
    message(FATAL_ERROR "nncheck_add_tests: '${target}' is not a target")
  endif()
  if(NOT ARG_SEEDS)
    set(ARG_SEEDS 1)
  endif()
  foreach(option CASES MAX_NODES TIMEOUT)
    if(DEFINED ARG_${option} AND NOT ARG_${option} MATCHES "^[0-9]+([.][0-9]+)?$")
      message(FATAL_ERROR "nncheck_add_tests: ${option} '${ARG_${option}}' is not a number")
    endif()
  endforeach()
  set(env)
  if(DEFINED ARG_CASES)
    list(APPEND env "NNCHECK_CASES=${ARG_CASES}")
  endif()
  if(DEFINED ARG_MAX_NODES)
    list(APPEND env "NNCHECK_MAX_NODES=${ARG_MAX_NODES}")
  endif()
  if(DEFINED ARG_TIMEOUT)
    list(APPEND env "NNCHECK_TIMEOUT=${ARG_TIMEOUT}")
  endif()
  if(DEFINED ARG_CORPUS)
    cmake_path(ABSOLUTE_PATH ARG_CORPUS BASE_DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR}
               NORMALIZE OUTPUT_VARIABLE corpus)
    list(APPEND env "NNCHECK_CORPUS=${corpus}")
  endif()

  include(GoogleTest)
  # gtest_discover_tests splits a list-valued ENVIRONMENT apart (only its first entry would
  # survive), so the environment is set by a script ctest runs after the discovered tests are
  # defined, over the list of their names.
  set(script "${CMAKE_CURRENT_BINARY_DIR}/${target}_nncheck_environment.cmake")
  set(body "# Written by nncheck_add_tests: the environment of ${target}'s tests.\n")
  set(corpus_list "${target}_nncheck_corpus_TESTS")
  # GoogleTest's PRE_TEST discovery lists tests again only when the binary is newer than its
  # list, but a corpus test is a folder, saved by a run after the build: so the corpus list is
  # dropped before every ctest run (a script ctest includes before the discovery's own), and a
  # case saved since is replayed by the next ctest, without a rebuild. The list's file is named
  # as GoogleTest.cmake names it: <target>[<its count of discoveries on the target>].
  get_property(discoveries TARGET ${target} PROPERTY CTEST_DISCOVERED_TEST_COUNTER)
  if(NOT discoveries)
    set(discoveries 0)
  endif()
  math(EXPR discoveries "${discoveries} + 1")
  set(refresh "${CMAKE_CURRENT_BINARY_DIR}/${target}_nncheck_corpus_refresh.cmake")
  file(WRITE "${refresh}" "# Written by nncheck_add_tests: corpus tests are listed anew by every ctest run.\n"
    "file(REMOVE \"${CMAKE_CURRENT_BINARY_DIR}/${target}[${discoveries}]_tests.cmake\"\n"
    "  \"${CMAKE_CURRENT_BINARY_DIR}/${target}[${discoveries}]_tests-\${CTEST_CONFIGURATION_TYPE}.cmake\")\n")
  set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES "${refresh}")
  gtest_discover_tests(${target} TEST_FILTER "*.corpus/*" TEST_LIST ${corpus_list}
    DISCOVERY_TIMEOUT 60 DISCOVERY_MODE PRE_TEST PROPERTIES ${ARG_PROPERTIES})
  string(APPEND body "foreach(t IN LISTS ${corpus_list})\n"
    "  set_tests_properties(\"\${t}\" PROPERTIES ENVIRONMENT [==[${env}]==])\nendforeach()\n")
  foreach(seed IN LISTS ARG_SEEDS)
    if(NOT seed MATCHES "^[0-9]+$")
      message(FATAL_ERROR "nncheck_add_tests: seed '${seed}' is not a non-negative integer")
    endif()
    set(list "${target}_nncheck_seed${seed}_TESTS")
    gtest_discover_tests(${target} TEST_FILTER "-*.corpus/*" TEST_SUFFIX ".seed${seed}"
      TEST_LIST ${list} NO_PRETTY_VALUES DISCOVERY_TIMEOUT 60 DISCOVERY_MODE PRE_TEST
      PROPERTIES ${ARG_PROPERTIES})
    set(seed_env "NNCHECK_SEED=${seed}" ${env})
    string(APPEND body "foreach(t IN LISTS ${list})\n"
      "  set_tests_properties(\"\${t}\" PROPERTIES ENVIRONMENT [==[${seed_env}]==])\nendforeach()\n")
  endforeach()
  file(WRITE "${script}" "${body}")
  set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES "${script}")
endfunction()
