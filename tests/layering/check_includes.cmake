# cmake -DROOT=<source dir> -P check_includes.cmake
# 1. The kernels and the runtime must not know the wire: no gRPC, protobuf or generated proto
#    header in their sources, even one the system include path would find (the link check in
#    cmake/Layers.cmake covers their link dependencies).
# 2. No product source walks around the include roots with a `..` in a quoted include.
cmake_minimum_required(VERSION 3.25)
set(found)
file(GLOB_RECURSE below_the_edge ${ROOT}/kernels/* ${ROOT}/runtime/*)
file(GLOB_RECURSE product ${ROOT}/common/* ${ROOT}/kernels/* ${ROOT}/runtime/* ${ROOT}/server/*
     ${ROOT}/client/* ${ROOT}/wire/*)
foreach(source IN LISTS product)
  if(NOT source MATCHES "\\.(h|cc|cu|cuh)$")
    continue()
  endif()
  file(RELATIVE_PATH relative ${ROOT} ${source})
  file(STRINGS ${source} lines REGEX "^[ \t]*#[ \t]*include[ \t]*\"[^\"]*\\.\\.")
  if(source IN_LIST below_the_edge)
    file(STRINGS ${source} wire
         REGEX "^[ \t]*#[ \t]*include[ \t]*[<\"](grpc|grpc\\+\\+|grpcpp|google/protobuf|gpureduce/v1)/")
    list(APPEND lines ${wire})
  endif()
  foreach(line IN LISTS lines)
    list(APPEND found "${relative}: ${line}")
  endforeach()
endforeach()
if(found)
  list(JOIN found "\n  " found)
  message(FATAL_ERROR "includes that leave their layer:\n  ${found}")
endif()
message(STATUS "no wire header below the server's edge, no `..` in a quoted include")
