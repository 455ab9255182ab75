#pragma once

// A message's elements where gRPC left them: each piece is copied by the CPU into a staging slot's
// pinned buffer, on a copy thread unless it is small.

#include <utility>

#include "runtime/payload_pieces.h"
#include "runtime/session/piece_input.h"

namespace gpureduce::runtime {

class MessageInput final : public PieceInput {
 public:
  void Reset(PayloadPieces data) {
    data_ = std::move(data);
    count_ = data_.count();
    element_bytes_ = data_.element_bytes();
  }

  bool StagesOnCopyThread(size_t count) const override {
    return count * element_bytes_ > kInlineStageBytes;
  }
  PieceSource Stage(uint64_t first, size_t count, PieceSlot& slot) const override;

 private:
  PayloadPieces data_;
};

}  // namespace gpureduce::runtime
