#include "server/payload.h"

#include <cstring>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/support/random_data.h"
#include "tests/support/wire.h"

namespace gpureduce::server {
namespace {

using google::protobuf::RepeatedField;
using testing::Bytes;

TEST(PayloadTest, BytesAreReadAsLittleEndianFloat32) {
  const std::vector<float> data = testing::MixedSignData(1000003, testing::FreshSeed());
  const std::string bytes = Bytes(data);
  std::vector<float> scratch;
  auto payload = ExtractPayload(bytes, RepeatedField<float>(), 1 << 30, "", &scratch);
  ASSERT_TRUE(payload.ok()) << payload.status();
  ASSERT_EQ(payload->size(), data.size());
  EXPECT_EQ(std::memcmp(payload->data(), data.data(), bytes.size()), 0);
}

TEST(PayloadTest, UnalignedBytesAreCopiedNotMisread) {
  const std::vector<float> data = testing::MixedSignData(31, testing::FreshSeed());
  const std::string padded = absl::StrCat("x", Bytes(data));  // (operator+ trips GCC 12 -Wrestrict)
  const absl::string_view unaligned(padded.data() + 1, padded.size() - 1);
  ASSERT_NE(reinterpret_cast<uintptr_t>(unaligned.data()) % alignof(float), 0u);
  std::vector<float> scratch;
  auto payload = ExtractPayload(unaligned, RepeatedField<float>(), 1 << 20, "", &scratch);
  ASSERT_TRUE(payload.ok());
  EXPECT_EQ(payload->data(), scratch.data());
  for (size_t i = 0; i < data.size(); ++i) EXPECT_EQ((*payload)[i], data[i]) << i;
}

TEST(PayloadTest, RepeatedValuesAreUsedInPlace) {
  RepeatedField<float> values;
  for (float x : {1.5f, -2.0f, 3.0f}) values.Add(x);
  std::vector<float> scratch;
  auto payload = ExtractPayload(std::string(), values, 1 << 20, "", &scratch);
  ASSERT_TRUE(payload.ok());
  EXPECT_EQ(payload->data(), values.data());
  EXPECT_EQ(payload->size(), 3u);
}

TEST(PayloadTest, RejectsBothFieldsOddLengthsAndOversize) {
  RepeatedField<float> values;
  values.Add(1.0f);
  std::vector<float> scratch;
  EXPECT_EQ(ExtractPayload(std::string(8, '\0'), values, 1 << 20, "", &scratch).status().code(),
            absl::StatusCode::kInvalidArgument);
  const absl::Status odd =
      ExtractPayload(std::string(7, '\0'), RepeatedField<float>(), 1 << 20, "", &scratch).status();
  EXPECT_EQ(odd.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(odd.message().find("7 bytes"), absl::string_view::npos);
  const absl::Status big =
      ExtractPayload(std::string(4100, '\0'), RepeatedField<float>(), 4096, "stream it", &scratch)
          .status();
  EXPECT_EQ(big.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_NE(big.message().find("stream it"), absl::string_view::npos);
}

}  // namespace
}  // namespace gpureduce::server
