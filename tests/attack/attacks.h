#pragma once

// What a hostile client does to a gRPC server, each as one function that runs the attack on
// threads of its own and reports what the server did about it. Used by the attack tests and by
// `gpureduce-attack` (attack_main.cc) for measuring by hand.

#include <cstdint>
#include <string>
#include <vector>

#include "absl/time/time.h"

namespace gpureduce::testing {

inline constexpr char kReduceMethod[] = "/gpureduce.v1.Reducer/Reduce";
inline constexpr char kReduceStreamMethod[] = "/gpureduce.v1.Reducer/ReduceStream";

// How the server treated the connections of an attack.
struct ConnectionOutcomes {
  int64_t connections = 0;  // opened (the TCP handshake completed)
  int64_t refused = 0;      // refused at once: a GOAWAY before the server's SETTINGS
  int64_t goaways = 0;      // sent away later: a GOAWAY after the server's SETTINGS
  int64_t closed = 0;       // closed by the server without a GOAWAY
  int64_t failed = 0;       // no TCP connection at all
  std::vector<std::string> goaway_reasons;  // the debug data of each distinct GOAWAY
};

struct RapidResetOptions {
  std::string target;
  std::string source;  // local address to connect from; empty: any
  std::string method = kReduceMethod;
  int connections = 4;
  // Calls opened and reset per attacking thread, over as many connections as the server
  // forces on it (it reconnects after each close).
  int64_t streams = 30000;
  absl::Duration limit = absl::Seconds(60);
  // Between one reset stream and the next, per thread: a pace the server keeps up with.
  absl::Duration pause = absl::ZeroDuration();
};

struct RapidResetResult {
  ConnectionOutcomes outcomes;
  int64_t streams = 0;  // opened and reset
  absl::Duration took;
};

// Opens calls and resets each at once (RST_STREAM right after HEADERS), the 2023 attack.
RapidResetResult RapidReset(const RapidResetOptions& options);

struct SlowUploadOptions {
  std::string target;
  std::string source;
  std::string method = kReduceMethod;
  int connections = 8;
  int streams_per_connection = 48;        // kept within the server's MAX_CONCURRENT_STREAMS
  uint64_t declared_bytes = 60ull << 20;  // the message length each call's prefix declares
  uint64_t sent_bytes = 2ull << 20;       // sent at once, then
  absl::Duration trickle_every = absl::Seconds(5);  // 4 bytes more per call this often
  absl::Duration hold = absl::Seconds(15);          // for this long, then the calls are reset
};

struct SlowUploadResult {
  ConnectionOutcomes outcomes;
  int64_t calls = 0;                  // opened
  int64_t calls_ended_by_server = 0;  // refused or ended while the attack held them
  std::vector<int> codes;             // the grpc-status of each call the server ended
  uint64_t bytes_sent = 0;            // message bytes handed to the sockets
};

// Opens calls that declare a large message, send part of it and then trickle, holding what the
// server buffered for them.
SlowUploadResult SlowUpload(const SlowUploadOptions& options);

// TCP connections to `target` held open, idle or having sent half an HTTP request line: what
// blocks a server that gives each connection a thread. Closed on destruction.
class HeldSockets {
 public:
  HeldSockets(const std::string& target, int connections, bool half_request);
  ~HeldSockets();
  HeldSockets(const HeldSockets&) = delete;
  HeldSockets& operator=(const HeldSockets&) = delete;

  int connected() const { return static_cast<int>(fds_.size()); }
  // Those of them the server has closed by now.
  int ClosedByServer() const;

 private:
  std::vector<int> fds_;
};

}  // namespace gpureduce::testing
