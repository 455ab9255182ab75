#include "runtime/batching/batched_session.h"

#include <utility>

#include "runtime/cpu/file_block_source.h"

namespace gpureduce::runtime {

BatchedSession::BatchedSession(SmallBatcher& batcher, const RequestSpec& spec,
                               std::string device_name, int device_index)
    : batcher_(batcher),
      dtype_(spec.dtype),
      needs_(gpureduce::NeedsOf(spec.ops())),
      device_name_(std::move(device_name)),
      device_index_(device_index) {}

std::byte* BatchedSession::Grow(size_t bytes) {
  words_.resize((bytes_ + bytes + sizeof(uint64_t) - 1) / sizeof(uint64_t));
  std::byte* at = reinterpret_cast<std::byte*>(words_.data()) + bytes_;
  bytes_ += bytes;
  return at;
}

void BatchedSession::ConsumePieces(PayloadPieces data, ConsumeDone done) {
  const size_t element = gpureduce::DTypeSize(dtype_);
  data.set_element_bytes(element);
  data.CopyElements(0, data.count(), Grow(data.count() * element));
  std::move(done)(absl::OkStatus());
}

void BatchedSession::ConsumeShared(const SharedSource& source, ConsumeDone done) {
  if (source.kind != SharedSource::Kind::kHost || source.fd < 0) {
    std::move(done)(absl::InternalError("a CUDA region's request is not batched"));
    return;
  }
  const size_t bytes = source.count * gpureduce::DTypeSize(dtype_);
  std::move(done)(
      ReadFileBytes(source.fd, source.file_offset, bytes, reinterpret_cast<char*>(Grow(bytes))));
}

void BatchedSession::Finish(FinishDone done) {
  batcher_.Add(
      dtype_, needs_,
      std::span<const std::byte>(reinterpret_cast<const std::byte*>(words_.data()), bytes_),
      [this, done = std::move(done)](absl::StatusOr<gpureduce::Stats> stats,
                                     BatchTiming timing) mutable {
        {
          std::lock_guard<std::mutex> lock(mu_);
          batch_timing_ = timing;
        }
        std::move(done)(std::move(stats));
      });
}

BackendTiming BatchedSession::timing() const {
  std::lock_guard<std::mutex> lock(mu_);
  BackendTiming timing;
  timing.queue = batch_timing_.waited;
  timing.kernel = batch_timing_.kernel;
  return timing;
}

}  // namespace gpureduce::runtime
