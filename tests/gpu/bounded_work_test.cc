// Bounded GPU work through the server (kernels/work_bound.h): the heaviest request the server
// accepts on the slowest kernel (atomic_global PROD at its maximum) cannot starve other clients,
// leaves the GPU within 100 ms of its deadline and cannot hold up a shutdown; larger ones are
// refused up front. Without a GPU every test skips with the reason.

#include <signal.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <future>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "grpcpp/client_context.h"
#include "gtest/gtest.h"
#include "kernels/kernel_registry.h"
#include "kernels/work_bound.h"
#include "tests/integration/http_get.h"
#include "tests/integration/server_process.h"
#include "tests/support/random_data.h"
#include "tests/support/reference.h"

namespace gpureduce::testing {
namespace {

using Clock = std::chrono::steady_clock;
using gpureduce::Op;
using kernels::KernelId;

uint64_t HeaviestElements() {
  return kernels::GetWorkBound(KernelId::kAtomicGlobal, Op::kProd).max_elements;
}

v1::ReduceSpec Spec(v1::Op op, const std::string& kernel) {
  v1::ReduceSpec spec;
  spec.set_op(op);
  spec.set_kernel(kernel);
  return spec;
}

v1::ReduceSpec HeavySpec() { return Spec(v1::PROD, "atomic_global"); }

// The relative bound ladder_test states for products: (n - 1) u.
std::string CheckProduct(const std::vector<float>& data, const v1::ReduceResponse& got) {
  return CheckAgainstReference(Op::kProd, ComputeReference(Op::kProd, data), got.value(), -1,
                               0x1p-24 * double(data.size()) + 1e-7);
}

// How long the heaviest request takes on this server and GPU (the cost model is a worst case:
// paced launches of few elements contend less than the kernel over a whole array).
double HeavySeconds(client::ReducerClient& reducer, const std::vector<float>& heaviest) {
  const Clock::time_point start = Clock::now();
  absl::StatusOr<v1::ReduceResponse> got = reducer.Reduce(HeavySpec(), heaviest);
  EXPECT_TRUE(got.ok()) << got.status();
  return std::chrono::duration<double>(Clock::now() - start).count();
}

double Percentile(std::vector<double> values, double p) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  return values[std::min(values.size() - 1, size_t(p / 100 * values.size()))];
}

TEST(BoundedWorkTest, ListKernelsStatesTheCostModel) {
  auto server = ServerProcess::Start({}, true, "cuda");
  SKIP_IF_BACKEND_UNAVAILABLE(server.status());
  ASSERT_TRUE(server.ok()) << server.status();
  auto list = (*server)->Connect()->ListKernels();
  ASSERT_TRUE(list.ok()) << list.status();
  int bounded = 0;
  for (const v1::KernelInfo& kernel : list->kernels()) {
    const kernels::KernelInfo* known = kernels::FindKernel(kernel.name());
    ASSERT_NE(known, nullptr) << kernel.name();
    int expected = 0;
    for (Op op : known->ops) expected += kernels::GetWorkBound(known->id, op).max_elements != 0;
    EXPECT_EQ(kernel.bounds_size(), expected) << kernel.name();
    for (const v1::WorkBound& bound : kernel.bounds()) {
      const kernels::WorkBound model = kernels::GetWorkBound(known->id, Op(bound.op()));
      EXPECT_EQ(bound.max_elements(), model.max_elements) << kernel.name();
      EXPECT_EQ(bound.elements_per_launch(), model.elements_per_launch) << kernel.name();
      EXPECT_FALSE(bound.why().empty());
      ++bounded;
    }
  }
  EXPECT_GT(bounded, 0) << "the atomic variants state their bounds";
}

TEST(BoundedWorkTest, WorkBeyondTheBoundIsRefusedUpFrontAndTheMaximumIsRight) {
  auto server = ServerProcess::Start({}, true, "cuda");
  SKIP_IF_BACKEND_UNAVAILABLE(server.status());
  ASSERT_TRUE(server.ok()) << server.status();
  auto reducer = (*server)->Connect();
  const uint64_t seed = FreshSeed();
  SCOPED_TRACE(SeedTrace(seed));
  const uint64_t max = HeaviestElements();
  const std::vector<float> too_many = NearOneData(max + 1, seed);

  // Unary, and a stream that declares its size: refused before any GPU work.
  Clock::time_point start = Clock::now();
  absl::StatusOr<v1::ReduceResponse> refused = reducer->Reduce(HeavySpec(), too_many);
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(refused.status().message().find(absl::StrCat("at most ", max, " elements")),
            std::string::npos)
      << refused.status();
  EXPECT_NE(refused.status().message().find("auto"), std::string::npos) << refused.status();
  v1::ReduceSpec declared = HeavySpec();
  declared.set_expected_count(max + 1);
  EXPECT_EQ(StreamFloats(*reducer, declared, too_many, 4096).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_LT(Clock::now() - start, std::chrono::milliseconds(500)) << "refusals ran GPU work";

  // A stream that declares nothing is refused at the chunk that crosses the bound.
  absl::StatusOr<v1::ReduceResponse> crossed =
      StreamFloats(*reducer, HeavySpec(), too_many, max / 2 + 1);
  EXPECT_EQ(crossed.status().code(), absl::StatusCode::kInvalidArgument) << crossed.status();

  // Exactly the maximum: right, and within the budget the model promises (with room for error).
  const std::vector<float> heaviest(too_many.begin(), too_many.begin() + max);
  start = Clock::now();
  absl::StatusOr<v1::ReduceResponse> got = reducer->Reduce(HeavySpec(), heaviest);
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(CheckProduct(heaviest, *got), "");
  std::printf("atomic_global PROD at its maximum, %llu elements: %.2f s (kernel %.0f ms)\n",
              static_cast<unsigned long long>(max), seconds, got->timing().kernel_us() / 1e3);
  EXPECT_LT(seconds, 1.5 * std::chrono::duration<double>(kernels::kRequestBudget).count());
}

TEST(BoundedWorkTest, SmallRequestsStayFastWhileTheHeaviestRuns) {
  auto server = ServerProcess::Start({"--auto-cpu-below=256KiB"}, true, "cuda");
  SKIP_IF_BACKEND_UNAVAILABLE(server.status());
  ASSERT_TRUE(server.ok()) << server.status();
  const uint64_t seed = FreshSeed();
  SCOPED_TRACE(SeedTrace(seed));
  const std::vector<float> heaviest = NearOneData(HeaviestElements(), seed);
  auto heavy_client = (*server)->Connect();
  std::future<absl::StatusOr<v1::ReduceResponse>> heavy =
      std::async(std::launch::async, [&] { return heavy_client->Reduce(HeavySpec(), heaviest); });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));

