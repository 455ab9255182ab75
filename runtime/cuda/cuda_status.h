#pragma once

// CUDA errors as absl::Status: the one place that names them (cudaGetErrorName), records where
// they happened, decides their gRPC code, and the one macro that checks a CUDA call.

#include <cuda_runtime_api.h>

#include <optional>

#include "absl/status/status.h"

namespace gpureduce::runtime {

// cudaErrorMemoryAllocation is RESOURCE_EXHAUSTED (the server keeps serving); everything else
// is INTERNAL. The message carries the CUDA error name, the call and file:line; the status
// carries the error itself for CudaErrorOf.
absl::Status CudaError(cudaError_t error, const char* call, const char* file, int line);

// The CUDA error a CudaError status was made from; nullopt for any other status.
std::optional<cudaError_t> CudaErrorOf(const absl::Status& status);

// Errors that corrupt the CUDA context: every later call fails too, so the device is lost.
bool IsStickyCudaError(cudaError_t error);

}  // namespace gpureduce::runtime

// Returns CudaError(...) from the enclosing function when `call` does not return cudaSuccess.
#define CUDA_RETURN_IF_ERROR(call)                                                       \
  do {                                                                                   \
    if (cudaError_t _gr_cuda_error = (call); _gr_cuda_error != cudaSuccess) {            \
      return ::gpureduce::runtime::CudaError(_gr_cuda_error, #call, __FILE__, __LINE__); \
    }                                                                                    \
  } while (false)
