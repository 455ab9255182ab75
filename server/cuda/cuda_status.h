#pragma once

// CUDA errors as absl::Status: the one place that names them (cudaGetErrorName), records where
// they happened, and decides their gRPC code.

#include <cuda_runtime_api.h>

#include "absl/status/status.h"

namespace gpureduce::server {

// cudaErrorMemoryAllocation is RESOURCE_EXHAUSTED (the server keeps serving); everything else
// is INTERNAL. The message carries the CUDA error name, the call and file:line.
absl::Status CudaError(cudaError_t error, const char* call, const char* file, int line);

// Errors that corrupt the CUDA context: every later call fails too, so the device is lost.
bool IsStickyCudaError(cudaError_t error);

}  // namespace gpureduce::server

#define CUDA_RETURN_IF_ERROR(call)                                               \
  do {                                                                           \
    if (cudaError_t _gr_cuda_error = (call); _gr_cuda_error != cudaSuccess) {    \
      return ::gpureduce::server::CudaError(_gr_cuda_error, #call, __FILE__, __LINE__); \
    }                                                                            \
  } while (false)
