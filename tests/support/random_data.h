#pragma once

// Fresh random test inputs. Every run draws a new seed (print it on failure with SeedTrace);
// GPUREDUCE_TEST_SEED=<n> in the environment replays a run.

#include <cstdint>
#include <string>
#include <vector>

namespace gpureduce::testing {

// A new seed per call, or the fixed one from GPUREDUCE_TEST_SEED.
uint64_t FreshSeed();

// "seed=<n>" for SCOPED_TRACE.
std::string SeedTrace(uint64_t seed);

// Mixed sign and magnitude: +/- m * 2^e with m uniform in [1, 2) and e uniform in [-10, 10].
std::vector<float> MixedSignData(size_t n, uint64_t seed);

// Mixed sign, magnitude within 1e-3 of 1: long products stay finite and meaningful.
std::vector<float> NearOneData(size_t n, uint64_t seed);

}  // namespace gpureduce::testing
