#include "runtime/cpu/cpu_backend.h"

#include <unistd.h>

#include <fstream>
#include <mutex>
#include <numeric>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/strip.h"
#include "kernels/reduce.h"
#include "runtime/cpu/file_block_source.h"
#include "runtime/cpu/pieces_block_source.h"
#include "runtime/shaped/shaped_session.h"

namespace gpureduce::runtime {
namespace {

std::string CpuModelName() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line)) {
    if (absl::StartsWith(line, "model name")) {
      const size_t colon = line.find(':');
      if (colon != std::string::npos) {
        return std::string(absl::StripAsciiWhitespace(absl::string_view(line).substr(colon + 1)));
      }
    }
  }
  return "CPU";
}

uint64_t PhysicalMemoryBytes() {
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page_size = sysconf(_SC_PAGESIZE);
  return pages > 0 && page_size > 0 ? uint64_t(pages) * uint64_t(page_size) : 0;
}

class CpuSession final : public ReduceSession {
 public:
  CpuSession(ThreadPool& pool, const RequestSpec& spec, std::string device, bool server_device)
      : pool_(pool),
        request_{spec.dtype, gpureduce::NeedsOf(spec.ops())},
        // A stream's chunks are reduced where they arrive (kernels/reduce.h says why).
        few_tasks_(spec.one_message ? kernels::cpu::FewTasks::kPoolUnlessBusy
                                    : kernels::cpu::FewTasks::kCaller),
        element_bytes_(gpureduce::DTypeSize(spec.dtype)),
        device_(std::move(device)),
        server_device_(server_device) {}

  void ConsumePieces(PayloadPieces data, ConsumeDone done) override {
    data.set_element_bytes(element_bytes_);
    const uint64_t base = consumed_;
    const uint64_t count = data.count();
    consumed_ += count;
    std::optional<std::span<const std::byte>> bytes = data.AsBytes();
    if (!bytes.has_value() && count <= kernels::cpu::TaskElements(request_.dtype)) {
      // One task, reduced on this thread: copied out of the pieces into this thread's buffer,
      // without the general path's allocations (a small request's path). 8-byte elements align.
      thread_local std::vector<uint64_t> buffer;  // words: aligned for every element size
      if (buffer.size() < kernels::cpu::kMostTaskBytes / 8) {
        buffer.resize(kernels::cpu::kMostTaskBytes / 8);
      }
      data.CopyElements(0, count, reinterpret_cast<std::byte*>(buffer.data()));
      bytes = std::span<const std::byte>(reinterpret_cast<const std::byte*>(buffer.data()),
                                         count * element_bytes_);
    }
    if (bytes.has_value()) {
      kernels::cpu::ReduceAsync(pool_, request_, *bytes, base, Absorber(std::move(done)),
                                few_tasks_);
      return;
    }
    // Each task copies its block out of the message's pieces into a buffer of its thread's, which
    // stays in cache for the reduction: one read of the message, as a parse would cost.
    kernels::cpu::ReduceAsync(pool_, request_, count, PiecesBlockSource(std::move(data)), base,
                              Absorber(std::move(done)), few_tasks_);
  }

  // In place: pool threads read the object's pages with pread (runtime/shared_memory.h says why
  // not through a mapping), a task's block at a time.
  void ConsumeShared(const SharedSource& source, ConsumeDone done) override {
    if (source.kind != SharedSource::Kind::kHost || source.fd < 0) {
      std::move(done)(absl::FailedPreconditionError(
          "the CPU backend reads only system shared memory; device memory needs the CUDA backend"));
      return;
    }
    const uint64_t base = consumed_;
    consumed_ += source.count;
    kernels::cpu::ReduceAsync(pool_, request_, source.count,
                              FileBlockSource(source.fd, source.file_offset, element_bytes_), base,
                              Absorber(std::move(done)));
  }

  void Finish(FinishDone done) override {
    gpureduce::Stats stats;
    {
      std::lock_guard<std::mutex> lock(mu_);
      stats = stats_;
    }
    std::move(done)(stats);  // the last Consume's `done` ran: nothing is in flight
  }

