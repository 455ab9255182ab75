// This instruction set's table of passes (block_reduce.h), and the widening of 16-bit floats.

#include <cstddef>
#include <cstdint>

#include "kernels/cpu/block_reduce.h"
#include "kernels/cpu/element_load.h"

namespace gpureduce::kernels::cpu::GPUREDUCE_CPU_PASSES {
namespace {

// A loop that does nothing else vectorizes; inside the passes' loops the conversion did not.
void Widen(bool half, const uint16_t* in, size_t size, float* out) {
  if (half) {
    for (size_t i = 0; i < size; ++i) out[i] = HalfToFloat(in[i]);
  } else {
    for (size_t i = 0; i < size; ++i) out[i] = BFloat16ToFloat(in[i]);
  }
}

}  // namespace

const Passes kPasses = {AddSums, AddExtremes, AddProduct, Widen};

}  // namespace gpureduce::kernels::cpu::GPUREDUCE_CPU_PASSES
