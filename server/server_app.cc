#include "server/server_app.h"

#include <signal.h>
#include <sys/resource.h>

#include <algorithm>
#include <fstream>
#include <memory>
#include <random>
#include <string>
#include <thread>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "common/fmt_absl.h"
#include "common/unix_socket.h"
#include "gpureduce/version.h"
#include "grpcpp/ext/proto_server_reflection_plugin.h"
#include "grpcpp/grpcpp.h"
#include "grpcpp/health_check_service_interface.h"
#include "runtime/backend_factory.h"
#include "server/auth/server_credentials.h"
#include "server/auth/token_authenticator.h"
#include "server/backend_flags.h"
#include "server/connections/call_tracker.h"
#include "server/connections/connection_gate.h"
#include "server/connections/listener.h"
#include "server/connections/memory_guard.h"
#include "server/memory_bound.h"
#include "server/metrics/connection_metrics.h"
#include "server/metrics/metrics_exposer.h"
#include "server/metrics/usage_collector.h"
#include "server/reducer_service.h"
#include "spdlog/spdlog.h"

namespace gpureduce::server {
namespace {

constexpr char kServiceName[] = "gpureduce.v1.Reducer";

int Millis(absl::Duration duration) {
  if (duration <= absl::ZeroDuration()) return INT32_MAX;  // gRPC's "never"
  return static_cast<int>(std::min<int64_t>(absl::ToInt64Milliseconds(duration), INT32_MAX));
}

void ApplyConnectionPolicy(const ConnectionPolicy& policy, grpc::ServerBuilder& builder) {
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_TIME_MS, Millis(policy.keepalive_time));
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, Millis(policy.keepalive_timeout));
  builder.AddChannelArgument(GRPC_ARG_HTTP2_MIN_RECV_PING_INTERVAL_WITHOUT_DATA_MS,
                             policy.min_client_ping_interval <= absl::ZeroDuration()
                                 ? 0
                                 : Millis(policy.min_client_ping_interval));
  builder.AddChannelArgument(GRPC_ARG_HTTP2_MAX_PING_STRIKES, 2);
  builder.AddChannelArgument(GRPC_ARG_MAX_CONNECTION_IDLE_MS, Millis(policy.max_connection_idle));
  builder.AddChannelArgument(GRPC_ARG_MAX_CONNECTION_AGE_MS, Millis(policy.max_connection_age));
  // No grace is none, not endless.
  builder.AddChannelArgument(GRPC_ARG_MAX_CONNECTION_AGE_GRACE_MS,
                             policy.max_connection_age_grace <= absl::ZeroDuration()
                                 ? 0
                                 : Millis(policy.max_connection_age_grace));
  builder.AddChannelArgument(GRPC_ARG_MAX_CONCURRENT_STREAMS,
                             int(std::min<uint32_t>(policy.max_streams_per_connection, INT32_MAX)));
}

// Each connection is a file descriptor; the soft limit (often 1024) would refuse connections
// long before memory runs short, so it is raised to the hard limit.
uint64_t RaiseFileLimit() {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0) return 0;
  if (limit.rlim_cur < limit.rlim_max) {
    rlimit raised = limit;
    raised.rlim_cur = limit.rlim_max;
    if (setrlimit(RLIMIT_NOFILE, &raised) == 0) return raised.rlim_cur;
  }
  return limit.rlim_cur;
}

void SetHealth(grpc::Server& server, bool serving) {
  grpc::HealthCheckServiceInterface* health = server.GetHealthCheckService();
  health->SetServingStatus(serving);
  health->SetServingStatus(kServiceName, serving);
}

bool WritePortFile(const std::string& path, int port) {
  std::ofstream out(path + ".tmp");
  out << port << "\n";
  out.close();
  return out && std::rename((path + ".tmp").c_str(), path.c_str()) == 0;
}

