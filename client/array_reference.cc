#include "client/array_reference.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "client/input/element_codec.h"
#include "wire/op_mapping.h"

namespace gpureduce::client {
namespace {

// Gathered elements go to the reference this many bytes at a time.
constexpr size_t kBatchBytes = size_t{1} << 16;

// The payload's pieces as one run of elements.
class Elements {
 public:
  Elements(const std::vector<absl::string_view>& pieces, size_t element_size)
      : pieces_(pieces), size_(element_size) {
    starts_.push_back(0);
    for (const absl::string_view piece : pieces) {
      starts_.push_back(starts_.back() + piece.size() / element_size);
    }
  }

  // Appends elements [first, first + count) to `out`.
  void Append(uint64_t first, uint64_t count, std::string& out) {
    while (count > 0) {
      if (first < starts_[current_] || first >= starts_[current_ + 1]) {
        current_ = static_cast<size_t>(std::upper_bound(starts_.begin(), starts_.end(), first) -
                                       starts_.begin()) -
                   1;
      }
      const uint64_t here = std::min<uint64_t>(count, starts_[current_ + 1] - first);
      out.append(pieces_[current_].data() + (first - starts_[current_]) * size_, here * size_);
      first += here;
      count -= here;
    }
  }

 private:
  const std::vector<absl::string_view>& pieces_;
  const size_t size_;
  std::vector<uint64_t> starts_;  // the first element of each piece, then the total
  size_t current_ = 0;
};

// One output's elements, reduced as they are gathered.
class Output {
 public:
  Output(v1::Op op, DType dtype, double ddof) : reference_(op, dtype, ddof) {}

  void Add(Elements& elements, uint64_t first, uint64_t count) {
    elements.Append(first, count, buffer_);
    if (buffer_.size() >= kBatchBytes) Flush();
  }
  const TypedReference& Finish() {
    Flush();
    return reference_;
  }

 private:
  void Flush() {
    reference_.AddBytes(buffer_);
    buffer_.clear();
  }

