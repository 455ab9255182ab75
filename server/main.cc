// gpureduce-server: serves gpureduce.v1.Reducer on the CPU or a GPU.

#include <cstdio>
#include <string>

#include "common/crash_handler.h"
#include "common/flags.h"
#include "common/malloc_tuning.h"
#include "server/server_app.h"
#include "server/server_config.h"
#include "spdlog/spdlog.h"

int main(int argc, char** argv) {
  gpureduce::InstallCrashHandler("gpureduce-server");
  gpureduce::TuneMallocForLargeMessages();
  gpureduce::server::ServerConfig config;
  gpureduce::FlagSet flags(
      "gpureduce-server", "gpureduce-server [flags]",
      "Serves reductions of float32 arrays over gRPC (gpureduce.v1.Reducer, grpc.health.v1, "
      "server reflection). Stops on SIGINT or SIGTERM after in-flight requests finish.");
  flags.AddString("listen", &config.listen,
                  "address to listen on; port 0 picks a free port (see --port-file)", "HOST:PORT");
  flags.AddChoice("backend", &config.runtime.kind, {"auto", "cpu", "cuda"},
                  "compute backend: auto takes the GPU when there is one, else the CPU");
  flags.AddUint32("worker-threads", &config.runtime.worker_threads,
                  "CPU backend threads, and those of the CUDA backend's CPU path (see "
                  "--auto-cpu-below); 0 means one per hardware thread");
  flags.AddString("devices", &config.runtime.devices, "GPUs to own: all, or indices such as 0,1",
                  "LIST");
  flags.AddUint32("streams", &config.runtime.streams,
                  "CUDA streams per GPU; 0 picks twice the copy engines (at least 4)");
  flags.AddUint32("staging-buffers", &config.runtime.staging_buffers,
                  "pinned staging buffers per GPU; requests beyond them wait for one");
  flags.AddByteSize("staging-buffer-bytes", &config.runtime.staging_buffer_bytes,
                    "size of each staging buffer (pinned host and device); larger chunks are "
                    "sent in pieces");
  flags.AddUint32("copy-threads", &config.runtime.copy_threads,
                  "threads per GPU that copy chunks into pinned staging memory (a few GB/s "
                  "each); 0 picks half the hardware threads, at least 4");
  flags.AddByteSize("auto-cpu-below", &config.runtime.auto_cpu_below_bytes,
                    "CUDA backend: `auto` requests smaller than this (unary, or streams that "
                    "declare expected_count) are reduced on the CPU, where a copy and a launch "
                    "cost more than the reduction; the response names the kernel that ran; 0: "
                    "all on the GPU");
  flags.AddByteSize("max-request-bytes", &config.limits.max_request_bytes,
                    "largest payload of a unary Reduce; larger arrays must use ReduceStream");
  flags.AddByteSize("max-chunk-bytes", &config.limits.max_chunk_bytes,
                    "largest payload of one ReduceStream message");
  flags.AddUint32("max-concurrent-requests", &config.limits.max_concurrent_requests,
                  "requests in progress at once; beyond it RESOURCE_EXHAUSTED");
  flags.AddBool("bdp-probe", &config.bdp_probe,
                "let gRPC grow each connection's receive window to its bandwidth-delay estimate: "
                "faster for small stream chunks (64KiB), but server memory then grows with the "
                "estimate instead of staying fixed");
  flags.AddChoice("log-level", &config.log_level,
                  {"trace", "debug", "info", "warn", "error", "critical", "off"},
                  "log verbosity; debug logs one line per request");
  flags.AddDuration("grace-period", &config.grace_period,
                    "how long in-flight requests may run on after SIGINT/SIGTERM");
  flags.AddString("port-file", &config.port_file,
                  "write the bound port to this file once listening", "PATH");
  flags.AddDuration("ready-delay", &config.ready_delay,
                    "stay NOT_SERVING this long before the self-check (to test readiness probes)");

  if (absl::Status parsed = flags.Parse(argc, argv); !parsed.ok()) {
    std::fprintf(stderr, "gpureduce-server: %s\nRun gpureduce-server --help for usage.\n",
                 std::string(parsed.message()).c_str());
    return 2;
  }
  if (flags.help_requested()) {
    std::fputs(flags.Help().c_str(), stdout);
    return 0;
  }
  if (!flags.positional().empty()) {
    std::fprintf(stderr, "gpureduce-server: unexpected argument '%s'\n",
                 flags.positional().front().c_str());
    return 2;
  }
  if (config.limits.max_concurrent_requests == 0 || config.limits.max_request_bytes == 0 ||
      config.limits.max_chunk_bytes == 0 || config.runtime.staging_buffers == 0 ||
      config.runtime.staging_buffer_bytes < 4096) {
    std::fprintf(stderr,
                 "gpureduce-server: limits and staging buffers must be positive (staging "
                 "buffers at least 4KiB)\n");
    return 2;
  }
  spdlog::set_level(spdlog::level::from_str(config.log_level));
  return gpureduce::server::RunServer(config);
}
