// GallopFrom (kernels/cpu/bound_search.h) against std::partition_point, over sorted bounds with
// runs of equal ones (empty segments), for every guess from before the first to past the end.

#include "kernels/cpu/bound_search.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <random>
#include <span>
#include <vector>

#include "gtest/gtest.h"
#include "tests/support/random_data.h"

namespace gpureduce::kernels::cpu {
namespace {

// Bounds of `count` segments of random lengths (a third empty) from `first` on.
std::vector<uint64_t> RandomBounds(std::mt19937_64& random, size_t count, uint64_t first) {
  std::vector<uint64_t> bounds{first};
  std::uniform_int_distribution<uint64_t> length(0, 40);
  for (size_t s = 0; s < count; ++s) {
    const uint64_t l = length(random);
    bounds.push_back(bounds.back() + (l % 3 == 0 ? 0 : l));
  }
  return bounds;
}

TEST(GallopFromTest, FindsWhatPartitionPointFindsFromEveryGuess) {
  const uint64_t seed = testing::FreshSeed();
  SCOPED_TRACE(testing::SeedTrace(seed));
  std::mt19937_64 random(seed);
  for (const size_t count : {0, 1, 2, 31, 1000}) {
    const std::vector<uint64_t> bounds = RandomBounds(random, count, 7);
    const std::span<const uint64_t> all(bounds);
    std::vector<uint64_t> values{0, 6, 7, 8, bounds.back(), bounds.back() + 1};
    std::uniform_int_distribution<uint64_t> any(0, bounds.back() + 2);
    for (int k = 0; k < 30; ++k) values.push_back(any(random));
    for (const uint64_t v : values) {
      const auto upper = [v](uint64_t b) { return b <= v; };
      const auto lower = [v](uint64_t b) { return b < v; };
      const auto want_upper =
          static_cast<size_t>(std::partition_point(all.begin(), all.end(), upper) - all.begin());
      const auto want_lower =
          static_cast<size_t>(std::partition_point(all.begin(), all.end(), lower) - all.begin());
      for (size_t guess = 0; guess <= bounds.size() + 2; ++guess) {
        ASSERT_EQ(GallopFrom(all, guess, upper), want_upper) << count << " " << v << " " << guess;
        ASSERT_EQ(GallopFrom(all, guess, lower), want_lower) << count << " " << v << " " << guess;
      }
    }
  }
}

TEST(GallopFromTest, EmptyBoundsGiveZero) {
  EXPECT_EQ(GallopFrom(std::span<const uint64_t>(), 0, [](uint64_t) { return true; }), 0u);
  EXPECT_EQ(GallopFrom(std::span<const uint64_t>(), 5, [](uint64_t) { return false; }), 0u);
}

TEST(UniformGuessTest, PutsAnElementInItsSegmentWhereSegmentsShareALength) {
  for (uint64_t at = 0; at < 1600; ++at) EXPECT_EQ(UniformGuess(at, 1600, 100), at / 16);
  EXPECT_EQ(UniformGuess(5, 0, 10), 0u);
  EXPECT_EQ(UniformGuess(1600, 1600, 100), 100u);  // past the elements: the last bound
  EXPECT_EQ(UniformGuess(uint64_t{1} << 62, uint64_t{1} << 63, size_t{1} << 40), size_t{1} << 39);
}

}  // namespace
}  // namespace gpureduce::kernels::cpu
