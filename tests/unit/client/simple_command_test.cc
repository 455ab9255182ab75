// The CLI's simple subcommands through RunSimpleCommand, with no server to answer: what each
// prints and returns when the flags are wrong, when nothing answers, and when a call answers.

#include "client/cli/simple_command.h"

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "client/cli/info_commands.h"
#include "client/cli/shared_memory_commands.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace gpureduce::cli {
namespace {

using ::testing::HasSubstr;

struct CliRun {
  int exit = -1;
  std::string out, err;
};

// Runs `command` as `gpureduce <args...>` would, capturing stdout and stderr.
template <typename Command>
CliRun RunCli(Command command, std::vector<std::string> args) {
  std::vector<char*> argv;
  args.insert(args.begin(), "gpureduce");
  for (std::string& arg : args) argv.push_back(arg.data());
  ::testing::internal::CaptureStdout();
  ::testing::internal::CaptureStderr();
  CliRun run;
  run.exit = command(static_cast<int>(argv.size()), argv.data());
  run.out = ::testing::internal::GetCapturedStdout();
  run.err = ::testing::internal::GetCapturedStderr();
  return run;
}

// Nothing listens on port 1 of the loopback: every call is UNAVAILABLE at once.
constexpr char kNoServer[] = "--target=127.0.0.1:1";

TEST(SimpleCommandTest, ANameOrAllIsCheckedBeforeAnythingConnects) {
  const CliRun run = RunCli(RunSharedMemory, {"shared-memory", "unregister", kNoServer});
  EXPECT_EQ(run.exit, kExitUsage);
  EXPECT_THAT(run.err, HasSubstr("gpureduce shared-memory unregister: give either"));
}

TEST(SimpleCommandTest, AServerThatDoesNotAnswerIsAReportedRefusal) {
  const CliRun info = RunCli(RunInfo, {"info", kNoServer, "--timeout=5s"});
  EXPECT_EQ(info.exit, kExitServerRefused);
  EXPECT_THAT(info.err, HasSubstr("gpureduce info: the server refused: UNAVAILABLE"));
  EXPECT_EQ(info.out, "");
  const CliRun kernels = RunCli(RunKernels, {"kernels", kNoServer, "--json", "--timeout=5s"});
  EXPECT_EQ(kernels.exit, kExitServerRefused);
  EXPECT_EQ(kernels.out, "") << "no JSON for an answer that did not come";
}

TEST(SimpleCommandTest, UnknownFlagsAreUsageErrors) {
  const CliRun run = RunCli(RunHealth, {"health", "--jsn"});
  EXPECT_EQ(run.exit, kExitUsage);
  EXPECT_THAT(run.err, HasSubstr("did you mean --json?"));
}

std::string ReadAll(const std::string& path) {
  std::ifstream file(path);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

TEST(PrintAnswerTest, JsonTakesStdoutBareAndAFileBesideTheTextWithAName) {
  ConnectionOptions bare;
  FlagSet flags("gpureduce reduce", "", "");
  AddConnectionFlags(flags, &bare);
  ASSERT_TRUE(flags.Parse({"--json"}).ok());
  ::testing::internal::CaptureStdout();
  EXPECT_EQ(PrintAnswer("reduce", bare, "sum = 1\n", "{\"value\":1}\n"), kExitOk);
  EXPECT_EQ(::testing::internal::GetCapturedStdout(), "{\"value\":1}\n");

  const std::string path = ::testing::TempDir() + "simple_command_test.json";
  ConnectionOptions to_file;
  FlagSet file_flags("gpureduce reduce", "", "");
  AddConnectionFlags(file_flags, &to_file);
  ASSERT_TRUE(file_flags.Parse({"--json=" + path}).ok());
  ::testing::internal::CaptureStdout();
  EXPECT_EQ(PrintAnswer("reduce", to_file, "sum = 1\n", "{\"value\":1}\n"), kExitOk);
  EXPECT_EQ(PrintAnswer("reduce", to_file, "max = 2\n", "{\"value\":2}\n"), kExitOk);
  EXPECT_EQ(::testing::internal::GetCapturedStdout(), "sum = 1\nmax = 2\n");
  EXPECT_EQ(ReadAll(path), "{\"value\":1}\n{\"value\":2}\n") << "one line per op";
  std::remove(path.c_str());

  ConnectionOptions unwritable;
  FlagSet bad_flags("gpureduce reduce", "", "");
  AddConnectionFlags(bad_flags, &unwritable);
  ASSERT_TRUE(bad_flags.Parse({"--json=/no/such/folder/a.json"}).ok());
  ::testing::internal::CaptureStdout();
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(PrintAnswer("reduce", unwritable, "sum = 1\n", "{}\n"), kExitUsage);
  ::testing::internal::GetCapturedStdout();
  EXPECT_THAT(::testing::internal::GetCapturedStderr(), HasSubstr("/no/such/folder/a.json"));
}

}  // namespace
}  // namespace gpureduce::cli
