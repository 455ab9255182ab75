// gpureduce-load's array requests: --shape/--axis/--keepdims/--segments parsed into the workload,
// the layout in every spec (unary and streams), each answer's arrays checked element by element,
// and the report stating the layout.

#include <cstring>
#include <string>
#include <vector>

#include "client/array_reference.h"
#include "client/load/load_flags.h"
#include "client/load/load_report.h"
#include "client/load/workload.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/client/input_test_util.h"

namespace gpureduce::client {
namespace {

using ::gpureduce::client::testing::TempPath;
using ::gpureduce::client::testing::WriteFile;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

absl::StatusOr<WorkloadOptions> Apply(const std::string& op, LayoutFlags flags,
                                      uint64_t floats = 100003) {
  WorkloadOptions work;
  work.floats = floats;
  if (absl::Status applied = ApplyOpAndDType(op, "float32", &work); !applied.ok()) return applied;
  if (absl::Status applied = ApplyLayout(flags, &work); !applied.ok()) return applied;
  return work;
}

// The response a correct server sends: each op's array, its elements rounded to the result dtype.
v1::ReduceResponse Correct(const Workload& workload, const Expected& expected) {
  v1::ReduceResponse response;
  response.set_count(expected.count);
  const std::vector<v1::Op> ops = workload.ops();
  for (size_t i = 0; i < ops.size(); ++i) {
    v1::OpResult* result = response.add_results();
    result->set_op(ops[i]);
    result->set_dtype(expected.arrays[i].front().dtype);
    for (const uint64_t extent : expected.shape) result->add_shape(extent);
    std::string data;
    for (const TypedReference::Answer& answer : expected.arrays[i]) {
      if (answer.index >= 0) {
        data.append(reinterpret_cast<const char*>(&answer.index), 8);
      } else {
        const float value = static_cast<float>(answer.value);
        data.append(reinterpret_cast<const char*>(&value), 4);
      }
    }
    result->set_data(data);
  }
  return response;
}

TEST(LoadLayoutFlagsTest, SegmentsAsACountAListOrAFile) {
  absl::StatusOr<WorkloadOptions> work = Apply("sum", {.segments = "7"});
  ASSERT_TRUE(work.ok()) << work.status();
  // 100003 = 7 x 14286 + 1: the first segment takes the one left over.
  EXPECT_THAT(work->layout.segments, ElementsAre(14287, 14286, 14286, 14286, 14286, 14286, 14286));
  work = Apply("sum", {.segments = "3,0,100000"});
  ASSERT_TRUE(work.ok()) << work.status();
  EXPECT_THAT(work->layout.segments, ElementsAre(3, 0, 100000));
  const std::string path = TempPath("lengths");
  WriteFile(path, "100003\n");  // from a file, one number is one length
  work = Apply("sum", {.segments = "@" + path});
  ASSERT_TRUE(work.ok()) << work.status();
  EXPECT_THAT(work->layout.segments, ElementsAre(100003));
  // Streams: the request's elements are --bytes over the dtype's size.
  WorkloadOptions streams;
  streams.stream_bytes = 4 * 1000;
  ASSERT_TRUE(ApplyLayout({.segments = "3"}, &streams).ok());
  EXPECT_THAT(streams.layout.segments, ElementsAre(334, 333, 333));
}

TEST(LoadLayoutFlagsTest, ShapeAndAxes) {
  absl::StatusOr<WorkloadOptions> work =
      Apply("sum,argmax", {.shape = "1024,1024", .axis = "-1", .keepdims = true}, 1 << 20);
  ASSERT_TRUE(work.ok()) << work.status();
  EXPECT_THAT(work->layout.shape, ElementsAre(1024, 1024));
  EXPECT_THAT(work->layout.axes, ElementsAre(-1));
  EXPECT_TRUE(work->layout.keepdims);
  EXPECT_FALSE(Apply("sum", {}).value().layout.array());
}

TEST(LoadLayoutFlagsTest, RefusalsNameTheFlags) {
  EXPECT_THAT(Apply("sum", {.axis = "1"}).status().message(), HasSubstr("--axis needs --shape"));
  EXPECT_THAT(Apply("sum", {.shape = "100,1000"}).status().message(),
              HasSubstr("--shape (100, 1000) holds 100000 elements, but each request (100003"));
  EXPECT_THAT(Apply("sum", {.shape = "100003", .segments = "2"}).status().message(),
              HasSubstr("--shape and --segments exclude each other"));
  EXPECT_THAT(Apply("sum", {.segments = "0"}).status().message(), HasSubstr("--segments 0"));
  EXPECT_THAT(Apply("sum", {.segments = "5,5"}).status().message(),
              HasSubstr("--segments add up to 10 elements"));
  EXPECT_THAT(Apply("sum", {.shape = "7,14287", .axis = "2"}).status().message(),
              HasSubstr("--axis 2 is out of bounds for an array of dimension 2"));
  EXPECT_THAT(Apply("argmin", {.shape = "1,7,14287", .axis = "0,1"}).status().message(),
              HasSubstr("argmin reduces one axis or every axis"));
}

TEST(WorkloadArrayTest, UnaryRequestsCarryTheLayoutAndAreCheckedPerElement) {
  absl::StatusOr<WorkloadOptions> options =
      Apply("sum,max,argmin", {.shape = "31,1009", .axis = "0"}, 31 * 1009);
  ASSERT_TRUE(options.ok()) << options.status();
  options->payloads = 2;
  absl::StatusOr<Workload> workload = Workload::Make(*options);
  ASSERT_TRUE(workload.ok()) << workload.status();
  EXPECT_TRUE(workload->typed());
  const v1::ReduceSpec& spec = workload->unary(1).spec();
  EXPECT_THAT(spec.shape(), ElementsAre(31, 1009));
  EXPECT_THAT(spec.axes(), ElementsAre(0));
  EXPECT_THAT(spec.ops(), ElementsAre(v1::SUM, v1::MAX, v1::ARGMIN));
  const Expected& expected = workload->unary_expected(1);
  EXPECT_THAT(expected.shape, ElementsAre(1009));
  ASSERT_EQ(expected.arrays.size(), 3u);
  ASSERT_EQ(expected.arrays[0].size(), 1009u);

  v1::ReduceResponse response = Correct(*workload, expected);
  EXPECT_EQ(workload->Check(response, expected), "");
  // One element of the max wrong: found, by its index.
  std::string data = response.results(1).data();
  float element;
  std::memcpy(&element, data.data() + 4 * 500, 4);
  element += 0.5f;
  std::memcpy(data.data() + 4 * 500, &element, 4);
  response.mutable_results(1)->set_data(data);
  EXPECT_THAT(workload->Check(response, expected), HasSubstr("at [500]"));
  // Another payload's answer is not this one's.
  EXPECT_NE(workload->Check(Correct(*workload, workload->unary_expected(0)), expected), "");
}

TEST(WorkloadArrayTest, StreamsAnswerForTheWholeStreamInItsChunks) {
  WorkloadOptions options;
  options.stream_bytes = 4 * 10007;
  options.chunk_bytes = 4 * 1000;
  options.payloads = 3;
  ASSERT_TRUE(ApplyOpAndDType("sum,nanmean", "float32", &options).ok());
  ASSERT_TRUE(ApplyLayout({.segments = "9,0,9998"}, &options).ok());
  absl::StatusOr<Workload> workload = Workload::Make(options);
  ASSERT_TRUE(workload.ok()) << workload.status();
  EXPECT_THAT(workload->stream_head().spec().segments(), ElementsAre(9, 0, 9998));
  // The stream's bytes, message by message, reduced here in one piece.
  std::string stream;
  for (size_t k = 0; k < workload->stream_chunks(); ++k) stream += workload->chunk(k).data();
  ASSERT_EQ(stream.size(), options.stream_bytes);
  const ArrayAnswers answers =
      ComputeArrayAnswers(options.layout, workload->ops(), DType::kFloat32, 0, {stream});
  const Expected& expected = workload->stream_expected();
  ASSERT_EQ(expected.arrays.size(), 2u);
  for (size_t s = 0; s < 3; ++s) {
    EXPECT_EQ(expected.arrays[0][s].value, answers[0][s].value) << s;
  }
  EXPECT_TRUE(std::isnan(expected.arrays[1][1].value));  // nanmean of nothing
  EXPECT_EQ(workload->Check(Correct(*workload, expected), expected), "");
}

TEST(WorkloadArrayTest, ALayoutThatDoesNotFitIsRefused) {
  WorkloadOptions options;
  options.floats = 100;
  options.layout.shape = {10, 11};
  absl::StatusOr<Workload> workload = Workload::Make(options);
  ASSERT_FALSE(workload.ok());
  EXPECT_THAT(workload.status().message(), HasSubstr("holds 110 elements, but each request"));
}

TEST(LoadReportTest, TheReportStatesTheLayout) {
  absl::StatusOr<WorkloadOptions> work = Apply("sum", {.shape = "1024,1024", .axis = "1"}, 1 << 20);
  ASSERT_TRUE(work.ok());
  const LoadRun run{"", LoadOptions{}, *work, LoadResult{}};
  EXPECT_THAT(ReportText(run), HasSubstr("unary requests of 1048576 floats, each as shape (1024, "
                                         "1024) along axis 1: 1024 results per op"));
  const nlohmann::json json = ReportJson(run);
  EXPECT_EQ(json["layout"], "shape (1024, 1024) along axis 1");
  EXPECT_EQ(json["outputs"], 1024);
  const LoadRun full{"", LoadOptions{}, WorkloadOptions{}, LoadResult{}};
  EXPECT_EQ(ReportJson(full)["layout"], "");
}

}  // namespace
}  // namespace gpureduce::client
