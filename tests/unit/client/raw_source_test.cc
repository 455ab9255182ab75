#include "client/input/raw_source.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/client/input_test_util.h"

namespace gpureduce::client {
namespace {

using ::gpureduce::client::testing::Bits;
using ::gpureduce::client::testing::FloatBytes;
using ::gpureduce::client::testing::FreshSeed;
using ::gpureduce::client::testing::PipeFeeder;
using ::gpureduce::client::testing::RandomFloats;
using ::gpureduce::client::testing::ReadAll;
using ::gpureduce::client::testing::TempPath;
using ::gpureduce::client::testing::WriteFile;
using ::testing::AllOf;
using ::testing::HasSubstr;

absl::StatusOr<std::unique_ptr<RawSource>> OpenRaw(const std::string& path) {
  absl::StatusOr<std::unique_ptr<ByteReader>> reader = ByteReader::OpenFile(path);
  if (!reader.ok()) return reader.status();
  return RawSource::Open(std::move(*reader));
}

TEST(RawSourceTest, FileRoundTripBitExact) {
  const uint64_t seed = FreshSeed();
  SCOPED_TRACE(absl::StrCat("seed ", seed));
  for (size_t count : {0, 1, 2, 31, 1000003}) {
    const std::vector<float> values = RandomFloats(count, seed);
    const std::string path = TempPath("data.f32");
    WriteFile(path, FloatBytes(values));
    for (size_t chunk : {size_t{1}, size_t{7}, size_t{4096}, count + 5}) {
      SCOPED_TRACE(absl::StrCat("count ", count, " chunk ", chunk));
      auto source = OpenRaw(path);
      ASSERT_TRUE(source.ok()) << source.status();
      EXPECT_EQ((*source)->total_count(), count);
      auto read = ReadAll(**source, chunk);
      ASSERT_TRUE(read.ok()) << read.status();
      ASSERT_EQ(read->size(), count);
      EXPECT_TRUE(Bits(*read) == Bits(values));
    }
  }
}

TEST(RawSourceTest, DescribeNamesCount) {
  const std::string path = TempPath("d.bin");
  WriteFile(path, FloatBytes(RandomFloats(10, 1)));
  auto source = OpenRaw(path);
  ASSERT_TRUE(source.ok());
  EXPECT_EQ((*source)->Describe(), absl::StrCat(path, " (raw little-endian float32, 10 floats)"));
}

TEST(RawSourceTest, FileSizeNotMultipleOfFourIsRejected) {
  const std::string path = TempPath("odd.raw");
  WriteFile(path, std::string(4097, 'x'));
  auto source = OpenRaw(path);
  ASSERT_FALSE(source.ok());
  EXPECT_EQ(source.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(source.status().message(),
              AllOf(HasSubstr(path), HasSubstr("4097 bytes"), HasSubstr("not a multiple of 4")));
}

TEST(RawSourceTest, PipeRoundTripWithUnknownCount) {
  const std::vector<float> values = RandomFloats(300001, FreshSeed());
  PipeFeeder feeder(FloatBytes(values));
  auto source = RawSource::Open(ByteReader::FromDescriptor(feeder.read_fd(), "<stdin>", true));
  ASSERT_TRUE(source.ok());
  EXPECT_FALSE((*source)->total_count().has_value());
  EXPECT_EQ((*source)->Describe(), "<stdin> (raw little-endian float32)");
  auto read = ReadAll(**source, 1000);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_TRUE(Bits(*read) == Bits(values));
}

TEST(RawSourceTest, PipeEndingInPartialFloatIsAnError) {
  const std::vector<float> values = RandomFloats(1024, FreshSeed());
  PipeFeeder feeder(FloatBytes(values) + "z");  // 4097 bytes.
  auto source = RawSource::Open(ByteReader::FromDescriptor(feeder.read_fd(), "<stdin>", true));
  ASSERT_TRUE(source.ok());
  std::vector<float> buffer(100);
  size_t delivered = 0;
  absl::Status status;
  while (true) {
    auto got = (*source)->Read(absl::MakeSpan(buffer));
    if (!got.ok()) {
      status = got.status();
      break;
    }
    ASSERT_GT(*got, 0u) << "the partial value was silently dropped";
    for (size_t i = 0; i < *got; ++i) {
      ASSERT_EQ(Bits({buffer[i]})[0], Bits({values[delivered + i]})[0]);
    }
    delivered += *got;
  }
  EXPECT_EQ(delivered, 1000u);  // The last full chunk; the remaining 24 values share a Read.
  EXPECT_THAT(status.message(),
              AllOf(HasSubstr("partial float32"), HasSubstr("1 stray byte after 1024 values")));
}

}  // namespace
}  // namespace gpureduce::client
