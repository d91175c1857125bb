# The engines built into nncheck, one helper for all of them.
#
#   nncheck_engine(opencv DIR src/backends/opencv HEADER opencv.h FLAG OPENCV
#     EXAMPLE examples/opencv LINK ${opencv_libs} INCLUDE ${opencv_include}
#     [PACKAGE Torch] [REGISTERED torch] [DEPENDS layer ...] [WORKER worker.js ...])
#
# makes two things of the engine's sources:
# - the layer target nncheck_<name> (nncheck::<name>) over backends, with the engine library's
#   headers (SYSTEM, PRIVATE) and definitions: what a test binary links (whole, since its
#   registration must survive static linking), installed as the CMake component <name>, which
#   finds PACKAGE (the engine library's CMake package, if it has one) first;
# - the plug-in nncheck_engine_<name>, libnncheck-engine-<registered>.so in <build>/engines and
#   <libdir>/nncheck/engines, that the nncheck program loads when --backend names the engine by
#   the name it registers (REGISTERED, by default <name>; nncheck/engine.h), so that a command
#   driving no engine loads none of their libraries.
# An engine run by a worker (docs/worker-protocol.md) names its files in WORKER (relative to DIR):
# they are copied to <build>/engines/<registered>/ and installed beside the plug-in, where it
# finds them (backends/engine_files.h). So is the example's corpus, the engine's known bugs, as
# <registered>/known/.
# It sets NNCHECK_HAS_<FLAG> in the caller, and records the engine so that the tests link it
# whole, the tests under tests/backends/<folder>/ are built, and its example is added
# (nncheck_engine_link_all, nncheck_engine_test_sources, nncheck_engine_examples).
function(nncheck_engine name)
  cmake_parse_arguments(ARG "" "DIR;HEADER;FLAG;EXAMPLE;PACKAGE;REGISTERED" "LINK;INCLUDE;DEFINES;WORKER;DEPENDS" ${ARGN})
  nncheck_layer(${name} DIR ${ARG_DIR} HEADERS ${ARG_HEADER} DEPENDS backends ${ARG_DEPENDS}
    LINK PUBLIC ${ARG_LINK})
  # The plug-in is made of the layer's own objects, and leaves nncheck's symbols to the program
  # that loads it (which exports them), so there is one registry.
  if(NOT ARG_REGISTERED)
    set(ARG_REGISTERED ${name})
  endif()
  set_target_properties(nncheck_${name} PROPERTIES POSITION_INDEPENDENT_CODE ON)
  add_library(nncheck_engine_${name} MODULE $<TARGET_OBJECTS:nncheck_${name}>)
  set_target_properties(nncheck_engine_${name} PROPERTIES OUTPUT_NAME nncheck-engine-${ARG_REGISTERED}
    LINKER_LANGUAGE CXX LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/engines
    INSTALL_RPATH_USE_LINK_PATH ON)
  target_link_libraries(nncheck_engine_${name} PRIVATE ${ARG_LINK})
  if(ARG_INCLUDE)
    target_include_directories(nncheck_${name} SYSTEM PRIVATE ${ARG_INCLUDE})
  endif()
  if(ARG_DEFINES)
    target_compile_definitions(nncheck_${name} PRIVATE ${ARG_DEFINES})
  endif()
  target_link_libraries(nncheck_${name} INTERFACE nncheck)
  get_filename_component(folder ${ARG_DIR} NAME)
  foreach(f IN LISTS ARG_WORKER)
    configure_file(${PROJECT_SOURCE_DIR}/${ARG_DIR}/${f} ${CMAKE_BINARY_DIR}/engines/${ARG_REGISTERED}/${f} COPYONLY)
    set_property(GLOBAL APPEND PROPERTY NNCHECK_ENGINE_WORKER_${name} ${ARG_DIR}/${f})
  endforeach()
  # The example's corpus is the engine's known bugs (harness/root_cause.h): copied beside the
  # plug-in as <registered>/known/, where `nncheck fuzz` finds it.
  if(ARG_EXAMPLE AND IS_DIRECTORY ${PROJECT_SOURCE_DIR}/${ARG_EXAMPLE}/corpus)
    set(known ${CMAKE_BINARY_DIR}/engines/${ARG_REGISTERED}/known)
    file(REMOVE_RECURSE ${known})
    file(GLOB_RECURSE cases CONFIGURE_DEPENDS RELATIVE ${PROJECT_SOURCE_DIR}/${ARG_EXAMPLE}/corpus
      ${PROJECT_SOURCE_DIR}/${ARG_EXAMPLE}/corpus/*)
    foreach(f IN LISTS cases)
      configure_file(${PROJECT_SOURCE_DIR}/${ARG_EXAMPLE}/corpus/${f} ${known}/${f} COPYONLY)
    endforeach()
    set_property(GLOBAL PROPERTY NNCHECK_ENGINE_KNOWN_${name} ${ARG_EXAMPLE}/corpus)
  endif()
  set_property(GLOBAL PROPERTY NNCHECK_ENGINE_REGISTERED_${name} ${ARG_REGISTERED})
  set_property(GLOBAL APPEND PROPERTY NNCHECK_ENGINES ${name})
  set_property(GLOBAL PROPERTY NNCHECK_ENGINE_FLAG_${name} ${ARG_FLAG})
  set_property(GLOBAL PROPERTY NNCHECK_ENGINE_FOLDER_${name} ${folder})
  set_property(GLOBAL PROPERTY NNCHECK_ENGINE_EXAMPLE_${name} ${ARG_EXAMPLE})
  set_property(GLOBAL PROPERTY NNCHECK_ENGINE_PACKAGE_${name} ${ARG_PACKAGE})
  set(NNCHECK_HAS_${ARG_FLAG} ON PARENT_SCOPE)
  message(STATUS "nncheck: engine ${name} enabled")
endfunction()

# Links every built engine whole into `target` and defines NNCHECK_HAS_<FLAG>_ENGINE there.
function(nncheck_engine_link_all target)
  get_property(engines GLOBAL PROPERTY NNCHECK_ENGINES)
  foreach(e IN LISTS engines)
    get_property(flag GLOBAL PROPERTY NNCHECK_ENGINE_FLAG_${e})
    target_link_libraries(${target} PRIVATE "$<LINK_LIBRARY:WHOLE_ARCHIVE,nncheck_${e}>")
    target_compile_definitions(${target} PRIVATE NNCHECK_HAS_${flag}_ENGINE)
  endforeach()
endfunction()

# Removes from the list `var` the tests of engines folders under src/backends/ that are not built.
function(nncheck_engine_test_sources var)
  get_property(engines GLOBAL PROPERTY NNCHECK_ENGINES)
  set(built)
  foreach(e IN LISTS engines)
    get_property(folder GLOBAL PROPERTY NNCHECK_ENGINE_FOLDER_${e})
    list(APPEND built ${folder})
  endforeach()
  file(GLOB folders LIST_DIRECTORIES true ${PROJECT_SOURCE_DIR}/src/backends/*)
  set(sources ${${var}})
  foreach(f IN LISTS folders)
    get_filename_component(folder ${f} NAME)
    # A folder of an engine not built; a layer's folder (pytorch_source) is always built.
    if(IS_DIRECTORY ${f} AND NOT folder IN_LIST built AND NOT TARGET nncheck_${folder})
      list(FILTER sources EXCLUDE REGEX "/backends/${folder}/")
    endif()
  endforeach()
  set(${var} ${sources} PARENT_SCOPE)
endfunction()

# Adds each built engine's example (a compiler team's suite against it).
macro(nncheck_engine_examples)
  get_property(nncheck_engines_ GLOBAL PROPERTY NNCHECK_ENGINES)
  foreach(e IN LISTS nncheck_engines_)
    get_property(example GLOBAL PROPERTY NNCHECK_ENGINE_EXAMPLE_${e})
    if(example)
      add_subdirectory(${example})
    endif()
  endforeach()
endmacro()

# Installs each engine: its plug-in for the nncheck program, and its layer as the CMake
# component of its name (nncheck-<name>Targets.cmake). Sets NNCHECK_ENGINE_NAMES and
# NNCHECK_ENGINE_PACKAGES ("name=Package;...") for nncheckConfig.cmake.
function(nncheck_engine_install cmake_dir)
  get_property(engines GLOBAL PROPERTY NNCHECK_ENGINES)
  set(packages)
  foreach(e IN LISTS engines)
    install(TARGETS nncheck_engine_${e} LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}/nncheck/engines)
    get_property(worker GLOBAL PROPERTY NNCHECK_ENGINE_WORKER_${e})
    get_property(registered GLOBAL PROPERTY NNCHECK_ENGINE_REGISTERED_${e})
    if(worker)
      install(FILES ${worker} DESTINATION ${CMAKE_INSTALL_LIBDIR}/nncheck/engines/${registered})
    endif()
    get_property(known GLOBAL PROPERTY NNCHECK_ENGINE_KNOWN_${e})
    if(known)
      install(DIRECTORY ${known}/ DESTINATION ${CMAKE_INSTALL_LIBDIR}/nncheck/engines/${registered}/known)
    endif()
    install(TARGETS nncheck_${e} EXPORT nncheck-${e}Targets ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
    install(EXPORT nncheck-${e}Targets NAMESPACE nncheck:: DESTINATION ${cmake_dir})
    get_property(package GLOBAL PROPERTY NNCHECK_ENGINE_PACKAGE_${e})
    if(package)
      list(APPEND packages ${e}=${package})
    endif()
  endforeach()
  set(NNCHECK_ENGINE_NAMES ${engines} PARENT_SCOPE)
  set(NNCHECK_ENGINE_PACKAGES ${packages} PARENT_SCOPE)
endfunction()

# The plug-ins of every built engine, which the nncheck program `target` loads on demand.
function(nncheck_engine_plugins_of target)
  get_property(engines GLOBAL PROPERTY NNCHECK_ENGINES)
  foreach(e IN LISTS engines)
    add_dependencies(${target} nncheck_engine_${e})
  endforeach()
endfunction()

# A folder of the user's cache that scripts/install-deps.sh fills, as that script finds it:
# $ENV{<var>}, else $XDG_CACHE_HOME/nncheck/<name>, else ~/.cache/nncheck/<name>.
function(nncheck_cache_folder var name doc)
  set(${var} "$ENV{HOME}/.cache/nncheck/${name}" CACHE PATH "${doc}")
  if(DEFINED ENV{${var}})
    set(${var} "$ENV{${var}}" CACHE PATH "${doc}" FORCE)
  elseif(DEFINED ENV{XDG_CACHE_HOME})
    set(${var} "$ENV{XDG_CACHE_HOME}/nncheck/${name}" CACHE PATH "${doc}" FORCE)
  endif()
endfunction()
