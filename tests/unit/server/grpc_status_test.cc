#include "server/grpc_status.h"

#include "gtest/gtest.h"

namespace gpureduce::server {
namespace {

TEST(GrpcStatusTest, EveryCanonicalCodeKeepsItsCodeAndMessage) {
  const std::pair<absl::Status, grpc::StatusCode> cases[] = {
      {absl::InvalidArgumentError("bad op"), grpc::StatusCode::INVALID_ARGUMENT},
      {absl::FailedPreconditionError("no gpu"), grpc::StatusCode::FAILED_PRECONDITION},
      {absl::ResourceExhaustedError("full"), grpc::StatusCode::RESOURCE_EXHAUSTED},
      {absl::DeadlineExceededError("late"), grpc::StatusCode::DEADLINE_EXCEEDED},
      {absl::CancelledError("gone"), grpc::StatusCode::CANCELLED},
      {absl::UnavailableError("starting"), grpc::StatusCode::UNAVAILABLE},
      {absl::InternalError("cudaErrorIllegalAddress"), grpc::StatusCode::INTERNAL},
  };
  for (const auto& [status, code] : cases) {
    const grpc::Status mapped = ToGrpcStatus(status);
    EXPECT_EQ(mapped.error_code(), code) << status;
    EXPECT_EQ(mapped.error_message(), std::string(status.message()));
  }
  EXPECT_TRUE(ToGrpcStatus(absl::OkStatus()).ok());
}

}  // namespace
}  // namespace gpureduce::server
