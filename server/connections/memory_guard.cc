#include "server/connections/memory_guard.h"

#include <fcntl.h>
#include <linux/sockios.h>
#include <linux/tcp.h>
#include <netinet/in.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>

#include "absl/strings/str_cat.h"

namespace gpureduce::server {

uint64_t ResidentBytes() {
  static const int fd = open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
  static const long page = sysconf(_SC_PAGESIZE);
  char text[128];
  const ssize_t length = fd < 0 ? -1 : pread(fd, text, sizeof(text) - 1, 0);
  if (length <= 0) return 0;
  text[length] = '\0';
  unsigned long long size = 0, resident = 0;
  if (std::sscanf(text, "%llu %llu", &size, &resident) != 2) return 0;
  return resident * static_cast<uint64_t>(page);
}

MemoryGuard::MemoryGuard(ConnectionGate& gate) : MemoryGuard(gate, Options()) {}

MemoryGuard::MemoryGuard(ConnectionGate& gate, const Options& options)
    : gate_(gate), options_(options) {}

MemoryGuard::~MemoryGuard() {
  stopping_.Notify();
  if (thread_.joinable()) thread_.join();
}

void MemoryGuard::Start() {
  thread_ = std::thread([this] { Run(); });
}

void MemoryGuard::Run() {
  uint64_t trigger = ResidentBytes() + options_.growth_trigger_bytes;
  int64_t started_at_census = channelz_.CallsStarted();
  absl::Duration census_cost = absl::ZeroDuration();
  absl::Time next_account = absl::Now();
  absl::Time next_census = absl::Now();
  absl::Time last_census = absl::InfinitePast();
  while (!stopping_.WaitForNotificationWithTimeout(options_.probe_period)) {
    const absl::Time now = absl::Now();
    const uint64_t resident = ResidentBytes();
    const bool grew = resident >= trigger;
    if (grew) {
      trigger = resident + options_.growth_trigger_bytes;
    } else {
      // Memory given back lowers the level the next growth is measured from.
      trigger = std::min(trigger, resident + 2 * options_.growth_trigger_bytes);
    }
    if (grew || now >= next_account) {
      Account();
      next_account = now + options_.account_period;
    }
    // Enough calls started that one connection may have passed its bound, and a census now
    // keeps their cost within the budget.
    const int64_t started = channelz_.CallsStarted();
    const bool busy = started - started_at_census > gate_.limits().max_live_streams &&
                      now - last_census >= census_cost / options_.census_budget;
    if (grew || busy || now >= next_census) {
      Census();
      census_cost = absl::Now() - now;
      last_census = now;
      next_census = now + options_.census_period;
      started_at_census = started;
    }
  }
}

void MemoryGuard::Account() {
  const ConnectionLimits& limits = gate_.limits();
  for (const std::shared_ptr<Connection>& connection : gate_.Snapshot()) {
    if (connection->evicted()) continue;
    tcp_info info{};
    socklen_t length = sizeof(info);
    int unread = 0;
    if (getsockopt(connection->fd(), IPPROTO_TCP, TCP_INFO, &info, &length) != 0 ||
        length < offsetof(tcp_info, tcpi_bytes_received) + sizeof(info.tcpi_bytes_received) ||
        ioctl(connection->fd(), SIOCINQ, &unread) != 0) {
      continue;
    }
    const uint64_t received = info.tcpi_bytes_received;
    const uint64_t credited = connection->credited_bytes.load(std::memory_order_relaxed);
    // Credits the client has not used up do not carry over: a client cannot bank them.
    connection->unaccounted = std::max<int64_t>(
        0, connection->unaccounted + static_cast<int64_t>(received - connection->seen_received) -
               static_cast<int64_t>(credited - connection->seen_credited));
    connection->seen_received = received;
    connection->seen_credited = credited;
    const int64_t held = connection->unaccounted - unread;
    const int64_t allowed = static_cast<int64_t>(limits.slack_bytes) +
                            connection->allowed_bytes.load(std::memory_order_relaxed) +
                            connection->unread_calls.load(std::memory_order_relaxed) *
                                static_cast<int64_t>(kUnreadCallBytes);
    if (held > allowed) {
      gate_.Evict(*connection, Eviction::kUnaccountedBytes,
                  absl::StrCat("this connection sent ", held,
                               " bytes of messages not yet complete, more than the ", allowed,
                               " its calls may hold: a message far longer than the server "
                               "accepts (--max-request-bytes, --max-chunk-bytes); stream large "
                               "arrays in chunks"));
    }
  }
}

void MemoryGuard::Census() {
  const ConnectionLimits& limits = gate_.limits();
  if (limits.max_live_streams <= 0) return;
  for (const ConnectionStreams& streams : channelz_.Read()) {
    if (streams.live <= limits.max_live_streams) continue;
    std::shared_ptr<Connection> connection = gate_.Find(streams.peer);
    if (connection == nullptr || connection->evicted()) continue;
    gate_.Evict(
        *connection, Eviction::kLiveStreams,
        absl::StrCat("rapid reset: ", streams.live,
                     " streams of this connection are in the server, more than the ",
                     limits.max_live_streams,
                     " it may have (four times --max-streams-per-connection, and 64): calls opened "
                     "and cancelled faster than the server ends them"));
  }
}

}  // namespace gpureduce::server
