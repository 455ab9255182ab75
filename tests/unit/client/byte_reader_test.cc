#include "client/input/byte_reader.h"

#include <sys/stat.h>

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/client/input_test_util.h"

namespace gpureduce::client {
namespace {

using ::gpureduce::client::testing::PipeFeeder;
using ::gpureduce::client::testing::TempPath;
using ::gpureduce::client::testing::WriteFile;
using ::testing::HasSubstr;

std::string Pattern(size_t n) {
  std::string s(n, '\0');
  for (size_t i = 0; i < n; ++i) s[i] = static_cast<char>((i * 131 + 7) % 251);
  return s;
}

TEST(ByteReaderTest, ReadsAcrossBufferBoundariesInAnyRequestSize) {
  const std::string data = Pattern(1000);
  const std::string path = TempPath("data");
  WriteFile(path, data);
  for (size_t request : {1, 3, 15, 16, 17, 64, 999, 1000, 5000}) {
    SCOPED_TRACE(request);
    auto reader = ByteReader::OpenFile(path, /*buffer_size=*/16);
    ASSERT_TRUE(reader.ok()) << reader.status();
    EXPECT_EQ((*reader)->size(), 1000u);
    std::string got;
    std::string buffer(request, '\0');
    while (true) {
      auto n = (*reader)->Read(absl::MakeSpan(buffer));
      ASSERT_TRUE(n.ok()) << n.status();
      got.append(buffer, 0, *n);
      if (*n < request) break;  // Short only at the end.
    }
    EXPECT_EQ(got, data);
    EXPECT_EQ((*reader)->position(), 1000u);
  }
}

TEST(ByteReaderTest, PeekDoesNotConsumeAndChunksCoverEverything) {
  const std::string data = Pattern(100);
  const std::string path = TempPath("data");
  WriteFile(path, data);
  auto reader = ByteReader::OpenFile(path, /*buffer_size=*/16);
  ASSERT_TRUE(reader.ok());
  char first[5];
  ASSERT_EQ(*(*reader)->Read(absl::MakeSpan(first)), 5u);
  auto peek = (*reader)->Peek(14);  // Needs a refill that keeps the unconsumed bytes.
  ASSERT_TRUE(peek.ok());
  EXPECT_EQ(std::string(*peek), data.substr(5, 14));
  std::string rest;
  while (true) {
    auto chunk = (*reader)->ReadChunk();
    ASSERT_TRUE(chunk.ok());
    if (chunk->empty()) break;
    EXPECT_LE(chunk->size(), 16u);
    rest.append(chunk->data(), chunk->size());
  }
  EXPECT_EQ(rest, data.substr(5));
  EXPECT_TRUE((*reader)->Peek(4)->empty());
}

TEST(ByteReaderTest, PipeHasNoSizeAndDeliversEverything) {
  const std::string data = Pattern(300000);  // Larger than a pipe's kernel buffer.
  PipeFeeder feeder(data);
  auto reader = ByteReader::FromDescriptor(feeder.read_fd(), "pipe", /*take_ownership=*/true, 4096);
  EXPECT_FALSE(reader->size().has_value());
  EXPECT_EQ(reader->name(), "pipe");
  std::string got(data.size() + 10, '\0');
  auto n = reader->Read(absl::MakeSpan(got));
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(*n, data.size());
  got.resize(*n);
  EXPECT_EQ(got, data);
  reader.reset();
}

TEST(ByteReaderTest, MissingFileIsNotFoundWithPathAndReason) {
  const std::string path = TempPath("does_not_exist");
  auto reader = ByteReader::OpenFile(path);
  ASSERT_FALSE(reader.ok());
  EXPECT_EQ(reader.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(reader.status().message(), HasSubstr(path));
  EXPECT_THAT(reader.status().message(), HasSubstr("No such file or directory"));
}

TEST(ByteReaderTest, DirectoryIsRejected) {
  const std::string path = TempPath("dir");
  ASSERT_EQ(::mkdir(path.c_str(), 0700), 0);
  auto reader = ByteReader::OpenFile(path);
  ASSERT_FALSE(reader.ok());
  EXPECT_EQ(reader.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(reader.status().message(), HasSubstr("is a directory"));
  ::rmdir(path.c_str());
}

TEST(ByteReaderTest, EmptyFile) {
  const std::string path = TempPath("empty");
  WriteFile(path, "");
  auto reader = ByteReader::OpenFile(path);
  ASSERT_TRUE(reader.ok());
  EXPECT_EQ((*reader)->size(), 0u);
  char buffer[4];
  EXPECT_EQ(*(*reader)->Read(absl::MakeSpan(buffer)), 0u);
  EXPECT_TRUE((*reader)->ReadChunk()->empty());
}

}  // namespace
}  // namespace gpureduce::client
