#include "server/connections/listener.h"

#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace gpureduce::server {
namespace {

// Enough for bursts of connections arriving at once; the kernel caps it at somaxconn.
constexpr int kBacklog = 4096;

absl::Status Errno(absl::string_view what, absl::string_view listen) {
  return absl::UnavailableError(
      absl::StrCat("cannot listen on ", listen, ": ", what, ": ", std::strerror(errno)));
}

void SetPort(sockaddr* address, int port) {
  if (address->sa_family == AF_INET) {
    reinterpret_cast<sockaddr_in*>(address)->sin_port = htons(port);
  } else {
    reinterpret_cast<sockaddr_in6*>(address)->sin6_port = htons(port);
  }
}

int BoundPort(int fd) {
  sockaddr_storage bound{};
  socklen_t length = sizeof(bound);
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &length) != 0) return 0;
  return bound.ss_family == AF_INET ? ntohs(reinterpret_cast<sockaddr_in*>(&bound)->sin_port)
                                    : ntohs(reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port);
}

}  // namespace

absl::StatusOr<Listener> Listener::Open(const std::string& listen) {
  const size_t colon = listen.rfind(':');
  int port = 0;
  if (colon == std::string::npos || !absl::SimpleAtoi(listen.substr(colon + 1), &port) ||
      port < 0 || port > 65535) {
    return absl::InvalidArgumentError(
        absl::StrCat("--listen=", listen, " is not HOST:PORT (e.g. 127.0.0.1:50051, [::]:0)"));
  }
  std::string host = listen.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  const std::string service = std::to_string(port);
  if (const int error =
          getaddrinfo(host.empty() ? nullptr : host.c_str(), service.c_str(), &hints, &found);
      error != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot listen on ", listen, ": ", gai_strerror(error)));
  }
  Listener listener;
  listener.port_ = port;
  absl::Status status;
  for (addrinfo* at = found; at != nullptr && status.ok(); at = at->ai_next) {
    const int fd = socket(at->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
      status = Errno("socket", listen);
      break;
    }
    listener.fds_.push_back(fd);
    const int one = 1;
    const int zero = 0;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    // Accepted sockets inherit TCP_NODELAY: gRPC's messages are written whole, never to wait.
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    // `[::]` takes IPv4 clients too, as gRPC's own listener does.
    if (at->ai_family == AF_INET6) setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
    // Port 0 picks one port for the first address; the others take the same.
    SetPort(at->ai_addr, listener.port_);
    if (bind(fd, at->ai_addr, at->ai_addrlen) != 0) {
      // `[::]` dual-stack already holds the IPv4 wildcard a name may also resolve to.
      if (errno == EADDRINUSE && listener.fds_.size() > 1) {
        close(fd);
        listener.fds_.pop_back();
        continue;
      }
      status = Errno("bind", listen);
    } else if (::listen(fd, kBacklog) != 0) {
      status = Errno("listen", listen);
    } else if (listener.port_ == 0) {
      listener.port_ = BoundPort(fd);
    }
  }
  freeaddrinfo(found);
  if (!status.ok()) return status;
  if (listener.fds_.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("cannot listen on ", listen, ": no address"));
  }
  return listener;
}

Listener::Listener(Listener&& other) noexcept : fds_(std::move(other.fds_)), port_(other.port_) {
  other.fds_.clear();
}

Listener& Listener::operator=(Listener&& other) noexcept {
  if (this != &other) {
    Close();
    fds_ = std::move(other.fds_);
    other.fds_.clear();
    port_ = other.port_;
  }
  return *this;
}

Listener::~Listener() { Close(); }

void Listener::Close() {
  for (int fd : fds_) close(fd);
  fds_.clear();
}

}  // namespace gpureduce::server
