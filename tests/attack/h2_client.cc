#include "tests/attack/h2_client.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"

namespace gpureduce::testing {
namespace {

absl::StatusOr<sockaddr_storage> Resolve(absl::string_view host, int port, socklen_t* length) {
  sockaddr_storage address{};
  std::string name(host);
  if (!name.empty() && name.front() == '[') name = name.substr(1, name.size() - 2);
  auto* v4 = reinterpret_cast<sockaddr_in*>(&address);
  auto* v6 = reinterpret_cast<sockaddr_in6*>(&address);
  if (inet_pton(AF_INET, name.c_str(), &v4->sin_addr) == 1) {
    v4->sin_family = AF_INET;
    v4->sin_port = htons(port);
    *length = sizeof(sockaddr_in);
  } else if (inet_pton(AF_INET6, name.c_str(), &v6->sin6_addr) == 1) {
    v6->sin6_family = AF_INET6;
    v6->sin6_port = htons(port);
    *length = sizeof(sockaddr_in6);
  } else {
    return absl::InvalidArgumentError(absl::StrCat("not a numeric address: ", host));
  }
  return address;
}

nghttp2_nv Header(absl::string_view name, absl::string_view value) {
  return {reinterpret_cast<uint8_t*>(const_cast<char*>(name.data())),
          reinterpret_cast<uint8_t*>(const_cast<char*>(value.data())), name.size(), value.size(),
          NGHTTP2_NV_FLAG_NONE};
}

}  // namespace

absl::StatusOr<std::unique_ptr<H2Client>> H2Client::Connect(absl::string_view target,
                                                            absl::string_view source,
                                                            int source_port) {
  const size_t colon = target.rfind(':');
  int port = 0;
  if (colon == absl::string_view::npos || !absl::SimpleAtoi(target.substr(colon + 1), &port)) {
    return absl::InvalidArgumentError(absl::StrCat("not HOST:PORT: ", target));
  }
  socklen_t length = 0;
  absl::StatusOr<sockaddr_storage> address = Resolve(target.substr(0, colon), port, &length);
  if (!address.ok()) return address.status();
  std::unique_ptr<H2Client> client(new H2Client());
  client->fd_ = socket(address->ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (client->fd_ < 0) return absl::InternalError(absl::StrCat("socket: ", strerror(errno)));
  if (!source.empty()) {
    socklen_t source_length = 0;
    absl::StatusOr<sockaddr_storage> local = Resolve(source, source_port, &source_length);
    if (!local.ok()) return local.status();
    if (source_port != 0) {
      const int one = 1;
      setsockopt(client->fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
      setsockopt(client->fd_, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one));
    }
    if (bind(client->fd_, reinterpret_cast<sockaddr*>(&*local), source_length) != 0) {
      return absl::InternalError(absl::StrCat("bind ", source, ": ", strerror(errno)));
    }
  }
  if (connect(client->fd_, reinterpret_cast<sockaddr*>(&*address), length) != 0) {
    return absl::UnavailableError(absl::StrCat("connect ", target, ": ", strerror(errno)));
  }
  const int one = 1;
  setsockopt(client->fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  fcntl(client->fd_, F_SETFL, fcntl(client->fd_, F_GETFL) | O_NONBLOCK);

  nghttp2_session_callbacks* callbacks = nullptr;
  nghttp2_session_callbacks_new(&callbacks);
  nghttp2_session_callbacks_set_send_callback(callbacks, &H2Client::SendCallback);
  nghttp2_session_callbacks_set_on_frame_recv_callback(callbacks, &H2Client::OnFrameRecv);
  nghttp2_session_callbacks_set_on_stream_close_callback(callbacks, &H2Client::OnStreamClose);
  nghttp2_session_callbacks_set_on_header_callback(callbacks, &H2Client::OnHeader);
  nghttp2_option* option = nullptr;
  nghttp2_option_new(&option);
  // A hostile client ignores the server's MAX_CONCURRENT_STREAMS where it can: a reset stream
  // frees its place at once, so this only matters to the slow-upload attack, which keeps to it.
  nghttp2_option_set_peer_max_concurrent_streams(option, 1u << 30);
  const int created =
      nghttp2_session_client_new2(&client->session_, callbacks, client.get(), option);
  nghttp2_option_del(option);
  nghttp2_session_callbacks_del(callbacks);
  if (created != 0) return absl::InternalError(nghttp2_strerror(created));
  const nghttp2_settings_entry settings[] = {{NGHTTP2_SETTINGS_ENABLE_PUSH, 0},
                                             {NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, 1 << 20}};
  nghttp2_submit_settings(client->session_, NGHTTP2_FLAG_NONE, settings, 2);
  client->Flush(absl::Seconds(5));
  return client;
}

H2Client::~H2Client() {
  if (session_ != nullptr) nghttp2_session_del(session_);
  if (fd_ >= 0) close(fd_);
}

int32_t H2Client::OpenCall(absl::string_view method) {
  if (closed_) return -1;
  const nghttp2_nv headers[] = {Header(":method", "POST"),
                                Header(":scheme", "http"),
                                Header(":path", method),
                                Header(":authority", "gpureduce"),
                                Header("content-type", "application/grpc"),
                                Header("te", "trailers")};
  nghttp2_data_provider provider{};
  provider.read_callback = &H2Client::ReadBody;
  const int32_t stream = nghttp2_submit_request(session_, nullptr, headers, 6, &provider, nullptr);
  if (stream < 0) return -1;
  bodies_[stream];
  return stream;
}

void H2Client::Send(int32_t stream, std::string bytes, bool end) {
  Queue(stream, Piece{std::move(bytes), 0}, end);
}

void H2Client::SendZeros(int32_t stream, uint64_t count) { Queue(stream, Piece{{}, count}, false); }

void H2Client::Queue(int32_t stream, Piece piece, bool end) {
  auto it = bodies_.find(stream);
  if (it == bodies_.end()) return;
  if (piece.size() != 0) it->second.pieces.push_back(std::move(piece));
  it->second.end = it->second.end || end;
  if (it->second.deferred) {
    it->second.deferred = false;
    nghttp2_session_resume_data(session_, stream);
  }
}

void H2Client::Reset(int32_t stream) {
  nghttp2_submit_rst_stream(session_, NGHTTP2_FLAG_NONE, stream, NGHTTP2_CANCEL);
}

bool H2Client::OpenAndReset(absl::string_view method) {
  const int32_t stream = OpenCall(method);
  if (stream < 0 || nghttp2_session_send(session_) != 0) return false;
  Reset(stream);
  return nghttp2_session_send(session_) == 0;
}

uint64_t H2Client::queued(int32_t stream) const {
  auto it = bodies_.find(stream);
  if (it == bodies_.end()) return 0;
  uint64_t bytes = 0;
  for (const Piece& piece : it->second.pieces) bytes += piece.size();
  return bytes - it->second.offset;
}

int H2Client::grpc_status(int32_t stream) const {
  auto it = statuses_.find(stream);
  return it == statuses_.end() ? -1 : it->second;
}

int H2Client::local_port() const {
  sockaddr_storage local{};
  socklen_t length = sizeof(local);
  if (getsockname(fd_, reinterpret_cast<sockaddr*>(&local), &length) != 0) return 0;
  return ntohs(local.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&local)->sin6_port
                                           : reinterpret_cast<sockaddr_in*>(&local)->sin_port);
}

bool H2Client::Pump(absl::Duration wait) {
  if (closed_) return false;
  // A write fails once the server has closed the connection (refused or sent away), but what it
  // sent before, a GOAWAY, is still there to read: TCP hands over a socket's received bytes
  // before its reset. So the connection counts as over only once they are read.
  bool write_failed = nghttp2_session_send(session_) != 0;
  // Without a wait (or after a failed write), what has arrived is read at once (one syscall);
  // else the socket is polled.
  bool readable = wait == absl::ZeroDuration() || write_failed;
  if (!readable) {
    pollfd poller{fd_, POLLIN, 0};
    if (nghttp2_session_want_write(session_)) poller.events |= POLLOUT;
    readable = poll(&poller, 1, static_cast<int>(absl::ToInt64Milliseconds(wait))) > 0;
  }
  if (readable) {
    ReadAvailable();
    if (!closed_ && !write_failed && nghttp2_session_send(session_) != 0) {
      write_failed = true;
      ReadAvailable();  // what arrived since the read above
    }
  }
  if (write_failed) closed_ = true;
  return !closed_;
}

void H2Client::ReadAvailable() {
  uint8_t buffer[65536];
  while (!closed_) {
    const ssize_t got = recv(fd_, buffer, sizeof(buffer), MSG_DONTWAIT);
    if (got > 0) {
      Received(buffer, static_cast<size_t>(got));
    } else if (got == 0 || (errno != EAGAIN && errno != EINTR)) {
      closed_ = true;
    } else {
      break;
    }
  }
}

void H2Client::Received(const uint8_t* data, size_t length) {
  if (!first_frame_seen_) {
    first_bytes_.append(reinterpret_cast<const char*>(data), length);
    if (first_bytes_.size() < 9) return;
    const auto* header = reinterpret_cast<const uint8_t*>(first_bytes_.data());
    const size_t frame_length = (size_t{header[0]} << 16) | (size_t{header[1]} << 8) | header[2];
    if (header[3] == NGHTTP2_GOAWAY) {
      if (first_bytes_.size() < 9 + frame_length) return;
      const uint8_t* payload = header + 9;
      goaway_ = true;
      goaway_error_ = (uint32_t{payload[4]} << 24) | (uint32_t{payload[5]} << 16) |
                      (uint32_t{payload[6]} << 8) | payload[7];
      goaway_debug_.assign(reinterpret_cast<const char*>(payload + 8), frame_length - 8);
      closed_ = true;
      return;
    }
    first_frame_seen_ = true;
    const std::string pending = std::move(first_bytes_);
    if (nghttp2_session_mem_recv(session_, reinterpret_cast<const uint8_t*>(pending.data()),
                                 pending.size()) < 0) {
      closed_ = true;
    }
    return;
  }
  if (nghttp2_session_mem_recv(session_, data, length) < 0) closed_ = true;
}

bool H2Client::Flush(absl::Duration limit) {
  const absl::Time until = absl::Now() + limit;
  while (Pump(absl::ZeroDuration()) && nghttp2_session_want_write(session_)) {
    if (absl::Now() > until) break;
    Pump(absl::Milliseconds(10));
  }
  return !closed_;
}

ssize_t H2Client::SendCallback(nghttp2_session*, const uint8_t* data, size_t length, int,
                               void* self) {
  const ssize_t sent = send(static_cast<H2Client*>(self)->fd_, data, length, MSG_NOSIGNAL);
  if (sent >= 0) return sent;
  if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) return NGHTTP2_ERR_WOULDBLOCK;
  return NGHTTP2_ERR_CALLBACK_FAILURE;
}

int H2Client::OnFrameRecv(nghttp2_session*, const nghttp2_frame* frame, void* self) {
  auto* client = static_cast<H2Client*>(self);
  if (frame->hd.type == NGHTTP2_SETTINGS && !(frame->hd.flags & NGHTTP2_FLAG_ACK)) {
    client->settings_received_ = true;
  }
  if (frame->hd.type == NGHTTP2_GOAWAY) {
    client->goaway_ = true;
    client->goaway_error_ = frame->goaway.error_code;
    client->goaway_debug_.assign(reinterpret_cast<const char*>(frame->goaway.opaque_data),
                                 frame->goaway.opaque_data_len);
  }
  return 0;
}

int H2Client::OnStreamClose(nghttp2_session*, int32_t stream, uint32_t, void* self) {
  auto* client = static_cast<H2Client*>(self);
  auto it = client->bodies_.find(stream);
  if (it != client->bodies_.end()) client->bodies_.erase(it);
  return 0;
}

int H2Client::OnHeader(nghttp2_session*, const nghttp2_frame* frame, const uint8_t* name,
                       size_t name_length, const uint8_t* value, size_t value_length, uint8_t,
                       void* self) {
  auto* client = static_cast<H2Client*>(self);
  if (absl::string_view(reinterpret_cast<const char*>(name), name_length) == "grpc-status") {
    int status = -1;
    if (absl::SimpleAtoi(absl::string_view(reinterpret_cast<const char*>(value), value_length),
                         &status)) {
      client->statuses_[frame->hd.stream_id] = status;
      ++client->streams_ended_by_server_;
    }
  }
  return 0;
}

ssize_t H2Client::ReadBody(nghttp2_session*, int32_t stream, uint8_t* buffer, size_t length,
                           uint32_t* flags, nghttp2_data_source*, void* self) {
  auto* client = static_cast<H2Client*>(self);
  auto it = client->bodies_.find(stream);
  if (it == client->bodies_.end()) {
    *flags |= NGHTTP2_DATA_FLAG_EOF;
    return 0;
  }
  Body& body = it->second;
  size_t copied = 0;
  while (copied < length && !body.pieces.empty()) {
    const Piece& piece = body.pieces.front();
    const size_t take = std::min<uint64_t>(length - copied, piece.size() - body.offset);
    if (piece.zeros != 0) {
      std::memset(buffer + copied, 0, take);
    } else {
      std::memcpy(buffer + copied, piece.bytes.data() + body.offset, take);
    }
    copied += take;
    body.offset += take;
    if (body.offset == piece.size()) {
      body.pieces.pop_front();
      body.offset = 0;
    }
  }
  client->body_bytes_sent_ += copied;
  if (body.pieces.empty() && body.end) {
    *flags |= NGHTTP2_DATA_FLAG_EOF;
  } else if (copied == 0) {
    body.deferred = true;
    return NGHTTP2_ERR_DEFERRED;
  }
  return static_cast<ssize_t>(copied);
}

}  // namespace gpureduce::testing
