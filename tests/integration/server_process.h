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

// The backend the integration suites run against: $GPUREDUCE_TEST_BACKEND, "cpu" by default.
// tests/gpu runs the same suites with "cuda".
std::string TestBackend();
// The GPUs CUDA servers are started with (--devices): $GPUREDUCE_TEST_DEVICES, "all" by default.
std::string TestDevices();
// The kernel "auto" resolves to on the test backend, and a catalogue kernel it lacks: empty for
// the CUDA backend, whose server runs the cpu kernel too.
std::string TestDefaultKernel();
std::string TestForeignKernel();

class ServerProcess {
 public:
  // Starts the server on 127.0.0.1 with a free port, --backend=TestBackend() and `flags` (with
  // the CUDA backend also --auto-cpu-below=0 and --devices=TestDevices(), which `flags` may
  // override); when
  // `wait_until_serving`, returns only once the health service says SERVING. When the test
  // backend cannot run on this machine (no GPU), returns FAILED_PRECONDITION with the server's
  // reason: tests skip on that (SKIP_IF_BACKEND_UNAVAILABLE).
  // `security`: how Connect() (and the wait for SERVING) reaches a server started with TLS.
  static absl::StatusOr<std::unique_ptr<ServerProcess>> Start(
      std::vector<std::string> flags, bool wait_until_serving = true,
      const std::string& backend = TestBackend(), const client::ChannelSecurity& security = {});
  // Start() with `environment` ("NAME=VALUE" each) added to the server's environment.
  static absl::StatusOr<std::unique_ptr<ServerProcess>> StartWithEnvironment(
      std::vector<std::string> flags, std::vector<std::string> environment,
      bool wait_until_serving = true);
  // Starts `gpureduce-load sink` the same way (its health service says SERVING at once).
  static absl::StatusOr<std::unique_ptr<ServerProcess>> StartSink(
      std::vector<std::string> flags = {});
  ~ServerProcess();

  const std::string& target() const { return target_; }
  pid_t pid() const { return pid_; }
  std::unique_ptr<client::ReducerClient> Connect() const;

  // Sends SIGTERM and waits; returns the exit code (or -signal), or -1000 on timeout.
  int Stop();

  // Peak resident memory (VmHWM) of the server process so far, and now (VmRSS).
  absl::StatusOr<uint64_t> PeakResidentBytes() const;
  absl::StatusOr<uint64_t> ResidentBytes() const;
  // The server's threads and open file descriptors now.
  absl::StatusOr<uint64_t> Threads() const;
  absl::StatusOr<uint64_t> OpenFiles() const;

  // What the server has logged so far (stdout and stderr).
  std::string Log() const;

 private:
  ServerProcess() = default;
  // Runs `args` plus --listen and --port-file, and waits for the port (and SERVING).
  // The child gets this process's environment without its GPUREDUCE_* settings (the server reads
  // them as flags; GPUREDUCE_TEST_* stay), plus `environment`.
  static absl::StatusOr<std::unique_ptr<ServerProcess>> Launch(
      std::vector<std::string> args, bool wait_until_serving, const std::string& backend,
      const client::ChannelSecurity& security = {}, std::vector<std::string> environment = {});

  // A number field of /proc/<pid>/status ("VmRSS" in kB, "Threads", ...).
  absl::StatusOr<uint64_t> StatusField(const char* field) const;

  pid_t pid_ = -1;
  std::string target_;
  client::ChannelSecurity security_;
  std::string dir_;
};

// One server shared by the tests of a suite: Start in SetUpTestSuite, Stop in
// TearDownTestSuite, REQUIRE_SHARED_SERVER in SetUp.
class SharedServer {
 public:
  void Start(std::vector<std::string> flags, const std::string& backend = TestBackend());
  void Stop() { server_.reset(); }
  ServerProcess* get() const { return server_.get(); }
  const absl::Status& status() const { return status_; }

 private:
  std::unique_ptr<ServerProcess> server_;
  absl::Status status_;
};

#define REQUIRE_SHARED_SERVER(shared)             \
  SKIP_IF_BACKEND_UNAVAILABLE((shared).status()); \
  ASSERT_NE((shared).get(), nullptr) << (shared).status()

// Skips the current test when `status` says the test backend cannot run here.
#define SKIP_IF_BACKEND_UNAVAILABLE(status)                       \
  if ((status).code() == absl::StatusCode::kFailedPrecondition) { \
    GTEST_SKIP() << (status).message();                           \
  }

// Streams `data` in chunks of `chunk_elements` through the client library.
absl::StatusOr<v1::ReduceResponse> StreamFloats(client::ReducerClient& reducer,
                                                const v1::ReduceSpec& spec,
                                                const std::vector<float>& data,
                                                size_t chunk_elements);

// Path of a binary built next to the tests (set by CMake).
std::string ServerBinary();
std::string CliBinary();
std::string LoadBinary();

}  // namespace gpureduce::testing
