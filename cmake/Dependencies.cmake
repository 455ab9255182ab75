# System packages (Debian 12): gRPC 1.51, protobuf 3.21, abseil 20220623, spdlog 1.10, GoogleTest 1.12.
# scripts/setup.sh installs them.
option(GPUREDUCE_STATIC_DEPS
       "Link gRPC, protobuf, abseil, libstdc++ and the CUDA runtime statically (the package)" OFF)
find_package(Threads REQUIRED)
if(GPUREDUCE_STATIC_DEPS)
  include(${CMAKE_CURRENT_LIST_DIR}/StaticDeps.cmake)
else()
  find_package(Protobuf REQUIRED)
  find_package(gRPC CONFIG REQUIRED)
  find_package(absl CONFIG REQUIRED)
  find_package(spdlog CONFIG REQUIRED)
  find_package(OpenSSL REQUIRED)  # libcrypto: the server's token digests
endif()
find_package(nlohmann_json 3 CONFIG REQUIRED)  # header-only: the load generator's JSON report
# The server's metrics: Debian ships shared libraries only (the package carries them, see
# scripts/package.sh).
find_package(prometheus-cpp CONFIG REQUIRED)
if(GPUREDUCE_BUILD_TESTS)
  find_package(GTest CONFIG REQUIRED)
endif()
find_program(GRPC_CPP_PLUGIN grpc_cpp_plugin REQUIRED)
