// gpureduce-load against the real server and against its sink, both started as processes the
// way a user starts them: answers checked, rates kept, errors counted by code.

#include <memory>
#include <string>

#include "client/load/load_runner.h"
#include "client/load/workload.h"
#include "gtest/gtest.h"
#include "tests/integration/server_process.h"

namespace gpureduce::testing {
namespace {

client::Workload MakeWorkload(client::WorkloadOptions options) {
  absl::StatusOr<client::Workload> workload = client::Workload::Make(options);
  EXPECT_TRUE(workload.ok()) << workload.status();
  return std::move(*workload);
}

client::LoadOptions Load(const std::string& target) {
  client::LoadOptions options;
  options.target = target;
  options.warmup = absl::Milliseconds(200);
  options.duration = absl::Seconds(1);
  return options;
}

TEST(LoadTest, ClosedLoopUnaryAnswersAreAllRightForEveryOp) {
  absl::StatusOr<std::unique_ptr<ServerProcess>> server = ServerProcess::Start({});
  SKIP_IF_BACKEND_UNAVAILABLE(server.status());
  ASSERT_TRUE(server.ok()) << server.status();
  for (v1::Op op :
       {v1::SUM, v1::PROD, v1::MIN, v1::MAX, v1::MEAN, v1::SUM_SQUARES, v1::ARGMIN, v1::ARGMAX}) {
    client::WorkloadOptions work;
    work.op = op;
    work.floats = 4097;
    const client::Workload workload = MakeWorkload(work);
    client::LoadOptions load = Load((*server)->target());
    load.concurrency = 4;
    load.connections = 2;
    load.duration = absl::Milliseconds(300);
    absl::StatusOr<client::LoadResult> result = client::RunLoad(load, workload);
    ASSERT_TRUE(result.ok()) << result.status();
    EXPECT_GT(result->ok, 10u) << v1::Op_Name(op);
    EXPECT_EQ(result->failed, 0u) << result->first_error;
    EXPECT_EQ(result->wrong, 0u) << result->first_wrong;
    EXPECT_EQ(result->unchecked, 0u);
    EXPECT_EQ(result->codes["OK"], result->ok);
    EXPECT_EQ(result->backend, TestBackend());
    EXPECT_EQ(result->latency.count(), result->ok);
    EXPECT_EQ(result->breakdown.server.count(), result->ok);
    EXPECT_GT(result->seconds, 0.2);
  }
}

TEST(LoadTest, StreamsAreCheckedAndCountTheirBytes) {
  absl::StatusOr<std::unique_ptr<ServerProcess>> server = ServerProcess::Start({});
  SKIP_IF_BACKEND_UNAVAILABLE(server.status());
  ASSERT_TRUE(server.ok()) << server.status();
  client::WorkloadOptions work;
  work.stream_bytes = (uint64_t{8} << 20) + 44;  // 8 MiB and 11 floats: a short last chunk
  work.chunk_bytes = uint64_t{1} << 20;
  work.op = v1::ARGMIN;
  const client::Workload workload = MakeWorkload(work);
  client::LoadOptions load = Load((*server)->target());
  load.concurrency = 2;
  load.requests = 6;
  load.duration = absl::ZeroDuration();
  absl::StatusOr<client::LoadResult> result = client::RunLoad(load, workload);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->ok, 6u) << result->first_error << result->first_wrong;
  EXPECT_EQ(result->bytes, 6 * work.stream_bytes);
}

TEST(LoadTest, OpenLoopKeepsItsRateAgainstTheSink) {
  absl::StatusOr<std::unique_ptr<ServerProcess>> sink = ServerProcess::StartSink();
  ASSERT_TRUE(sink.ok()) << sink.status();
  const client::Workload workload = MakeWorkload({});
  client::LoadOptions load = Load((*sink)->target());
  load.rate = 1000;
  load.connections = 2;
  load.duration = absl::Seconds(2);
  absl::StatusOr<client::LoadResult> result = client::RunLoad(load, workload);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->failed, 0u) << result->first_error;
  EXPECT_EQ(result->unchecked, result->ok) << "the sink's answers carry nothing to check";
  EXPECT_EQ(result->not_sent, 0u);
  // 2 s at 1000 rps: the schedule sends 2000, whatever the answers do.
  const uint64_t answers = result->latency.count();
  EXPECT_GE(answers, 1990u);
  EXPECT_LE(answers, 2010u);
  const double rate = answers / result->seconds;
  EXPECT_NEAR(rate, 1000, 50) << answers << " answers in " << result->seconds << " s";
}

TEST(LoadTest, ErrorsAreCountedByCodeAndWrongAnswersAsErrors) {
  absl::StatusOr<std::unique_ptr<ServerProcess>> server = ServerProcess::Start({});
  SKIP_IF_BACKEND_UNAVAILABLE(server.status());
  ASSERT_TRUE(server.ok()) << server.status();
  client::WorkloadOptions work;
  work.kernel = "no_such_kernel";
  client::LoadOptions load = Load((*server)->target());
  load.requests = 50;
  load.duration = absl::ZeroDuration();
  absl::StatusOr<client::LoadResult> refused = client::RunLoad(load, MakeWorkload(work));
  ASSERT_TRUE(refused.ok()) << refused.status();
  EXPECT_EQ(refused->failed, 50u);
  EXPECT_EQ(refused->codes["INVALID_ARGUMENT"], 50u);
  EXPECT_NE(refused->first_error.find("unknown kernel 'no_such_kernel'"), std::string::npos)
      << refused->first_error;

  // A sink that claims to be a server: its empty answers are checked, and all wrong.
  absl::StatusOr<std::unique_ptr<ServerProcess>> pretender =
      ServerProcess::StartSink({"--answer-backend=cpu"});
  ASSERT_TRUE(pretender.ok()) << pretender.status();
  load.target = (*pretender)->target();
  absl::StatusOr<client::LoadResult> wrong = client::RunLoad(load, MakeWorkload({}));
  ASSERT_TRUE(wrong.ok()) << wrong.status();
  EXPECT_EQ(wrong->wrong, 50u);
  EXPECT_EQ(wrong->ok, 0u);
  EXPECT_EQ(wrong->codes["WRONG_ANSWER"], 50u);
  EXPECT_FALSE(wrong->first_wrong.empty());
}

}  // namespace
}  // namespace gpureduce::testing
