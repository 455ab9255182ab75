#include "common/unix_socket.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"

namespace gpureduce {
namespace {

absl::Status Invalid(const std::string& path, absl::string_view why) {
  return absl::InvalidArgumentError(absl::StrCat("--listen-unix=", path, ": ", why));
}

// Whether a process accepts connections on the socket at `path`: OK and true if one does (or
// its backlog is full), false if none does (a stale socket: the connection is refused), an error
// where the attempt cannot tell (no permission to connect, say), which the caller reports rather
// than take a live server's socket for a stale one.
absl::StatusOr<bool> Answers(const std::string& path) {
  const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (fd < 0) return absl::InternalError(absl::StrCat("socket: ", std::strerror(errno)));
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::memcpy(address.sun_path, path.data(), path.size());
  const int result = connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address));
  const int error = errno;
  close(fd);
  if (result == 0 || error == EAGAIN) return true;
  if (error == ECONNREFUSED || error == ENOENT) return false;  // ENOENT: removed meanwhile
  return absl::InternalError(std::strerror(error));
}

}  // namespace

absl::StatusOr<std::string> PrepareUnixSocket(const std::string& path) {
  if (path.empty()) return Invalid(path, "empty");
  std::string absolute = path;
  if (path.front() != '/') {
    char directory[4096];
    if (getcwd(directory, sizeof(directory)) == nullptr) {
      return Invalid(path, absl::StrCat("the working directory: ", std::strerror(errno)));
    }
    absolute = absl::StrCat(directory, "/", path);
  }
  if (absolute.size() >= sizeof(sockaddr_un::sun_path)) {
    return Invalid(path, absl::StrCat(absolute.size(),
                                      " bytes as an absolute path, where a Unix "
                                      "socket's address holds at most ",
                                      sizeof(sockaddr_un::sun_path) - 1));
  }
  const std::string directory = absolute.substr(0, absolute.rfind('/') + 1);
  struct stat status {};
  if (stat(directory.c_str(), &status) != 0 || !S_ISDIR(status.st_mode)) {
    return Invalid(path, absl::StrCat("no directory ", directory));
  }
  if (lstat(absolute.c_str(), &status) != 0) return absolute;  // nothing there yet
  if (!S_ISSOCK(status.st_mode)) {
    return Invalid(path, "a file that is not a socket is there (left as it is)");
  }
  absl::StatusOr<bool> answers = Answers(absolute);
  if (!answers.ok()) {
    return Invalid(path, absl::StrCat("cannot tell whether a process listens on the socket there "
                                      "(connecting: ",
                                      answers.status().message(), "); left as it is"));
  }
  if (*answers) {
    return absl::AlreadyExistsError(
        absl::StrCat("--listen-unix=", path, ": another process listens on that socket"));
  }
  // A stale socket, left by a server that did not stop cleanly.
  if (unlink(absolute.c_str()) != 0 && errno != ENOENT) {
    return Invalid(path,
                   absl::StrCat("cannot remove the stale socket there: ", std::strerror(errno)));
  }
  return absolute;
}

namespace {

// The socket file at `path` now: 0 where there is none.
uint64_t UnixSocketIdentity(const std::string& path) {
  struct stat status {};
  if (lstat(path.c_str(), &status) != 0 || !S_ISSOCK(status.st_mode)) return 0;
  // The inode alone is not enough: a file system may reuse a freed inode's number at once
  // (ext4 does), so a socket bound in its place would pass for this one; its change time
  // differs (by a clock tick at least). A chmod of the socket changes it too: the socket is
  // then left behind at exit, and the next start replaces it as stale.
  const uint64_t inode =
      (static_cast<uint64_t>(status.st_dev) << 32) ^ static_cast<uint64_t>(status.st_ino);
  const uint64_t changed = static_cast<uint64_t>(status.st_ctim.tv_sec) * 1000000000u +
                           static_cast<uint64_t>(status.st_ctim.tv_nsec);
  return (inode * 0x9E3779B97F4A7C15u) ^ changed;
}

}  // namespace

BoundUnixSocket::BoundUnixSocket(std::string path)
    : path_(std::move(path)), identity_(path_.empty() ? 0 : UnixSocketIdentity(path_)) {}

BoundUnixSocket::~BoundUnixSocket() {
  if (identity_ != 0 && UnixSocketIdentity(path_) == identity_) unlink(path_.c_str());
}

}  // namespace gpureduce
