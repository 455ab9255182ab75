// The session's scheduler on a fake device and GPU, off the plain path: cancellation (and with it
// a passed deadline) while waiting for a slot, between a slow kernel's pieces and between chunks;
// a piece that fails on the GPU, a piece that cannot be queued, a device that cannot be made
// current; the small unary request answered on its caller's thread, or by the completions when
// its GPU is slow or its slot was not free. On every path every slot comes back.

#include <optional>
#include <vector>

#include "runtime/session/piece_scheduler.h"
#include "tests/support/random_data.h"
#include "tests/unit/runtime/piece_scheduler_fixture.h"

namespace gpureduce::runtime {
namespace {

using gpureduce::Op;
using kernels::KernelId;

constexpr GpuStatus kIllegalAddress = 700;  // cudaErrorIllegalAddress

TEST_F(PieceSchedulerTest, CancelEndsTheWaitForASlot) {
  Open(Spec(Op::kSum), /*slots=*/1);
  const std::vector<float> data = testing::MixedSignData(2 * kSlotFloats, testing::FreshSeed());
  scheduler_->ConsumePieces(Message(data), Consumed());
  device_->RunCopies();  // the first piece is queued; the second waits for the one slot
  ASSERT_EQ(device_->staging().waiting(), 1u);
  scheduler_->Cancel();
  ASSERT_TRUE(consumed_.has_value());
  EXPECT_EQ(*consumed_, absl::CancelledError("the call was cancelled (or its deadline passed) "
                                             "while waiting for a GPU staging buffer"));
  EXPECT_EQ(device_->staging().waiting(), 0u);
  EXPECT_EQ(gpu_->pieces().size(), 1u);
  EXPECT_EQ(consume_calls_, 1);
  FinishExpectingCount(kSlotFloats);  // the piece queued before the cancel
}

TEST_F(PieceSchedulerTest, CancelStopsASlowKernelAfterThePieceInFlight) {
  Open(Spec(Op::kProd, KernelId::kAtomicGlobal));
  const std::vector<float> data = testing::NearOneData(3 * 4992, testing::FreshSeed());
  scheduler_->ConsumePieces(Message(data), Consumed());
  ASSERT_TRUE(gpu_->RunNext());  // the first piece
  scheduler_->Cancel();          // say its deadline passed
  ASSERT_TRUE(gpu_->RunNext());  // its callback: no next piece
  ASSERT_TRUE(consumed_.has_value());
  EXPECT_EQ(*consumed_, absl::CancelledError("the request was cancelled or its deadline passed; "
                                             "its GPU work stopped after 4992 elements"));
  EXPECT_EQ(gpu_->pieces().size(), 1u);
  FinishExpectingCount(4992u);
}

TEST_F(PieceSchedulerTest, CancelDuringACopyStopsAFastKernelAfterThatPieceWithoutAWait) {
  Open(Spec(Op::kSum), /*slots=*/2);
  PieceSlot* taken = device_->staging().TryAcquire();  // another request's
  const std::vector<float> data = testing::MixedSignData(3 * kSlotFloats, testing::FreshSeed());
  scheduler_->ConsumePieces(Message(data), Consumed());
  ASSERT_EQ(device_->pending_copies(), 1u);
  scheduler_->Cancel();  // the deadline passes while the copy thread stages the first piece
  device_->RunCopies();
  // No slot is free, and none is waited for.
  EXPECT_EQ(device_->staging().waiting(), 0u);
  ASSERT_TRUE(consumed_.has_value());
  EXPECT_EQ(*consumed_, absl::CancelledError("the request was cancelled or its deadline passed; "
                                             "its GPU work stopped after 20000 elements"));
  EXPECT_EQ(gpu_->pieces().size(), 1u);
  device_->staging().Release(taken);
  FinishExpectingCount(kSlotFloats);
}

TEST_F(PieceSchedulerTest, CancelBetweenChunksStopsTheNextAtItsFirstSlot) {
  Open(Spec(Op::kSum));
  const std::vector<float> data = testing::MixedSignData(2000, testing::FreshSeed());
  const std::span<const float> all(data);
  scheduler_->ConsumePieces(Message(all.first(1000)), Consumed());
  Drive();
  ASSERT_TRUE(consumed_.has_value() && consumed_->ok());
  scheduler_->Cancel();  // no wait to end: the next chunk sees it once it has a slot
  scheduler_->ConsumePieces(Message(all.last(1000)), Consumed());
  ASSERT_TRUE(consumed_.has_value());
  EXPECT_EQ(*consumed_, absl::CancelledError("the request was cancelled or its deadline passed; "
                                             "its GPU work stopped after 1000 elements"));
  EXPECT_EQ(gpu_->pieces().size(), 1u);
  EXPECT_EQ(device_->staging().free_slots(), device_->staging().size());
  FinishExpectingCount(1000u);
}

TEST_F(PieceSchedulerTest, APieceThatFailsOnTheGpuStopsTheRequestWithItsError) {
  Open(Spec(Op::kSum), /*slots=*/1);
  const std::vector<float> data = testing::MixedSignData(4 * kSlotFloats, testing::FreshSeed());
  scheduler_->ConsumePieces(Message(data), Consumed());
  gpu_->FailNextPiece(kIllegalAddress);
  Drive();
  ASSERT_TRUE(consumed_.has_value());
  EXPECT_EQ(*consumed_, absl::InternalError("fake stream error 700 in a staged chunk"));
  EXPECT_LT(gpu_->pieces().size(), 4u) << "pieces went on after the failure";
  ASSERT_FALSE(device_->stream_errors().empty());
  EXPECT_EQ(device_->stream_errors().front(), kIllegalAddress);
  Finish();
  Drive();
  ASSERT_TRUE(answer_.has_value());
  EXPECT_EQ(answer_->partial.status(),
            absl::InternalError("fake stream error 700 in a staged chunk"));
  ExpectEverythingReturned();
}

TEST_F(PieceSchedulerTest, APieceThatCannotBeQueuedGivesItsSlotBackAfterTheStream) {
  Open(Spec(Op::kSum));
  const std::vector<float> data = testing::MixedSignData(1000, testing::FreshSeed());
  gpu_->FailNextQueue(absl::InternalError("queue failed"));
  scheduler_->ConsumePieces(Message(data), Consumed());
  ASSERT_TRUE(consumed_.has_value());
  EXPECT_EQ(*consumed_, absl::InternalError("queue failed"));
  ASSERT_EQ(device_->errors().size(), 1u);
  EXPECT_EQ(device_->errors()[0], absl::InternalError("queue failed"));
  // What was queued before the failure may still read the slot.
  EXPECT_EQ(device_->staging().free_slots(), device_->staging().size() - 1);
  Drive();
  EXPECT_EQ(device_->staging().free_slots(), device_->staging().size());
  // Its callback has run, but Finish does not answer on its own thread, where it could overlap
  // the end of a callback on the completion thread (the piece counted no elements).
  Finish();
  EXPECT_FALSE(answer_.has_value());
  EXPECT_EQ(gpu_->queued_callbacks(), 1u) << "posted";
  Drive();
  ASSERT_TRUE(answer_.has_value());
  ASSERT_TRUE(answer_->partial.ok()) << answer_->partial.status();
  EXPECT_EQ(answer_->partial->count, 0u);
  ExpectEverythingReturned();
}

TEST_F(PieceSchedulerTest, AFinishFromAPacedConsumesEndAnswersAfterTheCallbackThatEndedIt) {
  // A server finishes on the Consume's `done`, which a paced Consume runs from its last piece's
  // callback: the answer, whose `done` here destroys the scheduler (as a server's may), comes
  // after that callback has returned (ASan would see a use after free otherwise).
  const uint64_t seed = testing::FreshSeed();
  SCOPED_TRACE(testing::SeedTrace(seed));
  Open(Spec(Op::kProd, KernelId::kAtomicGlobal));
  const std::vector<float> data = testing::NearOneData(2 * 4992 + 7, seed);
  int answers = 0;
  std::optional<absl::StatusOr<gpureduce::Partial>> partial;
  scheduler_->ConsumePieces(Message(data), [&](absl::Status status) {
    ASSERT_TRUE(status.ok()) << status;
    scheduler_->Finish([&](absl::StatusOr<gpureduce::Stats> stats) {
      ++answers;
      partial = gpureduce::testing::ClassicPartial(Op::kProd, stats);
      scheduler_.reset();
    });
  });
  Drive();
  EXPECT_EQ(answers, 1);
  EXPECT_EQ(scheduler_, nullptr);
  ASSERT_TRUE(partial.has_value() && partial->ok());
  EXPECT_EQ((*partial)->count, data.size());
  EXPECT_EQ(device_->staging().free_slots(), device_->staging().size());
  EXPECT_EQ(device_->partials_released(), 1);
}

TEST_F(PieceSchedulerTest, AFinishBeforeAFailedPiecesCallbackIsAnsweredByIt) {
  Open(Spec(Op::kSum));
  const std::vector<float> data = testing::MixedSignData(1000, testing::FreshSeed());
  gpu_->FailNextQueue(absl::InternalError("queue failed"));
  scheduler_->ConsumePieces(Message(data), Consumed());
  ASSERT_TRUE(consumed_.has_value());
  Finish();
  EXPECT_FALSE(answer_.has_value());
  EXPECT_EQ(gpu_->queued_callbacks(), 1u) << "the piece's only";
  Drive();
  ASSERT_TRUE(answer_.has_value());
  ExpectEverythingReturned();
}

TEST_F(PieceSchedulerTest, ADeviceThatCannotBeMadeCurrentFailsTheRequestAndFreesTheSlotAtOnce) {
  Open(Spec(Op::kSum));
  const std::vector<float> data = testing::MixedSignData(1000, testing::FreshSeed());
  const absl::Status lost = absl::InternalError("cudaErrorLaunchFailure in cudaSetDevice");
  device_->set_activate(lost);
  scheduler_->ConsumePieces(Message(data), Consumed());
  ASSERT_TRUE(consumed_.has_value());
  EXPECT_EQ(*consumed_, lost);
  EXPECT_EQ(device_->staging().free_slots(), device_->staging().size());
  EXPECT_TRUE(gpu_->pieces().empty());
  Finish();
  Drive();
  ASSERT_TRUE(answer_.has_value());
  EXPECT_EQ(answer_->partial.status(), lost);
  EXPECT_EQ(device_->errors().size(), 2u);  // the Consume's and Finish's
  ExpectEverythingReturned();
}

RequestSpec SmallUnary() {
  RequestSpec spec{Op::kSum, KernelId::kSinglePass, 0, 0};
  spec.one_message = true;
  spec.size_hint = 1000;
  return spec;
}

TEST_F(PieceSchedulerTest, ASmallUnaryRequestIsAnsweredOnItsCallersThread) {
  const uint64_t seed = testing::FreshSeed();
  SCOPED_TRACE(testing::SeedTrace(seed));
  Open(SmallUnary());
  gpu_->set_done_when_polled(true);
  const std::vector<float> data = testing::MixedSignData(1000, seed);
  scheduler_->ConsumePieces(Message(data), Consumed());
  ASSERT_TRUE(consumed_.has_value() && consumed_->ok());
  EXPECT_EQ(gpu_->queued_callbacks(), 0u) << "its piece has a completion callback";
  Finish();  // no Drive: the answer comes before Finish returns
  ExpectAnswerMatches(data);
  // The partial slot and the load go back before the answer, the staging slot after it.
  EXPECT_EQ(answer_->partials_released, 1);
  EXPECT_EQ(answer_->requests, 0);
  EXPECT_EQ(answer_->free_slots, device_->staging().size() - 1);
  EXPECT_EQ(gpu_->queued(), 0u);
  // The kernel read the pinned buffer itself: no copy to time.
  ASSERT_EQ(gpu_->pieces().size(), 1u);
  EXPECT_FALSE(gpu_->pieces()[0].time_copy);
  EXPECT_EQ(scheduler_->timing().h2d, std::chrono::nanoseconds(0));
  EXPECT_EQ(scheduler_->timing().kernel, FakeGpu::kKernelTime);
  ExpectEverythingReturned();
}

TEST_F(PieceSchedulerTest, ASmallUnaryRequestOnASlowGpuIsAnsweredByTheCompletionsInOrder) {
  const uint64_t seed = testing::FreshSeed();
  SCOPED_TRACE(testing::SeedTrace(seed));
  Open(SmallUnary());
  const std::vector<float> data = testing::MixedSignData(1000, seed);
  scheduler_->ConsumePieces(Message(data), Consumed());
  ASSERT_TRUE(consumed_.has_value() && consumed_->ok());
  Finish();  // waits kSmallRequestWait for the piece, then hands over
  EXPECT_FALSE(answer_.has_value());
  EXPECT_EQ(gpu_->queued_callbacks(), 1u);  // the piece's, which answers
  EXPECT_EQ(gpu_->callbacks_by_piece(), 1u) << "by the piece's own event";
  Drive();
  ExpectAnswerMatches(data);
  EXPECT_EQ(answer_->free_slots, device_->staging().size()) << "the answer came before the piece";
  EXPECT_FALSE(gpu_->pieces()[0].time_copy);
  ExpectEverythingReturned();
}

TEST_F(PieceSchedulerTest, ASmallUnaryRequestThatWaitedForItsSlotIsAnsweredByTheCompletions) {
  const uint64_t seed = testing::FreshSeed();
  SCOPED_TRACE(testing::SeedTrace(seed));
  Open(SmallUnary(), /*slots=*/1);
  gpu_->set_done_when_polled(true);
  PieceSlot* taken = device_->staging().TryAcquire();  // another request's
  ASSERT_NE(taken, nullptr);
  const std::vector<float> data = testing::MixedSignData(1000, seed);
  scheduler_->ConsumePieces(Message(data), Consumed());
  EXPECT_FALSE(consumed_.has_value());
  device_->staging().Release(taken);  // the slot comes on this thread, not the caller's
  ASSERT_TRUE(consumed_.has_value() && consumed_->ok());
  EXPECT_EQ(gpu_->queued_callbacks(), 1u);  // its piece's
  Finish();
  EXPECT_FALSE(answer_.has_value());
  Drive();
  ExpectAnswerMatches(data);
  EXPECT_TRUE(gpu_->pieces()[0].time_copy);
  EXPECT_EQ(scheduler_->timing().h2d, FakeGpu::kCopyTime);
  ExpectEverythingReturned();
}

TEST_F(PieceSchedulerTest, ASmallUnaryRequestWithASlowKernelIsNeverWaitedForInline) {
  RequestSpec spec = SmallUnary();
  spec.op = Op::kProd;
  spec.kernel = KernelId::kAtomicGlobal;  // paced
  Open(spec);
  gpu_->set_done_when_polled(true);
  const std::vector<float> data = testing::NearOneData(1000, testing::FreshSeed());
  scheduler_->ConsumePieces(Message(data), Consumed());
  Drive();
  ASSERT_TRUE(consumed_.has_value() && consumed_->ok());
  EXPECT_TRUE(gpu_->pieces()[0].time_copy);
  Finish();
  EXPECT_FALSE(answer_.has_value()) << "posted to the completions, not waited for inline";
  EXPECT_EQ(gpu_->queued_callbacks(), 1u) << "the answer, posted: its piece is done";
  Drive();
  ExpectAnswerMatches(data);
  ExpectEverythingReturned();
}

}  // namespace
}  // namespace gpureduce::runtime
