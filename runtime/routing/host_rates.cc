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

#include "absl/cleanup/cleanup.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace gpureduce::runtime {
namespace {

constexpr int kRounds = 3;

using Opener = std::function<absl::StatusOr<std::unique_ptr<ReduceSession>>()>;

// The best of kRounds reductions of `source` by sessions from `open`, in seconds, after one
// that wakes the path up (the CPU's pool, the GPU's staging).
absl::StatusOr<double> BestSeconds(const Opener& open, const SharedSource& source) {
  double best = 0;
  for (int round = -1; round < kRounds; ++round) {
    ASSIGN_OR_RETURN(std::unique_ptr<ReduceSession> session, open());
    const auto start = std::chrono::steady_clock::now();
    std::promise<absl::Status> consumed;
    session->ConsumeShared(source, [&](absl::Status status) { consumed.set_value(status); });
    RETURN_IF_ERROR(consumed.get_future().get());
    std::promise<absl::Status> finished;
    session->Finish(
        [&](absl::StatusOr<gpureduce::Stats> stats) { finished.set_value(stats.status()); });
    RETURN_IF_ERROR(finished.get_future().get());
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (round >= 0) best = round == 0 ? seconds : std::min(best, seconds);
  }
  return best;
}

absl::Status Errno(const char* what) {
  return absl::InternalError(absl::StrCat(what, ": ", std::strerror(errno)));
}

}  // namespace

absl::StatusOr<HostRates> MeasureHostRates(Backend& cpu, GpuBackend& gpus, uint64_t bytes) {
  if (gpus.gpu_count() == 0) return absl::FailedPreconditionError("no GPU");
  const int fd = memfd_create("gpureduce-host-rates", MFD_CLOEXEC);
  if (fd < 0) return Errno("memfd_create");
  absl::Cleanup close_fd = [fd] { close(fd); };
  if (ftruncate(fd, static_cast<off_t>(bytes)) != 0) return Errno("ftruncate");
  void* base = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (base == MAP_FAILED) return Errno("mmap");
  absl::Cleanup unmap = [base, bytes] { munmap(base, bytes); };
  std::fill_n(static_cast<float*>(base), bytes / sizeof(float), 1.0f);  // every page populated
  ASSIGN_OR_RETURN(std::unique_ptr<MemoryHold> pinned, gpus.PinHost(base, bytes));

  SharedSource source;
  source.kind = SharedSource::Kind::kHost;
  source.count = bytes / sizeof(float);
  source.fd = fd;
  source.pinned = static_cast<const std::byte*>(base);
  RequestSpec spec{gpureduce::Op::kSum, cpu.default_kernel(), 0, 0};
  spec.size_hint = source.count;
  spec.one_message = true;
  spec.data_in_host_region = true;
  ASSIGN_OR_RETURN(const double cpu_seconds, BestSeconds([&] { return cpu.Open(spec); }, source));
  spec.kernel = gpus.default_kernel();
  ASSIGN_OR_RETURN(const double gpu_seconds,
                   BestSeconds([&] { return gpus.OpenOn(0, spec); }, source));
  return HostRates{.bytes = bytes,
                   .cpu_gbps = static_cast<double>(bytes) / cpu_seconds / 1e9,
                   .gpu_gbps = static_cast<double>(bytes) / gpu_seconds / 1e9};
}

}  // namespace gpureduce::runtime
