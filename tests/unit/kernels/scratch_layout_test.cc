// The stream scratch's layout (kernels/scratch_layout.h), on the host: every array on its
// boundary, the sizes each kernel needs, no overlap where two kernels' arrays could be live at
// once, and the measuring call (null base) agreeing with the real one.

#include "kernels/scratch_layout.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "kernels/cuda/single_pass/single_pass_policy.h"

namespace gpureduce::kernels {
namespace {

// An array's byte range relative to the base.
struct Range {
  std::string name;
  size_t begin;
  size_t end;
};

template <typename T>
Range RangeOf(const std::string& name, const DeviceArray<T>& array, const std::byte* base) {
  const size_t begin = static_cast<size_t>(reinterpret_cast<const std::byte*>(array.d_data) - base);
  return {name, begin, begin + array.size * sizeof(T)};
}

bool Overlap(const Range& a, const Range& b) {
  return a.begin < b.end && b.begin < a.end && a.begin != a.end && b.begin != b.end;
}

struct Case {
  size_t max_elements;
  size_t cub_temp_bytes;
};

// A fake base: the layout only computes addresses, it never touches the memory.
std::byte* FakeBase() { return reinterpret_cast<std::byte*>(uintptr_t{1} << 40); }

class ScratchLayoutTest : public ::testing::TestWithParam<Case> {};

TEST_P(ScratchLayoutTest, ArraysAreAlignedSizedAndApartWhereTheyMustBe) {
  const Case c = GetParam();
  std::byte* base = FakeBase();
  const ScratchLayout layout = CarveScratch(base, c.max_elements, c.cub_temp_bytes);

  const std::vector<Range> cub = {RangeOf("cub.result", layout.cub.result, base),
                                  RangeOf("cub.temp", layout.cub.temp, base)};
  const std::vector<Range> ladder = {RangeOf("ladder.result", layout.ladder.result, base),
                                     RangeOf("ladder.partials_a", layout.ladder.partials_a, base),
                                     RangeOf("ladder.partials_b", layout.ladder.partials_b, base)};
  const std::vector<Range> single_pass = {
      RangeOf("single_pass.counter", layout.single_pass.counter, base),
      RangeOf("single_pass.block_states", layout.single_pass.block_states, base)};
  const std::vector<Range> stats = {RangeOf("stats.counter", layout.stats.counter, base),
                                    RangeOf("stats.block_states", layout.stats.block_states, base)};

  EXPECT_EQ(layout.cub.result.size, 1u);
  EXPECT_EQ(layout.cub.temp.size, c.cub_temp_bytes);
  EXPECT_EQ(layout.ladder.result.size, 1u);
  // A first tree pass with the smallest block (32 threads) writes one partial per block.
  EXPECT_EQ(layout.ladder.partials_a.size, (c.max_elements + 31) / 32);
  EXPECT_EQ(layout.ladder.partials_b.size, (c.max_elements + 31) / 32);
  EXPECT_EQ(layout.single_pass.counter.size, 1u);
  EXPECT_EQ(layout.single_pass.block_states.size, kSinglePassMaxBlocks);
  static_assert(sizeof(SinglePassBlockState) >= 16, "an ARGMIN state: a float and an int64");
  EXPECT_EQ(layout.stats.counter.size, 1u);
  EXPECT_EQ(layout.stats.block_states.size, kStatsMaxBlocks);

  std::vector<Range> all = cub;
  all.insert(all.end(), ladder.begin(), ladder.end());
  all.insert(all.end(), single_pass.begin(), single_pass.end());
  all.insert(all.end(), stats.begin(), stats.end());
  for (const Range& range : all) {
    SCOPED_TRACE(range.name);
    EXPECT_EQ(range.begin % kScratchAlignment, 0u);
    EXPECT_LE(range.end, layout.bytes);
  }
  EXPECT_EQ(layout.bytes % kScratchAlignment, 0u);
  // Within a kernel every array is live at once; single_pass's are apart from everyone's.
  for (const std::vector<Range>* group : {&cub, &ladder, &single_pass, &stats}) {
    for (size_t i = 0; i < group->size(); ++i) {
      for (size_t j = i + 1; j < group->size(); ++j) {
        EXPECT_FALSE(Overlap((*group)[i], (*group)[j]))
            << (*group)[i].name << " and " << (*group)[j].name;
      }
    }
  }
  // single_pass's and the stats kernel's arrays (each with a counter) are apart from all others.
  std::vector<Range> counted = single_pass;
  counted.insert(counted.end(), stats.begin(), stats.end());
  for (const Range& mine : counted) {
    for (const Range& other : all) {
      if (&other - all.data() < static_cast<std::ptrdiff_t>(cub.size() + ladder.size())) {
        EXPECT_FALSE(Overlap(mine, other)) << mine.name << " and " << other.name;
      }
    }
  }
  for (const Range& mine : single_pass) {
    for (const Range& other : stats) {
      EXPECT_FALSE(Overlap(mine, other)) << mine.name << " and " << other.name;
    }
  }
  // cub and the ladder share the front; nothing is wasted beyond alignment.
  EXPECT_EQ(cub.front().begin, 0u);
  EXPECT_EQ(ladder.front().begin, 0u);
  EXPECT_LT(layout.bytes - stats.back().end, kScratchAlignment);
}

TEST_P(ScratchLayoutTest, MeasuringWithANullBaseGivesTheSameSizeAndNoPointers) {
  const Case c = GetParam();
  const ScratchLayout measured = CarveScratch(nullptr, c.max_elements, c.cub_temp_bytes);
  const ScratchLayout real = CarveScratch(FakeBase(), c.max_elements, c.cub_temp_bytes);
  EXPECT_EQ(measured.bytes, real.bytes);
  EXPECT_EQ(measured.single_pass.counter.d_data, nullptr);
  EXPECT_EQ(measured.single_pass.block_states.d_data, nullptr);
  EXPECT_EQ(measured.stats.counter.d_data, nullptr);
  EXPECT_EQ(measured.stats.block_states.d_data, nullptr);
  EXPECT_EQ(measured.cub.temp.d_data, nullptr);
  EXPECT_EQ(measured.ladder.partials_b.d_data, nullptr);
  EXPECT_EQ(measured.ladder.partials_b.size, real.ladder.partials_b.size);
}

// single_pass reduces device memory in place in launches far larger than a staging slot: its
// arrays must not depend on the chunk size.
TEST(ScratchLayoutSizes, SinglePassTakesTheSameBytesForAnyChunkSize) {
  const ScratchLayout small = CarveScratch(FakeBase(), 1, 0);
  const ScratchLayout large = CarveScratch(FakeBase(), size_t{1} << 30, 1 << 20);
  const Range small_counter = RangeOf("counter", small.single_pass.counter, FakeBase());
  const Range large_counter = RangeOf("counter", large.single_pass.counter, FakeBase());
  EXPECT_EQ(small.bytes - small_counter.begin, large.bytes - large_counter.begin);
  EXPECT_GE(large_counter.begin, 2 * ((size_t{1} << 30) / 32) * sizeof(float));
}

TEST(ScratchCarverTest, TakesEachArrayOnTheNextBoundary) {
  ScratchCarver carver(FakeBase(), 3);
  const DeviceArray<double> first = carver.Take<double>(5);
  const DeviceArray<char> second = carver.Take<char>(0);
  const DeviceArray<int> third = carver.Take<int>(1);
  EXPECT_EQ(reinterpret_cast<std::byte*>(first.d_data) - FakeBase(), 256);
  EXPECT_EQ(reinterpret_cast<std::byte*>(second.d_data) - FakeBase(), 512);
  EXPECT_EQ(reinterpret_cast<std::byte*>(third.d_data) - FakeBase(), 512);
  EXPECT_EQ(carver.end(), 516u);
  EXPECT_EQ(first.size, 5u);
}

// A staging slot of 4 MiB (the server's default), one of 1 element, and sizes that are not
// multiples of anything, with CUB temp sizes of none, odd and large.
INSTANTIATE_TEST_SUITE_P(Sizes, ScratchLayoutTest,
                         ::testing::Values(Case{1, 0}, Case{1, 1}, Case{31, 7}, Case{33, 255},
                                           Case{1000003, 12345}, Case{size_t{1} << 20, 1 << 20},
                                           Case{(size_t{1} << 20) + 1, 257}),
                         [](const ::testing::TestParamInfo<Case>& info) {
                           return "elements" + std::to_string(info.param.max_elements) + "_cub" +
                                  std::to_string(info.param.cub_temp_bytes);
                         });

}  // namespace
}  // namespace gpureduce::kernels
