#include "tests/support/random_data.h"

#include <cmath>
#include <cstdlib>
#include <random>

namespace gpureduce::testing {

uint64_t FreshSeed() {
  if (const char* fixed = std::getenv("GPUREDUCE_TEST_SEED"))
    return std::strtoull(fixed, nullptr, 10);
  static std::random_device device;
  return (uint64_t{device()} << 32) ^ device();
}

std::string SeedTrace(uint64_t seed) {
  return "seed=" + std::to_string(seed) + " (replay with GPUREDUCE_TEST_SEED)";
}

std::vector<float> MixedSignData(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> mantissa(1.0f, 2.0f);
  std::uniform_int_distribution<int> exponent(-10, 10);
  std::bernoulli_distribution negative(0.5);
  std::vector<float> data(n);
  for (float& x : data) {
    x = std::ldexp(mantissa(rng), exponent(rng));
    if (negative(rng)) x = -x;
  }
  return data;
}

std::vector<float> NearOneData(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> offset(-1e-3f, 1e-3f);
  std::bernoulli_distribution negative(0.5);
  std::vector<float> data(n);
  for (float& x : data) {
    x = 1.0f + offset(rng);
    if (negative(rng)) x = -x;
  }
  return data;
}

}  // namespace gpureduce::testing
