#include "client/load/sink_service.h"

#include <signal.h>

#include <cstdio>
#include <fstream>
#include <memory>

#include "client/reducer_client.h"
#include "common/unix_socket.h"
#include "grpcpp/grpcpp.h"
#include "grpcpp/health_check_service_interface.h"

namespace gpureduce::client {
namespace {

uint64_t PayloadBytes(const std::string& data, int values) {
  return data.size() + uint64_t(values) * sizeof(float);
}

// Reads a stream's messages back to back, one read always pending, counting their bytes.
class SinkStream final : public grpc::ServerReadReactor<v1::ReduceChunk> {
 public:
  SinkStream(SinkService& sink, v1::ReduceResponse* response) : sink_(sink), response_(response) {
    sink_.CountCall();
    StartRead(&chunk_);
  }
  void OnReadDone(bool ok) override {
    if (!ok) {
      response_->set_count(floats_);
      response_->set_backend(sink_.backend());
      Finish(grpc::Status::OK);
      return;
    }
    if (chunk_.has_spec()) {
      element_size_ = ElementSize(chunk_.spec());
      response_->set_dtype(chunk_.spec().dtype() == v1::DTYPE_UNSPECIFIED ? v1::FLOAT32
                                                                          : chunk_.spec().dtype());
    }
    const uint64_t bytes = PayloadBytes(chunk_.data(), chunk_.values_size());
    sink_.Count(bytes);
    bytes_ += bytes;
    floats_ = bytes_ / element_size_;
    StartRead(&chunk_);
  }
  void OnDone() override { delete this; }

 private:
  SinkService& sink_;
  v1::ReduceResponse* response_;
  v1::ReduceChunk chunk_;
  uint64_t floats_ = 0;  // elements of the spec's dtype
  uint64_t bytes_ = 0;
  size_t element_size_ = sizeof(float);
};

}  // namespace

grpc::ServerUnaryReactor* SinkService::Reduce(grpc::CallbackServerContext* context,
                                              const v1::ReduceRequest* request,
                                              v1::ReduceResponse* response) {
  const uint64_t bytes = PayloadBytes(request->data(), request->values_size());
  CountCall();
  Count(bytes);
  // Elements of the spec's dtype (a chunk may end inside one: the sink does not mind).
  response->set_count(bytes / ElementSize(request->spec()));
  response->set_dtype(request->spec().dtype() == v1::DTYPE_UNSPECIFIED ? v1::FLOAT32
                                                                       : request->spec().dtype());
  response->set_backend(backend_);
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  reactor->Finish(grpc::Status::OK);
  return reactor;
}

grpc::ServerReadReactor<v1::ReduceChunk>* SinkService::ReduceStream(grpc::CallbackServerContext*,
                                                                    v1::ReduceResponse* response) {
  return new SinkStream(*this, response);
}

grpc::ServerUnaryReactor* SinkService::ListKernels(grpc::CallbackServerContext* context,
                                                   const v1::ListKernelsRequest*,
                                                   v1::ListKernelsResponse* response) {
  response->set_default_kernel("sink");
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  reactor->Finish(grpc::Status::OK);
  return reactor;
}

grpc::ServerUnaryReactor* SinkService::GetServerInfo(grpc::CallbackServerContext* context,
                                                     const v1::GetServerInfoRequest*,
                                                     v1::ServerInfo* response) {
  response->set_version("gpureduce-load sink");
  response->set_backend("sink");
  response->set_serving(true);
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  reactor->Finish(grpc::Status::OK);
  return reactor;
}

int RunSink(const SinkOptions& options) {
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  SinkService sink(options.answer_backend);
  grpc::EnableDefaultHealthCheckService(true);
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort(options.listen, grpc::InsecureServerCredentials(), &port);
  std::string unix_socket;
  if (!options.listen_unix.empty()) {
    absl::StatusOr<std::string> prepared = PrepareUnixSocket(options.listen_unix);
    if (!prepared.ok()) {
      std::fprintf(stderr, "gpureduce-load sink: %s\n",
                   std::string(prepared.status().message()).c_str());
      return 1;
    }
    unix_socket = *std::move(prepared);
    builder.AddListeningPort("unix:" + unix_socket, grpc::InsecureServerCredentials());
  }
  builder.SetMaxReceiveMessageSize(-1);
  builder.AddChannelArgument(GRPC_ARG_HTTP2_BDP_PROBE, options.bdp_probe ? 1 : 0);
  builder.RegisterService(&sink);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (server == nullptr || port == 0) {
    std::fprintf(stderr, "gpureduce-load sink: cannot listen on %s%s%s\n", options.listen.c_str(),
                 options.listen_unix.empty() ? "" : " and unix:", options.listen_unix.c_str());
    return 1;
  }
  // The socket goes with the sink, unless another process bound the path meanwhile.
  const BoundUnixSocket bound_socket(unix_socket);
  server->GetHealthCheckService()->SetServingStatus(true);
  if (!options.port_file.empty()) {
    std::ofstream(options.port_file + ".tmp") << port << "\n";
    if (std::rename((options.port_file + ".tmp").c_str(), options.port_file.c_str()) != 0) {
      std::fprintf(stderr, "gpureduce-load sink: cannot write %s\n", options.port_file.c_str());
      return 1;
    }
  }
  const std::string host = options.listen.substr(0, options.listen.rfind(':'));
  std::fprintf(stderr, "gpureduce-load sink listening on %s:%d%s%s (BDP probe %s)\n", host.c_str(),
               port, options.listen_unix.empty() ? "" : " and unix:", options.listen_unix.c_str(),
               options.bdp_probe ? "on" : "off");
  int signal_number = 0;
  sigwait(&signals, &signal_number);
  server->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(2));
  std::fprintf(stderr, "gpureduce-load sink: %lu calls, %lu messages, %lu bytes\n",
               static_cast<unsigned long>(sink.calls()),
               static_cast<unsigned long>(sink.messages()),
               static_cast<unsigned long>(sink.bytes()));
  return 0;
}

}  // namespace gpureduce::client
