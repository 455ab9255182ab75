#pragma once

// The CUDA backend: one Device per GPU, each request on the GPU it is opened on. Which GPU that
// is, and whether a request runs on the CPU or on every GPU at once, is the routing backend's
// choice (runtime/routing/routing_backend.h).

#include <atomic>
#include <memory>
#include <vector>

#include "runtime/batching/small_batcher.h"
#include "runtime/cuda/cuda_block_kernels.h"
#include "runtime/cuda/device.h"
#include "runtime/device_options.h"
#include "runtime/routing/gpu_backend.h"

namespace gpureduce::runtime {

struct CudaBackendOptions {
  std::vector<int> devices;  // CUDA ordinals; empty: every visible GPU
  DeviceOptions device;
  // Small unary requests on single_pass gathered into one launch per GPU (SmallBatcher).
  bool batch_small_requests = false;
  BatchOptions batch;
};

// The number of usable GPUs, or the reason there are none.
absl::StatusOr<int> VisibleGpuCount();

class CudaBackend final : public GpuBackend {
 public:
  static absl::StatusOr<std::unique_ptr<CudaBackend>> Create(const CudaBackendOptions& options);

  kernels::BackendKind kind() const override { return kernels::BackendKind::kCuda; }
  std::vector<DeviceDescription> devices() const override;
  uint32_t workers() const override;

  // Warms every op up on every GPU, then reduces known data through the whole pipeline.
  absl::Status SelfCheck() override;
  // On the GPU `spec.device` names; alone (without the routing backend to choose), a request
  // pinned to no GPU runs on the first.
  absl::StatusOr<std::unique_ptr<ReduceSession>> Open(const RequestSpec& spec) override;
  size_t gpu_count() const override { return devices_.size(); }
  GpuLoad Load(size_t position) const override;
  absl::StatusOr<std::unique_ptr<ReduceSession>> OpenOn(size_t position,
                                                        const RequestSpec& spec) override;
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
  absl::StatusOr<std::unique_ptr<ReduceSession>> OpenOnDevice(Device& device,
                                                              const RequestSpec& spec);

  // A request SmallBatcher `position` takes.
  bool Batches(size_t position, const RequestSpec& spec) const;

  std::vector<std::unique_ptr<Device>> devices_;
  // Per device where small requests are batched (after devices_: they go first, each waiting
  // for its batches).
  std::vector<std::unique_ptr<CudaBlockKernels>> batch_kernels_;
  std::vector<std::unique_ptr<SmallBatcher>> batchers_;
  std::atomic<bool> all_lost_reported_{false};
};

}  // namespace gpureduce::runtime
