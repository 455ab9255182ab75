// The GPU's array kernels (kernels::cuda::ReduceSegmentsInto and ReduceColumnsInto) directly, no
// runtime: every op of every dtype, in the two requests that pick their two instantiations (every
// op but the products; every op), each segment's and column's Stats copied back and finalized
// (FinalizeOp) against the independent reference (tests/unit/kernels/stats_reference.h) of its
// own elements. Segments: lengths 0, 1, 2, 31, 1023 and a few of 5,000 and 300,000 (both kernels
// of the policy), NaN at segments' first, middle and last elements; 600,000 short segments (more
// than one grid's warps: the grid-stride loops), a sample of them checked. Columns: tables of 1,
// 5 and 4,097 rows in the chunks ColumnChunksFor picks, 5 rows asked in 4 chunks, a base row.
// Without a GPU every test skips.

#include <cuda_runtime_api.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/reduction/op_name.h"
#include "common/reduction/op_result.h"
#include "common/reduction/stats.h"
#include "gtest/gtest.h"
#include "kernels/reduce.h"
#include "tests/gpu/kernel_fixture.h"
#include "tests/support/random_data.h"
#include "tests/unit/kernels/stats_reference.h"
#include "tests/unit/kernels/typed_array.h"

namespace gpureduce::kernels::cuda {
namespace {

using testing::TypedArray;

// Elements `members` of `array`, as an array of their own.
TypedArray Pick(const TypedArray& array, const std::vector<uint64_t>& members) {
  std::vector<double> values;
  std::vector<int64_t> ints;
  for (uint64_t e : members) {
    values.push_back(array.values[e]);
    if (IsInteger(array.dtype)) ints.push_back(array.ints[e]);
  }
  return IsInteger(array.dtype) ? testing::FromInts(array.dtype, ints)
                                : testing::FromValues(array.dtype, values);
}

std::vector<Op> AllBut(bool products) {
  std::vector<Op> ops;
  for (Op op : kAllOps) {
    if (products || (op != Op::kProd && op != Op::kNanProd)) ops.push_back(op);
  }
  return ops;
}

class SegmentedStatsTest : public testing::KernelFixture,
                           public ::testing::WithParamInterface<DType> {
 protected:
  void SetUp() override {
    KernelFixture::SetUp();  // skips without a GPU
    if (IsSkipped() || HasFatalFailure()) return;
    seed_ = testing::FreshSeed();
  }
  void TearDown() override {
    for (void* p : allocations_) cudaFree(p);
    KernelFixture::TearDown();
  }

  template <typename T>
  T* Device(std::span<const T> host, size_t extra = 0) {
    void* p = nullptr;
    EXPECT_EQ(cudaMalloc(&p, host.size_bytes() + extra * sizeof(T) + 16), cudaSuccess);
    allocations_.push_back(p);
    if (!host.empty()) {
      EXPECT_EQ(cudaMemcpy(p, host.data(), host.size_bytes(), cudaMemcpyHostToDevice), cudaSuccess);
    }
    return static_cast<T*>(p);
  }

  std::vector<Stats> Read(const Stats* d_stats, size_t count) {
    std::vector<Stats> out(count);
    EXPECT_EQ(cudaStreamSynchronize(stream_), cudaSuccess);
    EXPECT_EQ(cudaMemcpy(out.data(), d_stats, count * sizeof(Stats), cudaMemcpyDeviceToHost),
              cudaSuccess);
    return out;
  }

  // Every op of `ops` of `stats` against the reference of `own`; failures counted and shown.
  void Check(const std::vector<Op>& ops, const Stats& stats, const TypedArray& own,
             const std::string& what) {
    for (Op op : ops) {
      const std::string error = testing::CheckResult(testing::ReferenceOf(op, own, 1),
                                                     FinalizeOp(op, own.dtype, 1, stats));
      if (!error.empty() && ++failures_ <= 20)
        ADD_FAILURE() << what << " " << OpName(op) << ": " << error;
    }
  }

  uint64_t seed_ = 0;
  int failures_ = 0;
  std::vector<void*> allocations_;
};

TEST_P(SegmentedStatsTest, EverySegmentOfEveryLengthMatchesTheReference) {
  const DType dtype = GetParam();
  SCOPED_TRACE(testing::SeedTrace(seed_));
  std::mt19937_64 random(seed_);
  // Segments 6 and 7 (5,000 and 300,000) also go alone below, to the block-per-segment kernel.
  std::vector<uint64_t> lengths = {0, 1, 2, 0, 31, 1023, 5000, 300000};
  for (int i = 0; i < 2000; ++i) lengths.push_back(random() % 7 == 0 ? 0 : random() % 40);
  std::vector<uint64_t> bounds = {0};
  for (uint64_t length : lengths) bounds.push_back(bounds.back() + length);
  TypedArray array = testing::RandomArray(dtype, bounds.back(), random());
  for (size_t s = 0; s < lengths.size() && !IsInteger(dtype); s += 5) {
    if (lengths[s] < 3) continue;
    const uint64_t at[] = {bounds[s], bounds[s] + lengths[s] / 2, bounds[s + 1] - 1};
    array.Set(at[s % 3], NAN);
  }
  const std::byte* d_in = Device<std::byte>(array.bytes);
  const uint64_t* d_bounds = Device<uint64_t>(bounds);
  Stats* d_out = Device<Stats>(std::span<const Stats>(), lengths.size());
  // The mean length picks the kernel: a warp per segment for them all, a block per segment for
  // the two long ones alone.
  for (bool products : {false, true}) {
    const std::vector<Op> ops = AllBut(products);
    ASSERT_EQ(ReduceSegmentsInto(stream_, dtype, NeedsOf(ops), d_in, d_bounds, lengths.size(),
                                 bounds.back(), d_out),
              cudaSuccess);
    const std::vector<Stats> got = Read(d_out, lengths.size());
    for (size_t s = 0; s < lengths.size(); ++s) {
      std::vector<uint64_t> members;
      for (uint64_t e = bounds[s]; e < bounds[s + 1]; ++e) members.push_back(e);
      Check(ops, got[s], Pick(array, members), absl::StrCat("segment ", s, " of ", lengths[s]));
    }
    const std::vector<uint64_t> tail = {0, 5000, 5000 + 300000};
    ASSERT_EQ(ReduceSegmentsInto(stream_, dtype, NeedsOf(ops), d_in + bounds[6] * DTypeSize(dtype),
                                 Device<uint64_t>(tail), 2, tail.back(), d_out),
              cudaSuccess);
    const std::vector<Stats> long_ones = Read(d_out, 2);
    for (size_t s = 0; s < 2; ++s) {
      std::vector<uint64_t> members;
      for (uint64_t e = bounds[6] + tail[s]; e < bounds[6] + tail[s + 1]; ++e) members.push_back(e);
      Check(ops, long_ones[s], Pick(array, members), absl::StrCat("long segment ", s));
    }
  }
}

TEST_P(SegmentedStatsTest, MoreSegmentsThanOneGridHolds) {
  const DType dtype = GetParam();
  SCOPED_TRACE(testing::SeedTrace(seed_));
  constexpr uint64_t kSegments = 600000;  // the grid holds 65,535 blocks of 8 warps
  std::vector<uint64_t> bounds = {0};
  for (uint64_t s = 0; s < kSegments; ++s) bounds.push_back(bounds.back() + 1 + s % 3);
  const TypedArray array = testing::RandomArray(dtype, bounds.back(), seed_);
  const std::vector<Op> ops = AllBut(false);
  Stats* d_out = Device<Stats>(std::span<const Stats>(), kSegments);
  ASSERT_EQ(ReduceSegmentsInto(stream_, dtype, NeedsOf(ops), Device<std::byte>(array.bytes),
                               Device<uint64_t>(bounds), kSegments, bounds.back(), d_out),
            cudaSuccess);
  const std::vector<Stats> got = Read(d_out, kSegments);
  for (uint64_t s = 0; s < kSegments; s += 997) {
    std::vector<uint64_t> members;
    for (uint64_t e = bounds[s]; e < bounds[s + 1]; ++e) members.push_back(e);
    Check(ops, got[s], Pick(array, members), absl::StrCat("segment ", s));
  }
  EXPECT_EQ(got.back().count, bounds[kSegments] - bounds[kSegments - 1]);
}

TEST_P(SegmentedStatsTest, EveryColumnInEveryChunkingMatchesTheReference) {
  const DType dtype = GetParam();
  SCOPED_TRACE(testing::SeedTrace(seed_));
  struct Table {
    uint64_t rows, cols;
    uint32_t chunks;  // 0: ColumnChunksFor's
  };
  const Table tables[] = {{1, 300, 0}, {5, 7, 4}, {5, 300, 0}, {4097, 3, 0}, {4097, 257, 0}};
  constexpr uint64_t kBaseRow = 1000;
  for (const Table& table : tables) {
    const std::string what = absl::StrCat("(", table.rows, ", ", table.cols, ")");
    TypedArray array = testing::RandomArray(dtype, table.rows * table.cols, seed_ + table.rows);
    if (!IsInteger(dtype)) array.Set(table.cols / 2 + table.cols * (table.rows / 2), NAN);
    const uint32_t chunks = table.chunks != 0
                                ? table.chunks
                                : ColumnChunksFor(table.rows, table.cols, gpu_, uint64_t{1} << 20);
    Stats* d_partials = Device<Stats>(std::span<const Stats>(), uint64_t{chunks} * table.cols);
    Stats* d_out = Device<Stats>(std::span<const Stats>(), table.cols);
    const std::byte* d_in = Device<std::byte>(array.bytes);
    for (bool products : {false, true}) {
      const std::vector<Op> ops = AllBut(products);
      ASSERT_EQ(ReduceColumnsInto(stream_, dtype, NeedsOf(ops), d_in, table.rows, table.cols,
                                  kBaseRow, chunks, d_partials, d_out),
                cudaSuccess)
          << what;
      std::vector<Stats> got = Read(d_out, table.cols);
      for (uint64_t c = 0; c < table.cols; ++c) {
        Stats& stats = got[c];
        EXPECT_EQ(stats.count, table.rows) << what << " column " << c;
        // Indices count from the base row: the reference counts from 0.
        for (int64_t* index : {&stats.first_nan, &stats.min_index, &stats.max_index}) {
          if (*index < 0) continue;
          EXPECT_GE(*index, static_cast<int64_t>(kBaseRow)) << what << " column " << c;
          *index -= kBaseRow;
        }
        std::vector<uint64_t> members;
        for (uint64_t r = 0; r < table.rows; ++r) members.push_back(r * table.cols + c);
        Check(ops, stats, Pick(array, members), absl::StrCat(what, " column ", c));
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(EveryDType, SegmentedStatsTest, ::testing::ValuesIn(kAllDTypes),
                         [](const auto& info) { return std::string(DTypeName(info.param)); });

}  // namespace
}  // namespace gpureduce::kernels::cuda
