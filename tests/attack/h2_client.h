#pragma once

// A raw HTTP/2 client (nghttp2 over a plain TCP socket) for the attack tests: it opens gRPC calls
// and does to them what a hostile client does, which gRPC's own client never would (reset each
// at once, declare a large message and trickle it), and records how the server answered the
// connection (GOAWAY, close).

#include <nghttp2/nghttp2.h>

#include <cstdint>
#include <deque>
#include <memory>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace gpureduce::testing {

class H2Client {
 public:
  // Connects to `target` ("HOST:PORT", numeric host) from `source` (a local address to bind to;
  // empty: any) and `source_port` (0: any; else bound with SO_REUSEADDR and SO_REUSEPORT, so
  // that two clients may share it) and sends the connection preface.
  static absl::StatusOr<std::unique_ptr<H2Client>> Connect(absl::string_view target,
                                                           absl::string_view source = "",
                                                           int source_port = 0);
  ~H2Client();
  H2Client(const H2Client&) = delete;
  H2Client& operator=(const H2Client&) = delete;

  // Opens a gRPC call of `method` ("/gpureduce.v1.Reducer/Reduce"), its body sent as Send queues
  // it. Returns the stream id, or -1 once the connection is over.
  int32_t OpenCall(absl::string_view method);
  // Queues body bytes of `stream` (sent as flow control allows); `end` half-closes it after.
  void Send(int32_t stream, std::string bytes, bool end = false);
  // Queues `count` zero bytes (not held in memory meanwhile).
  void SendZeros(int32_t stream, uint64_t count);
  // RST_STREAM (CANCEL).
  void Reset(int32_t stream);
  // Opens a call and resets it once its HEADERS are on the wire: one step of the rapid-reset
  // attack. Returns false once the connection is over.
  bool OpenAndReset(absl::string_view method);

  // Sends what is queued and handles what arrived, waiting up to `wait` for the socket (after a
  // failed write, what arrived is still read: a GOAWAY before the server's close). Returns false
  // once the connection is over (closed by either side, or broken).
  bool Pump(absl::Duration wait);
  // Pumps until nothing is left to send (or `limit` passes); false once the connection is over.
  bool Flush(absl::Duration limit);

  bool open() const { return !closed_; }
  // The local port of the connection.
  int local_port() const;
  bool settings_received() const { return settings_received_; }
  bool goaway() const { return goaway_; }
  uint32_t goaway_error() const { return goaway_error_; }
  const std::string& goaway_debug() const { return goaway_debug_; }
  // Whether the server sent its GOAWAY before its SETTINGS: it refused the connection at once.
  bool refused() const { return goaway_ && !settings_received_; }
  // Streams the server reset or ended (with trailers) so far.
  int64_t streams_ended_by_server() const { return streams_ended_by_server_; }
  // Body bytes handed to the socket so far, all streams together.
  uint64_t body_bytes_sent() const { return body_bytes_sent_; }
  // The body bytes of `stream` still queued (not yet sent).
  uint64_t queued(int32_t stream) const;
  // The grpc-status the server ended `stream` with, or -1.
  int grpc_status(int32_t stream) const;

 private:
  struct Piece {
    std::string bytes;
    uint64_t zeros = 0;  // instead of bytes
    uint64_t size() const { return zeros != 0 ? zeros : bytes.size(); }
  };
  struct Body {
    std::deque<Piece> pieces;
    size_t offset = 0;  // into the first piece
    bool end = false;
    bool deferred = false;
  };

  H2Client() = default;
  static ssize_t SendCallback(nghttp2_session*, const uint8_t* data, size_t length, int,
                              void* self);
  static int OnFrameRecv(nghttp2_session*, const nghttp2_frame* frame, void* self);
  static int OnStreamClose(nghttp2_session*, int32_t stream, uint32_t error, void* self);
  static int OnHeader(nghttp2_session*, const nghttp2_frame* frame, const uint8_t* name,
                      size_t name_length, const uint8_t* value, size_t value_length, uint8_t,
                      void* self);
  static ssize_t ReadBody(nghttp2_session*, int32_t stream, uint8_t* buffer, size_t length,
                          uint32_t* flags, nghttp2_data_source*, void* self);

  int fd_ = -1;
  nghttp2_session* session_ = nullptr;
  void Queue(int32_t stream, Piece piece, bool end);
  // Reads what has arrived, until the socket has no more, ends or fails.
  void ReadAvailable();
  // Feeds what arrived to nghttp2, but first reads a GOAWAY that comes before the server's
  // SETTINGS (a connection refused at once), which nghttp2 would only call a protocol error.
  void Received(const uint8_t* data, size_t length);

  bool closed_ = false;
  bool settings_received_ = false;
  bool first_frame_seen_ = false;
  std::string first_bytes_;  // of the server's first frame, until it is known
  bool goaway_ = false;
  uint32_t goaway_error_ = 0;
  std::string goaway_debug_;
  int64_t streams_ended_by_server_ = 0;
  uint64_t body_bytes_sent_ = 0;
  absl::flat_hash_map<int32_t, Body> bodies_;
  absl::flat_hash_map<int32_t, int> statuses_;
};

}  // namespace gpureduce::testing
