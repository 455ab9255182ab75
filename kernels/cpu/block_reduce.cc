// Temporary scalar stats kernel (replaced by the vectorized one on branch i22-cpu).
#include <bit>
#include <cmath>
#include <cstring>

#include "kernels/reduce.h"

namespace gpureduce::kernels::cpu {
namespace {

float HalfToFloat(uint16_t h) {
  const uint32_t sign = uint32_t(h & 0x8000) << 16;
  const uint32_t em = h & 0x7fff;
  float f = std::bit_cast<float>(em << 13) * 0x1p112f;
  if ((h & 0x7c00) == 0x7c00) f = std::bit_cast<float>((em << 13) | 0x7f800000u);
  return std::bit_cast<float>(std::bit_cast<uint32_t>(f) | sign);
}

template <typename T>
T Load(const std::byte* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

double FloatAt(DType dtype, const std::byte* p) {
  switch (dtype) {
    case DType::kFloat16: return HalfToFloat(Load<uint16_t>(p));
    case DType::kBFloat16: return std::bit_cast<float>(uint32_t(Load<uint16_t>(p)) << 16);
    case DType::kFloat64: return Load<double>(p);
    case DType::kInt32: return Load<int32_t>(p);
    case DType::kInt64: return static_cast<double>(Load<int64_t>(p));
    default: return Load<float>(p);
  }
}

int64_t IntAt(DType dtype, const std::byte* p) {
  return dtype == DType::kInt32 ? Load<int32_t>(p) : Load<int64_t>(p);
}

}  // namespace

Stats ReduceBlock(const StatsRequest& request, std::span<const std::byte> bytes,
                  uint64_t base_index) {
  const size_t size = DTypeSize(request.dtype);
  const size_t n = bytes.size() / size;
  const bool integer = IsInteger(request.dtype);
  Stats total;
  total.integer = integer;
  for (size_t i = 0; i < n; ++i) {
    Stats one;
    one.integer = integer;
    one.count = 1;
    const int64_t index = static_cast<int64_t>(base_index + i);
    const std::byte* p = bytes.data() + i * size;
    const double x = FloatAt(request.dtype, p);
    if (!integer && std::isnan(x)) {
      one.nan_count = 1;
      one.first_nan = index;
    } else {
      one.sum = integer ? 0.0 : x;
      if (integer) {
        one.int_sum = IntAt(request.dtype, p);
        one.int_prod = static_cast<uint64_t>(one.int_sum);
        one.int_prod_zero = one.int_sum == 0;
        one.int_min = one.int_max = one.int_sum;
      }
      one.sum_squares = x * x;
      int exponent = 0;
      one.prod = std::frexp(x, &exponent);
      one.prod_exponent = exponent;
      one.min = one.max = x;
      one.min_index = one.max_index = index;
      one.mean = x;
    }
    total = MergeStats(total, one);
  }
  return total;
}

}  // namespace gpureduce::kernels::cpu
