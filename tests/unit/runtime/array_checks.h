#pragma once

// An array request's result arrays checked against the independent reference (issue 23's
// shaped-session tests): each output's elements gathered by the test's own index arithmetic, its
// answer decoded from the array's bytes and compared with the reference over those elements.

#include <cstdint>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "common/reduction/op.h"
#include "runtime/backend.h"
#include "tests/unit/kernels/typed_array.h"

namespace gpureduce::runtime {

// Each output's elements in C order, by a walk over every element's multi-index.
std::vector<std::vector<uint64_t>> Gather(const std::vector<uint64_t>& shape,
                                          const std::vector<int32_t>& axes, uint64_t count);

// The elements of `array` at `members`.
testing::TypedArray Pick(const testing::TypedArray& array, const std::vector<uint64_t>& members);

// Every op's every output against the reference; the failures, one a line (at most 12).
std::string Check(std::span<const Op> ops, const std::vector<ArrayResult>& arrays,
                  const testing::TypedArray& array,
                  const std::vector<std::vector<uint64_t>>& members);

// Cuts at random places: single elements, a few, many.
std::vector<uint64_t> RandomCuts(uint64_t count, std::mt19937_64& random);

// Each segment's elements, by index, for segments of `lengths` one after another.
std::vector<std::vector<uint64_t>> MembersOf(const std::vector<uint64_t>& lengths);

}  // namespace gpureduce::runtime
