// The session's scheduler on a fake device and GPU: every kind of input reaches the GPU in the
// right pieces and answers as a float64 reference does; a slow kernel's pieces run one at a time;
// timing and load are accounted; every slot, the partial slot and the load come back.
// Cancellation, failures and the small-request path: piece_scheduler_paths_test.cc.

#include "runtime/session/piece_scheduler.h"

#include <vector>

#include "tests/support/random_data.h"
#include "tests/unit/runtime/piece_scheduler_fixture.h"

namespace gpureduce::runtime {
namespace {

using gpureduce::Op;
using kernels::KernelId;
using Kind = PieceSource::Kind;

TEST_F(PieceSchedulerTest, AStreamOfMessagesAnswersAsTheReferenceDoes) {
  const uint64_t seed = testing::FreshSeed();
  SCOPED_TRACE(testing::SeedTrace(seed));
  for (Op op : {Op::kSum, Op::kArgMax, Op::kArgMin, Op::kSumSquares}) {
    SCOPED_TRACE(static_cast<int>(op));
    Open(Spec(op));
    const std::vector<float> data = testing::MixedSignData(45001 + 7 + 30011, seed);
    const std::span<const float> all(data);
    // A chunk of two whole slots and a remainder, a tiny one, then one of a slot and a half.
    size_t first = 0;
    for (size_t chunk : {45001, 7, 30011}) {
      scheduler_->ConsumePieces(Message(all.subspan(first, chunk)), Consumed());
      if (first == 0) {
        // A whole slot's copy goes to a copy thread: the caller's thread is back at once.
        EXPECT_FALSE(consumed_.has_value());
        EXPECT_EQ(device_->pending_copies(), 1u);
      }
      Drive();
      ASSERT_TRUE(consumed_.has_value());
      EXPECT_TRUE(consumed_->ok()) << *consumed_;
      first += chunk;
    }
    EXPECT_EQ(consume_calls_, 3);
    Finish();
    Drive();
    ExpectAnswerMatches(data);
    // Pieces of at most a slot, in order, each starting where the one before ended.
    uint64_t next = 0;
    for (const FakeGpu::QueuedPiece& queued : gpu_->pieces()) {
      EXPECT_EQ(queued.piece.index, next);
      EXPECT_EQ(queued.piece.first, next == 0);
      EXPECT_LE(queued.piece.count, kSlotFloats);
      EXPECT_EQ(queued.piece.source.kind,
                queued.piece.count <= kInlineStageFloats ? Kind::kMappedSlot : Kind::kStagedSlot);
      next += queued.piece.count;
    }
    EXPECT_EQ(next, data.size());
    EXPECT_EQ(gpu_->pieces().size(), 3u + 1u + 2u);
    ExpectEverythingReturned();
    consume_calls_ = 0;
  }
}

TEST_F(PieceSchedulerTest, StartAtShiftsTheIndicesOfTheNextConsume) {
  const uint64_t seed = testing::FreshSeed();
  SCOPED_TRACE(testing::SeedTrace(seed));
  Open(Spec(Op::kArgMax));
  const std::vector<float> data = testing::MixedSignData(3001, seed);
  scheduler_->StartAt(1000);
  scheduler_->ConsumePieces(Message(data), Consumed());
  Drive();
  ASSERT_TRUE(consumed_.has_value() && consumed_->ok());
  Finish();
  Drive();
  ASSERT_TRUE(answer_.has_value() && answer_->partial.ok());
  const testing::Reference reference = testing::ComputeReference(Op::kArgMax, data);
  EXPECT_EQ(answer_->partial->index, reference.index + 1000);
  ASSERT_EQ(gpu_->pieces().size(), 1u);
  EXPECT_EQ(gpu_->pieces()[0].piece.index, 1000u);
}

TEST_F(PieceSchedulerTest, ASharedHostRegionIsCopiedByTheGpuNotTheCpu) {
  const uint64_t seed = testing::FreshSeed();
  SCOPED_TRACE(testing::SeedTrace(seed));
  Open(Spec(Op::kArgMin));
  const std::vector<float> data = testing::MixedSignData(2 * kSlotFloats + 4099, seed);
  SharedSource source{.kind = SharedSource::Kind::kHost, .count = data.size()};
  source.pinned = reinterpret_cast<const std::byte*>(data.data());
  scheduler_->ConsumeShared(source, Consumed());
  EXPECT_EQ(device_->pending_copies(), 0u);
  Drive();
  ASSERT_TRUE(consumed_.has_value() && consumed_->ok()) << consumed_.value_or(absl::OkStatus());
  Finish();
  Drive();
  ExpectAnswerMatches(data);
  ASSERT_EQ(gpu_->pieces().size(), 3u);
  for (const FakeGpu::QueuedPiece& queued : gpu_->pieces()) {
    EXPECT_EQ(queued.piece.source.kind, Kind::kPinnedHost);
    EXPECT_EQ(reinterpret_cast<const float*>(queued.piece.source.data),
              data.data() + queued.piece.index);
  }
  ExpectEverythingReturned();
}

TEST_F(PieceSchedulerTest, DeviceMemoryIsReducedInPlaceInSinglePassLaunchesBeyondASlot) {
  const uint64_t seed = testing::FreshSeed();
  SCOPED_TRACE(testing::SeedTrace(seed));
  const std::vector<float> data = testing::MixedSignData(2 * kSlotFloats + 4099, seed);
  SharedSource source{.kind = SharedSource::Kind::kDevice, .count = data.size()};
  source.device_data = reinterpret_cast<const std::byte*>(data.data());
  source.device = 0;
  // single_pass's scratch does not grow with its input: one launch; CUB's is a slot's.
  for (const auto& [kernel, pieces] :
       {std::pair{KernelId::kSinglePass, size_t{1}}, std::pair{KernelId::kCub, size_t{3}}}) {
    Open(Spec(Op::kSum, kernel));
    scheduler_->ConsumeShared(source, Consumed());
    Drive();
    ASSERT_TRUE(consumed_.has_value() && consumed_->ok());
    Finish();
    Drive();
    ExpectAnswerMatches(data);
    ASSERT_EQ(gpu_->pieces().size(), pieces);
    for (const FakeGpu::QueuedPiece& queued : gpu_->pieces()) {
      EXPECT_EQ(queued.piece.source.kind, Kind::kDevice);
      EXPECT_EQ(reinterpret_cast<const float*>(queued.piece.source.data),
                data.data() + queued.piece.index);
    }
    EXPECT_EQ(device_->pending_copies(), 0u);
    ExpectEverythingReturned();
  }
}

TEST_F(PieceSchedulerTest, MemoryItCannotReadIsRefusedWithoutTakingASlot) {
  Open(Spec(Op::kSum));
  const std::vector<float> data(100, 1.5f);
  SharedSource elsewhere{.kind = SharedSource::Kind::kDevice, .count = data.size()};
  elsewhere.device_data = reinterpret_cast<const std::byte*>(data.data());
  elsewhere.device = 1;
  scheduler_->ConsumeShared(elsewhere, Consumed());
  ASSERT_TRUE(consumed_.has_value());
  EXPECT_EQ(*consumed_,
            absl::FailedPreconditionError("a request on GPU 0 cannot read memory on GPU 1"));
  SharedSource unpinned{.kind = SharedSource::Kind::kHost, .count = data.size()};
  scheduler_->ConsumeShared(unpinned, Consumed());
  ASSERT_TRUE(consumed_.has_value());
  EXPECT_EQ(*consumed_,
            absl::FailedPreconditionError(
                "a request on GPU 0 cannot read host memory that was not pinned for it"));
  EXPECT_TRUE(gpu_->pieces().empty());
  EXPECT_EQ(device_->staging().free_slots(), device_->staging().size());
}

TEST_F(PieceSchedulerTest, ASlowKernelsPiecesRunOneAtATimeAndItsConsumeEndsWithTheLast) {
  const uint64_t seed = testing::FreshSeed();
  SCOPED_TRACE(testing::SeedTrace(seed));
  // atomic_global's PROD is a compare-and-swap per element: launches of 4992 elements.
  const kernels::WorkBound bound = kernels::GetWorkBound(KernelId::kAtomicGlobal, Op::kProd);
  ASSERT_EQ(bound.elements_per_launch, 4992u);
  Open(Spec(Op::kProd, KernelId::kAtomicGlobal));
  const std::vector<float> data = testing::NearOneData(2 * 4992 + 2016, seed);
  scheduler_->ConsumePieces(Message(data), Consumed());
  for (size_t queued = 1; queued <= 3; ++queued) {
    ASSERT_EQ(gpu_->pieces().size(), queued);
    EXPECT_FALSE(consumed_.has_value()) << "the Consume ended before its last piece was done";
    ASSERT_TRUE(gpu_->RunNext());  // the piece
    EXPECT_EQ(gpu_->pieces().size(), queued) << "the next piece came before this one was done";
    ASSERT_TRUE(gpu_->RunNext());  // its callback: the next piece, or the end of the Consume
  }
  ASSERT_TRUE(consumed_.has_value());
  EXPECT_TRUE(consumed_->ok()) << *consumed_;
  EXPECT_EQ(gpu_->most_pieces_in_flight(), 1u);
  Finish();
  Drive();
  ExpectAnswerMatches(data);
  ExpectEverythingReturned();
}

TEST_F(PieceSchedulerTest, AFastKernelsPiecesFillEverySlotWithoutWaitingForTheGpu) {
  const uint64_t seed = testing::FreshSeed();
  SCOPED_TRACE(testing::SeedTrace(seed));
  Open(Spec(Op::kSum), /*slots=*/3);
  const std::vector<float> data = testing::MixedSignData(5 * kSlotFloats - 3, seed);
  scheduler_->ConsumePieces(Message(data), Consumed());
  while (device_->RunCopies()) {
  }
  EXPECT_EQ(gpu_->pieces().size(), 3u);
  EXPECT_EQ(device_->staging().free_slots(), 0u);
  EXPECT_EQ(device_->staging().waiting(), 1u);  // for the fourth piece's slot
  EXPECT_FALSE(consumed_.has_value());
  Drive();
  ASSERT_TRUE(consumed_.has_value() && consumed_->ok());
  EXPECT_EQ(gpu_->most_pieces_in_flight(), 3u);
  Finish();
  Drive();
  ExpectAnswerMatches(data);
  EXPECT_EQ(gpu_->callbacks_by_piece(), 5u) << "each piece's by its own event, none for Finish";
  // Each piece's copy and kernel, as the GPU timed them.
  const BackendTiming timing = scheduler_->timing();
  EXPECT_EQ(timing.h2d, 5 * FakeGpu::kCopyTime);
  EXPECT_EQ(timing.kernel, 5 * FakeGpu::kKernelTime);
  ExpectEverythingReturned();
}

TEST_F(PieceSchedulerTest, TheLastPiecesCallbackAnswersAFinishThatCameBeforeIt) {
  const uint64_t seed = testing::FreshSeed();
  SCOPED_TRACE(testing::SeedTrace(seed));
  Open(Spec(Op::kMax), /*slots=*/4);
  const std::vector<float> data = testing::MixedSignData(3 * kSlotFloats + 7, seed);
  scheduler_->ConsumePieces(Message(data), Consumed());
  while (device_->RunCopies()) {
  }
  ASSERT_TRUE(consumed_.has_value() && consumed_->ok());
  Finish();
  EXPECT_EQ(gpu_->queued_callbacks(), 4u) << "the pieces' only";
  gpu_->RunNext();  // a piece
  gpu_->RunNext();  // its callback
  EXPECT_FALSE(answer_.has_value()) << "three pieces still in flight";
  Drive();
  ExpectAnswerMatches(data);
  EXPECT_EQ(answer_->free_slots, device_->staging().size()) << "the last slot back first";
  ExpectEverythingReturned();
}

TEST_F(PieceSchedulerTest, ARequestCountsItsDeclaredSizeTowardsTheLoadUntilItIsDestroyed) {
  for (const auto& [size_hint, bytes] :
       {std::pair<uint64_t, uint64_t>{0, kSlotFloats * sizeof(float)},
        std::pair<uint64_t, uint64_t>{1001, 1001 * sizeof(float)},
        std::pair<uint64_t, uint64_t>{uint64_t{1} << 40,
                                      PieceScheduler::kMostLoadFloats * sizeof(float)}}) {
    RequestSpec spec = Spec(Op::kSum);
    spec.size_hint = size_hint;
    Open(spec);
    EXPECT_EQ(device_->requests(), 1);
    EXPECT_EQ(device_->load_bytes(), bytes);
    scheduler_.reset();  // never finished: its partial slot and load still come back
    EXPECT_EQ(device_->requests(), 0);
    EXPECT_EQ(device_->load_bytes(), 0u);
    EXPECT_EQ(device_->partials_released(), 1);
  }
}

TEST_F(PieceSchedulerTest, FinishWithoutAChunkAnswersTheEmptyPartial) {
  Open(Spec(Op::kSum));
  Finish();
  ASSERT_TRUE(answer_.has_value()) << "no work of its own in flight: at once";
  EXPECT_EQ(gpu_->queued(), 0u);
  ASSERT_TRUE(answer_->partial.ok());
  EXPECT_EQ(answer_->partial->count, 0u);
  EXPECT_EQ(answer_->partials_released, 1);  // before the answer
  EXPECT_EQ(answer_->requests, 0);
  ExpectEverythingReturned();
}

}  // namespace
}  // namespace gpureduce::runtime
