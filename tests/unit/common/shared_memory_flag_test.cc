// --shared-memory as every tool declares it (common/shared_memory_flag.h).

#include "common/shared_memory_flag.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace gpureduce {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

struct Parsed {
  absl::Status status;
  std::string kind;
  std::vector<std::string> operands;
};

Parsed Parse(std::vector<std::string> args) {
  Parsed out;
  FlagSet flags("tool", "tool [flags] [FILE]", "");
  AddSharedMemoryFlag(flags, &out.kind, "by reference");
  out.status = flags.Parse(args);
  out.operands = flags.positional();
  return out;
}

TEST(SharedMemoryFlagTest, TheKindsAreSystemAndCuda) {
  EXPECT_THAT(SharedMemoryKinds(), ElementsAre(kSharedMemorySystem, kSharedMemoryCuda));
  EXPECT_EQ(Parse({}).kind, "");
  EXPECT_EQ(Parse({"--shared-memory=system"}).kind, "system");
  EXPECT_EQ(Parse({"--shared-memory=cuda"}).kind, "cuda");
}

TEST(SharedMemoryFlagTest, BareItMeansSystemAndLeavesTheInputAnOperand) {
  const Parsed parsed = Parse({"--shared-memory", "data.npy"});
  ASSERT_TRUE(parsed.status.ok());
  EXPECT_EQ(parsed.kind, "system");
  EXPECT_THAT(parsed.operands, ElementsAre("data.npy"));
}

TEST(SharedMemoryFlagTest, AKindAfterASpaceIsTheFlagsValue) {
  const Parsed parsed = Parse({"--shared-memory", "cuda"});
  ASSERT_TRUE(parsed.status.ok());
  EXPECT_EQ(parsed.kind, "cuda");
  EXPECT_THAT(parsed.operands, IsEmpty());
}

TEST(SharedMemoryFlagTest, AnyOtherKindIsRefusedWithTheChoices) {
  const Parsed parsed = Parse({"--shared-memory=posix"});
  EXPECT_FALSE(parsed.status.ok());
  EXPECT_THAT(parsed.status.message(), HasSubstr("{system|cuda}"));
}

}  // namespace
}  // namespace gpureduce
