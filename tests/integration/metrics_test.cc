// The Prometheus endpoint of the real server: every call counted under its method, op, kernel
// and code, the histograms and byte counts of the OK ones, refusals and idle streams, the
// backend's own series, and a scrape that promtool accepts.

#include <stdlib.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "client/shared_memory/shared_memory_object.h"
#include "gmock/gmock.h"
#include "grpcpp/client_context.h"
#include "gtest/gtest.h"
#include "tests/integration/http_get.h"
#include "tests/integration/metrics_scrape.h"
#include "tests/integration/server_process.h"
#include "tests/support/random_data.h"
#include "tests/support/wire.h"

namespace gpureduce::testing {
namespace {

using ::testing::HasSubstr;

// promtool's verdict on a scrape, or a skip reason when promtool is not installed.
std::string Promtool(const std::string& scrape, bool* ran) {
  *ran = std::system("command -v promtool >/dev/null 2>&1") == 0;
  if (!*ran) return "";
  char path[] = "/tmp/gpureduce-scrape-XXXXXX";
  const int fd = mkstemp(path);
  if (fd < 0) return "mkstemp failed";
  close(fd);
  std::ofstream(path) << scrape;
  const std::string command = absl::StrCat("promtool check metrics < ", path, " 2>&1");
  std::string output;
  FILE* pipe = popen(command.c_str(), "r");
  char buffer[4096];
  while (pipe != nullptr && std::fgets(buffer, sizeof(buffer), pipe) != nullptr) output += buffer;
  const int status = pipe != nullptr ? pclose(pipe) : -1;
  std::remove(path);
  return status == 0 ? "" : absl::StrCat("promtool check metrics failed: ", output);
}

TEST(MetricsTest, EveryCallIsCountedAndTheScrapePassesPromtool) {
  MetricsServer metrics = StartWithMetrics({"--stream-idle-timeout=1s"});
  SKIP_IF_BACKEND_UNAVAILABLE(metrics.status);
  ASSERT_TRUE(metrics.status.ok()) << metrics.status;
  ASSERT_GT(metrics.metrics_port, 0);
  std::unique_ptr<client::ReducerClient> reducer = metrics.server->Connect();
  const std::string kernel = TestDefaultKernel();

  const std::vector<float> unary = MixedSignData(4097, FreshSeed());
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(reducer->Reduce(Spec(v1::SUM), unary).ok());
  const std::vector<float> streamed = MixedSignData(100003, FreshSeed());
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(StreamFloats(*reducer, Spec(v1::ARGMAX), streamed, 30011).ok());
  }
  EXPECT_FALSE(reducer->Reduce(Spec(v1::MIN, "no_such_kernel"), unary).ok());
  {  // A stream that stalls after its first chunk: ended by the idle timeout.
    grpc::ClientContext context;
    v1::ReduceResponse response;
    auto writer = reducer->stub().ReduceStream(&context, &response);
    v1::ReduceChunk chunk;
    *chunk.mutable_spec() = Spec(v1::SUM);
    chunk.set_data(Bytes(unary));
    ASSERT_TRUE(writer->Write(chunk));
    EXPECT_EQ(writer->Finish().error_code(), grpc::StatusCode::CANCELLED);
  }