  TypedReference reference_;
  std::string buffer_;
};

// Counts `index` up in C order over `extents`, moving `offset` by `strides`; false once it wraps.
bool Next(const std::vector<uint64_t>& extents, const std::vector<uint64_t>& strides,
          std::vector<uint64_t>& index, uint64_t& offset) {
  for (size_t j = extents.size(); j-- > 0;) {
    offset += strides[j];
    if (++index[j] < extents[j]) return true;
    offset -= strides[j] * extents[j];
    index[j] = 0;
  }
  return false;
}

bool IsArgOp(v1::Op op) {
  return op == v1::ARGMIN || op == v1::ARGMAX || op == v1::NANARGMIN || op == v1::NANARGMAX;
}

// Element `k` of `shape` as its index: "[3, 0]" ("[]" for a 0-d array).
std::string IndexText(uint64_t k, const std::vector<uint64_t>& shape) {
  std::vector<uint64_t> index(shape.size());
  for (size_t j = shape.size(); j-- > 0;) {
    if (shape[j] == 0) break;
    index[j] = k % shape[j];
    k /= shape[j];
  }
  return absl::StrCat("[", absl::StrJoin(index, ", "), "]");
}

DType FromWire(v1::DType dtype) {
  return dtype == v1::DTYPE_UNSPECIFIED ? DType::kFloat32 : static_cast<DType>(dtype);
}

}  // namespace

ArrayAnswers ComputeArrayAnswers(const ArrayLayout& layout, const std::vector<v1::Op>& ops,
                                 DType dtype, double ddof,
                                 const std::vector<absl::string_view>& pieces) {
  ArrayAnswers answers(ops.size());
  if (ops.empty()) return answers;
  Elements elements(pieces, DTypeSize(dtype));
  const auto finish = [&](Output& output) {
    const TypedReference& reference = output.Finish();
    for (size_t i = 0; i < ops.size(); ++i) answers[i].push_back(reference.answer(ops[i]));
  };
  if (!layout.segments.empty()) {
    uint64_t first = 0;
    for (const uint64_t length : layout.segments) {
      Output output(ops.front(), dtype, ddof);
      output.Add(elements, first, length);
      finish(output);
      first += length;
    }
    return answers;
  }
  // The kept axes enumerate the outputs, the reduced ones each output's elements, both in C order.
  const std::vector<bool> reduced = ReducedAxes(layout);
  std::vector<uint64_t> strides(layout.shape.size(), 1);
  for (size_t i = layout.shape.size(); i-- > 1;) strides[i - 1] = strides[i] * layout.shape[i];
  std::vector<uint64_t> kept_extents, kept_strides, reduced_extents, reduced_strides;
  for (size_t i = 0; i < layout.shape.size(); ++i) {
    (reduced[i] ? reduced_extents : kept_extents).push_back(layout.shape[i]);
    (reduced[i] ? reduced_strides : kept_strides).push_back(strides[i]);
  }
  uint64_t outputs = 1, per_output = 1;
  for (const uint64_t extent : kept_extents) outputs *= extent;
  for (const uint64_t extent : reduced_extents) per_output *= extent;
  // The innermost reduced axis, when it is the shape's last, is read as runs.
  uint64_t run = 1;
  if (!reduced_strides.empty() && reduced_strides.back() == 1) {
    run = reduced_extents.back();
    reduced_extents.pop_back();
    reduced_strides.pop_back();
  }
  std::vector<uint64_t> kept_index(kept_extents.size()), reduced_index(reduced_extents.size());
  uint64_t base = 0;
  for (uint64_t o = 0; o < outputs; ++o) {
    Output output(ops.front(), dtype, ddof);
    if (per_output > 0) {
      uint64_t offset = base;
      do {
        output.Add(elements, offset, run);
      } while (Next(reduced_extents, reduced_strides, reduced_index, offset));
    }
    finish(output);
    Next(kept_extents, kept_strides, kept_index, base);
  }
  return answers;
}

std::string CheckArrayResult(const v1::OpResult& result, v1::Op op,
                             const std::vector<uint64_t>& shape,
                             const std::vector<TypedReference::Answer>& expected,
                             double tolerance) {
  const std::string name = wire::OpName(op);
  if (result.op() != op) {
    return absl::StrCat(name, ": the result is for ", wire::OpName(result.op()));
  }
  const std::vector<uint64_t> got_shape(result.shape().begin(), result.shape().end());
  if (got_shape != shape) {
    return absl::StrCat(name, ": result shape ", ShapeText(got_shape), ", expected ",
                        ShapeText(shape));
  }
  if (expected.empty()) {
    return result.data().empty()
               ? ""
               : absl::StrCat(name, ": ", result.data().size(), " bytes for no element");
  }
  if (result.dtype() != expected.front().dtype) {
    return absl::StrCat(name, ": result dtype ", v1::DType_Name(result.dtype()), ", expected ",
                        v1::DType_Name(expected.front().dtype));
  }
  const DType dtype = FromWire(result.dtype());
  if (result.data().size() != expected.size() * DTypeSize(dtype)) {
    return absl::StrCat(name, ": ", result.data().size(), " bytes of data for ", expected.size(),
                        " elements of ", DTypeSize(dtype), " bytes");
  }
  const uint64_t overflows = static_cast<uint64_t>(std::count_if(
      expected.begin(), expected.end(), [](const auto& answer) { return answer.overflow; }));
  if (result.overflow_count() != overflows) {
    return absl::StrCat(name, ": overflow_count ", result.overflow_count(), ", expected ",
                        overflows);
  }
  const char* data = result.data().data();
  v1::OpResult one;  // each element in turn, as a full reduction's result
  one.set_op(op);
  one.set_dtype(result.dtype());
  for (uint64_t k = 0; k < expected.size(); ++k) {
    one.set_index(-1);
    if (IsArgOp(op)) {
      const int64_t index = ElementAsInt(DType::kInt64, data, k);
      one.set_index(index);
      one.set_int_value(index);
    } else if (expected[k].integer) {
      one.set_int_value(ElementAsInt(dtype, data, k));
      one.set_value(ElementAsDouble(dtype, data, k));
      one.set_overflow(expected[k].overflow);  // per element the wire says only how many
    } else {
      one.set_value(ElementAsDouble(dtype, data, k));
    }
    if (std::string problem = CheckOpResult(one, op, expected[k], tolerance); !problem.empty()) {
      return absl::StrCat(problem, " at ", IndexText(k, shape));
    }
  }
  return "";
}

}  // namespace gpureduce::client
