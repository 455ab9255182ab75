#pragma once

// Keeps what clients send from taking the server's memory, whatever they do on the wire. gRPC
// 1.51 lets a connection hold memory two ways no setting of it bounds:
// - rapid reset: streams opened and reset at once leave the HTTP/2 limit on open streams, yet
//   each costs kilobytes until the server has ended its call, and gRPC parses them far faster
//   than calls end;
// - messages larger than their limit: gRPC opens a stream's window for as long as a read is
//   pending and checks a message's size only once all of it has arrived, so a client may push
//   gigabytes into one declared length.
// The guard watches both from a thread of its own and evicts the connection (ConnectionGate::
// Evict):
// - streams: a connection with more streams in the server than `max_live_streams` (channelz
//   counts them as gRPC parses them; channelz_streams.h);
// - bytes: what TCP received on a connection, less what the kernel still holds and what its
//   calls account for (call_account.h), is what gRPC holds of messages still arriving; a
//   connection holding more than its admitted calls' limits and `slack_bytes` is evicted
//   (byte_account.h); not with gRPC's BDP probe (ConnectionLimits::account_bytes).
// It looks at the bytes every `account_period` and at the streams every `census_period`, and at
// both at once when the server's resident memory has grown by `growth_trigger_bytes` since its
// last look (checked every `probe_period`); at the streams also when more calls started since
// its last look than a connection may have in the server (channelz's count, read every probe),
// as often as a census's cost allows (`census_budget` of a core). So an attack is met within
// milliseconds while an idle server pays almost nothing.

#include <atomic>
#include <cstdint>
#include <memory>
#include <thread>
#include <vector>

#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "server/connections/channelz_streams.h"
#include "server/connections/connection_gate.h"

namespace gpureduce::server {

class MemoryGuard {
 public:
  struct Options {
    absl::Duration probe_period = absl::Milliseconds(5);
    absl::Duration account_period = absl::Milliseconds(100);
    absl::Duration census_period = absl::Seconds(1);
    uint64_t growth_trigger_bytes = uint64_t{16} << 20;
    double census_budget = 0.02;  // of a core, for censuses the calls' pace asks for
  };

  explicit MemoryGuard(ConnectionGate& gate);
  MemoryGuard(ConnectionGate& gate, const Options& options);
  ~MemoryGuard();
  MemoryGuard(const MemoryGuard&) = delete;
  MemoryGuard& operator=(const MemoryGuard&) = delete;

  // Starts watching (the gRPC server must be running: channelz lists it).
  void Start();

 private:
  void Run();
  // The byte accounts of every connection; evicts those holding too much.
  void Account();
  // The streams of every connection; evicts those with too many.
  void Census();

  ConnectionGate& gate_;
  const Options options_;
  ChannelzStreams channelz_;
  absl::Notification stopping_;
  std::thread thread_;
};

// The process's resident memory now (/proc/self/statm), or 0 when it cannot be read.
uint64_t ResidentBytes();

}  // namespace gpureduce::server
