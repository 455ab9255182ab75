# Runs one libFuzzer target for SECONDS over a fresh copy of its committed seed corpus (so the
# committed corpus never grows), then prints one summary line. Fails on anything the fuzzer
# reports: a crash or failed check, an ASan or UBSan report, a leak, an input slower than 10 s,
# more than 2 GiB of memory. The fuzz.* tests (cmake/Fuzzing.cmake) and scripts/fuzz.sh run it.
#
#   cmake -DNAME=<target> -DFUZZER=<binary> -DSOURCE_DIR=<tests/fuzz> -DWORK=<scratch dir>
#         -DSECONDS=<s> -P run_fuzzer.cmake
foreach(var NAME FUZZER SOURCE_DIR WORK SECONDS)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "run_fuzzer.cmake: -D${var}=... is required")
  endif()
endforeach()

set(corpus ${WORK}/corpus)
set(artifacts ${WORK}/artifacts)
set(log ${WORK}/fuzz.log)
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${corpus} ${artifacts})
file(GLOB seeds ${SOURCE_DIR}/corpus/${NAME}/*)
list(LENGTH seeds seed_count)
if(seed_count EQUAL 0)
  message(FATAL_ERROR "${NAME}: no seeds in ${SOURCE_DIR}/corpus/${NAME}")
endif()
file(COPY ${seeds} DESTINATION ${corpus})

# 16 KiB inputs reach every limit the targets set; -timeout is per input.
set(args -max_total_time=${SECONDS} -max_len=16384 -timeout=10 -rss_limit_mb=2048
         -print_final_stats=1 -artifact_prefix=${artifacts}/)
if(EXISTS ${SOURCE_DIR}/dict/${NAME}.dict)
  list(APPEND args -dict=${SOURCE_DIR}/dict/${NAME}.dict)
endif()
set(ENV{UBSAN_OPTIONS} "print_stacktrace=1:halt_on_error=1")
execute_process(COMMAND ${FUZZER} ${args} ${corpus}
                OUTPUT_FILE ${log} ERROR_FILE ${log} RESULT_VARIABLE result)

file(READ ${log} text)
# The figures of the run, from libFuzzer's own report.
macro(_last regex out)
  string(REGEX MATCHALL "${regex}" _all "${text}")
  set(${out} "?")
  if(_all)
    list(GET _all -1 _match)
    string(REGEX REPLACE "${regex}" "\\1" ${out} "${_match}")
  endif()
endmacro()
_last("stat::number_of_executed_units: ([0-9]+)" runs)
_last("stat::average_exec_per_sec: +([0-9]+)" speed)
_last("stat::peak_rss_mb: +([0-9]+)" rss)
_last("cov: ([0-9]+) ft:" cov)
_last("ft: ([0-9]+) corp:" ft)
_last("corp: ([0-9]+)/" corp)
_last("Loaded 1 modules +.([0-9]+) inline 8-bit counters" edges)
_last("Done [0-9]+ runs in ([0-9]+) second" elapsed)
if(elapsed STREQUAL "?")
  set(elapsed ${SECONDS})
endif()
file(GLOB found ${artifacts}/*)
list(LENGTH found crashes)
message("fuzz ${NAME}: ${runs} runs in ${elapsed} s (${speed}/s), cov ${cov} of ${edges} edges, "
        "ft ${ft}, corpus ${seed_count} -> ${corp} inputs, peak RSS ${rss} MB, crashes ${crashes}")

if(NOT result EQUAL 0 OR crashes GREATER 0)
  string(LENGTH "${text}" length)
  set(tail_start 0)
  if(length GREATER 12000)
    math(EXPR tail_start "${length} - 12000")
  endif()
  string(SUBSTRING "${text}" ${tail_start} -1 tail)
  message("${tail}")
  message(FATAL_ERROR "${NAME} failed (exit ${result}); the input is in ${artifacts}/ "
                      "(replay: ${FUZZER} <file>; full log: ${log})")
endif()
