// gpureduce-load: a load generator for gpureduce-server, and the bare gRPC sink every service
// figure is a ratio to.

#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "client/load/load_flags.h"
#include "client/load/load_report.h"
#include "client/load/load_runner.h"
#include "client/load/shared_payload.h"
#include "client/load/sink_service.h"
#include "client/load/workload.h"
#include "common/flags.h"
#include "common/json_flag.h"
#include "common/malloc_tuning.h"
#include "common/mutex_tuning.h"
#include "wire/op_mapping.h"

namespace gpureduce::client {
namespace {

constexpr int kExitUsage = 2;

int Usage(FlagSet& flags, absl::Status parsed) {
  std::fprintf(stderr, "%s: %s\nRun '%s --help' for usage.\n", flags.name().c_str(),
               std::string(parsed.message()).c_str(), flags.name().c_str());
  return kExitUsage;
}

// Parses argv[first, argc); -1 to go on, else the exit code (help: 0, a usage error: 2).
int ParseFlags(FlagSet& flags, int argc, char** argv, int first) {
  if (absl::Status parsed = flags.Parse(argc, argv, first); !parsed.ok()) {
    return Usage(flags, parsed);
  }
  if (flags.help_requested()) {
    std::fputs(flags.Help().c_str(), stdout);
    return 0;
  }
  if (!flags.positional().empty()) {
    return Usage(flags, absl::InvalidArgumentError("unexpected argument '" +
                                                   flags.positional().front() + "'"));
  }
  return -1;
}

// --tolerance 0: the kernel's, by what the server lists about it. A server that cannot say (one
// not reachable: the run reports that) leaves the float64 bound.
double ToleranceFromServer(const LoadOptions& load, const WorkloadOptions& work) {
  absl::StatusOr<std::unique_ptr<ReducerClient>> client =
      ReducerClient::Connect(load.target, load.security);
  if (!client.ok()) return kFloat64Tolerance;
  CallOptions options;
  options.timeout = absl::Seconds(10);
  absl::StatusOr<v1::ListKernelsResponse> listing = (*client)->ListKernels(options);
  if (!listing.ok()) {
    std::fprintf(stderr, "gpureduce-load: warning: the server did not list its kernels (%s)\n",
                 listing.status().ToString().c_str());
    return kFloat64Tolerance;
  }
  return KernelTolerance(work.kernel, *listing);
}

int RunSinkCommand(int argc, char** argv) {
  SinkOptions options;
  FlagSet flags("gpureduce-load sink", "gpureduce-load sink [flags]",
                "A bare gRPC server implementing gpureduce.v1.Reducer that only counts the bytes "
                "it receives (no validation, no compute): the transport ceiling of this host, "
                "which gpureduce-load's figures are compared with. Its answers name the backend "
                "'sink', so gpureduce-load does not check them. Stops on SIGINT or SIGTERM and "
                "prints what it received.");
  flags.AddString("listen", &options.listen,
                  "address to listen on; port 0 picks a free port (see --port-file)", "HOST:PORT");
  flags.AddString("port-file", &options.port_file, "write the bound port to this file", "PATH");
  flags.AddString("listen-unix", &options.listen_unix,
                  "also listen on this Unix-domain socket, as gpureduce-server's flag of that "
                  "name (a stale socket there is replaced, a live one refused; the socket goes "
                  "with the sink)",
                  "PATH");
  flags.AddBool("bdp-probe", &options.bdp_probe,
                "gRPC's bandwidth-delay probe, as gpureduce-server's flag of that name (off by "
                "default in both, so that they compare on the same transport settings)");
  flags.AddString("answer-backend", &options.answer_backend,
                  "the backend its answers name; any name but 'sink' makes gpureduce-load check "
                  "them, and find them wrong (they carry no result): for testing that checking",
                  "NAME");
  if (int exit = ParseFlags(flags, argc, argv, 2); exit >= 0) return exit;
  return RunSink(options);
}

// --shared-memory: the payloads go into regions registered with the server (one, or for cuda one
// per GPU of --shared-memory-devices, payloads dealt over them in turn), and the requests refer
// to them. None without the flag.
absl::StatusOr<std::vector<std::unique_ptr<SharedPayload>>> MakeSharedPayloads(
    const OutputFlags& out, const WorkloadOptions& work) {
  std::vector<std::unique_ptr<SharedPayload>> payloads;
  if (out.shared_memory.empty()) return payloads;
  if (work.stream_bytes > 0) {
    return absl::InvalidArgumentError(
        "--shared-memory sends unary requests by reference (--floats), not streams (--bytes)");
  }
  absl::StatusOr<SharedPayload::Kind> kind = SharedPayload::ParseKind(out.shared_memory);
  if (!kind.ok()) return kind.status();
  std::vector<int> devices = {0};
  if (!out.shared_memory_devices.empty()) {
    if (*kind != SharedPayload::Kind::kCuda) {
      return absl::InvalidArgumentError("--shared-memory-devices is for --shared-memory=cuda");
    }
    devices.clear();
    for (absl::string_view item : absl::StrSplit(out.shared_memory_devices, ',')) {
      int device = -1;
      if (!absl::SimpleAtoi(item, &device) || device < 0) {
        return absl::InvalidArgumentError(
            absl::StrCat("--shared-memory-devices=", out.shared_memory_devices,
                         ": expected GPU indices such "
                         "as 0,1"));
      }
      devices.push_back(device);
    }
  }
  if (work.payloads < devices.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--payloads=", work.payloads,
                     " leaves a region of --shared-memory-devices empty; give "
                     "at least ",
                     devices.size()));
  }
  const uint64_t per_region = (work.payloads + devices.size() - 1) / devices.size();
  for (int device : devices) {
    absl::StatusOr<std::unique_ptr<SharedPayload>> payload =
        SharedPayload::Create(*kind, per_region * work.floats * DTypeSize(work.dtype), device);
    if (!payload.ok()) return payload.status();
    payloads.push_back(std::move(*payload));
  }
  return payloads;
}

