#pragma once

// Elements already in the session's device memory (a CUDA IPC region): reduced where they are, no
// copy at all.

#include "kernels/kernel_id.h"
#include "runtime/session/piece_input.h"

namespace gpureduce::runtime {

class DeviceRegionInput final : public PieceInput {
 public:
  explicit DeviceRegionInput(kernels::KernelId kernel) : kernel_(kernel) {}

  void Reset(const std::byte* data, uint64_t count, size_t element_bytes) {
    data_ = data;
    count_ = count;
    element_bytes_ = element_bytes;
  }

  // single_pass reduces device memory in place in launches of up to 1 GiB (its scratch does not
  // grow with the input); the other kernels' scratch is sized for one staging slot.
  static constexpr size_t kInPlacePieceElements = size_t{1} << 28;
  size_t MostPieceElements(size_t slot_piece_elements) const override {
    return kernel_ == kernels::KernelId::kSinglePass ? kInPlacePieceElements : slot_piece_elements;
  }

  PieceSource Stage(uint64_t first, size_t count, PieceSlot& slot) const override {
    (void)count;
    (void)slot;
    return PieceSource{.kind = PieceSource::Kind::kDevice, .data = data_ + first * element_bytes_};
  }

 private:
  const kernels::KernelId kernel_;
  const std::byte* data_ = nullptr;
};

}  // namespace gpureduce::runtime
