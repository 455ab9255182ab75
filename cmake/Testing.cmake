include(GoogleTest)
# gpureduce_add_test(<name> SOURCES ... LIBS ... [LABELS ...] [TIMEOUT s] [SERIAL])
#
# CI runs CTest with two jobs (scripts/test.sh); SERIAL runs each of the suite's tests alone,
# for those that time a server's answers or hold most of the machine (the attacks, overload,
# open-loop load).
#
# Normally one executable per suite, registered with gtest_discover_tests. With
# GPUREDUCE_STATIC_DEPS (the package) each executable would carry all of gRPC, so the sources and
# libraries are collected instead, and gpureduce_add_combined_test() (called at the end of
# tests/CMakeLists.txt) builds them into the one executable `gpureduce-tests`.
function(gpureduce_add_test name)
  cmake_parse_arguments(ARG "SERIAL" "TIMEOUT" "SOURCES;LIBS;LABELS" ${ARGN})
  if(NOT ARG_TIMEOUT)
    set(ARG_TIMEOUT 300)
  endif()
  if(GPUREDUCE_STATIC_DEPS)
    if(TARGET gpureduce-tests)
      message(FATAL_ERROR "gpureduce_add_test(${name}) after gpureduce_add_combined_test(): "
                          "add the suite's folder before the end of tests/CMakeLists.txt")
    endif()
    foreach(source IN LISTS ARG_SOURCES)
      get_filename_component(source ${source} ABSOLUTE BASE_DIR ${CMAKE_CURRENT_SOURCE_DIR})
      set_property(GLOBAL APPEND PROPERTY GPUREDUCE_COMBINED_TEST_SOURCES ${source})
    endforeach()
    set_property(GLOBAL APPEND PROPERTY GPUREDUCE_COMBINED_TEST_LIBS ${ARG_LIBS})
    set_property(GLOBAL APPEND PROPERTY GPUREDUCE_COMBINED_TEST_TIMEOUTS ${ARG_TIMEOUT})
    return()
  endif()
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE ${ARG_LIBS} gpureduce_options gpureduce_test_includes
                                        GTest::gmock GTest::gtest GTest::gtest_main)
  set(serial FALSE)
  if(ARG_SERIAL)
    set(serial TRUE)
  endif()
  gtest_discover_tests(${name}
    DISCOVERY_TIMEOUT 60
    PROPERTIES TIMEOUT ${ARG_TIMEOUT} LABELS "${ARG_LABELS}" RUN_SERIAL ${serial})
endfunction()

# The combined test executable of a GPUREDUCE_STATIC_DEPS build; does nothing otherwise.
function(gpureduce_add_combined_test)
  if(NOT GPUREDUCE_STATIC_DEPS)
    return()
  endif()
  get_property(sources GLOBAL PROPERTY GPUREDUCE_COMBINED_TEST_SOURCES)
  get_property(libs GLOBAL PROPERTY GPUREDUCE_COMBINED_TEST_LIBS)
  get_property(timeouts GLOBAL PROPERTY GPUREDUCE_COMBINED_TEST_TIMEOUTS)
  list(REMOVE_DUPLICATES libs)
  set(timeout 0)
  foreach(value IN LISTS timeouts)
    if(value GREATER timeout)
      set(timeout ${value})
    endif()
  endforeach()
  add_executable(gpureduce-tests ${sources})
  target_link_libraries(gpureduce-tests PRIVATE ${libs} gpureduce_options gpureduce_test_includes
                                                GTest::gmock GTest::gtest GTest::gtest_main)
  gtest_discover_tests(gpureduce-tests
    DISCOVERY_TIMEOUT 120
    PROPERTIES TIMEOUT ${timeout})
endfunction()
