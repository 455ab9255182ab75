#pragma once

// A staging slot as a session's scheduler sees it: the pinned host buffer a message's floats are
// copied into. The device's slots (StagingSlot, runtime/cuda/device.h) add the device buffer and
// the events that time a piece.

namespace gpureduce::runtime {

struct PieceSlot {
  virtual ~PieceSlot() = default;
  float* host = nullptr;  // the device's staging_slot_floats() floats
};

}  // namespace gpureduce::runtime
