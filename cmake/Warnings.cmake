# Project code builds warning-free with -Wall -Wextra; gpureduce_options carries the flags.
add_library(gpureduce_options INTERFACE)
target_compile_options(gpureduce_options INTERFACE
  $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wno-missing-field-initializers>)
target_include_directories(gpureduce_options INTERFACE
  ${CMAKE_SOURCE_DIR} ${CMAKE_BINARY_DIR}/generated)
if(GPUREDUCE_SANITIZE)
  set(_san -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
  target_compile_options(gpureduce_options INTERFACE $<$<COMPILE_LANGUAGE:CXX>:${_san}>)
  target_link_options(gpureduce_options INTERFACE ${_san})
  target_compile_definitions(gpureduce_options INTERFACE GPUREDUCE_SANITIZED=1)
endif()
