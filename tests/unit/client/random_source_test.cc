#include "client/input/random_source.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/unit/client/input_test_util.h"

namespace gpureduce::client {
namespace {

using ::gpureduce::client::testing::Bits;
using ::gpureduce::client::testing::ReadAll;

std::vector<float> Generate(uint64_t count, uint64_t seed, size_t chunk) {
  RandomSource source(count, seed);
  absl::StatusOr<std::vector<float>> values = ReadAll(source, chunk);
  EXPECT_TRUE(values.ok());
  return *values;
}

TEST(RandomSourceTest, CountsAndDescribe) {
  for (uint64_t count : {0, 1, 2, 31, 1000003}) {
    SCOPED_TRACE(count);
    RandomSource source(count, 5);
    EXPECT_EQ(source.total_count(), count);
    EXPECT_EQ(ReadAll(source, 4096)->size(), count);
  }
  EXPECT_EQ(RandomSource(100, 42).Describe(), "random (100 floats uniform in [-1, 1), seed 42)");
}

TEST(RandomSourceTest, SameSeedSameValuesDifferentSeedDifferentValues) {
  const std::vector<float> a = Generate(100000, 7, 4096);
  EXPECT_TRUE(Bits(a) == Bits(Generate(100000, 7, 4096)));
  for (uint64_t other : {uint64_t{8}, uint64_t{0}, uint64_t{1} << 63}) {
    const std::vector<float> b = Generate(100000, other, 4096);
    size_t equal = 0;
    for (size_t i = 0; i < a.size(); ++i) equal += a[i] == b[i];
    EXPECT_LT(equal, 100u) << "seed " << other;  // 2^-24 per value by chance.
  }
}

TEST(RandomSourceTest, ChunkingNeverChangesTheSequence) {
  for (uint64_t count : {1, 2, 31, 1000003}) {
    SCOPED_TRACE(count);
    const std::vector<uint32_t> reference = Bits(Generate(count, 99, 1000));
    EXPECT_TRUE(Bits(Generate(count, 99, 7)) == reference);
    EXPECT_TRUE(Bits(Generate(count, 99, 1)) == reference);
    EXPECT_TRUE(Bits(Generate(count, 99, count + 3)) == reference);
    for (size_t i = 0; i < std::min<size_t>(count, 100); ++i) {
      EXPECT_EQ(std::bit_cast<uint32_t>(RandomSource::ValueAt(99, i)), reference[i]);
    }
  }
  // Irregular chunk sizes, odd and even, through one source.
  RandomSource source(100000, 99);
  std::vector<float> mixed;
  std::vector<float> buffer(1000);
  for (size_t step = 1;; step = step * 7 % 997 + 1) {
    const size_t got = *source.Read(absl::MakeSpan(buffer.data(), step));
    if (got == 0) break;
    mixed.insert(mixed.end(), buffer.begin(), buffer.begin() + static_cast<ptrdiff_t>(got));
  }
  EXPECT_TRUE(Bits(mixed) == Bits(Generate(100000, 99, 1000)));
}

TEST(RandomSourceTest, UniformOverMinusOneToOneOnTheDocumentedGrid) {
  const std::vector<float> values = Generate(1 << 22, 12345, 1 << 16);
  constexpr int kBins = 32;
  std::vector<int64_t> histogram(kBins, 0);
  double sum = 0;
  size_t negative = 0;
  for (float v : values) {
    ASSERT_GE(v, -1.0f);
    ASSERT_LT(v, 1.0f);
    const float scaled = v * 0x1p23f;  // An integer in [-2^23, 2^23).
    ASSERT_EQ(scaled, std::floor(scaled));
    negative += v < 0;
    sum += v;
    ++histogram[static_cast<size_t>((v + 1.0f) * (kBins / 2))];
  }
  EXPECT_GT(negative, 0u);
  EXPECT_LT(negative, values.size());
  // Mean within ~5 standard deviations (sigma of the mean = 1/sqrt(3n)).
  EXPECT_NEAR(sum / static_cast<double>(values.size()), 0.0,
              5.0 / std::sqrt(3.0 * static_cast<double>(values.size())));
  const double expected = static_cast<double>(values.size()) / kBins;
  for (int64_t count : histogram)
    EXPECT_NEAR(static_cast<double>(count), expected, 6 * std::sqrt(expected));
}

}  // namespace
}  // namespace gpureduce::client
