#include "client/chunk_pipeline.h"

#include "client/reducer_client.h"

namespace gpureduce::client {

ChunkPipeline::ChunkPipeline(Filler fill, const v1::ReduceSpec& spec, size_t chunk_elements,
                             bool use_values_field)
    : producer_([this, fill, spec, chunk_elements, use_values_field] {
        Produce(fill, spec, chunk_elements, use_values_field);
      }) {}

ChunkPipeline::ChunkPipeline(ByteFiller fill, const v1::ReduceSpec& spec, size_t chunk_elements,
                             size_t element_size)
    : producer_([this, fill, spec, chunk_elements, element_size] {
        ProduceBytes(fill, spec, chunk_elements, element_size);
      }) {}

ChunkPipeline::~ChunkPipeline() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  producer_.join();
}

void ChunkPipeline::Produce(Filler fill, const v1::ReduceSpec& spec, size_t chunk_elements,
                            bool use_values_field) {
  std::vector<float> buffer(use_values_field ? chunk_elements : 0);
  bool first = true;
  for (int index = 0;; index ^= 1, first = false) {
    Slot& slot = slots_[index];
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [&] { return stopping_ || !slot.ready; });
      if (stopping_) return;
    }
    // The slot is this thread's until it is marked ready. Bytes are filled straight into the
    // message's `data` (little-endian float32 on this host), saving a copy of every chunk.
    std::string* data = slot.message.mutable_data();
    absl::Span<float> out = absl::MakeSpan(buffer);
    if (!use_values_field) {
      data->resize(chunk_elements * sizeof(float));
      out = absl::MakeSpan(reinterpret_cast<float*>(data->data()), chunk_elements);
    }
    absl::StatusOr<size_t> filled = fill(out);
    if (filled.ok() && !use_values_field) data->resize(*filled * sizeof(float));
    std::lock_guard<std::mutex> lock(mu_);
    if (!filled.ok() || (*filled == 0 && !first)) {
      input_error_ = filled.status();
      input_done_ = true;
      cv_.notify_all();
      return;
    }
    if (first) *slot.message.mutable_spec() = spec;
    if (use_values_field) {
      SetPayload(absl::MakeConstSpan(buffer.data(), *filled), use_values_field, data,
                 slot.message.mutable_values());
    }
    slot.count = *filled;
    slot.ready = true;
    cv_.notify_all();
    if (*filled == 0) {  // an empty input: the spec alone, then the end
      input_done_ = true;
      return;
    }
  }
}

void ChunkPipeline::ProduceBytes(ByteFiller fill, const v1::ReduceSpec& spec, size_t chunk_elements,
                                 size_t element_size) {
  bool first = true;
  for (int index = 0;; index ^= 1, first = false) {
    Slot& slot = slots_[index];
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [&] { return stopping_ || !slot.ready; });
      if (stopping_) return;
    }
    std::string* data = slot.message.mutable_data();
    data->resize(chunk_elements * element_size);
    absl::StatusOr<size_t> filled = fill(absl::MakeSpan(data->data(), data->size()));
    if (filled.ok()) data->resize(*filled * element_size);
    if (!Publish(slot, filled, first, spec)) return;
  }
}

bool ChunkPipeline::Publish(Slot& slot, const absl::StatusOr<size_t>& filled, bool first,
                            const v1::ReduceSpec& spec) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!filled.ok() || (*filled == 0 && !first)) {
    input_error_ = filled.status();
    input_done_ = true;
    cv_.notify_all();
    return false;
  }
  if (first) *slot.message.mutable_spec() = spec;
  slot.count = *filled;
  slot.ready = true;
  cv_.notify_all();
  if (*filled == 0) {  // an empty input: the spec alone, then the end
    input_done_ = true;
    return false;
  }
  return true;
}

absl::StatusOr<const v1::ReduceChunk*> ChunkPipeline::Next() {
  std::unique_lock<std::mutex> lock(mu_);
  Slot& slot = slots_[next_to_send_];
  cv_.wait(lock, [&] { return slot.ready || input_done_; });
  if (slot.ready) return &slot.message;
  if (!input_error_.ok()) return input_error_;
  return nullptr;
}

void ChunkPipeline::Done(const v1::ReduceChunk* message) {
  std::lock_guard<std::mutex> lock(mu_);
  Slot& slot = slots_[next_to_send_];
  if (&slot.message != message) return;
  slot.message.clear_spec();
  slot.ready = false;
  next_to_send_ ^= 1;
  cv_.notify_all();
}

size_t ChunkPipeline::Count(const v1::ReduceChunk* message) const {
  return message == &slots_[0].message ? slots_[0].count : slots_[1].count;
}

}  // namespace gpureduce::client
