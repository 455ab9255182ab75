// PrepareUnixSocket, the check of --listen-unix's path before gRPC binds it (gRPC would unlink
// even a live server's socket): a live socket is refused, a stale one replaced, a relative path
// made absolute, and the socket is removed at exit only while it is still the same file.

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>

#include "common/unix_socket.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace gpureduce {
namespace {

using ::testing::HasSubstr;

bool IsSocket(const std::string& path) {
  struct stat status {};
  return lstat(path.c_str(), &status) == 0 && S_ISSOCK(status.st_mode);
}

// Binds a socket at `path`, listening on it when `listen_on` (else stale once closed); the fd.
int BindAt(const std::string& path, bool listen_on) {
  const int fd = socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::strncpy(address.sun_path, path.c_str(), sizeof(address.sun_path) - 1);
  EXPECT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0) << path;
  if (listen_on) EXPECT_EQ(listen(fd, 4), 0);
  return fd;
}

class UnixSocketPathTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/gpureduce-path-XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    directory_ = pattern;
  }
  void TearDown() override { std::system(("rm -rf '" + directory_ + "'").c_str()); }
  std::string directory_;
};

TEST_F(UnixSocketPathTest, ALiveSocketIsRefusedAndAStaleOneReplaced) {
  const std::string live = directory_ + "/live.sock";
  const int listening = BindAt(live, true);
  absl::StatusOr<std::string> refused = PrepareUnixSocket(live);
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kAlreadyExists) << refused.status();
  EXPECT_THAT(std::string(refused.status().message()), HasSubstr("--listen-unix=" + live));
  EXPECT_TRUE(IsSocket(live));
  close(listening);

  const std::string stale = directory_ + "/stale.sock";
  close(BindAt(stale, false));
  absl::StatusOr<std::string> replaced = PrepareUnixSocket(stale);
  ASSERT_TRUE(replaced.ok()) << replaced.status();
  EXPECT_EQ(*replaced, stale);
  EXPECT_FALSE(IsSocket(stale)) << "the stale socket is removed for gRPC to bind";

  const std::string file = directory_ + "/a-file";
  std::ofstream(file) << "keep\n";
  EXPECT_EQ(PrepareUnixSocket(file).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(PrepareUnixSocket("").status().code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(UnixSocketPathTest, ARelativePathIsTakenFromTheWorkingDirectory) {
  char before[4096];
  ASSERT_NE(getcwd(before, sizeof(before)), nullptr);
  ASSERT_EQ(chdir(directory_.c_str()), 0);
  absl::StatusOr<std::string> prepared = PrepareUnixSocket("here.sock");
  absl::StatusOr<std::string> missing = PrepareUnixSocket("missing/here.sock");
  ASSERT_EQ(chdir(before), 0);
  ASSERT_TRUE(prepared.ok()) << prepared.status();
  EXPECT_EQ(*prepared, directory_ + "/here.sock");
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(missing.status().message()), HasSubstr("no directory"));
}

TEST_F(UnixSocketPathTest, TheSocketIsRemovedOnlyWhileItIsStillTheOneBound) {
  const std::string path = directory_ + "/mine.sock";
  close(BindAt(path, false));
  {
    const BoundUnixSocket mine(path);
    // Another process replaced it meanwhile: left alone. (Later by more than a tick of the
    // coarse clock that stamps ctime on older kernels, as any real replacement is.)
    ASSERT_EQ(unlink(path.c_str()), 0);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    close(BindAt(path, false));
  }
  EXPECT_TRUE(IsSocket(path));
  { const BoundUnixSocket replacement(path); }
  EXPECT_FALSE(IsSocket(path));
  { const BoundUnixSocket none(""); }  // no socket: nothing to do
  { const BoundUnixSocket gone(path); }
  EXPECT_FALSE(IsSocket(path));
}

}  // namespace
}  // namespace gpureduce
