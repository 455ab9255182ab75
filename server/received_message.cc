#include "server/received_message.h"

#include <algorithm>
#include <climits>
#include <cstdint>
#include <string>

#include "absl/strings/str_cat.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"
#include "grpcpp/impl/codegen/proto_utils.h"

namespace gpureduce::server {
namespace {

using google::protobuf::io::CodedInputStream;
using google::protobuf::io::CodedOutputStream;

// The longest varint protobuf reads as a tag or a length (32 bits in 7-bit groups).
constexpr int kMaxVarint32Bytes = 5;

// `data` is field 2 of both messages (reduce.proto).
constexpr uint32_t kDataField = 2;
enum WireType : uint32_t { kVarint = 0, kFixed64 = 1, kLengthDelimited = 2, kFixed32 = 5 };

// Whether a message holds another member of `data`'s oneof, which protobuf would have let the
// later of the two on the wire win.
bool HoldsOtherPayload(const v1::ReduceRequest& request) {
  return request.payload_case() == v1::ReduceRequest::kSharedMemory;
}
bool HoldsOtherPayload(const v1::ReduceChunk&) { return false; }

// A length as protobuf reads one: a varint of at most 5 bytes, below 2 GiB. False otherwise
// (protobuf refuses the message, and so will the whole parse this falls back to).
bool ReadLength(CodedInputStream& in, uint32_t* size) {
  const int before = in.CurrentPosition();
  uint64_t value = 0;
  if (!in.ReadVarint64(&value) || in.CurrentPosition() - before > kMaxVarint32Bytes ||
      value > INT32_MAX) {
    return false;
  }
  *size = static_cast<uint32_t>(value);
  return true;
}

// Copies one field's value (its tag already read and written) from `in` to `out`.
bool CopyField(uint32_t wire_type, CodedInputStream& in, CodedOutputStream& out) {
  switch (wire_type) {
    case kVarint: {
      uint64_t value = 0;
      if (!in.ReadVarint64(&value)) return false;
      out.WriteVarint64(value);
      return true;
    }
    case kFixed64: {
      uint64_t value = 0;
      if (!in.ReadLittleEndian64(&value)) return false;
      out.WriteLittleEndian64(value);
      return true;
    }
    case kLengthDelimited: {
      uint32_t size = 0;
      std::string bytes;
      if (!ReadLength(in, &size) || !in.ReadString(&bytes, static_cast<int>(size))) return false;
      out.WriteVarint32(size);
      out.WriteString(bytes);
      return true;
    }
    case kFixed32: {
      uint32_t value = 0;
      if (!in.ReadLittleEndian32(&value)) return false;
      out.WriteLittleEndian32(value);
      return true;
    }
    default:  // groups, or no wire type at all: protobuf's parse decides
      return false;
  }
}

}  // namespace

template <typename MessageT>
bool ReceivedMessage<MessageT>::Split(std::string* others, bool* data_seen) {
  reader_.emplace(&buffer_);
  if (!reader_->status().ok()) return false;
  const size_t length = buffer_.Length();
  CodedInputStream in(&*reader_);
  google::protobuf::io::StringOutputStream others_stream(others);
  CodedOutputStream out(&others_stream);
  while (true) {
    // A tag of 0 is the end when nothing is left, else a malformed tag; one longer than 5 bytes
    // protobuf refuses (ReadTag would read its low 32 bits).
    const size_t before = static_cast<size_t>(in.CurrentPosition());
    const uint32_t tag = in.ReadTag();
    if (tag == 0) return before == length;
    if (in.CurrentPosition() - static_cast<int>(before) > kMaxVarint32Bytes) return false;
    const uint32_t field = tag >> 3, wire_type = tag & 7;
    if (field != kDataField || wire_type != kLengthDelimited) {
      out.WriteTag(tag);
      if (!CopyField(wire_type, in, out)) return false;
      continue;
    }
    if (*data_seen) return false;  // protobuf keeps the last: let it
    *data_seen = true;
    uint32_t size = 0;
    if (!ReadLength(in, &size)) return false;
    while (size > 0) {
      const void* at = nullptr;
      int available = 0;
      if (!in.GetDirectBufferPointer(&at, &available)) return false;  // cut short
      const int take = static_cast<int>(std::min<uint64_t>(uint64_t(available), size));
      data_.Append(static_cast<const std::byte*>(at), static_cast<size_t>(take));
      in.Skip(take);
      size -= static_cast<uint32_t>(take);
    }
  }
}

template <typename MessageT>
absl::Status ReceivedMessage<MessageT>::Parse() {
  message_.Clear();
  data_.Clear();
  std::string others;
  bool data_seen = false;
  const bool split = Split(&others, &data_seen) && message_.ParseFromString(others) &&
                     !(data_seen && HoldsOtherPayload(message_));
  if (split) return absl::OkStatus();

  // The rare message the field-by-field split would read differently: protobuf reads it whole.
  message_.Clear();
  data_.Clear();
  reader_.reset();  // before a second reader of the same buffer
  reader_.emplace(&buffer_);
  if (!message_.ParseFromZeroCopyStream(&*reader_)) {
    return absl::InvalidArgumentError(
        absl::StrCat("the message (", buffer_.Length(), " bytes) is not a valid ",
                     MessageT::descriptor()->full_name(), ": it does not parse as protobuf"));
  }
  data_.Append(reinterpret_cast<const std::byte*>(message_.data().data()), message_.data().size());
  return absl::OkStatus();
}

template <typename MessageT>
void ReceivedMessage<MessageT>::Release() {
  data_.Clear();
  reader_.reset();
  message_.Clear();
  buffer_.Clear();
}

grpc::Status SerializeResponse(const v1::ReduceResponse& response, grpc::ByteBuffer* buffer) {
  bool own_buffer = false;
  return grpc::SerializationTraits<v1::ReduceResponse>::Serialize(response, buffer, &own_buffer);
}

template class ReceivedMessage<v1::ReduceRequest>;
template class ReceivedMessage<v1::ReduceChunk>;

}  // namespace gpureduce::server
