#pragma once

// The Reducer service in this process on a free loopback port, on the CPU backend, as the server
// assembles it (ServiceState, ReducerService, the health service), with a stub to call it: the
// reactors and the token checks are tested through real gRPC calls without a server binary.

#include <memory>
#include <string>
#include <vector>

#include "gpureduce/v1/reduce.grpc.pb.h"
#include "grpcpp/grpcpp.h"
#include "runtime/cpu/cpu_backend.h"
#include "server/reducer_service.h"
#include "server/service_state.h"

namespace gpureduce::testing {

struct InProcessOptions {
  server::ServiceLimits limits;
  server::RegionLimits regions;
  // Null: plaintext. The client then needs matching channel credentials (Channel(...)).
  std::shared_ptr<grpc::ServerCredentials> credentials;
  const server::TokenAuthenticator* tokens = nullptr;
  bool ready = true;  // the self-check has passed
};

class InProcessServer {
 public:
  explicit InProcessServer(const InProcessOptions& options = {});
  ~InProcessServer();

  int port() const { return port_; }
  std::string address() const;
  server::ServiceState& state() { return *state_; }
  // A stub on a plaintext channel (thread-safe).
  v1::Reducer::Stub& stub() const { return *stub_; }
  std::shared_ptr<grpc::Channel> Channel(
      const std::shared_ptr<grpc::ChannelCredentials>& credentials,
      const grpc::ChannelArguments& arguments = {}) const;

 private:
  runtime::CpuBackend backend_{2};
  std::unique_ptr<server::ServiceState> state_;
  std::unique_ptr<server::ReducerService> service_;
  std::unique_ptr<grpc::Server> server_;
  int port_ = 0;
  std::unique_ptr<v1::Reducer::Stub> stub_;
};

// A context whose call gives up after 30 s, so that a broken server fails a test, never hangs it.
std::unique_ptr<grpc::ClientContext> BoundedContext();

// Reduce as the stream of one message each way that the server registers it as: lets a test
// send no message at all, or half-close late, which a unary stub cannot.
std::unique_ptr<grpc::ClientReaderWriter<v1::ReduceRequest, v1::ReduceResponse>> RawReduce(
    grpc::ChannelInterface& channel, grpc::ClientContext& context);

// A call's outcome.
struct Reduced {
  grpc::Status status;
  v1::ReduceResponse response;
};

// One Reduce; one ReduceStream of `chunks`.
Reduced Unary(v1::Reducer::Stub& stub, const v1::ReduceRequest& request);
Reduced Stream(v1::Reducer::Stub& stub, const std::vector<v1::ReduceChunk>& chunks);

}  // namespace gpureduce::testing
