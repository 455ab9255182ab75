#include "client/cli/array_output.h"

#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "client/array_layout.h"
#include "client/cli/reduce_output.h"
#include "client/input/element_codec.h"
#include "common/reduction/dtype.h"
#include "wire/op_mapping.h"

namespace gpureduce::cli {
namespace {

bool IsArgOp(v1::Op op) {
  return op == v1::ARGMIN || op == v1::ARGMAX || op == v1::NANARGMIN || op == v1::NANARGMAX;
}

// An array result's elements as numbers.
class Values {
 public:
  explicit Values(const v1::OpResult& result)
      : result_(result),
        dtype_(result.dtype() == v1::DTYPE_UNSPECIFIED ? DType::kFloat32
                                                       : static_cast<DType>(result.dtype())),
        integer_(IsInteger(dtype_) || IsArgOp(result.op())),
        shape_(result.shape().begin(), result.shape().end()) {
    if (integer_ && IsArgOp(result.op())) dtype_ = DType::kInt64;
    const uint64_t available = result.data().size() / DTypeSize(dtype_);
    count_ = 1;
    for (const uint64_t extent : shape_) count_ *= extent;
    if (count_ > available) count_ = available;  // a short answer shows what it has
  }

  const std::vector<uint64_t>& shape() const { return shape_; }
  uint64_t count() const { return count_; }

  std::string Text(uint64_t k) const {
    const char* data = result_.data().data();
    if (integer_) {
      const int64_t value = client::ElementAsInt(dtype_, data, k);
      return FormatTypedValue(result_.dtype(), static_cast<double>(value), value, true);
    }
    return FormatTypedValue(result_.dtype(), client::ElementAsDouble(dtype_, data, k), 0, false);
  }
  Json JsonValue(uint64_t k) const {
    const char* data = result_.data().data();
    if (integer_) return client::ElementAsInt(dtype_, data, k);
    return JsonNumber(client::ElementAsDouble(dtype_, data, k));
  }

 private:
  const v1::OpResult& result_;
  DType dtype_;
  bool integer_;
  std::vector<uint64_t> shape_;
  uint64_t count_ = 0;
};

uint64_t InnerCount(const std::vector<uint64_t>& shape, size_t depth) {
  uint64_t inner = 1;
  for (size_t j = depth + 1; j < shape.size(); ++j) inner *= shape[j];
  return inner;
}

// The subarray at `depth` whose first element is `offset`, NumPy's array2string layout.
void Nest(const Values& values, bool summarize, absl::string_view indent, size_t depth,
          uint64_t offset, std::string& out) {
  const std::vector<uint64_t>& shape = values.shape();
  if (depth == shape.size()) {
    absl::StrAppend(&out, offset < values.count() ? values.Text(offset) : "?");
    return;
  }
  const uint64_t extent = shape[depth];
  const uint64_t inner = InnerCount(shape, depth);
  const bool last_axis = depth + 1 == shape.size();
  const std::string separator = last_axis
                                    ? ", "
                                    : absl::StrCat(",", std::string(shape.size() - depth - 1, '\n'),
                                                   indent, std::string(depth + 1, ' '));
  out.push_back('[');
  for (uint64_t i = 0; i < extent; ++i) {
    if (i > 0) out += separator;
    if (summarize && extent > 2 * kEdgeItems && i == kEdgeItems) {
      out += "...";
      out += separator;
      i = extent - kEdgeItems;
    }
    Nest(values, summarize, indent, depth + 1, offset + i * inner, out);
  }
  out.push_back(']');
}

Json NestJson(const Values& values, size_t depth, uint64_t offset) {
  const std::vector<uint64_t>& shape = values.shape();
  if (depth == shape.size()) {
    return offset < values.count() ? values.JsonValue(offset) : Json(nullptr);
  }
  Json out = Json::array();
  const uint64_t inner = InnerCount(shape, depth);
  for (uint64_t i = 0; i < shape[depth]; ++i) {
    out.push_back(NestJson(values, depth + 1, offset + i * inner));
  }
  return out;
}

}  // namespace

std::string FormatArrayValues(const v1::OpResult& result, absl::string_view indent) {
  const Values values(result);
  uint64_t elements = 1;
  for (const uint64_t extent : values.shape()) elements *= extent;
  std::string out;
  Nest(values, elements > kSummarizeAbove, indent, 0, 0, out);
  return out;
}

std::string FormatArrayResultsText(const v1::ReduceResponse& response) {
  std::string out;
  for (const v1::OpResult& result : response.results()) {
    const std::vector<uint64_t> shape(result.shape().begin(), result.shape().end());
    std::string dtype = absl::AsciiStrToLower(
        v1::DType_Name(result.dtype() == v1::DTYPE_UNSPECIFIED ? v1::FLOAT32 : result.dtype()));
    if (IsArgOp(result.op())) absl::StrAppend(&dtype, " indices");
    absl::StrAppend(&out, "result: ", wire::OpName(result.op()), " (", dtype, ", shape ",
                    client::ShapeText(shape));
    if (result.overflow_count() > 0) {
      absl::StrAppend(&out, "; ", result.overflow_count(),
                      result.overflow_count() == 1 ? " element" : " elements",
                      " overflowed: wrapped modulo 2^64 as NumPy does");
    }
    absl::StrAppend(&out, ") =");
    if (shape.size() >= 2) {
      absl::StrAppend(&out, "\n  ", FormatArrayValues(result, "  "), "\n");
    } else {
      absl::StrAppend(&out, " ", FormatArrayValues(result), "\n");
    }
  }
  return out;
}

Json ArrayValuesJson(const v1::OpResult& result) { return NestJson(Values(result), 0, 0); }

}  // namespace gpureduce::cli
