#pragma once

// A PieceScheduler on a FakeSessionDevice and a FakeGpu, with what its callbacks reported: the
// tests drive the copy threads and the GPU by hand and look at every state in between.

#include <algorithm>
#include <cstddef>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/reduction/finalize.h"
#include "gtest/gtest.h"
#include "runtime/session/piece_scheduler.h"
#include "tests/support/classic_partial.h"
#include "tests/support/reference.h"
#include "tests/unit/runtime/fake_gpu.h"
#include "tests/unit/runtime/fake_session_device.h"

namespace gpureduce::runtime {

class PieceSchedulerTest : public ::testing::Test {
 protected:
  // More than kInlineStageFloats: a whole slot's piece of a message goes to a copy thread.
  static constexpr size_t kSlotFloats = 20000;
  static_assert(kSlotFloats > kInlineStageFloats);

  // What the scheduler's device saw when the answer came.
  struct Answer {
    absl::StatusOr<gpureduce::Partial> partial;
    size_t free_slots = 0;
    int partials_released = 0;
    int requests = 0;
  };

  static RequestSpec Spec(gpureduce::Op op,
                          kernels::KernelId kernel = kernels::KernelId::kSinglePass) {
    return RequestSpec{op, kernel, 0, 0};
  }

  void Open(const RequestSpec& spec, size_t slots = 3) {
    scheduler_.reset();  // before the device and GPU it uses
    op_ = spec.op;
    gpu_ = std::make_unique<FakeGpu>(spec.op);
    device_ = std::make_unique<FakeSessionDevice>(*gpu_, slots, kSlotFloats);
    scheduler_ = std::make_unique<PieceScheduler>(*device_, *gpu_, spec, device_->partial_slot());
  }

  // A Consume's `done`: records its status, and how often it ran.
  ConsumeDone Consumed() {
    consumed_.reset();
    return [this](absl::Status status) {
      ++consume_calls_;
      consumed_ = std::move(status);
    };
  }

  // `data` as a message whose byte ranges end at odd offsets, so floats straddle ranges.
  PayloadPieces Message(std::span<const float> data) {
    const auto* bytes = reinterpret_cast<const std::byte*>(data.data());
    const size_t size = data.size_bytes();
    PayloadPieces pieces;
    for (size_t at = 0; at < size; at += kRangeBytes) {
      pieces.Append(bytes + at, std::min(kRangeBytes, size - at));
    }
    return pieces;
  }

  // Runs the copy threads' and the GPU's work until there is none.
  void Drive() {
    bool ran = true;
    while (ran) {
      ran = device_->RunCopies();
      while (gpu_->RunNext()) ran = true;
    }
  }

  void Finish() {
    answer_.reset();
    scheduler_->Finish([this](absl::StatusOr<gpureduce::Stats> stats) {
      answer_ =
          Answer{gpureduce::testing::ClassicPartial(op_, stats), device_->staging().free_slots(),
                 device_->partials_released(), device_->requests()};
    });
  }

  // The answer matches a float64 reference over `data`.
  void ExpectAnswerMatches(std::span<const float> data) {
    ASSERT_TRUE(answer_.has_value());
    ASSERT_TRUE(answer_->partial.ok()) << answer_->partial.status();
    EXPECT_EQ(answer_->partial->count, data.size());
    const absl::StatusOr<gpureduce::ReduceResult> result =
        gpureduce::Finalize(op_, *answer_->partial);
    ASSERT_TRUE(result.ok()) << result.status();
    const testing::Reference reference = testing::ComputeReference(op_, data);
    EXPECT_EQ(testing::CheckAgainstReference(op_, reference, result->value, result->index, 1e-9),
              "");
  }

  // Finishes the request, which has reduced `count` elements, without an error; then everything
  // is back.
  void FinishExpectingCount(uint64_t count) {
    Finish();
    Drive();
    ASSERT_TRUE(answer_.has_value());
    ASSERT_TRUE(answer_->partial.ok()) << answer_->partial.status();
    EXPECT_EQ(answer_->partial->count, count);
    ExpectEverythingReturned();
  }

  // Every slot, the partial slot and the load are back.
  void ExpectEverythingReturned() {
    EXPECT_EQ(device_->staging().free_slots(), device_->staging().size());
    EXPECT_EQ(device_->partials_released(), 1);
    EXPECT_EQ(device_->requests(), 0);
    EXPECT_EQ(device_->load_bytes(), 0u);
  }

  static constexpr size_t kRangeBytes = 4099;

  gpureduce::Op op_ = gpureduce::Op::kSum;
  std::unique_ptr<FakeGpu> gpu_;
  std::unique_ptr<FakeSessionDevice> device_;
  std::unique_ptr<PieceScheduler> scheduler_;
  std::optional<absl::Status> consumed_;
  int consume_calls_ = 0;
  std::optional<Answer> answer_;
};

}  // namespace gpureduce::runtime
