#pragma once

// What one Consume reads, as its pieces go to the GPU: the session's scheduler asks its input for
// each piece in turn. One adapter per kind of input: a message's floats in gRPC memory
// (message_input.h), a shared object's pinned pages (host_region_input.h), device memory
// (device_region_input.h).

#include <cstddef>
#include <cstdint>

#include "runtime/session/piece_slot.h"

namespace gpureduce::runtime {

// A last piece this small (64 KiB) is staged on the thread that got the slot, and read by the
// kernel from pinned host memory without a copy to the device.
inline constexpr size_t kInlineStageFloats = 16 * 1024;
inline constexpr size_t kInlineStageBytes = kInlineStageFloats * sizeof(float);

// Where a piece's elements are when the GPU reads them.
struct PieceSource {
  enum class Kind {
    kMappedSlot,  // in the slot's pinned buffer, read by the kernel through the GPU's mapping
    kStagedSlot,  // in the slot's pinned buffer, copied to the slot's device buffer first
    kPinnedHost,  // at `data`: pinned host memory, copied straight to the slot's device buffer
    kDevice,      // at `data`: device memory, reduced where it is
  };
  Kind kind = Kind::kStagedSlot;
  const std::byte* data = nullptr;  // kPinnedHost and kDevice
};

class PieceInput {
 public:
  virtual ~PieceInput() = default;

  // Elements in the whole input, and the size of one (the request's dtype's).
  uint64_t count() const { return count_; }
  size_t element_bytes() const { return element_bytes_; }
  // The most elements one piece carries, where a piece staged through a slot carries at most
  // `slot_piece_elements`.
  virtual size_t MostPieceElements(size_t slot_piece_elements) const { return slot_piece_elements; }
  // Whether the CPU copy of a piece of `count` elements takes long enough to go to a copy thread.
  virtual bool StagesOnCopyThread(size_t count) const {
    (void)count;
    return false;
  }
  // Readies elements [first, first + count) for the GPU (in `slot` where they need staging), and
  // says where the GPU reads them.
  virtual PieceSource Stage(uint64_t first, size_t count, PieceSlot& slot) const = 0;

 protected:
  uint64_t count_ = 0;
  size_t element_bytes_ = sizeof(float);
};

}  // namespace gpureduce::runtime
