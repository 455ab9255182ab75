#pragma once

// A session's device on the CPU, for the tests of its scheduler: `slots` staging slots of
// `slot_floats` floats, copy threads whose work runs when the test says (RunCopies), the
// completions of a FakeGpu, and a record of the load, the partial slot and the errors.

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "runtime/session/session_device.h"
#include "tests/unit/runtime/fake_gpu.h"

namespace gpureduce::runtime {

class FakeSessionDevice final : public SessionDevice {
 public:
  FakeSessionDevice(FakeGpu& gpu, size_t slots, size_t slot_floats)
      : gpu_(gpu),
        staging_(MakeSlots(slots, slot_floats), "a GPU staging buffer"),
        slot_floats_(slot_floats) {}

  int index() const override { return 0; }
  absl::Status Activate() const override { return activate_; }
  SlotPool<PieceSlot>& staging() override { return staging_; }
  size_t staging_slot_floats() const override { return slot_floats_; }
  void SubmitCopy(absl::AnyInvocable<void() &&> copy) override {
    copies_.push_back(std::move(copy));
  }
  CompletionQueue& completions() override { return gpu_; }
  void AddLoad(uint64_t bytes) override {
    ++requests_;
    load_bytes_ += bytes;
  }
  void RemoveLoad(uint64_t bytes) override {
    --requests_;
    load_bytes_ -= bytes;
  }
  void ReleasePartial(PartialSlot* slot) override {
    if (slot == &partial_slot_) ++partials_released_;
  }
  void ReportError(const absl::Status& status) override { errors_.push_back(status); }
  void ReportStreamError(GpuStatus error) override { stream_errors_.push_back(error); }

  // Runs the copies submitted so far, and those they submit; false when there were none.
  bool RunCopies() {
    if (copies_.empty()) return false;
    while (!copies_.empty()) {
      absl::AnyInvocable<void()&&> copy = std::move(copies_.front());
      copies_.pop_front();
      std::move(copy)();
    }
    return true;
  }
  size_t pending_copies() const { return copies_.size(); }
  void set_activate(absl::Status status) { activate_ = std::move(status); }

  PartialSlot* partial_slot() { return &partial_slot_; }
  int partials_released() const { return partials_released_; }
  int requests() const { return requests_; }
  uint64_t load_bytes() const { return load_bytes_; }
  const std::vector<absl::Status>& errors() const { return errors_; }
  const std::vector<GpuStatus>& stream_errors() const { return stream_errors_; }

 private:
  struct Slot final : PieceSlot {
    std::vector<float> floats;
  };
  static std::vector<std::unique_ptr<PieceSlot>> MakeSlots(size_t slots, size_t slot_floats) {
    std::vector<std::unique_ptr<PieceSlot>> out;
    for (size_t i = 0; i < slots; ++i) {
      auto slot = std::make_unique<Slot>();
      slot->floats.resize(slot_floats);
      slot->host = slot->floats.data();
      out.push_back(std::move(slot));
    }
    return out;
  }

  FakeGpu& gpu_;
  SlotPool<PieceSlot> staging_;
  const size_t slot_floats_;
  std::deque<absl::AnyInvocable<void() &&>> copies_;
  absl::Status activate_;
  gpureduce::Partial partial_;  // the GPU writes it where the host reads it: one address
  PartialSlot partial_slot_{&partial_, &partial_};
  int partials_released_ = 0;
  int requests_ = 0;
  uint64_t load_bytes_ = 0;
  std::vector<absl::Status> errors_;
  std::vector<GpuStatus> stream_errors_;
};

}  // namespace gpureduce::runtime
