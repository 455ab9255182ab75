#include "client/input/text_source.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/client/input_test_util.h"

namespace gpureduce::client {
namespace {

using ::gpureduce::client::testing::Bits;
using ::gpureduce::client::testing::FreshSeed;
using ::gpureduce::client::testing::PipeFeeder;
using ::gpureduce::client::testing::ReadAll;
using ::gpureduce::client::testing::TempPath;
using ::gpureduce::client::testing::WriteFile;
using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

// Parses `text` from a file read through a `block`-byte buffer, `chunk` values per Read().
absl::StatusOr<std::vector<float>> Parse(const std::string& text,
                                         size_t block = ByteReader::kDefaultBufferSize,
                                         size_t chunk = 4096) {
  const std::string path = TempPath("input.txt");
  WriteFile(path, text);
  absl::StatusOr<std::unique_ptr<ByteReader>> reader = ByteReader::OpenFile(path, block);
  if (!reader.ok()) return reader.status();
  TextSource source(std::move(*reader));
  EXPECT_FALSE(source.total_count().has_value());
  return ReadAll(source, chunk);
}

std::string ErrorOf(const std::string& text) {
  auto values = Parse(text);
  EXPECT_FALSE(values.ok()) << text;
  return std::string(values.status().message());
}

TEST(TextSourceTest, SeparatorsAndComments) {
  const std::string text =
      "# exported by a tool\n"
      "1 2.5\t-3e2\n"
      "4,5;6\r\n"
      "  # an indented comment, 99\n"
      "7, 8 ;\t9   # a trailing comment 99\n"
      ",,;\n"
      "10";  // No final newline.
  for (size_t block : {size_t{16}, size_t{17}, size_t{64}, ByteReader::kDefaultBufferSize}) {
    for (size_t chunk : {size_t{1}, size_t{7}, size_t{4096}}) {
      SCOPED_TRACE(absl::StrCat("block ", block, " chunk ", chunk));
      auto values = Parse(text, block, chunk);
      ASSERT_TRUE(values.ok()) << values.status();
      EXPECT_THAT(*values, ElementsAre(1, 2.5, -300, 4, 5, 6, 7, 8, 9, 10));
    }
  }
}

TEST(TextSourceTest, SpecialValuesAndNotation) {
  auto values = Parse(
      "nan NaN -nan inf -inf +inf Infinity -INFINITY iNf "
      "1e-3 1E+3 .5 5. -0 +1.5 0.1 3.4028235e38 1e-45 1e-50 -1e-50 -0.000e999");
  ASSERT_TRUE(values.ok()) << values.status();
  ASSERT_EQ(values->size(), 21u);
  const std::vector<float>& v = *values;
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(std::isnan(v[i])) << i;
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(v[3], inf);
  EXPECT_EQ(v[4], -inf);
  EXPECT_EQ(v[5], inf);
  EXPECT_EQ(v[6], inf);
  EXPECT_EQ(v[7], -inf);
  EXPECT_EQ(v[8], inf);
  EXPECT_EQ(v[9], 1e-3f);
  EXPECT_EQ(v[10], 1000.0f);
  EXPECT_EQ(v[11], 0.5f);
  EXPECT_EQ(v[12], 5.0f);
  EXPECT_TRUE(v[13] == 0.0f && std::signbit(v[13]));
  EXPECT_EQ(v[14], 1.5f);
  EXPECT_EQ(v[15], 0.1f);
  EXPECT_EQ(v[16], std::numeric_limits<float>::max());
  EXPECT_EQ(v[17], std::numeric_limits<float>::denorm_min());
  // Below half the smallest subnormal: IEEE rounding gives a signed zero, not an error.
  EXPECT_TRUE(v[18] == 0.0f && !std::signbit(v[18]));
  EXPECT_TRUE(v[19] == 0.0f && std::signbit(v[19]));
  EXPECT_TRUE(v[20] == 0.0f && std::signbit(v[20]));
}

TEST(TextSourceTest, OverflowIsAnErrorNamingLineAndToken) {
  for (const std::string token : {"1e39", "-1e39", "3.4028236e38", "1e400", "123456789e40"}) {
    SCOPED_TRACE(token);
    const std::string message = ErrorOf(absl::StrCat("1\n2\n3 ", token, " 4\n"));
    EXPECT_THAT(message, AllOf(HasSubstr("input.txt:3:"), HasSubstr("'" + token + "'"),
                               HasSubstr("beyond the float32 range")));
  }
}

TEST(TextSourceTest, InvalidTokensNameLineAndToken) {
  for (const std::string token :
       {"abc", "1e", "0x10", "+-1", "1.2.3", "--1", "5e", "nanx", "1#2", "\x93NUMPY"}) {
    SCOPED_TRACE(token);
    const std::string message = ErrorOf(absl::StrCat("# comment\n1 2\n\n3\r\n4 ", token, "\n5\n"));
    const std::string shown = token[0] == '\x93' ? "\\x93NUMPY" : token;
    EXPECT_THAT(message,
                AllOf(HasSubstr("input.txt:5: '" + shown + "'"), HasSubstr("is not a number")));
  }
}

TEST(TextSourceTest, OverlongTokenIsRejected) {
  EXPECT_THAT(ErrorOf("1\n" + std::string(5000, '7')),
              AllOf(HasSubstr(":2:"), HasSubstr("longer than 1024")));
  // Also when the token arrives in many small blocks.
  auto values = Parse("1\n" + std::string(5000, '7'), /*block=*/16);
  EXPECT_THAT(values.status().message(), HasSubstr("longer than 1024"));
}

TEST(TextSourceTest, EmptyInputsAndByteOrderMark) {
  EXPECT_TRUE(Parse("")->empty());
  EXPECT_TRUE(Parse("# only a comment")->empty());
  EXPECT_TRUE(Parse(" \n,\n;  \n")->empty());
  EXPECT_THAT(*Parse("\xEF\xBB\xBF"
                     "1.5,2\n"),
              ElementsAre(1.5f, 2.0f));
}

// A file several times the 1 MiB block, with values printed to round-trip exactly and random
// separators and comments, so tokens, separators and comments straddle block boundaries.
TEST(TextSourceTest, LargeFileStraddlingBlocksIsBitExact) {
  const uint64_t seed = FreshSeed();
  SCOPED_TRACE(absl::StrCat("seed ", seed));
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> mantissa(-1.0f, 1.0f);
  std::uniform_int_distribution<int> exponent(-40, 38);
  const char* const kSeparators[] = {" ", ",", ", ", "\n", "\r\n", ";\t", "\t", "\n\n"};
  std::vector<float> expected;
  std::string text;
  uint64_t lines = 1;
  while (text.size() < 3 * ByteReader::kDefaultBufferSize + 12345) {
    if (rng() % 50 == 0) {
      text += "# comment line with 1 2 3, spanning bytes\n";
      ++lines;
    }
    const float value = std::ldexp(mantissa(rng), exponent(rng));
    char token[32];
    std::snprintf(token, sizeof(token), "%.9g", static_cast<double>(value));
    expected.push_back(value);
    text += token;
    const std::string separator = kSeparators[rng() % 8];
    text += separator;
    lines += static_cast<uint64_t>(std::count(separator.begin(), separator.end(), '\n'));
  }
  for (size_t block : {size_t{16}, size_t{1000}, ByteReader::kDefaultBufferSize}) {
    SCOPED_TRACE(absl::StrCat("block ", block));
    auto values = Parse(text, block, /*chunk=*/7);
    ASSERT_TRUE(values.ok()) << values.status();
    ASSERT_EQ(values->size(), expected.size());
    EXPECT_TRUE(Bits(*values) == Bits(expected));
  }
  // Line numbers stay right across blocks.
  const std::string message = ErrorOf(text + "\nbogus\n");
  EXPECT_THAT(message, HasSubstr(absl::StrCat("input.txt:", lines + 1, ": 'bogus'")));
}

TEST(TextSourceTest, ReadsAPipe) {
  PipeFeeder feeder("1 2\n3\n");
  TextSource source(ByteReader::FromDescriptor(feeder.read_fd(), "<stdin>", true));
  EXPECT_EQ(source.Describe(), "<stdin> (text)");
  auto values = ReadAll(source, 2);
  ASSERT_TRUE(values.ok());
  EXPECT_THAT(*values, ElementsAre(1, 2, 3));
}

}  // namespace
}  // namespace gpureduce::client
