#pragma once

// gpureduce-load's sink: a bare gRPC server that implements gpureduce.v1.Reducer and only
// counts the bytes it receives (no validation, no compute). It is the transport ceiling of a
// host: every figure of the service is measured as a ratio to it, in the same run. It answers
// with backend "sink", which tells the load generator there is nothing to check.

#include <atomic>
#include <cstdint>
#include <string>

#include "absl/time/time.h"
#include "gpureduce/v1/reduce.grpc.pb.h"

namespace gpureduce::client {

class SinkService final : public v1::Reducer::CallbackService {
 public:
  // `backend` is what the answers name: "sink", or another name to test a client's checks
  // (its answers carry no result, so any check finds them wrong).
  explicit SinkService(std::string backend = "sink") : backend_(std::move(backend)) {}

  grpc::ServerUnaryReactor* Reduce(grpc::CallbackServerContext* context,
                                   const v1::ReduceRequest* request,
                                   v1::ReduceResponse* response) override;
  grpc::ServerReadReactor<v1::ReduceChunk>* ReduceStream(grpc::CallbackServerContext* context,
                                                         v1::ReduceResponse* response) override;
  grpc::ServerUnaryReactor* ListKernels(grpc::CallbackServerContext* context,
                                        const v1::ListKernelsRequest* request,
                                        v1::ListKernelsResponse* response) override;
  grpc::ServerUnaryReactor* GetServerInfo(grpc::CallbackServerContext* context,
                                          const v1::GetServerInfoRequest* request,
                                          v1::ServerInfo* response) override;

  void Count(uint64_t bytes) {
    bytes_.fetch_add(bytes, std::memory_order_relaxed);
    messages_.fetch_add(1, std::memory_order_relaxed);
  }
  void CountCall() { calls_.fetch_add(1, std::memory_order_relaxed); }
  uint64_t bytes() const { return bytes_.load(); }
  uint64_t messages() const { return messages_.load(); }
  uint64_t calls() const { return calls_.load(); }
  const std::string& backend() const { return backend_; }

 private:
  const std::string backend_;
  std::atomic<uint64_t> bytes_{0}, messages_{0}, calls_{0};
};

struct SinkOptions {
  std::string listen = "127.0.0.1:50051";
  std::string port_file;                // where to write the bound port (with --listen=...:0)
  std::string listen_unix;              // also listen on this Unix socket path; "": none
  bool bdp_probe = false;               // as gpureduce-server's --bdp-probe, off by default like it
  std::string answer_backend = "sink";  // see SinkService
};

// Serves until SIGINT or SIGTERM, then prints what it received; the process exit code.
// Call before other threads exist (it blocks the two signals for the whole process).
int RunSink(const SinkOptions& options);

}  // namespace gpureduce::client
