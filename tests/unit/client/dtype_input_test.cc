// The CLI's inputs of every dtype: .npy files of each supported descr (either byte order), u2/i2
// read as bfloat16 only when asked, precise refusals of the rest; raw and random input of a
// --dtype; the float16 and bfloat16 codecs the client's references decode with.

#include <bit>
#include <cmath>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "client/input/element_codec.h"
#include "client/input/npy_source.h"
#include "client/input/open_source.h"
#include "client/input/random_source.h"
#include "client/input/raw_source.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/client/input_test_util.h"

namespace gpureduce::client {
namespace {

using ::gpureduce::client::testing::TempPath;
using ::gpureduce::client::testing::WriteFile;
using ::gpureduce::testing::NpyDict;
using ::gpureduce::testing::NpyHeaderBytes;
using ::testing::AllOf;
using ::testing::HasSubstr;

template <typename T>
std::string Bytes(const std::vector<T>& values, bool big_endian = false) {
  std::string bytes(values.size() * sizeof(T), '\0');
  std::memcpy(bytes.data(), values.data(), bytes.size());
  if (big_endian) {
    for (size_t i = 0; i < values.size(); ++i) {
      std::reverse(bytes.begin() + i * sizeof(T), bytes.begin() + (i + 1) * sizeof(T));
    }
  }
  return bytes;
}

absl::StatusOr<std::unique_ptr<FloatSource>> Open(const std::string& path,
                                                  std::optional<DType> dtype = std::nullopt,
                                                  const std::string& format = "auto") {
  SourceOptions options;
  options.path = path;
  options.dtype = dtype;
  options.format = format;
  return OpenSource(options);
}

// Every byte of the source, read in chunks of `chunk` elements.
std::string ReadAllBytes(FloatSource& source, size_t chunk) {
  std::string all;
  std::vector<char> buffer(chunk * DTypeSize(source.dtype()));
  while (true) {
    absl::StatusOr<size_t> got = source.ReadBytes(absl::MakeSpan(buffer));
    EXPECT_TRUE(got.ok()) << got.status();
    if (!got.ok() || *got == 0) return all;
    all.append(buffer.data(), *got * DTypeSize(source.dtype()));
  }
}

TEST(ElementCodecTest, EveryFloat16RoundTripsThroughDouble) {
  for (uint32_t bits = 0; bits < 0x10000; ++bits) {
    const double value = HalfToDouble(static_cast<uint16_t>(bits));
    if (std::isnan(value)) {
      EXPECT_TRUE(std::isnan(HalfToDouble(DoubleToHalf(value))));
      continue;
    }
    ASSERT_EQ(DoubleToHalf(value), bits) << std::hex << bits << " " << value;
  }
  EXPECT_EQ(HalfToDouble(0x3c00), 1.0);
  EXPECT_EQ(HalfToDouble(0x7bff), 65504.0);
  EXPECT_EQ(HalfToDouble(0x0001), std::ldexp(1.0, -24));
  EXPECT_EQ(HalfToDouble(0xfc00), -INFINITY);
}

TEST(ElementCodecTest, Float16RoundsToNearestEvenAndOverflowsToInfinity) {
  EXPECT_EQ(DoubleToHalf(1.0 + std::ldexp(1.0, -11)), 0x3c00);      // a tie: to even
  EXPECT_EQ(DoubleToHalf(1.0 + 3 * std::ldexp(1.0, -11)), 0x3c02);  // a tie: to even (up)
  EXPECT_EQ(DoubleToHalf(65519.0), 0x7bff);
  EXPECT_EQ(DoubleToHalf(65520.0), 0x7c00);
  EXPECT_EQ(DoubleToHalf(-1e6), 0xfc00);
  EXPECT_EQ(DoubleToHalf(std::ldexp(1.0, -26)), 0x0000);  // below half the smallest subnormal
}

TEST(ElementCodecTest, BFloat16IsTheUpperHalfRoundedToNearestEven) {
  EXPECT_EQ(FloatToBFloat16(1.0f), 0x3f80);
  EXPECT_EQ(BFloat16ToDouble(0x3f80), 1.0);
  EXPECT_EQ(FloatToBFloat16(std::bit_cast<float>(0x3f808000u)), 0x3f80);  // tie: to even
  EXPECT_EQ(FloatToBFloat16(std::bit_cast<float>(0x3f818000u)), 0x3f82);  // tie: to even (up)
  EXPECT_EQ(FloatToBFloat16(std::bit_cast<float>(0x3f808001u)), 0x3f81);
  EXPECT_TRUE(std::isnan(BFloat16ToDouble(FloatToBFloat16(NAN))));
}

struct NpyCase {
  std::string descr;
  DType dtype;
  std::string data;  // little-endian elements
  size_t count;
};

std::vector<NpyCase> Cases() {
  return {
      {"<f4", DType::kFloat32, Bytes<float>({1.5f, -2.25f, 3e38f}), 3},
      {"<f2", DType::kFloat16, Bytes<uint16_t>({0x3c00, 0xc000, 0x7bff, 0x0001, 0x7e00}), 5},
      {"<f8", DType::kFloat64, Bytes<double>({0.1, -1e300, 5e-324}), 3},
      {"<i4", DType::kInt32, Bytes<int32_t>({2147483647, -2147483647 - 1, 7}), 3},
      {"<i8", DType::kInt64, Bytes<int64_t>({INT64_MAX, INT64_MIN, -1}), 3},
  };
}

TEST(DTypeNpyTest, EverySupportedDescrReadsBitExactInEitherByteOrder) {
  for (const NpyCase& c : Cases()) {
    for (const bool big : {false, true}) {
      SCOPED_TRACE(absl::StrCat(c.descr, big ? " big-endian" : ""));
      const size_t size = DTypeSize(c.dtype);
      std::string stored = c.data;
      if (big) {
        for (size_t i = 0; i < c.count; ++i) {
          std::reverse(stored.begin() + i * size, stored.begin() + (i + 1) * size);
        }
      }
      std::string descr = c.descr;
      if (big) descr[0] = '>';
      const std::string path = TempPath(absl::StrCat("data", big, ".npy"));
      WriteFile(path, NpyHeaderBytes(1, NpyDict(descr, absl::StrCat("(", c.count, ",)"))) + stored);
      for (const std::optional<DType> asked : {std::optional<DType>(), std::optional(c.dtype)}) {
        absl::StatusOr<std::unique_ptr<FloatSource>> source = Open(path, asked);
        ASSERT_TRUE(source.ok()) << source.status();
        EXPECT_EQ((*source)->dtype(), c.dtype);
        EXPECT_EQ((*source)->total_count(), c.count);
        for (size_t chunk : {size_t{1}, size_t{2}, size_t{64}}) {
          absl::StatusOr<std::unique_ptr<FloatSource>> fresh = Open(path, asked);
          ASSERT_TRUE(fresh.ok());
          EXPECT_EQ(ReadAllBytes(**fresh, chunk), c.data) << "chunk " << chunk;
        }
      }
    }
  }
}

TEST(DTypeNpyTest, DescribeNamesTheDType) {
  const std::string path = TempPath("half.npy");
  WriteFile(path, NpyHeaderBytes(1, NpyDict("<f2", "(2,)")) + Bytes<uint16_t>({0, 0}));
  EXPECT_EQ((*Open(path))->Describe(),
            absl::StrCat(path, " (npy v1.0 <f2, shape (2,), 2 float16)"));
}

TEST(DTypeNpyTest, Uint16AndInt16AreBFloat16OnlyWhenAsked) {
  const std::vector<uint16_t> bits = {0x3f80, 0xc040, 0x7f80};
  for (const char* descr : {"<u2", "<i2"}) {
    SCOPED_TRACE(descr);
    const std::string path = TempPath("bf16.npy");
    WriteFile(path, NpyHeaderBytes(1, NpyDict(descr, "(3,)")) + Bytes(bits));
    absl::StatusOr<std::unique_ptr<FloatSource>> source = Open(path, DType::kBFloat16);
    ASSERT_TRUE(source.ok()) << source.status();
    EXPECT_EQ((*source)->dtype(), DType::kBFloat16);
    EXPECT_EQ(ReadAllBytes(**source, 2), Bytes(bits));

    absl::StatusOr<std::unique_ptr<FloatSource>> plain = Open(path);
    EXPECT_EQ(plain.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(plain.status().message(),
                AllOf(HasSubstr(descr), HasSubstr("only as bfloat16 bits, with --dtype bfloat16")));
    EXPECT_THAT(Open(path, DType::kFloat16).status().message(), HasSubstr("not --dtype float16"));
  }
}

TEST(DTypeNpyTest, ADTypeThatDisagreesWithTheHeaderIsRefused) {
  const std::string path = TempPath("f2.npy");
  WriteFile(path, NpyHeaderBytes(1, NpyDict("<f2", "(1,)")) + Bytes<uint16_t>({0}));
  absl::StatusOr<std::unique_ptr<FloatSource>> source = Open(path, DType::kInt32);
  EXPECT_EQ(source.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(source.status().message(),
              HasSubstr("holds <f2 (float16), but --dtype asks for int32: a .npy file says its "
                        "dtype; leave --dtype out or give float16"));
  EXPECT_THAT(Open(path, DType::kBFloat16).status().message(),
              HasSubstr("bfloat16 reads only uint16 or int16 files"));
}

TEST(DTypeNpyTest, UnsupportedDescrsNameTheSupportedOnes) {
  for (const auto& [descr, type] :
       std::vector<std::pair<std::string, std::string>>{{"<u4", "uint32"},
                                                        {"<i1", "int8"},
                                                        {"|b1", "bool"},
                                                        {"<c8", "complex64"},
                                                        {"<f16", "float128"}}) {
    SCOPED_TRACE(descr);
    const std::string path = TempPath("bad.npy");
    WriteFile(path, NpyHeaderBytes(1, NpyDict(descr, "(1,)")) + std::string(16, '\0'));
    absl::StatusOr<std::unique_ptr<FloatSource>> source = Open(path);
    EXPECT_EQ(source.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(source.status().message(),
                AllOf(HasSubstr(absl::StrCat("holds ", descr, " (", type, ")")),
                      HasSubstr("float32 (<f4), float16 (<f2), float64 (<f8), int32 (<i4), "
                                "int64 (<i8), and bfloat16 stored as uint16 or int16")));
  }
  const std::string path = TempPath("noorder.npy");
  WriteFile(path, NpyHeaderBytes(1, NpyDict("|f2", "(1,)")) + std::string(2, '\0'));
  EXPECT_THAT(Open(path).status().message(),
              HasSubstr("'|' (no byte order) is not valid for a 2-byte type; expected '<f2'"));
}

TEST(DTypeNpyTest, TruncationCountsElementsOfTheDType) {
  const std::string path = TempPath("short.npy");
  WriteFile(path, NpyHeaderBytes(1, NpyDict("<f8", "(3,)")) + std::string(20, '\0'));
  EXPECT_THAT(Open(path).status().message(),
              HasSubstr("3 float64 values = 24 bytes of data, but only 20 bytes follow"));
}

TEST(DTypeRawTest, RawInputOfADTypeAndItsSizeCheck) {
  const std::string path = TempPath("data.raw");
  const std::vector<int64_t> values = {1, -2, INT64_MAX};
  WriteFile(path, Bytes(values));
  absl::StatusOr<std::unique_ptr<FloatSource>> source = Open(path, DType::kInt64);
  ASSERT_TRUE(source.ok()) << source.status();
  EXPECT_EQ((*source)->total_count(), 3u);
  EXPECT_EQ(ReadAllBytes(**source, 2), Bytes(values));
  EXPECT_THAT((*source)->Describe(), HasSubstr("raw little-endian int64, 3 values"));

  const std::string odd = TempPath("odd.raw");
  WriteFile(odd, std::string(10, '\0'));
  EXPECT_THAT(Open(odd, DType::kFloat64).status().message(),
              HasSubstr("10 bytes, which is not a multiple of 8 bytes, so it is not raw float64"));
  EXPECT_TRUE(Open(odd, DType::kFloat16).ok());
}

TEST(DTypeRawTest, TextIsFloat32Only) {
  const std::string path = TempPath("data.txt");
  WriteFile(path, "1 2 3\n");
  absl::StatusOr<std::unique_ptr<FloatSource>> source = Open(path, DType::kInt32);
  EXPECT_EQ(source.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(source.status().message(),
              HasSubstr("parses as float32 only; --dtype int32 needs a .npy file, a raw file"));
  EXPECT_TRUE(Open(path, DType::kFloat32).ok());
}

TEST(DTypeRandomTest, EveryDTypeTakesTheFloat32SequenceConverted) {
  constexpr uint64_t kCount = 1001;
  constexpr uint64_t kSeed = 5;
  for (const DType dtype : kAllDTypes) {
    RandomSource source(kCount, kSeed, dtype);
    EXPECT_EQ(source.dtype(), dtype);
    const std::string bytes = ReadAllBytes(source, 37);
    ASSERT_EQ(bytes.size(), kCount * DTypeSize(dtype));
    for (uint64_t i = 0; i < kCount; ++i) {
      const float x = RandomSource::ValueAt(kSeed, i);
      const double got = ElementAsDouble(dtype, bytes.data(), i);
      switch (dtype) {
        case DType::kFloat16:
          ASSERT_EQ(got, HalfToDouble(DoubleToHalf(x))) << i;
          break;
        case DType::kBFloat16:
          ASSERT_EQ(got, BFloat16ToDouble(FloatToBFloat16(x))) << i;
          break;
        case DType::kInt32:
        case DType::kInt64:
          ASSERT_EQ(got, std::ldexp(x, 31)) << i;
          break;
        default:
          ASSERT_EQ(got, x) << i;
      }
    }
  }
  RandomSource half(4, 1, DType::kFloat16);
  std::vector<float> floats(4);
  EXPECT_EQ(half.Read(absl::MakeSpan(floats)).status().code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(half.Describe(), HasSubstr("4 float16 values uniform in [-1, 1)"));
}

}  // namespace
}  // namespace gpureduce::client
