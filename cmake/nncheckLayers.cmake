# The layers of nncheck, one static library each, and what each may see.
#
#   nncheck_layer(ops DIR src/ops HEADERS validity.h DEPENDS core LINK PRIVATE onnx)
#
# A layer compiles against an include root of its own (<build>/layers/<name>) that holds links
# to its own folder, its dependencies' folders (as "core/", "ops/", ...) and the public headers
# of itself and its dependencies (as "nncheck/<header>"), and nothing else: a source that
# includes a header of a higher layer fails to compile ("No such file or directory"). Layer
# targets propagate no include directories; the umbrella targets (nncheck::nncheck,
# nncheck::gtest, nncheck::opencv) give users the whole public include/ folder.
set(NNCHECK_LAYERS_ROOT ${CMAKE_BINARY_DIR}/layers)

function(nncheck_layer name)
  cmake_parse_arguments(ARG "" "DIR" "HEADERS;DEPENDS;LINK;SOURCES" ${ARGN})
  if(NOT ARG_DIR)
    message(FATAL_ERROR "nncheck_layer(${name}): DIR is required")
  endif()
  set_property(GLOBAL PROPERTY NNCHECK_LAYER_DIR_${name} ${PROJECT_SOURCE_DIR}/${ARG_DIR})
  set_property(GLOBAL PROPERTY NNCHECK_LAYER_HEADERS_${name} ${ARG_HEADERS})
  # Everything this layer sees: itself and its dependencies, transitively.
  set(visible ${name})
  foreach(dep IN LISTS ARG_DEPENDS)
    get_property(dep_visible GLOBAL PROPERTY NNCHECK_LAYER_VISIBLE_${dep})
    if(NOT dep_visible)
      message(FATAL_ERROR "nncheck_layer(${name}): layer '${dep}' must be declared before it")
    endif()
    list(APPEND visible ${dep_visible})
  endforeach()
  list(REMOVE_DUPLICATES visible)
  set_property(GLOBAL PROPERTY NNCHECK_LAYER_VISIBLE_${name} ${visible})

  set(root ${NNCHECK_LAYERS_ROOT}/${name})
  file(REMOVE_RECURSE ${root})
  file(MAKE_DIRECTORY ${root}/nncheck)
  foreach(layer IN LISTS visible)
    get_property(dir GLOBAL PROPERTY NNCHECK_LAYER_DIR_${layer})
    file(CREATE_LINK ${dir} ${root}/${layer} SYMBOLIC)
    get_property(headers GLOBAL PROPERTY NNCHECK_LAYER_HEADERS_${layer})
    foreach(h IN LISTS headers)
      if(NOT EXISTS ${PROJECT_SOURCE_DIR}/include/nncheck/${h})
        message(FATAL_ERROR "nncheck_layer(${layer}): include/nncheck/${h} does not exist")
      endif()
      file(CREATE_LINK ${PROJECT_SOURCE_DIR}/include/nncheck/${h} ${root}/nncheck/${h} SYMBOLIC)
    endforeach()
  endforeach()

  if(NOT ARG_SOURCES)
    file(GLOB ARG_SOURCES CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/${ARG_DIR}/*.cpp)
  endif()
  add_library(nncheck_${name} STATIC ${ARG_SOURCES})
  add_library(nncheck::${name} ALIAS nncheck_${name})
  set_target_properties(nncheck_${name} PROPERTIES EXPORT_NAME ${name})
  target_include_directories(nncheck_${name} PRIVATE ${root})
  foreach(dep IN LISTS ARG_DEPENDS)
    target_link_libraries(nncheck_${name} PUBLIC nncheck_${dep})
  endforeach()
  if(ARG_LINK)
    target_link_libraries(nncheck_${name} ${ARG_LINK})
  endif()
  set_property(GLOBAL APPEND PROPERTY NNCHECK_LAYER_TARGETS nncheck_${name})
endfunction()

# The include flags a layer compiles with, for the probes that show a wrong include fails.
function(nncheck_layer_probe name layer source)
  add_library(${name} OBJECT EXCLUDE_FROM_ALL ${source})
  target_include_directories(${name} PRIVATE ${NNCHECK_LAYERS_ROOT}/${layer})
  target_link_libraries(${name} PRIVATE nncheck_${layer})
endfunction()