int RunLoadCommand(int argc, char** argv) {
  LoadOptions load;
  WorkloadOptions work;
  OutputFlags out;
  std::string op = "sum";
  std::string dtype = "float32";
  FlagSet flags(
      "gpureduce-load", "gpureduce-load [flags]   |   gpureduce-load sink [flags]",
      "Loads a gpureduce server with unary requests (--floats) or streams (--bytes), closed loop "
      "(--concurrency) or open loop (--rate), over --connections channels, and reports requests, "
      "rps, GB/s, latency percentiles, status codes and the server's own timing breakdown. "
      "Payloads are made before the clock starts; every answer is checked against the client's "
      "float64 reference (exact for integer results, of every dtype and op), and a wrong one "
      "counts as an error. 'gpureduce-load sink' runs the "
      "bare gRPC server to compare with. Exit codes: 0 every answer right, 1 errors or wrong "
      "answers, 2 usage.");
  RegisterLoadFlags(flags, &load, &work, &op, &out, &dtype);
  if (int exit = ParseFlags(flags, argc, argv, 1); exit >= 0) return exit;
  if (absl::Status applied = ApplyOpAndDType(op, dtype, &work); !applied.ok()) {
    return Usage(flags, applied);
  }
  if (absl::Status applied = ApplyLayout(out.layout, &work); !applied.ok()) {
    return Usage(flags, applied);
  }
  if (work.tolerance == 0) work.tolerance = ToleranceFromServer(load, work);
  std::unique_ptr<ReducerClient> registrar;  // declared first: outlives the region it unregisters
  absl::StatusOr<std::vector<std::unique_ptr<SharedPayload>>> shared =
      MakeSharedPayloads(out, work);
  if (!shared.ok()) return Usage(flags, shared.status());
  std::optional<SharedPayloadTarget> target;
  if (!shared->empty()) {
    target.emplace();
    for (size_t i = 0; i < shared->size(); ++i) {
      target->regions.push_back(absl::StrCat("gpureduce-load-", getpid(), "-", i));
    }
    target->write = [payloads = &*shared](size_t region, uint64_t offset,
                                          std::span<const std::byte> data) {
      return (*payloads)[region]->Write(offset, data);
    };
  }
  absl::StatusOr<Workload> workload = Workload::Make(work, target ? &*target : nullptr);
  if (!workload.ok()) return Usage(flags, workload.status());
  if (!shared->empty()) {
    absl::StatusOr<std::unique_ptr<ReducerClient>> client =
        ReducerClient::Connect(load.target, load.security);
    if (!client.ok()) return Usage(flags, client.status());
    registrar = std::move(*client);
    for (size_t i = 0; i < shared->size(); ++i) {
      SharedPayload& payload = *(*shared)[i];
      if (absl::Status registered = payload.Register(*registrar, target->regions[i]);
          !registered.ok()) {
        std::fprintf(stderr, "gpureduce-load: registering the shared-memory region: %s\n",
                     registered.ToString().c_str());
        return 1;
      }
      std::fprintf(stderr,
                   "gpureduce-load: registered %s shared memory of %llu bytes as \"%s\": %.0f us "
                   "(the server's mapping and pinning: %.0f us)\n",
                   out.shared_memory.c_str(), static_cast<unsigned long long>(payload.bytes()),
                   target->regions[i].c_str(), payload.client_register_us(),
                   payload.server_register_us());
    }
  }
  if (out.progress) {
    load.progress = [](const std::string& line) { std::fprintf(stderr, "\r%s ", line.c_str()); };
  }
  absl::StatusOr<LoadResult> result = RunLoad(load, *workload);
  if (out.progress) std::fputs("\n", stderr);
  if (!result.ok()) return Usage(flags, result.status());
  const LoadRun run{out.label, load, work, *result};
  if (out.csv) {
    if (out.csv_header) std::printf("%s\n", ReportCsvHeader().c_str());
    std::printf("%s\n", ReportCsvRow(run).c_str());
  } else if (!out.json.on_stdout()) {
    std::fputs(ReportText(run).c_str(), stdout);
  }
  if (out.json.requested()) {
    if (absl::Status written = out.json.Write(ReportJson(run).dump(2) + "\n"); !written.ok()) {
      std::fprintf(stderr, "gpureduce-load: %s\n", std::string(written.message()).c_str());
      return 1;
    }
  }
  return result->failed > 0 || result->wrong > 0 ? 1 : 0;
}

}  // namespace
}  // namespace gpureduce::client

int main(int argc, char** argv) {
  gpureduce::TuneMallocForLargeMessages();
  gpureduce::SkipMutexDeadlockDetection();
  if (argc >= 2 && std::strcmp(argv[1], "sink") == 0) {
    return gpureduce::client::RunSinkCommand(argc, argv);
  }
  return gpureduce::client::RunLoadCommand(argc, argv);
}
