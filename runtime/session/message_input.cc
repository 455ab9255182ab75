#include "runtime/session/message_input.h"

namespace gpureduce::runtime {

PieceSource MessageInput::Stage(uint64_t first, size_t count, PieceSlot& slot) const {
  data_.CopyElements(first, count, reinterpret_cast<std::byte*>(slot.host));
  // A small piece is read by the kernel straight from the pinned buffer, which the GPU maps: a
  // copy to the device would cost more latency than the reads across PCIe.
  return PieceSource{.kind = count * element_bytes_ <= kInlineStageBytes
                                 ? PieceSource::Kind::kMappedSlot
                                 : PieceSource::Kind::kStagedSlot};
}

}  // namespace gpureduce::runtime
