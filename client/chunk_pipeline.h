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

  // The first message carries `spec`; an empty input still yields that one message.
  ChunkPipeline(Filler fill, const v1::ReduceSpec& spec, size_t chunk_elements,
                bool use_values_field);
  ~ChunkPipeline();  // stops the helper after its current read

  ChunkPipeline(const ChunkPipeline&) = delete;
  ChunkPipeline& operator=(const ChunkPipeline&) = delete;

  // The next message to send (nullptr after the last), or the input's error. Hand it back with
  // Done once sent.
  absl::StatusOr<const v1::ReduceChunk*> Next();
  void Done(const v1::ReduceChunk* message);

  // Floats carried by a message Next returned.
  size_t Count(const v1::ReduceChunk* message) const;

 private:
  struct Slot {
    v1::ReduceChunk message;
    size_t count = 0;
    bool ready = false;  // filled, not yet sent
  };

  void Produce(Filler fill, const v1::ReduceSpec& spec, size_t chunk_elements,
               bool use_values_field);

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
