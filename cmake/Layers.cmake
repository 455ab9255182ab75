# The layers, enforced by the build: a folder's headers are reachable only through the targets
# that own them, so an #include that reaches past a neighbouring layer fails to compile with
# "No such file or directory", and tests/layering/ proves it in CI. docs/architecture.md draws
# the layers and says which target may depend on which.
#
# No target gets the source root as an include path. Instead each layer folder gets, under
# build/include/, a root holding a symbolic link named after the folder:
#   gpureduce_<folder>_internal  the whole folder: for the layer's own sources and for tests;
#   gpureduce_<folder>_api       only the headers listed as PUBLIC_HEADERS (all of the folder
#                                when none are listed): for the layers above it.
# A layer's library links its own api target PUBLIC and its internal target PRIVATE, so what it
# exposes follows its link dependencies.
#
#   gpureduce_layer(<folder> [PUBLIC_HEADERS <header>...])
function(gpureduce_layer folder)
  cmake_parse_arguments(ARG "" "" "PUBLIC_HEADERS" ${ARGN})
  set(root ${CMAKE_BINARY_DIR}/include)

  set(internal ${root}/${folder}-internal)
  file(REMOVE_RECURSE ${internal})
  file(MAKE_DIRECTORY ${internal})
  file(CREATE_LINK ${CMAKE_SOURCE_DIR}/${folder} ${internal}/${folder} SYMBOLIC)
  add_library(gpureduce_${folder}_internal INTERFACE)
  target_include_directories(gpureduce_${folder}_internal INTERFACE ${internal})

  add_library(gpureduce_${folder}_api INTERFACE)
  if(NOT ARG_PUBLIC_HEADERS)
    target_link_libraries(gpureduce_${folder}_api INTERFACE gpureduce_${folder}_internal)
    return()
  endif()
  set(api ${root}/${folder}-api)
  file(REMOVE_RECURSE ${api})
  file(MAKE_DIRECTORY ${api}/${folder})
  foreach(header IN LISTS ARG_PUBLIC_HEADERS)
    if(NOT EXISTS ${CMAKE_SOURCE_DIR}/${folder}/${header})
      message(FATAL_ERROR "gpureduce_layer(${folder}): public header ${header} does not exist")
    endif()
    file(CREATE_LINK ${CMAKE_SOURCE_DIR}/${folder}/${header} ${api}/${folder}/${header} SYMBOLIC)
  endforeach()
  target_include_directories(gpureduce_${folder}_api INTERFACE ${api})
endfunction()

# Fails the configure when <target> depends, directly or through any library it links, on one
# of the FORBIDDEN targets: the runtime and the kernels must never pull in gRPC or protobuf.
# Checked once every target exists, by target name: in the package build (StaticDeps.cmake)
# every dependency name stands for one group of archives, so there only the names mean anything.
#
#   gpureduce_forbid_links(<target> FORBIDDEN <target>...)
function(gpureduce_forbid_links target)
  cmake_parse_arguments(ARG "" "" "FORBIDDEN" ${ARGN})
  # The deferred call's arguments are read when it runs; EVAL fixes them now.
  cmake_language(EVAL CODE "cmake_language(DEFER DIRECTORY [[${CMAKE_SOURCE_DIR}]] CALL
                            _gpureduce_check_links [[${target}]] [[${ARG_FORBIDDEN}]])")
endfunction()

function(_gpureduce_collect_links target out)
  set(seen ${${out}})
  if(NOT TARGET ${target} OR ${target} IN_LIST seen)
    return()
  endif()
  list(APPEND seen ${target})
  get_target_property(type ${target} TYPE)
  set(links)
  if(NOT type STREQUAL "INTERFACE_LIBRARY")
    get_target_property(direct ${target} LINK_LIBRARIES)
    if(direct)
      list(APPEND links ${direct})
    endif()
  endif()
  get_target_property(interface ${target} INTERFACE_LINK_LIBRARIES)
  if(interface)
    list(APPEND links ${interface})
  endif()
  foreach(link IN LISTS links)
    # $<LINK_ONLY:x> and other generator expressions: look through to the target named.
    string(REGEX REPLACE "^\\$<[A-Z_]+:([^>]+)>$" "\\1" link "${link}")
    _gpureduce_collect_links(${link} seen)
  endforeach()
  set(${out} ${seen} PARENT_SCOPE)
endfunction()

function(_gpureduce_check_links target forbidden)
  set(closure)
  _gpureduce_collect_links(${target} closure)
  foreach(bad IN LISTS forbidden)
    if(bad IN_LIST closure)
      message(FATAL_ERROR "gpureduce: ${target} links ${bad}, which its layer must not "
                          "(docs/architecture.md)")
    endif()
  endforeach()
  message(STATUS "gpureduce: ${target} links none of ${forbidden}")
endfunction()
