#pragma once

// Move-only owners of CUDA resources: streams, events, and typed device and pinned host buffers.
// Destructors log failures and never throw. Everything is allocated at start; the request path
// allocates nothing.

#include <cuda_runtime_api.h>

#include <chrono>
#include <cstddef>
#include <utility>

#include "absl/status/statusor.h"

namespace gpureduce::runtime {

// Reports a failed destroy; defined out of line to keep logging out of this header.
void LogCudaDestroyFailure(cudaError_t error, const char* what);

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
  void Reset() {
    if (handle_ != HandleT{}) {
      if (cudaError_t error = DestroyT(handle_); error != cudaSuccess) {
        LogCudaDestroyFailure(error, "CUDA resource");
      }
      handle_ = HandleT{};
    }
  }

  HandleT handle_{};
};

using CudaStream = CudaHandle<cudaStream_t, cudaStreamDestroy>;
using CudaEvent = CudaHandle<cudaEvent_t, cudaEventDestroy>;

// `count` elements of T in device memory (DeviceBuffer) or page-locked host memory
// (PinnedBuffer), which asynchronous copies need.
template <typename T, cudaError_t (*FreeT)(void*)>
class CudaBuffer {
 public:
  CudaBuffer() = default;
  CudaBuffer(void* memory, size_t count) : memory_(memory), count_(count) {}

  T* get() const { return static_cast<T*>(memory_.get()); }
  size_t size() const { return count_; }
  size_t bytes() const { return count_ * sizeof(T); }

 private:
  CudaHandle<void*, FreeT> memory_;
  size_t count_ = 0;
};

template <typename T>
using DeviceBuffer = CudaBuffer<T, cudaFree>;
template <typename T>
using PinnedBuffer = CudaBuffer<T, cudaFreeHost>;

// The block scheduler starts a high-priority stream's waiting blocks before a low one's.
enum class StreamPriority { kHigh, kLow };
// Non-blocking w.r.t. the legacy stream.
absl::StatusOr<CudaStream> CreateStream(StreamPriority priority = StreamPriority::kHigh);
absl::StatusOr<CudaEvent> CreateTimingEvent();
// The time between two recorded timing events; zero where either has not completed.
std::chrono::nanoseconds ElapsedBetween(const CudaEvent& from, const CudaEvent& to);

namespace internal {
// Raw allocations for the typed ones below, which own them at once.
absl::StatusOr<void*> AllocateDeviceBytes(size_t bytes);
absl::StatusOr<void*> AllocatePinnedBytes(size_t bytes);
}  // namespace internal

template <typename T>
absl::StatusOr<DeviceBuffer<T>> AllocateDevice(size_t count) {
  absl::StatusOr<void*> memory = internal::AllocateDeviceBytes(count * sizeof(T));
  if (!memory.ok()) return memory.status();
  return DeviceBuffer<T>(*memory, count);
}

template <typename T>
absl::StatusOr<PinnedBuffer<T>> AllocatePinned(size_t count) {
  absl::StatusOr<void*> memory = internal::AllocatePinnedBytes(count * sizeof(T));
  if (!memory.ok()) return memory.status();
  return PinnedBuffer<T>(*memory, count);
}

}  // namespace gpureduce::runtime