// Serves the metrics on --metrics-listen (nullptr when not asked for) and writes its port file.
absl::StatusOr<std::unique_ptr<MetricsExposer>> StartMetrics(const ServerConfig& config,
                                                             ServiceState& state) {
  if (config.metrics_listen.empty()) return nullptr;
  absl::StatusOr<std::unique_ptr<MetricsExposer>> metrics = MetricsExposer::Start(
      config.metrics_listen,
      {state.metrics.registry(),
       std::make_shared<UsageCollector>(state.backend, absl::StrCat(kVersion, "+", kGitCommit),
                                        &state.regions)});
  if (!metrics.ok()) return metrics.status();
  const std::string host = config.metrics_listen.substr(0, config.metrics_listen.rfind(':'));
  spdlog::info("metrics on http://{}:{}/metrics", host, (*metrics)->port());
  if (!config.metrics_port_file.empty() &&
      !WritePortFile(config.metrics_port_file, (*metrics)->port())) {
    return absl::UnavailableError(
        absl::StrCat("cannot write the metrics port file ", config.metrics_port_file));
  }
  return metrics;
}

// 128 random bits in hex: tells this server process from any other.
std::string NewInstanceId() {
  std::random_device random;
  std::string id;
  for (int i = 0; i < 4; ++i) id += fmt::format("{:08x}", random());
  return id;
}

}  // namespace

