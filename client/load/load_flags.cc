#include "client/load/load_flags.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "client/array_layout.h"
#include "client/channel_security.h"
#include "client/cli/op_list.h"
#include "common/read_file.h"
#include "common/reduction/op_name.h"
#include "common/shared_memory_flag.h"
#include "wire/op_mapping.h"

namespace gpureduce::client {

absl::Status ApplyOpAndDType(const std::string& op, const std::string& dtype,
                             WorkloadOptions* work) {
  absl::StatusOr<std::vector<v1::Op>> ops = cli::ParseOpList(op);
  if (!ops.ok()) return ops.status();
  absl::StatusOr<DType> parsed = cli::ParseDTypeFlag(dtype);
  if (!parsed.ok()) return parsed.status();
  work->op = ops->front();
  work->ops = ops->size() > 1 ? *ops : std::vector<v1::Op>{};
  work->dtype = *parsed;
  if (!(work->ddof >= 0)) {
    return absl::InvalidArgumentError("--ddof must be a non-negative number (NumPy's ddof)");
  }
  return absl::OkStatus();
}

absl::Status ApplyLayout(const LayoutFlags& flags, WorkloadOptions* work) {
  ArrayLayout layout;
  if (!flags.shape.empty()) {
    absl::StatusOr<std::vector<uint64_t>> shape = ParseExtents(flags.shape, "--shape");
    if (!shape.ok()) return shape.status();
    layout.shape = *std::move(shape);
  }
  if (!flags.axis.empty()) {
    absl::StatusOr<std::vector<int32_t>> axes = ParseAxes(flags.axis);
    if (!axes.ok()) return axes.status();
    layout.axes = *std::move(axes);
  }
  layout.keepdims = flags.keepdims;
  const uint64_t elements =
      work->stream_bytes > 0 ? work->stream_bytes / DTypeSize(work->dtype) : work->floats;
  if (!flags.segments.empty()) {
    std::string text = flags.segments;
    if (absl::StartsWith(text, "@")) {
      absl::StatusOr<std::string> read = ReadTextFile(text.substr(1), "--segments");
      if (!read.ok()) return read.status();
      text = *std::move(read);
    }
    absl::StatusOr<std::vector<uint64_t>> lengths = ParseExtents(text, "--segments");
    if (!lengths.ok()) return lengths.status();
    layout.segments = *std::move(lengths);
    if (layout.segments.size() == 1 && !absl::StartsWith(flags.segments, "@")) {
      const uint64_t count = layout.segments.front();  // N segments, as equal as they come
      if (count == 0) return absl::InvalidArgumentError("--segments 0: give at least one");
      layout.segments.assign(count, elements / count);
      for (uint64_t i = 0; i < elements % count; ++i) ++layout.segments[i];
    }
  }
  if (layout.shape.empty() && (!layout.axes.empty() || layout.keepdims) &&
      layout.segments.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        layout.axes.empty() ? "--keepdims" : "--axis",
        " needs --shape D0,D1,... (C order, its product the elements of a request: ", elements,
        ")"));
  }
  std::vector<v1::Op> ops = work->ops.empty() ? std::vector<v1::Op>{work->op} : work->ops;
  if (absl::Status checked = CheckArrayLayout(
          layout, ops, elements,
          absl::StrCat("each request (", elements, " elements: --floats, or --bytes over the ",
                       DTypeName(work->dtype), " size)"));
      !checked.ok()) {
    return checked;
  }
  work->layout = std::move(layout);
  return absl::OkStatus();
}

