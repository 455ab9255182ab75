#include "server/backend_factory.h"

#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/fmt_absl.h"
#include "server/cpu_backend.h"
#include "spdlog/spdlog.h"
#if GPUREDUCE_HAVE_CUDA
#include "server/cuda/cuda_backend.h"
#endif

namespace gpureduce::server {
namespace {

#if GPUREDUCE_HAVE_CUDA
absl::StatusOr<std::vector<int>> ParseDevices(const std::string& text) {
  std::vector<int> devices;
  if (text == "all") return devices;
  for (absl::string_view item : absl::StrSplit(text, ',')) {
    int index = 0;
    if (!absl::SimpleAtoi(item, &index) || index < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("--devices=", text, ": expected 'all' or GPU indices such as 0,1"));
    }
    devices.push_back(index);
  }
  return devices;
}

absl::StatusOr<std::unique_ptr<Backend>> CreateCudaBackend(const ServerConfig& config) {
  CudaBackendOptions options;
  absl::StatusOr<std::vector<int>> devices = ParseDevices(config.devices);
  if (!devices.ok()) return devices.status();
  options.devices = *devices;
  options.device.streams = config.streams;
  options.device.staging_buffers = config.staging_buffers;
  options.device.staging_buffer_bytes = config.staging_buffer_bytes;
  options.device.sessions = config.limits.max_concurrent_requests;
  absl::StatusOr<std::unique_ptr<CudaBackend>> backend = CudaBackend::Create(options);
  if (!backend.ok()) return backend.status();
  return std::unique_ptr<Backend>(std::move(*backend));
}
#endif

}  // namespace

absl::StatusOr<std::unique_ptr<Backend>> CreateBackend(const ServerConfig& config) {
  if (config.backend == "cpu") return std::make_unique<CpuBackend>(config.worker_threads);
#if GPUREDUCE_HAVE_CUDA
  if (config.backend == "cuda") return CreateCudaBackend(config);
  if (config.backend == "auto") {
    if (absl::StatusOr<int> gpus = VisibleGpuCount(); !gpus.ok()) {
      spdlog::warn("{}: falling back to the CPU backend", gpus.status().message());
      return std::make_unique<CpuBackend>(config.worker_threads);
    }
    return CreateCudaBackend(config);
  }
#else
  if (config.backend == "cuda") {
    return absl::FailedPreconditionError(
        "--backend=cuda: this build of gpureduce-server has no CUDA backend (it was built "
        "without a CUDA compiler); use --backend=cpu or auto");
  }
  if (config.backend == "auto") {
    spdlog::warn("no CUDA backend in this build: falling back to the CPU backend");
    return std::make_unique<CpuBackend>(config.worker_threads);
  }
#endif
  return absl::InvalidArgumentError(
      absl::StrCat("--backend=", config.backend, ": expected auto, cpu or cuda"));
}

}  // namespace gpureduce::server
