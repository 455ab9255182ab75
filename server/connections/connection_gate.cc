#include "server/connections/connection_gate.h"

#include <fcntl.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/fmt_absl.h"
#include "spdlog/spdlog.h"

namespace gpureduce::server {
namespace {

// epoll data of the two kinds of descriptor that are not connections.
constexpr uint64_t kWake = uint64_t{1} << 32;
constexpr uint64_t kRefused = uint64_t{3} << 32;
constexpr uint64_t kListenerTag = uint64_t{2} << 32;

}  // namespace

ConnectionGate::ConnectionGate(const ConnectionLimits& limits, ConnectionMetrics& metrics,
                               FailureLog& failures)
    : limits_(limits), metrics_(metrics), failures_(failures) {}

ConnectionGate::~ConnectionGate() {
  if (wake_fd_ >= 0) StopAccepting();
  stopping_.store(true, std::memory_order_release);
  if (wake_fd_ >= 0) {
    const uint64_t one = 1;
    (void)!write(wake_fd_, &one, sizeof(one));
  }
  if (thread_.joinable()) thread_.join();
  if (epoll_fd_ >= 0) close(epoll_fd_);
  if (wake_fd_ >= 0) close(wake_fd_);
}

absl::Status ConnectionGate::Start(
    Listener listener, std::unique_ptr<grpc::experimental::ExternalConnectionAcceptor> acceptor,
    bool plaintext) {
  listener_ = std::move(listener);
  acceptor_ = std::move(acceptor);
  plaintext_ = plaintext;
  epoll_fd_ = epoll_create1(EPOLL_CLOEXEC);
  wake_fd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (epoll_fd_ < 0 || wake_fd_ < 0) {
    return absl::InternalError(absl::StrCat("connection gate: ", std::strerror(errno)));
  }
  epoll_event event{};
  event.events = EPOLLIN;
  event.data.u64 = kWake;
  epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, wake_fd_, &event);
  event.data.u64 = kRefused;
  epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, refused_.poll_fd(), &event);
  for (int fd : listener_.fds()) {
    event.data.u64 = kListenerTag | static_cast<uint32_t>(fd);
    epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &event);
  }
  accepting_.store(true, std::memory_order_release);
  thread_ = std::thread([this] { Run(); });
  return absl::OkStatus();
}

void ConnectionGate::StopAccepting() {
  // Under handoff_mu_, so no hand-off is under way once this returns.
  absl::MutexLock handing(&handoff_mu_);
  if (!accepting_.exchange(false, std::memory_order_acq_rel)) return;
  for (int fd : listener_.fds()) epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, fd, nullptr);
  // The gate's thread closes the listening sockets: it may be accepting on one right now.
  const uint64_t one = 1;
  (void)!write(wake_fd_, &one, sizeof(one));
}

void ConnectionGate::Run() {
  epoll_event events[64];
  while (!stopping_.load(std::memory_order_acquire)) {
    if (!accepting_.load(std::memory_order_acquire)) {
      absl::MutexLock handing(&handoff_mu_);
      listener_ = Listener();  // the kernel refuses new connections from now
    }
    const int ready = epoll_wait(epoll_fd_, events, 64, refused_.NextTimeoutMs());
    refused_.Poll();  // what they sent, or the end of their hold
    for (int i = 0; i < ready; ++i) {
      const uint64_t data = events[i].data.u64;
      if (data == kWake) {
        uint64_t count;
        (void)!read(wake_fd_, &count, sizeof(count));
      } else if (data == kRefused) {
        // Polled above.
      } else if ((data & kListenerTag) != 0) {
        AcceptFrom(static_cast<int>(data & 0xffffffff));
      } else if (events[i].events & (EPOLLHUP | EPOLLERR)) {
        // gRPC shuts a socket down both ways before it closes it; this descriptor sees that.
        Forget(static_cast<int>(data));
      }
    }
    ended_in_batch_.clear();
  }
}

void ConnectionGate::AcceptFrom(int listener_fd) {
  while (accepting_.load(std::memory_order_acquire)) {
    sockaddr_storage address{};
    socklen_t length = sizeof(address);
    const int fd = accept4(listener_fd, reinterpret_cast<sockaddr*>(&address), &length,
                           SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      if (errno != EAGAIN && errno != EWOULDBLOCK) {
        // Out of descriptors, most likely: the backlog keeps the rest until some close.
        spdlog::warn("accept: {}", std::strerror(errno));
      }
      return;
    }
    const std::optional<PeerAddress> peer =
        PeerAddressOf(reinterpret_cast<sockaddr*>(&address), length);
    if (!peer.has_value()) {
      close(fd);
      continue;
    }
    ConnectionRefusal reason;
    const char* why = nullptr;
    int own = -1;
    {
      absl::MutexLock lock(&mu_);
      why = Admit(*peer, &reason);
      if (why == nullptr) {
        own = fcntl(fd, F_DUPFD_CLOEXEC, 0);
        if (own < 0) {
          if (auto count = per_address_.find(peer->WithoutPort()); --count->second == 0) {
            per_address_.erase(count);
          }
        } else {
          by_peer_[*peer] = std::make_shared<Connection>(*peer, own, plaintext_);
          by_fd_[own] = *peer;
          epoll_event event{};
          event.events = EPOLLRDHUP | EPOLLET;  // HUP and ERR are always reported
          event.data.u64 = static_cast<uint32_t>(own);
          epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, own, &event);
        }
      }
    }
    if (why != nullptr) {
      Refuse(fd, *peer, reason, why);
      continue;
    }
    if (own < 0) {
      close(fd);
      continue;
    }
    metrics_.Opened();
    // Not under mu_: gRPC may do a good deal of work inline here (the handshake, and parsing
    // whatever the client sent already), and the guard must still find and evict connections.
    absl::MutexLock handing(&handoff_mu_);
    if (!accepting_.load(std::memory_order_acquire)) {
      shutdown(fd, SHUT_RDWR);  // the server is shutting down; the gate's descriptor sees it
      close(fd);
      return;
    }
    grpc::experimental::ExternalConnectionAcceptor::NewConnectionParameters handoff;
    handoff.listener_fd = listener_fd;
    handoff.fd = fd;
    acceptor_->HandleNewConnection(&handoff);  // gRPC owns `fd` from here
  }
}

