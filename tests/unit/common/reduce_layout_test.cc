// ReduceLayout (issue 23): NumPy's result shapes, the normalized groups, and the refusals.

#include "common/reduction/reduce_layout.h"

#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace gpureduce {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

const std::vector<Op> kSum = {Op::kSum};

std::vector<std::pair<uint64_t, bool>> Groups(const ReduceLayout& layout) {
  std::vector<std::pair<uint64_t, bool>> groups;
  for (const AxisGroup& group : layout.groups()) groups.emplace_back(group.extent, group.reduced);
  return groups;
}

TEST(ReduceLayout, RowsColumnsAndTuplesAsNumPyShapesThem) {
  const std::vector<uint64_t> shape = {4096, 1024};
  absl::StatusOr<ReduceLayout> rows =
      ReduceLayout::ForAxes(shape, std::vector<int32_t>{1}, false, kSum);
  ASSERT_TRUE(rows.ok());
  EXPECT_THAT(rows->result_shape(), ElementsAre(4096));
  EXPECT_THAT(Groups(*rows), ElementsAre(std::pair<uint64_t, bool>{4096, false},
                                         std::pair<uint64_t, bool>{1024, true}));
  EXPECT_EQ(rows->open_outputs(), 1u);
  absl::StatusOr<ReduceLayout> columns =
      ReduceLayout::ForAxes(shape, std::vector<int32_t>{-2}, true, kSum);
  ASSERT_TRUE(columns.ok());
  EXPECT_THAT(columns->result_shape(), ElementsAre(1, 1024));
  EXPECT_EQ(columns->open_outputs(), 1024u);
  EXPECT_EQ(columns->outputs(), 1024u);

  // (8, 1, 3, 5) along (0, 2): the 1 dropped, 8 and 3 merged.
  const std::vector<uint64_t> four = {8, 1, 3, 5};
  absl::StatusOr<ReduceLayout> tuple =
      ReduceLayout::ForAxes(four, std::vector<int32_t>{0, 2}, false, kSum);
  ASSERT_TRUE(tuple.ok());
  EXPECT_THAT(tuple->result_shape(), ElementsAre(1, 5));
  EXPECT_THAT(Groups(*tuple), ElementsAre(std::pair<uint64_t, bool>{24, true},
                                          std::pair<uint64_t, bool>{5, false}));
  EXPECT_EQ(tuple->count(), 120u);

  absl::StatusOr<ReduceLayout> every = ReduceLayout::ForAxes(four, {}, false, kSum);
  ASSERT_TRUE(every.ok());
  EXPECT_TRUE(every->result_shape().empty());
  EXPECT_EQ(every->outputs(), 1u);
}

TEST(ReduceLayout, RefusesWhatNumPyRefuses) {
  const std::vector<uint64_t> shape = {2, 3, 4};
  absl::StatusOr<ReduceLayout> out_of_range =
      ReduceLayout::ForAxes(shape, std::vector<int32_t>{3}, false, kSum);
  EXPECT_THAT(out_of_range.status().message(), HasSubstr("spec.axes[0] is 3, out of range"));
  absl::StatusOr<ReduceLayout> repeated =
      ReduceLayout::ForAxes(shape, std::vector<int32_t>{1, -2}, false, kSum);
  EXPECT_THAT(repeated.status().message(), HasSubstr("repeats axis 1"));
  const std::vector<Op> argmin = {Op::kArgMin};
  absl::StatusOr<ReduceLayout> arg_tuple =
      ReduceLayout::ForAxes(shape, std::vector<int32_t>{0, 1}, false, argmin);
  EXPECT_THAT(arg_tuple.status().message(), HasSubstr("one axis or every axis"));
  EXPECT_TRUE(ReduceLayout::ForAxes(shape, std::vector<int32_t>{0, 1, 2}, false, argmin).ok());
  const std::vector<uint64_t> huge = {uint64_t{1} << 40, uint64_t{1} << 40};
  EXPECT_THAT(ReduceLayout::ForAxes(huge, {}, false, kSum).status().message(),
              HasSubstr("multiply past 2^64"));
  // A 0 extent does not hide the others' product (the outputs' count would wrap to 0).
  const std::vector<uint64_t> hidden = {uint64_t{1} << 34, 0, uint64_t{1} << 30};
  EXPECT_THAT(
      ReduceLayout::ForAxes(hidden, std::vector<int32_t>{1}, false, kSum).status().message(),
      HasSubstr("multiply past 2^64"));
}

TEST(ReduceLayout, AnArrayOfNoElementsHoldsNothingOpen) {
  const std::vector<uint64_t> wide = {0, uint64_t{1} << 24};
  absl::StatusOr<ReduceLayout> columns =
      ReduceLayout::ForAxes(wide, std::vector<int32_t>{0}, false, kSum);
  ASSERT_TRUE(columns.ok());
  EXPECT_EQ(columns->outputs(), uint64_t{1} << 24);
  EXPECT_EQ(columns->open_outputs(), 0u);
  // NumPy refuses a 0-length reduced axis for MIN even where no output is left.
  const std::vector<uint64_t> none = {0, 0};
  absl::StatusOr<ReduceLayout> empty =
      ReduceLayout::ForAxes(none, std::vector<int32_t>{0}, false, kSum);
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(empty->outputs(), 0u);
  EXPECT_FALSE(CheckEmptyOutputs(*empty, std::vector<Op>{Op::kMin}, DType::kFloat32, 0).ok());
  EXPECT_TRUE(CheckEmptyOutputs(*empty, kSum, DType::kFloat32, 0).ok());
}

TEST(ReduceLayout, EmptyOutputsAnswerWhereTheOpHasAnIdentity) {
  const std::vector<uint64_t> lengths = {3, 0, 2};
  absl::StatusOr<ReduceLayout> segments = ReduceLayout::ForSegments(lengths);
  ASSERT_TRUE(segments.ok());
  EXPECT_EQ(segments->count(), 5u);
  EXPECT_THAT(segments->bounds(), ElementsAre(0, 3, 3, 5));
  EXPECT_TRUE(CheckEmptyOutputs(*segments, kSum, DType::kFloat32, 0).ok());
  EXPECT_THAT(CheckEmptyOutputs(*segments, std::vector<Op>{Op::kMax}, DType::kFloat32, 0).message(),
              HasSubstr("spec.segments[1] is empty"));
  const std::vector<uint64_t> zero_axis = {4, 0};
  absl::StatusOr<ReduceLayout> empty_rows =
      ReduceLayout::ForAxes(zero_axis, std::vector<int32_t>{1}, false, kSum);
  ASSERT_TRUE(empty_rows.ok());
  EXPECT_TRUE(empty_rows->has_empty_output());
  EXPECT_EQ(empty_rows->outputs(), 4u);
  EXPECT_FALSE(CheckEmptyOutputs(*empty_rows, std::vector<Op>{Op::kMin}, DType::kInt32, 0).ok());
}

}  // namespace
}  // namespace gpureduce
