// --listen-unix: the server (and gpureduce-load's sink) also serve on a Unix-domain socket, for
// clients on its host. A unix:PATH target reduces as the TCP one does, through the client
// library, the CLI (shared memory too: a Unix peer is local) and gpureduce-load; GetServerInfo
// names the socket and the same instance id on both; the socket goes with the server; and a
// path that cannot be a socket, or one another server listens on, stops the server naming why.

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "client/load/load_runner.h"
#include "client/load/workload.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/integration/server_process.h"
#include "tests/integration/test_files.h"
#include "tests/support/random_data.h"
#include "tests/support/reference.h"
#include "tests/support/wire.h"

namespace gpureduce::testing {
namespace {

using ::testing::HasSubstr;

// A fresh directory for the test's sockets, removed with what is left in it.
class SocketDirectory {
 public:
  SocketDirectory() {
    char pattern[] = "/tmp/gpureduce-unix-XXXXXX";
    path_ = mkdtemp(pattern) != nullptr ? pattern : "";
  }
  ~SocketDirectory() {
    if (!path_.empty()) std::system(("rm -rf '" + path_ + "'").c_str());
  }
  std::string File(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

bool IsSocket(const std::string& path) {
  struct stat status {};
  return lstat(path.c_str(), &status) == 0 && S_ISSOCK(status.st_mode);
}

// A socket file that nothing listens on, as a server killed with SIGKILL leaves behind.
void LeaveStaleSocket(const std::string& path) {
  const int fd = socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::strncpy(address.sun_path, path.c_str(), sizeof(address.sun_path) - 1);
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
  close(fd);
}

TEST(UnixSocketTest, AUnixTargetReducesAsTheTcpOneAndNamesTheSameServer) {
  SocketDirectory directory;
  const std::string path = directory.File("gpureduce.sock");
  auto server = ServerProcess::Start({"--listen-unix=" + path, "--allow-shared-memory"});
  SKIP_IF_BACKEND_UNAVAILABLE(server.status());
  ASSERT_TRUE(server.ok()) << server.status();
  EXPECT_THAT((*server)->Log(), HasSubstr("and unix:" + path));
  auto local = client::ReducerClient::Connect("unix:" + path);
  for (size_t n : {size_t{1}, size_t{2}, size_t{31}, size_t{1000003}}) {
    const uint64_t seed = FreshSeed();
    SCOPED_TRACE(SeedTrace(seed) + " n=" + std::to_string(n));
    const std::vector<float> data = MixedSignData(n, seed);
    for (v1::Op op : {v1::SUM, v1::ARGMIN}) {
      const absl::StatusOr<v1::ReduceResponse> got =
          n * sizeof(float) <= (size_t{4} << 20)
              ? local->Reduce(Spec(op), data)
              : StreamFloats(*local, Spec(op), data, size_t{1} << 18);
      ASSERT_TRUE(got.ok()) << got.status();
      const Op which = static_cast<Op>(op);
      EXPECT_EQ(CheckAgainstReference(which, ComputeReference(which, data), got->value(),
                                      got->index(), 1e-9),
                "");
    }
  }
  const absl::StatusOr<v1::ServerInfo> here = local->GetServerInfo();
  const absl::StatusOr<v1::ServerInfo> there = (*server)->Connect()->GetServerInfo();
  ASSERT_TRUE(here.ok() && there.ok()) << here.status() << there.status();
  EXPECT_EQ(here->unix_socket(), path);
  EXPECT_EQ(there->unix_socket(), path);
  EXPECT_EQ(here->instance_id().size(), 32u);
  EXPECT_EQ(here->instance_id(), there->instance_id());

  // The CLI, by value and by reference (a Unix peer may use shared memory).
  CliRun info = RunCli("info", "unix:" + path);
  EXPECT_EQ(info.exit_code, 0) << info.err;
  EXPECT_THAT(info.out, HasSubstr("unix socket: " + path));
  CliRun shared =
      RunCli("reduce --shared-memory --random 4099 --op sum,argmax --verify", "unix:" + path);
  EXPECT_EQ(shared.exit_code, 0) << shared.out << shared.err;
  EXPECT_THAT(shared.out, HasSubstr("OK"));

  EXPECT_EQ((*server)->Stop(), 0);
  EXPECT_FALSE(IsSocket(path)) << "the socket goes with the server";
}

TEST(UnixSocketTest, ThePathIsCheckedBeforeTheServerStarts) {
  SocketDirectory directory;
  const std::string taken = directory.File("taken.sock");
  auto first = ServerProcess::Start({"--listen-unix=" + taken});
  SKIP_IF_BACKEND_UNAVAILABLE(first.status());
  ASSERT_TRUE(first.ok()) << first.status();
  auto second = ServerProcess::Start({"--listen-unix=" + taken}, false);
  ASSERT_FALSE(second.ok());
  EXPECT_THAT(std::string(second.status().message()),
              HasSubstr("another process listens on that socket"));
  EXPECT_TRUE(IsSocket(taken)) << "the first server's socket stays";
  EXPECT_TRUE(client::ReducerClient::Connect("unix:" + taken)->IsServing().ok());

  const std::string file = directory.File("a-file");
  std::ofstream(file) << "keep me\n";
  const std::string too_long = directory.File(std::string(120, 's'));
  const std::string no_directory = directory.File("missing/gpureduce.sock");
  for (const auto& [path, why] : std::vector<std::pair<std::string, std::string>>{
           {file, "a file that is not a socket is there (left as it is)"},
           {too_long, "where a Unix socket's address holds at most 107"},
           {no_directory, "no directory " + directory.File("missing/")}}) {
    auto refused = ServerProcess::Start({"--listen-unix=" + path}, false);
    ASSERT_FALSE(refused.ok()) << path;
    EXPECT_THAT(std::string(refused.status().message()), HasSubstr("--listen-unix=" + path));
    EXPECT_THAT(std::string(refused.status().message()), HasSubstr(why));
  }
  EXPECT_EQ(ReadWholeFile(file), "keep me\n");

  // A socket left by a server that did not stop cleanly is replaced.
  const std::string stale = directory.File("stale.sock");
  LeaveStaleSocket(stale);
  auto replaced = ServerProcess::Start({"--listen-unix=" + stale});
  ASSERT_TRUE(replaced.ok()) << replaced.status();
  const absl::StatusOr<v1::ReduceResponse> got =
      client::ReducerClient::Connect("unix:" + stale)->Reduce(Spec(v1::MAX), {-2.5f, 7.25f});
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->value(), 7.25);
}

TEST(UnixSocketTest, GpureduceLoadChecksItsAnswersOverTheSocketAndTheSinkListensThereToo) {
  SocketDirectory directory;
  const std::string path = directory.File("server.sock");
  auto server = ServerProcess::Start({"--listen-unix=" + path});
  SKIP_IF_BACKEND_UNAVAILABLE(server.status());
  ASSERT_TRUE(server.ok()) << server.status();
  const std::string sink_path = directory.File("sink.sock");
  auto sink = ServerProcess::StartSink({"--listen-unix=" + sink_path});
  ASSERT_TRUE(sink.ok()) << sink.status();
  client::WorkloadOptions work;
  work.floats = 1000003;
  work.op = v1::ARGMAX;
  absl::StatusOr<client::Workload> workload = client::Workload::Make(work);
  ASSERT_TRUE(workload.ok()) << workload.status();
  for (const std::string& target : {"unix:" + path, "unix:" + sink_path}) {
    client::LoadOptions load;
    load.target = target;
    load.concurrency = 2;
    load.requests = 20;
    load.warmup = absl::ZeroDuration();
    load.duration = absl::ZeroDuration();
    absl::StatusOr<client::LoadResult> result = client::RunLoad(load, *workload);
    ASSERT_TRUE(result.ok()) << result.status();
    EXPECT_EQ(result->ok, 20u) << target << ": " << result->first_error << result->first_wrong;
    EXPECT_EQ(result->wrong, 0u) << target;
    EXPECT_EQ(result->backend, target == "unix:" + path ? TestBackend() : "sink");
  }
  // The sink checks its path as the server does, and its socket goes with it.
  auto intruder = ServerProcess::StartSink({"--listen-unix=" + path});
  ASSERT_FALSE(intruder.ok());
  EXPECT_THAT(std::string(intruder.status().message()),
              HasSubstr("another process listens on that socket"));
  EXPECT_TRUE((*server)->Connect()->IsServing().ok());
  EXPECT_TRUE(IsSocket(path));
  EXPECT_EQ((*sink)->Stop(), 0);
  EXPECT_FALSE(IsSocket(sink_path));
}

}  // namespace
}  // namespace gpureduce::testing
