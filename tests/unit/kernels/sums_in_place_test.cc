// Sums alone added where a run lies (kernels/cpu/sums_in_place.h) against the columns pass over
// the same runs transposed (each run a column): the same Stats, bit for bit, as the in-place
// path promises, for every dtype it takes, runs of awkward lengths with NaN placed in them.

#include "kernels/cpu/sums_in_place.h"

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/reduction/dtype.h"
#include "gtest/gtest.h"
#include "kernels/cpu/block_reduce.h"
#include "tests/support/random_data.h"
#include "tests/unit/kernels/typed_array.h"

namespace gpureduce::kernels::cpu {
namespace {

class SumsInPlaceTest : public ::testing::TestWithParam<DType> {};

TEST_P(SumsInPlaceTest, EveryRunGivesTheColumnsPassStatsBitForBit) {
  const DType dtype = GetParam();
  const StatsNeeds needs = {.sum = true};
  ASSERT_TRUE(SumsInPlace(dtype, needs, 31)) << DTypeName(dtype);
  const uint64_t seed = testing::FreshSeed();
  SCOPED_TRACE(absl::StrCat("seed ", seed));
  std::mt19937_64 random(seed);
  const size_t element = DTypeSize(dtype);
  constexpr size_t kRuns = 37;
  for (const size_t length : {1, 2, 7, 16, 31, 63}) {
    SCOPED_TRACE(absl::StrCat("length ", length));
    testing::TypedArray runs = testing::RandomArray(dtype, kRuns * length, random());
    for (size_t k = 0; k < 6; ++k) runs.Set(random() % runs.size(), NAN);
    runs.Set(random() % runs.size(), INFINITY);
    // The runs transposed: run c is column c of a (length, kRuns) table.
    std::vector<std::byte> table(runs.bytes.size());
    for (size_t c = 0; c < kRuns; ++c) {
      for (size_t e = 0; e < length; ++e) {
        std::memcpy(&table[(e * kRuns + c) * element], &runs.bytes[(c * length + e) * element],
                    element);
      }
    }
    for (const Passes* passes : RunnablePasses()) {
      std::vector<Stats> columns(kRuns, EmptyStats(dtype));
      passes->add_columns(dtype, needs, table.data(), kRuns, length, kRuns, 0, columns.data());
      for (size_t c = 0; c < kRuns; ++c) {
        const Stats in_place = VisitSumsDType(dtype, [&](auto d) {
          constexpr DType kDType = decltype(d)::value;
          return SumsOf<kDType>(
              reinterpret_cast<const SumsStorage<kDType>*>(runs.bytes.data()) + c * length, length);
        });
        const Stats& pass = columns[c];
        EXPECT_EQ(std::bit_cast<uint64_t>(in_place.sum), std::bit_cast<uint64_t>(pass.sum))
            << "run " << c << ": " << in_place.sum << " against " << pass.sum;
        EXPECT_EQ(in_place.count, pass.count) << "run " << c;
        EXPECT_EQ(in_place.nan_count, pass.nan_count) << "run " << c;
        EXPECT_EQ(in_place.first_nan, pass.first_nan) << "run " << c;
        EXPECT_EQ(std::bit_cast<uint64_t>(in_place.sum_squares),
                  std::bit_cast<uint64_t>(pass.sum_squares))
            << "run " << c;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(EveryDTypeSummedInPlace, SumsInPlaceTest,
                         ::testing::Values(DType::kFloat32, DType::kBFloat16, DType::kFloat64),
                         [](const auto& info) { return std::string(DTypeName(info.param)); });

}  // namespace
}  // namespace gpureduce::kernels::cpu
