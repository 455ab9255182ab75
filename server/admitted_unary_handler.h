#pragma once

// The gRPC method handler behind Reduce, a unary call registered as a stream of one message
// each way so that it is admitted before its message is read (reducer_service.h).
//
// gRPC 1.51's own handler for such methods (CallbackBidiHandler) hands every read's completion
// and every call's OnDone to its executor: two thread wake-ups per call, which cost 40-80% more
// server CPU per 1024-float Reduce at 64 calls in flight on the dev machine (and 7x the context
// switches) than the unary handler it replaced. This one runs those reactions on the thread that
// completed the operation whenever the reactor says they are short and never wait
// (InternalInlineable), as gRPC's unary handler does with its DefaultReactor.
//
// gRPC lets only its own handler classes reach into a call's ServerContext (its completion op,
// its metadata), so this handler is CallbackBidiHandler specialized for a type of ours, which
// gRPC's friend declaration of that template covers. It relies on gRPC 1.51's internals (Debian
// 12's, which the package bundles); a gRPC upgrade has to revisit it.

#include <functional>

#include "grpcpp/impl/codegen/server_callback_handlers.h"
#include "grpcpp/support/byte_buffer.h"
#include "grpcpp/support/server_callback.h"

namespace gpureduce::server {
// Selects the specialization below; never instantiated.
struct AdmittedUnary;
}  // namespace gpureduce::server

namespace grpc::internal {

template <>
class CallbackBidiHandler<gpureduce::server::AdmittedUnary, grpc::ByteBuffer> final
    : public MethodHandler {
 public:
  using Reactor = grpc::ServerBidiReactor<grpc::ByteBuffer, grpc::ByteBuffer>;
  using ReactorFactory = std::function<Reactor*(grpc::CallbackServerContext*)>;

  explicit CallbackBidiHandler(ReactorFactory make_reactor)
      : make_reactor_(std::move(make_reactor)) {}

  void RunHandler(const HandlerParameter& param) override;

 private:
  class Call;

  ReactorFactory make_reactor_;
};

}  // namespace grpc::internal

namespace gpureduce::server {
using AdmittedUnaryHandler = grpc::internal::CallbackBidiHandler<AdmittedUnary, grpc::ByteBuffer>;
}  // namespace gpureduce::server
