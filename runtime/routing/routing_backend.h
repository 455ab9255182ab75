#pragma once

// The backend a server with GPUs runs: it composes the CPU backend and the GPUs' and decides
// where each request runs. A request that names the `cpu` kernel runs on the CPU; one pinned to a
// GPU runs there; an `auto` one where the self-check's measured costs for its data's location and
// size say it ends first (the CPU, a GPU, or for system shared memory both at once, in shares
// that follow their times); one known to be large is spread over every GPU at once
// (SplitSession); any other on the GPU with the fewest bytes outstanding.

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "runtime/backend.h"
#include "runtime/routing/gpu_backend.h"
#include "runtime/routing/placement.h"
#include "runtime/split_session.h"

namespace gpureduce::runtime {

// Sizes in float32 elements (4 bytes): a request of another dtype compares its bytes / 4.
struct RoutingThresholds {
  // `auto` requests known to carry fewer elements than this run on the CPU, where a copy and a
  // launch cost more than the reduction; 0: never. With measured_placement, only until the
  // self-check has measured (or where it could not).
  uint64_t auto_cpu_below = 0;
  // `auto` requests go where the self-check's measured costs for their data's location say they
  // end first (placement.h); a stream of unknown length is judged by the rates (as 1 GiB). The
  // costs compare the CPU with one GPU: a request placed on a GPU (or both) still goes over
  // every GPU from split_above.
  bool measured_placement = false;
  // Regions of system shared memory can reach the server: the self-check measures them too.
  bool host_regions = true;
  // Requests known to carry at least this many elements, and pinned to no GPU, are spread over
  // every usable GPU; 0: never.
  uint64_t split_above = 0;
  // Array requests (axes or segments) run on the GPUs' array kernels; otherwise on the CPU's.
  bool gpu_arrays = false;
  // An `auto` request reading a region of system shared memory, not sent to the CPU by
  // auto_cpu_below nor over several GPUs by split_above, is cut in two read at once: the CPU
  // takes this share of its elements and the least loaded GPU the rest. 0: the GPU alone; 1: the
  // CPU alone; below 0: the share the self-check measures (host_rates.h).
  double host_cpu_share = 0;
};

class RoutingBackend final : public Backend {
 public:
  RoutingBackend(std::unique_ptr<Backend> cpu, std::unique_ptr<GpuBackend> gpus,
                 RoutingThresholds thresholds);

  // The GPUs' kind, devices and workers: the CPU is their helper, not a device of the server.
  kernels::BackendKind kind() const override { return gpus_->kind(); }
  std::vector<DeviceDescription> devices() const override { return gpus_->devices(); }
  uint32_t workers() const override { return gpus_->workers(); }
  bool Runs(const kernels::KernelInfo& kernel) const override;

  // The CPU's check, then the GPUs', then what measured_placement and a measured host_cpu_share
  // need: the costs of each reader for a message's bytes and (host_regions) for a region's.
  absl::Status SelfCheck() override;
  // Costs as the self-check measures them (public for tests): a message's, a region's.
  void set_costs(const ReaderCosts& message, const ReaderCosts& region);
  // The CPU's share of an `auto` request of system shared memory now (see RoutingThresholds).
  double host_cpu_share() const { return host_cpu_share_.load(std::memory_order_relaxed); }
  // With a measured share (host_cpu_share below 0): a split request's GPU and CPU ranges took
  // these times, read at once; the share moves halfway to the one that would have ended them
  // together. Ranges too short to time say little and are passed over. (The splits this backend
  // opens call it; public for tests.)
  void LearnHostShare(const SplitSession::RangeTime& gpu, const SplitSession::RangeTime& cpu);
  absl::StatusOr<std::unique_ptr<ReduceSession>> Open(const RequestSpec& spec) override;

  absl::StatusOr<std::unique_ptr<MemoryHold>> PinHost(const void* base, size_t bytes) override {
    return gpus_->PinHost(base, bytes);
  }
  absl::StatusOr<OpenedDeviceMemory> OpenIpcHandle(std::span<const std::byte> handle,
                                                   int device) override {
    return gpus_->OpenIpcHandle(handle, device);
  }
  void set_on_lost(std::function<void()> on_lost) override {
    gpus_->set_on_lost(std::move(on_lost));
  }
  std::vector<DeviceUsage> Usage() const override { return gpus_->Usage(); }

 private:
  bool RunsOnCpu(const RequestSpec& spec) const;
  // The request's declared size in float32 elements' worth of bytes.
  static uint64_t FloatSize(const RequestSpec& spec);
  // Where an `auto` request goes (a GPU for any other): by the measured costs, or else by
  // auto_cpu_below and host_cpu_share.
  Placement PlaceAuto(const RequestSpec& spec) const;
  // Measures what SelfCheck promises, logs it and keeps it.
  void MeasureCosts();
  absl::StatusOr<std::unique_ptr<ReduceSession>> OpenArray(const RequestSpec& spec);
  // `spec` on the CPU, with the CPU's own kernel (`auto` below the crossover, or an array).
  absl::StatusOr<std::unique_ptr<ReduceSession>> OpenOnCpuKernel(const RequestSpec& spec);
  // A session on every usable GPU that can take one, or null where fewer than two can.
  std::unique_ptr<ReduceSession> OpenSplit(const RequestSpec& spec);
  absl::StatusOr<std::unique_ptr<ReduceSession>> OpenOnLeastLoaded(const RequestSpec& spec);
  // A region of system memory over a GPU and the CPU (its `share`), or null where no GPU can
  // take its part.
  std::unique_ptr<ReduceSession> OpenHostSplit(const RequestSpec& spec, double share);

  const std::unique_ptr<Backend> cpu_;
  const std::unique_ptr<GpuBackend> gpus_;
  const RoutingThresholds thresholds_;
  std::atomic<uint32_t> next_gpu_{0};
  std::atomic<double> host_cpu_share_;
  std::atomic<double> logged_host_share_{0};  // the share last logged
  // Measured by SelfCheck, before any request: read without a lock after.
  std::optional<ReaderCosts> message_costs_;
  std::optional<ReaderCosts> region_costs_;
};

}  // namespace gpureduce::runtime
