#include "client/cli/reduce_command.h"

#include <cstdio>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "client/cli/command.h"
#include "client/cli/op_list.h"
#include "client/cli/progress_bar.h"
#include "client/cli/reduce_output.h"
#include "client/cli/shared_memory_reduce.h"
#include "client/input/open_source.h"
#include "client/input/part_source.h"
#include "client/parallel_streams.h"
#include "client/reducer_client.h"
#include "client/running_reference.h"
#include "common/shared_memory_flag.h"

namespace gpureduce::cli {
namespace {

constexpr char kCommand[] = "reduce";

struct ReduceFlags {
  ConnectionOptions connection;
  std::string op = "sum";
  std::string kernel = "auto";
  uint32_t block_size = 0;
  int64_t device = -1;
  uint64_t chunk_bytes = uint64_t{1} << 20;
  std::string format = "auto";
  int64_t random = -1;
  uint64_t seed = 1;
  bool values = false;
  bool verify = false;
  uint32_t streams = 1;
  std::string shared_memory;  // "", or the kind: system (the only one the CLI makes) or cuda
};

void Register(FlagSet& flags, ReduceFlags* f) {
  flags.AddString("op", &f->op,
                  absl::StrCat("the reduction, one of ", OpChoices(),
                               ", or a comma list of them (sum,min,max) to reduce the same input "
                               "once per op, in order"),
                  "OP[,OP...]");
  flags.AddString("kernel", &f->kernel, "kernel variant ('gpureduce kernels' lists them)", "NAME");
  flags.AddUint32("block-size", &f->block_size, "threads per block; 0 is the kernel's default");
  flags.AddInt64("device", &f->device,
                 "run on this device (as `gpureduce info` numbers them); -1: the server picks the "
                 "one with the fewest bytes outstanding",
                 "N");
  flags.AddByteSize("chunk-size", &f->chunk_bytes,
                    "payload per stream message; larger inputs stream in chunks of this size");
  flags.AddChoice("format", &f->format, {"auto", "npy", "raw", "text"},
                  "input format; auto: .npy by its header, .raw/.bin/.f32 raw little-endian "
                  "float32, .txt/.csv/.tsv and stdin text");
  flags.AddInt64("random", &f->random,
                 "reduce N random floats, uniform in [-1, 1), instead of "
                 "a file; -1 means read a file",
                 "N");
  flags.AddUint64("seed", &f->seed, "seed for --random", "S");
  flags.AddBool("values", &f->values, "send `repeated float values` instead of bytes");
  flags.AddBool("verify", &f->verify,
                "also compute a float64 reference on the client and report the difference");
  AddSharedMemoryFlag(
      flags, &f->shared_memory,
      "system (or bare --shared-memory): load the input into a POSIX shared-memory object on this "
      "host, register it with "
      "the server once, reduce it by reference once per --op (no copy over gRPC), then "
      "unregister and remove it, also on an error or Ctrl-C. The server must run on "
      "this host with --allow-shared-memory; in Docker, /dev/shm must hold the input "
      "(--shm-size). Prints the registration time, the server's and the client's. cuda is "
      "gpureduce-load's and the Python client's: the CLI has no GPU memory to lend");
  flags.AddUint32("streams", &f->streams,
                  "send the input as N streams at once, each a contiguous part on a connection "
                  "of its own, and combine their answers exactly as one stream's (needs an input "
                  "of known length: .npy, raw, --random; with --verify the input is read twice; "
                  "not with --shared-memory)");
  AddConnectionFlags(flags, &f->connection);
}

// --streams N: the input's contiguous parts, each read by a source of its own, sent at once.
absl::StatusOr<v1::ReduceResponse> SendInParts(const ReduceFlags& f,
                                               const client::SourceOptions& source_options,
                                               uint64_t total, const v1::ReduceSpec& spec,
                                               const client::StreamOptions& options,
                                               absl::Status* input_error) {
  std::vector<std::unique_ptr<client::ReducerClient>> connections;
  std::vector<client::ReducerClient*> clients;
  std::vector<client::StreamPart> parts;
  // A connection per part, so the parts use several cores and connections. A list of servers:
  // part i goes to server i % n (and to the next if that one fails); a DNS name: round robin.
  const std::vector<std::pair<uint64_t, uint64_t>> split = client::SplitIntoParts(total, f.streams);
  const std::vector<std::string> targets = client::PartTargets(f.connection.target, split.size());
  const bool in_order = client::ListsServers(f.connection.target);
  for (const auto& [begin, count] : split) {
    auto open = [source_options, begin = begin,
                 count = count]() -> absl::StatusOr<std::unique_ptr<client::FloatSource>> {
      absl::StatusOr<std::unique_ptr<client::FloatSource>> whole =
          client::OpenSource(source_options);
      if (!whole.ok()) return whole.status();
      absl::StatusOr<std::unique_ptr<client::PartSource>> part =
          client::PartSource::Open(std::move(*whole), begin, count);
      if (!part.ok()) return part.status();
      return std::unique_ptr<client::FloatSource>(std::move(*part));
    };
    absl::StatusOr<std::unique_ptr<client::FloatSource>> first = open();
    if (!first.ok()) return *input_error = first.status();
    auto source = std::make_shared<std::unique_ptr<client::FloatSource>>(std::move(*first));
    parts.push_back({begin, count,
                     [source, input_error](absl::Span<float> out) {
                       absl::StatusOr<size_t> filled = (*source)->Read(out);
                       if (!filled.ok()) *input_error = filled.status();
                       return filled;
                     },
                     // Sent again (its server went away): read the part from its start.
                     [source, open]() -> absl::Status {
                       absl::StatusOr<std::unique_ptr<client::FloatSource>> reopened = open();
                       if (!reopened.ok()) return reopened.status();
                       *source = std::move(*reopened);
                       return absl::OkStatus();
                     }});
    ConnectionOptions part_connection = f.connection;
    part_connection.target = targets[parts.size() - 1];
    absl::StatusOr<std::unique_ptr<client::ReducerClient>> connection =
        Connect(part_connection, /*own_connection=*/true,
                in_order ? client::Balancing::kInOrder : client::Balancing::kRoundRobin);
    if (!connection.ok()) return *input_error = connection.status();
    connections.push_back(std::move(*connection));
    clients.push_back(connections.back().get());
  }
  return client::ReduceInParts(clients, spec, std::move(parts), options);
}

// The client's reference for --streams --verify: a second pass over the input, in order.
absl::Status ReferencePass(const client::SourceOptions& source_options, size_t chunk_elements,
                           client::RunningReference& reference) {
  absl::StatusOr<std::unique_ptr<client::FloatSource>> source = client::OpenSource(source_options);
  if (!source.ok()) return source.status();
  std::vector<float> chunk(chunk_elements);
  while (true) {
    absl::StatusOr<size_t> filled = (*source)->Read(absl::MakeSpan(chunk));
    if (!filled.ok()) return filled.status();
    if (*filled == 0) return absl::OkStatus();
    reference.Add(absl::MakeConstSpan(chunk.data(), *filled));
  }
}

// Reads the next chunk from the source, feeding the optional running reference.
absl::StatusOr<size_t> ReadChunk(client::FloatSource& source, absl::Span<float> out,
                                 client::RunningReference* reference) {
  absl::StatusOr<size_t> filled = source.Read(out);
  if (filled.ok() && reference != nullptr) reference->Add(out.first(*filled));
  return filled;
}

// One op over the input `source` (freshly opened), printed as its own result.
int ReduceOnce(ReduceFlags& f, const client::SourceOptions& source_options, size_t chunk_elements,
               v1::Op op, std::unique_ptr<client::FloatSource> source,
               client::ReducerClient& reducer) {
  v1::ReduceSpec spec;
  spec.set_op(op);
  spec.set_kernel(f.kernel);
  spec.set_block_size(f.block_size);
  if (f.device >= 0) spec.set_device(static_cast<int32_t>(f.device));
  // A declared count lets the server refuse an input that was cut short on the way.
  if (std::optional<uint64_t> total = source->total_count()) spec.set_expected_count(*total);

  std::optional<client::RunningReference> reference;
  if (f.verify) reference.emplace(op);
  client::RunningReference* ref = reference.has_value() ? &*reference : nullptr;

  client::StreamOptions options;
  options.timeout = CallTimeout(f.connection);
  options.use_values_field = f.values;
  options.chunk_elements = chunk_elements;

  const std::optional<uint64_t> total = source->total_count();
  if (f.streams > 1 && !total.has_value()) {
    return ReportUsageError(kCommand,
                            absl::StrCat("--streams ", f.streams,
                                         " needs an input of known length (a .npy "
                                         "or raw file, or --random); ",
                                         source->Describe(), " can only be read in order"));
  }
  const bool in_parts = f.streams > 1 && *total > chunk_elements;

  // Otherwise the first chunk decides: an input that fits in it goes in one unary message.
  std::vector<float> first;
  absl::StatusOr<size_t> first_filled = 0;
  if (!in_parts) {
    first.resize(chunk_elements);
    first_filled = ReadChunk(*source, absl::MakeSpan(first), ref);
    if (!first_filled.ok()) {
      return ReportUsageError(kCommand, std::string(first_filled.status().message()));
    }
  }
  const bool streamed = in_parts || *first_filled == chunk_elements;

  const absl::Time start = absl::Now();
  absl::StatusOr<v1::ReduceResponse> response;
  if (!streamed) {
    response = reducer.Reduce(spec, absl::MakeConstSpan(first.data(), *first_filled), options);
  } else {
    const uint64_t total_bytes = total.value_or(0) * sizeof(float);
    ProgressBar progress(total_bytes);
    options.on_progress = [&progress](uint64_t bytes) { progress.Update(bytes); };
    absl::Status input_error;
    if (in_parts) {
      response = SendInParts(f, source_options, *total, spec, options, &input_error);
    } else {
      bool first_sent = false;
      response = reducer.ReduceStream(
          spec,
          [&](absl::Span<float> out) -> absl::StatusOr<size_t> {
            if (!first_sent) {
              first_sent = true;
              std::copy(first.begin(), first.end(), out.begin());
              return first.size();
            }
            absl::StatusOr<size_t> filled = ReadChunk(*source, out, ref);
            if (!filled.ok()) input_error = filled.status();
            return filled;
          },
          options);
    }
    progress.Finish();
    if (!input_error.ok()) {
      return ReportUsageError(kCommand,
                              absl::StrCat(source->Describe(), ": ", input_error.message()));
    }
  }
  const absl::Duration wall = absl::Now() - start;
  if (!response.ok()) return ReportServerError(kCommand, response.status());
  if (in_parts && ref != nullptr) {
    if (absl::Status pass = ReferencePass(source_options, chunk_elements, *ref); !pass.ok()) {
      return ReportUsageError(kCommand, std::string(pass.message()));
    }
  }

  ClientSide client_side{wall, streamed, source->Describe()};
  std::optional<Verification> verification;
  if (reference.has_value()) {
    verification = Verification{reference->value(), reference->index(), reference->scale()};
  }
  const int exit = PrintAnswer(kCommand, f.connection,
                               FormatReduceText(op, *response, client_side, verification),
                               FormatReduceJson(op, *response, client_side, verification));
  std::fflush(stdout);
  return exit;
}

}  // namespace

int RunReduce(int argc, char** argv) {
  ReduceFlags f;
  FlagSet flags("gpureduce reduce", "gpureduce reduce [flags] [FILE|-]",
                "Reduces a float32 array on the server and prints the result with its timing. "
                "FILE is a .npy float32 array, a raw little-endian float32 file or a text file "
                "of numbers; '-' reads stdin. Inputs larger than one chunk are streamed, so any "
                "size runs in fixed memory on both sides. With --shared-memory a server on this "
                "host (started with --allow-shared-memory) reads the input where it lies instead: "
                "registered once, reduced by reference once per --op.");
  Register(flags, &f);
  if (int exit = ParseFlags(flags, argc, argv, 1); exit >= 0) return exit;
  if (f.device < -1 || f.device > std::numeric_limits<int32_t>::max()) {
    return ReportUsageError(
        kCommand, absl::StrCat("--device ", f.device, " is not a device index (or -1: any)"));
  }
  absl::StatusOr<std::vector<v1::Op>> ops = ParseOpList(f.op);
  if (!ops.ok()) return ReportUsageError(kCommand, std::string(ops.status().message()));

  client::SourceOptions source_options;
  source_options.format = f.format;
  if (f.random >= 0) {
    if (!flags.positional().empty()) {
      return ReportUsageError(kCommand, "give either FILE or --random N, not both");
    }
    source_options.random = true;
    source_options.random_count = static_cast<uint64_t>(f.random);
    source_options.random_seed = f.seed;
  } else if (flags.positional().empty()) {
    return ReportUsageError(kCommand, "no input: give FILE, '-' for stdin, or --random N");
  } else {
    source_options.path = flags.positional().front();
  }
  const size_t chunk_elements = f.chunk_bytes / sizeof(float);
  if (chunk_elements == 0) return ReportUsageError(kCommand, "--chunk-size must be at least 4B");
  if (f.streams == 0) return ReportUsageError(kCommand, "--streams must be at least 1");

  if (f.shared_memory == kSharedMemoryCuda) {
    return ReportUsageError(kCommand,
                            "--shared-memory=cuda: the CLI lends only system shared memory; "
                            "gpureduce-load --shared-memory=cuda sends from GPU memory");
  }
  if (!f.shared_memory.empty()) {
    if (f.streams > 1) {
      return ReportUsageError(kCommand,
                              "--streams and --shared-memory exclude each other: "
                              "with shared memory nothing is streamed");
    }
    if (f.values) {
      return ReportUsageError(kCommand,
                              "--values and --shared-memory exclude each other: "
                              "with shared memory no floats go in the request");
    }
    SharedMemoryReduceFlags shared;
    shared.connection = f.connection;
    shared.source = source_options;
    shared.ops = *std::move(ops);
    shared.kernel = f.kernel;
    shared.block_size = f.block_size;
    shared.device = f.device;
    shared.piece_elements = chunk_elements;
    shared.verify = f.verify;
    return RunSharedMemoryReduce(shared);
  }
  if (ops->size() > 1 && source_options.path == "-") {
    return ReportUsageError(kCommand,
                            "a list of ops reads the input once per op, and stdin can be read "
                            "only once: give a file or --random N, or add --shared-memory");
  }

  absl::StatusOr<std::unique_ptr<client::FloatSource>> source = client::OpenSource(source_options);
  if (!source.ok()) return ReportUsageError(kCommand, std::string(source.status().message()));
  absl::StatusOr<std::unique_ptr<client::ReducerClient>> connected = Connect(f.connection);
  if (!connected.ok()) return ReportUsageError(kCommand, std::string(connected.status().message()));
  for (size_t i = 0; i < ops->size(); ++i) {
    if (i > 0) {  // each further op reads the input again, from the start
      source = client::OpenSource(source_options);
      if (!source.ok()) return ReportUsageError(kCommand, std::string(source.status().message()));
    }
    const int exit =
        ReduceOnce(f, source_options, chunk_elements, (*ops)[i], std::move(*source), **connected);
    if (exit != kExitOk) return exit;
  }
  return kExitOk;
}

}  // namespace gpureduce::cli
