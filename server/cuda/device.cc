#include "server/cuda/device.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "common/fmt_absl.h"
#include "common/status_macros.h"
#include "kernels/cuda/reduce_into.h"
#include "server/cuda/cuda_status.h"
#include "spdlog/spdlog.h"

namespace gpureduce::server {
namespace {

// HBM: two transfers per clock on each bit of the bus. CUDA 13 dropped the clock from
// cudaDeviceProp, so it is read as an attribute (kHz).
double PeakBandwidthGbps(int device, int bus_width_bits) {
  int clock_khz = 0;
  if (cudaDeviceGetAttribute(&clock_khz, cudaDevAttrMemoryClockRate, device) != cudaSuccess) {
    return 0;
  }
  return 2.0 * clock_khz * 1e3 * (bus_width_bits / 8.0) / 1e9;
}

}  // namespace

absl::StatusOr<std::unique_ptr<Device>> Device::Open(int index, const DeviceOptions& options) {
  std::unique_ptr<Device> device(new Device());
  RETURN_IF_ERROR(device->Init(index, options));
  return device;
}

absl::Status Device::Init(int index, const DeviceOptions& options) {
  CUDA_RETURN_IF_ERROR(cudaSetDevice(index));
  cudaDeviceProp props{};
  CUDA_RETURN_IF_ERROR(cudaGetDeviceProperties(&props, index));
  description_.index = index;
  description_.name = props.name;
  description_.memory_bytes = props.totalGlobalMem;
  description_.multiprocessors = props.multiProcessorCount;
  description_.peak_bandwidth_gbps = PeakBandwidthGbps(index, props.memoryBusWidth);
  description_.l2_bytes = static_cast<uint64_t>(props.l2CacheSize);

  const uint32_t streams =
      options.streams != 0 ? options.streams : std::max(4, 2 * props.asyncEngineCount);
  const size_t slot_elements = options.staging_buffer_bytes / sizeof(float);
  size_t scratch_bytes = 0;
  CUDA_RETURN_IF_ERROR(kernels::cuda::ScratchBytes(slot_elements, &scratch_bytes));
  for (uint32_t i = 0; i < streams; ++i) {
    auto lane = std::make_unique<Lane>();
    ASSIGN_OR_RETURN(lane->stream, CreateStream());
    ASSIGN_OR_RETURN(lane->scratch, AllocateDevice(scratch_bytes));
    CUDA_RETURN_IF_ERROR(cudaMemset(lane->scratch.get(), 0, scratch_bytes));
    lane->scratch_bytes = scratch_bytes;
    lanes_.push_back(std::move(lane));
  }
  // The zeroed scratch (single_pass's counter) must be in place before any lane's first kernel;
  // the lanes are non-blocking streams, so wait here rather than rely on stream order.
  CUDA_RETURN_IF_ERROR(cudaDeviceSynchronize());
  ASSIGN_OR_RETURN(staging_, StagingPool::Create(options.staging_buffers,
                                                 slot_elements * sizeof(float)));
  copiers_ = std::make_unique<kernels::cpu::ThreadPool>(std::max(1u, options.copy_threads));

  const size_t partial_bytes = options.sessions * sizeof(kernels::Partial);
  ASSIGN_OR_RETURN(device_partials_, AllocateDevice(partial_bytes));
  ASSIGN_OR_RETURN(host_partials_, AllocatePinned(partial_bytes));
  for (uint32_t i = 0; i < options.sessions; ++i) {
    auto slot = std::make_unique<PartialSlot>();
    slot->device = static_cast<kernels::Partial*>(device_partials_.get()) + i;
    slot->host = static_cast<kernels::Partial*>(host_partials_.get()) + i;
    ASSIGN_OR_RETURN(slot->copy_started, CreateTimingEvent());
    ASSIGN_OR_RETURN(slot->copy_done, CreateTimingEvent());
    free_partials_.push_back(slot.get());
    partial_slots_.push_back(std::move(slot));
  }
  return absl::OkStatus();
}

Device::~Device() {
  copiers_.reset();  // finishes queued copies, which may still queue GPU work
  if (cudaSetDevice(description_.index) == cudaSuccess) {
    if (cudaError_t error = cudaDeviceSynchronize(); error != cudaSuccess) {
      spdlog::error("GPU {}: synchronize at shutdown failed: {}", description_.index,
                    cudaGetErrorName(error));
    }
  }
}

absl::Status Device::Activate() const {
  CUDA_RETURN_IF_ERROR(cudaSetDevice(description_.index));
  return absl::OkStatus();
}

Device::Lane& Device::NextLane() {
  return *lanes_[next_lane_.fetch_add(1, std::memory_order_relaxed) % lanes_.size()];
}

absl::StatusOr<Device::PartialSlot*> Device::AcquirePartial() {
  std::lock_guard<std::mutex> lock(partial_mu_);
  if (free_partials_.empty()) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "GPU ", description_.index, " has ", partial_slots_.size(),
        " requests in progress; retry with backoff"));
  }
  PartialSlot* slot = free_partials_.back();
  free_partials_.pop_back();
  return slot;
}

void Device::ReleasePartial(PartialSlot* slot) {
  std::lock_guard<std::mutex> lock(partial_mu_);
  free_partials_.push_back(slot);
}

void Device::ReportError(cudaError_t error) {
  spdlog::error("GPU {}: {} ({})", description_.index, cudaGetErrorName(error),
                cudaGetErrorString(error));
  if (IsStickyCudaError(error) && !lost_.exchange(true)) {
    spdlog::critical("GPU {} is lost (sticky CUDA error {}): reporting NOT_SERVING",
                     description_.index, cudaGetErrorName(error));
    if (on_lost_) on_lost_();
  }
}

}  // namespace gpureduce::server
