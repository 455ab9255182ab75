#include "server/backend_flags.h"

#include <algorithm>
#include <cstdint>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "common/byte_size.h"
#include "common/flag_values.h"

namespace gpureduce::server {
namespace {

constexpr std::pair<runtime::BackendChoice, const char*> kKindNames[] = {
    {runtime::BackendChoice::kAuto, "auto"},
    {runtime::BackendChoice::kCpu, "cpu"},
    {runtime::BackendChoice::kCuda, "cuda"}};

const char* KindName(runtime::BackendChoice kind) {
  for (const auto& [choice, name] : kKindNames) {
    if (choice == kind) return name;
  }
  return "auto";
}

runtime::BackendChoice KindNamed(absl::string_view text) {
  for (const auto& [choice, name] : kKindNames) {
    if (text == name) return choice;
  }
  return runtime::BackendChoice::kAuto;  // FlagSet admits only the names above
}

std::string DevicesText(const std::vector<int>& devices) {
  return devices.empty() ? "all" : absl::StrJoin(devices, ",");
}

}  // namespace

void BackendFlags::Register(FlagSet& flags) {
  kind_ = KindName(options_.kind);
  devices_ = DevicesText(options_.devices);
  flags.AddChoice("backend", &kind_, {"auto", "cpu", "cuda"},
                  "compute backend: auto takes the GPU when there is one, else the CPU");
  flags.AddUint32("worker-threads", &options_.worker_threads,
                  "CPU backend threads, also beside the GPUs (the cpu kernel, and small auto "
                  "requests: see --auto-cpu-below); 0 means one per hardware thread");
  flags.AddString("devices", &devices_, "GPUs to own: all, or indices such as 0,1", "LIST");
  flags.AddUint32("cuda-streams", &options_.device.streams,
                  "CUDA streams per GPU; 0 picks twice the copy engines (at least 4)");
  flags.AddString("streams", &streams_,
                  "deprecated: the old name of --cuda-streams (the CLI's --streams are gRPC "
                  "streams)",
                  "N");
  flags.AddUint32("staging-buffers", &options_.device.staging_buffers,
                  "pinned staging buffers per GPU; requests beyond them wait for one");
  flags.AddByteSize("staging-buffer-bytes", &options_.device.staging_buffer_bytes,
                    "size of each staging buffer (pinned host and device); larger chunks are "
                    "sent in pieces");
  flags.AddUint32("copy-threads", &options_.device.copy_threads,
                  "threads per GPU that copy chunks into pinned staging memory (a few GB/s "
                  "each); 0 picks half the hardware threads, at least 4");
  flags.AddString("auto-cpu-below", &auto_cpu_below_,
                  "CUDA backend: where `auto` requests run. 'measured': the self-check times the "
                  "CPU and a GPU on a message's bytes and on system shared memory at two sizes "
                  "each (logged), and each request goes where its data's location and size say "
                  "it ends first: the CPU, a GPU, or both at once for a region (streams of "
                  "unknown length by the rates); a size: requests smaller than it (unary, or "
                  "streams that declare expected_count) run on the CPU, the rest on a GPU "
                  "(128MiB where measuring fails); 0: all on the GPU. The response names the "
                  "kernel and the device that ran",
                  "measured|SIZE");
  flags.AddBool(
      "gpu-arrays", &options_.gpu_arrays,
      "CUDA backend: requests with axes or segments run on the GPU's array kernels "
      "(as single_pass; --auto-cpu-below applies as to whole arrays); off: on the "
      "CPU's kernel, which keeps up with the transport as well (off by default: on an H200 "
      "host the CPU's kernel answered 4 MiB array requests as fast or faster; "
      "docs/array-api.md)");
  flags.AddBool("batch-small-requests", &options_.batch_small_requests,
                "CUDA backend: small unary requests on single_pass (up to "
                "--batch-max-request-bytes) are gathered into one launch per GPU, each answered "
                "on its own (its queue time includes the gathering, its kernel time is its share "
                "of the batch's). It trades latency for GPU time: 4 KiB requests at concurrency 64 "
                "on one H200 took 5x less GPU time each and made 8-21% fewer requests/s. For a "
                "GPU busy with small launches; off by default (docs/gpu-backend.md)");
  flags.AddDuration("batch-window", &batch_window_,
                    "with --batch-small-requests: the longest a request waits for others; a batch "
                    "also goes when it is full, or at once when fewer than --batches-in-flight "
                    "are running");
  flags.AddByteSize("batch-max-request-bytes", &options_.batch.max_request_bytes,
                    "with --batch-small-requests: larger requests run alone");
  flags.AddUint32("batches-in-flight", &options_.batch.in_flight,
                  "with --batch-small-requests: batches running at once per GPU before new "
                  "requests wait to be gathered");
  flags.AddByteSize("split-above", &options_.split_above_bytes,
                    "CUDA backend with several GPUs: a request known to carry at least this many "
                    "bytes (unary, a stream that declares expected_count, a shared-memory "
                    "region) and pinned to no GPU is reduced on every GPU at once, its partials "
                    "combined in order; the response lists the devices; 0: one GPU per request");
  flags.AddString("host-region-split", &host_region_split_,
                  "CUDA backend: an `auto` request reading system shared memory that "
                  "--auto-cpu-below places on both (on one GPU) is read by the CPU and a GPU at "
                  "once, the CPU taking this share: 'auto' starts it from the costs each "
                  "measured alone at start (logged), then moves it toward the share that ends "
                  "both together by the times of large splits; 'off': never split (one reader: "
                  "with --auto-cpu-below=measured the one expected to end first, with a size "
                  "the GPU from it); 0 to 1: that share (1: the CPU alone)",
                  "auto|off|SHARE");
}

absl::StatusOr<runtime::BackendOptions> BackendFlags::Options() const {
  runtime::BackendOptions options = options_;
  options.kind = KindNamed(kind_);
  absl::StatusOr<std::vector<int>> devices = ParseDeviceList(devices_);
  if (!devices.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--devices=", devices_, ": ", devices.status().message()));
  }
  options.devices = *std::move(devices);
  options.batch.window = absl::ToChronoMicroseconds(batch_window_);
  if (options.batch.in_flight == 0) {
    return absl::InvalidArgumentError("--batches-in-flight must be at least 1");
  }
  if (auto_cpu_below_ != "measured") {
    absl::StatusOr<uint64_t> bytes = ParseByteSize(auto_cpu_below_);
    if (!bytes.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("--auto-cpu-below=", auto_cpu_below_,
                                                     ": expected measured or a size such as "
                                                     "128MiB (",
                                                     bytes.status().message(), ")"));
    }
    options.measured_placement = false;
    options.auto_cpu_below_bytes = *bytes;
  }
  if (host_region_split_ == "off") {
    options.host_cpu_share = 0;
  } else if (host_region_split_ != "auto") {
    double share = -1;
    if (!absl::SimpleAtod(host_region_split_, &share) || !(share >= 0 && share <= 1)) {
      return absl::InvalidArgumentError(
          absl::StrCat("--host-region-split=", host_region_split_,
                       ": expected auto, off or a share from 0 to 1"));
    }
    options.host_cpu_share = share;
  }
  if (!streams_.empty()) {
    uint32_t streams = 0;
    if (absl::Status parsed = ParseFlagValue(streams_, &streams); !parsed.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--streams=", streams_, ": ", parsed.message()));
    }
    if (options.device.streams == 0) options.device.streams = streams;  // --cuda-streams wins
  }
  return options;
}

