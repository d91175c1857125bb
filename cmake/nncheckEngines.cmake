# The engines built into nncheck, one helper for all of them.
#
#   nncheck_engine(opencv DIR src/backends/opencv HEADER opencv.h FLAG OPENCV
#     EXAMPLE examples/opencv LINK ${opencv_libs} INCLUDE ${opencv_include})
#
# makes the layer target nncheck_<name> (nncheck::<name>) over backends, with the engine
# library's headers (SYSTEM, PRIVATE) and definitions, sets NNCHECK_HAS_<FLAG> in the caller,
# and records the engine so that the nncheck program and the tests link it whole (its
# registration must survive static linking), the tests under tests/backends/<folder>/ are built,
# and its example is added (nncheck_engine_link_all, nncheck_engine_test_sources,
# nncheck_engine_examples).
function(nncheck_engine name)
  cmake_parse_arguments(ARG "" "DIR;HEADER;FLAG;EXAMPLE" "LINK;INCLUDE;DEFINES" ${ARGN})
  nncheck_layer(${name} DIR ${ARG_DIR} HEADERS ${ARG_HEADER} DEPENDS backends LINK PUBLIC ${ARG_LINK})
  if(ARG_INCLUDE)
    target_include_directories(nncheck_${name} SYSTEM PRIVATE ${ARG_INCLUDE})
  endif()
  if(ARG_DEFINES)
    target_compile_definitions(nncheck_${name} PRIVATE ${ARG_DEFINES})
  endif()
  target_link_libraries(nncheck_${name} INTERFACE nncheck)
  get_filename_component(folder ${ARG_DIR} NAME)
  set_property(GLOBAL APPEND PROPERTY NNCHECK_ENGINES ${name})
  set_property(GLOBAL PROPERTY NNCHECK_ENGINE_FLAG_${name} ${ARG_FLAG})
  set_property(GLOBAL PROPERTY NNCHECK_ENGINE_FOLDER_${name} ${folder})
  set_property(GLOBAL PROPERTY NNCHECK_ENGINE_EXAMPLE_${name} ${ARG_EXAMPLE})
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
    if(IS_DIRECTORY ${f} AND NOT folder IN_LIST built)
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
