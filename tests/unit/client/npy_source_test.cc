#include "client/input/npy_source.h"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <ostream>
#include <string>
#include <tuple>
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
using ::gpureduce::testing::NpyDict;
using ::gpureduce::testing::NpyHeaderBytes;
using ::testing::AllOf;
using ::testing::HasSubstr;

absl::StatusOr<std::unique_ptr<NpySource>> OpenNpy(const std::string& path) {
  absl::StatusOr<std::unique_ptr<ByteReader>> reader = ByteReader::OpenFile(path);
  if (!reader.ok()) return reader.status();
  return NpySource::Open(std::move(*reader));
}

struct Layout {
  std::string shape_text;
  std::vector<uint64_t> shape;
};
void PrintTo(const Layout& layout, std::ostream* os) { *os << layout.shape_text; }

// (major version, descr, layout)
class NpyRoundTripTest : public ::testing::TestWithParam<std::tuple<int, std::string, Layout>> {};

TEST_P(NpyRoundTripTest, EveryValueBitExactInAwkwardChunks) {
  const auto& [major, descr, layout] = GetParam();
  uint64_t count = 1;
  for (uint64_t dim : layout.shape) count *= dim;
  const uint64_t seed = FreshSeed();
  SCOPED_TRACE(absl::StrCat("seed ", seed));
  const std::vector<float> values = RandomFloats(count, seed);
  const std::string path = TempPath("data.npy");
  WriteFile(path, NpyHeaderBytes(major, NpyDict(descr, layout.shape_text)) +
                      FloatBytes(values, /*big_endian=*/descr[0] == '>'));

  for (size_t chunk : {size_t{1}, size_t{7}, size_t{4096}, size_t{count + 5}}) {
    SCOPED_TRACE(absl::StrCat("chunk ", chunk));
    auto source = OpenNpy(path);
    ASSERT_TRUE(source.ok()) << source.status();
    EXPECT_EQ((*source)->total_count(), count);
    EXPECT_EQ((*source)->header().shape, layout.shape);
    EXPECT_EQ((*source)->header().major_version, major);
    EXPECT_EQ((*source)->header().big_endian, descr[0] == '>');
    auto read = ReadAll(**source, chunk);
    ASSERT_TRUE(read.ok()) << read.status();
    ASSERT_EQ(read->size(), values.size());
    EXPECT_TRUE(Bits(*read) == Bits(values)) << "values differ";
  }
}

std::string ParamName(const ::testing::TestParamInfo<NpyRoundTripTest::ParamType>& info) {
  const auto& [major, descr, layout] = info.param;
  std::string name = absl::StrCat("v", major,
                                  descr[0] == '<'   ? "_le"
                                  : descr[0] == '>' ? "_be"
                                                    : "_native",
                                  "_shape");
  for (uint64_t dim : layout.shape) absl::StrAppend(&name, "_", dim);
  return name;
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, NpyRoundTripTest,
    ::testing::Combine(::testing::Values(1, 2, 3), ::testing::Values("<f4", ">f4", "=f4"),
                       ::testing::Values(Layout{"(1,)", {1}}, Layout{"(2,)", {2}},
                                         Layout{"(31,)", {31}}, Layout{"(1000003,)", {1000003}},
                                         Layout{"(7, 13)", {7, 13}}, Layout{"(3, 1, 5)", {3, 1, 5}},
                                         Layout{"()", {}}, Layout{"(0,)", {0}},
                                         Layout{"(4, 0)", {4, 0}})),
    ParamName);

// A file over 4 GiB (sparse, so it costs no disk) streams through in fixed memory, and the
// 64-bit size arithmetic holds.
TEST(NpySourceTest, FourGiBFileStreamsInFixedMemory) {
  constexpr uint64_t kCount = (uint64_t{1} << 30) + 3;
  const std::string path = TempPath("big.npy");
  const std::string header = NpyHeaderBytes(1, NpyDict("<f4", absl::StrCat("(", kCount, ",)")));
  WriteFile(path, header);
  ASSERT_EQ(::truncate(path.c_str(), static_cast<off_t>(header.size() + kCount * 4)), 0);
  struct rusage before;
  ::getrusage(RUSAGE_SELF, &before);
  auto source = OpenNpy(path);
  ASSERT_TRUE(source.ok()) << source.status();
  EXPECT_EQ((*source)->total_count(), kCount);
  std::vector<float> buffer(1 << 20);
  uint64_t total = 0;
  uint64_t nonzero = 0;
  while (true) {
    auto got = (*source)->Read(absl::MakeSpan(buffer));
    ASSERT_TRUE(got.ok()) << got.status();
    if (*got == 0) break;
    total += *got;
    nonzero += static_cast<uint64_t>(std::count_if(buffer.begin(),
                                                   buffer.begin() + static_cast<ptrdiff_t>(*got),
                                                   [](float v) { return v != 0; }));
  }
  EXPECT_EQ(total, kCount);
  EXPECT_EQ(nonzero, 0u);
  struct rusage after;
  ::getrusage(RUSAGE_SELF, &after);
  EXPECT_LT(after.ru_maxrss - before.ru_maxrss, 64 * 1024) << "peak RSS grew (KiB)";
  ::unlink(path.c_str());
}

