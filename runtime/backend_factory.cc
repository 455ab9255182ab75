#include "runtime/backend_factory.h"

#include <utility>

#include "common/fmt_absl.h"
#include "runtime/cpu/cpu_backend.h"
#include "spdlog/spdlog.h"
#if GPUREDUCE_HAVE_CUDA
#include "runtime/cuda/cuda_backend.h"
#include "runtime/routing/routing_backend.h"
#endif

namespace gpureduce::runtime {
namespace {

#if GPUREDUCE_HAVE_CUDA
absl::StatusOr<std::unique_ptr<Backend>> CreateCudaBackend(const BackendOptions& options) {
  absl::StatusOr<std::unique_ptr<CudaBackend>> gpus =
      CudaBackend::Create({.devices = options.devices,
                           .device = options.device,
                           .batch_small_requests = options.batch_small_requests,
                           .batch = options.batch});
  if (!gpus.ok()) return gpus.status();
  const RoutingThresholds thresholds = {
      .auto_cpu_below = options.auto_cpu_below_bytes / sizeof(float),
      .measured_placement = options.measured_placement,
      .host_regions = options.host_regions,
      .split_above = options.split_above_bytes / sizeof(float),
      .gpu_arrays = options.gpu_arrays,
      .host_cpu_share = options.host_cpu_share};
  return std::make_unique<RoutingBackend>(
      std::make_unique<CpuBackend>(options.worker_threads, /*server_device=*/false),
      std::move(*gpus), thresholds);
}
#endif

}  // namespace

bool HasCudaBackend() {
#if GPUREDUCE_HAVE_CUDA
  return true;
#else
  return false;
#endif
}

absl::StatusOr<std::unique_ptr<Backend>> CreateBackend(const BackendOptions& options) {
  switch (options.kind) {
    case BackendChoice::kCpu:
      return std::make_unique<CpuBackend>(options.worker_threads);
    case BackendChoice::kCuda:
#if GPUREDUCE_HAVE_CUDA
      return CreateCudaBackend(options);
#else
      return absl::FailedPreconditionError(
          "this build of gpureduce-server has no CUDA backend (it was built without a CUDA "
          "compiler)");
#endif
    case BackendChoice::kAuto:
      break;
  }
#if GPUREDUCE_HAVE_CUDA
  if (absl::StatusOr<int> gpus = VisibleGpuCount(); !gpus.ok()) {
    spdlog::warn("{}: falling back to the CPU backend", gpus.status().message());
    return std::make_unique<CpuBackend>(options.worker_threads);
  }
  return CreateCudaBackend(options);
#else
  spdlog::warn("no CUDA backend in this build: falling back to the CPU backend");
  return std::make_unique<CpuBackend>(options.worker_threads);
#endif
}

}  // namespace gpureduce::runtime