int RunServer(const ServerConfig& config) {
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  const uint64_t file_limit = RaiseFileLimit();

  runtime::BackendOptions backend_options = config.runtime;
  backend_options.device.sessions = config.limits.max_concurrent_requests;
  absl::StatusOr<std::unique_ptr<runtime::Backend>> backend =
      CreateBackendFromFlags(backend_options);
  if (!backend.ok()) {
    spdlog::critical("cannot start: {}", backend.status().message());
    return 1;
  }
  absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> credentials =
      MakeServerCredentials(config.tls);
  if (!credentials.ok()) {
    spdlog::critical("cannot start: {}", credentials.status().message());
    return 1;
  }
  std::unique_ptr<TokenAuthenticator> tokens;
  if (!config.auth_token_file.empty()) {
    absl::StatusOr<std::unique_ptr<TokenAuthenticator>> loaded =
        TokenAuthenticator::FromFile(config.auth_token_file);
    if (!loaded.ok()) {
      spdlog::critical("cannot start: {}", loaded.status().message());
      return 1;
    }
    tokens = std::move(*loaded);
  }
  ServiceState state(**backend, config.limits, config.shared_memory);
  state.tokens = tokens.get();
  ReducerService service(state);
  // Before the gRPC port opens, so a bad --metrics-listen never serves; declared after `state`,
  // so it stops serving before what it reads goes away.
  absl::StatusOr<std::unique_ptr<MetricsExposer>> metrics = StartMetrics(config, state);
  if (!metrics.ok()) {
    spdlog::critical("{}", metrics.status().message());
    return 1;
  }

  absl::StatusOr<Listener> listener = Listener::Open(config.listen);
  if (!listener.ok()) {
    spdlog::critical("{}", listener.status().message());
    return 1;
  }
  const int port = listener->port();
  if (!config.listen_unix.empty()) {
    absl::StatusOr<std::string> unix_socket = PrepareUnixSocket(config.listen_unix);
    if (!unix_socket.ok()) {
      spdlog::critical("cannot start: {}", unix_socket.status().message());
      return 1;
    }
    state.unix_socket = *std::move(unix_socket);
  }
  state.instance_id = NewInstanceId();
  ConnectionPolicy connections = config.connections;
  if (connections.max_streams_per_connection == 0) {
    connections.max_streams_per_connection = 2 * config.limits.PerClientLimit();
  }
  ConnectionLimits connection_limits = config.connection_limits;
  if (connection_limits.max_live_streams == 0) {
    connection_limits.max_live_streams =
        ConnectionLimits::LiveStreamsFor(connections.max_streams_per_connection);
  }
  connection_limits.account_bytes = !config.bdp_probe;
  ConnectionMetrics connection_metrics(*state.metrics.registry());
  ConnectionGate gate(connection_limits, connection_metrics, state.failures);
  state.gate = &gate;

  grpc::EnableDefaultHealthCheckService(true);
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  grpc::ServerBuilder builder;
  std::unique_ptr<grpc::experimental::ExternalConnectionAcceptor> acceptor =
      builder.experimental().AddExternalConnectionAcceptor(
          grpc::ServerBuilder::experimental_type::ExternalConnectionType::FROM_FD, *credentials);
  builder.SetMaxReceiveMessageSize(static_cast<int>(config.limits.TransportLimit()));
  // No compressed requests: the memory guard credits each message at the size gRPC hands over,
  // which for a compressed one is far more than it took on the wire (and float arrays hardly
  // compress). gRPC refuses such a call (UNIMPLEMENTED) before reading its message.
  builder.SetCompressionAlgorithmSupportStatus(GRPC_COMPRESS_DEFLATE, false);
  builder.SetCompressionAlgorithmSupportStatus(GRPC_COMPRESS_GZIP, false);
  builder.AddChannelArgument(GRPC_ARG_HTTP2_BDP_PROBE, config.bdp_probe ? 1 : 0);
  ApplyConnectionPolicy(connections, builder);
  std::vector<std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>> creators;
  creators.push_back(std::make_unique<CallTrackerFactory>(gate));
  builder.experimental().SetInterceptorCreators(std::move(creators));
  builder.RegisterService(&service);
  // gRPC's own listener: its connections carry no peer address for the gate to tell apart.
  if (!state.unix_socket.empty()) {
    builder.AddListeningPort("unix:" + state.unix_socket, *credentials);
  }
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (server == nullptr) {
    spdlog::critical("cannot start the gRPC server on {}{}", config.listen,
                     state.unix_socket.empty() ? "" : " and unix:" + state.unix_socket);
    return 1;
  }
  // However this function ends from here, the socket file goes with the server (unless a
  // replacement bound the path meanwhile).
  const BoundUnixSocket bound_socket(state.unix_socket);
  if (absl::Status started =
          gate.Start(*std::move(listener), std::move(acceptor), config.tls.cert.empty());
      !started.ok()) {
    spdlog::critical("{}", started.message());
    return 1;
  }
  MemoryGuard guard(gate);
  guard.Start();
  SetHealth(*server, false);
  grpc::Server* running = server.get();
  state.backend.set_on_lost([&state, running] {
    state.ready.store(false, std::memory_order_release);
    SetHealth(*running, false);
  });
  // Whatever way this function ends, nothing reports a lost device to the freed server.
  absl::Cleanup forget_lost = [&state] { state.backend.set_on_lost(nullptr); };
  if (!config.port_file.empty() && !WritePortFile(config.port_file, port)) {
    spdlog::critical("cannot write the port file {}", config.port_file);
    return 1;
  }
  const std::string host = config.listen.substr(0, config.listen.rfind(':'));
  spdlog::info("gpureduce-server {}+{} listening on {}:{}{}", kVersion, kGitCommit, host, port,
               state.unix_socket.empty() ? "" : " and unix:" + state.unix_socket);
  for (const runtime::DeviceDescription& device : state.backend.devices()) {
    spdlog::info("device {}: {}, {:.1f} GiB, {} {}{}", device.index, device.name,
                 device.memory_bytes / 1073741824.0, device.multiprocessors,
                 state.backend.kind() == kernels::BackendKind::kCpu ? "threads" : "SMs",
                 device.peak_bandwidth_gbps > 0
                     ? fmt::format(", {:.0f} GB/s peak, {} MiB L2", device.peak_bandwidth_gbps,
                                   device.l2_bytes >> 20)
                     : std::string());
  }
  spdlog::info("backend {}: {} workers; default kernel {}",
               kernels::BackendName(state.backend.kind()), state.backend.workers(),
               kernels::GetKernel(state.backend.default_kernel()).name);
  spdlog::info(
      "limits: unary {} bytes, stream chunk {} bytes, {} concurrent requests, {} per client, "
      "streams idle for {} ended",
      config.limits.max_request_bytes, config.limits.max_chunk_bytes,
      config.limits.max_concurrent_requests, config.limits.PerClientLimit(),
      config.limits.stream_idle_timeout > absl::ZeroDuration()
          ? absl::FormatDuration(config.limits.stream_idle_timeout)
          : std::string("never"));
  spdlog::info(
      "connections: {} calls each, keepalive ping every {} (timeout {}), client pings at most "
      "every {}, idle closed after {}, closed at age {} (grace {}); up to {} open files (two a "
      "connection)",
      connections.max_streams_per_connection, absl::FormatDuration(connections.keepalive_time),
      absl::FormatDuration(connections.keepalive_timeout),
      absl::FormatDuration(connections.min_client_ping_interval),
      absl::FormatDuration(connections.max_connection_idle),
      absl::FormatDuration(connections.max_connection_age),
      absl::FormatDuration(connections.max_connection_age_grace), file_limit);
  spdlog::info(
      "connections: at most {} open, {} from one address; a connection is evicted (GOAWAY) for "
      "more than {} calls in the server or calls cancelled faster than {}/s, and its address "
      "refused for {}",
      connection_limits.max_connections, connection_limits.max_connections_per_client,
      connection_limits.max_live_streams, connection_limits.cancelled_calls_per_second,
      absl::FormatDuration(connection_limits.eviction_cooldown));
  const MemoryBound bound =
      WorstCaseMemory(config.limits, connection_limits, connections.max_streams_per_connection);
  spdlog::info(
      "memory: clients can make the server hold at most about {} MiB more than at rest ({} MiB "
      "for admitted calls, {} MiB for connections, {} MiB for the guard's reaction, and what "
      "the network delivers in 10 ms; docs/reliability.md)",
      bound.total() >> 20, bound.admitted >> 20, bound.connections >> 20, bound.guard >> 20);
  if (!state.unix_socket.empty()) {
    // gRPC's own listener: the gate and the guard see no connection of it (listener.h).
    spdlog::warn(
        "unix:{} is outside the bound above: its connections are gRPC's own, which the "
        "connection limits and the memory guard do not see (per-call limits hold); let only "
        "trusted local clients reach it (the socket file's permissions)",
        state.unix_socket);
  }
  if (config.bdp_probe) {
    // The bound and the guard's byte account assume gRPC's 64 KiB initial window, which the
    // probe grows toward its estimate (up to 1 GiB): the account is off (account_bytes above).
    spdlog::warn(
        "gRPC BDP probe on (--bdp-probe): streams' initial windows follow its estimate, so the "
        "memory bound above does not hold, and the memory guard does not account connections' "
        "bytes (a message longer than its limit is refused only once it has arrived); rapid "
        "reset is still met");
  } else {
    spdlog::info("gRPC BDP probe off");
  }
  spdlog::info("transport {}; {}", DescribeTransport(config.tls),
               tokens != nullptr
                   ? fmt::format("Reducer calls need a bearer token ({} accepted; health and "
                                 "reflection stay open)",
                                 tokens->size())
                   : std::string("no token asked for"));

  // Readiness runs beside the signal wait so that a signal during --ready-delay is not delayed.
  absl::Notification stopping;
  std::thread readiness([&] {
    if (stopping.WaitForNotificationWithTimeout(config.ready_delay)) return;
    if (absl::Status check = state.backend.SelfCheck(); !check.ok()) {
      spdlog::error("self-check failed, staying NOT_SERVING: {}", check.message());
      return;
    }
    state.ready.store(true, std::memory_order_release);
    SetHealth(*server, true);
    spdlog::info("self-check passed: SERVING");
  });

  int signal_number = 0;
  sigwait(&signals, &signal_number);
  spdlog::info("{} received: no new requests; draining in-flight ones for up to {}",
               strsignal(signal_number), absl::FormatDuration(config.grace_period));
  stopping.Notify();
  readiness.join();
  state.ready.store(false, std::memory_order_release);
  SetHealth(*server, false);
  gate.StopAccepting();
  server->Shutdown(std::chrono::system_clock::now() +
                   absl::ToChronoNanoseconds(config.grace_period));
  spdlog::info("stopped");
  return 0;
}

}  // namespace gpureduce::server