  // Another client: 1024-float requests, `auto` (the CPU, by size) and single_pass (a
  // high-priority GPU stream), one after another for as long as the heavy one runs.
  auto small_client = (*server)->Connect();
  const std::vector<float> small = MixedSignData(1024, seed + 1);
  const Reference sum = ComputeReference(Op::kSum, small);
  std::vector<double> auto_ms, gpu_ms;
  int wrong = 0;
  while (heavy.wait_for(std::chrono::seconds(0)) != std::future_status::ready ||
         gpu_ms.size() < 20) {
    for (const char* kernel : {"auto", "single_pass"}) {
      const Clock::time_point sent = Clock::now();
      absl::StatusOr<v1::ReduceResponse> got = small_client->Reduce(Spec(v1::SUM, kernel), small);
      const double ms = std::chrono::duration<double, std::milli>(Clock::now() - sent).count();
      if (!got.ok() || CheckAgainstReference(Op::kSum, sum, got->value(), -1, 1e-6) != "") {
        ++wrong;
        continue;
      }
      (std::string(kernel) == "auto" ? auto_ms : gpu_ms).push_back(ms);
    }
  }
  absl::StatusOr<v1::ReduceResponse> heavy_result = heavy.get();
  ASSERT_TRUE(heavy_result.ok()) << heavy_result.status();
  EXPECT_EQ(CheckProduct(heaviest, *heavy_result), "");
  std::printf(
      "during the heaviest request: %zu auto requests p99 %.2f ms, %zu single_pass p99 "
      "%.2f ms\n",
      auto_ms.size(), Percentile(auto_ms, 99), gpu_ms.size(), Percentile(gpu_ms, 99));
  EXPECT_EQ(wrong, 0);
  EXPECT_LT(Percentile(auto_ms, 99), 20.0);
  EXPECT_LT(Percentile(gpu_ms, 99), 20.0);
}

// The server's gpureduce_requests_in_flight for `method`: it drops when a call concludes, which
// is after the GPU has finished the call's work.
absl::StatusOr<double> CallsInFlight(int metrics_port, const std::string& method) {
  absl::StatusOr<std::string> scrape = HttpGet(metrics_port, "/metrics");
  if (!scrape.ok()) return scrape.status();
  const std::string series = absl::StrCat("gpureduce_requests_in_flight{method=\"", method, "\"} ");
  for (absl::string_view line : absl::StrSplit(*scrape, '\n')) {
    double value = 0;
    if (absl::ConsumePrefix(&line, series) && absl::SimpleAtod(line, &value)) return value;
  }
  return absl::NotFoundError(absl::StrCat("no gpureduce_requests_in_flight for ", method));
}

void ExpectLeftTheGpuWithin100ms(int metrics_port, const std::string& method,
                                 Clock::time_point expiry) {
  absl::StatusOr<double> in_flight;
  do {
    in_flight = CallsInFlight(metrics_port, method);
    ASSERT_TRUE(in_flight.ok()) << in_flight.status();
  } while (*in_flight > 0 && Clock::now() - expiry < std::chrono::seconds(5));
  const double after_ms = std::chrono::duration<double, std::milli>(Clock::now() - expiry).count();
  std::printf("the expired %s left the GPU %.1f ms after its deadline\n", method.c_str(), after_ms);
  EXPECT_EQ(*in_flight, 0);
  EXPECT_LT(after_ms, 100.0);
}

