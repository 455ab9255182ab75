#include "server/connections/call_tracker.h"

#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"
#include "grpcpp/server_context.h"

namespace gpureduce::server {
namespace {

// What a call's client may send beyond its headers that nothing else accounts for: the HTTP/2
// frames around them (a RST_STREAM, WINDOW_UPDATEs for the answer) and the small messages of
// the methods other than the Reducer's raw ones (health checks, ListKernels, reflection),
// generously.
constexpr uint64_t kCallBytes = 1024;
}  // namespace

// What a call that ended without receiving a message may have sent: the stream's initial flow
// control window (gRPC's default, 64 KiB), which gRPC received and dropped.
const uint64_t kUnreadCallBytes = 65535;

namespace {

uint64_t MetadataBytes(const std::multimap<grpc::string_ref, grpc::string_ref>& metadata) {
  uint64_t bytes = 0;
  for (const auto& [key, value] : metadata) bytes += key.size() + value.size() + 32;
  return bytes;
}

}  // namespace

// Holds one call's place in its connection's accounts for as long as the call lasts.
class CallTracker final : public grpc::experimental::Interceptor {
 public:
  CallTracker(CallTrackerFactory& factory, grpc::experimental::ServerRpcInfo* info,
              std::shared_ptr<Connection> connection)
      : factory_(factory),
        info_(info),
        connection_(std::move(connection)),
        callback_(dynamic_cast<grpc::CallbackServerContext*>(info->server_context()) != nullptr) {
    connection_->live_calls.fetch_add(1, std::memory_order_relaxed);
    connection_->unread_calls.fetch_add(1, std::memory_order_relaxed);
    Credit(kCallBytes + MetadataBytes(info->server_context()->client_metadata()));
  }

  ~CallTracker() override {
    if (!received_) {
      Credit(kUnreadCallBytes);
      connection_->unread_calls.fetch_sub(1, std::memory_order_relaxed);
    }
    connection_->live_calls.fetch_sub(1, std::memory_order_relaxed);
  }

  void Intercept(grpc::experimental::InterceptorBatchMethods* methods) override {
    using grpc::experimental::InterceptionHookPoints;
    // The message's type depends on the method (gRPC's health service is raw, for one): only
    // that one arrived is looked at.
    if (!received_ &&
        methods->QueryInterceptionHookPoint(InterceptionHookPoints::POST_RECV_MESSAGE) &&
        methods->GetRecvMessage() != nullptr) {
      received_ = true;
      connection_->unread_calls.fetch_sub(1, std::memory_order_relaxed);
    }
    // Only the callback API answers IsCancelled() from here (the sync API would wait on its
    // queue); gRPC's reflection service is the one synchronous method.
    if (callback_ && methods->QueryInterceptionHookPoint(InterceptionHookPoints::POST_RECV_CLOSE) &&
        info_->server_context()->IsCancelled()) {
      Cancelled();
    }
    methods->Proceed();
  }

 private:
  void Credit(uint64_t bytes) {
    connection_->credited_bytes.fetch_add(bytes, std::memory_order_relaxed);
  }

  void Cancelled() {
    const ConnectionLimits& limits = factory_.gate_.limits();
    if (limits.cancelled_calls_per_second <= 0 || connection_->evicted()) return;
    if (!connection_->TakeCancelToken(limits.cancelled_calls_per_second,
                                      limits.CancelledCallsBurst())) {
      factory_.gate_.Evict(
          *connection_, Eviction::kCancelledCalls,
          absl::StrCat("rapid reset: this connection's calls were cancelled faster than ",
                       limits.cancelled_calls_per_second,
                       " a second (--max-cancelled-calls-per-second) for longer than its burst "
                       "of ",
                       limits.CancelledCallsBurst()));
    }
  }

  CallTrackerFactory& factory_;
  grpc::experimental::ServerRpcInfo* const info_;
  const std::shared_ptr<Connection> connection_;
  const bool callback_;
  bool received_ = false;
};

grpc::experimental::Interceptor* CallTrackerFactory::CreateServerInterceptor(
    grpc::experimental::ServerRpcInfo* info) {
  std::shared_ptr<Connection> connection = gate_.Find(info->server_context()->peer());
  if (connection == nullptr) return nullptr;  // not a TCP connection the gate accepted
  return new CallTracker(*this, info, std::move(connection));
}

}  // namespace gpureduce::server
