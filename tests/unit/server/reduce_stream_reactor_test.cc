// ReduceStream through real gRPC calls to the service in this process (CPU backend): results of
// arrays in uneven chunks against the float64 reference, the stream's own refusals, a stream
// whose client goes quiet, and one its client cancels.

#include "server/reduce_stream_reactor.h"

#include <chrono>
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

namespace gpureduce::server {
namespace {

using ::testing::HasSubstr;
using testing::Reduced;

// `data` cut into chunks of the given lengths (cycled), the spec in the first; in the values
// field where `values` says so.
std::vector<v1::ReduceChunk> Chunks(const v1::ReduceSpec& spec, const std::vector<float>& data,
                                    const std::vector<size_t>& lengths, bool values = false) {
  std::vector<v1::ReduceChunk> chunks(1);
  *chunks[0].mutable_spec() = spec;
  size_t at = 0;
  for (size_t i = 0; at < data.size(); ++i) {
    const size_t n = std::min(lengths[i % lengths.size()], data.size() - at);
    if (i > 0) chunks.emplace_back();
    if (values) {
      chunks.back().mutable_values()->Add(data.begin() + at, data.begin() + at + n);
    } else {
      chunks.back().set_data(testing::Bytes({data.data() + at, n}));
    }
    at += n;
  }
  return chunks;
}

TEST(ReduceStreamReactorTest, EveryOpMatchesTheReferenceInUnevenChunks) {
  testing::InProcessServer server;
  const uint64_t seed = testing::FreshSeed();
  SCOPED_TRACE(testing::SeedTrace(seed));
  for (size_t n : {size_t{1}, size_t{4097}, size_t{1000003}}) {
    for (gpureduce::Op op : gpureduce::kClassicOps) {
      const std::vector<float> data = op == gpureduce::Op::kProd
                                          ? testing::NearOneData(n, seed + n)
                                          : testing::MixedSignData(n, seed + n);
      const bool values = n == 4097 && int(op) % 2 == 0;
      const std::vector<v1::ReduceChunk> chunks = Chunks(
          testing::Spec(static_cast<v1::Op>(op), "", 0, n), data, {1, 262147, 3, 99991}, values);
      const Reduced got = testing::Stream(server.stub(), chunks);
      const std::string what = absl::StrCat(gpureduce::OpName(op), " n=", n, " in ", chunks.size(),
                                            values ? " values chunks" : " chunks");
      ASSERT_TRUE(got.status.ok()) << what << ": " << got.status.error_message();
      EXPECT_EQ(testing::CheckAgainstReference(op, testing::ComputeReference(op, data),
                                               got.response.value(), got.response.index(), 1e-9),
                "")
          << what;
      EXPECT_EQ(got.response.count(), n) << what;
      EXPECT_EQ(got.response.timing().chunks(), chunks.size()) << what;
      EXPECT_EQ(got.response.timing().bytes(), n * sizeof(float)) << what;
    }
  }
  EXPECT_EQ(testing::SeriesValue(
                *server.state().metrics.registry(), "gpureduce_requests_total",
                {{"method", "ReduceStream"}, {"op", "argmax"}, {"kernel", "cpu"}, {"code", "OK"}}),
            3);
}

TEST(ReduceStreamReactorTest, TheSpecAloneIsAnEmptyArray) {
  testing::InProcessServer server;
  const Reduced sum = testing::Stream(server.stub(), Chunks(testing::Spec(v1::SUM), {}, {1}));
  ASSERT_TRUE(sum.status.ok()) << sum.status.error_message();
  EXPECT_EQ(sum.response.value(), 0);
  EXPECT_EQ(sum.response.count(), 0u);
  const Reduced max = testing::Stream(server.stub(), Chunks(testing::Spec(v1::MAX), {}, {1}));
  EXPECT_EQ(max.status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
}

TEST(ReduceStreamReactorTest, AStreamBrokenAgainstItsRulesIsRefusedPrecisely) {
  testing::InProcessOptions options;
  options.limits.max_chunk_bytes = 4096;
  testing::InProcessServer server(options);
  const std::vector<float> data = testing::MixedSignData(3000, testing::FreshSeed());
  const v1::ReduceSpec sum = testing::Spec(v1::SUM);

  std::vector<v1::ReduceChunk> no_spec = Chunks(sum, data, {1000});
  no_spec[0].clear_spec();
  std::vector<v1::ReduceChunk> repeated = Chunks(sum, data, {1000});
  *repeated[2].mutable_spec() = sum;
  struct Case {
    const char* what;
    std::vector<v1::ReduceChunk> chunks;
    grpc::StatusCode code;
    const char* says;
  };
  const Case cases[] = {
      {"no spec first", no_spec, grpc::StatusCode::INVALID_ARGUMENT, "must carry the spec"},
      {"spec repeated", repeated, grpc::StatusCode::INVALID_ARGUMENT, "repeats the spec"},
      {"more than expected", Chunks(testing::Spec(v1::SUM, "", 0, 2999), data, {1000}),
       grpc::StatusCode::INVALID_ARGUMENT, "more elements than expected_count=2999"},
      {"fewer than expected", Chunks(testing::Spec(v1::SUM, "", 0, 3001), data, {1000}),
       grpc::StatusCode::INVALID_ARGUMENT, "declared expected_count=3001"},
      {"chunk over the limit", Chunks(sum, data, {1025}), grpc::StatusCode::RESOURCE_EXHAUSTED,
       "exceeds the limit of 4096 bytes"},
  };
  for (const Case& c : cases) {
    const Reduced got = testing::Stream(server.stub(), c.chunks);
    EXPECT_EQ(got.status.error_code(), c.code) << c.what << ": " << got.status.error_message();
    EXPECT_THAT(got.status.error_message(), HasSubstr(c.says)) << c.what;
  }
  const Reduced fits = testing::Stream(server.stub(), Chunks(sum, data, {1024}));
  ASSERT_TRUE(fits.status.ok()) << fits.status.error_message();
  EXPECT_EQ(testing::CheckAgainstReference(gpureduce::Op::kSum,
                                           testing::ComputeReference(gpureduce::Op::kSum, data),
                                           fits.response.value(), -1, 1e-9),
            "");
  EXPECT_EQ(server.state().admission.in_use(), 0u);
}

TEST(ReduceStreamReactorTest, AStreamWhoseClientGoesQuietIsEndedAndCounted) {
  testing::InProcessOptions options;
  options.limits.stream_idle_timeout = absl::Milliseconds(300);
  testing::InProcessServer server(options);
  const std::unique_ptr<grpc::ClientContext> context = testing::BoundedContext();
  v1::ReduceResponse response;
  std::unique_ptr<grpc::ClientWriter<v1::ReduceChunk>> writer =
      server.stub().ReduceStream(context.get(), &response);
  const std::vector<v1::ReduceChunk> chunks =
      Chunks(testing::Spec(v1::SUM), testing::MixedSignData(100, 1), {100});
  ASSERT_TRUE(writer->Write(chunks[0]));
  // Nothing more is sent: Finish returns once the server has ended the stream.
  const grpc::Status status = writer->Finish();
  EXPECT_EQ(status.error_code(), grpc::StatusCode::CANCELLED) << status.error_message();
  EXPECT_THAT(status.error_message(), HasSubstr("no message from the client for 300ms"));
  EXPECT_EQ(testing::SeriesValue(*server.state().metrics.registry(),
                                 "gpureduce_streams_idle_ended_total"),
            1);
  EXPECT_EQ(server.state().admission.in_use(), 0u);
}

TEST(ReduceStreamReactorTest, AStreamItsClientCancelsGivesItsPlaceBack) {
  testing::InProcessOptions options;
  options.limits.max_concurrent_requests = 1;
  testing::InProcessServer server(options);
  const std::vector<float> data = testing::MixedSignData(10007, testing::FreshSeed());
  const prometheus::Registry& registry = *server.state().metrics.registry();
  const auto in_flight = [&] {
    return testing::SeriesValue(registry, "gpureduce_requests_in_flight",
                                {{"method", "ReduceStream"}});
  };
  // Waits, within a bound, for the server to see what the client did on its own time.
  const auto wait_for_in_flight = [&](double value) {
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (in_flight() != value && std::chrono::steady_clock::now() < give_up) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return in_flight() == value;
  };
  {
    grpc::ClientContext context;
    v1::ReduceResponse response;
    std::unique_ptr<grpc::ClientWriter<v1::ReduceChunk>> writer =
        server.stub().ReduceStream(&context, &response);
    for (const v1::ReduceChunk& chunk : Chunks(testing::Spec(v1::SUM), data, {1000})) {
      ASSERT_TRUE(writer->Write(chunk));
    }
    ASSERT_TRUE(wait_for_in_flight(1)) << "the server never saw the stream";
    context.TryCancel();
    EXPECT_EQ(writer->Finish().error_code(), grpc::StatusCode::CANCELLED);
  }
  ASSERT_TRUE(wait_for_in_flight(0)) << "the cancelled stream never ended";
  EXPECT_EQ(server.state().admission.in_use(), 0u) << "the cancelled stream kept its slot";
  // Whether or not the server had read the spec by then, the call ended CANCELLED.
  EXPECT_EQ(testing::SumOfSeries(registry, "gpureduce_requests_total",
                                 {{"method", "ReduceStream"}, {"code", "CANCELLED"}}),
            1);
  const Reduced next = testing::Stream(server.stub(), Chunks(testing::Spec(v1::SUM), data, {4096}));
  ASSERT_TRUE(next.status.ok()) << next.status.error_message();
  EXPECT_EQ(testing::CheckAgainstReference(gpureduce::Op::kSum,
                                           testing::ComputeReference(gpureduce::Op::kSum, data),
                                           next.response.value(), -1, 1e-9),
            "");
}

}  // namespace
}  // namespace gpureduce::server
