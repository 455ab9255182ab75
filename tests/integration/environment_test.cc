// gpureduce-server reads every flag also from GPUREDUCE_<FLAG>, as containers configure it; the
// command line wins, and a bad variable stops the server with a message naming it.

#include <memory>
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

}  // namespace
}  // namespace gpureduce::testing
