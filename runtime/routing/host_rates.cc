#include "runtime/routing/host_rates.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <functional>
#include <future>
#include <memory>
#include <utility>
#include <vector>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace gpureduce::runtime {
namespace {

// Small requests are cheap and noisier: more rounds.
constexpr int kLargeRounds = 3;
constexpr int kSmallRounds = 7;

using Opener = std::function<absl::StatusOr<std::unique_ptr<ReduceSession>>(const RequestSpec&)>;
// Hands a session `count` floats from the start of the data, `done` once consumed.
using Feed = std::function<void(ReduceSession&, uint64_t count, ConsumeDone done)>;

// The best of `rounds` reductions of `count` floats, in seconds, after one that wakes the path
// up (the CPU's pool, the GPU's staging): a session opened for `spec`, fed, finished.
absl::StatusOr<double> BestSeconds(const Opener& open, RequestSpec spec, uint64_t count,
                                   const Feed& feed, int rounds) {
  spec.size_hint = count;
  double best = 0;
  for (int round = -1; round < rounds; ++round) {
    const auto start = std::chrono::steady_clock::now();
    absl::StatusOr<std::unique_ptr<ReduceSession>> session = open(spec);
    RETURN_IF_ERROR(session.status());
    std::promise<absl::Status> consumed;
    feed(**session, count, [&](absl::Status status) { consumed.set_value(status); });
    const absl::Status consume = consumed.get_future().get();
    // Finished whatever the Consume said: a session may not go before its work is over (the
    // GPU may still read the memfd, its callbacks still hold the session).
    std::promise<absl::Status> finished;
    (*session)->Finish(
        [&](absl::StatusOr<gpureduce::Stats> stats) { finished.set_value(stats.status()); });
    const absl::Status finish = finished.get_future().get();
    RETURN_IF_ERROR(consume);
    RETURN_IF_ERROR(finish);
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (round >= 0) best = round == 0 ? seconds : std::min(best, seconds);
  }
  return best;
}

// One reader's line through the two sizes.
absl::StatusOr<PathCost> Measure(const Opener& open, const RequestSpec& spec, MeasuredSizes sizes,
                                 const Feed& feed) {
  const uint64_t small = sizes.small_bytes / sizeof(float);
  const uint64_t large = sizes.large_bytes / sizeof(float);
  ASSIGN_OR_RETURN(const double small_seconds, BestSeconds(open, spec, small, feed, kSmallRounds));
  ASSIGN_OR_RETURN(const double large_seconds, BestSeconds(open, spec, large, feed, kLargeRounds));
  return PathCost::Through(small * sizeof(float), small_seconds, large * sizeof(float),
                           large_seconds);
}

absl::StatusOr<ReaderCosts> MeasureBoth(Backend& cpu, GpuBackend& gpus, RequestSpec spec,
                                        MeasuredSizes sizes, const Feed& feed) {
  if (gpus.gpu_count() == 0) return absl::FailedPreconditionError("no GPU");
  if (sizes.small_bytes < sizeof(float) || sizes.large_bytes <= sizes.small_bytes) {
    return absl::InvalidArgumentError("the measured sizes must grow from at least one float");
  }
  ReaderCosts costs;
  spec.kernel = cpu.default_kernel();
  ASSIGN_OR_RETURN(costs.cpu,
                   Measure([&](const RequestSpec& on) { return cpu.Open(on); }, spec, sizes, feed));
  spec.kernel = gpus.default_kernel();
  ASSIGN_OR_RETURN(costs.gpu, Measure([&](const RequestSpec& on) { return gpus.OpenOn(0, on); },
                                      spec, sizes, feed));
  return costs;
}

absl::Status Errno(const char* what) {
  return absl::InternalError(absl::StrCat(what, ": ", std::strerror(errno)));
}

}  // namespace

absl::StatusOr<ReaderCosts> MeasureMessageCosts(Backend& cpu, GpuBackend& gpus,
                                                MeasuredSizes sizes) {
  const std::vector<float> data(sizes.large_bytes / sizeof(float), 1.0f);
  RequestSpec spec{gpureduce::Op::kSum, cpu.default_kernel(), 0, 0};
  spec.auto_kernel = true;
  spec.one_message = true;
  return MeasureBoth(cpu, gpus, spec, sizes,
                     [&](ReduceSession& session, uint64_t count, ConsumeDone done) {
                       session.Consume(std::span<const float>(data.data(), count), std::move(done));
                     });
}

absl::StatusOr<ReaderCosts> MeasureRegionCosts(Backend& cpu, GpuBackend& gpus,
                                               MeasuredSizes sizes) {
  if (gpus.gpu_count() == 0) return absl::FailedPreconditionError("no GPU");
  const uint64_t bytes = sizes.large_bytes;
  const int fd = memfd_create("gpureduce-host-rates", MFD_CLOEXEC);
  if (fd < 0) return Errno("memfd_create");
  absl::Cleanup close_fd = [fd] { close(fd); };
  if (ftruncate(fd, static_cast<off_t>(bytes)) != 0) return Errno("ftruncate");
  void* base = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (base == MAP_FAILED) return Errno("mmap");
  absl::Cleanup unmap = [base, bytes] { munmap(base, bytes); };
  std::fill_n(static_cast<float*>(base), bytes / sizeof(float), 1.0f);  // every page populated
  ASSIGN_OR_RETURN(std::unique_ptr<MemoryHold> pinned, gpus.PinHost(base, bytes));

  RequestSpec spec{gpureduce::Op::kSum, cpu.default_kernel(), 0, 0};
  spec.auto_kernel = true;
  spec.one_message = true;
  spec.data_in_host_region = true;
  return MeasureBoth(cpu, gpus, spec, sizes,
                     [&](ReduceSession& session, uint64_t count, ConsumeDone done) {
                       SharedSource source;
                       source.kind = SharedSource::Kind::kHost;
                       source.count = count;
                       source.fd = fd;
                       source.pinned = static_cast<const std::byte*>(base);
                       session.ConsumeShared(source, std::move(done));
                     });
}

}  // namespace gpureduce::runtime
