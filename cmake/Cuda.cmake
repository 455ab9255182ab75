# Enables CUDA when a compiler is found; otherwise the build goes on without the CUDA backend.
include(CheckLanguage)
if(NOT CMAKE_CUDA_COMPILER AND NOT DEFINED ENV{CUDACXX} AND EXISTS /usr/local/cuda/bin/nvcc)
  set(CMAKE_CUDA_COMPILER /usr/local/cuda/bin/nvcc)
endif()
option(GPUREDUCE_WITH_CUDA "Build the CUDA backend when a CUDA compiler is found" ON)
set(GPUREDUCE_HAVE_CUDA OFF)
if(GPUREDUCE_WITH_CUDA)
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
      # Hopper only by default: one instantiation per kernel keeps CI's build short.
      set(CMAKE_CUDA_ARCHITECTURES 90)
    endif()
    enable_language(CUDA)
    set(CMAKE_CUDA_STANDARD 17)  # CMake 3.25 knows no C++20 dialect for nvcc
    set(CMAKE_CUDA_STANDARD_REQUIRED ON)
    set(GPUREDUCE_HAVE_CUDA ON)
    find_package(CUDAToolkit REQUIRED)
    message(STATUS "gpureduce: CUDA compiler ${CMAKE_CUDA_COMPILER} "
                   "(${CMAKE_CUDA_COMPILER_VERSION}), architectures ${CMAKE_CUDA_ARCHITECTURES}")
  endif()
endif()
if(NOT GPUREDUCE_HAVE_CUDA)
  message(WARNING "gpureduce: no CUDA compiler found (or GPUREDUCE_WITH_CUDA=OFF): "
                  "the CUDA backend is LEFT OUT; the server will run the CPU backend only.")
endif()
