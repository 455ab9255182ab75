#include "tests/support/wire.h"

namespace gpureduce::testing {

v1::ReduceSpec Spec(v1::Op op, const std::string& kernel, uint32_t block_size,
                    uint64_t expected_count) {
  v1::ReduceSpec spec;
  spec.set_op(op);
  spec.set_kernel(kernel);
  spec.set_block_size(block_size);
  spec.set_expected_count(expected_count);
  return spec;
}

std::string Bytes(std::span<const float> data) {
  return std::string(reinterpret_cast<const char*>(data.data()), data.size_bytes());
}

}  // namespace gpureduce::testing
