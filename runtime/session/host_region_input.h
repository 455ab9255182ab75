#pragma once

// A shared-memory object's elements in host pages the GPUs can read (pinned at registration): no
// copy by the CPU, each piece is copied by the GPU straight from the pages to a slot's device
// buffer.

#include "runtime/session/piece_input.h"

namespace gpureduce::runtime {

class HostRegionInput final : public PieceInput {
 public:
  void Reset(const std::byte* pinned, uint64_t count, size_t element_bytes) {
    pinned_ = pinned;
    count_ = count;
    element_bytes_ = element_bytes;
  }

  PieceSource Stage(uint64_t first, size_t count, PieceSlot& slot) const override {
    (void)count;
    (void)slot;
    return PieceSource{.kind = PieceSource::Kind::kPinnedHost,
                       .data = pinned_ + first * element_bytes_};
  }

 private:
  const std::byte* pinned_ = nullptr;
};

}  // namespace gpureduce::runtime
