#pragma once

// Move-only owners of CUDA resources. Destructors log failures and never throw.

#include <cuda_runtime_api.h>

#include <cstddef>
#include <utility>

#include "absl/status/statusor.h"

namespace gpureduce::server {

// Owns one handle and destroys it with `DestroyT` (which returns a cudaError_t).
template <typename HandleT, cudaError_t (*DestroyT)(HandleT)>
class CudaHandle {
 public:
  CudaHandle() = default;
  explicit CudaHandle(HandleT handle) : handle_(handle) {}
  CudaHandle(CudaHandle&& other) noexcept : handle_(std::exchange(other.handle_, HandleT{})) {}
  CudaHandle& operator=(CudaHandle&& other) noexcept {
    if (this != &other) {
      Reset();
      handle_ = std::exchange(other.handle_, HandleT{});
    }
    return *this;
  }
  CudaHandle(const CudaHandle&) = delete;
  CudaHandle& operator=(const CudaHandle&) = delete;
  ~CudaHandle() { Reset(); }

  HandleT get() const { return handle_; }

 private:
  void Reset();
  HandleT handle_{};
};

// Reports a failed destroy; defined out of line to keep logging out of this header.
void LogCudaDestroyFailure(cudaError_t error, const char* what);

template <typename HandleT, cudaError_t (*DestroyT)(HandleT)>
void CudaHandle<HandleT, DestroyT>::Reset() {
  if (handle_ != HandleT{}) {
    if (cudaError_t error = DestroyT(handle_); error != cudaSuccess) {
      LogCudaDestroyFailure(error, "CUDA resource");
    }
    handle_ = HandleT{};
  }
}

using CudaStream = CudaHandle<cudaStream_t, cudaStreamDestroy>;
using CudaEvent = CudaHandle<cudaEvent_t, cudaEventDestroy>;
using DeviceMemory = CudaHandle<void*, cudaFree>;
using PinnedMemory = CudaHandle<void*, cudaFreeHost>;

absl::StatusOr<CudaStream> CreateStream();             // non-blocking w.r.t. the legacy stream
absl::StatusOr<CudaEvent> CreateTimingEvent();
absl::StatusOr<DeviceMemory> AllocateDevice(size_t bytes);
absl::StatusOr<PinnedMemory> AllocatePinned(size_t bytes);

}  // namespace gpureduce::server
