#pragma once

// How many HTTP/2 streams each connection has in the server now, read from gRPC's channelz:
// its transport counts a stream when it parses the stream's HEADERS and again when the stream's
// memory is freed, both at once, long before a call reaches the application. Rapid reset shows
// here first (memory_guard.h). Each look renders every connection as JSON (about 15 us a
// connection), so it is taken when something suggests it, not on a timer of milliseconds.

#include <cstdint>
#include <vector>

#include "server/connections/peer_address.h"

namespace gpureduce::server {

struct ConnectionStreams {
  PeerAddress peer;
  int64_t live = 0;  // started, not yet freed
};

class ChannelzStreams {
 public:
  // The streams of every connection of the process's gRPC server (the first one channelz lists;
  // gpureduce-server runs one). Empty while there is none.
  std::vector<ConnectionStreams> Read();

  // Calls the server has started, all connections together: counted, like the streams, as gRPC
  // parses them. One small JSON, however many connections: cheap enough to read every few
  // milliseconds and take a census (Read) when many calls came. -1 while there is no server.
  int64_t CallsStarted();

 private:
  bool FindServer();

  intptr_t server_id_ = 0;
};

}  // namespace gpureduce::server
