#pragma once

// A ReduceRequest or ReduceChunk as gRPC received it: Reduce and ReduceStream are registered raw
// (their messages arrive as grpc::ByteBuffer), so that `data`, nearly every byte of them, is
// never copied by a parse. Every other field is parsed by protobuf; `data` is listed where it
// lies in the received slices, and the backend reads it from there (runtime/payload_pieces.h).

#include <optional>
#include <string>

#include "absl/status/status.h"
#include "gpureduce/v1/reduce.pb.h"
#include "grpcpp/support/byte_buffer.h"
#include "grpcpp/support/proto_buffer_reader.h"
#include "grpcpp/support/status.h"
#include "runtime/payload_pieces.h"

namespace gpureduce::server {

template <typename MessageT>
class ReceivedMessage {
 public:
  // The buffer gRPC reads the next message into; Parse() must follow each read.
  grpc::ByteBuffer* buffer() { return &buffer_; }

  // Parses the buffer. A message protobuf would read differently field by field (`data` twice,
  // or beside a later `shared_memory` in its oneof) or a malformed one is parsed whole by
  // protobuf instead, its `data` then listed from the message's own copy: the same fields, the
  // same errors. INVALID_ARGUMENT when the bytes are not a MessageT.
  absl::Status Parse();

  // Every field but `data` (which stays empty unless the whole message was parsed).
  const MessageT& message() const { return message_; }
  // `data`'s bytes, valid until the next read into the buffer or Release().
  const runtime::PayloadPieces& data() const { return data_; }

  // Drops the message and its bytes (memory goes back once nothing reads them).
  void Release();

 private:
  // Splits the fields: `data` into data_ (`data_seen` says whether it was there), the rest
  // re-encoded into `others`. False where the message must be parsed whole.
  bool Split(std::string* others, bool* data_seen);

  grpc::ByteBuffer buffer_;
  // Kept with the pieces: a compressed buffer's reader owns the decompressed slices.
  std::optional<grpc::ProtoBufferReader> reader_;
  MessageT message_;
  runtime::PayloadPieces data_;
};

// The answer of a raw call, serialized into gRPC's buffer for it.
grpc::Status SerializeResponse(const v1::ReduceResponse& response, grpc::ByteBuffer* buffer);

extern template class ReceivedMessage<v1::ReduceRequest>;
extern template class ReceivedMessage<v1::ReduceChunk>;

}  // namespace gpureduce::server