  absl::StatusOr<std::string> scrape = HttpGet(metrics.metrics_port, "/metrics");
  ASSERT_TRUE(scrape.ok()) << scrape.status();
  const std::string& s = *scrape;
  const char* requests = "gpureduce_requests_total";
  EXPECT_EQ(
      Value(s, requests, {{"code", "OK"}, {"kernel", kernel}, {"method", "Reduce"}, {"op", "sum"}}),
      5);
  EXPECT_EQ(
      Value(s, requests,
            {{"code", "OK"}, {"kernel", kernel}, {"method", "ReduceStream"}, {"op", "argmax"}}),
      3);
  EXPECT_EQ(
      Value(
          s, requests,
          {{"code", "INVALID_ARGUMENT"}, {"kernel", "none"}, {"method", "Reduce"}, {"op", "none"}}),
      1);
  EXPECT_EQ(
      Value(s, requests,
            {{"code", "CANCELLED"}, {"kernel", kernel}, {"method", "ReduceStream"}, {"op", "sum"}}),
      1);
  EXPECT_EQ(Value(s, "gpureduce_reduced_bytes_total", {{"kernel", kernel}, {"method", "Reduce"}}),
            5 * 4097 * 4);
  EXPECT_EQ(
      Value(s, "gpureduce_reduced_bytes_total", {{"kernel", kernel}, {"method", "ReduceStream"}}),
      3 * 100003 * 4);
  EXPECT_EQ(Value(s, "gpureduce_request_duration_seconds_count",
                  {{"kernel", kernel}, {"method", "Reduce"}}),
            5);
  EXPECT_EQ(Value(s, "gpureduce_request_kernel_duration_seconds_count", {{"kernel", kernel}}), 8);
  EXPECT_EQ(Value(s, "gpureduce_requests_in_flight", {{"method", "Reduce"}}), 0);
  EXPECT_EQ(Value(s, "gpureduce_requests_in_flight", {{"method", "ReduceStream"}}), 0);
  EXPECT_EQ(Value(s, "gpureduce_streams_idle_ended_total"), 1);
  EXPECT_EQ(Value(s, "gpureduce_admission_refusals_total", {{"reason", "server_full"}}), 0);
  EXPECT_THAT(s, HasSubstr(absl::StrCat("gpureduce_server_info{backend=\"", TestBackend())));
  if (TestBackend() == "cuda") {
    EXPECT_GE(Value(s, "gpureduce_staging_buffers", {{"device", "0"}}), 1);
    EXPECT_GT(Value(s, "gpureduce_gpu_memory_used_bytes", {{"device", "0"}}), 0);
    // The three streams copy to the GPU; the five small unary requests do not: their kernel
    // reads their 16 KiB from mapped pinned memory, and that counts as kernel time.
    EXPECT_EQ(Value(s, "gpureduce_request_copy_duration_seconds_count",
                    {{"direction", "h2d"}, {"kernel", kernel}}),
              3);
  }
  bool ran = false;
  EXPECT_EQ(Promtool(s, &ran), "");
  if (!ran) std::printf("promtool is not installed: the scrape's format went unchecked\n");
}

TEST(MetricsTest, RefusalsAreCountedByReason) {
  MetricsServer metrics = StartWithMetrics({"--max-concurrent-requests=1"});
  SKIP_IF_BACKEND_UNAVAILABLE(metrics.status);
  ASSERT_TRUE(metrics.status.ok()) << metrics.status;
  std::unique_ptr<client::ReducerClient> reducer = metrics.server->Connect();
  grpc::ClientContext context;
  v1::ReduceResponse response;
  auto writer = reducer->stub().ReduceStream(&context, &response);
  v1::ReduceChunk chunk;
  *chunk.mutable_spec() = Spec(v1::SUM);
  chunk.add_values(1.5f);
  ASSERT_TRUE(writer->Write(chunk));
  // The one slot is held once the server has the stream; a request admitted before that would
  // take it from the stream.
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  int refused = 0;
  for (int i = 0; i < 100 && refused == 0; ++i) {
    refused += reducer->Reduce(Spec(v1::SUM), std::vector<float>{1, 2}).ok() ? 0 : 1;
    if (refused == 0) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ASSERT_EQ(refused, 1);
  writer->WritesDone();
  ASSERT_TRUE(writer->Finish().ok());
  absl::StatusOr<std::string> scrape = HttpGet(metrics.metrics_port, "/metrics");
  ASSERT_TRUE(scrape.ok()) << scrape.status();
  EXPECT_EQ(Value(*scrape, "gpureduce_admission_refusals_total", {{"reason", "server_full"}}), 1)
      << *scrape;
  EXPECT_EQ(Value(*scrape, "gpureduce_admission_refusals_total", {{"reason", "client_full"}}), 0);
  EXPECT_EQ(Value(*scrape, "gpureduce_requests_total",
                  {{"code", "RESOURCE_EXHAUSTED"},
                   {"kernel", "none"},
                   {"method", "Reduce"},
                   {"op", "none"}}),
            1);
}

TEST(MetricsTest, AnAddressThatCannotBeServedStopsTheServerWithAMessage) {
  absl::StatusOr<std::unique_ptr<ServerProcess>> server =
      ServerProcess::Start({"--metrics-listen=256.1.2.3:99999"}, /*wait_until_serving=*/false);
  SKIP_IF_BACKEND_UNAVAILABLE(server.status());
  ASSERT_FALSE(server.ok());
  EXPECT_THAT(std::string(server.status().message()), HasSubstr("cannot serve metrics on"));
}

TEST(MetricsTest, SharedMemoryRegionsAreCounted) {
  MetricsServer metrics = StartWithMetrics({"--allow-shared-memory"});
  SKIP_IF_BACKEND_UNAVAILABLE(metrics.status);
  ASSERT_TRUE(metrics.status.ok()) << metrics.status;
  std::unique_ptr<client::ReducerClient> reducer = metrics.server->Connect();
  absl::StatusOr<client::SharedMemoryObject> object = client::SharedMemoryObject::Create(4096);
  ASSERT_TRUE(object.ok()) << object.status();
  ASSERT_TRUE(reducer->RegisterSystemSharedMemory("a", object->key(), 0, 4096).ok());
  ASSERT_TRUE(reducer->RegisterSystemSharedMemory("b", object->key(), 1024, 2048).ok());
  absl::StatusOr<std::string> scrape = HttpGet(metrics.metrics_port, "/metrics");
  ASSERT_TRUE(scrape.ok()) << scrape.status();
  EXPECT_EQ(Value(*scrape, "gpureduce_shared_memory_regions"), 2) << *scrape;
  EXPECT_EQ(Value(*scrape, "gpureduce_shared_memory_bytes"), 6144);
  EXPECT_EQ(Value(*scrape, "gpureduce_shared_memory_requests_reading"), 0);
  ASSERT_TRUE(reducer->UnregisterAllSharedMemory().ok());
  scrape = HttpGet(metrics.metrics_port, "/metrics");
  ASSERT_TRUE(scrape.ok());
  EXPECT_EQ(Value(*scrape, "gpureduce_shared_memory_regions"), 0);
}

}  // namespace
}  // namespace gpureduce::testing
