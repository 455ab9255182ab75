// Array requests (issue 23) on the CPU backend, and on the GPU's array kernels where there is a
// GPU, through the runtime's public API: every output of every op against the independent
// reference over that output's own elements, gathered here from the shape and axes by index
// arithmetic of the test's own, with the payload cut into pieces at random places (mid-row,
// mid-element run, one element). The GPU's staging slots are made small (256 KiB) so that its
// pieces, batches of segments and runs of columns are cut too.

#include "runtime/shaped/shaped_session.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <future>
#include <memory>
#include <random>
#include <span>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "common/reduction/op_name.h"
#include "common/reduction/reduce_layout.h"
#include "common/thread_pool.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/backend_factory.h"
#include "runtime/shaped/block_kernels.h"
#include "tests/support/random_data.h"
#include "tests/unit/kernels/stats_reference.h"
#include "tests/unit/kernels/typed_array.h"
#include "tests/unit/runtime/array_checks.h"

namespace gpureduce::runtime {
namespace {

using ::testing::HasSubstr;
using testing::TypedArray;

absl::StatusOr<std::unique_ptr<Backend>> Open(BackendChoice kind) {
  BackendOptions options;
  options.kind = kind;
  options.worker_threads = 3;
  options.device.staging_buffer_bytes = 256 << 10;
  options.gpu_arrays = true;
  return CreateBackend(options);
}

std::unique_ptr<Backend> Cpu() {
  absl::StatusOr<std::unique_ptr<Backend>> backend = Open(BackendChoice::kCpu);
  EXPECT_TRUE(backend.ok()) << backend.status();
  return std::move(*backend);
}

RequestSpec Spec(std::span<const Op> ops, kernels::KernelId kernel, DType dtype,
                 std::shared_ptr<ReduceLayout> layout) {
  RequestSpec spec{ops.front(), kernel, 0, 0};
  spec.op_list.assign(ops.begin(), ops.end());
  spec.dtype = dtype;
  spec.ddof = 1;
  spec.layout = std::move(layout);
  return spec;
}

// The session's arrays, its payload sent in pieces cut at `cuts` (element positions).
absl::StatusOr<std::vector<ArrayResult>> RunSession(
    absl::StatusOr<std::unique_ptr<ReduceSession>> session, DType dtype, const TypedArray& array,
    const std::vector<uint64_t>& cuts) {
  if (!session.ok()) return session.status();
  const size_t size = DTypeSize(dtype);
  uint64_t at = 0;
  for (uint64_t cut : cuts) {
    PayloadPieces pieces;
    pieces.set_element_bytes(size);
    // Two ranges where the piece allows: the session copies them out; one range reads in place.
    const uint64_t half = at + (cut - at) / 2;
    if (cut - at > 2) {
      pieces.Append(array.bytes.data() + at * size, (half - at) * size);
      pieces.Append(array.bytes.data() + half * size, (cut - half) * size);
    } else {
      pieces.Append(array.bytes.data() + at * size, (cut - at) * size);
    }
    std::promise<absl::Status> consumed;
    (*session)->ConsumePieces(pieces, [&](absl::Status s) { consumed.set_value(s); });
    if (absl::Status status = consumed.get_future().get(); !status.ok()) return status;
    at = cut;
  }
  std::promise<absl::StatusOr<std::vector<ArrayResult>>> finished;
  (*session)->FinishArrays([&](absl::StatusOr<std::vector<ArrayResult>> arrays) {
    finished.set_value(std::move(arrays));
  });
  return finished.get_future().get();
}

// The request's arrays from `backend`, as RunSession sends them.
absl::StatusOr<std::vector<ArrayResult>> RunRequest(Backend& backend, std::span<const Op> ops,
                                                    DType dtype,
                                                    std::shared_ptr<ReduceLayout> layout,
                                                    const TypedArray& array,
                                                    const std::vector<uint64_t>& cuts) {
  return RunSession(backend.Open(Spec(ops, backend.default_kernel(), dtype, std::move(layout))),
                    dtype, array, cuts);
}

// Ops that take any axes (arg ops take one axis, or all).
std::vector<Op> OpsFor(size_t axes, size_t rank) {
  std::vector<Op> ops;
  for (Op op : kAllOps) {
    if (!OpReturnsIndex(op) || axes <= 1 || axes == rank) ops.push_back(op);
  }
  return ops;
}

struct AxesCase {
  std::vector<uint64_t> shape;
  std::vector<int32_t> axes;
};

// (backend, dtype): the CPU's kernels, or a GPU's array kernels (skipped without a GPU).
class ShapedSessionTest : public ::testing::TestWithParam<std::tuple<BackendChoice, DType>> {
 protected:
  void SetUp() override {
    absl::StatusOr<std::unique_ptr<Backend>> opened = Open(std::get<0>(GetParam()));
    if (!opened.ok() && std::get<0>(GetParam()) == BackendChoice::kCuda) {
      GTEST_SKIP() << "no usable GPU: " << opened.status();
    }
    ASSERT_TRUE(opened.ok()) << opened.status();
    backend_ = std::move(*opened);
  }
  DType dtype() const { return std::get<1>(GetParam()); }

