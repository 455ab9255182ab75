// ReduceSegments (kernels/reduce.h): every segment of every dtype against the independent
// reference, at lengths 0, 1, 2, 31 and across the fixed tasks, NaN and ties placed per segment.

#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <future>
#include <limits>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/reduction/answer_encoding.h"
#include "common/reduction/op_name.h"
#include "common/reduction/op_result.h"
#include "gtest/gtest.h"
#include "kernels/cpu/block_reduce.h"
#include "kernels/reduce.h"
#include "tests/support/random_data.h"
#include "tests/unit/kernels/stats_reference.h"
#include "tests/unit/kernels/typed_array.h"

namespace gpureduce::kernels::cpu {
namespace {

using testing::TypedArray;

// Elements [from, to) of `array` as an array of their own.
TypedArray Slice(const TypedArray& array, size_t from, size_t to) {
  if (IsInteger(array.dtype)) {
    return testing::FromInts(array.dtype,
                             std::span<const int64_t>(array.ints).subspan(from, to - from));
  }
  return testing::FromValues(array.dtype,
                             std::span<const double>(array.values).subspan(from, to - from));
}

// Every op but the products: short float segments then go through the columns pass (NaN-padded
// side by side), not ReduceBlock.
std::vector<Op> OpsButProducts() {
  std::vector<Op> ops;
  for (Op op : kAllOps) {
    if (op != Op::kProd && op != Op::kNanProd) ops.push_back(op);
  }
  return ops;
}

// Every op of `ops` (one request) of every segment against the reference of that segment alone;
// the failures, one a line (at most 20).
std::string CheckSegments(ThreadPool& pool, const TypedArray& array,
                          const std::vector<uint64_t>& bounds, std::span<const Op> ops = kAllOps) {
  const std::vector<Stats> segments =
      ReduceSegments(pool, {array.dtype, NeedsOf(ops)}, array.bytes, bounds);
  if (segments.size() + 1 != bounds.size()) return "wrong segment count\n";
  std::string failures;
  int shown = 0;
  for (size_t s = 0; s < segments.size() && shown < 20; ++s) {
    const TypedArray own = Slice(array, bounds[s], bounds[s + 1]);
    for (Op op : ops) {
      const std::string error = testing::CheckResult(testing::ReferenceOf(op, own, 1),
                                                     FinalizeOp(op, array.dtype, 1, segments[s]));
      if (error.empty()) continue;
      failures += "segment " + std::to_string(s) + " [" + std::to_string(bounds[s]) + ", " +
                  std::to_string(bounds[s + 1]) + ") " + std::string(OpName(op)) + ": " + error +
                  "\n";
      ++shown;
    }
  }
  return failures;
}

// Segment lengths of every kind: empty, 1, 2, 31, a few hundred, and some longer than a task,
// drawn from `seed`, until they cover n elements.
std::vector<uint64_t> MixedBounds(size_t n, size_t task, uint64_t seed) {
  const size_t lengths[] = {0, 1, 2, 16, 31, 128, 300, 1000, task + 3, 2 * task + 1};
  std::vector<uint64_t> bounds = {0};
  uint64_t state = seed | 1;
  while (bounds.back() < n) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    const size_t pick = (state >> 33) % 64;
    const size_t length = pick < 56 ? lengths[pick % 6] : lengths[6 + pick % 2];
    bounds.push_back(std::min<uint64_t>(n, bounds.back() + length));
  }
  return bounds;
}

// With a sink over `data` (which begins `base` elements into what `bounds` count): every
// segment sunk once, with `returned`'s answers bit for bit; the differences, one a line.
std::string SinkDiffers(ThreadPool& pool, const StatsRequest& request, std::span<const Op> ops,
                        std::span<const std::byte> data, std::span<const uint64_t> bounds,
                        uint64_t base, const std::vector<Stats>& returned) {
  std::vector<Stats> sunk(bounds.size() - 1);
  std::vector<int> times(bounds.size() - 1, 0);
  std::mutex mu;
  std::promise<size_t> finished;
  ReduceSegmentsAsync(
      pool, request, data, bounds, base,
      [&](uint64_t first, std::span<const Stats> stats) {
        std::lock_guard<std::mutex> lock(mu);
        for (size_t i = 0; i < stats.size(); ++i) {
          sunk[first + i] = stats[i];
          ++times[first + i];
        }
      },
      [&](std::vector<Stats> rest, ReduceTiming) { finished.set_value(rest.size()); });
  std::string failures;
  if (finished.get_future().get() != 0) failures += "a sink takes them all, none returned\n";
  for (size_t s = 0; s < sunk.size() && failures.size() < 2000; ++s) {
    if (times[s] != 1) failures += absl::StrCat("segment ", s, " sunk ", times[s], " times\n");
    for (Op op : ops) {
      const absl::StatusOr<OpResult> a = FinalizeOp(op, request.dtype, 1, sunk[s]);
      const absl::StatusOr<OpResult> b = FinalizeOp(op, request.dtype, 1, returned[s]);
      const bool same = a.ok() == b.ok() &&
                        (!a.ok() || ((std::memcmp(&a->value, &b->value, sizeof(double)) == 0 ||
                                      (std::isnan(a->value) && std::isnan(b->value))) &&
                                     a->index == b->index && a->int_value == b->int_value));
      if (!same) failures += absl::StrCat("segment ", s, " ", OpName(op), " differs\n");
    }
  }
  return failures;
}

// With a sink and DirectAnswers for `ops` (ddof 1): every segment's answer bytes of each op,
// whether the short runs pass wrote them or the sink's Stats did (through EncodeAnswers, as the
// runtime), equal EncodeAnswers's over `returned`; with `some_direct`, where the pass has vectors
// (the AVX-512 copy) and the ops answer there, some segments skip the sink. The answers that
// left int64 are counted once each, by the pass (its counters) or the sink. The differences, one
// a line.
std::string DirectDiffers(ThreadPool& pool, DType dtype, const std::vector<Op>& ops,
                          std::span<const std::byte> data, std::span<const uint64_t> bounds,
                          uint64_t base, const std::vector<Stats>& returned, bool some_direct) {
  const size_t segments = bounds.size() - 1;
  std::vector<std::vector<std::byte>> got(ops.size());
  std::vector<std::atomic<uint64_t>> counted(ops.size());
  DirectAnswers direct;
  direct.ddof = 1;
  for (size_t k = 0; k < ops.size(); ++k) {
    got[k].assign(segments * DTypeSize(ResultDType(ops[k], dtype)), std::byte{0xa5});
    direct.Add(ops[k], got[k].data(), &counted[k]);
  }
  std::atomic<size_t> sunk{0};
  std::promise<void> finished;
  ReduceSegmentsAsync(
      pool, {dtype, NeedsOf(ops)}, data, bounds, base,
      [&](uint64_t first, std::span<const Stats> stats) {
        sunk += stats.size();
        for (size_t k = 0; k < ops.size(); ++k) {
          const size_t size = DTypeSize(ResultDType(ops[k], dtype));
          for (size_t i = 0; i < stats.size(); ++i) {
            counted[k] += EncodeAnswers(ops[k], dtype, 1, stats.subspan(i, 1),
                                        got[k].data() + (first + i) * size)
                              .overflows;
          }
        }
      },
      [&](std::vector<Stats>, ReduceTiming) { finished.set_value(); }, direct);
  finished.get_future().get();
  std::string failures;
  for (size_t k = 0; k < ops.size(); ++k) {
    const size_t size = DTypeSize(ResultDType(ops[k], dtype));
    uint64_t overflows = 0;
    for (size_t s = 0; s < segments && failures.size() < 2000; ++s) {
      std::vector<std::byte> want(size);
      const EncodedAnswers answers =
          EncodeAnswers(ops[k], dtype, 1, std::span(&returned[s], 1), want.data());
      if (!answers.status.ok()) continue;
      overflows += answers.overflows;
      if (std::memcmp(got[k].data() + s * size, want.data(), size) != 0) {
        failures += absl::StrCat("segment ", s, " ", OpName(ops[k]), ": its bytes differ\n");
      }
    }
    if (failures.empty() && counted[k].load() != overflows) {
      absl::StrAppend(&failures, OpName(ops[k]), ": ", counted[k].load(),
                      " answers counted as leaving int64 of ", overflows, "\n");
    }
  }
  const bool vectors = RunnablePasses().size() == 3 && (!NeedsOf(ops).prod || ops.size() == 1);
  if (some_direct && vectors && sunk.load() == segments)
    failures += "no segment answered by the pass\n";
  return failures;
}

// n random elements of `dtype`, 50 of them NaN where it has NaN.
TypedArray WithNans(DType dtype, size_t n, uint64_t seed) {
  TypedArray array = testing::RandomArray(dtype, n, seed);
  if (!IsInteger(dtype)) {
    for (size_t k = 0; k < 50; ++k) array.Set((seed + k * 7919) % n, NAN);
  }
  return array;
}

class SegmentedReduceTest : public ::testing::TestWithParam<DType> {
 protected:
  ThreadPool pool_{4};
};

TEST_P(SegmentedReduceTest, EverySegmentMatchesItsReference) {
  const DType dtype = GetParam();
  const size_t n = 3 * TaskElements(dtype) + 777;
  const uint64_t seed = testing::FreshSeed();
  SCOPED_TRACE(testing::SeedTrace(seed));
  TypedArray array = testing::RandomArray(dtype, n, seed);
  const std::vector<uint64_t> bounds = MixedBounds(n, TaskElements(dtype), seed);
  if (!IsInteger(dtype)) {
    // NaN at some segments' first, middle and last element; ties elsewhere.
    for (size_t s = 0; s + 1 < bounds.size(); s += 7) {
      const uint64_t from = bounds[s], to = bounds[s + 1];
      if (from == to) continue;
      const uint64_t at[] = {from, from + (to - from) / 2, to - 1};
      array.Set(at[s % 3], std::numeric_limits<double>::quiet_NaN());
    }
  }
  for (size_t s = 3; s + 1 < bounds.size(); s += 11) {
    if (bounds[s + 1] - bounds[s] < 4) continue;
    const size_t last = bounds[s + 1] - 1;
    if (IsInteger(dtype)) {
      array.SetInt(last, array.ints[bounds[s] + 1]);
    } else if (!std::isnan(array.values[bounds[s] + 1]) && !std::isnan(array.values[last])) {
      array.Set(last, array.values[bounds[s] + 1]);
    }
  }
  EXPECT_EQ(CheckSegments(pool_, array, bounds), "");
  EXPECT_EQ(CheckSegments(pool_, array, bounds, OpsButProducts()), "");
  const Op sums[] = {Op::kSum, Op::kMean, Op::kNanSum, Op::kNanMean};  // the pass's sums alone
  EXPECT_EQ(CheckSegments(pool_, array, bounds, sums), "");
}

TEST_P(SegmentedReduceTest, OneSegmentIsTheWholeReduction) {
  const DType dtype = GetParam();
  const size_t n = 2 * TaskElements(dtype) + 5;
  const TypedArray array = testing::RandomArray(dtype, n, testing::FreshSeed());
  const std::vector<uint64_t> bounds = {0, n};
  const StatsRequest request{dtype, NeedsOf(kAllOps)};
  const std::vector<Stats> segments = ReduceSegments(pool_, request, array.bytes, bounds);
  ASSERT_EQ(segments.size(), 1u);
  const Stats whole = Reduce(pool_, request, array.bytes);
  for (Op op : kAllOps) {
    const absl::StatusOr<OpResult> a = FinalizeOp(op, dtype, 0, segments[0]);
    const absl::StatusOr<OpResult> b = FinalizeOp(op, dtype, 0, whole);
    ASSERT_EQ(a.ok(), b.ok()) << OpName(op);
    if (!a.ok()) continue;
    // The same tasks and the same order of merges: the same bits.
    EXPECT_TRUE(std::memcmp(&a->value, &b->value, sizeof(double)) == 0 ||
                (std::isnan(a->value) && std::isnan(b->value)))
        << OpName(op) << " " << a->value << " " << b->value;
    EXPECT_EQ(a->index, b->index) << OpName(op);
    EXPECT_EQ(a->int_value, b->int_value) << OpName(op);
  }
}

TEST_P(SegmentedReduceTest, EmptyInputsAndEmptySegments) {
  const DType dtype = GetParam();
  const StatsRequest request{dtype, NeedsOf(kAllOps)};
  EXPECT_TRUE(ReduceSegments(pool_, request, {}, std::vector<uint64_t>{0}).empty());
  const std::vector<Stats> empty =
      ReduceSegments(pool_, request, {}, std::vector<uint64_t>{0, 0, 0});
  ASSERT_EQ(empty.size(), 2u);
  for (const Stats& stats : empty) EXPECT_EQ(stats.count, 0u);
  const TypedArray array = testing::RandomArray(dtype, 5, testing::FreshSeed());
  const std::vector<uint64_t> bounds = {0, 0, 2, 2, 5, 5};
  const std::vector<Stats> segments = ReduceSegments(pool_, request, array.bytes, bounds);
  ASSERT_EQ(segments.size(), 5u);
  EXPECT_EQ(segments[0].count, 0u);
  EXPECT_EQ(segments[1].count, 2u);
  EXPECT_EQ(segments[2].count, 0u);
  EXPECT_EQ(segments[3].count, 3u);
  EXPECT_EQ(segments[4].count, 0u);
  // An empty segment answers as NumPy does for an empty array: SUM 0, MIN refused.
  EXPECT_EQ(FinalizeOp(Op::kSum, dtype, 0, segments[0])->value, 0);
  EXPECT_FALSE(FinalizeOp(Op::kMin, dtype, 0, segments[0]).ok());
  EXPECT_EQ(CheckSegments(pool_, array, bounds), "");
  EXPECT_EQ(CheckSegments(pool_, array, bounds, OpsButProducts()), "");
}

// With a sink: every segment once (those cut across tasks and the empty ones too), the same
// answers as returned ones, bit for bit, and nothing returned.
TEST_P(SegmentedReduceTest, ASinkTakesEverySegmentOnceWithTheSameStats) {
  const DType dtype = GetParam();
  const size_t n = 3 * TaskElements(dtype) + 777;
  const uint64_t seed = testing::FreshSeed();
  SCOPED_TRACE(testing::SeedTrace(seed));
  const TypedArray array = WithNans(dtype, n, seed);
  std::vector<uint64_t> mixed = MixedBounds(n, TaskElements(dtype), seed);
  mixed.push_back(n);  // and an empty one at the end, past every task
  // Bounds either side of a task's end, one segment over three tasks ending exactly at one,
  // and an empty one there.
  const uint64_t task = TaskElements(dtype);
  const std::vector<uint64_t> at_tasks = {0,     1, task - 1, 3 * task, 3 * task, 3 * task + 1,
                                          n - 1, n, n};
  const Op sums[] = {Op::kSum, Op::kMean, Op::kNanSum, Op::kNanMean};
  for (const std::vector<uint64_t>& bounds : {mixed, at_tasks}) {
    for (std::span<const Op> ops : {std::span<const Op>(kAllOps), std::span<const Op>(sums)}) {
      const StatsRequest request{dtype, NeedsOf(ops)};
      const std::vector<Stats> returned = ReduceSegments(pool_, request, array.bytes, bounds);
      EXPECT_EQ(SinkDiffers(pool_, request, ops, array.bytes, bounds, 0, returned), "");
    }
  }
  EXPECT_EQ(CheckSegments(pool_, array, at_tasks), "");  // and those bounds against the reference
  std::vector<int> empty_times(2, 0);
  std::promise<void> finished;
  ReduceSegmentsAsync(
      pool_, {dtype, NeedsOf(kAllOps)}, {}, std::vector<uint64_t>{0, 0, 0}, 0,
      [&](uint64_t first, std::span<const Stats> stats) {
        for (size_t i = 0; i < stats.size(); ++i) {
          EXPECT_EQ(stats[i].count, 0u);
          ++empty_times[first + i];
        }
      },
      [&](std::vector<Stats>, ReduceTiming) { finished.set_value(); });
  finished.get_future().get();
  EXPECT_EQ(empty_times, (std::vector<int>{1, 1}));
}

// A sink reading a request's own bounds over a slice of its array that cuts its first and last
// segments (as ShapedReducer's batches do): the same answers as the bounds rebased and clamped,
// and those the reference's over the slice. Segments of 20 and 100 cut in their middle, with and
// without PROD: the cut ones go through the short runs pass, which must read only their part.
TEST_P(SegmentedReduceTest, ASinkReadsBoundsCountedFromBeforeItsData) {
  const DType dtype = GetParam();
  const size_t n = 3 * TaskElements(dtype) + 777;
  const uint64_t seed = testing::FreshSeed();
  SCOPED_TRACE(testing::SeedTrace(seed));
  const TypedArray array = WithNans(dtype, n, seed);
  const size_t element = DTypeSize(dtype);
  const auto uniform = [n](uint64_t length) {
    std::vector<uint64_t> bounds;
    for (uint64_t at = 0; at < n; at += length) bounds.push_back(at);
    bounds.push_back(n);
    return bounds;
  };
  const std::vector<Op> no_products = OpsButProducts();
  for (const std::vector<uint64_t>& bounds :
       {MixedBounds(n, TaskElements(dtype), seed), uniform(16), uniform(20), uniform(100)}) {
    for (const auto& [lo, hi] :
         {std::pair<uint64_t, uint64_t>{n / 5 + 3, n - n / 7},
          std::pair<uint64_t, uint64_t>{10, 50}, std::pair<uint64_t, uint64_t>{0, n / 2 + 1},
          std::pair<uint64_t, uint64_t>{n / 3, n}}) {
      SCOPED_TRACE(absl::StrCat("elements ", lo, " to ", hi, ", ", bounds.size() - 1, " segments"));
      // The segments that meet [lo, hi): from the one holding lo to the first ending at or past hi.
      const size_t first =
          std::upper_bound(bounds.begin(), bounds.end() - 1, lo) - bounds.begin() - 1;
      const size_t last =
          std::lower_bound(bounds.begin() + first, bounds.end(), hi) - bounds.begin();
      const std::span<const uint64_t> own = std::span(bounds).subspan(first, last - first + 1);
      std::vector<uint64_t> rebased;
      for (uint64_t bound : own) rebased.push_back(std::clamp(bound, lo, hi) - lo);
      const auto data =
          std::span<const std::byte>(array.bytes).subspan(lo * element, (hi - lo) * element);
      const TypedArray slice =
          IsInteger(dtype)
              ? testing::FromInts(dtype, std::span<const int64_t>(array.ints).subspan(lo, hi - lo))
              : testing::FromValues(dtype,
                                    std::span<const double>(array.values).subspan(lo, hi - lo));
      for (std::span<const Op> ops :
           {std::span<const Op>(kAllOps), std::span<const Op>(no_products)}) {
        const StatsRequest request{dtype, NeedsOf(ops)};
        const std::vector<Stats> returned = ReduceSegments(pool_, request, data, rebased);
        EXPECT_EQ(SinkDiffers(pool_, request, ops, data, own, lo, returned), "");
        EXPECT_EQ(CheckSegments(pool_, slice, rebased, ops), "");
      }
      const std::vector<std::vector<Op>> op_sets = {
          {Op::kSum},
          {Op::kNanMean},
          {Op::kMin},
          {Op::kNanMax},
          {Op::kVar},
          {Op::kNanStd},
          {Op::kSumSquares},
          {Op::kArgMin},
          {Op::kProd},
          {Op::kNanProd},
          {Op::kSum, Op::kMin, Op::kMax, Op::kMean, Op::kStd},
          {Op::kNanArgMin, Op::kSumSquares, Op::kNanVar, Op::kMax}};
      for (const std::vector<Op>& ops : op_sets) {
        const StatsRequest request{dtype, NeedsOf(ops)};
        if (!RunsPassTakes(request, 16)) continue;
        const std::vector<Stats> returned = ReduceSegments(pool_, request, data, rebased);
        // (Uniform segments, many of them: eight whole ones in a row inside a task; int64's are
        // answered there for one op but SUM_SQUARES, and SUM where no run wraps, as these do.)
        const Op op = NanFormOf(ops.front());
        const bool int64_direct = ops.size() == 1 && op != Op::kSum && op != Op::kSumSquares;
        bool some_direct = own.size() > 100 && (dtype != DType::kInt64 || int64_direct);
        for (size_t k = 1; k + 2 < own.size(); ++k) {
          some_direct = some_direct && own[k + 1] - own[k] == own[1] - own[0];
        }
        EXPECT_EQ(DirectDiffers(pool_, dtype, ops, data, own, lo, returned, some_direct), "");
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(EveryDType, SegmentedReduceTest, ::testing::ValuesIn(kAllDTypes),
                         [](const ::testing::TestParamInfo<DType>& info) {
                           return std::string(DTypeName(info.param));
                         });

}  // namespace
}  // namespace gpureduce::kernels::cpu
