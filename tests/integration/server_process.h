#pragma once

// Runs the real gpureduce-server binary on loopback, the way a user would, for system tests.

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "client/reducer_client.h"

namespace gpureduce::testing {

class ServerProcess {
 public:
  // Starts the server on 127.0.0.1 with a free port plus `flags`; when `wait_until_serving`,
  // returns only once the health service says SERVING.
  static absl::StatusOr<std::unique_ptr<ServerProcess>> Start(std::vector<std::string> flags,
                                                              bool wait_until_serving = true);
  ~ServerProcess();

  const std::string& target() const { return target_; }
  pid_t pid() const { return pid_; }
  std::unique_ptr<client::ReducerClient> Connect() const;

  // Sends SIGTERM and waits; returns the exit code (or -signal), or -1000 on timeout.
  int Stop();

  // Peak resident memory (VmHWM) of the server process so far.
  absl::StatusOr<uint64_t> PeakResidentBytes() const;

  // What the server has logged so far (stdout and stderr).
  std::string Log() const;

 private:
  ServerProcess() = default;

  pid_t pid_ = -1;
  std::string target_;
  std::string dir_;
};

// Path of a binary built next to the tests (set by CMake).
std::string ServerBinary();
std::string CliBinary();

}  // namespace gpureduce::testing