  std::unique_ptr<Backend> backend_;
};

TEST_P(ShapedSessionTest, EveryOutputOfEveryOpMatchesTheReference) {
  const DType dtype = this->dtype();
  const uint64_t seed = testing::FreshSeed();
  SCOPED_TRACE(absl::StrCat("seed ", seed));
  std::mt19937_64 random(seed);
  Backend* backend = backend_.get();
  const std::vector<AxesCase> cases = {
      {{1}, {}},
      {{2, 31}, {1}},
      {{2, 31}, {0}},
      {{2, 31}, {}},
      {{3, 1, 5}, {1}},
      {{3, 1, 5}, {0, 1}},
      {{4, 5, 6, 7}, {0, 2}},
      {{4, 5, 6, 7}, {1, 3}},
      {{4, 5, 6, 7}, {-1}},
      {{4, 5, 6, 7}, {0, 1, 3}},
      {{4, 5, 6, 7}, {2}},
      {{37, 130}, {0}},
      {{3, 70001}, {1}},
      {{70001, 3}, {0}},
      {{40, 1100}, {0}},
      {{2, 3, 9000}, {1}},
      {{6, 2500}, {0}},  // a GPU's slot holds a few hundred of its columns at a time
  };
  for (const AxesCase& test : cases) {
    SCOPED_TRACE(absl::StrCat("shape (", absl::StrJoin(test.shape, ", "), ") axes (",
                              absl::StrJoin(test.axes, ", "), ")"));
    const std::vector<Op> ops = OpsFor(test.axes.size(), test.shape.size());
    absl::StatusOr<ReduceLayout> layout = ReduceLayout::ForAxes(test.shape, test.axes, false, ops);
    ASSERT_TRUE(layout.ok()) << layout.status();
    TypedArray array = testing::RandomArray(dtype, layout->count(), random());
    const std::vector<std::vector<uint64_t>> members =
        Gather(test.shape, test.axes, layout->count());
    // NaN in a few outputs, never in all of an output's elements (NANARGMIN refuses those: the
    // test below).
    for (int k = 0; k < 3 && !IsInteger(dtype); ++k) {
      const std::vector<uint64_t>& own = members[random() % members.size()];
      if (own.size() < 2) continue;
      const size_t nans = std::count_if(own.begin(), own.end(),
                                        [&](uint64_t e) { return std::isnan(array.values[e]); });
      if (nans + 1 < own.size()) array.Set(own[random() % own.size()], NAN);
    }
    const std::vector<uint64_t> cuts = RandomCuts(layout->count(), random);
    // Every op, then all but the products (which send short rows elsewhere on the CPU).
    std::vector<Op> no_products;
    for (Op op : ops) {
      if (NanFormOf(op) != Op::kProd) no_products.push_back(op);
    }
    for (const std::vector<Op>& asked : {ops, no_products}) {
      absl::StatusOr<std::vector<ArrayResult>> arrays =
          RunRequest(*backend, asked, dtype, std::make_shared<ReduceLayout>(*layout), array, cuts);
      ASSERT_TRUE(arrays.ok()) << arrays.status();
      ASSERT_EQ(arrays->size(), asked.size());
      EXPECT_EQ(Check(asked, *arrays, array, members), "");
    }
  }
}

TEST_P(ShapedSessionTest, SegmentsOfEveryLengthIncludingEmpty) {
  const DType dtype = this->dtype();
  const uint64_t seed = testing::FreshSeed();
  SCOPED_TRACE(absl::StrCat("seed ", seed));
  std::mt19937_64 random(seed);
  Backend* backend = backend_.get();
  std::vector<uint64_t> lengths = {0, 1, 2, 0, 31, 70000, 5, 0};
  for (int i = 0; i < 1000; ++i) lengths.push_back(random() % 9 == 0 ? 0 : 1 + random() % 40);
  lengths.push_back(0);
  // Ops that answer an empty segment (the others are refused up front: CheckEmptyOutputs).
  const std::vector<Op> ops = {Op::kSum,     Op::kProd, Op::kNanSum, Op::kNanProd,
                               Op::kNanMean, Op::kVar,  Op::kNanStd};
  absl::StatusOr<ReduceLayout> layout = ReduceLayout::ForSegments(lengths);
  ASSERT_TRUE(layout.ok());
  EXPECT_TRUE(CheckEmptyOutputs(*layout, ops, dtype, 1).ok());
  EXPECT_FALSE(CheckEmptyOutputs(*layout, std::vector<Op>{Op::kMin}, dtype, 1).ok());
  TypedArray array = testing::RandomArray(dtype, layout->count(), random());
  const std::vector<uint64_t> cuts = RandomCuts(layout->count(), random);
  // Without the products too: the CPU's short runs pass takes those segments then, cut ones
  // included.
  const std::vector<Op> no_products = {Op::kSum, Op::kNanSum, Op::kNanMean, Op::kVar, Op::kNanStd};
  for (const std::vector<Op>& asked : {ops, no_products}) {
    absl::StatusOr<std::vector<ArrayResult>> arrays =
        RunRequest(*backend, asked, dtype, std::make_shared<ReduceLayout>(*layout), array, cuts);
    ASSERT_TRUE(arrays.ok()) << arrays.status();
    EXPECT_EQ(Check(asked, *arrays, array, MembersOf(lengths)), "");
  }
}

// Requests of one op each over short rows and segments, the payload cut anywhere: on the CPU the
// short runs pass writes their answers straight into the result array (ArrayResults::Direct),
// eight rows or segments at a time, the rest (cut ones, a block's last few) by their Stats.
TEST_P(ShapedSessionTest, OneOpAtATimeOverShortRowsAndSegments) {
  const DType dtype = this->dtype();
  const uint64_t seed = testing::FreshSeed();
  SCOPED_TRACE(absl::StrCat("seed ", seed));
  std::mt19937_64 random(seed);
  std::vector<uint64_t> lengths;
  for (int i = 0; i < 600; ++i) lengths.push_back(i < 300 ? 16 : 4 + random() % 60);
  std::vector<std::pair<ReduceLayout, std::vector<std::vector<uint64_t>>>> layouts;
  for (const AxesCase& test :
       std::vector<AxesCase>{{{700, 16}, {1}}, {{301, 40}, {-1}}, {{2, 45, 128}, {2}}}) {
    absl::StatusOr<ReduceLayout> layout =
        ReduceLayout::ForAxes(test.shape, test.axes, false, kAllOps);
    ASSERT_TRUE(layout.ok()) << layout.status();
    layouts.emplace_back(*layout, Gather(test.shape, test.axes, layout->count()));
  }
  absl::StatusOr<ReduceLayout> segments = ReduceLayout::ForSegments(lengths);
  ASSERT_TRUE(segments.ok());
  layouts.emplace_back(*segments, MembersOf(lengths));
  for (const auto& [layout, members] : layouts) {
    SCOPED_TRACE(absl::StrCat(layout.outputs(), " outputs"));
    TypedArray array = testing::RandomArray(dtype, layout.count(), random());
    for (int k = 0; k < 40 && !IsInteger(dtype); ++k) {  // never all of an output's elements
      const std::vector<uint64_t>& own = members[random() % members.size()];
      const size_t nans = std::count_if(own.begin(), own.end(),
                                        [&](uint64_t e) { return std::isnan(array.values[e]); });
      if (nans + 1 < own.size()) array.Set(own[random() % own.size()], NAN);
    }
    const std::vector<uint64_t> cuts = RandomCuts(layout.count(), random);
    for (Op op : kAllOps) {
      const std::vector<Op> asked = {op};
      absl::StatusOr<std::vector<ArrayResult>> arrays =
          RunRequest(*backend_, asked, dtype, std::make_shared<ReduceLayout>(layout), array, cuts);
      ASSERT_TRUE(arrays.ok()) << arrays.status();
      EXPECT_EQ(Check(asked, *arrays, array, members), "") << OpName(op);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(EveryBackendAndDType, ShapedSessionTest,
                         ::testing::Combine(::testing::Values(BackendChoice::kCpu,
                                                              BackendChoice::kCuda),
                                            ::testing::ValuesIn(kAllDTypes)),
                         [](const auto& info) {
                           return absl::StrCat(
                               std::get<0>(info.param) == BackendChoice::kCpu ? "Cpu" : "Cuda",
                               DTypeName(std::get<1>(info.param)));
                         });

// More segments than one kernels' call takes (the CPU's 262,144 answered as they are reduced)
// in one piece, so that batches follow each other within it, then segments longer than two
// tasks, the piece cut in the middle of one of them.
TEST(ShapedSession, MoreSegmentsThanABatchTakes) {
  // The CPU's kernels with batches of 256Ki segments (4Mi by default): two batches here.
  ThreadPool pool(4);
  const auto cpu_session = [&pool](const RequestSpec& spec) {
    return absl::StatusOr<std::unique_ptr<ReduceSession>>(
        std::make_unique<ShapedSession>(std::make_unique<CpuBlockKernels>(pool, uint64_t{1} << 18),
                                        spec, ShapedSessionInfo{"cpu"}));
  };
  const uint64_t seed = testing::FreshSeed();
  SCOPED_TRACE(absl::StrCat("seed ", seed));
  std::mt19937_64 random(seed);
  std::vector<uint64_t> lengths(300000);
  for (uint64_t& length : lengths) length = random() % 4;  // empty ones too
  uint64_t cut = 0;
  for (uint64_t length : lengths) cut += length;
  constexpr uint64_t kLong = 2 * (uint64_t{1} << 16) + 5;  // past two tasks of float32
  cut += kLong + kLong / 3;                                // inside the second long one
  for (int i = 0; i < 3; ++i) lengths.push_back(kLong);
  for (int i = 0; i < 1000; ++i) lengths.push_back(random() % 4);
  const std::vector<Op> ops = {Op::kSum, Op::kNanMean};  // both answer an empty segment
  absl::StatusOr<ReduceLayout> layout = ReduceLayout::ForSegments(lengths);
  ASSERT_TRUE(layout.ok());
  TypedArray array = testing::RandomArray(DType::kFloat32, layout->count(), random());
  const std::vector<uint64_t> cuts = {cut, layout->count()};
  absl::StatusOr<std::vector<ArrayResult>> arrays =
      RunSession(cpu_session(Spec(ops, kernels::KernelId::kCpu, DType::kFloat32,
                                  std::make_shared<ReduceLayout>(*layout))),
                 DType::kFloat32, array, cuts);
  ASSERT_TRUE(arrays.ok()) << arrays.status();
  EXPECT_EQ(Check(ops, *arrays, array, MembersOf(lengths)), "");
}

TEST(ShapedSession, AnOutputThatCannotBeAnsweredNamesItsPlace) {
  std::unique_ptr<Backend> backend = Cpu();
  const std::vector<uint64_t> shape = {3, 4};
  const std::vector<Op> ops = {Op::kNanArgMax};
  absl::StatusOr<ReduceLayout> layout =
      ReduceLayout::ForAxes(shape, std::vector<int32_t>{1}, false, ops);
  ASSERT_TRUE(layout.ok());
  TypedArray array = testing::RandomArray(DType::kFloat32, 12, 7);
  for (size_t i = 4; i < 8; ++i) array.Set(i, NAN);  // row 1: all NaN
  absl::StatusOr<std::vector<ArrayResult>> arrays = RunRequest(
      *backend, ops, DType::kFloat32, std::make_shared<ReduceLayout>(*layout), array, {5, 12});
  ASSERT_FALSE(arrays.ok());
  EXPECT_THAT(arrays.status().message(), HasSubstr("result[1]"));
  // Many short rows, which the short runs pass answers straight eight at a time (where the CPU
  // has AVX-512): the eight holding a refused row go by their Stats, so the refusal names the
  // first refused row still.
  const std::vector<uint64_t> rows = {100, 16};
  layout = ReduceLayout::ForAxes(rows, std::vector<int32_t>{1}, false, ops);
  ASSERT_TRUE(layout.ok());
  array = testing::RandomArray(DType::kFloat32, 1600, 7);
  for (const size_t row : {70, 37}) {
    for (size_t i = 0; i < 16; ++i) array.Set(row * 16 + i, NAN);
  }
  arrays = RunRequest(*backend, ops, DType::kFloat32, std::make_shared<ReduceLayout>(*layout),
                      array, {333, 1600});
  ASSERT_FALSE(arrays.ok());
  EXPECT_THAT(arrays.status().message(), HasSubstr("result[37]"));
}

// Outputs refused in several tasks at once: the refusal names the first, whichever task fails
// first. Segment 8000 lies near the end of the first task; every segment after it is all NaN, so
// every later task refuses its first segment long before the first task reaches 8000.
TEST(ShapedSession, TheFirstOutputRefusedIsNamedWhicheverTaskRefusesFirst) {
  std::unique_ptr<Backend> backend = Cpu();
  const std::vector<uint64_t> lengths(40000, 8);
  absl::StatusOr<ReduceLayout> layout = ReduceLayout::ForSegments(lengths);
  ASSERT_TRUE(layout.ok());
  TypedArray array = testing::RandomArray(DType::kFloat32, layout->count(), 11);
  for (uint64_t e = 8000 * 8; e < layout->count(); ++e) array.Set(e, NAN);
  const std::vector<Op> ops = {Op::kSum, Op::kNanArgMax};
  for (int run = 0; run < 5; ++run) {
    absl::StatusOr<std::vector<ArrayResult>> arrays =
        RunRequest(*backend, ops, DType::kFloat32, std::make_shared<ReduceLayout>(*layout), array,
                   {layout->count()});
    ASSERT_FALSE(arrays.ok());
    EXPECT_THAT(arrays.status().message(), HasSubstr("segment 8000:")) << "run " << run;
  }
}

TEST(ShapedSession, NoElementsAnswerEveryOutputWithTheIdentity) {
  std::unique_ptr<Backend> backend = Cpu();
  const std::vector<uint64_t> shape = {0, 100000};
  const std::vector<Op> ops = {Op::kSum, Op::kProd};
  absl::StatusOr<ReduceLayout> layout =
      ReduceLayout::ForAxes(shape, std::vector<int32_t>{0}, false, ops);
  ASSERT_TRUE(layout.ok());
  const TypedArray none = testing::RandomArray(DType::kInt32, 0, 1);
  absl::StatusOr<std::vector<ArrayResult>> arrays =
      RunRequest(*backend, ops, DType::kInt32, std::make_shared<ReduceLayout>(*layout), none, {});
  ASSERT_TRUE(arrays.ok()) << arrays.status();
  ASSERT_EQ((*arrays)[0].data.size(), 100000u * 8);  // int64 sums
  const auto* sums = reinterpret_cast<const int64_t*>((*arrays)[0].data.data());
  const auto* products = reinterpret_cast<const int64_t*>((*arrays)[1].data.data());
  EXPECT_TRUE(std::all_of(sums, sums + 100000, [](int64_t x) { return x == 0; }));
  EXPECT_TRUE(std::all_of(products, products + 100000, [](int64_t x) { return x == 1; }));
}

TEST(ShapedSession, AShortPayloadGivesNoResult) {
  std::unique_ptr<Backend> backend = Cpu();
  const std::vector<uint64_t> shape = {3, 4};
  const std::vector<Op> ops = {Op::kSum};
  absl::StatusOr<ReduceLayout> layout = ReduceLayout::ForAxes(shape, {}, false, ops);
  ASSERT_TRUE(layout.ok());
  TypedArray array = testing::RandomArray(DType::kFloat32, 12, 7);
  absl::StatusOr<std::vector<ArrayResult>> arrays = RunRequest(
      *backend, ops, DType::kFloat32, std::make_shared<ReduceLayout>(*layout), array, {5});
  ASSERT_FALSE(arrays.ok());
  EXPECT_THAT(arrays.status().message(), HasSubstr("ended after 5 of the 12"));
}

}  // namespace
}  // namespace gpureduce::runtime
