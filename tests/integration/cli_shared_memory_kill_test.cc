// `gpureduce reduce --shared-memory` ended by a signal at each stage of its work, as a closed
// terminal (SIGHUP), Ctrl-C (SIGINT), a service manager (SIGTERM) or the OOM killer (SIGKILL)
// ends it: nothing is ever left in /dev/shm, since the object's name goes as soon as the server
// has mapped it; a catchable signal also unregisters the region and exits 128 + the signal. A
// region registered by a process killed outright stays registered until someone unregisters it
// (the server cannot tell a crashed client from one that lent its region to others).

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/integration/server_process.h"
#include "tests/integration/test_files.h"

extern char** environ;

namespace gpureduce::testing {
namespace {

using ::testing::IsEmpty;

enum class Stage {
  kReadingInput,  // reading an input of unknown length from a pipe: no object yet
  kLoading,       // the region registered, the input being copied into it
  kReducing,      // the input loaded, the ops running by reference
};

struct KillCase {
  int signal;
  Stage stage;
};

std::string StageName(Stage stage) {
  switch (stage) {
    case Stage::kReadingInput:
      return "ReadingInput";
    case Stage::kLoading:
      return "Loading";
    case Stage::kReducing:
      return "Reducing";
  }
  return "";
}

std::string CaseName(const ::testing::TestParamInfo<KillCase>& info) {
  return absl::StrCat(sigabbrev_np(info.param.signal), "While", StageName(info.param.stage));
}

std::string ScratchPath(const std::string& name) {
  return absl::StrCat(::testing::TempDir(), "/gpureduce-cli-kill-", getpid(), "-", name);
}

class CliSharedMemoryKillTest : public ::testing::TestWithParam<KillCase> {
 protected:
  static void SetUpTestSuite() { shared_.Start({"--allow-shared-memory"}); }
  static void TearDownTestSuite() { shared_.Stop(); }
  void SetUp() override {
    REQUIRE_SHARED_SERVER(shared_);
    reducer_ = shared_.get()->Connect();
  }
  void TearDown() override {
    if (reducer_ != nullptr) reducer_->UnregisterAllSharedMemory().IgnoreError();
  }

  int Regions() {
    absl::StatusOr<v1::ListSharedMemoryResponse> list = reducer_->ListSharedMemory();
    return list.ok() ? list->regions_size() : -1;
  }

  // Starts the CLI on `args` with stdin from `in` and stdout to `out`.
  pid_t Spawn(std::vector<std::string> args, const std::string& in, const std::string& out) {
    args.insert(args.begin(), {CliBinary(), "reduce", "--shared-memory"});
    args.push_back(absl::StrCat("--target=", shared_.get()->target()));
    std::vector<char*> argv;
    for (std::string& arg : args) argv.push_back(arg.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, in.c_str(), O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, out.c_str(),
                                     O_WRONLY | O_CREAT | O_TRUNC, 0600);
    pid_t pid = -1;
    const int spawned = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    return spawned == 0 ? pid : -1;
  }

  static SharedServer shared_;
  std::unique_ptr<client::ReducerClient> reducer_;
};

SharedServer CliSharedMemoryKillTest::shared_;

TEST_P(CliSharedMemoryKillTest, NothingIsLeftInDevShm) {
  const KillCase kill_case = GetParam();
  const std::string fifo = ScratchPath("stdin"), out = ScratchPath("stdout");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0) << std::strerror(errno);
  // Held open for writing, so a CLI reading it waits for input that does not come.
  const int writer = open(fifo.c_str(), O_RDWR);
  ASSERT_GE(writer, 0);

  std::vector<std::string> args;
  switch (kill_case.stage) {
    case Stage::kReadingInput:  // text of unknown length: read whole before the object exists
      args = {"--op", "sum", "-"};
      break;
    case Stage::kLoading:  // 1 GiB to load: seconds after its registration
      args = {"--random", "268435456", "--op", "sum"};
      break;
    case Stage::kReducing:  // 1 GiB, then eight ops in one request: one read, long enough
      args = {"--random", "268435456", "--op", "sum,min,max,mean,sum_squares,argmin,argmax,prod"};
      break;
  }
  const pid_t pid = Spawn(args, fifo, out);
  ASSERT_GT(pid, 0);

  // Wait for the stage.
  bool reached = false;
  for (int i = 0; i < 30000 && !reached; ++i) {
    switch (kill_case.stage) {
      case Stage::kReadingInput:
        reached = i >= 300;  // 0.3 s: the CLI is connected and blocked on its input
        break;
      case Stage::kLoading:
        reached = Regions() > 0;
        break;
      case Stage::kReducing:
        reached = absl::StrContains(ReadWholeFile(out), "shared memory: ");
        break;
    }
    if (!reached) usleep(1000);
  }
  ASSERT_EQ(kill(pid, kill_case.signal), 0);
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  close(writer);
  std::remove(fifo.c_str());
  std::remove(out.c_str());
  ASSERT_TRUE(reached) << "the CLI never reached the stage";

  EXPECT_THAT(ShmObjectsOf(pid), IsEmpty());
  if (kill_case.signal == SIGKILL) {
    ASSERT_TRUE(WIFSIGNALED(status));
    EXPECT_EQ(WTERMSIG(status), SIGKILL);
  } else {
    ASSERT_TRUE(WIFEXITED(status)) << "ended by signal " << WTERMSIG(status);
    EXPECT_EQ(WEXITSTATUS(status), 128 + kill_case.signal);
    EXPECT_EQ(Regions(), 0) << "a catchable signal unregisters the region";
  }
}

INSTANTIATE_TEST_SUITE_P(
    EverySignalAtEveryStage, CliSharedMemoryKillTest,
    ::testing::Values(KillCase{SIGHUP, Stage::kReadingInput},
                      KillCase{SIGINT, Stage::kReadingInput},
                      KillCase{SIGTERM, Stage::kReadingInput},
                      KillCase{SIGKILL, Stage::kReadingInput}, KillCase{SIGHUP, Stage::kLoading},
                      KillCase{SIGINT, Stage::kLoading}, KillCase{SIGTERM, Stage::kLoading},
                      KillCase{SIGKILL, Stage::kLoading}, KillCase{SIGHUP, Stage::kReducing},
                      KillCase{SIGINT, Stage::kReducing}, KillCase{SIGTERM, Stage::kReducing},
                      KillCase{SIGKILL, Stage::kReducing}),
    CaseName);

}  // namespace
}  // namespace gpureduce::testing
