#pragma once

// Everything gpureduce-server is configured with (main.cc binds the flags to it).

#include <cstdint>
#include <string>

#include "absl/time/time.h"
#include "runtime/backend_factory.h"
#include "server/auth/server_credentials.h"
#include "server/connections/connection_gate.h"
#include "server/service_state.h"

namespace gpureduce::server {

// How the server treats connections, as gRPC channel arguments. Zero turns a bound off (the
// age grace: no grace).
struct ConnectionPolicy {
  // Ping a connection that has calls this often, and close it when a ping is not answered
  // within the timeout: a vanished client's calls end instead of holding their slots.
  absl::Duration keepalive_time = absl::Minutes(1);
  absl::Duration keepalive_timeout = absl::Seconds(20);
  // Clients that ping more often than this (without data) get strikes and, after two, a GOAWAY
  // (too_many_pings), so a client cannot keep the server busy answering pings.
  absl::Duration min_client_ping_interval = absl::Seconds(10);
  // A connection with no call for this long is closed: idle connections cost memory and fds.
  absl::Duration max_connection_idle = absl::Minutes(5);
  // Every connection is closed (GOAWAY, jittered by gRPC) after this long, so clients reconnect
  // and a load balancer can spread them over new replicas; calls in progress get the grace.
  absl::Duration max_connection_age = absl::Minutes(30);
  absl::Duration max_connection_age_grace = absl::Minutes(5);
  // Calls (HTTP/2 streams) one connection may have open; further calls wait in the client.
  // gRPC reads a unary request's whole message before the service sees the call, refused or
  // not, so this is what bounds the memory a connection's arriving requests take. 0: the
  // per-client admission limit, more than which could not run at once anyway.
  uint32_t max_streams_per_connection = 0;
};

struct ServerConfig {
  std::string listen = "127.0.0.1:50051";
  // Also serve on this Unix-domain socket (--listen-unix), for clients on the server's host;
  // empty: none. Its connections are gRPC's own, outside the connection gate (listener.h).
  std::string listen_unix;
  // From the backend flags (server/backend_flags.h); runtime.device.sessions follows
  // limits.max_concurrent_requests.
  runtime::BackendOptions runtime;
  ServiceLimits limits;
  RegionLimits shared_memory;  // off unless --allow-shared-memory
  ConnectionPolicy connections;
  ConnectionLimits connection_limits;
  // gRPC grows a connection's receive window to its bandwidth-delay estimate, which on loopback
  // reaches tens of MiB per connection and varies run to run; off, each stream reads about one
  // message ahead of the reactor and server memory stays fixed (docs/architecture.md).
  bool bdp_probe = false;
  std::string log_level = "info";
  absl::Duration grace_period = absl::Seconds(10);
  std::string port_file;  // where to write the bound port (useful with --listen=...:0)
  // Prometheus metrics over HTTP at /metrics on this HOST:PORT; empty: not served.
  std::string metrics_listen;
  std::string metrics_port_file;                      // where to write the metrics port
  TlsFiles tls;                                       // empty: plaintext
  std::string auth_token_file;                        // empty: no tokens asked for
  absl::Duration ready_delay = absl::ZeroDuration();  // hold NOT_SERVING this long after start
};

}  // namespace gpureduce::server
