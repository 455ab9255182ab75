#include "common/reduction/result_encoding.h"

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>

namespace gpureduce {
namespace {

template <typename T>
void Store(T value, std::byte* out) {
  std::memcpy(out, &value, sizeof(T));  // x86-64 and every other target here: little-endian
}

// A float16's bits for `value`, exactly one (RoundToDType made it so), or NaN.
uint16_t HalfBits(double value) {
  if (std::isnan(value)) return 0x7e00;
  const uint16_t sign = std::signbit(value) ? 0x8000 : 0;
  const double magnitude = std::fabs(value);
  if (std::isinf(magnitude)) return sign | 0x7c00;
  if (magnitude < 0x1p-14) {  // subnormal (or zero): a multiple of 2^-24
    return sign | static_cast<uint16_t>(magnitude * 0x1p24);
  }
  int exponent = 0;
  const double fraction = std::frexp(magnitude, &exponent);  // in [0.5, 1)
  const auto mantissa = static_cast<uint16_t>((fraction * 2 - 1) * 1024);
  return sign | static_cast<uint16_t>((exponent - 1 + 15) << 10) | mantissa;
}

}  // namespace

void EncodeResult(const OpResult& result, std::byte* out) {
  if (OpReturnsIndex(result.op) || result.dtype == DType::kInt64) {
    Store<int64_t>(result.int_value, out);
    return;
  }
  switch (result.dtype) {
    case DType::kInt32:
      Store<int32_t>(static_cast<int32_t>(result.int_value), out);
      return;
    case DType::kFloat64:
      Store<double>(result.value, out);
      return;
    case DType::kFloat32:
      Store<float>(static_cast<float>(result.value), out);
      return;
    case DType::kFloat16:
      Store<uint16_t>(HalfBits(result.value), out);
      return;
    case DType::kBFloat16: {
      const auto bits = std::bit_cast<uint32_t>(static_cast<float>(result.value));
      Store<uint16_t>(std::isnan(result.value) ? uint16_t{0x7fc0} : uint16_t(bits >> 16), out);
      return;
    }
    case DType::kInt64:
      return;  // above
  }
}

}  // namespace gpureduce
