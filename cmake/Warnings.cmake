# Project code builds warning-free with -Wall -Wextra; gpureduce_options carries the flags. It
# carries no include path: each layer's headers come with its targets (cmake/Layers.cmake).
add_library(gpureduce_options INTERFACE)
target_compile_options(gpureduce_options INTERFACE
  $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wno-missing-field-initializers>)
if(GPUREDUCE_SANITIZE)
  set(_san -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
  target_compile_options(gpureduce_options INTERFACE $<$<COMPILE_LANGUAGE:CXX>:${_san}>)
  target_link_options(gpureduce_options INTERFACE ${_san})
  target_compile_definitions(gpureduce_options INTERFACE GPUREDUCE_SANITIZED=1)
endif()

# gpureduce/version.h: the version and commit baked into the binaries.
add_library(gpureduce_version INTERFACE)
target_include_directories(gpureduce_version INTERFACE ${CMAKE_BINARY_DIR}/generated)
