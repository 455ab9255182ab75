#include "server/connections/unix_socket.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace gpureduce::server {
namespace {

absl::Status Invalid(const std::string& path, absl::string_view why) {
  return absl::InvalidArgumentError(absl::StrCat("--listen-unix=", path, ": ", why));
}

// Whether a process accepts connections on the socket at `path`.
bool Answers(const std::string& path) {
  const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::memcpy(address.sun_path, path.data(), path.size());
  const bool answers = connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0;
  close(fd);
  return answers;
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
  if (Answers(absolute)) {
    return absl::AlreadyExistsError(
        absl::StrCat("--listen-unix=", path, ": another process listens on that socket"));
  }
  unlink(absolute.c_str());  // a stale socket, left by a server that did not stop cleanly
  return absolute;
}

uint64_t UnixSocketIdentity(const std::string& path) {
  struct stat status {};
  if (lstat(path.c_str(), &status) != 0 || !S_ISSOCK(status.st_mode)) return 0;
  return (static_cast<uint64_t>(status.st_dev) << 32) ^ static_cast<uint64_t>(status.st_ino);
}

void RemoveUnixSocket(const std::string& path, uint64_t identity) {
  if (identity != 0 && UnixSocketIdentity(path) == identity) unlink(path.c_str());
}

}  // namespace gpureduce::server
