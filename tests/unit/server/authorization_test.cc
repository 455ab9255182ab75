// Bearer tokens on the Reducer service in this process: every Reducer method refuses a call
// without an accepted token (UNAUTHENTICATED without one, PERMISSION_DENIED for a wrong one)
// before any work, serves one that carries it, and the health service stays open for probes.

#include "server/auth/authorization.h"

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "grpc/health/v1/health.grpc.pb.h"
#include "grpcpp/health_check_service_interface.h"
#include "gtest/gtest.h"
#include "tests/support/random_data.h"
#include "tests/support/reference.h"
#include "tests/support/wire.h"
#include "tests/unit/server/in_process_server.h"
#include "tests/unit/server/metric_reading.h"

namespace gpureduce::server {
namespace {

class AuthorizationTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<std::unique_ptr<TokenAuthenticator>> tokens =
        TokenAuthenticator::FromText("team-token\n", "test");
    ASSERT_TRUE(tokens.ok()) << tokens.status();
    tokens_ = std::move(*tokens);
    testing::InProcessOptions options;
    options.tokens = tokens_.get();
    options.regions.enabled = true;
    server_ = std::make_unique<testing::InProcessServer>(options);
  }

  // Every Reducer method, called with `authorization` ("" sends none); their codes in order.
  std::vector<grpc::StatusCode> CallEveryMethod(const std::string& authorization) {
    auto context = [&] {
      std::unique_ptr<grpc::ClientContext> made = testing::BoundedContext();
      if (!authorization.empty()) made->AddMetadata("authorization", authorization);
      return made;
    };
    std::vector<grpc::StatusCode> codes;
    v1::ReduceRequest reduce;
    *reduce.mutable_spec() = testing::Spec(v1::SUM);
    reduce.set_data(testing::Bytes(data_));
    v1::ReduceResponse reduced;
    codes.push_back(server_->stub().Reduce(context().get(), reduce, &reduced).error_code());
    {
      const std::unique_ptr<grpc::ClientContext> stream_context = context();
      std::unique_ptr<grpc::ClientWriter<v1::ReduceChunk>> writer =
          server_->stub().ReduceStream(stream_context.get(), &reduced);
      v1::ReduceChunk chunk;
      *chunk.mutable_spec() = testing::Spec(v1::SUM);
      chunk.set_data(testing::Bytes(data_));
      writer->Write(chunk);
      writer->WritesDone();
      codes.push_back(writer->Finish().error_code());
    }
    v1::ListKernelsResponse kernels;
    codes.push_back(server_->stub().ListKernels(context().get(), {}, &kernels).error_code());
    v1::ServerInfo info;
    codes.push_back(server_->stub().GetServerInfo(context().get(), {}, &info).error_code());
    v1::ListSharedMemoryResponse regions;
    codes.push_back(server_->stub().ListSharedMemory(context().get(), {}, &regions).error_code());
    v1::RegisterSystemSharedMemoryRequest registration;
    registration.set_name("absent");
    registration.set_key("/gpureduce-authorization-test-absent");
    registration.set_byte_size(4);
    v1::RegisterSharedMemoryResponse registered;
    codes.push_back(server_->stub()
                        .RegisterSystemSharedMemory(context().get(), registration, &registered)
                        .error_code());
    v1::RegisterCudaSharedMemoryRequest cuda;
    codes.push_back(
        server_->stub().RegisterCudaSharedMemory(context().get(), cuda, &registered).error_code());
    v1::UnregisterSharedMemoryRequest unregistration;
    unregistration.set_name("absent");
    v1::UnregisterSharedMemoryResponse unregistered;
    codes.push_back(server_->stub()
                        .UnregisterSharedMemory(context().get(), unregistration, &unregistered)
                        .error_code());
    return codes;
  }

  const std::vector<float> data_ = testing::MixedSignData(1001, testing::FreshSeed());
  std::unique_ptr<TokenAuthenticator> tokens_;
  std::unique_ptr<testing::InProcessServer> server_;
};

TEST_F(AuthorizationTest, EveryReducerMethodRefusesACallWithoutAnAcceptedToken) {
  for (const auto& [authorization, code] :
       {std::pair<std::string, grpc::StatusCode>{"", grpc::StatusCode::UNAUTHENTICATED},
        {"Basic dGVhbS10b2tlbg==", grpc::StatusCode::UNAUTHENTICATED},
        {"Bearer other-token", grpc::StatusCode::PERMISSION_DENIED},
        {"Bearer team-token-", grpc::StatusCode::PERMISSION_DENIED}}) {
    const std::vector<grpc::StatusCode> codes = CallEveryMethod(authorization);
    for (size_t method = 0; method < codes.size(); ++method) {
      EXPECT_EQ(codes[method], code) << "method " << method << " with '" << authorization << "'";
    }
  }
  const prometheus::Registry& registry = *server_->state().metrics.registry();
  EXPECT_EQ(testing::SumOfSeries(registry, "gpureduce_requests_total", {{"code", "OK"}}), 0)
      << "a refused call reduced nothing";
  EXPECT_EQ(server_->state().admission.in_use(), 0u);
}

TEST_F(AuthorizationTest, ACallWithAnAcceptedTokenIsServed) {
  const std::vector<grpc::StatusCode> codes = CallEveryMethod("Bearer team-token");
  const std::vector<grpc::StatusCode> expected = {
      grpc::StatusCode::OK,
      grpc::StatusCode::OK,
      grpc::StatusCode::OK,
      grpc::StatusCode::OK,
      grpc::StatusCode::OK,
      grpc::StatusCode::NOT_FOUND,         // no such object: the request itself was looked at
      grpc::StatusCode::INVALID_ARGUMENT,  // no region name
      grpc::StatusCode::NOT_FOUND,         // no such region
  };
  EXPECT_EQ(codes, expected);
  grpc::ClientContext context;
  context.AddMetadata("authorization", "bearer team-token");
  v1::ReduceRequest request;
  *request.mutable_spec() = testing::Spec(v1::SUM);
  request.set_data(testing::Bytes(data_));
  v1::ReduceResponse response;
  ASSERT_TRUE(server_->stub().Reduce(&context, request, &response).ok());
  EXPECT_EQ(testing::CheckAgainstReference(gpureduce::Op::kSum,
                                           testing::ComputeReference(gpureduce::Op::kSum, data_),
                                           response.value(), -1, 1e-9),
            "");
}

TEST_F(AuthorizationTest, TheHealthServiceStaysOpenForProbesWithoutAToken) {
  auto health =
      grpc::health::v1::Health::NewStub(server_->Channel(grpc::InsecureChannelCredentials()));
  grpc::health::v1::HealthCheckRequest request;
  grpc::health::v1::HealthCheckResponse response;
  const grpc::Status status = health->Check(testing::BoundedContext().get(), request, &response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(response.status(), grpc::health::v1::HealthCheckResponse::SERVING);
}

}  // namespace
}  // namespace gpureduce::server
