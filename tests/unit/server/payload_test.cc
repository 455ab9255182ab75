#include "server/payload.h"

#include <cstring>
#include <vector>

#include "gtest/gtest.h"
#include "tests/support/random_data.h"
#include "tests/support/wire.h"

namespace gpureduce::server {
namespace {

using google::protobuf::RepeatedField;
using runtime::PayloadPieces;
using testing::Bytes;

PayloadPieces Pieces(const std::string& bytes) {
  PayloadPieces pieces;
  pieces.Append(reinterpret_cast<const std::byte*>(bytes.data()), bytes.size());
  return pieces;
}

TEST(PayloadTest, BytesAreReadAsLittleEndianFloat32WhereTheyLie) {
  const std::vector<float> data = testing::MixedSignData(1000003, testing::FreshSeed());
  const std::string bytes = Bytes(data);
  auto payload = ExtractPayload(Pieces(bytes), RepeatedField<float>(), 1 << 30, "");
  ASSERT_TRUE(payload.ok()) << payload.status();
  ASSERT_EQ(payload->count(), data.size());
  ASSERT_TRUE(payload->AsSpan().has_value());
  EXPECT_EQ(static_cast<const void*>(payload->AsSpan()->data()), bytes.data());
  EXPECT_EQ(std::memcmp(payload->AsSpan()->data(), data.data(), bytes.size()), 0);
}

TEST(PayloadTest, RepeatedValuesAreUsedInPlace) {
  RepeatedField<float> values;
  for (float x : {1.5f, -2.0f, 3.0f}) values.Add(x);
  auto payload = ExtractPayload(PayloadPieces(), values, 1 << 20, "");
  ASSERT_TRUE(payload.ok());
  ASSERT_TRUE(payload->AsSpan().has_value());
  EXPECT_EQ(payload->AsSpan()->data(), values.data());
  EXPECT_EQ(payload->count(), 3u);
}

TEST(PayloadTest, RejectsBothFieldsOddLengthsAndOversize) {
  RepeatedField<float> values;
  values.Add(1.0f);
  const std::string eight(8, '\0'), seven(7, '\0'), big(4100, '\0');
  EXPECT_EQ(ExtractPayload(Pieces(eight), values, 1 << 20, "").status().code(),
            absl::StatusCode::kInvalidArgument);
  const absl::Status odd =
      ExtractPayload(Pieces(seven), RepeatedField<float>(), 1 << 20, "").status();
  EXPECT_EQ(odd.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(odd.message().find("7 bytes"), absl::string_view::npos);
  const absl::Status too_big =
      ExtractPayload(Pieces(big), RepeatedField<float>(), 4096, "stream it").status();
  EXPECT_EQ(too_big.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_NE(too_big.message().find("stream it"), absl::string_view::npos);
}

}  // namespace
}  // namespace gpureduce::server
