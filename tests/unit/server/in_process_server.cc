#include "tests/unit/server/in_process_server.h"

#include <chrono>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace gpureduce::testing {

InProcessServer::InProcessServer(const InProcessOptions& options)
    : state_(std::make_unique<server::ServiceState>(backend_, options.limits, options.regions)) {
  state_->tokens = options.tokens;
  state_->ready = options.ready;
  service_ = std::make_unique<server::ReducerService>(*state_);
  grpc::EnableDefaultHealthCheckService(true);
  grpc::ServerBuilder builder;
  builder.AddListeningPort(
      "127.0.0.1:0",
      options.credentials != nullptr ? options.credentials : grpc::InsecureServerCredentials(),
      &port_);
  builder.SetMaxReceiveMessageSize(static_cast<int>(options.limits.TransportLimit()));
  builder.RegisterService(service_.get());
  server_ = builder.BuildAndStart();
  EXPECT_NE(server_, nullptr) << "cannot start the in-process server";
  EXPECT_GT(port_, 0);
  stub_ = v1::Reducer::NewStub(Channel(grpc::InsecureChannelCredentials()));
}

InProcessServer::~InProcessServer() {
  if (server_ != nullptr) server_->Shutdown(std::chrono::system_clock::now());
}

std::string InProcessServer::address() const { return absl::StrCat("127.0.0.1:", port_); }

std::shared_ptr<grpc::Channel> InProcessServer::Channel(
    const std::shared_ptr<grpc::ChannelCredentials>& credentials,
    const grpc::ChannelArguments& arguments) const {
  return grpc::CreateCustomChannel(address(), credentials, arguments);
}

std::unique_ptr<grpc::ClientContext> BoundedContext() {
  auto context = std::make_unique<grpc::ClientContext>();
  context->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
  return context;
}

std::unique_ptr<grpc::ClientReaderWriter<v1::ReduceRequest, v1::ReduceResponse>> RawReduce(
    grpc::ChannelInterface& channel, grpc::ClientContext& context) {
  static const grpc::internal::RpcMethod kReduce("/gpureduce.v1.Reducer/Reduce",
                                                 grpc::internal::RpcMethod::BIDI_STREAMING);
  return std::unique_ptr<grpc::ClientReaderWriter<v1::ReduceRequest, v1::ReduceResponse>>(
      grpc::internal::ClientReaderWriterFactory<v1::ReduceRequest, v1::ReduceResponse>::Create(
          &channel, kReduce, &context));
}

Reduced Unary(v1::Reducer::Stub& stub, const v1::ReduceRequest& request) {
  Reduced out;
  out.status = stub.Reduce(BoundedContext().get(), request, &out.response);
  return out;
}

Reduced Stream(v1::Reducer::Stub& stub, const std::vector<v1::ReduceChunk>& chunks) {
  Reduced out;
  const std::unique_ptr<grpc::ClientContext> context = BoundedContext();
  std::unique_ptr<grpc::ClientWriter<v1::ReduceChunk>> writer =
      stub.ReduceStream(context.get(), &out.response);
  for (const v1::ReduceChunk& chunk : chunks) {
    if (!writer->Write(chunk)) break;  // the server has ended the call: Finish says why
  }
  writer->WritesDone();
  out.status = writer->Finish();
  return out;
}

}  // namespace gpureduce::testing
