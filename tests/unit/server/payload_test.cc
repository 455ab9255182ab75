#include "server/payload.h"

#include <cstring>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/reduction/dtype.h"
#include "common/reduction/op_name.h"
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

TEST(PayloadTest, CountsElementsOfTheRequestsDType) {
  const std::string bytes(48, '\x01');
  for (DType dtype : kAllDTypes) {
    auto payload = ExtractPayload(Pieces(bytes), RepeatedField<float>(), 1 << 20, "", dtype);
    ASSERT_TRUE(payload.ok()) << DTypeName(dtype) << ": " << payload.status();
    EXPECT_EQ(payload->element_bytes(), DTypeSize(dtype)) << DTypeName(dtype);
    EXPECT_EQ(payload->count(), 48 / DTypeSize(dtype)) << DTypeName(dtype);
    EXPECT_EQ(payload->bytes(), 48u);
  }
}

TEST(PayloadTest, RejectsALengthThatIsNotAMultipleOfTheDTypesSizeNamingTheDType) {
  struct Case {
    DType dtype;
    size_t bytes;
  };
  for (const Case& c : {Case{DType::kFloat64, 12}, Case{DType::kInt64, 4}, Case{DType::kInt64, 17},
                        Case{DType::kFloat16, 3}, Case{DType::kBFloat16, 1}, Case{DType::kInt32, 6},
                        Case{DType::kFloat32, 2}}) {
    const absl::Status status = ExtractPayload(Pieces(std::string(c.bytes, '\0')),
                                               RepeatedField<float>(), 1 << 20, "", c.dtype)
                                    .status();
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << DTypeName(c.dtype);
    EXPECT_EQ(status.message(),
              absl::StrCat("data holds ", c.bytes, " bytes, which is not a multiple of ",
                           DTypeSize(c.dtype), ": data must be little-endian ", DTypeName(c.dtype),
                           " (spec.dtype)"));
  }
  // 4 bytes are whole float16, bfloat16, int32 and float32 elements, not a float64.
  for (DType dtype : {DType::kFloat16, DType::kBFloat16, DType::kInt32, DType::kFloat32}) {
    EXPECT_TRUE(
        ExtractPayload(Pieces(std::string(4, '\0')), RepeatedField<float>(), 1 << 20, "", dtype)
            .ok());
  }
}

TEST(PayloadTest, AStreamChunkMayEndInsideAnElement) {
  // whole_elements = false: a chunk's bytes are taken as they are (ElementCarry completes them).
  auto payload = ExtractPayload(Pieces(std::string(13, '\0')), RepeatedField<float>(), 1 << 20, "",
                                DType::kFloat64, /*whole_elements=*/false);
  ASSERT_TRUE(payload.ok()) << payload.status();
  EXPECT_EQ(payload->bytes(), 13u);
  EXPECT_EQ(payload->count(), 1u);
  // The size limit holds all the same.
  EXPECT_EQ(ExtractPayload(Pieces(std::string(13, '\0')), RepeatedField<float>(), 12, "",
                           DType::kFloat64, false)
                .status()
                .code(),
            absl::StatusCode::kResourceExhausted);
}

TEST(PayloadTest, ValuesCarryFloat32Only) {
  RepeatedField<float> values;
  values.Add(1.5f);
  values.Add(2.5f);
  EXPECT_TRUE(ExtractPayload(PayloadPieces(), values, 1 << 20, "", DType::kFloat32).ok());
  for (DType dtype : kAllDTypes) {
    if (dtype == DType::kFloat32) continue;
    const absl::Status status =
        ExtractPayload(PayloadPieces(), values, 1 << 20, "", dtype).status();
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << DTypeName(dtype);
    EXPECT_EQ(status.message(),
              absl::StrCat("values carries float32, but spec.dtype is ", DTypeName(dtype),
                           "; send the array's little-endian bytes in data"));
  }
}

}  // namespace
}  // namespace gpureduce::server
