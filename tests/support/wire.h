#pragma once

// Building wire messages in tests: a spec, and floats as the `data` field's bytes.

#include <cstdint>
#include <span>
#include <string>

#include "gpureduce/v1/reduce.pb.h"

namespace gpureduce::testing {

v1::ReduceSpec Spec(v1::Op op, const std::string& kernel = "", uint32_t block_size = 0,
                    uint64_t expected_count = 0);

// Little-endian float32, as `data` carries it.
std::string Bytes(std::span<const float> data);

}  // namespace gpureduce::testing
