// gpureduce-load's typed workloads: payloads of the dtype, specs with the op list, the dtype and
// ddof, typed answers checked result by result; bytes count the payload's bytes.

#include <algorithm>
#include <span>
#include <string>
#include <vector>

#include "client/input/element_codec.h"
#include "client/load/load_flags.h"
#include "client/load/workload.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace gpureduce::client {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// The response a correct server sends: each expected answer, rounded to its dtype.
v1::ReduceResponse Correct(const Workload& workload, const Expected& expected) {
  v1::ReduceResponse response;
  response.set_count(expected.count);
  const std::vector<v1::Op> ops = workload.ops();
  for (size_t i = 0; i < ops.size(); ++i) {
    const TypedReference::Answer& answer = expected.results[i];
    v1::OpResult* result = response.add_results();
    result->set_op(ops[i]);
    result->set_dtype(answer.dtype);
    double value = answer.value;
    if (answer.dtype == v1::FLOAT16) value = HalfToDouble(DoubleToHalf(value));
    if (answer.dtype == v1::FLOAT32) value = static_cast<float>(value);
    result->set_value(value);
    result->set_int_value(answer.int_value);
    result->set_index(answer.index);
    result->set_overflow(answer.overflow);
  }
  return response;
}

TEST(WorkloadDTypeTest, UnaryFloat16WithAnOpList) {
  WorkloadOptions options;
  ASSERT_TRUE(ApplyOpAndDType("sum,min,max,mean,std,argmax", "float16", &options).ok());
  options.floats = 1001;
  options.payloads = 2;
  absl::StatusOr<Workload> workload = Workload::Make(options);
  ASSERT_TRUE(workload.ok()) << workload.status();
  EXPECT_TRUE(workload->typed());
  EXPECT_EQ(workload->request_bytes(), 2002u);
  const v1::ReduceRequest& request = workload->unary(0);
  EXPECT_EQ(request.spec().dtype(), v1::FLOAT16);
  EXPECT_THAT(request.spec().ops(),
              ElementsAre(v1::SUM, v1::MIN, v1::MAX, v1::MEAN, v1::STD, v1::ARGMAX));
  EXPECT_EQ(request.data().size(), 2002u);
  const Expected& expected = workload->unary_expected(0);
  ASSERT_EQ(expected.results.size(), 6u);
  v1::ReduceResponse response = Correct(*workload, expected);
  EXPECT_EQ(workload->Check(response, expected), "");
  response.mutable_results(5)->set_index(response.results(5).index() + 1);
  EXPECT_THAT(workload->Check(response, expected), HasSubstr("argmax: index"));
  response.clear_results();
  EXPECT_THAT(workload->Check(response, expected), HasSubstr("0 typed results for 6 ops"));
}

TEST(WorkloadDTypeTest, SharedMemoryPayloadsOfAnyDTypeGoInAsTheirBytes) {
  WorkloadOptions options;
  ASSERT_TRUE(ApplyOpAndDType("sum,max", "bfloat16", &options).ok());
  options.floats = 31;  // 62 bytes: regions and references need not be whole 4-byte words
  options.payloads = 3;
  std::vector<std::string> regions(2);  // what each region holds, byte for byte
  SharedPayloadTarget target;
  target.regions = {"a", "b"};
  target.write = [&regions](size_t region, uint64_t offset, std::span<const std::byte> data) {
    std::string& bytes = regions[region];
    bytes.resize(std::max<size_t>(bytes.size(), offset + data.size()));
    bytes.replace(offset, data.size(), reinterpret_cast<const char*>(data.data()), data.size());
    return absl::OkStatus();
  };
  absl::StatusOr<Workload> workload = Workload::Make(options, &target);
  ASSERT_TRUE(workload.ok()) << workload.status();
  for (size_t p = 0; p < 3; ++p) {
    const v1::ReduceRequest& request = workload->unary(p);
    EXPECT_EQ(request.spec().dtype(), v1::BFLOAT16);
    EXPECT_TRUE(request.data().empty());
    const v1::SharedMemoryRef& ref = request.shared_memory();
    EXPECT_EQ(ref.region(), target.regions[p % 2]);
    EXPECT_EQ(ref.offset(), (p / 2) * 62);
    EXPECT_EQ(ref.byte_size(), 62u);
  }
  // Payload 2 sits after payload 0 in region "a": the same bytes a message would carry.
  options.payloads = 3;
  absl::StatusOr<Workload> inline_workload = Workload::Make(options);
  ASSERT_TRUE(inline_workload.ok());
  EXPECT_EQ(regions[0], inline_workload->unary(0).data() + inline_workload->unary(2).data());
  EXPECT_EQ(regions[1], inline_workload->unary(1).data());
}

TEST(WorkloadDTypeTest, StreamsOfInt32CutAtElementsAndExactSums) {
  WorkloadOptions options;
  ASSERT_TRUE(ApplyOpAndDType("sum", "int32", &options).ok());
  options.stream_bytes = 4 * 100003;
  options.chunk_bytes = 4 * 1000;
  absl::StatusOr<Workload> workload = Workload::Make(options);
  ASSERT_TRUE(workload.ok()) << workload.status();
  EXPECT_EQ(workload->stream_head().spec().dtype(), v1::INT32);
  EXPECT_EQ(workload->stream_head().spec().op(), v1::SUM);
  EXPECT_EQ(workload->chunk(workload->stream_chunks() - 1).data().size(), 4u * 3);
  const Expected& expected = workload->stream_expected();
  EXPECT_EQ(expected.results.front().dtype, v1::INT64);
  EXPECT_EQ(workload->Check(Correct(*workload, expected), expected), "");

  options.chunk_bytes = 1022;
  EXPECT_THAT(Workload::Make(options).status().message(),
              HasSubstr("must be positive multiples of 4: the payload is int32"));
}

TEST(WorkloadDTypeTest, ABadOpOrDTypeIsNamed) {
  WorkloadOptions options;
  EXPECT_THAT(ApplyOpAndDType("sum,median", "float32", &options).message(),
              HasSubstr("'median' is not an op"));
  EXPECT_THAT(ApplyOpAndDType("sum", "uint8", &options).message(),
              HasSubstr("'uint8' is not a dtype"));
}

TEST(WorkloadDTypeTest, Float32SingleClassicOpStaysUntyped) {
  WorkloadOptions options;
  ASSERT_TRUE(ApplyOpAndDType("sum", "float32", &options).ok());
  absl::StatusOr<Workload> workload = Workload::Make(options);
  ASSERT_TRUE(workload.ok());
  EXPECT_FALSE(workload->typed());
  EXPECT_EQ(workload->unary(0).spec().dtype(), v1::DTYPE_UNSPECIFIED);
  EXPECT_TRUE(workload->unary_expected(0).results.empty());
}

}  // namespace
}  // namespace gpureduce::client
