#pragma once

// Prepares stream messages on a helper thread (reading or generating the input, copying it into
// the message) while the caller's thread sends the previous one: with two messages in turn the
// input and the transport overlap, and memory stays at two chunks.

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "gpureduce/v1/reduce.pb.h"

namespace gpureduce::client {

class ChunkPipeline {
 public:
  using Filler = absl::FunctionRef<absl::StatusOr<size_t>(absl::Span<float> out)>;
  // Fills whole elements of `element_size` bytes into `out`; returns how many.
  using ByteFiller = absl::FunctionRef<absl::StatusOr<size_t>(absl::Span<char> out)>;

  // The first message carries `spec`; an empty input still yields that one message.
  ChunkPipeline(Filler fill, const v1::ReduceSpec& spec, size_t chunk_elements,
                bool use_values_field);
  // Elements of any dtype, `chunk_elements` of `element_size` bytes a message, in `data`.
  ChunkPipeline(ByteFiller fill, const v1::ReduceSpec& spec, size_t chunk_elements,
                size_t element_size);
  ~ChunkPipeline();  // stops the helper after its current read

  ChunkPipeline(const ChunkPipeline&) = delete;
  ChunkPipeline& operator=(const ChunkPipeline&) = delete;

  // The next message to send (nullptr after the last), or the input's error. Hand it back with
  // Done once sent.
  absl::StatusOr<const v1::ReduceChunk*> Next();
  void Done(const v1::ReduceChunk* message);

  // Elements carried by a message Next returned.
  size_t Count(const v1::ReduceChunk* message) const;
  // Payload bytes carried by a message Next returned.
  static size_t Bytes(const v1::ReduceChunk& message) {
    return message.data().size() + message.values_size() * sizeof(float);
  }

 private:
  struct Slot {
    v1::ReduceChunk message;
    size_t count = 0;
    bool ready = false;  // filled, not yet sent
  };

  void Produce(Filler fill, const v1::ReduceSpec& spec, size_t chunk_elements,
               bool use_values_field);
  void ProduceBytes(ByteFiller fill, const v1::ReduceSpec& spec, size_t chunk_elements,
                    size_t element_size);
  // Hands a filled slot over (or the input's end or error); false when production ends.
  bool Publish(Slot& slot, const absl::StatusOr<size_t>& filled, bool first,
               const v1::ReduceSpec& spec);

  std::mutex mu_;
  std::condition_variable cv_;
  Slot slots_[2];
  int next_to_send_ = 0;
  bool input_done_ = false;
  absl::Status input_error_;
  bool stopping_ = false;
  std::thread producer_;
};

}  // namespace gpureduce::client
