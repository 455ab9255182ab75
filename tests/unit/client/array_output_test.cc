// `gpureduce reduce`'s array answers: values nested NumPy-style in text, nested JSON arrays, and
// the .npy files of --output byte for byte as numpy.save writes them.

#include "client/cli/array_output.h"

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "client/cli/npy_output.h"
#include "client/cli/reduce_output.h"
#include "client/input/open_source.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/client/input_test_util.h"

namespace gpureduce::cli {
namespace {

using ::gpureduce::client::testing::TempPath;
using ::gpureduce::testing::NpyDict;
using ::gpureduce::testing::NpyHeaderBytes;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

template <typename T>
std::string Bytes(const std::vector<T>& values) {
  std::string out(values.size() * sizeof(T), '\0');
  if (!values.empty()) std::memcpy(out.data(), values.data(), out.size());
  return out;
}

template <typename T>
v1::OpResult Array(v1::Op op, v1::DType dtype, std::vector<uint64_t> shape,
                   const std::vector<T>& values) {
  v1::OpResult result;
  result.set_op(op);
  result.set_dtype(dtype);
  result.set_index(-1);
  for (const uint64_t extent : shape) result.add_shape(extent);
  result.set_data(Bytes(values));
  return result;
}

std::vector<int64_t> Iota(int64_t n) {
  std::vector<int64_t> values(n);
  for (int64_t i = 0; i < n; ++i) values[i] = i;
  return values;
}

TEST(FormatArrayValuesTest, SmallArraysInFull) {
  EXPECT_EQ(FormatArrayValues(Array<double>(v1::SUM, v1::FLOAT64, {3}, {1.5, -2, 0.1})),
            "[1.5, -2, 0.10000000000000001]");
  EXPECT_EQ(FormatArrayValues(Array<float>(v1::SUM, v1::FLOAT32, {2}, {0.1f, NAN})),
            "[0.100000001, nan]");
  EXPECT_EQ(FormatArrayValues(Array(v1::SUM, v1::INT64, {2, 3}, Iota(6))),
            "[[0, 1, 2],\n [3, 4, 5]]");
  EXPECT_EQ(FormatArrayValues(Array(v1::SUM, v1::INT64, {2, 2, 2}, Iota(8)), "  "),
            "[[[0, 1],\n    [2, 3]],\n\n   [[4, 5],\n    [6, 7]]]");
  EXPECT_EQ(FormatArrayValues(Array<double>(v1::MEAN, v1::FLOAT64, {}, {2.25})), "2.25");
  EXPECT_EQ(FormatArrayValues(Array<double>(v1::SUM, v1::FLOAT64, {0}, {})), "[]");
  EXPECT_EQ(FormatArrayValues(Array<double>(v1::SUM, v1::FLOAT64, {2, 0}, {})), "[[],\n []]");
  // Every result dtype decodes: float16 1.5 and -inf, bfloat16 0.1001, int32, arg ops' int64.
  EXPECT_EQ(FormatArrayValues(Array<uint16_t>(v1::SUM, v1::FLOAT16, {2}, {0x3e00, 0xfc00})),
            "[1.5, -inf]");
  EXPECT_EQ(FormatArrayValues(Array<uint16_t>(v1::SUM, v1::BFLOAT16, {1}, {0x3dcd})), "[0.1001]");
  EXPECT_EQ(FormatArrayValues(Array<int32_t>(v1::MIN, v1::INT32, {2}, {-2147483647 - 1, 7})),
            "[-2147483648, 7]");
  EXPECT_EQ(FormatArrayValues(Array<int64_t>(v1::ARGMAX, v1::INT64, {2}, {12, 0})), "[12, 0]");
}

TEST(FormatArrayValuesTest, LargeArraysShowTheirEdges) {
  EXPECT_EQ(FormatArrayValues(Array(v1::SUM, v1::INT64, {20}, Iota(20))),
            "[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19]");
  EXPECT_EQ(FormatArrayValues(Array(v1::SUM, v1::INT64, {21}, Iota(21))),
            "[0, 1, 2, ..., 18, 19, 20]");
  EXPECT_EQ(FormatArrayValues(Array(v1::SUM, v1::INT64, {10, 10}, Iota(100))),
            "[[0, 1, 2, ..., 7, 8, 9],\n"
            " [10, 11, 12, ..., 17, 18, 19],\n"
            " [20, 21, 22, ..., 27, 28, 29],\n"
            " ...,\n"
            " [70, 71, 72, ..., 77, 78, 79],\n"
            " [80, 81, 82, ..., 87, 88, 89],\n"
            " [90, 91, 92, ..., 97, 98, 99]]");
  // Only the long axes are cut: (31, 2) keeps both columns.
  const std::string tall = FormatArrayValues(Array(v1::SUM, v1::INT64, {31, 2}, Iota(62)));
  EXPECT_THAT(tall, HasSubstr("[[0, 1],\n [2, 3],\n [4, 5],\n ...,\n [56, 57],\n"));
}

TEST(FormatArrayResultsTest, DTypeShapeAndValuesPerOp) {
  v1::ReduceResponse response;
  *response.add_results() = Array<float>(v1::SUM, v1::FLOAT32, {3}, {1.5f, 2, -0.25f});
  v1::OpResult* wrapped = response.add_results();
  *wrapped = Array<int64_t>(v1::PROD, v1::INT64, {2, 2}, {1, 2, 3, 4});
  wrapped->set_overflow_count(2);
  wrapped->set_overflow(true);
  *response.add_results() = Array<int64_t>(v1::ARGMIN, v1::INT64, {3}, {4, 0, 9});
  EXPECT_EQ(FormatArrayResultsText(response),
            "result: sum (float32, shape (3,)) = [1.5, 2, -0.25]\n"
            "result: prod (int64, shape (2, 2); 2 elements overflowed: wrapped modulo 2^64 as "
            "NumPy does) =\n"
            "  [[1, 2],\n"
            "   [3, 4]]\n"
            "result: argmin (int64 indices, shape (3,)) = [4, 0, 9]\n");
}

TEST(ArrayValuesJsonTest, NestedToTheShape) {
  EXPECT_EQ(JsonLine(ArrayValuesJson(Array(v1::SUM, v1::INT64, {2, 3}, Iota(6)))),
            "[[0,1,2],[3,4,5]]\n");
  EXPECT_EQ(JsonLine(ArrayValuesJson(Array(v1::SUM, v1::INT64, {2, 1, 2}, Iota(4)))),
            "[[[0,1]],[[2,3]]]\n");
  EXPECT_EQ(JsonLine(ArrayValuesJson(Array<double>(v1::SUM, v1::FLOAT64, {3}, {0.5, NAN, -1}))),
            "[0.5,\"NaN\",-1]\n");
  EXPECT_EQ(JsonLine(ArrayValuesJson(Array<double>(v1::SUM, v1::FLOAT64, {}, {2.5}))), "2.5\n");
  EXPECT_EQ(JsonLine(ArrayValuesJson(Array<double>(v1::SUM, v1::FLOAT64, {2, 0}, {}))),
            "[[],[]]\n");
  // Past 2^53 an int64 stays exact.
  EXPECT_EQ(JsonLine(ArrayValuesJson(Array<int64_t>(v1::SUM, v1::INT64, {1}, {INT64_MAX}))),
            "[9223372036854775807]\n");
}

TEST(ReduceOutputOfArraysTest, TextAndJsonSayTheLayout) {
  v1::ReduceResponse response;
  response.set_count(6);
  response.set_dtype(v1::FLOAT64);
  *response.add_results() = Array<double>(v1::SUM, v1::FLOAT64, {2}, {3, 12});
  *response.add_results() = Array<int64_t>(v1::ARGMAX, v1::INT64, {2}, {2, 2});
  ClientSide client;
  client.input = "x.npy";
  client.array = "shape (2, 3) along axis 1";
  client.outputs = {"out.sum.npy", "out.argmax.npy"};
  const std::string text = FormatReduceText(v1::SUM, response, client, std::nullopt);
  EXPECT_THAT(text, HasSubstr("sum,argmax of shape (2, 3) along axis 1: 2 results each   (6 "
                              "float64 values, x.npy)\n"
                              "result: sum (float64, shape (2,)) = [3, 12]\n"
                              "result: argmax (int64 indices, shape (2,)) = [2, 2]\n"
                              "output: sum written to out.sum.npy\n"
                              "output: argmax written to out.argmax.npy\n"));
  EXPECT_THAT(text, Not(HasSubstr("sum = ")));
  const std::string json = FormatReduceJson(v1::SUM, response, client, std::nullopt);
  EXPECT_THAT(json, HasSubstr("{\"op\":\"sum\",\"dtype\":\"float64\",\"index\":-1,\"overflow\":"
                              "false,\"shape\":[2],\"values\":[3,12],\"overflow_count\":0,"
                              "\"file\":\"out.sum.npy\"}"));
  EXPECT_THAT(json, HasSubstr("\"values\":[2,2]"));
  EXPECT_THAT(json, HasSubstr("\"array\":\"shape (2, 3) along axis 1\""));
  EXPECT_THAT(json, Not(HasSubstr("\"value\":")));  // one value cannot stand for an array

  // One element (every axis reduced): its scalar fields stay.
  v1::ReduceResponse one;
  v1::OpResult* only = one.add_results();
  *only = Array<double>(v1::SUM, v1::FLOAT64, {}, {15});
  only->set_value(15);
  one.set_value(15);
  client.array = "shape (2, 3) along every axis";
  client.outputs.clear();
  const std::string one_json = FormatReduceJson(v1::SUM, one, client, std::nullopt);
  EXPECT_THAT(one_json, HasSubstr("\"value\":15,\"text\":\"15\""));
  EXPECT_THAT(one_json, HasSubstr("\"shape\":[],\"values\":15"));
}

TEST(NpyOutputTest, TheBytesNumPySaves) {
  const std::vector<double> values = {1, -2.5, 3, 4, 5, 6};
  const std::string npy = NpyFileBytes(v1::FLOAT64, {2, 3}, Bytes(values));
  EXPECT_EQ(npy, NpyHeaderBytes(1, NpyDict("<f8", "(2, 3)")) + Bytes(values));
  EXPECT_EQ((npy.size() - values.size() * 8) % 64, 0u);
  EXPECT_EQ(NpyFileBytes(v1::FLOAT32, {7}, ""), NpyHeaderBytes(1, NpyDict("<f4", "(7,)")));
  EXPECT_EQ(NpyFileBytes(v1::INT64, {}, ""), NpyHeaderBytes(1, NpyDict("<i8", "()")));
  EXPECT_THAT(NpyFileBytes(v1::FLOAT16, {1}, ""), HasSubstr("'descr': '<f2'"));
  EXPECT_THAT(NpyFileBytes(v1::INT32, {1}, ""), HasSubstr("'descr': '<i4'"));
}

TEST(NpyOutputTest, AFullReductionIsAZeroDimensionalArray) {
  v1::OpResult half;
  half.set_op(v1::SUM);
  half.set_dtype(v1::FLOAT16);
  half.set_value(1.5);
  half.set_index(-1);
  EXPECT_EQ(ResultNpyBytes(half),
            NpyHeaderBytes(1, NpyDict("<f2", "()")) + Bytes<uint16_t>({0x3e00}));
  v1::OpResult arg;
  arg.set_op(v1::ARGMIN);
  arg.set_dtype(v1::INT64);
  arg.set_value(-7.5);
  arg.set_index(41);
  arg.set_int_value(41);
  EXPECT_EQ(ResultNpyBytes(arg), NpyHeaderBytes(1, NpyDict("<i8", "()")) + Bytes<int64_t>({41}));
  v1::OpResult ints;
  ints.set_op(v1::MIN);
  ints.set_dtype(v1::INT32);
  ints.set_int_value(-5);
  ints.set_index(-1);
  EXPECT_EQ(ResultNpyBytes(ints), NpyHeaderBytes(1, NpyDict("<i4", "()")) + Bytes<int32_t>({-5}));
  // NumPy has no bfloat16: float32 of the same values (bfloat16 0x3fc0 is 1.5, float32 0x3fc00000).
  v1::OpResult brain = half;
  brain.set_dtype(v1::BFLOAT16);
  EXPECT_EQ(ResultNpyBytes(brain), NpyHeaderBytes(1, NpyDict("<f4", "()")) + Bytes<float>({1.5f}));
  const v1::OpResult brains = Array<uint16_t>(v1::SUM, v1::BFLOAT16, {2}, {0x3fc0, 0xbdcd});
  EXPECT_EQ(ResultNpyBytes(brains),
            NpyHeaderBytes(1, NpyDict("<f4", "(2,)")) + Bytes<uint32_t>({0x3fc00000, 0xbdcd0000}));
  // An array result's own bytes, even of one element.
  const v1::OpResult array = Array<float>(v1::SUM, v1::FLOAT32, {1, 1}, {2.5f});
  EXPECT_EQ(ResultNpyBytes(array),
            NpyHeaderBytes(1, NpyDict("<f4", "(1, 1)")) + Bytes<float>({2.5f}));
}

TEST(NpyOutputTest, OneFilePerOpAndTheClientReadsThemBack) {
  EXPECT_THAT(OutputPaths("out.npy", {v1::SUM}), ElementsAre("out.npy"));
  EXPECT_THAT(OutputPaths("dir/out.npy", {v1::SUM, v1::NANARGMAX}),
              ElementsAre("dir/out.sum.npy", "dir/out.nanargmax.npy"));
  EXPECT_THAT(OutputPaths("out", {v1::SUM, v1::MAX}), ElementsAre("out.sum.npy", "out.max.npy"));

  v1::ReduceResponse response;
  *response.add_results() = Array<double>(v1::SUM, v1::FLOAT64, {2, 3}, {1, 2, 3, 4, 5, 6});
  *response.add_results() = Array<int64_t>(v1::ARGMAX, v1::INT64, {2, 3}, {0, 1, 2, 3, 4, 5});
  const std::string base = TempPath("out.npy");
  absl::StatusOr<std::vector<std::string>> written = WriteResultFiles(base, response);
  ASSERT_TRUE(written.ok()) << written.status();
  ASSERT_EQ(written->size(), 2u);
  for (size_t i = 0; i < written->size(); ++i) {
    client::SourceOptions options;
    options.path = (*written)[i];
    absl::StatusOr<std::unique_ptr<client::FloatSource>> source = client::OpenSource(options);
    ASSERT_TRUE(source.ok()) << source.status();
    EXPECT_EQ((*source)->dtype(), i == 0 ? DType::kFloat64 : DType::kInt64);
    EXPECT_EQ((*source)->total_count(), 6u);
    std::string bytes(48, '\0');
    ASSERT_EQ(*(*source)->ReadBytes(absl::MakeSpan(bytes)), 6u);
    EXPECT_EQ(bytes, response.results(static_cast<int>(i)).data());
    std::remove((*written)[i].c_str());
  }
  absl::StatusOr<std::vector<std::string>> refused =
      WriteResultFiles("/nonexistent-dir/out.npy", response);
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(refused.status().message(),
              HasSubstr("--output: cannot write /nonexistent-dir/out.sum.npy"));
}

}  // namespace
}  // namespace gpureduce::cli
