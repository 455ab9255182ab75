#include "runtime/session/message_input.h"

namespace gpureduce::runtime {

PieceSource MessageInput::Stage(uint64_t first, size_t count, PieceSlot& slot) const {
  data_.CopyFloats(first, count, slot.host);
  // A small piece is read by the kernel straight from the pinned buffer, which the GPU maps: a
  // copy to the device would cost more latency than the reads across PCIe.
  return PieceSource{.kind = count <= kInlineStageFloats ? PieceSource::Kind::kMappedSlot
                                                         : PieceSource::Kind::kStagedSlot};
}

}  // namespace gpureduce::runtime
