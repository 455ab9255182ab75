// gpureduce-load's --json and --shared-memory, parsed as the tool parses them.

#include "client/load/load_flags.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace gpureduce::client {
namespace {

using ::testing::HasSubstr;

struct Parsed {
  absl::Status status;
  OutputFlags out;
};

Parsed Parse(std::vector<std::string> args) {
  Parsed parsed;
  LoadOptions load;
  WorkloadOptions work;
  std::string op;
  FlagSet flags("gpureduce-load", "gpureduce-load [flags]", "");
  RegisterLoadFlags(flags, &load, &work, &op, &parsed.out);
  parsed.status = flags.Parse(args);
  return parsed;
}

TEST(LoadFlagsTest, JsonGoesToStdoutBareOrAsDashAndToAFileWithAName) {
  EXPECT_FALSE(Parse({}).out.json.requested());
  EXPECT_TRUE(Parse({"--json"}).out.json.on_stdout());
  EXPECT_TRUE(Parse({"--json=-"}).out.json.on_stdout()) << "tests/deploy/run.sh's spelling";
  const Parsed file = Parse({"--json=runs/a.json", "--floats=1000"});
  ASSERT_TRUE(file.status.ok());
  EXPECT_EQ(file.out.json.destination(), "runs/a.json");
  EXPECT_FALSE(file.out.json.on_stdout());
  // The older spellings: the tool takes no operands, so the argument after a bare --json is its.
  EXPECT_EQ(Parse({"--json", "runs/b.json"}).out.json.destination(), "runs/b.json");
  EXPECT_TRUE(Parse({"--json", "-"}).out.json.on_stdout());
}

TEST(LoadFlagsTest, SharedMemoryIsADeclaredKindDefaultingToSystem) {
  EXPECT_EQ(Parse({}).out.shared_memory, "");
  EXPECT_EQ(Parse({"--shared-memory"}).out.shared_memory, "system");
  EXPECT_EQ(Parse({"--shared-memory=cuda"}).out.shared_memory, "cuda");
  EXPECT_EQ(Parse({"--shared-memory", "cuda"}).out.shared_memory, "cuda")
      << "docs/shared-memory.md's spelling";
  const Parsed wrong = Parse({"--shared-memory=posix"});
  EXPECT_FALSE(wrong.status.ok());
  EXPECT_THAT(wrong.status.message(), HasSubstr("--shared-memory"));
}

}  // namespace
}  // namespace gpureduce::client
