#include "client/input/open_source.h"

#include <sys/stat.h>
#include <unistd.h>

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
using ::gpureduce::client::testing::PipeFeeder;
using ::gpureduce::client::testing::RandomFloats;
using ::gpureduce::client::testing::ReadAll;
using ::gpureduce::client::testing::TempPath;
using ::gpureduce::client::testing::WriteFile;
using ::gpureduce::testing::NpyDict;
using ::gpureduce::testing::NpyHeaderBytes;
using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::StartsWith;

absl::StatusOr<std::unique_ptr<FloatSource>> Open(const std::string& path,
                                                  const std::string& format = "auto") {
  SourceOptions options;
  options.path = path;
  options.format = format;
  return OpenSource(options);
}

// Describe() ends with the kind of source chosen, e.g. "x.bin (raw little-endian float32, ...)".
std::string KindOf(const std::string& path, const std::string& format = "auto") {
  auto source = Open(path, format);
  if (!source.ok()) return std::string(source.status().message());
  return (*source)->Describe().substr(path.size() + 2, 4);
}

TEST(OpenSourceTest, AutoDetectsByMagicThenExtension) {
  const std::vector<float> values = RandomFloats(12, 1);
  const std::string npy = NpyHeaderBytes(1, NpyDict("<f4", "(12,)")) + FloatBytes(values);
  for (const std::string name : {"a.npy", "a.dat", "a.bin", "a"}) {
    const std::string path = TempPath(name);
    WriteFile(path, npy);
    EXPECT_EQ(KindOf(path), "npy ") << name;  // The magic wins over the extension.
  }
  for (const std::string name : {"a.raw", "a.bin", "a.f32", "A.F32"}) {
    const std::string path = TempPath(name);
    WriteFile(path, FloatBytes(values));
    EXPECT_EQ(KindOf(path), "raw ") << name;
  }
  for (const std::string name : {"a.txt", "a.csv", "a.tsv", "a.CSV"}) {
    const std::string path = TempPath(name);
    WriteFile(path, "1,2\n3");
    EXPECT_EQ(KindOf(path), "text") << name;
    auto source = Open(path);
    EXPECT_EQ(ReadAll(**source, 10)->size(), 3u);
  }
}

TEST(OpenSourceTest, ExplicitFormatOverridesDetection) {
  const std::string path = TempPath("values.dat");
  WriteFile(path, FloatBytes(RandomFloats(8, 2)));
  EXPECT_EQ(KindOf(path, "raw"), "raw ");
  EXPECT_THAT(KindOf(path, "npy"), HasSubstr("not an NPY file"));
  const std::string text = TempPath("values.bin");
  WriteFile(text, "1 2 3\n");
  EXPECT_EQ(KindOf(text, "text"), "text");
}

TEST(OpenSourceTest, DetectionErrors) {
  const std::string unknown = TempPath("values.dat");
  WriteFile(unknown, "1 2 3\n");
  auto source = Open(unknown);
  ASSERT_FALSE(source.ok());
  EXPECT_EQ(source.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(source.status().message(), AllOf(HasSubstr(unknown), HasSubstr("--format")));

  const std::string fake = TempPath("fake.npy");
  WriteFile(fake, "1 2 3\n");
  EXPECT_THAT(Open(fake).status().message(), HasSubstr("not an NPY file"));

  EXPECT_THAT(Open(fake, "csv").status().message(), HasSubstr("unknown input format 'csv'"));

  const std::string missing = TempPath("missing.npy");
  source = Open(missing);
  EXPECT_EQ(source.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(source.status().message(),
              AllOf(HasSubstr(missing), HasSubstr("No such file or directory")));

  const std::string dir = TempPath("dir.npy");
  ASSERT_EQ(::mkdir(dir.c_str(), 0700), 0);
  EXPECT_THAT(Open(dir).status().message(), HasSubstr("is a directory"));
  ::rmdir(dir.c_str());
}

TEST(OpenSourceTest, RandomInput) {
  SourceOptions options;
  options.random_count = 1000;
  options.random_seed = 3;
  auto source = OpenSource(options);
  ASSERT_TRUE(source.ok());
  EXPECT_EQ((*source)->total_count(), 1000u);
  EXPECT_THAT((*source)->Describe(), StartsWith("random (1000 floats"));

  options = SourceOptions();
  options.random = true;
  source = OpenSource(options);
  ASSERT_TRUE(source.ok());
  EXPECT_EQ((*source)->total_count(), 0u);

  options.path = "data.npy";
  EXPECT_THAT(OpenSource(options).status().message(), HasSubstr("not both"));
  EXPECT_THAT(OpenSource(SourceOptions()).status().message(), HasSubstr("no input"));
}

// Swaps a pipe in as file descriptor 0 for the lifetime of the object.
class FakeStdin {
 public:
  explicit FakeStdin(std::string data) : feeder_(std::move(data)) {
    saved_ = ::dup(STDIN_FILENO);
    ::dup2(feeder_.read_fd(), STDIN_FILENO);
    ::close(feeder_.read_fd());
  }
  ~FakeStdin() {
    ::dup2(saved_, STDIN_FILENO);  // Closes the pipe, so the writer can finish.
    ::close(saved_);
  }

 private:
  PipeFeeder feeder_;
  int saved_;
};

TEST(OpenSourceTest, StdinIsTextOrNpyByMagicOrRawOnRequest) {
  const std::vector<float> values = RandomFloats(1000, 4);
  {
    FakeStdin in("1 2\n# c\n3\n");
    auto source = Open("-");
    ASSERT_TRUE(source.ok()) << source.status();
    EXPECT_EQ((*source)->Describe(), "<stdin> (text)");
    EXPECT_EQ(ReadAll(**source, 2)->size(), 3u);
  }
  {
    FakeStdin in(NpyHeaderBytes(3, NpyDict("<f4", "(10, 100)")) + FloatBytes(values));
    auto source = Open("-");
    ASSERT_TRUE(source.ok()) << source.status();
    EXPECT_EQ((*source)->total_count(), 1000u);
    EXPECT_TRUE(Bits(*ReadAll(**source, 333)) == Bits(values));
  }
  {
    FakeStdin in(FloatBytes(values));
    auto source = Open("-", "raw");
    ASSERT_TRUE(source.ok()) << source.status();
    EXPECT_TRUE(Bits(*ReadAll(**source, 333)) == Bits(values));
  }
}

}  // namespace
}  // namespace gpureduce::client
