#include "tests/integration/test_files.h"

#include <dirent.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/integration/server_process.h"

namespace gpureduce::testing {

std::string ReadWholeFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::vector<std::string> ShmObjectsOf(pid_t pid) {
  std::vector<std::string> names;
  DIR* dir = opendir("/dev/shm");
  if (dir == nullptr) return names;
  const std::string prefix = absl::StrCat("gpureduce-", pid, "-");
  while (dirent* entry = readdir(dir)) {
    if (absl::StartsWith(entry->d_name, prefix)) names.push_back(entry->d_name);
  }
  closedir(dir);
  return names;
}

CliRun RunCli(const std::string& args, const std::string& target) {
  // Every test process gets its own files: ctest runs test cases in parallel.
  const std::string base = absl::StrCat(::testing::TempDir(), "/gpureduce-cli-run-", getpid(), "-");
  const std::string out = base + "out", err = base + "err", pid = base + "pid";
  // `exec` keeps the shell's pid, which it wrote down first.
  const std::string command =
      absl::StrCat("echo $$ >", pid, "; exec ", CliBinary(), " ", args,
                   target.empty() ? "" : " --target=" + target, " >", out, " 2>", err);
  const int status = std::system(command.c_str());
  CliRun run{WIFEXITED(status) ? WEXITSTATUS(status) : -1, ReadWholeFile(out), ReadWholeFile(err),
             static_cast<pid_t>(std::atoi(ReadWholeFile(pid).c_str()))};
  for (const std::string& path : {out, err, pid}) std::remove(path.c_str());
  return run;
}

}  // namespace gpureduce::testing
