#pragma once

// The CUDA backend: one Device per GPU; a request goes to the GPU with the fewest bytes
// outstanding, or the one it pins, and a large one to every GPU at once (SplitSession).

#include <atomic>
#include <memory>
#include <vector>

#include "runtime/backend.h"
#include "runtime/cpu/cpu_backend.h"
#include "runtime/cuda/device.h"

namespace gpureduce::runtime {

struct CudaBackendOptions {
  std::vector<int> devices;  // empty: every visible GPU
  DeviceOptions device;
  // `auto` requests known to carry fewer elements than this run on the CPU (on `host_threads`
  // threads, 0: one per hardware thread), where a copy and a launch cost more than the
  // reduction; 0: never.
  uint64_t auto_cpu_below = 0;
  uint32_t host_threads = 0;
  // Requests known to carry at least this many elements, and pinned to no GPU, are spread over
  // every usable GPU (runtime/split_session.h); 0: never.
  uint64_t split_above = 0;
};

// The number of usable GPUs, or the reason there are none.
absl::StatusOr<int> VisibleGpuCount();

class CudaBackend final : public Backend {
 public:
  static absl::StatusOr<std::unique_ptr<CudaBackend>> Create(const CudaBackendOptions& options);

  kernels::BackendKind kind() const override { return kernels::BackendKind::kCuda; }
  std::vector<DeviceDescription> devices() const override;
  uint32_t workers() const override;

  // Warms every op up on every GPU, then reduces known data through the whole pipeline.
  absl::Status SelfCheck() override;
  absl::StatusOr<std::unique_ptr<ReduceSession>> Open(const RequestSpec& spec) override;
  absl::StatusOr<std::unique_ptr<MemoryHold>> PinHost(const void* base, size_t bytes) override;
  absl::StatusOr<OpenedDeviceMemory> OpenIpcHandle(std::span<const std::byte> handle,
                                                   int device) override;
  void set_on_lost(std::function<void()> on_lost) override;
  std::vector<DeviceUsage> Usage() const override;

 private:
  CudaBackend() = default;
  absl::Status CheckDevice(Device& device);
  // The device this server owns with CUDA ordinal `index`, or FAILED_PRECONDITION.
  absl::StatusOr<Device*> OwnedDevice(int index) const;
  absl::StatusOr<std::unique_ptr<ReduceSession>> OpenOn(Device& device, const RequestSpec& spec);
  // A session on every usable GPU that can take one, or null where fewer than two can.
  std::unique_ptr<ReduceSession> OpenSplit(const RequestSpec& spec);

  std::vector<std::unique_ptr<Device>> devices_;
  std::atomic<uint32_t> next_device_{0};
  std::atomic<bool> all_lost_reported_{false};
  std::unique_ptr<CpuBackend> host_;  // small `auto` requests
  uint64_t auto_cpu_below_ = 0;
  uint64_t split_above_ = 0;
};

}  // namespace gpureduce::runtime
