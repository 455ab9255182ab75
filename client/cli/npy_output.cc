#include "client/cli/npy_output.h"

#include <cerrno>
#include <cstring>
#include <fstream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "client/array_layout.h"
#include "client/input/element_codec.h"
#include "wire/op_mapping.h"

namespace gpureduce::cli {
namespace {

absl::string_view Descr(v1::DType dtype) {
  switch (dtype) {
    case v1::FLOAT16:
      return "<f2";
    case v1::FLOAT64:
      return "<f8";
    case v1::INT32:
      return "<i4";
    case v1::INT64:
      return "<i8";
    default:
      return "<f4";
  }
}

template <typename T>
std::string Bytes(T value) {
  std::string out(sizeof(T), '\0');
  std::memcpy(out.data(), &value, sizeof(T));
  return out;
}

bool IsArgOp(v1::Op op) {
  return op == v1::ARGMIN || op == v1::ARGMAX || op == v1::NANARGMIN || op == v1::NANARGMAX;
}

// A full reduction's result as one element of its dtype (the value is already rounded to it).
std::string ScalarBytes(const v1::OpResult& result) {
  if (IsArgOp(result.op())) return Bytes<int64_t>(result.index());
  switch (result.dtype()) {
    case v1::FLOAT16:
      return Bytes<uint16_t>(client::DoubleToHalf(result.value()));
    case v1::FLOAT64:
      return Bytes<double>(result.value());
    case v1::INT32:
      return Bytes<int32_t>(static_cast<int32_t>(result.int_value()));
    case v1::INT64:
      return Bytes<int64_t>(result.int_value());
    default:  // float32, and bfloat16 as float32, which holds every bfloat16 value
      return Bytes<float>(static_cast<float>(result.value()));
  }
}

}  // namespace

std::string NpyFileBytes(v1::DType dtype, const std::vector<uint64_t>& shape,
                         absl::string_view data) {
  std::string dict =
      absl::StrCat("{'descr': '", Descr(dtype),
                   "', 'fortran_order': False, 'shape': ", client::ShapeText(shape), ", }");
  // Magic (6), version (2) and the header's length (2 bytes in 1.0, 4 in 2.0), then the dict
  // padded with spaces and ended with '\n' so that the data starts at a multiple of 64.
  const bool version2 = dict.size() + 64 > 65535;
  const size_t preamble = version2 ? 12 : 10;
  dict.append((64 - (preamble + dict.size() + 1) % 64) % 64, ' ');
  dict.push_back('\n');
  std::string out("\x93NUMPY", 6);
  out.push_back(version2 ? 2 : 1);
  out.push_back(0);
  for (size_t i = 0; i < preamble - 8; ++i) {
    out.push_back(static_cast<char>((dict.size() >> (8 * i)) & 0xff));
  }
  absl::StrAppend(&out, dict, data);
  return out;
}

std::string ResultNpyBytes(const v1::OpResult& result) {
  v1::DType dtype = result.dtype() == v1::DTYPE_UNSPECIFIED ? v1::FLOAT32 : result.dtype();
  if (dtype == v1::BFLOAT16) dtype = v1::FLOAT32;  // NumPy has no bfloat16
  if (result.shape_size() == 0 && result.data().empty()) {
    return NpyFileBytes(dtype, {}, ScalarBytes(result));
  }
  const std::vector<uint64_t> shape(result.shape().begin(), result.shape().end());
  if (result.dtype() != v1::BFLOAT16) return NpyFileBytes(dtype, shape, result.data());
  // Each bfloat16 is the upper half of the float32 of the same value.
  std::string floats;
  floats.reserve(result.data().size() * 2);
  for (size_t i = 0; i + 1 < result.data().size(); i += 2) {
    floats.append(2, '\0');
    floats.append(result.data(), i, 2);
  }
  return NpyFileBytes(dtype, shape, floats);
}

std::vector<std::string> OutputPaths(const std::string& file, const std::vector<v1::Op>& ops) {
  if (ops.size() == 1) return {file};
  const absl::string_view stem =
      absl::EndsWith(file, ".npy") ? absl::string_view(file).substr(0, file.size() - 4) : file;
  std::vector<std::string> paths;
  for (const v1::Op op : ops) paths.push_back(absl::StrCat(stem, ".", wire::OpName(op), ".npy"));
  return paths;
}

absl::StatusOr<std::vector<std::string>> WriteResultFiles(const std::string& file,
                                                          const v1::ReduceResponse& response) {
  std::vector<v1::Op> ops;
  for (const v1::OpResult& result : response.results()) ops.push_back(result.op());
  if (ops.empty()) {
    return absl::FailedPreconditionError(
        "--output: the server sent no typed results to write (a server older than dtypes?)");
  }
  const std::vector<std::string> paths = OutputPaths(file, ops);
  for (int i = 0; i < response.results_size(); ++i) {
    const std::string bytes = ResultNpyBytes(response.results(i));
    std::ofstream out(paths[i], std::ios::binary | std::ios::trunc);
    if (out) out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    if (out) out.close();
    if (!out) {
      return absl::PermissionDeniedError(
          absl::StrCat("--output: cannot write ", paths[i], ": ", std::strerror(errno)));
    }
  }
  return paths;
}

}  // namespace gpureduce::cli
