# Compiles through ccache where it is installed (scripts/setup.sh installs it), so that a clean
# clone on a machine that has built before, and every preset, reuse earlier compilations. The
# cache lives outside the clone (ccache's default, ~/.cache/ccache, or CCACHE_DIR). BASEDIR and
# NOHASHDIR make the paths relative, so clones in other folders hit the same entries; DEPEND
# hashes the compiler's own dependency list (-MD, which Ninja asks for anyway) instead of running
# the preprocessor once more, so a cold cache (a fresh CI machine) costs no extra pass.
option(GPUREDUCE_CCACHE "Compile through ccache when it is installed" ON)
find_program(GPUREDUCE_CCACHE_PROGRAM ccache)
if(GPUREDUCE_CCACHE AND GPUREDUCE_CCACHE_PROGRAM)
  set(launcher env CCACHE_BASEDIR=${CMAKE_SOURCE_DIR} CCACHE_NOHASHDIR=1 CCACHE_DEPEND=1
               CCACHE_SLOPPINESS=include_file_mtime,include_file_ctime,time_macros
               ${GPUREDUCE_CCACHE_PROGRAM})
  set(CMAKE_C_COMPILER_LAUNCHER ${launcher})
  set(CMAKE_CXX_COMPILER_LAUNCHER ${launcher})
  set(CMAKE_CUDA_COMPILER_LAUNCHER ${launcher})
  message(STATUS "gpureduce: compiling through ${GPUREDUCE_CCACHE_PROGRAM}")
endif()
