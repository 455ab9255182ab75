// PartSource over every kind of input: the values of a part, bit for bit, whether the source
// seeks (raw and npy files, random) or reads and drops (text), and a precise error when the
// input is shorter than the part.

#include "client/input/part_source.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "client/input/open_source.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/client/input_test_util.h"

namespace gpureduce::client {
namespace {

using ::gpureduce::client::testing::Bits;
using ::gpureduce::client::testing::FloatBytes;
using ::gpureduce::client::testing::FreshSeed;
using ::gpureduce::client::testing::RandomFloats;
using ::gpureduce::client::testing::ReadAll;
using ::gpureduce::client::testing::TempPath;
using ::gpureduce::client::testing::WriteFile;
using ::gpureduce::testing::NpyDict;
using ::gpureduce::testing::NpyHeaderBytes;
using ::testing::HasSubstr;

// Every part of `whole` read through PartSource over a fresh source of `options`.
void ExpectPartsMatch(const SourceOptions& options, const std::vector<float>& whole) {
  const uint64_t n = whole.size();
  for (const auto& [begin, count] : std::vector<std::pair<uint64_t, uint64_t>>{
           {0, n}, {0, 1}, {n - 1, 1}, {n / 3, n / 3 + 1}, {1, n - 1}}) {
    absl::StatusOr<std::unique_ptr<FloatSource>> source = OpenSource(options);
    ASSERT_TRUE(source.ok()) << source.status();
    absl::StatusOr<std::unique_ptr<PartSource>> part =
        PartSource::Open(std::move(*source), begin, count);
    ASSERT_TRUE(part.ok()) << part.status();
    EXPECT_EQ((*part)->total_count(), count);
    absl::StatusOr<std::vector<float>> values = ReadAll(**part, 4099);
    ASSERT_TRUE(values.ok()) << values.status();
    const std::vector<float> expected(whole.begin() + begin, whole.begin() + begin + count);
    EXPECT_EQ(Bits(*values), Bits(expected))
        << options.path << " [" << begin << ", +" << count << ")";
  }
}

TEST(PartSourceTest, RawNpyTextAndRandomPartsAreBitExact) {
  const uint64_t seed = FreshSeed();
  SCOPED_TRACE(absl::StrCat("seed ", seed));
  const std::vector<float> values = RandomFloats(1000003, seed);

  SourceOptions raw;
  raw.path = TempPath("data.f32");
  WriteFile(raw.path, FloatBytes(values));
  ExpectPartsMatch(raw, values);

  SourceOptions npy;
  npy.path = TempPath("data.npy");
  WriteFile(npy.path, NpyHeaderBytes(1, NpyDict("<f4", "(1000003,)")) + FloatBytes(values));
  ExpectPartsMatch(npy, values);

  const std::vector<float> few(values.begin(), values.begin() + 31);
  SourceOptions text;
  text.path = TempPath("data.txt");
  std::string numbers;
  for (float x : few) absl::StrAppend(&numbers, absl::StrFormat("%.9g\n", x));
  WriteFile(text.path, numbers);
  ExpectPartsMatch(text, few);

  SourceOptions random;
  random.random = true;
  random.random_count = 1000003;
  random.random_seed = seed;
  absl::StatusOr<std::unique_ptr<FloatSource>> whole = OpenSource(random);
  ASSERT_TRUE(whole.ok());
  absl::StatusOr<std::vector<float>> all = ReadAll(**whole, 65536);
  ASSERT_TRUE(all.ok());
  ExpectPartsMatch(random, *all);
}

TEST(PartSourceTest, AnInputShorterThanThePartIsAnError) {
  const std::vector<float> values = RandomFloats(100, FreshSeed());
  SourceOptions raw;
  raw.path = TempPath("short.f32");
  WriteFile(raw.path, FloatBytes(values));
  absl::StatusOr<std::unique_ptr<FloatSource>> source = OpenSource(raw);
  ASSERT_TRUE(source.ok());
  EXPECT_THAT(PartSource::Open(std::move(*source), 150, 10).status().message(),
              HasSubstr("before the part that starts at 150"));

  source = OpenSource(raw);
  ASSERT_TRUE(source.ok());
  absl::StatusOr<std::unique_ptr<PartSource>> part = PartSource::Open(std::move(*source), 90, 20);
  ASSERT_TRUE(part.ok());
  EXPECT_THAT(ReadAll(**part, 64).status().message(), HasSubstr("inside the part of values 90"));
}

}  // namespace
}  // namespace gpureduce::client
