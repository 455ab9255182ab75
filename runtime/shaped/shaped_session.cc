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

ShapedSession::ShapedSession(std::unique_ptr<BlockKernels> kernels, const RequestSpec& spec,
                             ShapedSessionInfo info)
    : kernels_(std::move(kernels)),
      layout_(spec.layout),
      reducer_(*kernels_, spec),
      info_(std::move(info)),
      element_bytes_(gpureduce::DTypeSize(spec.dtype)),
      max_piece_bytes_(kernels_->max_piece_bytes() / element_bytes_ * element_bytes_) {}

ShapedSession::~ShapedSession() = default;

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
  pending_ = *bytes;
  shared_ = SharedSource{};
  consume_done_ = std::move(done);
  Pump();
}

void ShapedSession::ConsumeShared(const SharedSource& source, ConsumeDone done) {
  if (source.kind != SharedSource::Kind::kHost || source.fd < 0) {
    std::move(done)(absl::FailedPreconditionError(
        "a request with axes or segments reads messages or system shared memory; a CUDA IPC "
        "region is not supported for it (reduce it whole, or send it by system shared memory)"));
    return;
  }
  pending_ = {};
  shared_ = source;
  shared_next_ = 0;
  consume_done_ = std::move(done);
  Pump();
}

absl::Status ShapedSession::ReadSharedBlock() {
  const uint64_t count = std::min(kSharedBlockBytes / element_bytes_, shared_.count - shared_next_);
  std::byte* buffer = Buffer(count * element_bytes_);
  absl::Status read = ReadFileBytes(shared_.fd, shared_.file_offset + shared_next_ * element_bytes_,
                                    count * element_bytes_, reinterpret_cast<char*>(buffer));
  if (!read.ok()) return read;
  shared_next_ += count;
  pending_ = std::span<const std::byte>(buffer, count * element_bytes_);
  return absl::OkStatus();
}

void ShapedSession::Pump() {
  while (true) {
    if (pending_.empty() && status_.ok() && shared_next_ < shared_.count) {
      status_.Update(ReadSharedBlock());
    }
    if (pending_.empty() || !status_.ok()) break;
    const size_t take =
        max_piece_bytes_ == 0 ? pending_.size() : std::min(pending_.size(), max_piece_bytes_);
    const std::span<const std::byte> piece = pending_.first(take);
    pending_ = pending_.subspan(take);
    // As ShapedReducer::Continue: whichever of this loop and the callback comes second goes on.
    auto second = std::make_shared<std::atomic<bool>>(false);
    reducer_.Reduce(piece, [this, second](absl::Status status, kernels::cpu::ReduceTiming timing) {
      Absorb(timing);
      if (!status.ok()) {
        status_.Update(status);
        pending_ = {};
      }
      if (second->exchange(true)) Pump();
    });
    if (!second->exchange(true)) return;
  }
  ConsumeDone done = std::move(consume_done_);
  std::move(done)(status_);
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
