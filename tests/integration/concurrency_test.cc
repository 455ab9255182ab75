// 16 clients at once, each on its own channel, mixing ops, sizes, unary and streams: every
// answer must be right, and the server must keep its concurrency bookkeeping straight.

#include <random>
#include <thread>
#include <vector>

#include "common/reduction/op_name.h"
#include "gtest/gtest.h"
#include "tests/integration/server_process.h"
#include "tests/support/random_data.h"
#include "tests/support/reference.h"

namespace gpureduce::testing {
namespace {

constexpr int kClients = 16;
constexpr int kRequestsPerClient = 6;

TEST(ConcurrencyTest, SixteenConcurrentClientsAllGetRightAnswers) {
  auto server = ServerProcess::Start({});
  SKIP_IF_BACKEND_UNAVAILABLE(server.status());
  ASSERT_TRUE(server.ok()) << server.status();
  const uint64_t seed = FreshSeed();
  SCOPED_TRACE(SeedTrace(seed));

  std::vector<std::string> failures(kClients);
  std::vector<std::thread> clients;
  for (int c = 0; c < kClients; ++c) {
    clients.emplace_back([&, c] {
      auto reducer = (*server)->Connect();
      std::mt19937_64 rng(seed + c);
      for (int r = 0; r < kRequestsPerClient && failures[c].empty(); ++r) {
        const gpureduce::Op op = gpureduce::kClassicOps[rng() % std::size(gpureduce::kClassicOps)];
        const size_t n = 1 + rng() % 700001;
        const std::vector<float> data =
            op == gpureduce::Op::kProd ? NearOneData(n, rng()) : MixedSignData(n, rng());
        v1::ReduceSpec spec;
        spec.set_op(static_cast<v1::Op>(op));
        absl::StatusOr<v1::ReduceResponse> got;
        if (r % 2 == 0) {
          got = reducer->Reduce(spec, data);
        } else {
          got = StreamFloats(*reducer, spec, data, 1 + rng() % 100000);
        }
        if (!got.ok()) {
          failures[c] = "client " + std::to_string(c) + ": " + got.status().ToString();
        } else {
          const std::string why = CheckAgainstReference(op, ComputeReference(op, data),
                                                        got->value(), got->index(), 1e-9);
          if (!why.empty()) {
            failures[c] = "client " + std::to_string(c) + " op " +
                          std::string(gpureduce::OpName(op)) + " n=" + std::to_string(n) + ": " +
                          why;
          }
        }
      }
    });
  }
  for (std::thread& client : clients) client.join();
  for (const std::string& failure : failures) EXPECT_EQ(failure, "");
}

}  // namespace
}  // namespace gpureduce::testing
