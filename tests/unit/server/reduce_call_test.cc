// ReduceCall without a network: admission, spec, payload checks, counting, the CPU backend's
// session and the response, as the reactors drive it.

#include "server/reduce_call.h"

#include <future>
#include <memory>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/backend_factory.h"
#include "tests/support/random_data.h"
#include "tests/support/reference.h"
#include "tests/support/wire.h"

namespace gpureduce::server {
namespace {

using ::testing::HasSubstr;

v1::ReduceSpec Spec(v1::Op op, uint64_t expected_count = 0) {
  return testing::Spec(op, "", 0, expected_count);
}

v1::ReduceRequest Request(const std::vector<float>& data) {
  v1::ReduceRequest request;
  request.set_data(testing::Bytes(data));
  return request;
}

class ReduceCallTest : public ::testing::Test {
 protected:
  void SetUp() override {
    runtime::BackendOptions options;
    options.kind = runtime::BackendChoice::kCpu;
    options.worker_threads = 2;
    absl::StatusOr<std::unique_ptr<runtime::Backend>> backend = runtime::CreateBackend(options);
    ASSERT_TRUE(backend.ok()) << backend.status();
    backend_ = std::move(*backend);
    limits_.max_request_bytes = 8 << 20;
    limits_.max_concurrent_requests = 2;
    state_ = std::make_unique<ServiceState>(*backend_, limits_);
    state_->ready = true;
  }

  // Consumes each message's payload in turn, then completes; the gRPC status and response.
  std::pair<grpc::Status, v1::ReduceResponse> Run(ReduceCall& call,
                                                  const std::vector<v1::ReduceRequest>& messages) {
    absl::Status status;
    for (size_t i = 0; i < messages.size() && status.ok(); ++i) {
      runtime::PayloadPieces data;
      data.Append(reinterpret_cast<const std::byte*>(messages[i].data().data()),
                  messages[i].data().size());
      absl::StatusOr<runtime::PayloadPieces> payload =
          call.Payload(data, messages[i].values(), limits_.max_request_bytes, "stream it");
      if (!payload.ok()) {
        status = payload.status();
        break;
      }
      if (payload->empty()) continue;
      std::promise<absl::Status> consumed;
      call.Consume(*std::move(payload), [&](absl::Status done) { consumed.set_value(done); });
      status = consumed.get_future().get();
    }
    v1::ReduceResponse response;
    std::promise<grpc::Status> finished;
    call.Complete(status, &response, [&](grpc::Status result) { finished.set_value(result); });
    return {finished.get_future().get(), response};
  }

