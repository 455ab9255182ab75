#pragma once

// The payload's element types. Plain C++ with no dependencies, so CUDA sources include it too
// (names live in dtype_name.h).

#include <cstddef>

namespace gpureduce {

// Values match gpureduce.v1.DType (whose 0, unset, means float32).
enum class DType : int {
  kFloat32 = 1,
  kFloat16 = 2,   // IEEE 754 binary16
  kBFloat16 = 3,  // the upper 16 bits of a float32
  kFloat64 = 4,
  kInt32 = 5,
  kInt64 = 6,
};

inline constexpr DType kAllDTypes[] = {DType::kFloat32, DType::kFloat16, DType::kBFloat16,
                                       DType::kFloat64, DType::kInt32,   DType::kInt64};

constexpr size_t DTypeSize(DType dtype) {
  switch (dtype) {
    case DType::kFloat16:
    case DType::kBFloat16:
      return 2;
    case DType::kFloat64:
    case DType::kInt64:
      return 8;
    case DType::kFloat32:
    case DType::kInt32:
      return 4;
  }
  return 4;
}

constexpr bool IsInteger(DType dtype) { return dtype == DType::kInt32 || dtype == DType::kInt64; }

}  // namespace gpureduce
