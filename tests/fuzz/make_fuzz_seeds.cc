// Writes the committed seed corpora of tests/fuzz/corpus/: small meaningful inputs, valid and
// invalid, for every fuzz target. Run from the fuzz build after changing it:
//   cmake --build --preset fuzz --target make_fuzz_seeds
//   build/fuzz/tests/fuzz/make_fuzz_seeds tests/fuzz/corpus

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "gpureduce/v1/reduce.pb.h"
#include "tests/support/npy_bytes.h"
#include "tests/support/wire.h"

namespace gpureduce::fuzzing {
namespace {

namespace fs = std::filesystem;

void Write(const fs::path& dir, const std::string& name, absl::string_view bytes) {
  fs::create_directories(dir);
  std::ofstream out(dir / name, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out.good()) {
    std::fprintf(stderr, "cannot write %s\n", (dir / name).c_str());
    std::exit(1);
  }
}

using testing::NpyDict;
using testing::Spec;

std::string FloatBytes(std::initializer_list<float> values) {
  return testing::Bytes(std::vector<float>(values));
}

// Mixed signs and magnitudes, a length that is not a power of two.
const std::initializer_list<float> kMixed = {1.5f, -2.25f, 1e3f, -7e-3f, 3.0f, 0.5f, -1e4f};
const std::initializer_list<float> kSpecial = {1.0f, -0.0f, INFINITY, -INFINITY, NAN, 1e-45f, 2.0f};

// Byte 0 of a request-path input: bit 0 stream, bits 1-2 the misalignment of `data`, bit 3 the
// payload repeated across several CPU tasks.
std::string Unary(const v1::ReduceRequest& request, int offset = 0, bool tiled = false) {
  return std::string(1, static_cast<char>((offset << 1) | (tiled ? 8 : 0))) +
         request.SerializeAsString();
}

std::string Stream(const std::vector<v1::ReduceChunk>& chunks, int offset = 0) {
  std::string out(1, static_cast<char>((offset << 1) | 1));
  for (const v1::ReduceChunk& chunk : chunks) {
    const std::string message = chunk.SerializeAsString();
    for (uint64_t size = message.size();; size >>= 7) {  // varint length prefix
      out.push_back(static_cast<char>((size & 0x7f) | (size >= 0x80 ? 0x80 : 0)));
      if (size < 0x80) break;
    }
    out += message;
  }
  return out;
}

v1::ReduceRequest Request(const v1::ReduceSpec& spec, absl::string_view data) {
  v1::ReduceRequest request;
  *request.mutable_spec() = spec;
  request.set_data(std::string(data));
  return request;
}

v1::ReduceChunk Chunk(absl::string_view data, const v1::ReduceSpec* spec = nullptr) {
  v1::ReduceChunk chunk;
  if (spec != nullptr) *chunk.mutable_spec() = *spec;
  chunk.set_data(std::string(data));
  return chunk;
}

// The array API's fields (issue 22): a spec with a dtype, an op list and a ddof.
v1::ReduceSpec TypedSpec(v1::DType dtype, std::initializer_list<v1::Op> ops, double ddof = 0) {
  v1::ReduceSpec spec;
  spec.set_dtype(dtype);
  if (ops.size() == 1) {
    spec.set_op(*ops.begin());
  } else {
    for (v1::Op op : ops) spec.add_ops(op);
  }
  spec.set_ddof(ddof);
  return spec;
}

// Little-endian elements of `dtype` with mixed signs and magnitudes, NaN and inf where the dtype
// has them, ties, and (integers) values whose sums and products wrap.
std::string TypedBytes(v1::DType dtype) {
  std::string out;
  auto put = [&out](auto value) {
    out.append(reinterpret_cast<const char*>(&value), sizeof(value));
  };
  switch (dtype) {
    case v1::FLOAT16:  // 1.5, -2, 65504, a subnormal, NaN, -inf, 1.5, -0
      for (uint16_t h : {0x3e00, 0xc000, 0x7bff, 0x0001, 0x7e00, 0xfc00, 0x3e00, 0x8000}) put(h);
      break;
    case v1::BFLOAT16:  // 1.5, -2, 3.4e38, NaN, 1e-3, 1.5
      for (uint16_t b : {0x3fc0, 0xc000, 0x7f7f, 0x7fc0, 0x3a83, 0x3fc0}) put(b);
      break;
    case v1::FLOAT64:
      for (double d : {1.5, -2.25, 1e100, -1e-100, double{NAN}, 3.0, -2.25, double{INFINITY}}) {
        put(d);
      }
      break;
    case v1::INT32:
      for (int32_t i : {2147483647, -5, 2147483647, 0x10000, 0x10000, -2147483647 - 1, 7}) put(i);
      break;
    case v1::INT64:
      for (int64_t i : {int64_t{9223372036854775807}, int64_t{1}, int64_t{-3}, int64_t{1} << 32,
                        int64_t{1} << 32, int64_t{-1}, int64_t{9223372036854775807}}) {
        put(i);
      }
      break;
    default:
      return FloatBytes(kSpecial);
  }
  return out;
}

// bytes[at, at + n), clamped to the string.
std::string Cut(const std::string& bytes, size_t at, size_t n = std::string::npos) {
  return at >= bytes.size() ? std::string() : bytes.substr(at, n);
}

void ArrayApi(const fs::path& dir) {
  const std::vector<v1::DType> dtypes = {v1::FLOAT32, v1::FLOAT16, v1::BFLOAT16,
                                         v1::FLOAT64, v1::INT32,   v1::INT64};
  for (v1::DType dtype : dtypes) {
    const std::string name = absl::AsciiStrToLower(v1::DType_Name(dtype));
    const std::string bytes = TypedBytes(dtype);
    // Every op in one request, and the five a user asks together.
    v1::ReduceSpec all;
    all.set_dtype(dtype);
    for (int op = v1::SUM; op <= v1::NANSTD; ++op) all.add_ops(static_cast<v1::Op>(op));
    Write(dir, name + "_all_ops", Unary(Request(all, bytes), 1));
    const v1::ReduceSpec five = TypedSpec(dtype, {v1::SUM, v1::MIN, v1::MAX, v1::MEAN, v1::STD}, 1);
    Write(dir, name + "_five_ops_tiled", Unary(Request(five, bytes), 0, true));
    Write(dir, name + "_nan_forms",
          Unary(Request(TypedSpec(dtype, {v1::NANSUM, v1::NANARGMAX, v1::NANMEAN, v1::NANVAR}),
                        bytes),
                2));
    Write(dir, name + "_var_ddof_past_count",
          Unary(Request(TypedSpec(dtype, {v1::VAR, v1::NANSTD}, 9.5), bytes)));
    // A stream cut 1, 3, 7 and 5 bytes into elements.
    Write(dir, name + "_stream_odd_cuts",
          Stream({Chunk(Cut(bytes, 0, 1), &five), Chunk(Cut(bytes, 1, 3)), Chunk(Cut(bytes, 4, 7)),
                  Chunk(Cut(bytes, 11, 5)), Chunk(Cut(bytes, 16))},
                 3));
    if (dtype != v1::FLOAT32) {
      Write(dir, "error_ragged_" + name,
            Unary(Request(TypedSpec(dtype, {v1::SUM}), Cut(bytes, 0, bytes.size() - 1))));
      v1::ReduceRequest values = Request(TypedSpec(dtype, {v1::SUM}), "");
      values.add_values(1.5f);
      Write(dir, "error_values_" + name, Unary(values));
    }
    Write(dir, "error_stream_ends_inside_" + name,
          Stream({Chunk(Cut(bytes, 0, 3), &five), Chunk(Cut(bytes, 3, bytes.size() - 4))}));
  }
  const std::string f64 = TypedBytes(v1::FLOAT64);
  // A values chunk while an element's first bytes wait for the next data chunk.
  const v1::ReduceSpec argmax = TypedSpec(v1::FLOAT32, {v1::ARGMAX, v1::SUM});
  v1::ReduceChunk values_between;
  values_between.add_values(5.0f);
  Write(dir, "stream_values_inside_an_element",
        Stream({Chunk(FloatBytes({1.0f}).substr(0, 2), &argmax), values_between,
                Chunk(FloatBytes({1.0f}).substr(2))}));
  Write(dir, "error_unknown_dtype",
        Unary(Request(TypedSpec(static_cast<v1::DType>(7), {v1::SUM}), f64)));
  Write(dir, "error_unknown_op_in_ops",
        Unary(Request(TypedSpec(v1::FLOAT64, {v1::SUM, static_cast<v1::Op>(20)}), f64)));
  Write(dir, "error_op_listed_twice",
        Unary(Request(TypedSpec(v1::FLOAT64, {v1::STD, v1::MIN, v1::STD}), f64)));
  v1::ReduceSpec both = TypedSpec(v1::FLOAT64, {v1::SUM, v1::MAX});
  both.set_op(v1::MIN);
  Write(dir, "error_op_and_ops", Unary(Request(both, f64)));
  Write(dir, "negative_ddof", Unary(Request(TypedSpec(v1::FLOAT64, {v1::VAR}, -1), f64)));
  Write(dir, "error_nan_ddof", Unary(Request(TypedSpec(v1::FLOAT64, {v1::VAR}, NAN), f64)));
  v1::ReduceSpec ladder_half = TypedSpec(v1::FLOAT16, {v1::SUM});
  ladder_half.set_kernel("warp_shuffle");
  Write(dir, "error_ladder_float16", Unary(Request(ladder_half, TypedBytes(v1::FLOAT16))));
  v1::ReduceSpec cub_var = TypedSpec(v1::FLOAT32, {v1::VAR});
  cub_var.set_kernel("cub");
  Write(dir, "error_cub_var", Unary(Request(cub_var, FloatBytes(kMixed))));
  Write(dir, "error_nanargmin_all_nan",
        Unary(Request(TypedSpec(v1::FLOAT64, {v1::NANARGMIN}), std::string(16, '\xff'))));
  Write(dir, "empty_float16_nanmean_var",
        Unary(Request(TypedSpec(v1::FLOAT16, {v1::NANMEAN, v1::VAR, v1::SUM, v1::PROD}), "")));
  std::string zero_first;
  for (double d : {0.0, 1e300, 1e300, 1e300}) zero_first.append(reinterpret_cast<char*>(&d), 8);
  Write(dir, "float64_prod_exact", Unary(Request(TypedSpec(v1::FLOAT64, {v1::PROD}), zero_first)));
}

void RequestPath(const fs::path& dir) {
  for (int op = v1::SUM; op <= v1::ARGMAX; ++op) {
    const v1::ReduceSpec spec = Spec(static_cast<v1::Op>(op));
    const std::string name = absl::AsciiStrToLower(v1::Op_Name(static_cast<v1::Op>(op)));
    Write(dir, name + "_unary_data", Unary(Request(spec, FloatBytes(kMixed))));
    v1::ReduceRequest values = Request(spec, "");
    for (float x : kMixed) values.add_values(x);
    Write(dir, name + "_unary_values", Unary(values, 1));
    Write(dir, name + "_unary_special", Unary(Request(spec, FloatBytes(kSpecial)), 3));
    // Ties in every task: the first occurrence must win across tasks.
    Write(dir, name + "_unary_tiled",
          Unary(Request(spec, FloatBytes({3.0f, -1.0f, 2.0f, -1.0f, 5.0f})), 0, true));
    Write(dir, name + "_stream",
          Stream({Chunk(FloatBytes({1.0f, -2.0f, 3.5f}), &spec), Chunk(""),
                  Chunk(FloatBytes({-4.0f, 0.25f})), Chunk(FloatBytes(kMixed))},
                 2));
  }
  const v1::ReduceSpec sum = Spec(v1::SUM);
  v1::ReduceRequest both = Request(sum, FloatBytes({1.0f}));
  both.add_values(2.0f);
  Write(dir, "error_both_payloads", Unary(both));
  Write(dir, "error_ragged_bytes", Unary(Request(sum, "\x01\x02\x03\x04\x05")));
  Write(dir, "error_unknown_op", Unary(Request(Spec(static_cast<v1::Op>(9)), FloatBytes({1}))));
  Write(dir, "error_op_unset", Unary(Request(Spec(v1::OP_UNSPECIFIED), FloatBytes({1}))));
  Write(dir, "error_unknown_kernel", Unary(Request(Spec(v1::SUM, "fastest"), FloatBytes({1}))));
  Write(dir, "error_gpu_kernel", Unary(Request(Spec(v1::SUM, "single_pass"), FloatBytes({1}))));
  Write(dir, "error_ladder_argmin", Unary(Request(Spec(v1::ARGMIN, "warp_shuffle"), "")));
  Write(dir, "error_block_size", Unary(Request(Spec(v1::SUM, "cpu", 256), FloatBytes({1}))));
  Write(dir, "kernel_cpu_named", Unary(Request(Spec(v1::MAX, "cpu"), FloatBytes(kMixed))));
  Write(dir, "kernel_auto_named", Unary(Request(Spec(v1::MIN, "auto"), FloatBytes(kMixed))));
  Write(dir, "empty_sum", Unary(Request(sum, "")));
  Write(dir, "empty_prod", Unary(Request(Spec(v1::PROD), "")));
  Write(dir, "error_empty_argmax", Unary(Request(Spec(v1::ARGMAX), "")));
  Write(dir, "error_too_big", Unary(Request(sum, std::string(8196, '\x01'))));
  Write(dir, "error_stream_no_spec", Stream({Chunk(FloatBytes({1.0f}))}));
  Write(dir, "error_stream_spec_repeated",
        Stream({Chunk(FloatBytes({1.0f}), &sum), Chunk(FloatBytes({2.0f}), &sum)}));
  Write(dir, "error_chunk_too_big", Stream({Chunk("", &sum), Chunk(std::string(1028, '\x02'))}));
  ArrayApi(dir);
}

// An NPY file as numpy writes it: preamble, dict, spaces and '\n' to a multiple of 64, data.
std::string Npy(int major, absl::string_view dict, absl::string_view data, int minor = 0) {
  return absl::StrCat(testing::NpyHeaderBytes(major, dict, minor), data);
}

void NpyHeader(const fs::path& dir) {
  const std::string six = FloatBytes({1.5f, -2.0f, 3.25f, 1e-3f, -5e3f, 7.0f});
  for (int major : {1, 2, 3}) {
    const std::string v = absl::StrCat("v", major, "_");
    Write(dir, v + "vector", Npy(major, NpyDict("<f4", "(6,)"), six));
    Write(dir, v + "matrix_fortran", Npy(major, NpyDict("<f4", "(2, 3)", true), six));
  }
  std::string big_endian = six;
  for (size_t i = 0; i < big_endian.size(); i += 4) std::swap(big_endian[i], big_endian[i + 3]);
  for (size_t i = 0; i < big_endian.size(); i += 4) std::swap(big_endian[i + 1], big_endian[i + 2]);
  Write(dir, "big_endian", Npy(1, NpyDict(">f4", "(6,)"), big_endian));
  Write(dir, "native_order", Npy(1, NpyDict("=f4", "(3, 2)"), six));
  Write(dir, "scalar", Npy(1, NpyDict("<f4", "()"), FloatBytes({4.0f})));
  Write(dir, "empty", Npy(1, NpyDict("<f4", "(0,)"), ""));
  Write(dir, "empty_dimension", Npy(2, NpyDict("<f4", "(3, 0, 5)"), ""));
  Write(dir, "python2_longs", Npy(1, NpyDict("<f4", "(2L, 3L)"), six));
  Write(dir, "utf8_v3",
        Npy(3,
            "{'descr': '<f4', 'fortran_order': False, 'shape': (1,), "
            "'note': '\xc3\xa9'}",
            FloatBytes({1.0f})));
  Write(dir, "error_float64", Npy(1, NpyDict("<f8", "(3,)"), six));
  Write(dir, "error_no_byte_order", Npy(1, NpyDict("|f4", "(6,)"), six));
  Write(dir, "error_structured",
        Npy(1, "{'descr': [('x', '<f4'), ('y', '<f4')], 'fortran_order': False, 'shape': (3,), }",
            six));
  Write(dir, "error_truncated_data", Npy(1, NpyDict("<f4", "(7,)"), six));
  Write(dir, "error_trailing_bytes", Npy(1, NpyDict("<f4", "(5,)"), six));
  Write(dir, "error_version_4", Npy(4, NpyDict("<f4", "(6,)"), six));
  Write(dir, "error_minor_version", Npy(1, NpyDict("<f4", "(6,)"), six, 1));
  Write(dir, "error_truncated_preamble", std::string("\x93NUMPY\x01\x00\x76", 9));
  Write(dir, "error_header_too_long", std::string("\x93NUMPY\x02\x00\xff\xff\xff\x7f{", 13));
  Write(dir, "error_missing_key", Npy(1, "{'descr': '<f4', 'shape': (6,)}", six));
  Write(dir, "error_duplicate_key", Npy(1, "{'descr': '<f4', 'descr': '<f4', 'shape': (6,)}", six));
  Write(dir, "error_huge_shape", Npy(1, NpyDict("<f4", "(4294967296, 4294967296)"), ""));
  Write(dir, "error_negative_dimension", Npy(1, NpyDict("<f4", "(-1,)"), six));
  // Header dicts alone (no magic): ParseNpyHeaderDict and the literal parser.
  Write(dir, "dict_plain", NpyDict("<f4", "(3, 4)"));
  Write(dir, "dict_nested",
        "{\"descr\": \"<f4\", 'fortran_order': True, 'shape': ((1, [2, None]),), 'x': 'a\\'b'}");
  Write(dir, "dict_unterminated", "{'descr': '<f4");
  Write(dir, "dict_integer_overflow", NpyDict("<f4", "(18446744073709551616,)"));
}

// Values, separators, comments, a BOM, special values; then the errors, each after some values.
const std::pair<const char*, std::string> kTextSeeds[] = {
    {"lines", "1\n2.5\n-3e2\n4\n"},
    {"csv", "1.5,-2e-3,nan\r\n4;5\t6,,7\n"},
    {"comments", "# a header line\n1 2 # two values\n#\n3\n# no newline at the end"},
    {"special", "inf -inf Infinity -INFINITY NaN -nan +1 +.5 1e-40 1e-46 -0\n"},
    {"bom",
     "\xEF\xBB\xBF"
     "1, 2, 3\n"},
    {"no_trailing_newline", "0.1 0.2 0.3"},
    {"long_numbers",
     "3.14159265358979323846264338327950288 0.000000000000000000000000000000000000000001\n"},
    {"error_overflow", "1\n2\n1e39\n"},
    {"error_word", "1 2\nthree\n"},
    {"error_hex", "0x1p3\n"},
    {"error_double_sign", "+-1\n"},
    {"error_hash_in_token", "1#2\n"},
    {"error_long_token", std::string(1100, '1') + "\n"},
};

// Line 1: Help()'s description; line 2: one more flag's name; then the arguments.
const std::pair<const char*, std::string> kFlagSeeds[] = {
    {"server",
     "The gpureduce server.\nextra\n--listen=0.0.0.0:50051\n--verbose\n--threads\n8\n"
     "--grace-period=500ms\n--max-request-bytes=1.5GiB"},
    {"cli",
     "Reduce a file.\nformat\n--count=1000003\n--backend=cpu\n--no-verbose\n--fraction=1e-3\n"
     "data.npy\n-\n--\n--listen"},
    {"numbers",
     "d\ne\n--offset=-9223372036854775808\n--count=18446744073709551615\n"
     "--threads=4294967295\n--max-request-bytes=16EiB\n--fraction=1e308"},
    {"error_typo", "d\ne\n--bakend=cuda"},
    {"error_missing_value", "d\ne\n--count\n--verbose"},
    {"error_negative_unsigned", "d\ne\n--threads=-1"},
    {"error_bool_value", "d\ne\n--no-verbose=true\n--verbose=maybe"},
    {"error_duplicate_flag", "d\nlisten\n--listen=x"},
    {"error_bad_flag_name", "d\n-x=y\n--x"},
    {"help", "A long description that wraps at the help width: " + std::string(120, 'w') +
                 " and more words after it.\nextra\n-h\n--help"},
    {"sizes",
     "d\ne\n--max-request-bytes=64KiB\n--max-request-bytes=1.25KiB\n"
     "--max-request-bytes=1.1KiB\n--max-request-bytes=4097B\n"
     "--max-request-bytes=18446744073709551616"},
    {"durations", "d\ne\n--grace-period=1h30m\n--grace-period=inf\n--grace-period=-1s"},
};

template <size_t kSize>
void WriteAll(const fs::path& dir, const std::pair<const char*, std::string> (&seeds)[kSize]) {
  for (const auto& [name, bytes] : seeds) Write(dir, name, bytes);
}

}  // namespace
}  // namespace gpureduce::fuzzing

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s tests/fuzz/corpus\n", argv[0]);
    return 2;
  }
  const std::filesystem::path root = argv[1];
  gpureduce::fuzzing::RequestPath(root / "request_path_fuzzer");
  gpureduce::fuzzing::NpyHeader(root / "npy_header_fuzzer");
  gpureduce::fuzzing::WriteAll(root / "text_source_fuzzer", gpureduce::fuzzing::kTextSeeds);
  gpureduce::fuzzing::WriteAll(root / "flags_fuzzer", gpureduce::fuzzing::kFlagSeeds);
  return 0;
}
