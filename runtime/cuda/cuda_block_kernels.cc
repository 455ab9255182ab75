#include "runtime/cuda/cuda_block_kernels.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <memory>
#include <type_traits>
#include <utility>

#include "kernels/reduce.h"
#include "runtime/cuda/cuda_status.h"

namespace gpureduce::runtime {
namespace {

constexpr uint64_t kAlign = 256;
// Segments per call at most: their Stats take at most a quarter of the slot.
constexpr uint64_t kMostSegments = 4096;
constexpr uint64_t kStatsBytes = sizeof(gpureduce::Stats);
// A step whose payload, bounds and Stats fit in this runs as one launch through the mapping.
constexpr uint64_t kSmallStepBytes = 256 * 1024;
// How long a small step's launching thread waits for it before the completion thread takes over.
constexpr std::chrono::microseconds kInlineWait{100};
static_assert(std::is_trivially_copyable_v<gpureduce::Stats>);  // copied back as bytes

uint64_t AlignUp(uint64_t bytes) { return (bytes + kAlign - 1) / kAlign * kAlign; }

std::byte* HostOf(StagingSlot& slot) { return reinterpret_cast<std::byte*>(slot.host); }
std::byte* DeviceOf(StagingSlot& slot) { return reinterpret_cast<std::byte*>(slot.device.get()); }
// The GPU's address of the slot's pinned half.
std::byte* MappedOf(StagingSlot& slot) {
  return reinterpret_cast<std::byte*>(const_cast<float*>(slot.mapped));
}

}  // namespace

CudaBlockKernels::CudaBlockKernels(Device& device, uint64_t load_bytes)
    : device_(device),
      lane_(device.NextLane(kernels::KernelId::kSinglePass)),
      load_bytes_(load_bytes),
      slot_bytes_(device.staging_slot_floats() * sizeof(float)),
      max_segments_(std::clamp<uint64_t>(slot_bytes_ / 4 / (kStatsBytes + sizeof(uint64_t)), 1,
                                         kMostSegments)),
      max_piece_bytes_((slot_bytes_ - 2 * kAlign - AlignUp((max_segments_ + 1) * sizeof(uint64_t)) -
                        max_segments_ * kStatsBytes) /
                       sizeof(uint64_t) * sizeof(uint64_t)) {
  device_.AddLoad(load_bytes_);
}

CudaBlockKernels::~CudaBlockKernels() { device_.RemoveLoad(load_bytes_); }

void CudaBlockKernels::Run(Enqueue enqueue, uint64_t stats_at, uint64_t count, bool small,
                           Fetched fetched) {
  if (cancelled_.load(std::memory_order_relaxed)) {
    std::move(fetched)(absl::CancelledError("the request was cancelled"), Timing{});
    return;
  }
  // A small step with a free slot runs here and now: a hand-over to a copy thread would cost
  // more than its copy (PieceScheduler does the same for a small request).
  if (small) {
    if (PieceSlot* free = device_.staging().TryAcquire(); free != nullptr) {
      RunStep(*static_cast<StagingSlot*>(free), Timing{}, std::move(enqueue), stats_at, count,
              small, std::move(fetched));
      return;
    }
  }
  const auto asked = std::chrono::steady_clock::now();
  // With a slot (or the CANCELLED of a wait that Cancel ended), on a copy thread.
  auto step = [this, asked, stats_at, count, small, enqueue = std::move(enqueue),
               fetched = std::move(fetched)](absl::StatusOr<PieceSlot*> acquired) mutable {
    if (!acquired.ok()) {
      std::move(fetched)(acquired.status(), Timing{});
      return;
    }
    Timing timing;
    timing.queue = std::chrono::steady_clock::now() - asked;
    RunStep(*static_cast<StagingSlot*>(*acquired), timing, std::move(enqueue), stats_at, count,
            small, std::move(fetched));
  };
  device_.staging().Acquire(
      reinterpret_cast<uintptr_t>(this),
      [this, step = std::move(step)](absl::StatusOr<PieceSlot*> acquired) mutable {
        device_.SubmitCopy([step = std::move(step), acquired]() mutable { step(acquired); });
      });
}

namespace {
// Set while a small step's answer runs: a step launched from it (a batch that waited for this
// one) does not wait for its kernel there, so no thread nests one answer in another and the
// completion thread never spins.
thread_local bool answering = false;
}  // namespace

void CudaBlockKernels::RunStep(StagingSlot& slot, Timing timing, Enqueue enqueue, uint64_t stats_at,
                               uint64_t count, bool small, Fetched fetched) {
  absl::Status status = device_.Activate();
  if (status.ok()) status = std::move(enqueue)(slot, lane_.stream.get());
  if (status.ok() && small && !answering) {
    // Its one kernel ends within microseconds: wait for it here (bounded) rather than hand it
    // to the completion thread and back, as PieceScheduler::AnswerInline does.
    const auto give_up = std::chrono::steady_clock::now() + kInlineWait;
    cudaError_t polled = cudaEventQuery(slot.reduced.get());
    while (polled == cudaErrorNotReady && std::chrono::steady_clock::now() < give_up) {
      polled = cudaEventQuery(slot.reduced.get());
    }
    if (polled != cudaErrorNotReady) {
      Land(slot, polled, std::move(status), timing, stats_at, count, small, std::move(fetched));
      return;
    }
  }
  // Even after a failed enqueue the stream may hold the step's copies: wait for them.
  device_.completions().RunAfter(
      lane_.stream.get(), [this, &slot, status = std::move(status), timing, stats_at, count, small,
                           fetched = std::move(fetched)](GpuStatus stream_status) mutable {
        Land(slot, static_cast<cudaError_t>(stream_status), std::move(status), timing, stats_at,
             count, small, std::move(fetched));
      });
}

void CudaBlockKernels::Land(StagingSlot& slot, cudaError_t stream_status, absl::Status status,
                            Timing timing, uint64_t stats_at, uint64_t count, bool small,
                            Fetched fetched) {
  if (status.ok() && stream_status != cudaSuccess) {
    status = CudaError(stream_status, "the array kernels", __FILE__, __LINE__);
  }
  // (A StatusOr may not be made from an OK status.)
  absl::StatusOr<std::vector<gpureduce::Stats>> stats;
  if (status.ok()) {
    std::vector<gpureduce::Stats> read(count);
    std::memcpy(read.data(), HostOf(slot) + stats_at, count * kStatsBytes);
    stats = std::move(read);
    timing.compute = ElapsedBetween(slot.started, slot.reduced);
  } else {
    stats = status;
    device_.ReportError(status);
  }
  device_.staging().Release(&slot);
  // A small step's few Stats are answered on this thread; a large one's (up to a few hundred
  // KiB of Stats to finalize) on a copy thread, off the completion thread.
  if (small) {
    const bool nested = std::exchange(answering, true);
    std::move(fetched)(std::move(stats), timing);
    answering = nested;
    return;
  }
  device_.SubmitCopy([stats = std::move(stats), timing, fetched = std::move(fetched)]() mutable {
    std::move(fetched)(std::move(stats), timing);
  });
}

void CudaBlockKernels::Cancel() {
  cancelled_.store(true, std::memory_order_relaxed);
  device_.staging().Cancel(reinterpret_cast<uintptr_t>(this));
}

void CudaBlockKernels::Segments(const kernels::cpu::StatsRequest& request,
                                std::span<const std::byte> data, std::span<const uint64_t> bounds,
                                SegmentsDone done) {
  const uint64_t segments = bounds.size() - 1;
  const uint64_t bounds_at = AlignUp(data.size());
  const uint64_t stats_at = AlignUp(bounds_at + bounds.size_bytes());
  if (segments > max_segments_ || stats_at + segments * kStatsBytes > slot_bytes_) {
    std::move(done)(absl::InternalError("an array piece larger than a staging slot"), Timing{});
    return;
  }
  const gpureduce::DType dtype = request.dtype;
  const gpureduce::StatsNeeds needs = request.needs;
  // A small step (a batch of small requests, say) is one launch: the kernel reads the payload
  // and bounds through the GPU's mapping of the slot's pinned half and writes the Stats there;
  // a larger one is copied to the device and back, which reads the payload faster.
  const bool small = stats_at + segments * kStatsBytes <= kSmallStepBytes;
  Run(
      [=](StagingSlot& slot, cudaStream_t stream) -> absl::Status {
        std::byte* host = HostOf(slot);
        std::byte* device = small ? MappedOf(slot) : DeviceOf(slot);
        std::memcpy(host, data.data(), data.size());
        std::memcpy(host + bounds_at, bounds.data(), bounds.size_bytes());
        CUDA_RETURN_IF_ERROR(cudaEventRecord(slot.started.get(), stream));
        if (!small) {
          CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(device, host, bounds_at + bounds.size_bytes(),
                                               cudaMemcpyHostToDevice, stream));
        }
        CUDA_RETURN_IF_ERROR(kernels::cuda::ReduceSegmentsInto(
            stream, dtype, needs, device, reinterpret_cast<const uint64_t*>(device + bounds_at),
            segments, bounds.back(), reinterpret_cast<gpureduce::Stats*>(device + stats_at)));
        if (!small) {
          CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(host + stats_at, device + stats_at,
                                               segments * kStatsBytes, cudaMemcpyDeviceToHost,
                                               stream));
        }
        CUDA_RETURN_IF_ERROR(cudaEventRecord(slot.reduced.get(), stream));
        return absl::OkStatus();
      },
      stats_at, segments, small, std::move(done));
}

