// ServerMetrics as the reactors drive it: what each call, refusal and idle stream moves, the
// series only OK calls get, and the lines a scrape shows.

#include "server/metrics/server_metrics.h"

#include <chrono>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/server/metric_reading.h"

namespace gpureduce::server {
namespace {

using ::testing::HasSubstr;
using testing::SampleCount;
using testing::SeriesValue;
using namespace std::chrono_literals;

CallRecord OkCall(Method method, kernels::KernelId kernel, uint64_t bytes) {
  CallRecord call;
  call.method = method;
  call.op = gpureduce::Op::kSum;
  call.kernel = kernel;
  call.bytes = bytes;
  call.server = 3ms;
  call.timing.queue = 20us;
  call.timing.kernel = 2ms;
  return call;
}

std::string KernelName(kernels::KernelId kernel) {
  return std::string(kernels::GetKernel(kernel).name);
}

class ServerMetricsTest : public ::testing::Test {
 protected:
  ServerMetrics metrics_;
  const prometheus::Registry& registry_ = *metrics_.registry();
};

TEST_F(ServerMetricsTest, AFinishedCallCountsOnceWithItsLabelsAndLeavesNothingInFlight) {
  metrics_.CallStarted(Method::kReduce);
  metrics_.CallStarted(Method::kReduceStream);
  metrics_.CallStarted(Method::kReduce);
  EXPECT_EQ(SeriesValue(registry_, "gpureduce_requests_in_flight", {{"method", "Reduce"}}), 2);
  EXPECT_EQ(SeriesValue(registry_, "gpureduce_requests_in_flight", {{"method", "ReduceStream"}}),
            1);

  metrics_.CallFinished(OkCall(Method::kReduce, kernels::KernelId::kCpu, 4000));
  metrics_.CallFinished(OkCall(Method::kReduce, kernels::KernelId::kCpu, 1004));
  CallRecord refused;
  refused.method = Method::kReduceStream;
  refused.code = absl::StatusCode::kInvalidArgument;
  metrics_.CallFinished(refused);

  EXPECT_EQ(SeriesValue(registry_, "gpureduce_requests_in_flight", {{"method", "Reduce"}}), 0);
  EXPECT_EQ(SeriesValue(registry_, "gpureduce_requests_in_flight", {{"method", "ReduceStream"}}),
            0);
  EXPECT_EQ(SeriesValue(registry_, "gpureduce_requests_total",
                        {{"method", "Reduce"}, {"op", "sum"}, {"kernel", "cpu"}, {"code", "OK"}}),
            2);
  EXPECT_EQ(SeriesValue(registry_, "gpureduce_requests_total",
                        {{"method", "ReduceStream"},
                         {"op", "none"},
                         {"kernel", "none"},
                         {"code", "INVALID_ARGUMENT"}}),
            1)
      << "a call that ended before its spec is labelled none";
  EXPECT_EQ(SeriesValue(registry_, "gpureduce_reduced_bytes_total",
                        {{"method", "Reduce"}, {"kernel", "cpu"}}),
            5004);
}

TEST_F(ServerMetricsTest, OnlyOkCallsAreTimedAndTheirDurationsLandInSeconds) {
  metrics_.CallStarted(Method::kReduce);
  metrics_.CallFinished(OkCall(Method::kReduce, kernels::KernelId::kCpu, 8));
  metrics_.CallStarted(Method::kReduce);
  CallRecord failed = OkCall(Method::kReduce, kernels::KernelId::kCpu, 8);
  failed.code = absl::StatusCode::kCancelled;
  metrics_.CallFinished(failed);

  const std::optional<prometheus::ClientMetric> request = testing::FindSeries(
      registry_, "gpureduce_request_duration_seconds", {{"method", "Reduce"}, {"kernel", "cpu"}});
  ASSERT_TRUE(request.has_value());
  EXPECT_EQ(request->histogram.sample_count, 1u) << "the cancelled call is not timed";
  EXPECT_DOUBLE_EQ(request->histogram.sample_sum, 0.003);
  // 3 ms falls in the 5 ms bucket, not in the 2.5 ms one.
  for (const auto& bucket : request->histogram.bucket) {
    EXPECT_EQ(bucket.cumulative_count, bucket.upper_bound >= 0.003 ? 1u : 0u)
        << "bucket le=" << bucket.upper_bound;
  }
  EXPECT_EQ(SampleCount(registry_, "gpureduce_request_queue_duration_seconds", {{"kernel", "cpu"}}),
            1);
  EXPECT_EQ(
      SampleCount(registry_, "gpureduce_request_kernel_duration_seconds", {{"kernel", "cpu"}}), 1);
  EXPECT_EQ(SeriesValue(registry_, "gpureduce_reduced_bytes_total",
                        {{"method", "Reduce"}, {"kernel", "cpu"}}),
            8)
      << "bytes count only OK calls";
}

TEST_F(ServerMetricsTest, CopiesAreTimedForGpuKernelsOnlyAndOnlyWhenThereWasACopy) {
  metrics_.CallStarted(Method::kReduceStream);
  metrics_.CallFinished(OkCall(Method::kReduceStream, kernels::KernelId::kCpu, 4));
  EXPECT_FALSE(testing::FindSeries(registry_, "gpureduce_request_copy_duration_seconds",
                                   {{"direction", "h2d"}, {"kernel", "cpu"}})
                   .has_value())
      << "the CPU copies nothing";

  const std::string gpu = KernelName(kernels::KernelId::kSinglePass);
  CallRecord copied = OkCall(Method::kReduceStream, kernels::KernelId::kSinglePass, 4);
  copied.timing.h2d = 500us;
  for (int i = 0; i < 2; ++i) {
    metrics_.CallStarted(Method::kReduceStream);
    metrics_.CallFinished(copied);
  }
  CallRecord shared = copied;  // a region already on the device: nothing copied
  shared.timing.h2d = 0us;
  metrics_.CallStarted(Method::kReduceStream);
  metrics_.CallFinished(shared);
  EXPECT_EQ(SampleCount(registry_, "gpureduce_request_copy_duration_seconds",
                        {{"direction", "h2d"}, {"kernel", gpu}}),
            2);
  EXPECT_EQ(SampleCount(registry_, "gpureduce_request_copy_duration_seconds",
                        {{"direction", "d2h"}, {"kernel", gpu}}),
            0)
      << "the kernels write their result to host memory: no read-back observed";
  EXPECT_EQ(
      SeriesValue(registry_, "gpureduce_requests_total",
                  {{"method", "ReduceStream"}, {"op", "sum"}, {"kernel", gpu}, {"code", "OK"}}),
      3);
}

TEST_F(ServerMetricsTest, RefusalsAndIdleStreamsCountByReason) {
  metrics_.Refused(Refusal::kNotReady);
  metrics_.Refused(Refusal::kServerFull);
  metrics_.Refused(Refusal::kServerFull);
  metrics_.Refused(Refusal::kClientFull);
  metrics_.Refused(Refusal::kClientFull);
  metrics_.Refused(Refusal::kClientFull);
  metrics_.StreamIdleEnded();
  EXPECT_EQ(SeriesValue(registry_, "gpureduce_admission_refusals_total", {{"reason", "not_ready"}}),
            1);
  EXPECT_EQ(
      SeriesValue(registry_, "gpureduce_admission_refusals_total", {{"reason", "server_full"}}), 2);
  EXPECT_EQ(
      SeriesValue(registry_, "gpureduce_admission_refusals_total", {{"reason", "client_full"}}), 3);
  EXPECT_EQ(SeriesValue(registry_, "gpureduce_streams_idle_ended_total"), 1);
}

TEST_F(ServerMetricsTest, TheExpositionTextHasEverySeriesWithHelpAndType) {
  metrics_.CallStarted(Method::kReduce);
  metrics_.CallFinished(OkCall(Method::kReduce, kernels::KernelId::kCpu, 4096));
  metrics_.Refused(Refusal::kServerFull);
  const std::string text = testing::ExpositionText(*metrics_.registry());
  EXPECT_THAT(text, HasSubstr("# TYPE gpureduce_requests_total counter\n"));
  EXPECT_THAT(text, HasSubstr("gpureduce_requests_total{code=\"OK\",kernel=\"cpu\","
                              "method=\"Reduce\",op=\"sum\"} 1\n"));
  EXPECT_THAT(text, HasSubstr("# TYPE gpureduce_request_duration_seconds histogram\n"));
  EXPECT_THAT(text, HasSubstr("gpureduce_request_duration_seconds_bucket{kernel=\"cpu\","
                              "method=\"Reduce\",le=\"0.005\"} 1\n"));
  EXPECT_THAT(text, HasSubstr("gpureduce_request_duration_seconds_bucket{kernel=\"cpu\","
                              "method=\"Reduce\",le=\"0.0025\"} 0\n"));
  EXPECT_THAT(text, HasSubstr("gpureduce_reduced_bytes_total{kernel=\"cpu\",method=\"Reduce\"} "
                              "4096\n"));
  EXPECT_THAT(text, HasSubstr("gpureduce_admission_refusals_total{reason=\"server_full\"} 1\n"));
  EXPECT_THAT(text, HasSubstr("gpureduce_requests_in_flight{method=\"ReduceStream\"} 0\n"));
  EXPECT_THAT(text, HasSubstr("# HELP gpureduce_streams_idle_ended_total "));
}

}  // namespace
}  // namespace gpureduce::server
