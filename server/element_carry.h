#pragma once

// A stream's chunks may end inside an element (a float64 cut after 3 bytes): the element's first
// bytes wait here for the next chunk, and each chunk goes to the backend as whole elements only.
// The bytes of an element that straddles two chunks are copied into a small head buffer that
// stays with the chunk's payload, so the payload still points where gRPC left the rest.

#include <array>
#include <cstddef>

#include "runtime/payload_pieces.h"

namespace gpureduce::server {

class ElementCarry {
 public:
  // Head buffers, one per chunk buffer a stream keeps in flight.
  static constexpr int kBuffers = 2;

  void set_element_bytes(size_t bytes) { element_bytes_ = bytes; }

  // The whole elements of the bytes held back so far followed by `chunk`, as pieces of elements;
  // the bytes of a last, incomplete element are held back for the next chunk. `buffer` (0 or 1)
  // names the head buffer the result may point into: it must not be in use by an earlier
  // result still being read.
  runtime::PayloadPieces Take(const runtime::PayloadPieces& chunk, int buffer);

  // Bytes held back: nonzero at the end of a stream means it ended inside an element.
  size_t held() const { return held_; }

 private:
  size_t element_bytes_ = 4;
  std::array<std::byte, 8> held_bytes_{};
  size_t held_ = 0;
  std::array<std::array<std::byte, 8>, kBuffers> heads_{};
};

}  // namespace gpureduce::server
