// The array API (issue 22, docs/array-api.md) through the real server: every dtype x op against
// an independent reference (array_api_reference.h), NaN and inf, ties, several ops in one request,
// result dtypes, the legacy float32 request, and streams cut inside elements. The numeric edges
// are in array_api_edges_test.cc, the refusals in array_api_refusals_test.cc. Runs on the test
// backend (the CPU server; "gpu." with GPUREDUCE_TEST_BACKEND=cuda).

#include <cmath>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/integration/array_api_fixture.h"
#include "tests/support/random_data.h"
#include "tests/support/reference.h"
#include "tests/support/wire.h"

namespace gpureduce::testing::array_api {
namespace {

using ::testing::HasSubstr;

// ---- The matrix.

TEST_F(ArrayApiTest, EveryDTypeAndOpAtSmallSizes) {
  SCOPED_TRACE(SeedTrace(seed_));
  for (v1::DType dtype : AllDTypes()) {
    for (size_t n : {1, 2, 31}) {
      RunMatrix(*h_, RandomArray(dtype, n, seed_ + n), true, "random");
    }
  }
}

TEST_F(ArrayApiTest, EveryDTypeAndOpAtAMillionAndThree) {
  SCOPED_TRACE(SeedTrace(seed_));
  for (v1::DType dtype : AllDTypes()) {
    const Array a = RandomArray(dtype, kMillion, seed_ + dtype);
    RunMatrix(*h_, a, false, "random");  // the 19 ops in one request
    ExpectAnswers(h_->Reduce(a, {v1::SUM}), {v1::SUM}, a, 0, "alone");
  }
  // One op at a time on one dtype: the single-op path at size.
  const Array a = RandomArray(v1::FLOAT16, kMillion, seed_);
  for (v1::Op op : AllOps()) ExpectAnswers(h_->Reduce(a, {op}), {op}, a, 0, "alone");
}

TEST_F(ArrayApiTest, NanAndInfAtTheStartTheMiddleAndTheEnd) {
  SCOPED_TRACE(SeedTrace(seed_));
  for (v1::DType dtype : {v1::FLOAT32, v1::FLOAT16, v1::BFLOAT16, v1::FLOAT64}) {
    for (size_t n : {1, 2, 31}) RunSpecials(*h_, dtype, n, seed_ + n);
    Array a = RandomArray(dtype, kMillion, seed_);
    Set(a, kMillion / 2, kNan);
    Set(a, kMillion - 1, kInf);
    RunAllOps(*h_, a, "NaN in the middle, inf at the end");
  }
}

TEST_F(ArrayApiTest, ArgOpsAnswerTheFirstOfTies) {
  SCOPED_TRACE(SeedTrace(seed_));
  const std::vector<v1::Op> ops = {v1::ARGMIN,    v1::ARGMAX, v1::NANARGMIN,
                                   v1::NANARGMAX, v1::MIN,    v1::MAX};
  for (v1::DType dtype : AllDTypes()) {
    for (size_t n : {2, 31}) {
      const Array a = TiesArray(dtype, n, seed_ + n);
      for (v1::Op op : ops) ExpectAnswers(h_->Reduce(a, {op}), {op}, a, 0, "ties");
    }
    const Array big = TiesArray(dtype, kMillion, seed_);
    ExpectAnswers(h_->Reduce(big, ops), ops, big, 0, "ties");
  }
  // Spelled out: the first of equal extremes, and of equal zeros.
  const Outcome got =
      h_->Reduce(FromValues(v1::FLOAT64, {1, 5, -2, 5, -2, 0}), {v1::ARGMAX, v1::ARGMIN});
  ASSERT_TRUE(got.status.ok()) << got.status.error_message();
  EXPECT_EQ(got.response.results(0).index(), 1);
  EXPECT_EQ(got.response.results(1).index(), 2);
  const Outcome zeros = h_->Reduce(FromValues(v1::FLOAT16, {0.0, -0.0, 0.0}), {v1::ARGMIN});
  ASSERT_TRUE(zeros.status.ok()) << zeros.status.error_message();
  EXPECT_EQ(zeros.response.results(0).index(), 0);
}

// ---- Several ops, result dtypes, the legacy request.

TEST_F(ArrayApiTest, FiveOpsInOneRequest) {
  SCOPED_TRACE(SeedTrace(seed_));
  const std::vector<v1::Op> five = {v1::SUM, v1::MIN, v1::MAX, v1::MEAN, v1::STD};
  for (v1::DType dtype : AllDTypes()) {
    for (size_t n : {size_t{31}, kMillion}) {
      const Array a = RandomArray(dtype, n, seed_ + n);
      ExpectAnswers(h_->Reduce(a, five), five, a, 0, "five ops");
    }
  }
}

TEST_F(ArrayApiTest, NanAndNonNanFormsInOneRequest) {
  SCOPED_TRACE(SeedTrace(seed_));
  const std::vector<v1::Op> ops = {v1::SUM, v1::NANSUM, v1::ARGMAX, v1::NANARGMAX};
  for (v1::DType dtype : {v1::FLOAT32, v1::FLOAT16, v1::BFLOAT16, v1::FLOAT64}) {
    Array a = RandomArray(dtype, 1001, seed_ + dtype);
    Set(a, 17, kNan);
    Set(a, 500, kNan);
    const Outcome got = h_->Reduce(a, ops);
    ExpectAnswers(got, ops, a, 0, "mixed");
    ASSERT_TRUE(got.status.ok());
    EXPECT_TRUE(std::isnan(got.response.results(0).value()));
    EXPECT_FALSE(std::isnan(got.response.results(1).value()));
    EXPECT_EQ(got.response.results(2).index(), 17);
    EXPECT_NE(got.response.results(3).index(), 17);
    EXPECT_TRUE(std::isnan(got.response.value()));  // the first op's
    EXPECT_EQ(got.response.index(), -1);
  }
}

TEST_F(ArrayApiTest, ResultDTypesAreNumPys) {
  struct Case {
    v1::DType input;
    v1::Op op;
    v1::DType result;
  };
  for (const Case& c : std::vector<Case>{
           {v1::INT32, v1::SUM, v1::INT64},           {v1::INT32, v1::PROD, v1::INT64},
           {v1::INT32, v1::MIN, v1::INT32},           {v1::INT32, v1::MEAN, v1::FLOAT64},
           {v1::INT32, v1::VAR, v1::FLOAT64},         {v1::INT32, v1::SUM_SQUARES, v1::FLOAT64},
           {v1::INT64, v1::NANSUM, v1::INT64},        {v1::INT64, v1::MAX, v1::INT64},
           {v1::INT64, v1::NANSTD, v1::FLOAT64},      {v1::FLOAT16, v1::SUM, v1::FLOAT16},
           {v1::FLOAT16, v1::MEAN, v1::FLOAT16},      {v1::FLOAT16, v1::VAR, v1::FLOAT16},
           {v1::BFLOAT16, v1::NANMEAN, v1::BFLOAT16}, {v1::BFLOAT16, v1::SUM_SQUARES, v1::BFLOAT16},
           {v1::FLOAT32, v1::STD, v1::FLOAT32},       {v1::FLOAT64, v1::PROD, v1::FLOAT64},
           {v1::FLOAT16, v1::ARGMAX, v1::INT64},      {v1::INT32, v1::NANARGMIN, v1::INT64},
           {v1::FLOAT64, v1::ARGMIN, v1::INT64},      {v1::BFLOAT16, v1::NANARGMAX, v1::INT64}}) {
    const Outcome got = h_->Reduce(FromValues(c.input, {3, -1, 2}), {c.op});
    ASSERT_TRUE(got.status.ok()) << got.status.error_message();
    EXPECT_EQ(got.response.results(0).dtype(), c.result)
        << v1::Op_Name(c.op) << " of " << DTypeText(c.input);
    EXPECT_EQ(got.response.dtype(), c.input);
  }
}

TEST_F(ArrayApiTest, LegacyFloat32RequestAnswersAsBefore) {
  SCOPED_TRACE(SeedTrace(seed_));
  const std::vector<float> data = MixedSignData(kMillion, seed_);
  v1::ReduceRequest request;
  request.mutable_spec()->set_op(v1::SUM);  // no dtype, no ops
  request.set_data(Bytes(data));
  const Outcome got = h_->Unary(request);
  ASSERT_TRUE(got.status.ok()) << got.status.error_message();
  const v1::ReduceResponse& r = got.response;
  // `value`: the float64 sum, as every version answered.
  double sequential = 0;
  for (float x : data) sequential += x;
  EXPECT_EQ(CheckAgainstReference(Op::kSum, ComputeReference(Op::kSum, data), r.value(), -1, 1e-9),
            "");
  EXPECT_NEAR(r.value(), sequential, 1e-9 * std::abs(sequential) + 1e-6);
  EXPECT_NE(r.value(), static_cast<double>(static_cast<float>(r.value())))
      << "value should be the float64 sum, not one rounded to float32";
  EXPECT_EQ(r.index(), -1);
  EXPECT_EQ(r.count(), kMillion);
  EXPECT_EQ(r.dtype(), v1::FLOAT32);
  ASSERT_EQ(r.results_size(), 1);
  EXPECT_EQ(r.results(0).op(), v1::SUM);
  EXPECT_EQ(r.results(0).dtype(), v1::FLOAT32);
  EXPECT_EQ(r.results(0).value(), static_cast<double>(static_cast<float>(r.value())));
  // And by `values`, the JSON tools' field.
  v1::ReduceRequest by_values;
  by_values.mutable_spec()->set_op(v1::ARGMAX);
  for (float x : {1.5f, 7.0f, -2.0f, 7.0f}) by_values.add_values(x);
  const Outcome arg = h_->Unary(by_values);
  ASSERT_TRUE(arg.status.ok()) << arg.status.error_message();
  EXPECT_EQ(arg.response.index(), 1);
  EXPECT_EQ(arg.response.value(), 7.0);
}

// ---- Streams.

TEST_F(ArrayApiTest, StreamsCutInsideElementsAnswerAsTheUnaryRequest) {
  SCOPED_TRACE(SeedTrace(seed_));
  // Every op but the plain float64 sums of squares (SUM_SQUARES, VAR, STD: the next test).
  std::vector<v1::Op> ops;
  for (v1::Op op : AllOps()) {
    if (BaseOf(op) != v1::VAR && BaseOf(op) != v1::STD && op != v1::SUM_SQUARES) {
      ops.push_back(op);
    }
  }
  const std::vector<size_t> tiny = {1, 3, 7, 5};
  const std::vector<size_t> odd = {1, 3, 7, 5, 65536 + 3, 4093, 131072 + 1, 9};
  for (v1::DType dtype : {v1::FLOAT64, v1::INT64, v1::FLOAT16}) {
    const Array big = RandomArray(dtype, kMillion, seed_ + dtype);
    ExpectStreamMatchesUnary(*h_, big, ops, odd, "odd cuts");
    ExpectStreamMatchesUnary(*h_, big, {v1::SUM}, odd, "odd cuts");
  }
  for (v1::DType dtype : AllDTypes()) {
    for (size_t n : {1, 2, 31}) {
      const Array a = RandomArray(dtype, n, seed_ + n);
      ExpectStreamMatchesUnary(*h_, a, ops, tiny, "tiny cuts");
      ExpectStreamMatchesUnary(*h_, a, {v1::MEAN}, {1}, "one byte a chunk");
    }
  }
}

// SUM_SQUARES, VAR and STD of a stream against the unary request's: Stats.sum_squares is a plain
// float64 sum and the moments are merged by Chan's formula wherever a piece ends, and a stream's
// pieces end where its chunks do, so float64 results may differ in their last bits (float64 x
// 1000003 STD 394.0181921500976 streamed, 394.01819215009709 unary); ExpectStreamMatchesUnary
// allows 1e-13 there. SUM and MEAN (compensated) and every other op are bit for bit the same.
TEST_F(ArrayApiTest, StreamedMomentsAreTheUnaryAnswerToTheLastBits) {
  SCOPED_TRACE(SeedTrace(seed_));
  const std::vector<v1::Op> ops = {v1::SUM_SQUARES, v1::VAR, v1::STD, v1::NANVAR, v1::NANSTD};
  for (v1::DType dtype : {v1::FLOAT64, v1::INT64, v1::INT32}) {
    ExpectStreamMatchesUnary(*h_, RandomArray(dtype, 31, seed_), ops, {1, 3, 7, 5}, "tiny cuts");
    ExpectStreamMatchesUnary(*h_, RandomArray(dtype, kMillion, seed_), ops,
                             {1, 3, 7, 5, 65536 + 3, 4093, 131072 + 1, 9}, "odd cuts");
  }
}

TEST_F(ArrayApiTest, AStreamThatEndsInsideAnElementIsInvalidArgument) {
  for (v1::DType dtype : {v1::FLOAT64, v1::INT64, v1::FLOAT16, v1::INT32}) {
    Array a = RandomArray(dtype, 31, seed_);
    a.bytes.pop_back();
    const Outcome got = h_->Stream(Chunks(MakeSpec(dtype, {v1::SUM}), a.bytes, {3, 5}));
    ExpectRefused(got, grpc::StatusCode::INVALID_ARGUMENT, "the stream ended inside an element");
    EXPECT_THAT(got.status.error_message(), HasSubstr("not a whole " + DTypeText(dtype)));
  }
}

// A `values` chunk (float32) while the first bytes of a float32 from `data` wait for the next
// chunk: the elements must be reduced in the order they were sent (or the stream refused).
// Found by the request-path fuzzer (seed stream_values_inside_an_element): a values chunk went
// past the held element. The server refuses it now.
TEST_F(ArrayApiTest, ValuesChunkInsideACutElementKeepsTheOrder) {
  const std::string one = Bytes(std::vector<float>{1.0f});
  std::vector<v1::ReduceChunk> chunks(3);
  *chunks[0].mutable_spec() = MakeSpec(v1::FLOAT32, {v1::ARGMAX, v1::ARGMIN});
  chunks[0].set_data(one.substr(0, 2));
  chunks[1].add_values(5.0f);
  chunks[2].set_data(one.substr(2));
  const Outcome got = h_->Stream(chunks);
  if (got.status.error_code() == grpc::StatusCode::INVALID_ARGUMENT) return;  // refused: fine
  ASSERT_TRUE(got.status.ok()) << got.status.error_message();
  EXPECT_EQ(got.response.results(0).index(), 1) << "ARGMAX of [1, 5] sent in that order";
  EXPECT_EQ(got.response.results(1).index(), 0) << "ARGMIN of [1, 5] sent in that order";
}

}  // namespace
}  // namespace gpureduce::testing::array_api
