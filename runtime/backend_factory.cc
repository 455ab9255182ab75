#include "runtime/backend_factory.h"

#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/fmt_absl.h"
#include "common/status_macros.h"
#include "runtime/cpu/cpu_backend.h"
#include "spdlog/spdlog.h"
#if GPUREDUCE_HAVE_CUDA
#include "runtime/cuda/cuda_backend.h"
#endif

namespace gpureduce::runtime {
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

absl::StatusOr<std::unique_ptr<Backend>> CreateCudaBackend(const BackendOptions& options) {
  CudaBackendOptions cuda;
  ASSIGN_OR_RETURN(cuda.devices, ParseDevices(options.devices));
  cuda.device.streams = options.streams;
  cuda.device.staging_buffers = options.staging_buffers;
  cuda.device.staging_buffer_bytes = options.staging_buffer_bytes;
  cuda.device.sessions = options.sessions;
  cuda.device.copy_threads = options.copy_threads;
  cuda.auto_cpu_below = options.auto_cpu_below_bytes / sizeof(float);
  cuda.host_threads = options.worker_threads;
  cuda.split_above = options.split_above_bytes / sizeof(float);
  absl::StatusOr<std::unique_ptr<CudaBackend>> backend = CudaBackend::Create(cuda);
  if (!backend.ok()) return backend.status();
  return std::unique_ptr<Backend>(std::move(*backend));
}
#endif

}  // namespace

absl::StatusOr<std::unique_ptr<Backend>> CreateBackend(const BackendOptions& options) {
  if (options.kind == "cpu") return std::make_unique<CpuBackend>(options.worker_threads);
#if GPUREDUCE_HAVE_CUDA
  if (options.kind == "cuda") return CreateCudaBackend(options);
  if (options.kind == "auto") {
    if (absl::StatusOr<int> gpus = VisibleGpuCount(); !gpus.ok()) {
      spdlog::warn("{}: falling back to the CPU backend", gpus.status().message());
      return std::make_unique<CpuBackend>(options.worker_threads);
    }
    return CreateCudaBackend(options);
  }
#else
  if (options.kind == "cuda") {
    return absl::FailedPreconditionError(
        "--backend=cuda: this build of gpureduce-server has no CUDA backend (it was built "
        "without a CUDA compiler); use --backend=cpu or auto");
  }
  if (options.kind == "auto") {
    spdlog::warn("no CUDA backend in this build: falling back to the CPU backend");
    return std::make_unique<CpuBackend>(options.worker_threads);
  }
#endif
  return absl::InvalidArgumentError(
      absl::StrCat("--backend=", options.kind, ": expected auto, cpu or cuda"));
}

}  // namespace gpureduce::runtime
