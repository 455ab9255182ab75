#include "common/byte_size.h"

#include <cstdint>
#include <limits>
#include <string>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace gpureduce {
namespace {

using ::testing::HasSubstr;

constexpr uint64_t kKiB = uint64_t{1} << 10;
constexpr uint64_t kMiB = uint64_t{1} << 20;
constexpr uint64_t kGiB = uint64_t{1} << 30;
constexpr uint64_t kMax = std::numeric_limits<uint64_t>::max();

uint64_t ParseOk(const std::string& text) {
  absl::StatusOr<uint64_t> bytes = ParseByteSize(text);
  EXPECT_TRUE(bytes.ok()) << text << ": " << bytes.status();
  return bytes.value_or(0);
}

TEST(ParseByteSizeTest, PlainBytes) {
  EXPECT_EQ(ParseOk("0"), 0u);
  EXPECT_EQ(ParseOk("4096"), 4096u);
  EXPECT_EQ(ParseOk("4096B"), 4096u);
  EXPECT_EQ(ParseOk("18446744073709551615"), kMax);
}

TEST(ParseByteSizeTest, BinarySuffixes) {
  EXPECT_EQ(ParseOk("64KiB"), 64 * kKiB);
  EXPECT_EQ(ParseOk("64K"), 64 * kKiB);
  EXPECT_EQ(ParseOk("1MiB"), kMiB);
  EXPECT_EQ(ParseOk("1M"), kMiB);
  EXPECT_EQ(ParseOk("4GiB"), 4 * kGiB);
  EXPECT_EQ(ParseOk("4G"), 4 * kGiB);
}

TEST(ParseByteSizeTest, DecimalSuffixes) {
  EXPECT_EQ(ParseOk("1KB"), 1'000u);
  EXPECT_EQ(ParseOk("1MB"), 1'000'000u);
  EXPECT_EQ(ParseOk("3GB"), 3'000'000'000u);
}

TEST(ParseByteSizeTest, SuffixesAreCaseInsensitive) {
  EXPECT_EQ(ParseOk("2kib"), 2 * kKiB);
  EXPECT_EQ(ParseOk("2KIB"), 2 * kKiB);
  EXPECT_EQ(ParseOk("2k"), 2 * kKiB);
  EXPECT_EQ(ParseOk("2mb"), 2'000'000u);
  EXPECT_EQ(ParseOk("2gIb"), 2 * kGiB);
  EXPECT_EQ(ParseOk("7b"), 7u);
}

TEST(ParseByteSizeTest, ExactFractions) {
  EXPECT_EQ(ParseOk("1.5GiB"), kGiB + kGiB / 2);
  EXPECT_EQ(ParseOk("1.25KiB"), 1280u);
  EXPECT_EQ(ParseOk("0.5MB"), 500'000u);
  EXPECT_EQ(ParseOk("2.0"), 2u);
}

TEST(ParseByteSizeTest, RejectsFractionalBytes) {
  absl::StatusOr<uint64_t> bytes = ParseByteSize("1.1KiB");
  EXPECT_EQ(bytes.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(bytes.status().message(), HasSubstr("not a whole number of bytes"));
  EXPECT_FALSE(ParseByteSize("1.5").ok());
}

TEST(ParseByteSizeTest, RejectsJunk) {
  for (const char* text : {"", " ", "KiB", "12x", "12 KiB", " 12", "12KiBs", "-1", "+1", "-1KiB",
                           ".5KiB", "1.", "1.KiB", "1..5K", "0x10", "1e3", "1TiB", "1KiB2"}) {
    absl::StatusOr<uint64_t> bytes = ParseByteSize(text);
    EXPECT_EQ(bytes.status().code(), absl::StatusCode::kInvalidArgument) << "\"" << text << "\"";
  }
  absl::Status status = ParseByteSize("12x").status();
  EXPECT_THAT(status.message(), HasSubstr("\"12x\""));
  EXPECT_THAT(status.message(), HasSubstr("KiB"));
}

TEST(ParseByteSizeTest, RejectsOverflowInsteadOfWrapping) {
  for (const char* text : {"99999999999GiB", "18446744073709551616", "17179869184GiB",
                           "18446744073709551615.5K", "99999999999999999999999"}) {
    absl::StatusOr<uint64_t> bytes = ParseByteSize(text);
    EXPECT_EQ(bytes.status().code(), absl::StatusCode::kInvalidArgument) << text;
  }
  EXPECT_THAT(ParseByteSize("99999999999GiB").status().message(), HasSubstr("too large"));
  // The largest GiB count that fits still parses.
  EXPECT_EQ(ParseOk("17179869183GiB"), 17179869183 * kGiB);
}

TEST(FormatByteSizeTest, ExactUnits) {
  EXPECT_EQ(FormatByteSize(0), "0B");
  EXPECT_EQ(FormatByteSize(1023), "1023B");
  EXPECT_EQ(FormatByteSize(kKiB), "1KiB");
  EXPECT_EQ(FormatByteSize(4096), "4KiB");
  EXPECT_EQ(FormatByteSize(64 * kMiB), "64MiB");
  EXPECT_EQ(FormatByteSize(4 * kGiB), "4GiB");
  EXPECT_EQ(FormatByteSize(2048 * kGiB), "2048GiB");
}

TEST(FormatByteSizeTest, ShortFractionsElseBytes) {
  EXPECT_EQ(FormatByteSize(kGiB + kGiB / 2), "1.5GiB");
  EXPECT_EQ(FormatByteSize(1280), "1.25KiB");
  EXPECT_EQ(FormatByteSize(4097), "4097B");
  EXPECT_EQ(FormatByteSize(1'000'000), "1000000B");
  EXPECT_EQ(FormatByteSize(kMax), "18446744073709551615B");
}

TEST(FormatByteSizeTest, RoundTripsThroughParse) {
  for (uint64_t bytes : {uint64_t{0}, uint64_t{1}, uint64_t{1000}, uint64_t{4097}, kKiB + 512,
                         3 * kMiB + kMiB / 4, 7 * kGiB, kGiB * 3 / 4, kMax, kMax - kGiB + 1}) {
    EXPECT_EQ(ParseOk(FormatByteSize(bytes)), bytes) << FormatByteSize(bytes);
  }
}

}  // namespace
}  // namespace gpureduce