void RegisterLoadFlags(FlagSet& flags, LoadOptions* load, WorkloadOptions* work, std::string* op,
                       OutputFlags* out, std::string* dtype) {
  flags.AddString("target", &load->target,
                  "the server (or a sink) to load: HOST:PORT, or several, requests going round "
                  "robin over them (ipv4:HOST1:PORT,HOST2:PORT or dns:///NAME:PORT)",
                  "TARGET");
  client::AddSecurityFlags(flags, &load->security);
  flags.AddUint32("connections", &load->connections,
                  "gRPC channels, each its own TCP connection; requests go round robin over them");
  flags.AddUint32("concurrency", &load->concurrency,
                  "closed loop: requests in flight at once, each answer sending the next");
  flags.AddDouble("rate", &load->rate,
                  "open loop instead: requests per second on a fixed schedule; latency counts from "
                  "each request's scheduled time, so queueing in the server is not hidden; 0 "
                  "means closed loop",
                  "RPS");
  flags.AddDuration("duration", &load->duration, "how long to measure, after the warm-up");
  flags.AddUint64("requests", &load->requests,
                  "stop after this many measured requests instead (0: --duration decides)");
  flags.AddDuration("warmup", &load->warmup, "load sent first and not measured");
  flags.AddDuration("timeout", &load->timeout, "deadline of each request");
  flags.AddUint32("max-outstanding", &load->max_outstanding,
                  "open loop: requests due while this many are in flight are not sent (counted)");
  flags.AddUint64("floats", &work->floats,
                  "unary requests of this many elements (of --dtype; float32 by default)", "N");
  flags.AddByteSize("bytes", &work->stream_bytes,
                    "streams instead: each request a ReduceStream of this many payload bytes");
  flags.AddByteSize("chunk-size", &work->chunk_bytes, "streams: payload bytes per message");
  flags.AddString("shape", &out->layout.shape,
                  "array requests (issue 23): each request's elements as this C-order shape, "
                  "reduced along --axis (every axis without it), one result array per op, every "
                  "element checked. Its product must be the request's elements: --floats 1048576 "
                  "--shape 1024,1024 --axis 1",
                  "D0,D1,...");
  flags.AddString("axis", &out->layout.axis,
                  "with --shape: the axes to reduce, as NumPy's axis (negative from the end); arg "
                  "ops take one",
                  "A[,B...]");
  flags.AddBool("keepdims", &out->layout.keepdims,
                "with --shape: keep the reduced axes with length 1 (NumPy's keepdims)");
  flags.AddString("segments", &out->layout.segments,
                  "array requests over segments instead: N equal segments of each request's "
                  "elements (--segments 64; the first ones one longer where N does not divide "
                  "them), a list of lengths summing to them (--segments 1000,0,24), or @FILE of "
                  "lengths",
                  "N|L0,L1,...|@FILE");
  flags.AddString("op", op,
                  absl::StrCat("the reduction, one of ", cli::OpChoices(),
                               ", or a comma list of them (sum,min,max,mean,std): each request "
                               "asks for every op at once and each typed result is checked"),
                  "OP[,OP...]");
  if (dtype != nullptr) {
    flags.AddString("dtype", dtype,
                    absl::StrCat("the payload's element type, one of ", DTypeNames(),
                                 ": RandomSource's values of it (ints: multiples of 256), "
                                 "checked against the client's float64 / exact-integer "
                                 "reference; bytes/s count the payload's bytes"),
                    "NAME");
  }
  flags.AddDouble("ddof", &work->ddof, "var and std divide by count - DDOF (NumPy's ddof)", "X");
  flags.AddString("kernel", &work->kernel, "kernel variant, as the server names them", "NAME");
  flags.AddUint32("payloads", &work->payloads,
                  "distinct payloads, made before the clock starts and sent in turn");
  flags.AddUint64("seed", &work->seed, "seed of the payloads' random values", "S");
  flags.AddInt64("device", &work->device,
                 "pin every request to this device of the server (GetServerInfo's index); -1: "
                 "the server chooses, and may spread a large request over every GPU",
                 "N");
  flags.AddDouble("tolerance", &work->tolerance,
                  "relative error allowed in sums, products and means (against sum|x|, |product|, "
                  "mean|x|); 0: by what the server lists about the kernel: 1e-9 for float64 "
                  "accumulation, 1e-3 for the ladder's float32; MIN, MAX, ARGMIN, ARGMAX must be "
                  "exact");
  out->json.Register(flags, "the report", JsonFlag::Operands::kNone);
  flags.AddBool("csv", &out->csv, "print the report as a CSV row instead of text");
  flags.AddBool("csv-header", &out->csv_header, "with --csv: print the header line first");
  flags.AddString("label", &out->label, "a name for this run in JSON and CSV", "TEXT");
  AddSharedMemoryFlag(flags, &out->shared_memory,
                      "unary requests by reference instead: the payloads in one shared-memory "
                      "region of this process, system (a POSIX object; bare --shared-memory) or "
                      "cuda (its GPU memory, by IPC handle), registered once; the server must run "
                      "on this host with --allow-shared-memory");
  flags.AddString("shared-memory-devices", &out->shared_memory_devices,
                  "with --shared-memory=cuda: one region on each of these GPUs (0,1), the "
                  "payloads dealt over them in turn, so requests keep every GPU busy; default "
                  "GPU 0",
                  "LIST");
  flags.AddBool(
      "progress", &out->progress,
      "print a progress line on stderr every second (default: when stderr is a terminal)");
}

}  // namespace gpureduce::client
