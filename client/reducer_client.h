#pragma once

// The C++ client library for gpureduce.v1.Reducer: unary and streamed reductions, reductions by
// reference to shared memory, kernel and server listings, and the standard health check. Errors
// come back as absl::Status carrying the server's gRPC code and message.

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "client/channel_factory.h"
#include "client/channel_security.h"
#include "gpureduce/v1/reduce.grpc.pb.h"
#include "grpcpp/channel.h"
#include "grpcpp/support/channel_arguments.h"

namespace gpureduce::client {

inline constexpr char kDefaultTarget[] = "127.0.0.1:50051";

inline constexpr size_t kDefaultChunkElements = 256 * 1024;  // 1 MiB of floats per message

struct CallOptions {
  absl::Duration timeout = absl::InfiniteDuration();
  // Send `repeated float values` instead of little-endian `bytes` (what JSON tools do).
  bool use_values_field = false;
};

struct StreamOptions : CallOptions {
  size_t chunk_elements = kDefaultChunkElements;
  // Called after each message is handed to gRPC, with the payload bytes sent so far.
  std::function<void(uint64_t bytes_sent)> on_progress;
};

// Fills `out` from the input and returns how many floats it wrote; 0 means the input ended.
using ChunkFiller = absl::FunctionRef<absl::StatusOr<size_t>(absl::Span<float> out)>;
// Fills `out` with whole elements of the spec's dtype (little-endian bytes) and returns how many
// elements it wrote; 0 means the input ended.
using ByteChunkFiller = absl::FunctionRef<absl::StatusOr<size_t>(absl::Span<char> out)>;

class ReducerClient {
 public:
  // `token`: a bearer token every call carries ("" none).
  explicit ReducerClient(std::shared_ptr<grpc::Channel> channel, std::string token = "");

  // A plaintext channel to `target` (HOST:PORT) with no message-size cap on the client side.
  // With `own_connection` the channel shares no TCP connection with other channels to the
  // same target (gRPC shares them by default), as parallel streams need.
  static std::unique_ptr<ReducerClient> Connect(const std::string& target,
                                                bool own_connection = false,
                                                Balancing balancing = Balancing::kRoundRobin);
  // The same with TLS and a token as `security` asks; an unreadable file is an error.
  static absl::StatusOr<std::unique_ptr<ReducerClient>> Connect(
      const std::string& target, const ChannelSecurity& security, bool own_connection = false,
      Balancing balancing = Balancing::kRoundRobin);

  // The whole array in one message; the server refuses more than its unary limit.
  absl::StatusOr<v1::ReduceResponse> Reduce(const v1::ReduceSpec& spec,
                                            absl::Span<const float> data,
                                            const CallOptions& options = {});

  // The same with `data` the little-endian elements of spec.dtype (any dtype; `values` is
  // float32's, so options.use_values_field must be off for another).
  absl::StatusOr<v1::ReduceResponse> ReduceBytes(const v1::ReduceSpec& spec, absl::string_view data,
                                                 const CallOptions& options = {});

  // Any size: the spec rides in the first message, then chunks of options.chunk_elements until
  // `fill` returns 0. `fill` runs on a helper thread (one call at a time) so that reading the
  // input overlaps sending; memory stays at two chunks whatever the input's length.
  absl::StatusOr<v1::ReduceResponse> ReduceStream(const v1::ReduceSpec& spec, ChunkFiller fill,
                                                  const StreamOptions& options = {});

  // The same for elements of spec.dtype: options.chunk_elements elements of its size a message
  // (so every message ends on an element boundary).
  absl::StatusOr<v1::ReduceResponse> ReduceStreamBytes(const v1::ReduceSpec& spec,
                                                       ByteChunkFiller fill,
                                                       const StreamOptions& options = {});

  absl::StatusOr<v1::ListKernelsResponse> ListKernels(const CallOptions& options = {});
  absl::StatusOr<v1::ServerInfo> GetServerInfo(const CallOptions& options = {});

  // Shared memory (docs/shared-memory.md; defined in shared_memory_calls.cc). The server must
  // run on this host with --allow-shared-memory, else every call is PERMISSION_DENIED.
  //
  // Registers `byte_size` bytes from `offset` of the POSIX shared-memory object `key` (as
  // shm_open takes it, "/name") under `name`; returns the region as the server holds it, with
  // how long it took to map and pin (register_us). `unlink_key`: the server removes the name
  // from /dev/shm once it has mapped the object (for an object made only to lend it).
  // `writable`: the server may write array results there (ReduceSpec.output).
  absl::StatusOr<v1::SharedMemoryRegion> RegisterSystemSharedMemory(
      const std::string& name, const std::string& key, uint64_t offset, uint64_t byte_size,
      const CallOptions& options = {}, bool unlink_key = false, bool writable = false);
  // Registers a device allocation of this process by its cudaIpcMemHandle_t (`raw_handle`, its
  // 64 bytes) on CUDA device `device_id`.
  absl::StatusOr<v1::SharedMemoryRegion> RegisterCudaSharedMemory(
      const std::string& name, const std::string& raw_handle, int32_t device_id, uint64_t offset,
      uint64_t byte_size, const CallOptions& options = {});
  // Every region the server holds, with its limits.
  absl::StatusOr<v1::ListSharedMemoryResponse> ListSharedMemory(const CallOptions& options = {});
  // Unregisters one region (NOT_FOUND when there is none of that name), or all of them; returns
  // the names unregistered. A request reading a region keeps its memory until it ends.
  absl::StatusOr<std::vector<std::string>> UnregisterSharedMemory(const std::string& name,
                                                                  const CallOptions& options = {});
  absl::StatusOr<std::vector<std::string>> UnregisterAllSharedMemory(
      const CallOptions& options = {});
  // Reduces the `byte_size` bytes from `offset` of registered region `region` in place: a
  // ReduceRequest whose payload is `shared_memory` (no size limit but the kernel's bound).
  absl::StatusOr<v1::ReduceResponse> ReduceShared(const v1::ReduceSpec& spec,
                                                  const std::string& region, uint64_t offset,
                                                  uint64_t byte_size,
                                                  const CallOptions& options = {});

  // grpc.health.v1 Check; `service` empty means the whole server. True when SERVING.
  absl::StatusOr<bool> IsServing(const std::string& service = "", const CallOptions& options = {});

  // For calls the helpers above do not cover (tests of malformed requests, cancellation).
  v1::Reducer::Stub& stub() { return *stub_; }
  const std::shared_ptr<grpc::Channel>& channel() const { return channel_; }

 private:
  // Sends the pipeline's messages on a new stream.
  absl::StatusOr<v1::ReduceResponse> SendStream(class ChunkPipeline& pipeline,
                                                const StreamOptions& options);
  // One unary Reduce call.
  absl::StatusOr<v1::ReduceResponse> SendReduce(const v1::ReduceRequest& request,
                                                const CallOptions& options);
  // Sets the deadline and the token on a call's context.
  void Prepare(const CallOptions& options, grpc::ClientContext* context) const;

  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::Reducer::Stub> stub_;
  std::string token_;
};

// The absl::Status equivalent of a gRPC status (codes share their numbers).
absl::Status FromGrpcStatus(const grpc::Status& status);

// The byte size of spec.dtype's elements (4 for float32, and for a dtype this build does not
// know: the server names it in its refusal).
size_t ElementSize(const v1::ReduceSpec& spec);

// Sets `data` (or `values`) of a request or chunk from floats.
void SetPayload(absl::Span<const float> data, bool use_values_field, std::string* bytes,
                google::protobuf::RepeatedField<float>* values);

}  // namespace gpureduce::client
