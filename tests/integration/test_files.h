#pragma once

// Files the system tests read: what a process wrote, and what a CLI process left in /dev/shm; the
// CLI run with its output captured in files.

#include <sys/types.h>

#include <string>
#include <vector>

namespace gpureduce::testing {

// The whole file (empty when it cannot be read).
std::string ReadWholeFile(const std::string& path);

// The POSIX shared-memory objects in /dev/shm under the names the CLI gives them
// ("gpureduce-<pid>-<hex>") for process `pid`.
std::vector<std::string> ShmObjectsOf(pid_t pid);

struct CliRun {
  int exit_code;
  std::string out;
  std::string err;
  pid_t pid;  // the CLI's process, for its objects in /dev/shm
};

// Runs `gpureduce <args> --target=<target>` (no --target when `target` is empty) through the
// shell, so `args` may redirect stdin.
CliRun RunCli(const std::string& args, const std::string& target);

}  // namespace gpureduce::testing
