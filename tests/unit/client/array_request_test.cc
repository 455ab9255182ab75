// `gpureduce reduce --shape/--axis/--keepdims/--segments`: parsed, resolved against the input (a
// .npy file's own shape, the element count) and refused in the flags' words, as the CLI does it.

#include "client/cli/array_request.h"

#include <memory>
#include <string>
#include <vector>

#include "client/array_layout.h"
#include "client/cli/reduce_flags.h"
#include "client/cli/reduce_request.h"
#include "client/input/open_source.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/client/input_test_util.h"

namespace gpureduce::cli {
namespace {

using ::gpureduce::client::testing::TempPath;
using ::gpureduce::client::testing::WriteFile;
using ::gpureduce::testing::NpyDict;
using ::gpureduce::testing::NpyHeaderBytes;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

// The reduce command's flags parsed from `args`, then the array flags parsed from those.
absl::StatusOr<ArrayRequest> Parse(const std::vector<std::string>& args) {
  ReduceFlags f;
  FlagSet flags("gpureduce reduce", "gpureduce reduce [flags]", "");
  RegisterReduceFlags(flags, &f);
  if (absl::Status parsed = flags.Parse(args); !parsed.ok()) return parsed;
  return ParseArrayFlags(f.array);
}

std::unique_ptr<client::FloatSource> Random(uint64_t count) {
  client::SourceOptions options;
  options.random = true;
  options.random_count = count;
  return *client::OpenSource(options);
}

std::unique_ptr<client::FloatSource> Npy(const std::string& name, const std::string& shape,
                                         uint64_t count, bool fortran = false) {
  const std::string path = TempPath(name);
  WriteFile(path, NpyHeaderBytes(1, NpyDict("<f4", shape, fortran)) +
                      std::string(count * sizeof(float), '\0'));
  client::SourceOptions options;
  options.path = path;
  return *client::OpenSource(options);
}

absl::StatusOr<client::ArrayLayout> Resolve(const std::vector<std::string>& args,
                                            const client::FloatSource& source,
                                            std::vector<v1::Op> ops = {v1::SUM}) {
  absl::StatusOr<ArrayRequest> request = Parse(args);
  if (!request.ok()) return request.status();
  return ResolveArrayLayout(*request, source, ops);
}

TEST(ArrayFlagsTest, NoneOfThemIsAFullReduction) {
  absl::StatusOr<ArrayRequest> request = Parse({"--op=sum"});
  ASSERT_TRUE(request.ok()) << request.status();
  EXPECT_FALSE(request->wanted());
  absl::StatusOr<client::ArrayLayout> layout = ResolveArrayLayout(*request, *Random(10), {v1::SUM});
  ASSERT_TRUE(layout.ok());
  EXPECT_FALSE(layout->array());
  EXPECT_EQ(client::DescribeLayout(*layout), "");
}

TEST(ArrayFlagsTest, ShapeAxesAndKeepdimsParse) {
  absl::StatusOr<ArrayRequest> request =
      Parse({"--shape=31,1000003", "--axis", "0,-1", "--keepdims"});
  ASSERT_TRUE(request.ok()) << request.status();
  EXPECT_TRUE(request->wanted());
  EXPECT_THAT(*request->shape, ElementsAre(31, 1000003));
  EXPECT_THAT(request->axes, ElementsAre(0, -1));
  EXPECT_TRUE(request->keepdims);
  // Python's spelling of a tuple, and spaces, are taken too.
  EXPECT_THAT(*Parse({"--shape=(7, 13, 11)"})->shape, ElementsAre(7, 13, 11));
  EXPECT_THAT(Parse({"--axis= 2 , -3"})->axes, ElementsAre(2, -3));
}

TEST(ArrayFlagsTest, SegmentsFromAListOrAFile) {
  EXPECT_THAT(Parse({"--segments=5,0,1000,17"})->segments, ElementsAre(5, 0, 1000, 17));
  const std::string path = TempPath("lengths.txt");
  WriteFile(path, "3 4\n0,\t9\n");
  EXPECT_THAT(Parse({"--segments=@" + path})->segments, ElementsAre(3, 4, 0, 9));
  absl::StatusOr<ArrayRequest> missing = Parse({"--segments=@" + path + ".none"});
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(missing.status().message(), HasSubstr("cannot read the --segments file"));
  const std::string bad = TempPath("bad.txt");
  WriteFile(bad, "3 four\n");
  EXPECT_THAT(Parse({"--segments=@" + bad}).status().message(),
              HasSubstr("--segments file " + bad + ": 'four' is not a length"));
}

TEST(ArrayFlagsTest, SyntaxErrorsNameTheFlagAndTheToken) {
  EXPECT_THAT(Parse({"--shape=3,x"}).status().message(), HasSubstr("--shape: 'x' is not a length"));
  EXPECT_THAT(Parse({"--shape=3,-4"}).status().message(),
              HasSubstr("--shape: '-4' is not a length"));
  EXPECT_THAT(Parse({"--shape=,"}).status().message(), HasSubstr("--shape is empty"));
  EXPECT_THAT(Parse({"--axis=1.5"}).status().message(), HasSubstr("--axis: '1.5' is not an axis"));
  EXPECT_THAT(Parse({"--axis=9999999999"}).status().message(), HasSubstr("is not an axis"));
  EXPECT_THAT(Parse({"--segments=1,+2"}).status().message(), HasSubstr("'+2' is not a length"));
}

TEST(ArrayFlagsTest, SegmentsExcludeShapeAxesAndKeepdims) {
  EXPECT_THAT(Parse({"--shape=3,4", "--segments=6,6"}).status().message(),
              HasSubstr("--shape and --segments exclude each other"));
  EXPECT_THAT(Parse({"--axis=0", "--segments=6,6"}).status().message(),
              HasSubstr("--axis and --segments exclude each other"));
  EXPECT_THAT(Parse({"--keepdims", "--segments=6,6"}).status().message(),
              HasSubstr("--keepdims and --segments exclude each other"));
}

TEST(ResolveArrayLayoutTest, ANpyFileGivesItsOwnShape) {
  const std::unique_ptr<client::FloatSource> npy = Npy("a.npy", "(7, 13, 11)", 7 * 13 * 11);
  absl::StatusOr<client::ArrayLayout> layout = Resolve({"--axis=0,2"}, *npy);
  ASSERT_TRUE(layout.ok()) << layout.status();
  EXPECT_THAT(layout->shape, ElementsAre(7, 13, 11));
  EXPECT_THAT(client::ResultShape(*layout), ElementsAre(13));
  EXPECT_EQ(client::DescribeLayout(*layout), "shape (7, 13, 11) along axes (0, 2)");
  layout = Resolve({"--keepdims"}, *npy);
  ASSERT_TRUE(layout.ok()) << layout.status();
  EXPECT_THAT(client::ResultShape(*layout), ElementsAre(1, 1, 1));
  EXPECT_EQ(client::DescribeLayout(*layout), "shape (7, 13, 11) along every axis, keepdims");
  // --shape reshapes it; the count must agree.
  layout = Resolve({"--shape=91,11", "--axis=-1", "--keepdims"}, *npy);
  ASSERT_TRUE(layout.ok()) << layout.status();
  EXPECT_THAT(client::ResultShape(*layout), ElementsAre(91, 1));
  EXPECT_THAT(Resolve({"--shape=90,11", "--axis=1"}, *npy).status().message(),
              HasSubstr("--shape (90, 11) holds 990 elements, but "));
  // Without --axis or --keepdims a 2-d file is reduced whole, as before.
  layout = Resolve({}, *npy);
  ASSERT_TRUE(layout.ok());
  EXPECT_FALSE(layout->array());
}

TEST(ResolveArrayLayoutTest, FortranOrderAndZeroDimensionalFilesAreRefused) {
  EXPECT_THAT(Resolve({"--axis=0"}, *Npy("f.npy", "(3, 4)", 12, true)).status().message(),
              HasSubstr("is in Fortran order"));
  // A 1-d Fortran-order file is stored as a C-order one.
  EXPECT_TRUE(Resolve({"--axis=0"}, *Npy("f1.npy", "(12,)", 12, true)).ok());
  EXPECT_THAT(Resolve({"--axis=0"}, *Npy("z.npy", "()", 1)).status().message(),
              HasSubstr("holds a 0-d array, which has no axes"));
  // --shape says how the stored elements are laid out: taken as given.
  EXPECT_TRUE(Resolve({"--shape=4,3", "--axis=0"}, *Npy("f2.npy", "(3, 4)", 12, true)).ok());
}

TEST(ResolveArrayLayoutTest, RawAndRandomInputsNeedAShape) {
  EXPECT_THAT(Resolve({"--axis=1"}, *Random(12)).status().message(),
              HasSubstr("--axis needs a shape: random (12 floats"));
  EXPECT_THAT(Resolve({"--keepdims"}, *Random(12)).status().message(),
              HasSubstr("--keepdims needs a shape"));
  absl::StatusOr<client::ArrayLayout> layout = Resolve({"--shape=3,4", "--axis=1"}, *Random(12));
  ASSERT_TRUE(layout.ok()) << layout.status();
  EXPECT_EQ(client::DescribeLayout(*layout), "shape (3, 4) along axis 1");
  // --shape alone reduces every axis into one element of shape ().
  layout = Resolve({"--shape=3,4"}, *Random(12));
  ASSERT_TRUE(layout.ok());
  EXPECT_TRUE(layout->array());
  EXPECT_TRUE(client::ResultShape(*layout).empty());
  EXPECT_EQ(client::OutputCount(*layout), uint64_t{1});
}

TEST(ResolveArrayLayoutTest, BadAxesAreRefusedAsNumPyWould) {
  const std::unique_ptr<client::FloatSource> source = Random(12);
  EXPECT_THAT(
      Resolve({"--shape=3,4", "--axis=2"}, *source).status().message(),
      HasSubstr("--axis 2 is out of bounds for an array of dimension 2 (shape (3, 4): its axes "
                "are -2..1)"));
  EXPECT_THAT(Resolve({"--shape=3,4", "--axis=-3"}, *source).status().message(),
              HasSubstr("--axis -3 is out of bounds"));
  EXPECT_THAT(Resolve({"--shape=3,4", "--axis=1,-1"}, *source).status().message(),
              HasSubstr("--axis names axis 1 twice (1 and -1)"));
  const std::unique_ptr<client::FloatSource> cube = Random(24);
  EXPECT_THAT(
      Resolve({"--shape=2,3,4", "--axis=0,1"}, *cube, {v1::SUM, v1::ARGMIN}).status().message(),
      HasSubstr("argmin reduces one axis or every axis"));
  // Every axis named is every axis: a flat index, as numpy.argmin(x) gives.
  EXPECT_TRUE(Resolve({"--shape=2,3,4", "--axis=0,1,2"}, *cube, {v1::ARGMAX}).ok());
  EXPECT_TRUE(Resolve({"--shape=2,3,4", "--axis=1"}, *cube, {v1::NANARGMAX}).ok());
}

TEST(ResolveArrayLayoutTest, SegmentsMustCoverTheInput) {
  const std::unique_ptr<client::FloatSource> source = Random(1022);
  absl::StatusOr<client::ArrayLayout> layout = Resolve({"--segments=5,0,1000,17"}, *source);
  ASSERT_TRUE(layout.ok()) << layout.status();
  EXPECT_THAT(client::ResultShape(*layout), ElementsAre(4));
  EXPECT_EQ(client::DescribeLayout(*layout), "4 segments");
  EXPECT_THAT(Resolve({"--segments=5,0,1000"}, *source).status().message(),
              HasSubstr("--segments add up to 1005 elements, but random (1022 floats"));
}

TEST(ResolveArrayLayoutTest, AnInputOfUnknownLengthIsLeftToTheServer) {
  client::ArrayLayout layout;
  layout.shape = {3, 5};
  EXPECT_TRUE(client::CheckArrayLayout(layout, {v1::SUM}, std::nullopt, "<stdin>").ok());
  EXPECT_THAT(client::CheckArrayLayout(layout, {v1::SUM}, 12, "<stdin>").message(),
              HasSubstr("holds 15 elements, but <stdin> holds 12"));
  layout.shape = {uint64_t{1} << 40, uint64_t{1} << 40};
  EXPECT_THAT(client::CheckArrayLayout(layout, {v1::SUM}, std::nullopt, "x").message(),
              HasSubstr("holds more than 2^64 elements"));
}

TEST(ArrayRequestSpecTest, EveryPathSendsTheLayoutInTheSpec) {
  RequestSettings settings;
  settings.ops = {v1::SUM, v1::ARGMAX};
  settings.layout.shape = {31, 7};
  settings.layout.axes = {-1};
  settings.layout.keepdims = true;
  v1::ReduceSpec spec = MakeReduceSpec(settings, 217);
  EXPECT_THAT(spec.shape(), ElementsAre(31, 7));
  EXPECT_THAT(spec.axes(), ElementsAre(-1));
  EXPECT_TRUE(spec.keepdims());
  EXPECT_EQ(spec.segments_size(), 0);
  EXPECT_EQ(spec.expected_count(), uint64_t{217});

  settings.layout = {};
  settings.layout.segments = {5, 0, 2};
  spec = MakeReduceSpec(settings, 7);
  EXPECT_THAT(spec.segments(), ElementsAre(5, 0, 2));
  EXPECT_EQ(spec.shape_size(), 0);
  // A full reduction's spec carries none of them, as every earlier client sent it.
  settings.layout = {};
  spec = MakeReduceSpec(settings, 7);
  EXPECT_EQ(spec.shape_size() + spec.axes_size() + spec.segments_size(), 0);
  EXPECT_FALSE(spec.keepdims());
}

TEST(ArrayRequestSpecTest, VerifyKeepsAnInputOfAtMostTwoGiB) {
  client::ArrayLayout layout;
  layout.segments = {1};
  EXPECT_TRUE(CheckArrayVerify(true, layout, uint64_t{1} << 29, DType::kFloat32).ok());
  EXPECT_THAT(CheckArrayVerify(true, layout, (uint64_t{1} << 29) + 1, DType::kFloat32).message(),
              HasSubstr("--verify of an array request keeps the input in memory"));
  EXPECT_TRUE(CheckArrayVerify(false, layout, uint64_t{1} << 40, DType::kFloat32).ok());
  EXPECT_TRUE(CheckArrayVerify(true, {}, uint64_t{1} << 40, DType::kFloat32).ok());
  EXPECT_TRUE(CheckArrayVerify(true, layout, std::nullopt, DType::kFloat32).ok());
}

}  // namespace
}  // namespace gpureduce::cli
