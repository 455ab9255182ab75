#pragma once

// Floats already in the session's device memory (a CUDA IPC region): reduced where they are, no
// copy at all.

#include "kernels/kernel_id.h"
#include "runtime/session/piece_input.h"

namespace gpureduce::runtime {

class DeviceRegionInput final : public PieceInput {
 public:
  explicit DeviceRegionInput(kernels::KernelId kernel) : kernel_(kernel) {}

  void Reset(const float* data, uint64_t count) {
    data_ = data;
    count_ = count;
  }

  // single_pass reduces device memory in place in launches of up to 1 GiB (its scratch does not
  // grow with the input); the other kernels' scratch is sized for one staging slot.
  static constexpr size_t kInPlacePieceFloats = size_t{1} << 28;
  size_t MostPieceFloats(size_t slot_piece_floats) const override {
    return kernel_ == kernels::KernelId::kSinglePass ? kInPlacePieceFloats : slot_piece_floats;
  }

  PieceSource Stage(uint64_t first, size_t count, PieceSlot& slot) const override {
    (void)count;
    (void)slot;
    return PieceSource{.kind = PieceSource::Kind::kDevice, .data = data_ + first};
  }

 private:
  const kernels::KernelId kernel_;
  const float* data_ = nullptr;
};

}  // namespace gpureduce::runtime
