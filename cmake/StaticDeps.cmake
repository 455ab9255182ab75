# GPUREDUCE_STATIC_DEPS=ON (the `package` preset): binaries that need nothing but glibc and the
# package's own lib/.
#
# gRPC, protobuf, abseil and their dependencies (re2, c-ares, OpenSSL, zlib, upb, ...) are linked
# from Debian's static archives, spdlog and fmt header-only, the CUDA runtime statically; glibc
# stays dynamic and the driver (libcuda.so) comes from the host. prometheus-cpp (the server's
# metrics) exists in Debian only as shared libraries, which need libstdc++.so.6, so the package
# ships them, civetweb, zlib, libstdc++ and libgcc_s in lib/ (scripts/package.sh), and every
# executable finds them through a DT_RPATH of $ORIGIN/../lib: one libstdc++ in the process, not a
# static copy beside a shared one.
#
# Instead of find_package(gRPC/absl/Protobuf/spdlog), which would give imported targets for the
# shared libraries, this file defines the same target names (gRPC::grpc++, absl::strings,
# protobuf::libprotobuf, spdlog::spdlog, ...) as INTERFACE targets, so the per-folder
# CMakeLists.txt stay unchanged. Every library target links one group of all the archives,
# wrapped in -Wl,--start-group/--end-group ($<LINK_GROUP:RESCAN>): the archives depend on each
# other in cycles, and the linker takes only the members that are used.
#
# Included from cmake/Dependencies.cmake after find_package(Threads).

# --- The archives -------------------------------------------------------------------------------
set(_gpureduce_static_archives
  grpc++_reflection grpc++ grpc address_sorting re2 upb cares gpr ssl crypto z protobuf)
set(_gpureduce_archive_paths)
foreach(_name IN LISTS _gpureduce_static_archives)
  find_library(GPUREDUCE_STATIC_${_name} NAMES lib${_name}.a)
  if(NOT GPUREDUCE_STATIC_${_name})
    message(FATAL_ERROR "gpureduce: GPUREDUCE_STATIC_DEPS needs lib${_name}.a, which was not "
                        "found (scripts/setup.sh installs the -dev packages that ship it)")
  endif()
  list(APPEND _gpureduce_archive_paths ${GPUREDUCE_STATIC_${_name}})
endforeach()

# Every abseil archive: the linker takes only what is used, and a new absl:: dependency in the
# code needs no change here.
get_filename_component(_gpureduce_libdir ${GPUREDUCE_STATIC_grpc} DIRECTORY)
file(GLOB _gpureduce_absl_archives ${_gpureduce_libdir}/libabsl_*.a)
if(NOT _gpureduce_absl_archives)
  message(FATAL_ERROR "gpureduce: no libabsl_*.a in ${_gpureduce_libdir} (libabsl-dev)")
endif()
list(APPEND _gpureduce_archive_paths ${_gpureduce_absl_archives})

# gRPC's pkg-config file asks for -latomic; its shared form is not part of glibc.
execute_process(COMMAND ${CMAKE_CXX_COMPILER} -print-file-name=libatomic.a
                OUTPUT_VARIABLE _gpureduce_libatomic OUTPUT_STRIP_TRAILING_WHITESPACE)
if(EXISTS "${_gpureduce_libatomic}")
  list(APPEND _gpureduce_archive_paths ${_gpureduce_libatomic})
endif()

string(JOIN "," _gpureduce_group ${_gpureduce_archive_paths})
add_library(gpureduce_static_deps INTERFACE)
target_link_libraries(gpureduce_static_deps INTERFACE
  "$<LINK_GROUP:RESCAN,${_gpureduce_group}>" Threads::Threads ${CMAKE_DL_LIBS} m rt)

# --- The target names the project links ---------------------------------------------------------
function(_gpureduce_static_alias name)
  add_library(${name} INTERFACE IMPORTED GLOBAL)
  target_link_libraries(${name} INTERFACE gpureduce_static_deps)
endfunction()

foreach(_name grpc++ grpc++_reflection grpc gpr upb address_sorting)
  _gpureduce_static_alias(gRPC::${_name})
endforeach()
_gpureduce_static_alias(protobuf::libprotobuf)
_gpureduce_static_alias(OpenSSL::Crypto)  # libcrypto.a is in the group: gRPC's TLS uses it

# The names of Debian's abseil CMake package, so that any absl:: target the code names exists.
find_file(GPUREDUCE_ABSL_TARGETS abslTargets.cmake
          PATHS ${_gpureduce_libdir}/cmake/absl NO_DEFAULT_PATH)
if(NOT GPUREDUCE_ABSL_TARGETS)
  message(FATAL_ERROR "gpureduce: abslTargets.cmake not found in ${_gpureduce_libdir}/cmake/absl")
endif()
file(STRINGS ${GPUREDUCE_ABSL_TARGETS} _gpureduce_absl_lines REGEX "^add_library\\(absl::")
foreach(_line IN LISTS _gpureduce_absl_lines)
  string(REGEX REPLACE "^add_library\\((absl::[A-Za-z0-9_]+) .*" "\\1" _target "${_line}")
  _gpureduce_static_alias(${_target})
endforeach()

# Build-time tools still run from the system.
find_program(GPUREDUCE_PROTOC protoc REQUIRED)
add_executable(protobuf::protoc IMPORTED GLOBAL)
set_target_properties(protobuf::protoc PROPERTIES IMPORTED_LOCATION ${GPUREDUCE_PROTOC})

