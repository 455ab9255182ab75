#include "wire/dtype_mapping.h"

#include <iterator>

#include "absl/strings/str_cat.h"
#include "common/reduction/op_name.h"

namespace gpureduce::wire {
namespace {

constexpr bool SameValue(DType dtype, v1::DType wire) { return static_cast<int>(dtype) == wire; }

static_assert(SameValue(DType::kFloat32, v1::FLOAT32));
static_assert(SameValue(DType::kFloat16, v1::FLOAT16));
static_assert(SameValue(DType::kBFloat16, v1::BFLOAT16));
static_assert(SameValue(DType::kFloat64, v1::FLOAT64));
static_assert(SameValue(DType::kInt32, v1::INT32));
static_assert(SameValue(DType::kInt64, v1::INT64));
// Every wire dtype but DTYPE_UNSPECIFIED has a domain dtype: a new one fails here until mapped.
static_assert(v1::DTYPE_UNSPECIFIED == 0 && std::size(kAllDTypes) + 1 == v1::DType_ARRAYSIZE);

}  // namespace

v1::DType ToProto(DType dtype) { return static_cast<v1::DType>(dtype); }

absl::StatusOr<DType> DTypeFromProto(int wire_value, const char* field) {
  if (wire_value == v1::DTYPE_UNSPECIFIED) return DType::kFloat32;
  for (DType dtype : kAllDTypes) {
    if (ToProto(dtype) == wire_value) return dtype;
  }
  return absl::InvalidArgumentError(
      absl::StrCat(field, ": unknown dtype ", wire_value, "; use one of ", DTypeNames()));
}

}  // namespace gpureduce::wire
