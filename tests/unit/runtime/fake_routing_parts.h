#pragma once

// A fake CPU and fake GPUs for the routing backend's tests: they only record what they were asked
// to open (the fake GPUs' sessions take the time a rate gives them, where one is set), and a
// fixture that routes requests and says where they went.

#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "runtime/routing/routing_backend.h"

namespace gpureduce::runtime {

using kernels::BackendKind;
using kernels::KernelId;

// Says where it was opened; reduces nothing, taking the time `gbps` gives the bytes where set,
// and `finish_seconds` to finish.
class FakeSession final : public ReduceSession {
 public:
  FakeSession(KernelId kernel, int device, double gbps = 0, double finish_seconds = 0)
      : kernel_(kernel), device_(device), gbps_(gbps), finish_seconds_(finish_seconds) {}
  void ConsumePieces(PayloadPieces data, ConsumeDone done) override {
    Take(data.bytes());
    std::move(done)(absl::OkStatus());
  }
  void ConsumeShared(const SharedSource& source, ConsumeDone done) override {
    Take(source.count * source.element_bytes);
    std::move(done)(absl::OkStatus());
  }
  void Finish(FinishDone done) override {
    if (finish_seconds_ > 0) {
      std::this_thread::sleep_for(std::chrono::duration<double>(finish_seconds_));
    }
    std::move(done)(gpureduce::Stats{});
  }
  BackendTiming timing() const override { return {}; }
  std::string device_name() const override { return absl::StrCat("fake ", device_); }
  std::vector<int> devices() const override { return {device_}; }
  void StartAt(uint64_t) override {}
  KernelId kernel() const override { return kernel_; }

 private:
  void Take(uint64_t bytes) const {
    if (gbps_ > 0) std::this_thread::sleep_for(std::chrono::duration<double>(bytes / gbps_ / 1e9));
  }

  const KernelId kernel_;
  const int device_;
  const double gbps_;
  const double finish_seconds_;
};

class FakeCpu final : public Backend {
 public:
  BackendKind kind() const override { return BackendKind::kCpu; }
  std::vector<DeviceDescription> devices() const override { return {{.name = "fake CPU"}}; }
  uint32_t workers() const override { return 1; }
  absl::Status SelfCheck() override { return self_check; }
  absl::StatusOr<std::unique_ptr<ReduceSession>> Open(const RequestSpec& spec) override {
    opened.push_back(spec);
    return std::make_unique<FakeSession>(spec.kernel, -1);
  }

  absl::Status self_check;
  std::vector<RequestSpec> opened;
};

struct FakeGpu {
  GpuLoad load;
  bool full = false;  // its request slots are all taken
  std::vector<RequestSpec> opened;
};

class FakeGpus final : public GpuBackend {
 public:
  explicit FakeGpus(size_t count) : gpus(count) {}

  BackendKind kind() const override { return BackendKind::kCuda; }
  std::vector<DeviceDescription> devices() const override {
    std::vector<DeviceDescription> out;
    for (size_t i = 0; i < gpus.size(); ++i) out.push_back({.index = int(i), .name = "fake GPU"});
    return out;
  }
  uint32_t workers() const override { return 4 * uint32_t(gpus.size()); }
  absl::Status SelfCheck() override {
    checked = true;
    return absl::OkStatus();
  }
  // A pinned request: the CUDA backend's own lookup of the GPU.
  absl::StatusOr<std::unique_ptr<ReduceSession>> Open(const RequestSpec& spec) override {
    pinned.push_back(spec);
    if (spec.device >= int(gpus.size())) return absl::FailedPreconditionError("no such GPU");
    return std::make_unique<FakeSession>(spec.kernel, spec.device);
  }
  size_t gpu_count() const override { return gpus.size(); }
  GpuLoad Load(size_t position) const override { return gpus[position].load; }
  absl::StatusOr<std::unique_ptr<ReduceSession>> OpenOn(size_t position,
                                                        const RequestSpec& spec) override {
    FakeGpu& gpu = gpus[position];
    if (gpu.full) return absl::ResourceExhaustedError("full");
    gpu.opened.push_back(spec);
    return std::make_unique<FakeSession>(spec.kernel, int(position), gbps, finish_seconds);
  }

  std::vector<FakeGpu> gpus;
  double gbps = 0;            // the rate its sessions take bytes at; 0: at once
  double finish_seconds = 0;  // what each session's Finish takes
  std::vector<RequestSpec> pinned;
  bool checked = false;
};

inline RequestSpec Auto(uint64_t size_hint) {
  RequestSpec spec{gpureduce::Op::kSum, KernelId::kSinglePass, 0, 0};
  spec.auto_kernel = true;
  spec.size_hint = size_hint;
  return spec;
}

inline RequestSpec HostRegion(uint64_t size_hint) {
  RequestSpec spec = Auto(size_hint);
  spec.data_in_host_region = true;
  return spec;
}

inline RequestSpec Named(KernelId kernel, uint64_t size_hint) {
  RequestSpec spec{gpureduce::Op::kMax, kernel, 0, 0};
  spec.size_hint = size_hint;
  return spec;
}

class RoutingBackendTest : public ::testing::Test {
 protected:
  void Make(size_t gpus, RoutingThresholds thresholds) {
    auto cpu = std::make_unique<FakeCpu>();
    auto fakes = std::make_unique<FakeGpus>(gpus);
    cpu_ = cpu.get();
    gpus_ = fakes.get();
    backend_ = std::make_unique<RoutingBackend>(std::move(cpu), std::move(fakes), thresholds);
  }

  // The devices the session opened for `spec` runs on (-1: the CPU), or the error.
  std::string Route(const RequestSpec& spec) {
    absl::StatusOr<std::unique_ptr<ReduceSession>> session = backend_->Open(spec);
    if (!session.ok()) return session.status().ToString();
    std::string devices;
    for (int device : (*session)->devices())
      absl::StrAppend(&devices, devices.empty() ? "" : ",", device);
    return devices;
  }

  FakeCpu* cpu_ = nullptr;
  FakeGpus* gpus_ = nullptr;
  std::unique_ptr<RoutingBackend> backend_;
};

}  // namespace gpureduce::runtime
