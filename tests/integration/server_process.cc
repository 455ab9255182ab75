#include "tests/integration/server_process.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace gpureduce::testing {
namespace {

constexpr absl::Duration kStartTimeout = absl::Seconds(30);

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

// A binary named by the environment, else one beside the test executable (the package's
// layout), else the one CMake built.
std::string FindBinary(const char* env, const char* name, const char* built) {
  if (const char* path = std::getenv(env); path != nullptr && *path != '\0') return path;
  char self[4096];
  const ssize_t length = readlink("/proc/self/exe", self, sizeof(self) - 1);
  if (length > 0) {
    std::string beside(self, length);
    beside = beside.substr(0, beside.rfind('/') + 1) + name;
    if (access(beside.c_str(), X_OK) == 0) return beside;
  }
  return built;
}

std::string TestBackend() {
  const char* backend = std::getenv("GPUREDUCE_TEST_BACKEND");
  return backend != nullptr && *backend != '\0' ? backend : "cpu";
}

std::string TestDevices() {
  const char* devices = std::getenv("GPUREDUCE_TEST_DEVICES");
  return devices != nullptr && *devices != '\0' ? devices : "all";
}

std::string TestDefaultKernel() { return TestBackend() == "cuda" ? "single_pass" : "cpu"; }
std::string TestForeignKernel() { return TestBackend() == "cuda" ? "" : "cub"; }

std::string ServerBinary() {
  return FindBinary("GPUREDUCE_SERVER_BINARY", "gpureduce-server", GPUREDUCE_SERVER_BINARY);
}
std::string CliBinary() {
  return FindBinary("GPUREDUCE_CLI_BINARY", "gpureduce", GPUREDUCE_CLI_BINARY);
}
std::string LoadBinary() {
  return FindBinary("GPUREDUCE_LOAD_BINARY", "gpureduce-load", GPUREDUCE_LOAD_BINARY);
}

absl::StatusOr<std::unique_ptr<ServerProcess>> ServerProcess::Start(
    std::vector<std::string> flags, bool wait_until_serving, const std::string& backend,
    const client::ChannelSecurity& security) {
  std::vector<std::string> args = {ServerBinary(), "--log-level=debug", "--backend=" + backend};
  // The shared suites test the GPU path at every size: size-aware auto is tested on its own.
  if (backend == "cuda") args.push_back("--auto-cpu-below=0");
  if (backend == "cuda") args.push_back("--devices=" + TestDevices());
  args.insert(args.end(), flags.begin(), flags.end());
  return Launch(std::move(args), wait_until_serving, backend, security);
}

absl::StatusOr<std::unique_ptr<ServerProcess>> ServerProcess::StartWithEnvironment(
    std::vector<std::string> flags, std::vector<std::string> environment, bool wait_until_serving) {
  std::vector<std::string> args = {ServerBinary(), "--log-level=debug",
                                   "--backend=" + TestBackend()};
  if (TestBackend() == "cuda") args.push_back("--auto-cpu-below=0");
  if (TestBackend() == "cuda") args.push_back("--devices=" + TestDevices());
  args.insert(args.end(), flags.begin(), flags.end());
  return Launch(std::move(args), wait_until_serving, TestBackend(), {}, std::move(environment));
}

absl::StatusOr<std::unique_ptr<ServerProcess>> ServerProcess::StartSink(
    std::vector<std::string> flags) {
  std::vector<std::string> args = {LoadBinary(), "sink"};
  args.insert(args.end(), flags.begin(), flags.end());
  return Launch(std::move(args), true, "sink");
}

absl::StatusOr<std::unique_ptr<ServerProcess>> ServerProcess::Launch(
    std::vector<std::string> args, bool wait_until_serving, const std::string& backend,
    const client::ChannelSecurity& security, std::vector<std::string> environment) {
  std::unique_ptr<ServerProcess> server(new ServerProcess());
  server->security_ = security;
  char dir_template[] = "/tmp/gpureduce-test-XXXXXX";
  if (mkdtemp(dir_template) == nullptr) return absl::InternalError("mkdtemp failed");
  server->dir_ = dir_template;
  const std::string port_file = server->dir_ + "/port";
  const std::string log_file = server->dir_ + "/server.log";
  // A --listen of the caller's (e.g. "[::]:0" for IPv4 and IPv6 clients) takes the place of
  // loopback; its port must be 0 too, and the target stays 127.0.0.1.
  if (std::none_of(args.begin(), args.end(),
                   [](const std::string& arg) { return arg.rfind("--listen=", 0) == 0; })) {
    args.push_back("--listen=127.0.0.1:0");
  }
  args.push_back("--port-file=" + port_file);
  std::vector<char*> argv;
  for (std::string& arg : args) argv.push_back(arg.data());
  argv.push_back(nullptr);
  // Made before fork: only async-signal-safe calls may follow it in the child.
  for (char** entry = environ; *entry != nullptr; ++entry) {
    const absl::string_view variable(*entry);
    if (!absl::StartsWith(variable, "GPUREDUCE_") ||
        absl::StartsWith(variable, "GPUREDUCE_TEST_")) {
      environment.emplace_back(variable);
    }
  }
  std::vector<char*> envp;
  for (std::string& variable : environment) envp.push_back(variable.data());
  envp.push_back(nullptr);

  server->pid_ = fork();
  if (server->pid_ < 0) return absl::InternalError(absl::StrCat("fork: ", std::strerror(errno)));
  if (server->pid_ == 0) {
    // Only async-signal-safe calls between fork and exec: the parent has threads.
    const int log = open(log_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (log >= 0) {
      dup2(log, STDOUT_FILENO);
      dup2(log, STDERR_FILENO);
    }
    execve(argv[0], argv.data(), envp.data());
    _exit(127);
  }

  const absl::Time give_up = absl::Now() + kStartTimeout;
  while (ReadFile(port_file).empty()) {
    int status = 0;
    if (waitpid(server->pid_, &status, WNOHANG) == server->pid_) {
      server->pid_ = -1;
      const std::string log = ReadFile(log_file);
      if (log.find("no usable GPU") != std::string::npos ||
          log.find("has no CUDA backend") != std::string::npos) {
        return absl::FailedPreconditionError(
            absl::StrCat("the ", backend, " backend cannot run on this machine: ", log));
      }
      return absl::InternalError(
          absl::StrCat("the server exited at start (status ", status, "): ", log));
    }
    if (absl::Now() > give_up) return absl::DeadlineExceededError("no port file from the server");
    absl::SleepFor(absl::Milliseconds(20));
  }
  server->target_ = absl::StrCat("127.0.0.1:", std::atoi(ReadFile(port_file).c_str()));
  if (wait_until_serving) {
    std::unique_ptr<client::ReducerClient> reducer = server->Connect();
    while (true) {
      absl::StatusOr<bool> serving = reducer->IsServing();
      if (serving.ok() && *serving) break;
      if (absl::Now() > give_up) return absl::DeadlineExceededError("server never SERVING");
      absl::SleepFor(absl::Milliseconds(20));
    }
  }
  return server;
}

absl::StatusOr<v1::ReduceResponse> StreamFloats(client::ReducerClient& reducer,
                                                const v1::ReduceSpec& spec,
                                                const std::vector<float>& data,
                                                size_t chunk_elements) {
  size_t sent = 0;
  client::StreamOptions options;
  options.chunk_elements = chunk_elements;
  return reducer.ReduceStream(
      spec,
      [&](absl::Span<float> out) -> absl::StatusOr<size_t> {
        const size_t n = std::min(out.size(), data.size() - sent);
        std::copy_n(data.begin() + sent, n, out.begin());
        sent += n;
        return n;
      },
      options);
}

void SharedServer::Start(std::vector<std::string> flags, const std::string& backend) {
  absl::StatusOr<std::unique_ptr<ServerProcess>> server =
      ServerProcess::Start(std::move(flags), true, backend);
  status_ = server.status();
  if (server.ok()) server_ = std::move(*server);
}

ServerProcess::~ServerProcess() {
  Stop();
  if (!dir_.empty()) {
    std::remove((dir_ + "/port").c_str());
    std::remove((dir_ + "/server.log").c_str());
    rmdir(dir_.c_str());
  }
}

std::unique_ptr<client::ReducerClient> ServerProcess::Connect() const {
  absl::StatusOr<std::unique_ptr<client::ReducerClient>> reducer =
      client::ReducerClient::Connect(target_, security_);
  // The tests' own files: unreadable ones are a broken test, not a case to handle.
  if (!reducer.ok()) std::abort();
  return std::move(*reducer);
}

int ServerProcess::Stop() {
  if (pid_ <= 0) return -1000;
  kill(pid_, SIGTERM);
  const absl::Time give_up = absl::Now() + absl::Seconds(30);
  int status = 0;
  while (waitpid(pid_, &status, WNOHANG) == 0) {
    if (absl::Now() > give_up) {
      kill(pid_, SIGKILL);
      waitpid(pid_, &status, 0);
      pid_ = -1;
      return -1000;
    }
    absl::SleepFor(absl::Milliseconds(10));
  }
  pid_ = -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
}

absl::StatusOr<uint64_t> ServerProcess::StatusField(const char* field) const {
  std::ifstream status(absl::StrCat("/proc/", pid_, "/status"));
  std::string line;
  const size_t length = std::strlen(field);
  while (std::getline(status, line)) {
    if (line.compare(0, length, field) == 0 && line.size() > length && line[length] == ':') {
      return std::strtoull(line.c_str() + length + 1, nullptr, 10);
    }
  }
  return absl::NotFoundError(absl::StrCat("no ", field, " in /proc/", pid_, "/status"));
}

absl::StatusOr<uint64_t> ServerProcess::PeakResidentBytes() const {
  absl::StatusOr<uint64_t> kib = StatusField("VmHWM");
  if (!kib.ok()) return kib.status();
  return *kib * 1024;
}

absl::StatusOr<uint64_t> ServerProcess::ResidentBytes() const {
  absl::StatusOr<uint64_t> kib = StatusField("VmRSS");
  if (!kib.ok()) return kib.status();
  return *kib * 1024;
}

absl::StatusOr<uint64_t> ServerProcess::Threads() const { return StatusField("Threads"); }

absl::StatusOr<uint64_t> ServerProcess::OpenFiles() const {
  const std::string path = absl::StrCat("/proc/", pid_, "/fd");
  DIR* dir = opendir(path.c_str());
  if (dir == nullptr) return absl::NotFoundError(absl::StrCat("cannot list ", path));
  uint64_t count = 0;
  while (const dirent* entry = readdir(dir)) {
    if (entry->d_name[0] != '.') ++count;
  }
  closedir(dir);
  return count;
}

std::string ServerProcess::Log() const { return ReadFile(dir_ + "/server.log"); }

}  // namespace gpureduce::testing
