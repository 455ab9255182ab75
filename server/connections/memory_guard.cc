#include "server/connections/memory_guard.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <optional>

#include "absl/strings/str_cat.h"
#include "server/connections/byte_account.h"

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
  if (!limits.account_bytes) return;
  for (const std::shared_ptr<Connection>& connection : gate_.Snapshot()) {
    if (connection->evicted()) continue;
    const std::optional<HeldBytes> bytes =
        UpdateHeldBytes(*connection, limits.slack_bytes, ReadSocketBytes);
    if (!bytes.has_value() || !bytes->over()) continue;
    gate_.Evict(*connection, Eviction::kUnaccountedBytes,
                absl::StrCat("this connection sent ", bytes->held,
                             " bytes of messages not yet complete, more than the ", bytes->allowed,
                             " its calls may hold: a message far longer than the server "
                             "accepts (--max-request-bytes, --max-chunk-bytes); stream large "
                             "arrays in chunks"));
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