std::string BackendFlags::DeprecationWarning() const {
  if (streams_.empty()) return "";
  std::string warning =
      absl::StrCat("--streams (", kEnvironmentPrefix,
                   "STREAMS) is deprecated: use --cuda-streams (", kEnvironmentPrefix,
                   "CUDA_STREAMS), CUDA streams per GPU; the CLI's --streams are gRPC "
                   "streams");
  if (options_.device.streams != 0) {
    absl::StrAppend(&warning, "; --cuda-streams=", options_.device.streams,
                    " is given too and wins over --streams=", streams_);
  }
  return warning;
}

absl::StatusOr<std::vector<int>> ParseDeviceList(absl::string_view text) {
  std::vector<int> devices;
  if (text == "all") return devices;
  for (absl::string_view item : absl::StrSplit(text, ',')) {
    int index = 0;
    if (!absl::SimpleAtoi(item, &index) || index < 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "'", item, "' is not a GPU index; expected 'all' or GPU indices such as 0,1"));
    }
    if (std::find(devices.begin(), devices.end(), index) != devices.end()) {
      return absl::InvalidArgumentError(
          absl::StrCat("GPU ", index, " is listed twice; list each GPU once"));
    }
    devices.push_back(index);
  }
  return devices;
}

absl::StatusOr<std::unique_ptr<runtime::Backend>> CreateBackendFromFlags(
    const runtime::BackendOptions& options) {
  if (options.kind == runtime::BackendChoice::kCuda && !runtime::HasCudaBackend()) {
    return absl::FailedPreconditionError(
        "--backend=cuda: this build of gpureduce-server has no CUDA backend (it was built "
        "without a CUDA compiler); use --backend=cpu or auto");
  }
  absl::StatusOr<std::unique_ptr<runtime::Backend>> backend = runtime::CreateBackend(options);
  if (!backend.ok()) {
    return absl::Status(backend.status().code(),
                        absl::StrCat("--backend=", KindName(options.kind),
                                     " --devices=", DevicesText(options.devices), ": ",
                                     backend.status().message()));
  }
  return backend;
}

}  // namespace gpureduce::server