const char* ConnectionGate::Admit(const PeerAddress& peer, ConnectionRefusal* reason) {
  // gRPC names a call's connection by its peer's address and port only, so two connections
  // open at once from one (a client that binds its port twice, to two of the server's
  // addresses) could not be told apart: the second waits for the first to close. One that
  // reconnects from its port before the gate has handled the old close (loopback reuses ports
  // at once) finds the old connection ended, and the gate forgets it now.
  if (auto open = by_peer_.find(peer); open != by_peer_.end()) {
    if (!open->second->Ended()) {
      *reason = ConnectionRefusal::kSamePeer;
      return "a connection from this address and port is still open; connect from another port";
    }
    // Held to the end of the gate's batch of events, which may still hold one for its
    // descriptor: closed now, its number could go to the new connection and be forgotten.
    ended_in_batch_.push_back(ForgetLocked(open->second->fd()));
  }
  const PeerAddress address = peer.WithoutPort();
  if (auto cooling = cooling_.find(address); cooling != cooling_.end()) {
    if (absl::Now() < cooling->second) {
      *reason = ConnectionRefusal::kCoolingDown;
      return "a connection from this address was closed for abuse moments ago "
             "(--eviction-cooldown)";
    }
    cooling_.erase(cooling);
  }
  if (limits_.max_connections != 0 && by_fd_.size() >= limits_.max_connections) {
    *reason = ConnectionRefusal::kServerFull;
    return "the server has --max-connections open; retry with backoff";
  }
  uint32_t& mine = per_address_[address];
  if (limits_.max_connections_per_client != 0 && mine >= limits_.max_connections_per_client) {
    if (mine == 0) per_address_.erase(address);
    *reason = ConnectionRefusal::kClientFull;
    return "this address has --max-connections-per-client open; share a channel or close some";
  }
  ++mine;
  return nullptr;
}

void ConnectionGate::Refuse(int fd, const PeerAddress& peer, ConnectionRefusal reason,
                            const char* why) {
  metrics_.Refused(reason);
  refused_.Refuse(fd, why, plaintext_);
  failures_.Warn(peer.Host(), "connection refused", [&] {
    return fmt::format("connection from {} refused: {}", peer.ToString(), why);
  });
}

void ConnectionGate::Forget(int fd) {
  std::shared_ptr<Connection> gone;
  {
    absl::MutexLock lock(&mu_);
    gone = ForgetLocked(fd);
  }
  // The descriptor closes when the last call holding the connection lets go of it.
}

std::shared_ptr<Connection> ConnectionGate::ForgetLocked(int fd) {
  auto it = by_fd_.find(fd);
  if (it == by_fd_.end()) return nullptr;
  epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, fd, nullptr);
  if (auto count = per_address_.find(it->second.WithoutPort());
      count != per_address_.end() && --count->second == 0) {
    per_address_.erase(count);
  }
  std::shared_ptr<Connection> gone;
  if (auto connection = by_peer_.find(it->second);
      connection != by_peer_.end() && connection->second->fd() == fd) {
    gone = std::move(connection->second);
    by_peer_.erase(connection);
  }
  by_fd_.erase(it);
  metrics_.Closed();
  return gone;
}

std::shared_ptr<Connection> ConnectionGate::Find(absl::string_view grpc_peer) const {
  const std::optional<PeerAddress> peer = ParseGrpcPeer(grpc_peer);
  return peer.has_value() ? Find(*peer) : nullptr;
}

std::shared_ptr<Connection> ConnectionGate::Find(const PeerAddress& peer) const {
  absl::ReaderMutexLock lock(&mu_);
  auto it = by_peer_.find(peer);
  return it == by_peer_.end() ? nullptr : it->second;
}

std::vector<std::shared_ptr<Connection>> ConnectionGate::Snapshot() const {
  absl::ReaderMutexLock lock(&mu_);
  std::vector<std::shared_ptr<Connection>> connections;
  connections.reserve(by_peer_.size());
  for (const auto& [peer, connection] : by_peer_) connections.push_back(connection);
  return connections;
}

void ConnectionGate::Evict(Connection& connection, Eviction reason, absl::string_view why) {
  if (!connection.Evict(why)) return;
  metrics_.Evicted(reason);
  // A client abusing its calls would only repeat it on a new connection; one that sent a message
  // too long was sent away for that message alone.
  if (limits_.eviction_cooldown > absl::ZeroDuration() && reason != Eviction::kUnaccountedBytes) {
    absl::MutexLock lock(&mu_);
    cooling_[connection.peer().WithoutPort()] = absl::Now() + limits_.eviction_cooldown;
  }
  failures_.Warn(connection.peer().Host(), "connection evicted", [&] {
    return fmt::format("connection from {} evicted: {}", connection.peer().ToString(), why);
  });
}

size_t ConnectionGate::open() const {
  absl::ReaderMutexLock lock(&mu_);
  return by_fd_.size();
}

}  // namespace gpureduce::server
