#pragma once

// The one place where the domain's absl::Status becomes a gRPC status. The codes share values.

#include "absl/status/status.h"
#include "grpcpp/support/status.h"

namespace gpureduce::server {

grpc::Status ToGrpcStatus(const absl::Status& status);

}  // namespace gpureduce::server
