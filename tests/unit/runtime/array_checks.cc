#include "tests/unit/runtime/array_checks.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "common/reduction/op_name.h"
#include "tests/unit/kernels/stats_reference.h"

namespace gpureduce::runtime {
namespace {

using testing::TypedArray;

// Output `o`'s answer rebuilt from the array's bytes, as FinalizeOp would have given it.
OpResult Decode(const ArrayResult& array, uint64_t o, const TypedArray& own) {
  OpResult result;
  result.op = array.op;
  result.dtype = array.dtype;
  const char* at = array.data.data() + o * DTypeSize(array.dtype);
  int64_t integer = 0;
  switch (array.dtype) {
    case DType::kFloat16:
    case DType::kBFloat16: {
      uint16_t bits = 0;
      std::memcpy(&bits, at, 2);
      result.value = array.dtype == DType::kFloat16 ? testing::DecodeHalf(bits)
                                                    : testing::DecodeBFloat16(bits);
      break;
    }
    case DType::kFloat32: {
      float value = 0;
      std::memcpy(&value, at, 4);
      result.value = value;
      break;
    }
    case DType::kFloat64:
      std::memcpy(&result.value, at, 8);
      break;
    case DType::kInt32: {
      int32_t value = 0;
      std::memcpy(&value, at, 4);
      integer = value;
      break;
    }
    case DType::kInt64:
      std::memcpy(&integer, at, 8);
      break;
  }
  if (IsInteger(array.dtype)) {
    result.int_value = integer;
    result.value = static_cast<double>(integer);
  }
  if (OpReturnsIndex(array.op)) {
    result.index = integer;
    result.value = integer >= 0 && static_cast<size_t>(integer) < own.size()
                       ? own.values[static_cast<size_t>(integer)]
                       : NAN;
  }
  return result;
}

}  // namespace

// Each output's elements in C order, by the test's own walk over every element's multi-index.
std::vector<std::vector<uint64_t>> Gather(const std::vector<uint64_t>& shape,
                                          const std::vector<int32_t>& axes, uint64_t count) {
  std::vector<bool> reduced(shape.size(), axes.empty());
  for (int32_t axis : axes) reduced[axis < 0 ? axis + int32_t(shape.size()) : axis] = true;
  uint64_t outputs = 1;
  for (size_t i = 0; i < shape.size(); ++i) outputs *= reduced[i] ? 1 : shape[i];
  std::vector<std::vector<uint64_t>> members(outputs);
  for (uint64_t e = 0; e < count; ++e) {
    uint64_t rest = e;
    uint64_t output = 0;
    uint64_t scale = 1;
    for (size_t i = shape.size(); i-- > 0;) {
      const uint64_t digit = rest % shape[i];
      rest /= shape[i];
      if (!reduced[i]) {
        output += digit * scale;
        scale *= shape[i];
      }
    }
    members[output].push_back(e);
  }
  return members;
}

TypedArray Pick(const TypedArray& array, const std::vector<uint64_t>& members) {
  if (IsInteger(array.dtype)) {
    std::vector<int64_t> ints;
    for (uint64_t e : members) ints.push_back(array.ints[e]);
    return testing::FromInts(array.dtype, ints);
  }
  std::vector<double> values;
  for (uint64_t e : members) values.push_back(array.values[e]);
  return testing::FromValues(array.dtype, values);
}

// Every op's every output against the reference; the failures, one a line (at most 12).
std::string Check(std::span<const Op> ops, const std::vector<ArrayResult>& arrays,
                  const TypedArray& array, const std::vector<std::vector<uint64_t>>& members) {
  std::string failures;
  int shown = 0;
  for (size_t i = 0; i < ops.size(); ++i) {
    uint64_t overflows = 0;
    for (uint64_t o = 0; o < members.size() && shown < 12; ++o) {
      const TypedArray own = Pick(array, members[o]);
      testing::Expected expected = testing::ReferenceOf(ops[i], own, 1);
      overflows += expected.overflow ? 1 : 0;
      expected.overflow = false;  // per output only counted
      const std::string error = testing::CheckResult(expected, Decode(arrays[i], o, own));
      if (error.empty()) continue;
      failures += absl::StrCat("output ", o, " ", OpName(ops[i]), ": ", error, "\n");
      ++shown;
    }
    if (shown == 0 && overflows != arrays[i].overflow_count) {
      failures += absl::StrCat(OpName(ops[i]), ": overflow_count ", arrays[i].overflow_count,
                               ", expected ", overflows, "\n");
    }
  }
  return failures;
}

// Cuts at random places: single elements, a few, many.
std::vector<uint64_t> RandomCuts(uint64_t count, std::mt19937_64& random) {
  std::vector<uint64_t> cuts;
  uint64_t at = 0;
  while (at < count) {
    const uint64_t kinds[] = {1, 1 + random() % 7, 1 + random() % 500, 1 + random() % 100000};
    at = std::min(count, at + kinds[random() % 4]);
    cuts.push_back(at);
  }
  return cuts;
}

// Each segment's elements, by index, for segments of `lengths` one after another.
std::vector<std::vector<uint64_t>> MembersOf(const std::vector<uint64_t>& lengths) {
  std::vector<std::vector<uint64_t>> members;
  uint64_t at = 0;
  for (uint64_t length : lengths) {
    members.emplace_back();
    for (uint64_t e = at; e < at + length; ++e) members.back().push_back(e);
    at += length;
  }
  return members;
}

}  // namespace gpureduce::runtime
