#include "runtime/routing/routing_backend.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/fmt_absl.h"
#include "common/status_macros.h"
#include "runtime/routing/host_rates.h"
#include "runtime/split_session.h"
#include "spdlog/spdlog.h"

namespace gpureduce::runtime {
namespace {

// A stream of unknown length is judged by the readers' rates, as a request this large.
constexpr uint64_t kUnknownLength = uint64_t{1} << 30;
// The logs say where requests go up to these sizes: a message near gRPC's limits, a region
// of a few GiB.
constexpr uint64_t kLargestMessage = uint64_t{1} << 30;
constexpr uint64_t kLargestRegion = uint64_t{16} << 30;
// A measured share starts where a split of this size would end both readers together.
constexpr uint64_t kSplitMeasured = uint64_t{1} << 30;
// A measured share stays within these, so that both readers keep being timed.
constexpr double kLeastShare = 0.05;
constexpr double kMostShare = 0.95;

}  // namespace

RoutingBackend::RoutingBackend(std::unique_ptr<Backend> cpu, std::unique_ptr<GpuBackend> gpus,
                               RoutingThresholds thresholds)
    : cpu_(std::move(cpu)),
      gpus_(std::move(gpus)),
      thresholds_(thresholds),
      host_cpu_share_(std::clamp(thresholds.host_cpu_share, 0.0, 1.0)) {}

bool RoutingBackend::Runs(const kernels::KernelInfo& kernel) const {
  return gpus_->Runs(kernel) || cpu_->Runs(kernel);
}

absl::Status RoutingBackend::SelfCheck() {
  RETURN_IF_ERROR(cpu_->SelfCheck());
  RETURN_IF_ERROR(gpus_->SelfCheck());
  MeasureCosts();
  return absl::OkStatus();
}

void RoutingBackend::set_costs(const ReaderCosts& message, const ReaderCosts& region) {
  message_costs_ = message;
  region_costs_ = region;
}

void RoutingBackend::MeasureCosts() {
  const uint64_t fallback_mib = thresholds_.auto_cpu_below * sizeof(float) >> 20;
  if (thresholds_.measured_placement) {
    absl::StatusOr<ReaderCosts> message = MeasureMessageCosts(*cpu_, *gpus_);
    if (message.ok()) {
      message_costs_ = *message;
      spdlog::info("`auto` requests of a message's bytes: {}; streams of unknown length as {}",
                   DescribePlacement(*message, 0, kLargestMessage),
                   PlacementName(Place(*message, kUnknownLength)));
    } else {
      spdlog::warn(
          "could not measure the CPU's and the GPU's costs for messages ({}); `auto` requests "
          "below {} MiB run on the CPU",
          message.status().message(), fallback_mib);
    }
  }
  const bool measured_share = thresholds_.host_cpu_share < 0;
  if (!thresholds_.host_regions || !(measured_share || thresholds_.measured_placement)) return;
  absl::StatusOr<ReaderCosts> region = MeasureRegionCosts(*cpu_, *gpus_);
  if (!region.ok()) {
    spdlog::warn(
        "host regions: could not measure the CPU's and the GPU's costs ({}); `auto` requests of "
        "them run on the CPU below {} MiB, else {}",
        region.status().message(), fallback_mib,
        measured_share ? "on a GPU" : "as --host-region-split says");
    return;
  }
  region_costs_ = *region;
  if (measured_share) {
    // Neither reader left out, as LearnHostShare keeps it: a split at 0 or 1 would never open,
    // and so never be timed to correct a noisy start.
    const double share = std::clamp(EvenShare(*region, kSplitMeasured), kLeastShare, kMostShare);
    host_cpu_share_.store(share, std::memory_order_relaxed);
    logged_host_share_.store(share, std::memory_order_relaxed);
  }
  spdlog::info(
      "`auto` requests of system shared memory: {}; the CPU's share of a split {:.1f}%{} "
      "(--host-region-split)",
      DescribePlacement(*region, host_cpu_share(), kLargestRegion), 100 * host_cpu_share(),
      measured_share ? ", then following the times the two take together" : "");
}

// The thresholds count float32 elements: what matters is the bytes to move. (Saturated: a
// declared count near 2^64 must not wrap to a small request.)
uint64_t RoutingBackend::FloatSize(const RequestSpec& spec) {
  const uint64_t element_bytes = gpureduce::DTypeSize(spec.dtype);
  return spec.size_hint > UINT64_MAX / element_bytes
             ? UINT64_MAX / sizeof(float)
             : spec.size_hint * element_bytes / sizeof(float);
}

Placement RoutingBackend::PlaceAuto(const RequestSpec& spec) const {
  if (!spec.auto_kernel) return Placement::kGpu;
  const bool region = spec.data_in_host_region;
  const double share = region ? host_cpu_share() : 0;
  const std::optional<ReaderCosts>& costs = region ? region_costs_ : message_costs_;
  if (thresholds_.measured_placement && costs.has_value()) {
    return Place(*costs, spec.size_hint == 0 ? kUnknownLength : FloatSize(spec) * sizeof(float),
                 share);
  }
  if (spec.size_hint > 0 && FloatSize(spec) < thresholds_.auto_cpu_below) return Placement::kCpu;
  if (!region || share <= 0) return Placement::kGpu;
  return share >= 1 ? Placement::kCpu : Placement::kBoth;
}

absl::StatusOr<std::unique_ptr<ReduceSession>> RoutingBackend::OpenOnCpuKernel(
    const RequestSpec& spec) {
  RequestSpec on_cpu = spec;
  on_cpu.kernel = cpu_->default_kernel();
  return cpu_->Open(on_cpu);
}

bool RoutingBackend::RunsOnCpu(const RequestSpec& spec) const {
  return cpu_->Runs(kernels::GetKernel(spec.kernel));
}

absl::StatusOr<std::unique_ptr<ReduceSession>> RoutingBackend::Open(const RequestSpec& spec) {
  if (spec.layout != nullptr) return OpenArray(spec);
  if (spec.device >= 0) {  // the data is on that GPU: neither the CPU nor another GPU can read it
    if (RunsOnCpu(spec)) {
      return absl::FailedPreconditionError(
          absl::StrCat("kernel '", kernels::GetKernel(spec.kernel).name,
                       "' runs on the CPU, but the request pins GPU ", spec.device,
                       " (by its device, or by a CUDA IPC region on that GPU); name a GPU "
                       "kernel or auto, or leave the device unset"));
    }
    return gpus_->Open(spec);
  }
  if (RunsOnCpu(spec)) return cpu_->Open(spec);
  const Placement placement = PlaceAuto(spec);
  if (placement == Placement::kCpu) return OpenOnCpuKernel(spec);
  if (thresholds_.split_above != 0 && FloatSize(spec) >= thresholds_.split_above &&
      gpus_->gpu_count() > 1) {
    if (std::unique_ptr<ReduceSession> split = OpenSplit(spec); split != nullptr) return split;
  }
  if (placement == Placement::kBoth) {
    if (std::unique_ptr<ReduceSession> split = OpenHostSplit(spec, host_cpu_share());
        split != nullptr) {
      return split;
    }
  }
  return OpenOnLeastLoaded(spec);
}

std::unique_ptr<ReduceSession> RoutingBackend::OpenHostSplit(const RequestSpec& spec,
                                                             double share) {
  RequestSpec on_cpu = spec;
  on_cpu.kernel = cpu_->default_kernel();
  on_cpu.size_hint = static_cast<uint64_t>(static_cast<double>(spec.size_hint) * share);
  RequestSpec on_gpu = spec;
  on_gpu.size_hint = spec.size_hint - on_cpu.size_hint;  // what the GPU's load counts
  absl::StatusOr<std::unique_ptr<ReduceSession>> gpu = OpenOnLeastLoaded(on_gpu);
  if (!gpu.ok()) {
    // Every GPU lost: the CPU, which reads the region where it lies, takes all of it. GPUs only
    // busy keep their refusal (retry with backoff), not a region's worth of work piled on the
    // pool that serves small requests.
    if (!absl::IsUnavailable(gpu.status())) return nullptr;
    absl::StatusOr<std::unique_ptr<ReduceSession>> alone = OpenOnCpuKernel(spec);
    return alone.ok() ? *std::move(alone) : nullptr;
  }
  absl::StatusOr<std::unique_ptr<ReduceSession>> cpu = cpu_->Open(on_cpu);
  if (!cpu.ok()) return nullptr;
  // The GPU's range first: the response names its kernel, and lists the GPU and the CPU.
  std::vector<std::unique_ptr<ReduceSession>> parts;
  parts.push_back(std::move(*gpu));
  parts.push_back(std::move(*cpu));
  auto split =
      std::make_unique<SplitSession>(std::move(parts), std::vector<double>{1 - share, share});
  if (thresholds_.host_cpu_share < 0) {
    split->set_on_ranges_timed([this](const std::vector<SplitSession::RangeTime>& times) {
      LearnHostShare(times[0], times[1]);
    });
  }
  return split;
}

void RoutingBackend::LearnHostShare(const SplitSession::RangeTime& gpu,
                                    const SplitSession::RangeTime& cpu) {
  // 16 MiB: below it a range's fixed costs (a launch, the pool's wake-up) weigh. A GPU range
  // is timed when its last piece is queued, with up to its staging (64 MiB by default) still to
  // reduce: from 1 GiB that leaves it a few percent fast, where a short one would look many
  // times faster than it is and drive the share toward the GPU.
  constexpr uint64_t kLeastTimedRange = uint64_t{16} << 20;
  constexpr uint64_t kLeastTimedGpuRange = uint64_t{1} << 30;
  if (thresholds_.host_cpu_share >= 0 || gpu.bytes < kLeastTimedGpuRange ||
      cpu.bytes < kLeastTimedRange || gpu.seconds <= 0 || cpu.seconds <= 0) {
    return;
  }
  const double cpu_rate = static_cast<double>(cpu.bytes) / cpu.seconds;
  const double gpu_rate = static_cast<double>(gpu.bytes) / gpu.seconds;
  const double target = cpu_rate / (cpu_rate + gpu_rate);
  // Halfway: one request's pair of times is noisy, their trend is not. Neither reader is ever
  // left out, so that both keep being timed.
  // A compare-exchange: splits ending at once each move the share, none lost.
  double before = host_cpu_share_.load(std::memory_order_relaxed);
  double share = 0;
  do {
    share = std::clamp(0.5 * before + 0.5 * target, kLeastShare, kMostShare);
  } while (!host_cpu_share_.compare_exchange_weak(before, share, std::memory_order_relaxed));
  // Said where it moved by a tenth or more of the whole, not for every request.
  if (std::abs(share - logged_host_share_.load(std::memory_order_relaxed)) >= 0.1) {
    logged_host_share_.store(share, std::memory_order_relaxed);
    spdlog::info(
        "host regions: the CPU's share is now {:.1f}% (a split's ranges, read at once: the GPU's "
        "{:.1f} GB/s, the CPU's {:.1f} GB/s)",
        100 * share, gpu_rate / 1e9, cpu_rate / 1e9);
  }
}

// Axes and segments: on the CPU's kernel, or with gpu_arrays as a whole array's request would
// run (the GPUs' array kernels, reported as single_pass), never split.
absl::StatusOr<std::unique_ptr<ReduceSession>> RoutingBackend::OpenArray(const RequestSpec& spec) {
  const bool named_cpu = !spec.auto_kernel && RunsOnCpu(spec);
  if (named_cpu || !thresholds_.gpu_arrays) {
    if (!named_cpu && !spec.auto_kernel) {
      return absl::FailedPreconditionError(absl::StrCat(
          "kernel '", kernels::GetKernel(spec.kernel).name,
          "' reduces whole arrays; a request with axes or segments runs on the '",
          kernels::GetKernel(cpu_->default_kernel()).name,
          "' kernel on this server (auto picks it; --gpu-arrays runs them on the GPU)"));
    }
    if (spec.device >= 0) {
      return absl::FailedPreconditionError(absl::StrCat(
          "a request with axes or segments runs on the CPU here, but its data is on GPU ",
          spec.device,
          " (a CUDA IPC region) or the spec pins that GPU; send the array by "
          "message or system shared memory, or leave the device unset"));
    }
    return OpenOnCpuKernel(spec);
  }
  if (spec.kernel != kernels::KernelId::kSinglePass) {
    return absl::FailedPreconditionError(absl::StrCat(
        "kernel '", kernels::GetKernel(spec.kernel).name,
        "' reduces whole arrays; a request with axes or segments runs on single_pass (the GPU's "
        "array kernels) or cpu (auto picks one)"));
  }
  if (spec.device >= 0) return gpus_->Open(spec);
  if (PlaceAuto(spec) == Placement::kCpu) return OpenOnCpuKernel(spec);
  return OpenOnLeastLoaded(spec);
}

absl::StatusOr<std::unique_ptr<ReduceSession>> RoutingBackend::OpenOnLeastLoaded(
    const RequestSpec& spec) {
  // The usable GPU with the fewest bytes outstanding; ties in round-robin order, so that equal
  // requests alternate between idle GPUs.
  const size_t count = gpus_->gpu_count();
  const size_t start = next_gpu_.fetch_add(1);
  std::optional<size_t> least;
  uint64_t least_bytes = 0;
  for (size_t i = 0; i < count; ++i) {
    const size_t position = (start + i) % count;
    const GpuLoad load = gpus_->Load(position);
    if (load.lost) continue;
    if (!least.has_value() || load.outstanding_bytes < least_bytes) {
      least = position;
      least_bytes = load.outstanding_bytes;
    }
  }
  if (!least.has_value()) {
    return absl::UnavailableError("every GPU of this server is lost; it reports NOT_SERVING");
  }
  absl::StatusOr<std::unique_ptr<ReduceSession>> session = gpus_->OpenOn(*least, spec);
  // Rarely, its request slots are all taken: any other usable GPU will do.
  for (size_t i = 0; i < count && absl::IsResourceExhausted(session.status()); ++i) {
    const size_t other = (start + i) % count;
    if (other != *least && !gpus_->Load(other).lost) session = gpus_->OpenOn(other, spec);
  }
  return session;
}

std::unique_ptr<ReduceSession> RoutingBackend::OpenSplit(const RequestSpec& spec) {
  const size_t count = gpus_->gpu_count();
  size_t usable = 0;
  for (size_t position = 0; position < count; ++position) {
    usable += gpus_->Load(position).lost ? 0 : 1;
  }
  if (usable < 2) return nullptr;
  RequestSpec part = spec;
  part.size_hint = (spec.size_hint + usable - 1) / usable;  // each GPU's share of the load
  std::vector<std::unique_ptr<ReduceSession>> parts;
  for (size_t position = 0; position < count; ++position) {
    if (gpus_->Load(position).lost) continue;
    // A GPU whose request slots are all taken is left out; the others share the request.
    if (absl::StatusOr<std::unique_ptr<ReduceSession>> opened = gpus_->OpenOn(position, part);
        opened.ok()) {
      parts.push_back(std::move(*opened));
    }
  }
  // With fewer than two the request goes the usual way, counting its whole size (a part counts
  // only its share). With some GPUs left out, each part still counts one share of the usable.
  if (parts.size() < 2) return nullptr;
  return std::make_unique<SplitSession>(std::move(parts));
}

}  // namespace gpureduce::runtime