TEST(NpySourceTest, DescribeAndFortranOrder) {
  const std::string path = TempPath("m.npy");
  WriteFile(path, NpyHeaderBytes(1, NpyDict("<f4", "(3, 4)", /*fortran_order=*/true)) +
                      FloatBytes(RandomFloats(12, 1)));
  auto source = OpenNpy(path);
  ASSERT_TRUE(source.ok()) << source.status();
  EXPECT_TRUE((*source)->header().fortran_order);
  EXPECT_EQ((*source)->Describe(),
            absl::StrCat(path, " (npy v1.0 <f4 fortran_order, shape (3, 4), 12 floats)"));
}

TEST(NpySourceTest, TruncatedDataNamesTheNumbers) {
  const std::string path = TempPath("t.npy");
  const std::string header = NpyHeaderBytes(1, NpyDict("<f4", "(1000,)"));
  ASSERT_EQ(header.size(), 128u);
  WriteFile(path, header + FloatBytes(RandomFloats(999, 2)) + "ab");
  auto source = OpenNpy(path);
  ASSERT_FALSE(source.ok());
  EXPECT_EQ(source.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(source.status().message(),
              AllOf(HasSubstr(path), HasSubstr("truncated"), HasSubstr("(1000,)"),
                    HasSubstr("4000 bytes"), HasSubstr("3998 bytes"), HasSubstr("128 bytes")));
}

TEST(NpySourceTest, TrailingBytesAreRejected) {
  const std::string path = TempPath("x.npy");
  WriteFile(path,
            NpyHeaderBytes(2, NpyDict("<f4", "(10,)")) + FloatBytes(RandomFloats(10, 3)) + "junk");
  auto source = OpenNpy(path);
  ASSERT_FALSE(source.ok());
  EXPECT_THAT(source.status().message(),
              AllOf(HasSubstr("4 unexpected trailing bytes"), HasSubstr("40 bytes")));
}

TEST(NpySourceTest, OtherDtypesAreRejectedByName) {
  for (const auto& [descr, name] :
       std::vector<std::pair<std::string, std::string>>{{"<u4", "uint32"},
                                                        {"<i1", "int8"},
                                                        {"<f16", "float128"},
                                                        {"|u1", "uint8"},
                                                        {"|b1", "bool"},
                                                        {"<c8", "complex64"},
                                                        {">u8", "uint64"}}) {
    SCOPED_TRACE(descr);
    const std::string path = TempPath("d.npy");
    WriteFile(path, NpyHeaderBytes(1, NpyDict(descr, "(2,)")) + std::string(64, '\0'));
    auto source = OpenNpy(path);
    ASSERT_FALSE(source.ok());
    EXPECT_EQ(source.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_EQ(source.status().message(),
              absl::StrCat(path, " holds ", descr, " (", name,
                           "); gpureduce reduces float32 (<f4), float16 (<f2), float64 (<f8), "
                           "int32 (<i4), int64 (<i8), and bfloat16 stored as uint16 or int16 "
                           "(<u2, <i2) with --dtype bfloat16: convert with "
                           "arr.astype(np.float32)"));
  }
}

TEST(NpySourceTest, StructuredAndOrderlessDtypesAreRejected) {
  const std::string path = TempPath("s.npy");
  WriteFile(path, NpyHeaderBytes(1,
                                 "{'descr': [('a', '<f4'), ('b', '<i4')], 'fortran_order': "
                                 "False, 'shape': (2,), }") +
                      std::string(16, '\0'));
  EXPECT_THAT(OpenNpy(path).status().message(), HasSubstr("structured dtype"));
  WriteFile(path, NpyHeaderBytes(1, NpyDict("|f4", "(2,)")) + std::string(8, '\0'));
  EXPECT_THAT(OpenNpy(path).status().message(), HasSubstr("'|f4'"));
}

TEST(NpySourceTest, BadMagicVersionAndHeaders) {
  const std::string path = TempPath("b.npy");
  WriteFile(path, "hello world, not numpy");
  EXPECT_THAT(OpenNpy(path).status().message(),
              AllOf(HasSubstr("not an NPY file"), HasSubstr("hello ")));
  WriteFile(path, "");
  EXPECT_THAT(OpenNpy(path).status().message(), HasSubstr("not an NPY file"));

  std::string v4 = NpyHeaderBytes(2, NpyDict("<f4", "(1,)")) + std::string(4, '\0');
  v4[6] = 4;
  WriteFile(path, v4);
  EXPECT_THAT(OpenNpy(path).status().message(), HasSubstr("version 4.0"));

  WriteFile(path, NpyHeaderBytes(1, NpyDict("<f4", "(1,)")).substr(0, 40));
  EXPECT_THAT(OpenNpy(path).status().message(), HasSubstr("truncated inside its NPY header"));

  for (const std::string dict :
       {"{'descr': '<f4', 'fortran_order': False}",
        "{'descr': '<f4', 'fortran_order': False, "
        "'shape': (1,), 'extra': 1}",
        "{'descr': '<f4', 'fortran_order': False, 'shape': [1]}",
        "{'descr': '<f4', 'fortran_order': False, 'shape': (-1,)}",
        "{'descr': '<f4', 'fortran_order': 0, 'shape': (1,)}", "{'descr': '<f4'",
        "{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999, 99999999999)}"}) {
    SCOPED_TRACE(dict);
    WriteFile(path, NpyHeaderBytes(1, dict) + std::string(4, '\0'));
    auto source = OpenNpy(path);
    ASSERT_FALSE(source.ok());
    EXPECT_THAT(source.status().message(), HasSubstr("malformed NPY header"));
  }
}

TEST(NpyHeaderTest, ParsesNumpyVariants) {
  NpyHeader header;
  ASSERT_TRUE(
      ParseNpyHeaderDict("{\"shape\": (3L, 4L), \"fortran_order\": False, \"descr\": \">f4\"}  \n",
                         "x", header)
          .ok());
  EXPECT_EQ(header.shape, (std::vector<uint64_t>{3, 4}));
  EXPECT_EQ(header.count, 12u);
  EXPECT_TRUE(header.big_endian);
  ASSERT_TRUE(
      ParseNpyHeaderDict("{'descr':'<f4','fortran_order':True,'shape':(5,)}", "x", header).ok());
  EXPECT_EQ(header.count, 5u);
  EXPECT_FALSE(header.big_endian);
  EXPECT_EQ(FormatNpyShape({}), "()");
  EXPECT_EQ(FormatNpyShape({5}), "(5,)");
  EXPECT_EQ(FormatNpyShape({3, 4}), "(3, 4)");
}

// Standard input: the size is unknown, so truncation and trailing bytes show up while reading.
TEST(NpySourceTest, StreamsFromAPipe) {
  const std::vector<float> values = RandomFloats(100000, FreshSeed());
  const std::string header = NpyHeaderBytes(1, NpyDict(">f4", "(100000,)"));
  {
    PipeFeeder feeder(header + FloatBytes(values, /*big_endian=*/true));
    auto source = NpySource::Open(ByteReader::FromDescriptor(feeder.read_fd(), "<stdin>", true));
    ASSERT_TRUE(source.ok()) << source.status();
    EXPECT_EQ((*source)->total_count(), 100000u);
    auto read = ReadAll(**source, 777);
    ASSERT_TRUE(read.ok()) << read.status();
    EXPECT_TRUE(Bits(*read) == Bits(values));
  }
  {
    PipeFeeder feeder(header + FloatBytes(values, true).substr(0, 399990));
    auto source = NpySource::Open(ByteReader::FromDescriptor(feeder.read_fd(), "<stdin>", true));
    ASSERT_TRUE(source.ok());
    EXPECT_THAT(ReadAll(**source, 4096).status().message(),
                AllOf(HasSubstr("truncated"), HasSubstr("after 99997 values and a partial one")));
  }
  {
    PipeFeeder feeder(header + FloatBytes(values, true) + "x");
    auto source = NpySource::Open(ByteReader::FromDescriptor(feeder.read_fd(), "<stdin>", true));
    ASSERT_TRUE(source.ok());
    EXPECT_THAT(ReadAll(**source, 4096).status().message(), HasSubstr("unexpected bytes after"));
  }
}

// Found by npy_header_fuzzer: an empty array's data ends where its header does, so from a pipe,
// as from a file, bytes after the header are an error (Read used to return 0 without looking).
TEST(NpySourceTest, EmptyArrayFromAPipeRejectsTrailingBytes) {
  for (const char* shape : {"(0,)", "(0, 3)"}) {
    SCOPED_TRACE(shape);
    const std::string header = NpyHeaderBytes(1, NpyDict("<f4", shape));
    {
      PipeFeeder feeder(header);
      auto source = NpySource::Open(ByteReader::FromDescriptor(feeder.read_fd(), "<stdin>", true));
      ASSERT_TRUE(source.ok()) << source.status();
      auto read = ReadAll(**source, 16);
      ASSERT_TRUE(read.ok()) << read.status();
      EXPECT_TRUE(read->empty());
    }
    {
      PipeFeeder feeder(header + FloatBytes({1.5f, -2.0f}));
      auto source = NpySource::Open(ByteReader::FromDescriptor(feeder.read_fd(), "<stdin>", true));
      ASSERT_TRUE(source.ok()) << source.status();
      EXPECT_THAT(ReadAll(**source, 16).status().message(),
                  HasSubstr("unexpected bytes after the 0 float32 values"));
    }
  }
}

}  // namespace
}  // namespace gpureduce::client
