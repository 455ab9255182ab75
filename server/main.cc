// gpureduce-server: serves gpureduce.v1.Reducer on the CPU or a GPU.

#include <cstdio>
#include <string>

#include "absl/debugging/failure_signal_handler.h"
#include "absl/debugging/symbolize.h"
#include "common/flags.h"
#include "common/malloc_tuning.h"
#include "common/mutex_tuning.h"
#include "server/backend_flags.h"
#include "server/server_app.h"
#include "server/server_config.h"
#include "spdlog/spdlog.h"

int main(int argc, char** argv) {
  // On a fatal signal: the signal and a symbolized stack trace on stderr, then the default
  // action (the core dump or the exit status), so a crash in production leaves more than its
  // exit code.
  absl::InitializeSymbolizer(argv[0]);
  absl::InstallFailureSignalHandler(absl::FailureSignalHandlerOptions());
  gpureduce::TuneMallocForLargeMessages();
  gpureduce::SkipMutexDeadlockDetection();
  gpureduce::server::ServerConfig config;
  gpureduce::server::BackendFlags backend_flags;
  std::string shared_memory_peers = "local";
  gpureduce::FlagSet flags(
      "gpureduce-server", "gpureduce-server [flags]",
      "Serves reductions of float32 arrays over gRPC (gpureduce.v1.Reducer, grpc.health.v1, "
      "server reflection). Stops on SIGINT or SIGTERM after in-flight requests finish.");
  flags.AddString("listen", &config.listen,
                  "address to listen on; port 0 picks a free port (see --port-file)", "HOST:PORT");
  flags.AddString("listen-unix", &config.listen_unix,
                  "also listen on this Unix-domain socket, for clients on this host (targets "
                  "unix:PATH; the Python client sends its shared-memory calls there itself): "
                  "no TCP on the way. Who may connect is the socket file's permissions (the "
                  "umask's; put it in a directory only its clients can reach); its connections "
                  "share one client's --max-requests-per-client and are outside the "
                  "--max-connections* bounds and the per-connection memory guard",
                  "PATH");
  backend_flags.Register(flags);
  flags.AddByteSize("max-request-bytes", &config.limits.max_request_bytes,
                    "largest payload of a unary Reduce; larger arrays must use ReduceStream");
  flags.AddByteSize("max-chunk-bytes", &config.limits.max_chunk_bytes,
                    "largest payload of one ReduceStream message");
  flags.AddByteSize("max-result-bytes", &config.limits.max_result_bytes,
                    "largest answer of a request with axes or segments (its results, and the "
                    "accumulators it keeps open); larger are refused up front");
  flags.AddUint32("max-concurrent-requests", &config.limits.max_concurrent_requests,
                  "requests in progress at once; beyond it RESOURCE_EXHAUSTED");
  flags.AddUint32("max-requests-per-client", &config.limits.max_requests_per_client,
                  "requests in progress at once from one client address (peer IP, port "
                  "ignored; clients behind one proxy share it); beyond it RESOURCE_EXHAUSTED; 0 "
                  "picks three quarters of --max-concurrent-requests");
  flags.AddDuration("stream-idle-timeout", &config.limits.stream_idle_timeout,
                    "end a Reduce or ReduceStream (CANCELLED) whose next message has not "
                    "arrived in full this long after the server began waiting for it; 0: never");
  flags.AddDuration("stream-idle-timeout-when-full", &config.limits.stream_idle_timeout_when_full,
                    "the same while the server is full (it refused a call for that in the last "
                    "two of these), so slots held by stalled clients come back to those that "
                    "send; 0: as --stream-idle-timeout");
  flags.AddUint32("max-connections", &config.connection_limits.max_connections,
                  "TCP connections open at once; beyond it a new one is closed at once (a "
                  "GOAWAY saying why, then the close); 0: no bound");
  flags.AddUint32("max-connections-per-client",
                  &config.connection_limits.max_connections_per_client,
                  "TCP connections open at once from one client address; beyond it the same; 0: "
                  "no bound");
  flags.AddDouble("max-cancelled-calls-per-second",
                  &config.connection_limits.cancelled_calls_per_second,
                  "a connection whose client cancels calls faster than this, for longer than a "
                  "burst of 5 seconds' worth (at least 1000), is closed with a GOAWAY (rapid "
                  "reset); 0: any rate. A connection with more calls in the server than four times "
                  "--max-streams-per-connection and 64 is closed the same way, at any rate");
  flags.AddDuration("eviction-cooldown", &config.connection_limits.eviction_cooldown,
                    "after a connection is closed for abuse, new connections from its address "
                    "are refused this long; 0: none");
  flags.AddBool("allow-shared-memory", &config.shared_memory.enabled,
                "let clients on this host register POSIX shared-memory objects and CUDA IPC "
                "allocations that the server then reads in place (docs/shared-memory.md); off, "
                "those RPCs answer PERMISSION_DENIED");
  flags.AddChoice("shared-memory-peers", &shared_memory_peers, {"local", "any"},
                  "who may use shared memory: 'local' clients (loopback addresses, Unix sockets) "
                  "or 'any' (containers sharing this host's IPC namespace over a bridge network)");
  flags.AddString("shared-memory-key-prefix", &config.shared_memory.key_prefix,
                  "map only POSIX objects whose names start with this (e.g. /gpureduce-, what "
                  "the CLI and the load tester create); empty: any object the server's user can "
                  "read",
                  "PREFIX");
  flags.AddUint32("shared-memory-max-regions", &config.shared_memory.max_regions,
                  "shared-memory regions registered at once; beyond it RESOURCE_EXHAUSTED");
  flags.AddByteSize("shared-memory-max-bytes", &config.shared_memory.max_total_bytes,
                    "total bytes of the shared-memory regions registered at once (system "
                    "regions are pinned: this bounds the host memory they lock); beyond it "
                    "RESOURCE_EXHAUSTED");
  flags.AddDuration("keepalive-time", &config.connections.keepalive_time,
                    "ping connections that have calls this often; 0: never");
  flags.AddDuration("keepalive-timeout", &config.connections.keepalive_timeout,
                    "close a connection whose ping is not answered within this; 0: never");
  flags.AddDuration("min-client-ping-interval", &config.connections.min_client_ping_interval,
                    "clients pinging more often (without data) get a GOAWAY after two strikes; "
                    "0: any rate");
  flags.AddDuration("max-connection-idle", &config.connections.max_connection_idle,
                    "close connections that have had no call for this long; 0: never");
  flags.AddDuration("max-connection-age", &config.connections.max_connection_age,
                    "close every connection after about this long (GOAWAY, jittered), so "
                    "clients reconnect and load balancers can rebalance; 0: never");
  flags.AddDuration("max-connection-age-grace", &config.connections.max_connection_age_grace,
                    "how long calls in progress may run on a connection closed for its age; 0: "
                    "none");
  flags.AddUint32("max-streams-per-connection", &config.connections.max_streams_per_connection,
                  "calls one connection may have open at once (HTTP/2 MAX_CONCURRENT_STREAMS); "
                  "more wait in the client; 0 picks twice --max-requests-per-client, so calls "
                  "beyond that are refused, not queued");
  flags.AddBool("bdp-probe", &config.bdp_probe,
                "let gRPC grow each connection's receive window to its bandwidth-delay estimate: "
                "faster for small stream chunks (64KiB), but server memory then grows with the "
                "estimate instead of staying fixed, and the memory guard keeps no byte account "
                "(it still meets rapid reset): for trusted clients");
  flags.AddChoice("log-level", &config.log_level,
                  {"trace", "debug", "info", "warn", "error", "critical", "off"},
                  "log verbosity; debug logs one line per request");
  flags.AddDuration("grace-period", &config.grace_period,
                    "how long in-flight requests may run on after SIGINT/SIGTERM");
  flags.AddString("port-file", &config.port_file,
                  "write the bound port to this file once listening", "PATH");
  flags.AddString("metrics-listen", &config.metrics_listen,
                  "serve Prometheus metrics at http://HOST:PORT/metrics (port 0 picks a free "
                  "one); empty: no metrics endpoint",
                  "HOST:PORT");
  flags.AddString("metrics-port-file", &config.metrics_port_file,
                  "write the metrics port to this file once listening", "PATH");
  flags.AddString("tls-cert", &config.tls.cert,
                  "serve TLS with this PEM certificate chain (with --tls-key); plaintext clients "
                  "are then refused",
                  "PATH");
  flags.AddString("tls-key", &config.tls.key, "the PEM private key of --tls-cert", "PATH");
  flags.AddString("tls-client-ca", &config.tls.client_ca,
                  "mutual TLS: require a client certificate signed by this PEM CA bundle", "PATH");
  flags.AddString("auth-token-file", &config.auth_token_file,
                  "Reducer calls must carry 'authorization: Bearer <token>' with a token from "
                  "this file (one per line, '#' comments): UNAUTHENTICATED without one, "
                  "PERMISSION_DENIED for another; health and reflection stay open for probes",
                  "PATH");
  flags.AddDuration("ready-delay", &config.ready_delay,
                    "stay NOT_SERVING this long before the self-check (to test readiness probes)");

  // Every flag may also come from GPUREDUCE_<FLAG> (containers, Kubernetes); the command line
  // wins. The client tools do not read the environment: a container that gives its server a TLS
  // certificate in GPUREDUCE_TLS_CERT would otherwise hand it to its health check's client.
  flags.SetEnvironmentPrefix(gpureduce::kEnvironmentPrefix);
  if (absl::Status parsed = flags.Parse(argc, argv); !parsed.ok()) {
    std::fprintf(stderr, "gpureduce-server: %s\nRun gpureduce-server --help for usage.\n",
                 std::string(parsed.message()).c_str());
    return 2;
  }
  if (flags.help_requested()) {
    std::fputs(flags.Help().c_str(), stdout);
    return 0;
  }
  config.shared_memory.any_peer = shared_memory_peers == "any";
  if (!flags.positional().empty()) {
    std::fprintf(stderr, "gpureduce-server: unexpected argument '%s'\n",
                 flags.positional().front().c_str());
    return 2;
  }
  absl::StatusOr<gpureduce::runtime::BackendOptions> backend = backend_flags.Options();
  if (!backend.ok()) {
    std::fprintf(stderr, "gpureduce-server: %s\nRun gpureduce-server --help for usage.\n",
                 std::string(backend.status().message()).c_str());
    return 2;
  }
  config.runtime = *std::move(backend);
  // No system region can reach the server without shared memory: nothing to split, nothing to
  // measure at the self-check.
  if (!config.shared_memory.enabled) config.runtime.host_regions = false;
  if (config.limits.max_concurrent_requests == 0 || config.limits.max_request_bytes == 0 ||
      config.limits.max_chunk_bytes == 0 || config.runtime.device.staging_buffers == 0 ||
      config.runtime.device.staging_buffer_bytes < 4096) {
    std::fprintf(stderr,
                 "gpureduce-server: limits and staging buffers must be positive (staging "
                 "buffers at least 4KiB)\n");
    return 2;
  }
  for (const auto& [flag, idle] :
       {std::pair{"--stream-idle-timeout", config.limits.stream_idle_timeout},
        std::pair{"--stream-idle-timeout-when-full",
                  config.limits.stream_idle_timeout_when_full}}) {
    if (idle != absl::ZeroDuration() && idle < absl::Milliseconds(100)) {
      std::fprintf(stderr, "gpureduce-server: %s must be 0 or at least 100ms, not %s\n", flag,
                   absl::FormatDuration(idle).c_str());
      return 2;
    }
  }
  if (config.limits.max_requests_per_client > config.limits.max_concurrent_requests) {
    std::fprintf(stderr,
                 "gpureduce-server: --max-requests-per-client (%u) cannot exceed "
                 "--max-concurrent-requests (%u)\n",
                 config.limits.max_requests_per_client, config.limits.max_concurrent_requests);
    return 2;
  }
  spdlog::set_level(spdlog::level::from_str(config.log_level));
  if (const std::string warning = backend_flags.DeprecationWarning(); !warning.empty()) {
    spdlog::warn("{}", warning);
  }
  return gpureduce::server::RunServer(config);
}
