// The array API's refusals (issue 22, docs/array-api.md) through the real server: every bad
// request is INVALID_ARGUMENT or FAILED_PRECONDITION with a message naming what was wrong, each
// followed (the fixture's TearDown) by correct requests on the same server. Runs on the test
// backend (the CPU server; "gpu." with GPUREDUCE_TEST_BACKEND=cuda).

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "client/shared_memory/shared_memory_object.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/integration/array_api_fixture.h"
#include "tests/integration/server_process.h"

namespace gpureduce::testing::array_api {
namespace {

using ::testing::HasSubstr;

// ---- Refusals: each followed (TearDown) by correct requests on the same server.

TEST_F(ArrayApiTest, DataNotAMultipleOfTheDTypeSizeIsInvalidArgument) {
  for (v1::DType dtype : {v1::FLOAT64, v1::INT64, v1::FLOAT16, v1::BFLOAT16, v1::INT32}) {
    Array a = RandomArray(dtype, 5, seed_);
    a.bytes.push_back('\0');
    if (DTypeBytes(dtype) == 8) a.bytes += "ab";  // 43 bytes: a multiple of neither 8 nor 4
    ExpectRefused(h_->Reduce(a, {v1::SUM}), grpc::StatusCode::INVALID_ARGUMENT,
                  absl::StrCat("data holds ", a.bytes.size(), " bytes, which is not a multiple of ",
                               DTypeBytes(dtype)));
    EXPECT_THAT(h_->Reduce(a, {v1::SUM}).status.error_message(), HasSubstr(DTypeText(dtype)));
  }
}

TEST_F(ArrayApiTest, UnknownDTypeOrOpIsInvalidArgumentNamingTheField) {
  Array a = RandomArray(v1::FLOAT32, 4, seed_);
  v1::ReduceRequest request = MakeRequest(MakeSpec(v1::FLOAT32, {v1::SUM}), a);
  request.mutable_spec()->set_dtype(static_cast<v1::DType>(77));
  ExpectRefused(h_->Unary(request), grpc::StatusCode::INVALID_ARGUMENT, "unknown dtype 77");
  EXPECT_THAT(h_->Unary(request).status.error_message(), HasSubstr("dtype"));
  request = MakeRequest(MakeSpec(v1::FLOAT32, {v1::SUM, v1::MAX}), a);
  request.mutable_spec()->add_ops(static_cast<v1::Op>(42));
  ExpectRefused(h_->Unary(request), grpc::StatusCode::INVALID_ARGUMENT,
                "spec.ops[2]: unknown op 42");
  request = MakeRequest(MakeSpec(v1::FLOAT32, {v1::SUM}), a);
  request.mutable_spec()->set_op(static_cast<v1::Op>(20));
  ExpectRefused(h_->Unary(request), grpc::StatusCode::INVALID_ARGUMENT, "spec.op: unknown op 20");
}

TEST_F(ArrayApiTest, OpAndOpsBothSetOrAnOpTwiceIsInvalidArgument) {
  const Array a = RandomArray(v1::FLOAT64, 4, seed_);
  v1::ReduceRequest request = MakeRequest(MakeSpec(v1::FLOAT64, {v1::SUM, v1::MAX}), a);
  request.mutable_spec()->set_op(v1::MIN);
  ExpectRefused(h_->Unary(request), grpc::StatusCode::INVALID_ARGUMENT,
                "spec.op (MIN) and spec.ops (2 ops) are both set");
  ExpectRefused(h_->Reduce(a, {v1::SUM, v1::MAX, v1::SUM}), grpc::StatusCode::INVALID_ARGUMENT,
                "spec.ops[2]: sum is listed twice");
  // In a stream too.
  ExpectRefused(h_->Stream(Chunks(MakeSpec(v1::FLOAT64, {v1::STD, v1::STD}), a.bytes, {5})),
                grpc::StatusCode::INVALID_ARGUMENT, "spec.ops[1]");
}

TEST_F(ArrayApiTest, ADdofThatIsNotAFiniteNumberIsInvalidArgument) {
  const Array a = RandomArray(v1::FLOAT64, 4, seed_);
  for (double ddof : {kNan, kInf, -kInf}) {
    ExpectRefused(h_->Reduce(a, {v1::VAR}, ddof), grpc::StatusCode::INVALID_ARGUMENT,
                  "spec.ddof is");
  }
  // NumPy takes a negative ddof: np.var([1, 3, 5, 7], ddof=-1) is 20 / 5.
  Array b = RandomArray(v1::FLOAT64, 4, seed_);
  const double values[] = {1, 3, 5, 7};
  std::memcpy(b.bytes.data(), values, sizeof(values));
  const Outcome got = h_->Reduce(b, {v1::VAR}, -1.0);
  ASSERT_TRUE(got.status.ok()) << got.status.error_message();
  EXPECT_EQ(got.response.results(0).value(), 4.0);
}

TEST_F(ArrayApiTest, ValuesWithANonFloat32DTypeIsInvalidArgument) {
  for (v1::DType dtype : {v1::FLOAT64, v1::FLOAT16, v1::INT32}) {
    v1::ReduceRequest request;
    *request.mutable_spec() = MakeSpec(dtype, {v1::SUM});
    request.add_values(1.5f);
    ExpectRefused(h_->Unary(request), grpc::StatusCode::INVALID_ARGUMENT,
                  "values carries float32, but spec.dtype is " + DTypeText(dtype));
  }
}

TEST_F(ArrayApiTest, LadderAndCubRefuseWhatTheyCannotRun) {
  const Array half = RandomArray(v1::FLOAT16, 31, seed_);
  const Array single = RandomArray(v1::FLOAT32, 31, seed_);
  for (const std::string kernel : {"warp_shuffle", "cub"}) {
    const Outcome f16 = h_->Unary(MakeRequest(MakeSpec(v1::FLOAT16, {v1::SUM}, 0, kernel), half));
    const Outcome var = h_->Unary(MakeRequest(MakeSpec(v1::FLOAT32, {v1::VAR}, 0, kernel), single));
    if (TestBackend() == "cuda") {
      ExpectRefused(f16, grpc::StatusCode::INVALID_ARGUMENT,
                    "kernel '" + kernel +
                        "' does not reduce float16; kernels that do: cpu, "
                        "single_pass");
      ExpectRefused(var, grpc::StatusCode::INVALID_ARGUMENT,
                    "kernel '" + kernel +
                        "' does not support var; kernels that do: cpu, "
                        "single_pass");
    } else {
      // The CPU server lacks them whatever the request: FAILED_PRECONDITION, as before dtypes.
      for (const Outcome* got : {&f16, &var}) {
        ExpectRefused(*got, grpc::StatusCode::FAILED_PRECONDITION,
                      "kernel '" + kernel +
                          "' needs the cuda backend, but this server runs the "
                          "cpu backend");
      }
    }
  }
}

TEST_F(ArrayApiTest, NanArgOpsOfAllNanAreInvalidArgument) {
  for (v1::DType dtype : {v1::FLOAT32, v1::FLOAT16, v1::BFLOAT16, v1::FLOAT64}) {
    const Array a = FromValues(dtype, {kNan, kNan, kNan});
    for (v1::Op op : {v1::NANARGMIN, v1::NANARGMAX}) {
      ExpectRefused(h_->Reduce(a, {op}), grpc::StatusCode::INVALID_ARGUMENT,
                    "all 3 elements are NaN");
    }
    // ARGMIN answers the first NaN's index; NANMIN is NaN.
    const Outcome got = h_->Reduce(a, {v1::ARGMIN, v1::NANMIN, v1::NANSUM});
    ASSERT_TRUE(got.status.ok()) << got.status.error_message();
    EXPECT_EQ(got.response.results(0).index(), 0);
    EXPECT_TRUE(std::isnan(got.response.results(1).value()));
    EXPECT_EQ(got.response.results(2).value(), 0.0);
  }
}

TEST_F(ArrayApiTest, SharedMemoryRefOfAPartialElementIsInvalidArgument) {
  const Array a = RandomArray(v1::FLOAT64, 31, seed_);
  absl::StatusOr<client::SharedMemoryObject> object =
      client::SharedMemoryObject::Create(a.bytes.size());
  ASSERT_TRUE(object.ok()) << object.status();
  std::memcpy(object->data(), a.bytes.data(), a.bytes.size());
  const std::string name = object->region_name();
  ASSERT_TRUE(reducer_->RegisterSystemSharedMemory(name, object->key(), 0, a.bytes.size()).ok());
  auto by_ref = [&](uint64_t offset, uint64_t bytes) {
    v1::ReduceRequest request;
    *request.mutable_spec() = MakeSpec(v1::FLOAT64, {v1::SUM, v1::ARGMAX});
    request.mutable_shared_memory()->set_region(name);
    request.mutable_shared_memory()->set_offset(offset);
    request.mutable_shared_memory()->set_byte_size(bytes);
    return h_->Unary(request);
  };
  ExpectRefused(by_ref(0, 12), grpc::StatusCode::INVALID_ARGUMENT, "8");
  ExpectRefused(by_ref(4, 16), grpc::StatusCode::INVALID_ARGUMENT, "8");
  Array whole = a;
  ExpectAnswers(by_ref(0, a.bytes.size()), {v1::SUM, v1::ARGMAX}, whole, 0, "by reference");
  Array tail{v1::FLOAT64, a.bytes.substr(80)};
  ExpectAnswers(by_ref(80, a.bytes.size() - 80), {v1::SUM, v1::ARGMAX}, tail, 0, "from 80");
  EXPECT_TRUE(reducer_->UnregisterSharedMemory(name).ok());
}

}  // namespace
}  // namespace gpureduce::testing::array_api