  BackendTiming timing() const override {
    std::lock_guard<std::mutex> lock(mu_);
    return timing_;
  }

  std::string device_name() const override { return device_; }
  std::vector<int> devices() const override {
    return server_device_ ? std::vector<int>{0} : std::vector<int>{};
  }
  void StartAt(uint64_t index) override { consumed_ = index; }
  kernels::KernelId kernel() const override { return kernels::KernelId::kCpu; }

 private:
  // The kernel's callback: merges a Consume's stats into the request's, then releases the data.
  kernels::cpu::StatsDone Absorber(ConsumeDone done) {
    return [this, done = std::move(done)](absl::StatusOr<gpureduce::Stats> chunk,
                                          kernels::cpu::ReduceTiming timing) mutable {
      if (!chunk.ok()) {
        std::move(done)(chunk.status());
        return;
      }
      {
        std::lock_guard<std::mutex> lock(mu_);
        stats_ = gpureduce::MergeStats(stats_, *chunk);
        timing_.queue += timing.queue;
        timing_.kernel += timing.compute;
      }
      std::move(done)(absl::OkStatus());
    };
  }

  ThreadPool& pool_;
  const kernels::cpu::StatsRequest request_;
  const kernels::cpu::FewTasks few_tasks_;
  const size_t element_bytes_;
  const std::string device_;
  const bool server_device_;  // CpuBackend's
  uint64_t consumed_ = 0;     // the next element's index; touched only by the caller of Consume
  mutable std::mutex mu_;     // stats_ and timing_ are written on pool threads
  gpureduce::Stats stats_;
  BackendTiming timing_;
};

}  // namespace

CpuBackend::CpuBackend(uint32_t threads, bool server_device)
    : pool_(threads), server_device_(server_device) {
  device_.index = 0;
  device_.name = CpuModelName();
  device_.memory_bytes = PhysicalMemoryBytes();
  device_.multiprocessors = static_cast<int>(pool_.size());
}

std::vector<DeviceDescription> CpuBackend::devices() const { return {device_}; }

std::string CpuBackend::DeviceName() const {
  return absl::StrCat(device_.name, " (", pool_.size(), " threads)");
}

absl::Status CpuBackend::SelfCheck() {
  // Exactly representable values with a closed-form sum, long enough to use several tasks.
  constexpr size_t kCount = 3 * kernels::cpu::kElementsPerTask + 17;
  std::vector<float> data(kCount);
  for (size_t i = 0; i < kCount; ++i) data[i] = static_cast<float>(int(i % 7) - 3);
  data[kCount - 5] = 9.0f;
  const double expected_sum = std::accumulate(data.begin(), data.end(), 0.0);
  const kernels::cpu::StatsRequest request{gpureduce::DType::kFloat32, {.sum = true, .max = true}};
  const gpureduce::Stats stats =
      kernels::cpu::Reduce(pool_, request, std::as_bytes(std::span<const float>(data)));
  if (stats.sum + stats.sum_lo != expected_sum || stats.count != kCount || stats.max != 9.0 ||
      stats.max_index != static_cast<int64_t>(kCount - 5)) {
    return absl::InternalError(absl::StrFormat(
        "CPU self-check failed: sum %g (expected %g), argmax %g at %d (expected 9 at %d)",
        stats.sum + stats.sum_lo, expected_sum, stats.max, stats.max_index, kCount - 5));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<ReduceSession>> CpuBackend::Open(const RequestSpec& spec) {
  if (spec.device > 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("the CPU backend has one device, 0; the request pins device ", spec.device));
  }
  if (spec.layout != nullptr) {
    return std::make_unique<ShapedSession>(std::make_unique<CpuBlockKernels>(pool_), spec,
                                           ShapedSessionInfo{DeviceName()});
  }
  return std::make_unique<CpuSession>(pool_, spec, DeviceName(), server_device_);
}

}  // namespace gpureduce::runtime
