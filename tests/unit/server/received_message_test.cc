#include "server/received_message.h"

#include <random>
#include <string>
#include <vector>

#include "grpcpp/support/slice.h"
#include "gtest/gtest.h"
#include "tests/support/random_data.h"
#include "tests/support/wire.h"

namespace gpureduce::server {
namespace {

// `bytes` in gRPC's buffer as the transport would leave them: cut at random places.
void Fill(const std::string& bytes, uint64_t seed, grpc::ByteBuffer* buffer) {
  std::mt19937_64 random(seed);
  std::vector<grpc::Slice> slices;
  for (size_t at = 0; at < bytes.size();) {
    const size_t take = std::min<size_t>(bytes.size() - at, 1 + random() % 5000);
    slices.emplace_back(bytes.data() + at, take);
    at += take;
  }
  *buffer = grpc::ByteBuffer(slices.data(), slices.size());
}

std::string DataOf(const runtime::PayloadPieces& pieces) {
  std::string out(pieces.count() * sizeof(float), '\0');
  if (!out.empty()) pieces.CopyFloats(0, pieces.count(), reinterpret_cast<float*>(out.data()));
  return out;
}

bool DataIsSet(const v1::ReduceRequest& request) {
  return request.payload_case() == v1::ReduceRequest::kData;
}
bool DataIsSet(const v1::ReduceChunk&) { return false; }

// What protobuf itself reads from `bytes`, against what ReceivedMessage reads from them cut up.
template <typename MessageT>
void ExpectSameAsProtobuf(const std::string& bytes, uint64_t seed) {
  MessageT expected;
  ASSERT_TRUE(expected.ParseFromString(bytes));
  ReceivedMessage<MessageT> received;
  Fill(bytes, seed, received.buffer());
  ASSERT_TRUE(received.Parse().ok());
  EXPECT_EQ(DataOf(received.data()), expected.data());
  MessageT got = received.message();
  // An empty `data` on the wire sets the request's oneof; read as absent, it means the same.
  if (!received.data().empty() || DataIsSet(expected)) got.set_data(DataOf(received.data()));
  EXPECT_EQ(got.SerializeAsString(), expected.SerializeAsString());
}

TEST(ReceivedMessageTest, DataStaysInTheReceivedSlicesAndTheRestIsParsed) {
  const uint64_t seed = testing::FreshSeed();
  SCOPED_TRACE(testing::SeedTrace(seed));
  for (size_t n : {size_t{0}, size_t{1}, size_t{31}, size_t{1000003}}) {
    v1::ReduceChunk chunk;
    *chunk.mutable_spec() = testing::Spec(v1::ARGMAX, "single_pass", 256, n);
    chunk.set_data(testing::Bytes(testing::MixedSignData(n, seed + n)));
    ExpectSameAsProtobuf<v1::ReduceChunk>(chunk.SerializeAsString(), seed);

    ReceivedMessage<v1::ReduceChunk> received;
    Fill(chunk.SerializeAsString(), seed, received.buffer());
    ASSERT_TRUE(received.Parse().ok());
    EXPECT_TRUE(received.message().data().empty()) << "data was copied into the message";
    EXPECT_EQ(received.message().spec().kernel(), "single_pass");
    EXPECT_EQ(received.data().count(), n);
  }
}

TEST(ReceivedMessageTest, OddMessagesReadAsProtobufReadsThem) {
  const uint64_t seed = testing::FreshSeed();
  SCOPED_TRACE(testing::SeedTrace(seed));
  const std::string floats = testing::Bytes(testing::MixedSignData(1000, seed));
  v1::ReduceRequest data_request;
  data_request.set_data(floats);
  v1::ReduceRequest shared_request;
  shared_request.mutable_shared_memory()->set_region("r");
  shared_request.mutable_shared_memory()->set_byte_size(64);
  v1::ReduceRequest spec_request;
  *spec_request.mutable_spec() = testing::Spec(v1::SUM);
  v1::ReduceRequest values_request;
  values_request.add_values(1.5f);
  values_request.add_values(-2.0f);
  const std::string unknown_field = std::string("\x78\x05", 2);  // field 15, varint 5
  // Concatenated messages merge as protobuf merges them: the later `data` wins, the later member
  // of the oneof wins, specs merge, unknown fields are kept.
  for (const std::string& bytes :
       {data_request.SerializeAsString() + data_request.SerializeAsString(),
        shared_request.SerializeAsString() + data_request.SerializeAsString(),
        data_request.SerializeAsString() + shared_request.SerializeAsString(),
        spec_request.SerializeAsString() + data_request.SerializeAsString() +
            spec_request.SerializeAsString(),
        values_request.SerializeAsString() + unknown_field + data_request.SerializeAsString(),
        std::string()}) {
    ExpectSameAsProtobuf<v1::ReduceRequest>(bytes, seed);
  }
}

TEST(ReceivedMessageTest, BytesThatAreNotTheMessageAreInvalidArgument) {
  v1::ReduceChunk chunk;
  chunk.set_data(std::string(400, 'a'));
  const std::string whole = chunk.SerializeAsString();
  // ... and a length whose varint is too long (2^32 + 4: its low 32 bits would read as 4).
  const std::string long_length = std::string("\x12\x84\x80\x80\x80\x10", 6) + "abcd";
  // ... and a tag of 6 bytes (the fuzzer's find: ReadTag keeps its low 32 bits).
  const std::string long_tag = std::string("\xd0\xff\xff\xff\xff\x3f\x00", 7);
  for (const std::string& bytes : {whole.substr(0, whole.size() - 7), std::string("\xff\xff", 2),
                                   std::string("\x00", 1), long_length, long_tag}) {
    ASSERT_FALSE(v1::ReduceChunk().ParseFromString(bytes)) << "protobuf reads it";
    ReceivedMessage<v1::ReduceChunk> received;
    Fill(bytes, 7, received.buffer());
    const absl::Status parsed = received.Parse();
    EXPECT_EQ(parsed.code(), absl::StatusCode::kInvalidArgument) << parsed;
    EXPECT_NE(parsed.message().find("gpureduce.v1.ReduceChunk"), std::string::npos) << parsed;
  }
}

}  // namespace
}  // namespace gpureduce::server
