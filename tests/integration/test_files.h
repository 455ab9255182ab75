#pragma once

// Files the system tests read: what a process wrote, and what a CLI process left in /dev/shm.

#include <sys/types.h>

#include <string>
#include <vector>

namespace gpureduce::testing {

// The whole file (empty when it cannot be read).
std::string ReadWholeFile(const std::string& path);

// The POSIX shared-memory objects in /dev/shm under the names the CLI gives them
// ("gpureduce-<pid>-<hex>") for process `pid`.
std::vector<std::string> ShmObjectsOf(pid_t pid);

}  // namespace gpureduce::testing