void CudaBlockKernels::Columns(const kernels::cpu::StatsRequest& request,
                               std::span<const std::byte> data, uint64_t rows,
                               std::span<gpureduce::Stats> columns, uint64_t base_row,
                               ColumnsDone done) {
  ColumnsFrom(request, data, rows, columns, base_row, 0, Timing{}, std::move(done));
}

void CudaBlockKernels::ColumnsFrom(const kernels::cpu::StatsRequest& request,
                                   std::span<const std::byte> data, uint64_t rows,
                                   std::span<gpureduce::Stats> columns, uint64_t base_row,
                                   uint64_t first, Timing so_far, ColumnsDone done) {
  const uint64_t width = columns.size();
  if (first >= width || rows == 0) {
    std::move(done)(absl::OkStatus(), so_far);
    return;
  }
  // Columns [first, first + count): their rows packed, then their Stats, then room for the
  // partial Stats of the chunks of rows.
  const uint64_t element_bytes = gpureduce::DTypeSize(request.dtype);
  const uint64_t count =
      std::min(width - first, (slot_bytes_ - 2 * kAlign) / (rows * element_bytes + kStatsBytes));
  if (count == 0) {
    std::move(done)(absl::InternalError("an array column longer than a staging slot"), so_far);
    return;
  }
  const uint64_t stats_at = AlignUp(rows * count * element_bytes);
  const uint64_t partials_at = AlignUp(stats_at + count * kStatsBytes);
  const uint64_t room = slot_bytes_ > partials_at ? (slot_bytes_ - partials_at) / kStatsBytes : 0;
  const uint32_t chunks = kernels::cuda::ColumnChunksFor(rows, count, device_.traits(), room);
  const gpureduce::DType dtype = request.dtype;
  const gpureduce::StatsNeeds needs = request.needs;
  Run(
      [=](StagingSlot& slot, cudaStream_t stream) -> absl::Status {
        std::byte* host = HostOf(slot);
        std::byte* device = DeviceOf(slot);
        const uint64_t row_bytes = count * element_bytes;
        if (count == width) {
          std::memcpy(host, data.data(), rows * row_bytes);
        } else {
          for (uint64_t r = 0; r < rows; ++r) {
            std::memcpy(host + r * row_bytes, data.data() + (r * width + first) * element_bytes,
                        row_bytes);
          }
        }
        CUDA_RETURN_IF_ERROR(cudaEventRecord(slot.started.get(), stream));
        CUDA_RETURN_IF_ERROR(
            cudaMemcpyAsync(device, host, rows * row_bytes, cudaMemcpyHostToDevice, stream));
        CUDA_RETURN_IF_ERROR(kernels::cuda::ReduceColumnsInto(
            stream, dtype, needs, device, rows, count, base_row, chunks,
            reinterpret_cast<gpureduce::Stats*>(device + partials_at),
            reinterpret_cast<gpureduce::Stats*>(device + stats_at)));
        CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(host + stats_at, device + stats_at,
                                             count * kStatsBytes, cudaMemcpyDeviceToHost, stream));
        CUDA_RETURN_IF_ERROR(cudaEventRecord(slot.reduced.get(), stream));
        return absl::OkStatus();
      },
      stats_at, count, /*small=*/false,
      [this, request, data, rows, columns, base_row, first, so_far, done = std::move(done)](
          absl::StatusOr<std::vector<gpureduce::Stats>> fresh, Timing timing) mutable {
        so_far.queue += timing.queue;
        so_far.compute += timing.compute;
        if (!fresh.ok()) {
          std::move(done)(fresh.status(), so_far);
          return;
        }
        for (uint64_t c = 0; c < fresh->size(); ++c) {
          columns[first + c] = gpureduce::MergeStats(columns[first + c], (*fresh)[c]);
        }
        ColumnsFrom(request, data, rows, columns, base_row, first + fresh->size(), so_far,
                    std::move(done));
      });
}

void CudaBlockKernels::Rows(const kernels::cpu::StatsRequest&, std::span<const std::byte>, uint64_t,
                            kernels::cpu::RowSink, kernels::cpu::DirectAnswers, RowsDone done) {
  std::move(done)(absl::InternalError("the GPU's array kernels reduce rows as segments"), Timing{});
}

}  // namespace gpureduce::runtime
