#include "runtime/shaped/shaped_session.h"

#include <algorithm>
#include <optional>
#include <utility>

#include "runtime/cpu/file_block_source.h"

namespace gpureduce::runtime {
namespace {

// A shared-memory region is read into the session's buffer this much at a time.
constexpr uint64_t kSharedBlockBytes = uint64_t{16} << 20;

}  // namespace

ShapedSession::ShapedSession(ThreadPool& pool, const RequestSpec& spec, std::string device)
    : layout_(spec.layout),
      reducer_(pool, spec),
      device_(std::move(device)),
      element_bytes_(gpureduce::DTypeSize(spec.dtype)) {}

std::byte* ShapedSession::Buffer(size_t bytes) {
  const size_t words = (bytes + sizeof(uint64_t) - 1) / sizeof(uint64_t);
  if (buffer_.size() < words) buffer_.resize(words);
  return reinterpret_cast<std::byte*>(buffer_.data());
}

void ShapedSession::Absorb(const kernels::cpu::ReduceTiming& timing) {
  std::lock_guard<std::mutex> lock(mu_);
  timing_.queue += timing.queue;
  timing_.kernel += timing.compute;
}

void ShapedSession::ConsumePieces(PayloadPieces data, ConsumeDone done) {
  data.set_element_bytes(element_bytes_);
  std::optional<std::span<const std::byte>> bytes = data.AsBytes();
  if (!bytes.has_value()) {  // gRPC's slices: one copy into the session's buffer
    std::byte* buffer = Buffer(data.count() * element_bytes_);
    data.CopyElements(0, data.count(), buffer);
    bytes = std::span<const std::byte>(buffer, data.count() * element_bytes_);
  }
  reducer_.Reduce(*bytes,
                  [this, done = std::move(done)](kernels::cpu::ReduceTiming timing) mutable {
                    Absorb(timing);
                    std::move(done)(absl::OkStatus());
                  });
}

void ShapedSession::ConsumeShared(const SharedSource& source, ConsumeDone done) {
  if (source.kind != SharedSource::Kind::kHost || source.fd < 0) {
    std::move(done)(absl::FailedPreconditionError(
        "the CPU backend reads only system shared memory; device memory needs the CUDA backend"));
    return;
  }
  shared_ = source;
  shared_next_ = 0;
  shared_done_ = std::move(done);
  ReadShared();
}

void ShapedSession::ReadShared() {
  const uint64_t block = kSharedBlockBytes / element_bytes_;
  while (shared_next_ < shared_.count) {
    const uint64_t count = std::min(block, shared_.count - shared_next_);
    std::byte* buffer = Buffer(count * element_bytes_);
    absl::Status read =
        ReadFileBytes(shared_.fd, shared_.file_offset + shared_next_ * element_bytes_,
                      count * element_bytes_, reinterpret_cast<char*>(buffer));
    if (!read.ok()) {
      ConsumeDone done = std::move(shared_done_);
      std::move(done)(std::move(read));
      return;
    }
    shared_next_ += count;
    // As ShapedReducer::Continue: the second of this loop and the callback goes on.
    auto second = std::make_shared<std::atomic<bool>>(false);
    reducer_.Reduce(std::span<const std::byte>(buffer, count * element_bytes_),
                    [this, second](kernels::cpu::ReduceTiming timing) {
                      Absorb(timing);
                      if (second->exchange(true)) ReadShared();
                    });
    if (!second->exchange(true)) return;
  }
  ConsumeDone done = std::move(shared_done_);
  std::move(done)(absl::OkStatus());
}

void ShapedSession::Finish(FinishDone done) {
  std::move(done)(absl::FailedPreconditionError(
      "an array request (axes or segments) answers arrays: FinishArrays"));
}

void ShapedSession::FinishArrays(ArraysDone done) { std::move(done)(reducer_.Finish()); }

BackendTiming ShapedSession::timing() const {
  std::lock_guard<std::mutex> lock(mu_);
  return timing_;
}

}  // namespace gpureduce::runtime
