// gpureduce-server reads every flag also from GPUREDUCE_<FLAG>, as containers configure it; the
// command line wins, and a bad variable stops the server with a message naming it. The old name
// of --cuda-streams, --streams (GPUREDUCE_STREAMS), still works with one warning, and a bad
// --devices list stops the server with a message naming the flag.

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/integration/server_process.h"
#include "tests/support/random_data.h"
#include "tests/support/wire.h"

namespace gpureduce::testing {
namespace {

using ::testing::HasSubstr;

TEST(EnvironmentTest, TheServerTakesItsFlagsFromTheEnvironmentAndTheCommandLineWins) {
  absl::StatusOr<std::unique_ptr<ServerProcess>> server = ServerProcess::StartWithEnvironment(
      {"--max-concurrent-requests=5"},
      {"GPUREDUCE_MAX_REQUEST_BYTES=1KiB", "GPUREDUCE_MAX_CONCURRENT_REQUESTS=3"});
  SKIP_IF_BACKEND_UNAVAILABLE(server.status());
  ASSERT_TRUE(server.ok()) << server.status();
  std::unique_ptr<client::ReducerClient> reducer = (*server)->Connect();
  const std::vector<float> small = MixedSignData(256, FreshSeed());
  EXPECT_TRUE(reducer->Reduce(Spec(v1::SUM), small).ok());
  const std::vector<float> big = MixedSignData(257, FreshSeed());
  absl::StatusOr<v1::ReduceResponse> refused = reducer->Reduce(Spec(v1::SUM), big);
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kResourceExhausted) << refused.status();
  absl::StatusOr<v1::ServerInfo> info = reducer->GetServerInfo();
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_EQ(info->max_request_bytes(), 1024u);
  EXPECT_EQ(info->max_concurrent_requests(), 5u) << "the command line wins";
}

TEST(EnvironmentTest, AMalformedVariableStopsTheServerNamingIt) {
  absl::StatusOr<std::unique_ptr<ServerProcess>> server =
      ServerProcess::StartWithEnvironment({}, {"GPUREDUCE_MAX_CHUNK_BYTES=12x"}, false);
  ASSERT_FALSE(server.ok());
  EXPECT_THAT(std::string(server.status().message()),
              HasSubstr("GPUREDUCE_MAX_CHUNK_BYTES: invalid value \"12x\""));
}

size_t Count(const std::string& text, const std::string& part) {
  size_t count = 0;
  for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++count;
  return count;
}

TEST(EnvironmentTest, TheOldNameOfCudaStreamsServesWithOneWarning) {
  const std::vector<std::pair<std::vector<std::string>, std::vector<std::string>>> ways = {
      {{"--streams=3"}, {}}, {{}, {"GPUREDUCE_STREAMS=3"}}};
  for (const auto& [flags, environment] : ways) {
    absl::StatusOr<std::unique_ptr<ServerProcess>> server =
        ServerProcess::StartWithEnvironment(flags, environment);
    SKIP_IF_BACKEND_UNAVAILABLE(server.status());
    ASSERT_TRUE(server.ok()) << server.status();
    const std::vector<float> data = MixedSignData(1001, FreshSeed());
    EXPECT_TRUE((*server)->Connect()->Reduce(Spec(v1::SUM), data).ok());
    EXPECT_EQ(Count((*server)->Log(),
                    "--streams (GPUREDUCE_STREAMS) is deprecated: use "
                    "--cuda-streams (GPUREDUCE_CUDA_STREAMS)"),
              1u)
        << (*server)->Log();
  }
}

TEST(EnvironmentTest, ABadDeviceListStopsTheServerNamingTheFlag) {
  absl::StatusOr<std::unique_ptr<ServerProcess>> server =
      ServerProcess::StartWithEnvironment({"--devices=0,x"}, {}, false);
  ASSERT_FALSE(server.ok());
  EXPECT_THAT(std::string(server.status().message()),
              HasSubstr("--devices=0,x: 'x' is not a GPU index; expected 'all' or GPU indices"));
}

}  // namespace
}  // namespace gpureduce::testing