# spdlog and fmt header-only (Debian ships them only as shared libraries; its spdlog_header_only
# target still links the shared fmt). Without SPDLOG_COMPILED_LIB spdlog is header-only.
find_path(GPUREDUCE_SPDLOG_INCLUDE spdlog/spdlog.h REQUIRED)
find_path(GPUREDUCE_FMT_INCLUDE fmt/format.h REQUIRED)
foreach(_name fmt::fmt fmt::fmt-header-only)
  add_library(${_name} INTERFACE IMPORTED GLOBAL)
  set_target_properties(${_name} PROPERTIES
    INTERFACE_COMPILE_DEFINITIONS "FMT_HEADER_ONLY=1"
    INTERFACE_INCLUDE_DIRECTORIES ${GPUREDUCE_FMT_INCLUDE})
endforeach()
foreach(_name spdlog::spdlog spdlog::spdlog_header_only)
  add_library(${_name} INTERFACE IMPORTED GLOBAL)
  set_target_properties(${_name} PROPERTIES
    INTERFACE_COMPILE_DEFINITIONS "SPDLOG_HEADER_ONLY;SPDLOG_FMT_EXTERNAL"
    INTERFACE_INCLUDE_DIRECTORIES ${GPUREDUCE_SPDLOG_INCLUDE})
  target_link_libraries(${_name} INTERFACE fmt::fmt-header-only Threads::Threads)
endforeach()

# --- The C++ and CUDA runtimes ------------------------------------------------------------------
# libstdc++ and libgcc_s from the package's lib/: DT_RPATH (--disable-new-dtags), since a
# RUNPATH would not be followed for the shipped libraries' own dependencies. HOST_LINK keeps the
# flag out of nvcc's device-link step.
add_link_options("$<HOST_LINK:-Wl$<COMMA>--disable-new-dtags>")
set(CMAKE_INSTALL_RPATH "$ORIGIN/../lib")
# cudart_static in every target with CUDA code (CMake's default, made explicit); the CUDA code
# must link the runtime through this, or CUDA::cudart_static, never CUDA::cudart.
set(CMAKE_CUDA_RUNTIME_LIBRARY Static)

# --- What the package ships ---------------------------------------------------------------------
# Executables that go into the package's bin/ when they exist; add new tools here.
set(GPUREDUCE_PACKAGE_EXECUTABLES
  gpureduce-server gpureduce gpureduce-tests gpureduce-bench gpureduce-cpu-bench gpureduce-load
  gpureduce-soak)

function(_gpureduce_collect_executables dir out)
  get_property(_targets DIRECTORY ${dir} PROPERTY BUILDSYSTEM_TARGETS)
  get_property(_subdirs DIRECTORY ${dir} PROPERTY SUBDIRECTORIES)
  set(_found)
  foreach(_target IN LISTS _targets)
    get_target_property(_type ${_target} TYPE)
    if(_type STREQUAL "EXECUTABLE")
      list(APPEND _found ${_target})
    endif()
  endforeach()
  foreach(_subdir IN LISTS _subdirs)
    _gpureduce_collect_executables(${_subdir} _sub)
    list(APPEND _found ${_sub})
  endforeach()
  set(${out} ${_found} PARENT_SCOPE)
endfunction()

# Runs at the end of the top-level CMakeLists.txt, when every target exists: installs the
# packaged executables (component `package`, for `cmake --install --component package --strip`)
# and writes build/package/build-info.txt, which scripts/package.sh puts into VERSION.
function(_gpureduce_package_rules)
  _gpureduce_collect_executables(${PROJECT_SOURCE_DIR} _all)
  set(_packaged)
  foreach(_target IN LISTS GPUREDUCE_PACKAGE_EXECUTABLES)
    if(_target IN_LIST _all)
      list(APPEND _packaged ${_target})
    endif()
  endforeach()
  foreach(_target IN LISTS _all)
    if(NOT _target IN_LIST GPUREDUCE_PACKAGE_EXECUTABLES)
      message(STATUS "gpureduce: executable ${_target} is not packaged "
                     "(GPUREDUCE_PACKAGE_EXECUTABLES in cmake/StaticDeps.cmake)")
    endif()
  endforeach()
  install(TARGETS ${_packaged} RUNTIME DESTINATION bin COMPONENT package)
  message(STATUS "gpureduce: static dependencies; packaged executables: ${_packaged}")

  if(GPUREDUCE_HAVE_CUDA)
    set(_cuda "${CMAKE_CUDA_COMPILER_VERSION} (architectures ${CMAKE_CUDA_ARCHITECTURES}, "
              "runtime ${CMAKE_CUDA_RUNTIME_LIBRARY})")
  else()
    set(_cuda "not built (no CUDA compiler); CPU backend only")
  endif()
  string(JOIN "" _cuda ${_cuda})
  file(WRITE ${CMAKE_BINARY_DIR}/build-info.txt
    "version: ${PROJECT_VERSION}\n"
    "commit: ${GPUREDUCE_GIT_COMMIT}\n"
    "build type: ${CMAKE_BUILD_TYPE}\n"
    "compiler: ${CMAKE_CXX_COMPILER_ID} ${CMAKE_CXX_COMPILER_VERSION}\n"
    "cmake: ${CMAKE_VERSION}\n"
    "cuda: ${_cuda}\n"
    "executables: ${_packaged}\n")
endfunction()
cmake_language(DEFER CALL _gpureduce_package_rules)
