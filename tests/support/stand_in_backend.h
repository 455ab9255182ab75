#pragma once

// A backend that has only a kind or two (and the device usage and host pinning a test sets):
// what resolving a spec, a metrics scrape and a shared-memory region need, so the server's edge
// can be tested for either backend on a machine without a GPU. It runs nothing.

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "runtime/backend.h"

namespace gpureduce::testing {

class StandInBackend final : public runtime::Backend {
 public:
  // `also`: another backend whose kernels it runs too, as a server with GPUs runs the CPU's.
  explicit StandInBackend(kernels::BackendKind kind,
                          std::optional<kernels::BackendKind> also = std::nullopt)
      : kind_(kind), also_(also) {}
  kernels::BackendKind kind() const override { return kind_; }
  bool Runs(const kernels::KernelInfo& kernel) const override {
    return kernel.backend == kind_ || kernel.backend == also_;
  }
  std::vector<runtime::DeviceDescription> devices() const override { return {}; }
  uint32_t workers() const override { return 1; }
  absl::Status SelfCheck() override { return absl::OkStatus(); }
  absl::StatusOr<std::unique_ptr<runtime::ReduceSession>> Open(
      const runtime::RequestSpec&) override {
    return absl::UnimplementedError("a stand-in backend runs nothing");
  }
  std::vector<runtime::DeviceUsage> Usage() const override { return usage; }
  absl::StatusOr<std::unique_ptr<runtime::MemoryHold>> PinHost(const void* base,
                                                               size_t bytes) override {
    if (!pin) return nullptr;
    return pin(base, bytes);
  }

  std::vector<runtime::DeviceUsage> usage;
  // Unset: pins nothing, as the CPU backend.
  std::function<absl::StatusOr<std::unique_ptr<runtime::MemoryHold>>(const void*, size_t)> pin;

 private:
  kernels::BackendKind kind_;
  std::optional<kernels::BackendKind> also_;
};

}  // namespace gpureduce::testing
