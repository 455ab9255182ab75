#include "runtime/cuda/cuda_backend.h"

#include <algorithm>
#include <cstdint>
#include <future>
#include <numeric>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "common/status_macros.h"
#include "runtime/batching/batched_session.h"
#include "runtime/cuda/client_memory.h"
#include "runtime/cuda/cuda_block_kernels.h"
#include "runtime/cuda/cuda_session.h"
#include "runtime/cuda/cuda_status.h"
#include "runtime/shaped/shaped_session.h"
#include "spdlog/spdlog.h"

namespace gpureduce::runtime {
namespace {

// Reduces `data` through a session and waits: for start-up checks only, never on a gRPC thread.
absl::StatusOr<gpureduce::OpResult> ReduceNow(ReduceSession& session, gpureduce::Op op,
                                              std::span<const float> data) {
  std::promise<absl::Status> consumed;
  session.Consume(data, [&consumed](absl::Status status) { consumed.set_value(status); });
  const absl::Status status = consumed.get_future().get();
  std::promise<absl::StatusOr<gpureduce::Stats>> finished;
  session.Finish([&finished](absl::StatusOr<gpureduce::Stats> stats) {
    finished.set_value(std::move(stats));
  });
  absl::StatusOr<gpureduce::Stats> stats = finished.get_future().get();
  if (!status.ok()) return status;
  if (!stats.ok()) return stats.status();
  return gpureduce::FinalizeOp(op, gpureduce::DType::kFloat32, 0, *stats);
}

}  // namespace

absl::StatusOr<int> VisibleGpuCount() {
  int count = 0;
  if (cudaError_t error = cudaGetDeviceCount(&count); error != cudaSuccess) {
    return absl::UnavailableError(
        absl::StrCat("no usable GPU: cudaGetDeviceCount: ", cudaGetErrorName(error), " (",
                     cudaGetErrorString(error), ")"));
  }
  if (count == 0) return absl::UnavailableError("no usable GPU: no CUDA device is visible");
  return count;
}

absl::StatusOr<std::unique_ptr<CudaBackend>> CudaBackend::Create(
    const CudaBackendOptions& options) {
  ASSIGN_OR_RETURN(const int visible, VisibleGpuCount());
  std::vector<int> indices = options.devices;
  if (indices.empty()) {
    indices.resize(visible);
    std::iota(indices.begin(), indices.end(), 0);
  }
  std::unique_ptr<CudaBackend> backend(new CudaBackend());
  for (int index : indices) {
    if (index < 0 || index >= visible) {
      return absl::InvalidArgumentError(absl::StrCat("GPU ", index, " does not exist; ", visible,
                                                     " are visible (0 to ", visible - 1, ")"));
    }
    absl::StatusOr<std::unique_ptr<Device>> device = Device::Open(index, options.device);
    if (!device.ok()) {
      return absl::Status(device.status().code(),
                          absl::StrCat("GPU ", index, ": ", device.status().message()));
    }
    backend->devices_.push_back(std::move(*device));
    if (options.batch_small_requests) {
      Device& opened = *backend->devices_.back();
      backend->batch_kernels_.push_back(std::make_unique<CudaBlockKernels>(opened, 0));
      backend->batchers_.push_back(
          std::make_unique<SmallBatcher>(*backend->batch_kernels_.back(), options.batch));
    }
  }
  return backend;
}

std::vector<DeviceDescription> CudaBackend::devices() const {
  std::vector<DeviceDescription> out;
  for (const auto& device : devices_) out.push_back(device->description());
  return out;
}

uint32_t CudaBackend::workers() const {
  uint32_t lanes = 0;
  for (const auto& device : devices_) lanes += device->lanes();
  return lanes;
}

absl::Status CudaBackend::SelfCheck() {
  for (const auto& device : devices_) RETURN_IF_ERROR(CheckDevice(*device));
  return absl::OkStatus();
}

absl::Status CudaBackend::CheckDevice(Device& device) {
  // Longer than one staging slot, so the check crosses pieces; small integers so every sum is
  // exact and the answer known.
  const size_t count = device.staging_slot_floats() + 4099;
  std::vector<float> data(count);
  for (size_t i = 0; i < count; ++i) data[i] = static_cast<float>(int(i % 7) - 3);
  data[count - 5] = 9.0f;
  const double expected_sum = std::accumulate(data.begin(), data.end(), 0.0);
  for (gpureduce::Op op :
       gpureduce::kClassicOps) {  // also the warm-up: each kernel loads once here
    ASSIGN_OR_RETURN(PartialSlot * slot, device.AcquirePartial());
    ASSIGN_OR_RETURN(std::unique_ptr<CudaSession> session,
                     CudaSession::Start(device, RequestSpec{op, default_kernel(), 0, 0}, slot));
    ASSIGN_OR_RETURN(const gpureduce::OpResult result, ReduceNow(*session, op, data));
    const bool right =
        result.count == count && (op != gpureduce::Op::kSum || result.unrounded == expected_sum) &&
        (op != gpureduce::Op::kArgMax ||
         (result.value == 9.0 && result.index == int64_t(count - 5))) &&
        (op != gpureduce::Op::kArgMin || (result.value == -3.0 && result.index == 0));
    if (!right) {
      return absl::InternalError(absl::StrFormat(
          "GPU %d self-check failed for op %d: got %g at %d over %d elements (sum expected %g)",
          device.index(), static_cast<int>(op), result.unrounded, result.index, result.count,
          expected_sum));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<Device*> CudaBackend::OwnedDevice(int index) const {
  for (const auto& device : devices_) {
    if (device->index() != index) continue;
    if (device->lost()) {
      return absl::UnavailableError(absl::StrCat("GPU ", index, " is lost (see the server's log)"));
    }
    return device.get();
  }
  std::string owned;
  for (const auto& device : devices_)
    absl::StrAppend(&owned, owned.empty() ? "" : ",", device->index());
  return absl::FailedPreconditionError(
      absl::StrCat("this server does not use GPU ", index, "; it uses GPU ", owned));
}

absl::StatusOr<std::unique_ptr<ReduceSession>> CudaBackend::OpenOnDevice(Device& device,
                                                                         const RequestSpec& spec) {
  if (!spec.classic() && spec.kernel != kernels::KernelId::kSinglePass) {
    // ResolveSpec refuses these first; a caller past it would get a kernel that ignores dtypes.
    return absl::InvalidArgumentError(
        absl::StrCat("kernel '", kernels::GetKernel(spec.kernel).name,
                     "' reduces float32 with one classic op; single_pass runs every dtype and op"));
  }
  if (spec.layout != nullptr) {  // axes or segments (issue 23)
    // Their load: the request's bytes where known, else one staging slot's.
    const uint64_t bytes = spec.size_hint > 0 ? std::min(spec.size_hint, UINT64_MAX / 8) *
                                                    gpureduce::DTypeSize(spec.dtype)
                                              : device.staging_slot_floats() * sizeof(float);
    return std::make_unique<ShapedSession>(
        std::make_unique<CudaBlockKernels>(device, bytes), spec,
        ShapedSessionInfo{
            device.description().name, kernels::KernelId::kSinglePass, {device.index()}});
  }
  for (size_t position = 0; position < batchers_.size(); ++position) {
    if (devices_[position].get() == &device && Batches(position, spec)) {
      return std::make_unique<BatchedSession>(*batchers_[position], spec, device.description().name,
                                              device.index());
    }
  }
  ASSIGN_OR_RETURN(PartialSlot * slot, device.AcquirePartial());
  // A session that fails to start has already given its slot back.
  ASSIGN_OR_RETURN(std::unique_ptr<CudaSession> session, CudaSession::Start(device, spec, slot));
  return std::unique_ptr<ReduceSession>(std::move(session));
}

bool CudaBackend::Batches(size_t position, const RequestSpec& spec) const {
  if (position >= batchers_.size() || !spec.one_message || spec.data_on_device ||
      spec.layout != nullptr || spec.kernel != kernels::KernelId::kSinglePass) {
    return false;
  }
  const uint64_t element = gpureduce::DTypeSize(spec.dtype);
  return spec.size_hint <= UINT64_MAX / element &&
         batchers_[position]->Takes(spec.size_hint * element);
}

absl::StatusOr<std::unique_ptr<ReduceSession>> CudaBackend::Open(const RequestSpec& spec) {
  if (spec.device < 0) return OpenOn(0, spec);
  ASSIGN_OR_RETURN(Device * device, OwnedDevice(spec.device));
  return OpenOnDevice(*device, spec);
}

GpuLoad CudaBackend::Load(size_t position) const {
  const Device& device = *devices_[position];
  return {.lost = device.lost(), .outstanding_bytes = device.outstanding_bytes()};
}

absl::StatusOr<std::unique_ptr<ReduceSession>> CudaBackend::OpenOn(size_t position,
                                                                   const RequestSpec& spec) {
  return OpenOnDevice(*devices_[position], spec);
}

absl::StatusOr<std::unique_ptr<MemoryHold>> CudaBackend::PinHost(const void* base, size_t bytes) {
  for (const auto& device : devices_) {
    if (!device->lost()) {
      RETURN_IF_ERROR(device->Activate());  // any device: the pin is portable
      return PinHostMemory(base, bytes);
    }
  }
  return absl::UnavailableError("every GPU of this server is lost");
}

absl::StatusOr<OpenedDeviceMemory> CudaBackend::OpenIpcHandle(std::span<const std::byte> handle,
                                                              int device) {
  ASSIGN_OR_RETURN(Device * owned, OwnedDevice(device));
  return OpenIpcMemory(handle, *owned);
}

void CudaBackend::set_on_lost(std::function<void()> on_lost) {
  for (const auto& device : devices_) {
    if (on_lost == nullptr) {
      device->set_on_lost(nullptr);
      continue;
    }
    // A lost device leaves the rotation; the server stops serving with the last one.
    device->set_on_lost([this, on_lost] {
      size_t usable = 0;
      for (const auto& other : devices_) usable += other->lost() ? 0 : 1;
      if (usable == 0) {
        if (all_lost_reported_.exchange(true)) return;  // two devices lost at once: once
        spdlog::critical("every GPU is lost: reporting NOT_SERVING");
        on_lost();
      } else {
        spdlog::error("degraded: {} of {} GPUs serve on", usable, devices_.size());
      }
    });
  }
}

std::vector<DeviceUsage> CudaBackend::Usage() const {
  std::vector<DeviceUsage> usage;
  for (size_t position = 0; position < devices_.size(); ++position) {
    usage.push_back(devices_[position]->Usage());
    if (position < batchers_.size()) {
      const BatchCounts counts = batchers_[position]->counts();
      usage.back().batches = counts.batches;
      usage.back().batched_requests = counts.requests;
    }
  }
  return usage;
}

}  // namespace gpureduce::runtime
