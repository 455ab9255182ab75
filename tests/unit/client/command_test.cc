// The gpureduce CLI's shared flags: --json as every subcommand reads it, and reduce's
// --shared-memory kinds, refused before anything connects.

#include "client/cli/command.h"

#include <string>
#include <vector>

#include "client/cli/reduce_command.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace gpureduce::cli {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(ConnectionFlagsTest, JsonIsStdoutBareAndAFileWithAName) {
  ConnectionOptions options;
  FlagSet flags("gpureduce reduce", "gpureduce reduce [flags] [FILE|-]", "");
  AddConnectionFlags(flags, &options);
  ASSERT_TRUE(flags.Parse({"--json", "data.npy"}).ok());
  EXPECT_TRUE(options.json.on_stdout());
  EXPECT_THAT(flags.positional(), ElementsAre("data.npy")) << "the input stays the input";
  ASSERT_TRUE(flags.Parse({"--json", "-"}).ok());
  EXPECT_THAT(flags.positional(), ElementsAre("-")) << "stdin stays the input";

  ConnectionOptions to_file;
  FlagSet file_flags("gpureduce info", "gpureduce info [flags]", "");
  AddConnectionFlags(file_flags, &to_file);
  ASSERT_TRUE(file_flags.Parse({"--json=info.json"}).ok());
  EXPECT_FALSE(to_file.json.on_stdout());
  EXPECT_EQ(to_file.json.destination(), "info.json");
}

int Reduce(std::vector<std::string> args, std::string* err) {
  args.insert(args.begin(), {"gpureduce", "reduce"});
  std::vector<char*> argv;
  for (std::string& arg : args) argv.push_back(arg.data());
  ::testing::internal::CaptureStderr();
  const int exit = RunReduce(static_cast<int>(argv.size()), argv.data());
  *err = ::testing::internal::GetCapturedStderr();
  return exit;
}

TEST(ReduceFlagsTest, SharedMemoryTakesTheDeclaredKindsOnly) {
  std::string err;
  EXPECT_EQ(Reduce({"--shared-memory=posix", "--random=10"}, &err), kExitUsage);
  EXPECT_THAT(err, HasSubstr("{system|cuda}"));
  EXPECT_EQ(Reduce({"--shared-memory=cuda", "--random=10"}, &err), kExitUsage);
  EXPECT_THAT(err, HasSubstr("gpureduce-load --shared-memory=cuda"));
  EXPECT_EQ(Reduce({"--shared-memory", "--streams=2", "--random=10"}, &err), kExitUsage);
  EXPECT_THAT(err, HasSubstr("--streams and --shared-memory exclude each other"))
      << "a bare --shared-memory is system";
}

}  // namespace
}  // namespace gpureduce::cli
