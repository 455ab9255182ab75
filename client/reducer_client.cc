#include "client/reducer_client.h"

#include <cstring>
#include <vector>

#include "absl/strings/str_cat.h"
#include "client/chunk_pipeline.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "grpcpp/client_context.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "grpcpp/support/channel_arguments.h"

namespace gpureduce::client {

void ReducerClient::Prepare(const CallOptions& options, grpc::ClientContext* context) const {
  if (options.timeout != absl::InfiniteDuration()) {
    context->set_deadline(absl::ToChronoTime(absl::Now() + options.timeout));
  }
  AddToken(token_, context);
}

absl::Status FromGrpcStatus(const grpc::Status& status) {
  if (status.ok()) return absl::OkStatus();
  return absl::Status(static_cast<absl::StatusCode>(status.error_code()), status.error_message());
}

size_t ElementSize(const v1::ReduceSpec& spec) {
  switch (spec.dtype()) {
    case v1::FLOAT16:
    case v1::BFLOAT16:
      return 2;
    case v1::FLOAT64:
    case v1::INT64:
      return 8;
    default:
      return 4;
  }
}

void SetPayload(absl::Span<const float> data, bool use_values_field, std::string* bytes,
                google::protobuf::RepeatedField<float>* values) {
  if (use_values_field) {
    bytes->clear();
    values->Resize(static_cast<int>(data.size()), 0.0f);
    if (!data.empty())
      std::memcpy(values->mutable_data(), data.data(), data.size() * sizeof(float));
  } else {
    values->Clear();
    bytes->assign(reinterpret_cast<const char*>(data.data()), data.size() * sizeof(float));
  }
}

ReducerClient::ReducerClient(std::shared_ptr<grpc::Channel> channel, std::string token)
    : channel_(std::move(channel)),
      stub_(v1::Reducer::NewStub(channel_)),
      token_(std::move(token)) {}

std::unique_ptr<ReducerClient> ReducerClient::Connect(const std::string& target,
                                                      bool own_connection, Balancing balancing) {
  // Plaintext reads no file, so opening its channel cannot fail.
  return std::make_unique<ReducerClient>(*OpenChannel(
      target, ChannelSecurity(), {.balancing = balancing, .own_connection = own_connection}));
}

absl::StatusOr<std::unique_ptr<ReducerClient>> ReducerClient::Connect(
    const std::string& target, const ChannelSecurity& security, bool own_connection,
    Balancing balancing) {
  absl::StatusOr<std::shared_ptr<grpc::Channel>> channel =
      OpenChannel(target, security, {.balancing = balancing, .own_connection = own_connection});
  if (!channel.ok()) return channel.status();
  absl::StatusOr<std::string> token = ReadToken(security);
  if (!token.ok()) return token.status();
  return std::make_unique<ReducerClient>(*std::move(channel), *std::move(token));
}

absl::StatusOr<v1::ReduceResponse> ReducerClient::Reduce(const v1::ReduceSpec& spec,
                                                         absl::Span<const float> data,
                                                         const CallOptions& options) {
  v1::ReduceRequest request;
  *request.mutable_spec() = spec;
  // `data` is one case of the payload oneof: leave it unset when the floats go as `values`.
  std::string unused;
  SetPayload(data, options.use_values_field,
             options.use_values_field ? &unused : request.mutable_data(), request.mutable_values());
  return SendReduce(request, options);
}

absl::StatusOr<v1::ReduceResponse> ReducerClient::SendReduce(const v1::ReduceRequest& request,
                                                             const CallOptions& options) {
  grpc::ClientContext context;
  Prepare(options, &context);
  v1::ReduceResponse response;
  if (grpc::Status status = stub_->Reduce(&context, request, &response); !status.ok()) {
    return FromGrpcStatus(status);
  }
  return response;
}

absl::StatusOr<v1::ReduceResponse> ReducerClient::ReduceBytes(const v1::ReduceSpec& spec,
                                                              absl::string_view data,
                                                              const CallOptions& options) {
  if (options.use_values_field) {
    if (spec.dtype() != v1::DTYPE_UNSPECIFIED && spec.dtype() != v1::FLOAT32) {
      return absl::InvalidArgumentError(
          "the `values` field carries float32 only: send other dtypes as bytes");
    }
    return Reduce(spec,
                  absl::MakeConstSpan(reinterpret_cast<const float*>(data.data()),
                                      data.size() / sizeof(float)),
                  options);
  }
  v1::ReduceRequest request;
  *request.mutable_spec() = spec;
  request.set_data(data.data(), data.size());
  return SendReduce(request, options);
}

absl::StatusOr<v1::ReduceResponse> ReducerClient::ReduceStream(const v1::ReduceSpec& spec,
                                                               ChunkFiller fill,
                                                               const StreamOptions& options) {
  if (options.chunk_elements == 0) {
    return absl::InvalidArgumentError("chunk_elements must be positive");
  }
  ChunkPipeline pipeline(fill, spec, options.chunk_elements, options.use_values_field);
  return SendStream(pipeline, options);
}

absl::StatusOr<v1::ReduceResponse> ReducerClient::ReduceStreamBytes(const v1::ReduceSpec& spec,
                                                                    ByteChunkFiller fill,
                                                                    const StreamOptions& options) {
  if (options.chunk_elements == 0) {
    return absl::InvalidArgumentError("chunk_elements must be positive");
  }
  if (options.use_values_field) {
    return absl::InvalidArgumentError(
        "the `values` field carries float32 only: stream elements as bytes");
  }
  ChunkPipeline pipeline(fill, spec, options.chunk_elements, ElementSize(spec));
  return SendStream(pipeline, options);
}

absl::StatusOr<v1::ReduceResponse> ReducerClient::SendStream(ChunkPipeline& pipeline,
                                                             const StreamOptions& options) {
  grpc::ClientContext context;
  Prepare(options, &context);
  v1::ReduceResponse response;
  std::unique_ptr<grpc::ClientWriter<v1::ReduceChunk>> writer =
      stub_->ReduceStream(&context, &response);

  uint64_t bytes_sent = 0;
  absl::Status input_status;
  while (true) {
    absl::StatusOr<const v1::ReduceChunk*> message = pipeline.Next();
    if (!message.ok()) {
      input_status = message.status();
      break;
    }
    if (*message == nullptr) break;
    if (!writer->Write(**message)) break;  // the server ended the call; Finish says why
    bytes_sent += ChunkPipeline::Bytes(**message);
    pipeline.Done(*message);
    if (options.on_progress) options.on_progress(bytes_sent);
  }
  if (!input_status.ok()) {
    // Never let a partial input produce a result.
    context.TryCancel();
    writer->Finish();
    return absl::Status(input_status.code(),
                        absl::StrCat("reading the input failed after ", bytes_sent,
                                     " bytes were sent: ", input_status.message()));
  }
  writer->WritesDone();
  if (grpc::Status status = writer->Finish(); !status.ok()) return FromGrpcStatus(status);
  return response;
}

absl::StatusOr<v1::ListKernelsResponse> ReducerClient::ListKernels(const CallOptions& options) {
  grpc::ClientContext context;
  Prepare(options, &context);
  v1::ListKernelsResponse response;
  grpc::Status status = stub_->ListKernels(&context, v1::ListKernelsRequest(), &response);
  if (!status.ok()) return FromGrpcStatus(status);
  return response;
}

absl::StatusOr<v1::ServerInfo> ReducerClient::GetServerInfo(const CallOptions& options) {
  grpc::ClientContext context;
  Prepare(options, &context);
  v1::ServerInfo response;
  grpc::Status status = stub_->GetServerInfo(&context, v1::GetServerInfoRequest(), &response);
  if (!status.ok()) return FromGrpcStatus(status);
  return response;
}

absl::StatusOr<bool> ReducerClient::IsServing(const std::string& service,
                                              const CallOptions& options) {
  grpc::ClientContext context;
  Prepare(options, &context);
  ::grpc::health::v1::HealthCheckRequest request;
  request.set_service(service);
  ::grpc::health::v1::HealthCheckResponse response;
  grpc::Status status =
      ::grpc::health::v1::Health::NewStub(channel_)->Check(&context, request, &response);
  if (!status.ok()) return FromGrpcStatus(status);
  return response.status() == ::grpc::health::v1::HealthCheckResponse::SERVING;
}

}  // namespace gpureduce::client