  std::unique_ptr<runtime::Backend> backend_;
  ServiceLimits limits_;
  std::unique_ptr<ServiceState> state_;
};

TEST_F(ReduceCallTest, EveryOpMatchesTheReferenceAtAwkwardSizesInUnevenMessages) {
  const uint64_t seed = testing::FreshSeed();
  SCOPED_TRACE(testing::SeedTrace(seed));
  for (size_t n : {size_t{1}, size_t{2}, size_t{31}, size_t{1000003}}) {
    for (gpureduce::Op op : gpureduce::kClassicOps) {
      const std::vector<float> data = op == gpureduce::Op::kProd
                                          ? testing::NearOneData(n, seed + n)
                                          : testing::MixedSignData(n, seed + n);
      // Two messages of uneven length, as a stream would carry them.
      const size_t cut = n / 3;
      const std::vector<v1::ReduceRequest> messages = {Request({data.begin(), data.begin() + cut}),
                                                       Request({data.begin() + cut, data.end()})};
      ReduceCall call(*state_, Method::kReduce, "peer");
      ASSERT_TRUE(call.Admit().ok());
      ASSERT_TRUE(call.Open(Spec(static_cast<v1::Op>(op), n)).ok());
      auto [status, response] = Run(call, messages);
      ASSERT_TRUE(status.ok()) << status.error_message();
      EXPECT_EQ(testing::CheckAgainstReference(op, testing::ComputeReference(op, data),
                                               response.value(), response.index(), 1e-9),
                "")
          << gpureduce::OpName(op) << " n=" << n;
      EXPECT_EQ(response.count(), n);
      EXPECT_EQ(response.kernel(), "cpu");
      EXPECT_EQ(response.backend(), "cpu");
      EXPECT_EQ(response.timing().bytes(), n * sizeof(float));
      EXPECT_EQ(response.timing().chunks(), 2u);
    }
  }
}

TEST_F(ReduceCallTest, NotReadyIsUnavailable) {
  state_->ready = false;
  ReduceCall call(*state_, Method::kReduce, "peer");
  const absl::Status status = call.Admit();
  EXPECT_EQ(status.code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(status.message(), HasSubstr("self-check has not passed"));
}

TEST_F(ReduceCallTest, AdmissionIsBoundedAndAFinishedCallGivesItsPlaceBack) {
  auto first = std::make_unique<ReduceCall>(*state_, Method::kReduce, "a");
  ReduceCall second(*state_, Method::kReduce, "b");
  ReduceCall third(*state_, Method::kReduce, "c");
  ASSERT_TRUE(first->Admit().ok());
  ASSERT_TRUE(second.Admit().ok());
  const absl::Status full = third.Admit();
  EXPECT_EQ(full.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(full.message(), HasSubstr("2 requests are in progress"));
  ASSERT_TRUE(first->Open(Spec(v1::SUM)).ok());
  EXPECT_TRUE(Run(*first, {Request({1.0f, 2.0f})}).first.ok());
  EXPECT_TRUE(third.Admit().ok()) << "Complete returns the admission slot";
}

TEST_F(ReduceCallTest, MoreElementsThanDeclaredAreRefusedAtTheMessage) {
  ReduceCall call(*state_, Method::kReduce, "peer");
  ASSERT_TRUE(call.Admit().ok());
  ASSERT_TRUE(call.Open(Spec(v1::SUM, 3)).ok());
  auto [status, response] = Run(call, {Request({1, 2}), Request({3, 4})});
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr("more elements than expected_count=3"));
}

TEST_F(ReduceCallTest, FewerElementsThanDeclaredGiveNoResult) {
  ReduceCall call(*state_, Method::kReduce, "peer");
  ASSERT_TRUE(call.Admit().ok());
  ASSERT_TRUE(call.Open(Spec(v1::SUM, 5)).ok());
  auto [status, response] = Run(call, {Request({1, 2, 3})});
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr("ended after 3 elements"));
  EXPECT_EQ(response.count(), 0u);
}

TEST_F(ReduceCallTest, EmptyInputFollowsTheIdentityRule) {
  for (v1::Op op : {v1::SUM, v1::PROD, v1::MAX}) {
    ReduceCall call(*state_, Method::kReduce, "peer");
    ASSERT_TRUE(call.Admit().ok());
    ASSERT_TRUE(call.Open(Spec(op)).ok());
    auto [status, response] = Run(call, {Request({})});
    if (op == v1::MAX) {
      EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
      EXPECT_THAT(status.error_message(), HasSubstr("max has no identity"));
    } else {
      ASSERT_TRUE(status.ok()) << status.error_message();
      EXPECT_EQ(response.value(), op == v1::PROD ? 1.0 : 0.0);
    }
  }
}

TEST_F(ReduceCallTest, AStreamThatEndsBeforeItsSpecIsRefused) {
  ReduceCall call(*state_, Method::kReduce, "peer");
  ASSERT_TRUE(call.Admit().ok());
  v1::ReduceResponse response;
  std::promise<grpc::Status> finished;
  call.Complete(absl::OkStatus(), &response, [&](grpc::Status s) { finished.set_value(s); });
  const grpc::Status status = finished.get_future().get();
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr("ended before it carried a spec"));
}

}  // namespace
}  // namespace gpureduce::server
