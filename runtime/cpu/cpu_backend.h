#pragma once

// The CPU backend: the `cpu` kernel on a pool of worker threads. It is what `auto` runs on a
// machine without a GPU, so CI and a laptop get the same service.

#include <memory>

#include "common/thread_pool.h"
#include "runtime/backend.h"

namespace gpureduce::runtime {

class CpuBackend final : public Backend {
 public:
  // `threads` 0: one per hardware thread. `server_device`: the CPU is the server's device 0, as
  // responses list it (device_indices); false where it helps a server whose devices are GPUs
  // (RoutingBackend), whose responses then list none for what the CPU reduced.
  explicit CpuBackend(uint32_t threads, bool server_device = true);

  kernels::BackendKind kind() const override { return kernels::BackendKind::kCpu; }
  std::vector<DeviceDescription> devices() const override;
  // "model (N threads)", as responses and the log name it.
  std::string DeviceName() const;
  uint32_t workers() const override { return static_cast<uint32_t>(pool_.size()); }

  absl::Status SelfCheck() override;
  absl::StatusOr<std::unique_ptr<ReduceSession>> Open(const RequestSpec& spec) override;

 private:
  ThreadPool pool_;
  DeviceDescription device_;
  const bool server_device_;
};

}  // namespace gpureduce::runtime
