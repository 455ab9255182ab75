// Reduce through real gRPC calls to the service in this process (CPU backend): results against
// the float64 reference, the refusals with their codes and how they are counted, a region read
// by reference, concurrent callers through the admitted-unary handler, and calls whose message
// never comes.

#include "server/reduce_unary_reactor.h"

#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/random_data.h"
#include "tests/support/reference.h"
#include "tests/support/wire.h"
#include "tests/unit/server/in_process_server.h"
#include "tests/unit/server/metric_reading.h"
#include "tests/unit/server/shm_test_object.h"

namespace gpureduce::server {
namespace {

using ::testing::HasSubstr;
using testing::Reduced;

v1::ReduceRequest Request(v1::Op op, const std::vector<float>& data,
                          const std::string& kernel = "") {
  v1::ReduceRequest request;
  *request.mutable_spec() = testing::Spec(op, kernel);
  request.set_data(testing::Bytes(data));
  return request;
}

std::vector<float> DataFor(gpureduce::Op op, size_t n, uint64_t seed) {
  return op == gpureduce::Op::kProd ? testing::NearOneData(n, seed)
                                    : testing::MixedSignData(n, seed);
}

std::string Mismatch(gpureduce::Op op, const std::vector<float>& data, const Reduced& got) {
  return testing::CheckAgainstReference(op, testing::ComputeReference(op, data),
                                        got.response.value(), got.response.index(), 1e-9);
}

double RequestsCounted(const ServiceState& state, const std::string& op, const std::string& code) {
  return testing::SeriesValue(
      *state.metrics.registry(), "gpureduce_requests_total",
      {{"method", "Reduce"}, {"op", op}, {"kernel", "cpu"}, {"code", code}});
}

TEST(ReduceUnaryReactorTest, EveryOpMatchesTheReferenceInEitherPayloadField) {
  testing::InProcessServer server;
  const uint64_t seed = testing::FreshSeed();
  SCOPED_TRACE(testing::SeedTrace(seed));
  for (size_t n : {size_t{1}, size_t{3}, size_t{1021}, size_t{1000003}}) {
    for (gpureduce::Op op : gpureduce::kClassicOps) {
      const std::vector<float> data = DataFor(op, n, seed + n);
      v1::ReduceRequest request = Request(static_cast<v1::Op>(op), data);
      const bool in_values = n < 2000 && int(op) % 2 == 1;  // the JSON tools' field
      if (in_values) {
        request.clear_data();
        request.mutable_values()->Add(data.begin(), data.end());
      }
      const Reduced got = testing::Unary(server.stub(), request);
      const std::string what =
          absl::StrCat(gpureduce::OpName(op), " n=", n, in_values ? " values" : "");
      ASSERT_TRUE(got.status.ok()) << what << ": " << got.status.error_message();
      EXPECT_EQ(Mismatch(op, data, got), "") << what;
      EXPECT_EQ(got.response.count(), n) << what;
      EXPECT_EQ(got.response.kernel(), "cpu");
      EXPECT_EQ(got.response.timing().bytes(), n * sizeof(float)) << what;
    }
  }
  EXPECT_EQ(RequestsCounted(server.state(), "sum", "OK"), 4);
  EXPECT_EQ(testing::SeriesValue(*server.state().metrics.registry(), "gpureduce_requests_in_flight",
                                 {{"method", "Reduce"}}),
            0);
}

TEST(ReduceUnaryReactorTest, AnEmptyArrayIsTheIdentityOrInvalid) {
  testing::InProcessServer server;
  const Reduced sum = testing::Unary(server.stub(), Request(v1::SUM, {}));
  ASSERT_TRUE(sum.status.ok()) << sum.status.error_message();
  EXPECT_EQ(sum.response.value(), 0);
  EXPECT_EQ(sum.response.count(), 0u);
  const Reduced prod = testing::Unary(server.stub(), Request(v1::PROD, {}));
  ASSERT_TRUE(prod.status.ok()) << prod.status.error_message();
  EXPECT_EQ(prod.response.value(), 1);
  const Reduced min = testing::Unary(server.stub(), Request(v1::MIN, {}));
  EXPECT_EQ(min.status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(RequestsCounted(server.state(), "min", "INVALID_ARGUMENT"), 1);
}

TEST(ReduceUnaryReactorTest, BadRequestsAreRefusedWithTheirCodeAndCounted) {
  testing::InProcessOptions options;
  options.limits.max_request_bytes = 4096;
  testing::InProcessServer server(options);
  const std::vector<float> data = testing::MixedSignData(31, testing::FreshSeed());

  v1::ReduceRequest no_spec = Request(v1::SUM, data);
  no_spec.clear_spec();
  v1::ReduceRequest both = Request(v1::SUM, data);
  both.add_values(1.5f);
  v1::ReduceRequest ragged = Request(v1::SUM, data);
  ragged.mutable_data()->pop_back();
  struct Case {
    const char* what;
    v1::ReduceRequest request;
    grpc::StatusCode code;
    const char* says;
  };
  const Case cases[] = {
      {"no spec", no_spec, grpc::StatusCode::INVALID_ARGUMENT, "no spec"},
      {"both payloads", both, grpc::StatusCode::INVALID_ARGUMENT, "both"},
      {"ragged bytes", ragged, grpc::StatusCode::INVALID_ARGUMENT, "multiple of 4"},
      {"unknown kernel", Request(v1::SUM, data, "warp_magic"), grpc::StatusCode::INVALID_ARGUMENT,
       "warp_magic"},
      {"GPU kernel", Request(v1::SUM, data, "cub"), grpc::StatusCode::FAILED_PRECONDITION, "cub"},
      {"over the limit", Request(v1::SUM, std::vector<float>(1025, 1.0f)),
       grpc::StatusCode::RESOURCE_EXHAUSTED, "ReduceStream"},
  };
  for (const Case& c : cases) {
    const Reduced got = testing::Unary(server.stub(), c.request);
    EXPECT_EQ(got.status.error_code(), c.code) << c.what << ": " << got.status.error_message();
    EXPECT_THAT(got.status.error_message(), HasSubstr(c.says)) << c.what;
  }
  // The largest array that fits is served, and every call ended counted and out of flight.
  const std::vector<float> largest = testing::MixedSignData(1024, testing::FreshSeed());
  const Reduced fits = testing::Unary(server.stub(), Request(v1::SUM, largest));
  ASSERT_TRUE(fits.status.ok()) << fits.status.error_message();
  EXPECT_EQ(Mismatch(gpureduce::Op::kSum, largest, fits), "");
  const prometheus::Registry& registry = *server.state().metrics.registry();
  EXPECT_EQ(testing::SumOfSeries(registry, "gpureduce_requests_total"), std::size(cases) + 1);
  EXPECT_EQ(testing::SeriesValue(registry, "gpureduce_requests_in_flight", {{"method", "Reduce"}}),
            0);
  EXPECT_EQ(server.state().admission.in_use(), 0u);
}

TEST(ReduceUnaryReactorTest, BeforeTheSelfCheckEveryCallIsUnavailableAndCountedAsNotReady) {
  testing::InProcessOptions options;
  options.ready = false;
  testing::InProcessServer server(options);
  for (int i = 0; i < 3; ++i) {
    const Reduced got = testing::Unary(server.stub(), Request(v1::SUM, {1.0f, 2.0f}));
    EXPECT_EQ(got.status.error_code(), grpc::StatusCode::UNAVAILABLE);
  }
  EXPECT_EQ(testing::SeriesValue(*server.state().metrics.registry(),
                                 "gpureduce_admission_refusals_total", {{"reason", "not_ready"}}),
            3);
  server.state().ready = true;
  EXPECT_TRUE(testing::Unary(server.stub(), Request(v1::SUM, {1.0f, 2.0f})).status.ok());
}

TEST(ReduceUnaryReactorTest, ARegisteredRegionIsReducedByReference) {
  testing::InProcessOptions options;
  options.regions.enabled = true;
  testing::InProcessServer server(options);
  const uint64_t seed = testing::FreshSeed();
  SCOPED_TRACE(testing::SeedTrace(seed));
  const std::vector<float> data = testing::MixedSignData(100003, seed);
  const testing::ShmTestObject object(8 + data.size() * 4,
                                      std::as_bytes(std::span<const float>(data)), 8);
  v1::RegisterSystemSharedMemoryRequest registration;
  registration.set_name("floats");
  registration.set_key(object.key());
  registration.set_offset(8);
  registration.set_byte_size(data.size() * 4);
  v1::RegisterSharedMemoryResponse registered;
  ASSERT_TRUE(
      server.stub()
          .RegisterSystemSharedMemory(testing::BoundedContext().get(), registration, &registered)
          .ok());
  for (const auto& [first, count] :
       {std::pair<size_t, size_t>{0, data.size()}, {17, 4099}, {data.size() - 1, 1}}) {
    for (gpureduce::Op op : {gpureduce::Op::kSum, gpureduce::Op::kArgMin, gpureduce::Op::kMax}) {
      v1::ReduceRequest request;
      *request.mutable_spec() = testing::Spec(static_cast<v1::Op>(op));
      request.mutable_shared_memory()->set_region("floats");
      request.mutable_shared_memory()->set_offset(first * 4);
      request.mutable_shared_memory()->set_byte_size(count * 4);
      const Reduced got = testing::Unary(server.stub(), request);
      const std::string what = absl::StrCat(gpureduce::OpName(op), " of ", count, " from ", first);
      ASSERT_TRUE(got.status.ok()) << what << ": " << got.status.error_message();
      const std::vector<float> slice(data.begin() + first, data.begin() + first + count);
      EXPECT_EQ(Mismatch(op, slice, got), "") << what;
      EXPECT_EQ(got.response.count(), count) << what;
    }
  }
  v1::ReduceRequest past_end;
  *past_end.mutable_spec() = testing::Spec(v1::SUM);
  past_end.mutable_shared_memory()->set_region("floats");
  past_end.mutable_shared_memory()->set_offset(4);
  past_end.mutable_shared_memory()->set_byte_size(data.size() * 4);
  EXPECT_EQ(testing::Unary(server.stub(), past_end).status.error_code(),
            grpc::StatusCode::INVALID_ARGUMENT);
  past_end.mutable_shared_memory()->set_region("absent");
  EXPECT_EQ(testing::Unary(server.stub(), past_end).status.error_code(),
            grpc::StatusCode::NOT_FOUND);
  // A call lets go of the region when its reactor is done, just after the client has its answer:
  // given a moment (ASan on 2 cores once saw the last one still holding it).
  const std::shared_ptr<const Region> region = server.state().regions.List().front();
  for (int wait = 0; wait < 500 && region->requests_in_flight() != 0; ++wait) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(region->requests_in_flight(), 0u) << "every finished call let go of the region";
}

TEST(ReduceUnaryReactorTest, ConcurrentCallersEachGetTheirOwnAnswer) {
  testing::InProcessServer server;
  const uint64_t seed = testing::FreshSeed();
  SCOPED_TRACE(testing::SeedTrace(seed));
  constexpr int kCallers = 4, kCalls = 25;
  std::vector<std::string> failures(kCallers);
  std::vector<std::thread> callers;
  for (int caller = 0; caller < kCallers; ++caller) {
    callers.emplace_back([&, caller] {
      for (int call = 0; call < kCalls && failures[caller].empty(); ++call) {
        const size_t n = 1 + (seed + caller * 7919 + call * 104729) % 50000;
        const std::vector<float> data = testing::MixedSignData(n, seed + caller * 1000 + call);
        const Reduced got = testing::Unary(server.stub(), Request(v1::SUM_SQUARES, data));
        if (!got.status.ok()) {
          failures[caller] = got.status.error_message();
        } else if (got.response.count() != n) {
          failures[caller] = absl::StrCat("count ", got.response.count(), " for ", n);
        } else {
          failures[caller] = Mismatch(gpureduce::Op::kSumSquares, data, got);
        }
      }
    });
  }
  for (std::thread& caller : callers) caller.join();
  for (int caller = 0; caller < kCallers; ++caller) {
    EXPECT_EQ(failures[caller], "") << "caller " << caller;
  }
  EXPECT_EQ(RequestsCounted(server.state(), "sum_squares", "OK"), kCallers * kCalls);
  EXPECT_EQ(server.state().admission.in_use(), 0u);
}

TEST(ReduceUnaryReactorTest, ACallThatEndsWithoutItsMessageIsInvalid) {
  testing::InProcessServer server;
  const std::shared_ptr<grpc::Channel> channel = server.Channel(grpc::InsecureChannelCredentials());
  const std::unique_ptr<grpc::ClientContext> context = testing::BoundedContext();
  auto call = testing::RawReduce(*channel, *context);
  call->WritesDone();
  const grpc::Status status = call->Finish();
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr("without a request message"));
  EXPECT_EQ(server.state().admission.in_use(), 0u);
}

TEST(ReduceUnaryReactorTest, ACallWhoseMessageNeverComesIsEndedWhenIdle) {
  testing::InProcessOptions options;
  options.limits.stream_idle_timeout = absl::Milliseconds(300);
  testing::InProcessServer server(options);
  const std::shared_ptr<grpc::Channel> channel = server.Channel(grpc::InsecureChannelCredentials());
  const std::unique_ptr<grpc::ClientContext> context = testing::BoundedContext();
  auto call = testing::RawReduce(*channel, *context);
  v1::ReduceResponse response;
  EXPECT_FALSE(call->Read(&response)) << "the server answers nothing but its status";
  const grpc::Status status = call->Finish();
  EXPECT_EQ(status.error_code(), grpc::StatusCode::CANCELLED) << status.error_message();
  EXPECT_THAT(status.error_message(), HasSubstr("did not arrive in full within 300ms"));
  EXPECT_EQ(server.state().admission.in_use(), 0u);
}

}  // namespace
}  // namespace gpureduce::server
