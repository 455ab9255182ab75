#include "client/cli/info_commands.h"

#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "client/cli/command.h"
#include "client/cli/json.h"
#include "client/cli/simple_command.h"
#include "client/reducer_client.h"
#include "common/byte_size.h"
#include "common/status_macros.h"
#include "wire/op_mapping.h"

namespace gpureduce::cli {
namespace {

std::string OpList(const v1::KernelInfo& kernel) {
  std::vector<std::string> names;
  for (int op : kernel.ops()) names.push_back(wire::OpName(op));
  return absl::StrJoin(names, ",");
}

std::string BlockSizes(const v1::KernelInfo& kernel) {
  if (kernel.max_block_size() == 0) return "-";
  return absl::StrFormat("%d (%d-%d)", kernel.default_block_size(), kernel.min_block_size(),
                         kernel.max_block_size());
}

std::string NsPerElement(double ns) {
  return ns >= 1000 ? absl::StrFormat("%.4g us", ns / 1000) : absl::StrFormat("%.4g ns", ns);
}

std::string KernelsText(const v1::ListKernelsResponse& response) {
  std::string out = absl::StrFormat("%-24s %-7s %-13s %-16s %s\n", "KERNEL", "BACKEND",
                                    "DETERMINISTIC", "BLOCK", "OPS");
  for (const v1::KernelInfo& kernel : response.kernels()) {
    absl::StrAppendFormat(&out, "%-24s %-7s %-13s %-16s %s\n", kernel.name(), kernel.backend(),
                          kernel.deterministic() ? "yes" : "no", BlockSizes(kernel),
                          OpList(kernel));
    absl::StrAppendFormat(&out, "    %s\n", kernel.description());
    if (!kernel.lineage().empty()) absl::StrAppendFormat(&out, "    seeds: %s\n", kernel.lineage());
    for (const v1::WorkBound& bound : kernel.bounds()) {
      absl::StrAppendFormat(&out, "    %s: at most %d elements per request (%s per element: %s)\n",
                            wire::OpName(bound.op()), bound.max_elements(),
                            NsPerElement(bound.ns_per_element()), bound.why());
    }
  }
  absl::StrAppendFormat(&out, "auto -> %s\n", response.default_kernel());
  return out;
}

std::string KernelsJson(const v1::ListKernelsResponse& response) {
  Json kernels = Json::array();
  for (const v1::KernelInfo& kernel : response.kernels()) {
    Json ops = Json::array();
    for (int op : kernel.ops()) ops.push_back(wire::OpName(op));
    Json bounds = Json::array();
    for (const v1::WorkBound& bound : kernel.bounds()) {
      bounds.push_back({{"op", wire::OpName(bound.op())},
                        {"max_elements", bound.max_elements()},
                        {"elements_per_launch", bound.elements_per_launch()},
                        {"ns_per_element", JsonNumber(bound.ns_per_element())},
                        {"why", bound.why()}});
    }
    kernels.push_back({{"name", kernel.name()},
                       {"backend", kernel.backend()},
                       {"description", kernel.description()},
                       {"lineage", kernel.lineage()},
                       {"ops", std::move(ops)},
                       {"deterministic", kernel.deterministic()},
                       {"default_block_size", kernel.default_block_size()},
                       {"min_block_size", kernel.min_block_size()},
                       {"max_block_size", kernel.max_block_size()},
                       {"bounds", std::move(bounds)}});
  }
  return JsonLine({{"kernels", std::move(kernels)}, {"default_kernel", response.default_kernel()}});
}

std::string InfoText(const v1::ServerInfo& info, const std::string& target) {
  std::string out =
      absl::StrFormat("server %s at %s: %s%s, backend %s\n", info.version(), target,
                      info.serving() ? "SERVING" : "NOT SERVING",
                      info.degraded() ? " (degraded: a device is lost)" : "", info.backend());
  for (const v1::DeviceInfo& device : info.devices()) {
    absl::StrAppendFormat(&out, "device %d: %s, %s memory, %d %s", device.index(), device.name(),
                          FormatByteSize(device.memory_bytes()), device.multiprocessors(),
                          info.backend() == "cpu" ? "threads" : "SMs");
    if (device.peak_bandwidth_gbps() > 0) {
      absl::StrAppendFormat(&out, ", %.0f GB/s peak", device.peak_bandwidth_gbps());
    }
    if (device.lost()) {
      out += "; LOST (out of rotation)";
    } else if (device.requests() > 0) {
      absl::StrAppendFormat(&out, "; %d requests running, %s outstanding", device.requests(),
                            FormatByteSize(device.outstanding_bytes()));
    }
    out += "\n";
  }
  absl::StrAppendFormat(
      &out, "limits: unary %s, stream chunk %s, %d concurrent requests, %d workers\n",
      FormatByteSize(info.max_request_bytes()), FormatByteSize(info.max_chunk_bytes()),
      info.max_concurrent_requests(), info.worker_threads());
  absl::StrAppendFormat(&out, "shared memory: %s\n",
                        info.shared_memory()
                            ? "accepted (gpureduce reduce --shared-memory)"
                            : "off (the server runs without --allow-shared-memory)");
  if (!info.unix_socket().empty()) {
    absl::StrAppendFormat(&out, "unix socket: %s (for clients on its host: --target unix:%s)\n",
                          info.unix_socket(), info.unix_socket());
  }
  return out;
}

std::string InfoJson(const v1::ServerInfo& info) {
  Json devices = Json::array();
  for (const v1::DeviceInfo& device : info.devices()) {
    devices.push_back({{"index", device.index()},
                       {"name", device.name()},
                       {"memory_bytes", device.memory_bytes()},
                       {"multiprocessors", device.multiprocessors()},
                       {"peak_bandwidth_gbps", JsonNumber(device.peak_bandwidth_gbps())},
                       {"requests", device.requests()},
                       {"outstanding_bytes", device.outstanding_bytes()},
                       {"lost", device.lost()}});
  }
  return JsonLine({{"version", info.version()},
                   {"backend", info.backend()},
                   {"serving", info.serving()},
                   {"degraded", info.degraded()},
                   {"devices", std::move(devices)},
                   {"max_request_bytes", info.max_request_bytes()},
                   {"max_chunk_bytes", info.max_chunk_bytes()},
                   {"max_concurrent_requests", info.max_concurrent_requests()},
                   {"worker_threads", info.worker_threads()},
                   {"shared_memory", info.shared_memory()},
                   {"unix_socket", info.unix_socket()},
                   {"instance_id", info.instance_id()}});
}

}  // namespace

int RunKernels(int argc, char** argv) {
  FlagSet flags("gpureduce kernels", "gpureduce kernels [flags]",
                "Lists the kernels the server can run now: ops, determinism, block sizes.");
  return RunSimpleCommand({.name = "kernels"}, flags, argc, argv,
                          [](client::ReducerClient& reducer, const client::CallOptions& options,
                             const std::string&) -> absl::StatusOr<Answer> {
                            ASSIGN_OR_RETURN(const v1::ListKernelsResponse response,
                                             reducer.ListKernels(options));
                            return Answer{KernelsText(response), KernelsJson(response)};
                          });
}

int RunInfo(int argc, char** argv) {
  FlagSet flags("gpureduce info", "gpureduce info [flags]",
                "Shows the server's version, backend, devices and limits.");
  return RunSimpleCommand({.name = "info"}, flags, argc, argv,
                          [](client::ReducerClient& reducer, const client::CallOptions& options,
                             const std::string& target) -> absl::StatusOr<Answer> {
                            ASSIGN_OR_RETURN(const v1::ServerInfo info,
                                             reducer.GetServerInfo(options));
                            return Answer{InfoText(info, target), InfoJson(info)};
                          });
}

int RunHealth(int argc, char** argv) {
  std::string service;
  absl::Duration wait = absl::ZeroDuration();
  FlagSet flags("gpureduce health", "gpureduce health [flags]",
                "Asks grpc.health.v1 whether the server is SERVING. Exits 0 when it is, 1 when "
                "it is not (or cannot be reached).");
  flags.AddString("service", &service, "service to ask about; empty means the whole server",
                  "NAME");
  flags.AddDuration("wait", &wait, "keep asking until SERVING or this much time has passed");
  return RunSimpleCommand({.name = "health", .default_timeout = absl::Seconds(5)}, flags, argc,
                          argv,
                          [&](client::ReducerClient& reducer, const client::CallOptions& options,
                              const std::string& target) -> absl::StatusOr<Answer> {
                            const absl::Time give_up = absl::Now() + wait;
                            absl::StatusOr<bool> serving;
                            while (true) {
                              serving = reducer.IsServing(service, options);
                              if ((serving.ok() && *serving) || absl::Now() >= give_up) break;
                              absl::SleepFor(absl::Milliseconds(100));
                            }
                            if (!serving.ok()) return serving.status();
                            const char* state = *serving ? "SERVING" : "NOT_SERVING";
                            return Answer{absl::StrFormat("%s %s\n", target, state),
                                          JsonLine({{"status", state}, {"target", target}}),
                                          *serving ? kExitOk : kExitServerRefused};
                          });
}

}  // namespace gpureduce::cli
