#include "server/connections/call_tracker.h"

#include <cstring>
#include <memory>
#include <utility>

#include "grpcpp/server_context.h"
#include "server/connections/call_account.h"

namespace gpureduce::server {
namespace {

// The methods whose calls hold their own account (ReduceCall).
bool AccountsForItself(const char* method) {
  return std::strcmp(method, "/gpureduce.v1.Reducer/Reduce") == 0 ||
         std::strcmp(method, "/gpureduce.v1.Reducer/ReduceStream") == 0;
}

// Holds one call's account for as long as the call lasts.
class CallTracker final : public grpc::experimental::Interceptor {
 public:
  CallTracker(ConnectionGate& gate, grpc::experimental::ServerRpcInfo* info,
              std::shared_ptr<Connection> connection)
      : info_(info),
        account_(gate, std::move(connection),
                 MetadataBytes(info->server_context()->client_metadata())),
        callback_(dynamic_cast<grpc::CallbackServerContext*>(info->server_context()) != nullptr) {}

  void Intercept(grpc::experimental::InterceptorBatchMethods* methods) override {
    using grpc::experimental::InterceptionHookPoints;
    // The message's type depends on the method (gRPC's health service is raw, for one): only
    // that one arrived is looked at.
    if (methods->QueryInterceptionHookPoint(InterceptionHookPoints::POST_RECV_MESSAGE) &&
        methods->GetRecvMessage() != nullptr) {
      account_.MessageReceived();
    }
    // Only the callback API answers IsCancelled() from here (the sync API would wait on its
    // queue); gRPC's reflection service is the one synchronous method.
    if (callback_ && methods->QueryInterceptionHookPoint(InterceptionHookPoints::POST_RECV_CLOSE) &&
        info_->server_context()->IsCancelled()) {
      account_.Cancelled();
    }
    methods->Proceed();
  }

 private:
  grpc::experimental::ServerRpcInfo* const info_;
  CallAccount account_;
  const bool callback_;
};

}  // namespace

grpc::experimental::Interceptor* CallTrackerFactory::CreateServerInterceptor(
    grpc::experimental::ServerRpcInfo* info) {
  if (AccountsForItself(info->method())) return nullptr;
  std::shared_ptr<Connection> connection = gate_.Find(info->server_context()->peer());
  if (connection == nullptr) return nullptr;  // not a TCP connection the gate accepted
  return new CallTracker(gate_, info, std::move(connection));
}

}  // namespace gpureduce::server
