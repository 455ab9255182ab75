# libFuzzer targets (tests/fuzz/, docs/reliability.md). With GPUREDUCE_FUZZ every project target
# is compiled with coverage instrumentation for libFuzzer (fuzzer-no-link) and with ASan and
# UBSan, so a fuzz input that misbehaves anywhere in the code under test stops the run; the fuzz
# executables themselves link libFuzzer's main. Host code only: clang compiles it, and CUDA is
# left out. The `fuzz` preset sets all of this up and builds only the fuzzers.
option(GPUREDUCE_FUZZ "Build the libFuzzer targets of tests/fuzz (clang, ASan, UBSan)" OFF)
set(GPUREDUCE_FUZZ_SECONDS 30 CACHE STRING
    "How long each fuzz target runs as a CTest test, in seconds")

if(NOT GPUREDUCE_FUZZ)
  return()
endif()
if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
  message(FATAL_ERROR "GPUREDUCE_FUZZ needs clang for libFuzzer (found ${CMAKE_CXX_COMPILER_ID}): "
                      "configure with -DCMAKE_CXX_COMPILER=clang++, as the fuzz preset does")
endif()
if(GPUREDUCE_HAVE_CUDA)
  message(FATAL_ERROR "GPUREDUCE_FUZZ builds host code only: configure with "
                      "-DGPUREDUCE_WITH_CUDA=OFF, as the fuzz preset does")
endif()

set(_fuzz_san -fsanitize=address,undefined -fno-sanitize-recover=undefined
              -fno-omit-frame-pointer)
target_compile_options(gpureduce_options INTERFACE
  $<$<COMPILE_LANGUAGE:CXX>:${_fuzz_san} -fsanitize=fuzzer-no-link>)
target_link_options(gpureduce_options INTERFACE ${_fuzz_san})
target_compile_definitions(gpureduce_options INTERFACE GPUREDUCE_SANITIZED=1)

# Every fuzzer, so that the fuzz preset builds them and nothing else.
add_custom_target(gpureduce_fuzzers)

# gpureduce_add_fuzzer(<name> SOURCES ... LIBS ...)
#
# An executable with LLVMFuzzerTestOneInput, and a CTest test `fuzz.<name>` that runs it for
# GPUREDUCE_FUZZ_SECONDS over a fresh copy of its seed corpus tests/fuzz/corpus/<name>/ (with
# tests/fuzz/dict/<name>.dict when there is one): any crash, leak, UB report, timeout or
# out-of-memory fails the test (tests/fuzz/run_fuzzer.cmake; scripts/fuzz.sh runs longer).
function(gpureduce_add_fuzzer name)
  cmake_parse_arguments(ARG "" "" "SOURCES;LIBS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE ${ARG_LIBS} gpureduce_options gpureduce_test_includes)
  target_compile_options(${name} PRIVATE -fsanitize=fuzzer)
  target_link_options(${name} PRIVATE -fsanitize=fuzzer)
  add_dependencies(gpureduce_fuzzers ${name})

  set(work ${CMAKE_CURRENT_BINARY_DIR}/work/${name})
  add_test(NAME fuzz.${name}
           COMMAND ${CMAKE_COMMAND} -DNAME=${name} -DFUZZER=$<TARGET_FILE:${name}>
                   -DSOURCE_DIR=${CMAKE_CURRENT_SOURCE_DIR} -DWORK=${work}
                   -DSECONDS=${GPUREDUCE_FUZZ_SECONDS}
                   -P ${CMAKE_CURRENT_SOURCE_DIR}/run_fuzzer.cmake)
  # Generous: start-up, loading the corpus and the sanitizers' exit come on top of the run.
  math(EXPR timeout "${GPUREDUCE_FUZZ_SECONDS} * 2 + 120")
  set_tests_properties(fuzz.${name} PROPERTIES LABELS fuzz TIMEOUT ${timeout})
endfunction()
