// UNAVAILABLE before the self-check, NOT_SERVING health, and RESOURCE_EXHAUSTED when full.

#include <memory>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "grpcpp/client_context.h"
#include "gtest/gtest.h"
#include "tests/integration/server_process.h"
#include "tests/support/random_data.h"

namespace gpureduce::testing {
namespace {

using ::testing::HasSubstr;

v1::ReduceSpec SumSpec() {
  v1::ReduceSpec spec;
  spec.set_op(v1::SUM);
  return spec;
}

TEST(ReadinessTest, BeforeTheSelfCheckReduceIsUnavailableAndHealthNotServing) {
  auto server = ServerProcess::Start({"--ready-delay=1h"}, /*wait_until_serving=*/false);
  SKIP_IF_BACKEND_UNAVAILABLE(server.status());
  ASSERT_TRUE(server.ok()) << server.status();
  auto reducer = (*server)->Connect();
  absl::StatusOr<bool> serving = reducer->IsServing();
  ASSERT_TRUE(serving.ok()) << serving.status();
  EXPECT_FALSE(*serving);
  const std::vector<float> data = {1, 2, 3};
  auto got = reducer->Reduce(SumSpec(), data);
  EXPECT_EQ(got.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(std::string(got.status().message()), HasSubstr("self-check has not passed"));
  auto info = reducer->GetServerInfo();
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_FALSE(info->serving());
  // SIGTERM during the delay still stops the server promptly and cleanly. (An idle client
  // connection would hold the shutdown until gRPC's 5 s client backup poll sees the GOAWAY.)
  reducer.reset();
  const absl::Time before = absl::Now();
  EXPECT_EQ((*server)->Stop(), 0);
  EXPECT_LT(absl::Now() - before, absl::Seconds(2)) << (*server)->Log();
}

TEST(ReadinessTest, AFullServerAnswersResourceExhaustedThenRecovers) {
  auto server = ServerProcess::Start({"--max-concurrent-requests=1"});
  SKIP_IF_BACKEND_UNAVAILABLE(server.status());
  ASSERT_TRUE(server.ok()) << server.status();
  auto reducer = (*server)->Connect();

  // Hold the only slot with an open stream.
  grpc::ClientContext context;
  v1::ReduceResponse held_response;
  auto writer = reducer->stub().ReduceStream(&context, &held_response);
  v1::ReduceChunk first;
  *first.mutable_spec() = SumSpec();
  first.add_values(2.5f);
  ASSERT_TRUE(writer->Write(first));
  std::this_thread::sleep_for(std::chrono::milliseconds(200));

  const std::vector<float> data = {1, 2, 3};
  auto refused = reducer->Reduce(SumSpec(), data);
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(std::string(refused.status().message()), HasSubstr("the server is full"));

  writer->WritesDone();
  ASSERT_TRUE(writer->Finish().ok());
  EXPECT_EQ(held_response.value(), 2.5);
  auto after = reducer->Reduce(SumSpec(), data);
  ASSERT_TRUE(after.ok()) << after.status();
  EXPECT_EQ(after->value(), 6.0);
}

TEST(ReadinessTest, SigtermLetsAnInFlightStreamFinishAndExitsZero) {
  auto server = ServerProcess::Start({"--grace-period=20s"});
  SKIP_IF_BACKEND_UNAVAILABLE(server.status());
  ASSERT_TRUE(server.ok()) << server.status();
  auto reducer = (*server)->Connect();
  grpc::ClientContext context;
  v1::ReduceResponse response;
  auto writer = reducer->stub().ReduceStream(&context, &response);
  v1::ReduceChunk chunk;
  *chunk.mutable_spec() = SumSpec();
  chunk.add_values(1.0f);
  ASSERT_TRUE(writer->Write(chunk));
  std::this_thread::sleep_for(std::chrono::milliseconds(200));

  std::thread stopper([&] { EXPECT_EQ((*server)->Stop(), 0); });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // SIGTERM is in; keep streaming
  chunk.clear_spec();
  for (int i = 0; i < 9; ++i) ASSERT_TRUE(writer->Write(chunk));
  writer->WritesDone();
  const grpc::Status status = writer->Finish();
  stopper.join();
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(response.value(), 10.0);
}

}  // namespace
}  // namespace gpureduce::testing