TEST(BoundedWorkTest, AnExpiredRequestLeavesTheGpuWithin100ms) {
  const std::string port_file = absl::StrCat(::testing::TempDir(), "/bounded-metrics-port");
  auto server = ServerProcess::Start(
      {"--metrics-listen=127.0.0.1:0", absl::StrCat("--metrics-port-file=", port_file)}, true,
      "cuda");
  SKIP_IF_BACKEND_UNAVAILABLE(server.status());
  ASSERT_TRUE(server.ok()) << server.status();
  int metrics_port = 0;
  std::ifstream(port_file) >> metrics_port;
  ASSERT_GT(metrics_port, 0);
  auto reducer = (*server)->Connect();
  const std::vector<float> heaviest = NearOneData(HeaviestElements(), FreshSeed());

  // The deadline falls halfway through the heavy request's work.
  const auto half_way = std::chrono::duration_cast<std::chrono::microseconds>(
      std::chrono::duration<double>(HeavySeconds(*reducer, heaviest) / 2));
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + half_way);
  const Clock::time_point expiry = Clock::now() + half_way;
  v1::ReduceRequest request;
  *request.mutable_spec() = HeavySpec();
  request.set_data(
      std::string(reinterpret_cast<const char*>(heaviest.data()), heaviest.size() * sizeof(float)));
  v1::ReduceResponse response;
  const grpc::Status status = reducer->stub().Reduce(&context, request, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::DEADLINE_EXCEEDED) << status.error_message();

  ExpectLeftTheGpuWithin100ms(metrics_port, "Reduce", expiry);

  // The same as a stream of one-launch chunks: each chunk ends only when its launch is done, so
  // chunks cannot pile launches up ahead of the cancellation check.
  grpc::ClientContext stream_context;
  stream_context.set_deadline(std::chrono::system_clock::now() + half_way);
  const Clock::time_point stream_expiry = Clock::now() + half_way;
  v1::ReduceResponse stream_response;
  auto writer = reducer->stub().ReduceStream(&stream_context, &stream_response);
  const size_t chunk =
      kernels::GetWorkBound(KernelId::kAtomicGlobal, Op::kProd).elements_per_launch;
  bool writing = true;
  for (size_t at = 0; writing && at < heaviest.size(); at += chunk) {
    v1::ReduceChunk message;
    if (at == 0) *message.mutable_spec() = HeavySpec();
    message.set_data(std::string(reinterpret_cast<const char*>(heaviest.data() + at),
                                 std::min(chunk, heaviest.size() - at) * sizeof(float)));
    writing = writer->Write(message);
  }
  if (writing) writer->WritesDone();
  EXPECT_EQ(writer->Finish().error_code(), grpc::StatusCode::DEADLINE_EXCEEDED);
  ExpectLeftTheGpuWithin100ms(metrics_port, "ReduceStream", stream_expiry);

  // The server goes on as before.
  const std::vector<float> half(heaviest.begin(), heaviest.begin() + heaviest.size() / 2);
  absl::StatusOr<v1::ReduceResponse> got = reducer->Reduce(HeavySpec(), half);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(CheckProduct(half, *got), "");
}

TEST(BoundedWorkTest, SigtermDuringTheHeaviestRequestExitsWithinTheGracePeriod) {
  const std::vector<float> heaviest = NearOneData(HeaviestElements(), FreshSeed());
  double heavy_seconds = 0;
  {
    auto probe = ServerProcess::Start({}, true, "cuda");
    SKIP_IF_BACKEND_UNAVAILABLE(probe.status());
    ASSERT_TRUE(probe.ok()) << probe.status();
    heavy_seconds = HeavySeconds(*(*probe)->Connect(), heaviest);
  }
  // SIGTERM a quarter of the way in, with a quarter for the grace: half the work is left.
  const auto quarter = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::duration<double>(heavy_seconds / 4));
  const auto kGrace = std::max(quarter, std::chrono::milliseconds(1));
  auto server =
      ServerProcess::Start({absl::StrCat("--grace-period=", kGrace.count(), "ms")}, true, "cuda");
  ASSERT_TRUE(server.ok()) << server.status();
  auto reducer = (*server)->Connect();
  std::future<absl::StatusOr<v1::ReduceResponse>> heavy =
      std::async(std::launch::async, [&] { return reducer->Reduce(HeavySpec(), heaviest); });
  std::this_thread::sleep_for(quarter);
  const Clock::time_point signalled = Clock::now();
  const int code = (*server)->Stop();
  const double seconds = std::chrono::duration<double>(Clock::now() - signalled).count();
  std::printf("SIGTERM during the heaviest request: exit %d after %.2f s (grace %lld ms)\n", code,
              seconds, static_cast<long long>(kGrace.count()));
  EXPECT_EQ(code, 0);
  EXPECT_LT(seconds, std::chrono::duration<double>(kGrace).count() + 1.0);
  const absl::StatusOr<v1::ReduceResponse> result = heavy.get();
  if (heavy_seconds > 0.2) {  // long enough for the quarters to be told apart
    EXPECT_FALSE(result.ok()) << "the heavy request should have been cut off by the shutdown";
  }
}

}  // namespace
}  // namespace gpureduce::testing
