// `gpureduce reduce`'s typed results: one line and one JSON object per op, each value exactly as
// its dtype holds it.

#include "client/cli/reduce_output.h"

#include <cmath>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace gpureduce::cli {
namespace {

using ::testing::HasSubstr;

v1::OpResult* Add(v1::ReduceResponse& response, v1::Op op, v1::DType dtype, double value) {
  v1::OpResult* result = response.add_results();
  result->set_op(op);
  result->set_dtype(dtype);
  result->set_value(value);
  result->set_index(-1);
  return result;
}

TEST(FormatTypedValueTest, EachDTypeWithTheDigitsThatReadBack) {
  EXPECT_EQ(FormatTypedValue(v1::FLOAT64, 0.1, 0, false), "0.10000000000000001");
  EXPECT_EQ(FormatTypedValue(v1::FLOAT32, static_cast<float>(0.1), 0, false), "0.100000001");
  EXPECT_EQ(FormatTypedValue(v1::FLOAT16, 0.0999755859375, 0, false), "0.099976");
  EXPECT_EQ(FormatTypedValue(v1::FLOAT16, 65504, 0, false), "65504");
  EXPECT_EQ(FormatTypedValue(v1::BFLOAT16, 0.10009765625, 0, false), "0.1001");
  EXPECT_EQ(FormatTypedValue(v1::INT64, 9.2233720368547758e18, INT64_MAX, true),
            "9223372036854775807");
  EXPECT_EQ(FormatTypedValue(v1::FLOAT16, NAN, 0, false), "nan");
  EXPECT_EQ(FormatTypedValue(v1::FLOAT16, -INFINITY, 0, false), "-inf");
}

TEST(FormatResultsTest, ALinePerOpWithDTypeIndexAndOverflow) {
  v1::ReduceResponse response;
  response.set_dtype(v1::INT32);
  v1::OpResult* sum = Add(response, v1::SUM, v1::INT64, -9.2233720368547758e18);
  sum->set_int_value(INT64_MIN + 5);
  sum->set_overflow(true);
  v1::OpResult* arg = Add(response, v1::ARGMAX, v1::INT64, 2147483647);
  arg->set_index(12);
  arg->set_int_value(12);
  Add(response, v1::STD, v1::FLOAT64, 1.5);
  EXPECT_EQ(FormatResultsText(response),
            "result: sum = -9223372036854775803 (int64; overflow: wrapped modulo 2^64 as NumPy "
            "does)\n"
            "result: argmax = 12 (int64 index; element 2147483647)\n"
            "result: std = 1.5 (float64)\n");
  const std::string json = FormatReduceJson(v1::SUM, response, ClientSide{}, std::nullopt);
  EXPECT_THAT(json, HasSubstr("\"results\":[{\"op\":\"sum\",\"dtype\":\"int64\""));
  EXPECT_THAT(json, HasSubstr("\"int_value\":-9223372036854775803,\"index\":-1,"
                              "\"overflow\":true}"));
  EXPECT_THAT(json, HasSubstr("{\"op\":\"argmax\",\"dtype\":\"int64\",\"value\":2147483647,"
                              "\"text\":\"12\",\"int_value\":12,\"index\":12,\"overflow\":false}"));
}

}  // namespace
}  // namespace gpureduce::cli
