#include "runtime/cuda/device.h"

#include <algorithm>
#include <thread>

#include "absl/strings/str_cat.h"
#include "common/fmt_absl.h"
#include "common/status_macros.h"
#include "runtime/cuda/cuda_status.h"
#include "spdlog/spdlog.h"

namespace gpureduce::runtime {
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
  traits_ = {props.multiProcessorCount, props.maxThreadsPerMultiProcessor,
             props.major * 10 + props.minor};
  completions_ = std::make_unique<CompletionThread>(index);

  const uint32_t streams =
      options.streams != 0 ? options.streams : std::max(4, 2 * props.asyncEngineCount);
  const size_t slot_floats = options.staging_buffer_bytes / sizeof(float);
  RETURN_IF_ERROR(InitLanes(streams, std::max(1u, options.ladder_streams), slot_floats));
  RETURN_IF_ERROR(InitStaging(options.staging_buffers, slot_floats));
  RETURN_IF_ERROR(InitPartials(options.sessions));
  // Copies into pinned memory run at a few GB/s per thread: several streams need several.
  const uint32_t copy_threads = options.copy_threads != 0
                                    ? options.copy_threads
                                    : std::max(4u, std::thread::hardware_concurrency() / 2);
  copiers_ = std::make_unique<ThreadPool>(copy_threads);
  return absl::OkStatus();
}

absl::Status Device::InitLanes(uint32_t streams, uint32_t ladder_streams, size_t slot_floats) {
  size_t scratch_bytes = 0;
  CUDA_RETURN_IF_ERROR(
      kernels::cuda::LayOutScratch(nullptr, &scratch_bytes, slot_floats, /*layout=*/nullptr));
  for (uint32_t i = 0; i < streams + ladder_streams; ++i) {
    const bool ladder = i >= streams;
    auto lane = std::make_unique<Lane>();
    ASSIGN_OR_RETURN(lane->stream,
                     CreateStream(ladder ? StreamPriority::kLow : StreamPriority::kHigh));
    ASSIGN_OR_RETURN(lane->scratch, AllocateDevice<std::byte>(scratch_bytes));
    ASSIGN_OR_RETURN(lane->copies, CreateStream(StreamPriority::kHigh));
    CUDA_RETURN_IF_ERROR(cudaMemset(lane->scratch.get(), 0, scratch_bytes));
    CUDA_RETURN_IF_ERROR(kernels::cuda::LayOutScratch(lane->scratch.get(), &scratch_bytes,
                                                      slot_floats, &lane->scratch_layout));
    (ladder ? ladder_lanes_ : lanes_).push_back(std::move(lane));
  }
  // The zeroed scratch (single_pass's counter) must be in place before any lane's first kernel;
  // the lanes are non-blocking streams, so wait here rather than rely on stream order.
  CUDA_RETURN_IF_ERROR(cudaDeviceSynchronize());
  return absl::OkStatus();
}

absl::Status Device::InitStaging(uint32_t slots, size_t slot_floats) {
  std::vector<std::unique_ptr<PieceSlot>> staging;
  for (uint32_t i = 0; i < slots; ++i) {
    auto slot = std::make_unique<StagingSlot>();
    ASSIGN_OR_RETURN(slot->pinned, AllocatePinned<float>(slot_floats));
    slot->host = slot->pinned.get();
    void* mapped = nullptr;
    CUDA_RETURN_IF_ERROR(cudaHostGetDevicePointer(&mapped, slot->host, 0));
    slot->mapped = static_cast<const float*>(mapped);
    ASSIGN_OR_RETURN(slot->device, AllocateDevice<float>(slot_floats));
    ASSIGN_OR_RETURN(slot->started, CreateTimingEvent());
    ASSIGN_OR_RETURN(slot->copied, CreateTimingEvent());
    ASSIGN_OR_RETURN(slot->reduced, CreateTimingEvent());
    staging.push_back(std::move(slot));
  }
  staging_slot_floats_ = slot_floats;
  staging_ = std::make_unique<SlotPool<PieceSlot>>(std::move(staging), "a GPU staging buffer");
  return absl::OkStatus();
}

absl::Status Device::InitPartials(uint32_t sessions) {
  ASSIGN_OR_RETURN(host_partials_, AllocatePinned<RunningResult>(sessions));
  void* mapped = nullptr;
  CUDA_RETURN_IF_ERROR(cudaHostGetDevicePointer(&mapped, host_partials_.get(), 0));
  std::vector<std::unique_ptr<PartialSlot>> slots;
  for (uint32_t i = 0; i < sessions; ++i) {
    auto slot = std::make_unique<PartialSlot>();
    RunningResult* device = static_cast<RunningResult*>(mapped) + i;
    RunningResult* host = host_partials_.get() + i;
    slot->device = &device->partial;
    slot->host = &host->partial;
    slot->stats_device = &device->stats;
    slot->stats_host = &host->stats;
    slots.push_back(std::move(slot));
  }
  partials_ = std::make_unique<SlotPool<PartialSlot>>(std::move(slots), "a request slot");
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

DeviceUsage Device::Usage() const {
  DeviceUsage usage;
  usage.device = description_.index;
  usage.staging_buffers = staging_->size();
  usage.staging_in_use = staging_->size() - staging_->free_slots();
  usage.staging_waiting = staging_->waiting();
  usage.staging_waits_total = staging_->waits();
  usage.requests = requests_.load(std::memory_order_relaxed);
  usage.outstanding_bytes = outstanding_bytes_.load(std::memory_order_relaxed);
  usage.lost = lost();
  size_t free_bytes = 0, total_bytes = 0;
  // The caller's current device is put back: any thread may ask. A lost (sticky-error) device
  // answers nothing, and its memory figures stay 0.
  int current = 0;
  const bool had_device = cudaGetDevice(&current) == cudaSuccess;
  if (cudaSetDevice(description_.index) == cudaSuccess &&
      cudaMemGetInfo(&free_bytes, &total_bytes) == cudaSuccess) {
    usage.memory_used_bytes = total_bytes - free_bytes;
    usage.memory_total_bytes = total_bytes;
  }
  if (had_device) cudaSetDevice(current);
  return usage;
}

Device::Lane& Device::NextLane(kernels::KernelId kernel) {
  if (kernels::IsLadderKernel(kernel)) {
    return *ladder_lanes_[next_ladder_lane_.fetch_add(1, std::memory_order_relaxed) %
                          ladder_lanes_.size()];
  }
  return *lanes_[next_lane_.fetch_add(1, std::memory_order_relaxed) % lanes_.size()];
}

absl::StatusOr<PartialSlot*> Device::AcquirePartial() {
  if (PartialSlot* slot = partials_->TryAcquire(); slot != nullptr) return slot;
  return absl::ResourceExhaustedError(absl::StrCat("GPU ", description_.index, " has ",
                                                   partials_->size(),
                                                   " requests in progress; retry with backoff"));
}

void Device::ReportError(cudaError_t error) {
  spdlog::error("GPU {}: {} ({})", description_.index, cudaGetErrorName(error),
                cudaGetErrorString(error));
  if (IsStickyCudaError(error) && !lost_.exchange(true)) {
    spdlog::critical("GPU {} is lost (sticky CUDA error {}): out of rotation", description_.index,
                     cudaGetErrorName(error));
    if (on_lost_) on_lost_();
  }
}

void Device::ReportError(const absl::Status& status) {
  if (std::optional<cudaError_t> error = CudaErrorOf(status); error.has_value()) {
    ReportError(*error);
  }
}

}  // namespace gpureduce::runtime
