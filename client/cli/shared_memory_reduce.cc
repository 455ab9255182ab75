#include "client/cli/shared_memory_reduce.h"

#include <sys/mman.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "client/array_layout.h"
#include "client/cli/interrupt_watch.h"
#include "client/cli/progress_bar.h"
#include "client/cli/reduce_output.h"
#include "client/cli/reduce_request.h"
#include "client/reducer_client.h"
#include "client/shared_memory/registered_region.h"
#include "client/shared_memory/shared_memory_object.h"
#include "common/reduction/dtype.h"

namespace gpureduce::cli {
namespace {

constexpr char kCommand[] = "reduce";
constexpr absl::Duration kLastResortTimeout = absl::Seconds(2);

// The input, what it holds, and the client's references (--verify).
struct Input {
  std::unique_ptr<client::FloatSource> source;
  size_t element_size = sizeof(float);
  size_t piece_elements = 0;
  References references;
};

int Interrupted(const InterruptWatch& watch, const char* when) {
  std::fprintf(stderr, "gpureduce %s: interrupted %s\n", kCommand, when);
  return watch.exit_code();
}

// An input of unknown length (text, a pipe) is read into memory first: the object is sized once.
absl::StatusOr<std::vector<char>> ReadWhole(Input& input) {
  const size_t piece_bytes = input.piece_elements * input.element_size;
  std::vector<char> bytes;
  while (true) {
    const size_t before = bytes.size();
    bytes.resize(before + piece_bytes);
    absl::StatusOr<size_t> filled =
        input.source->ReadBytes(absl::MakeSpan(bytes.data() + before, piece_bytes));
    if (!filled.ok()) return filled.status();
    bytes.resize(before + *filled * input.element_size);
    input.references.Add(absl::MakeConstSpan(bytes.data() + before, bytes.size() - before));
    if (*filled == 0) break;
  }
  return bytes;
}

// Reads the input's elements straight into the mapping, a piece at a time, drawing the progress
// bar.
absl::Status LoadInto(absl::Span<char> mapping, Input& input, const InterruptWatch& watch) {
  const size_t piece_bytes = input.piece_elements * input.element_size;
  ProgressBar progress(mapping.size());
  size_t loaded = 0;  // bytes
  while (loaded < mapping.size() && !watch.interrupted()) {
    const absl::Span<char> piece =
        mapping.subspan(loaded, std::min(piece_bytes, mapping.size() - loaded));
    absl::StatusOr<size_t> filled = input.source->ReadBytes(piece);
    if (!filled.ok()) return filled.status();
    if (*filled == 0) {
      return absl::DataLossError(absl::StrCat("the input ended after ", loaded / input.element_size,
                                              " of ", mapping.size() / input.element_size,
                                              " elements"));
    }
    input.references.Add(piece.first(*filled * input.element_size));
    loaded += *filled * input.element_size;
    progress.Update(loaded);
  }
  progress.Finish();
  return absl::OkStatus();
}

}  // namespace

int RunSharedMemoryReduce(SharedMemoryReduceFlags& flags) {
  // Before any thread starts: gRPC's threads must not take Ctrl-C either. Until the object
  // exists a signal still ends the process at once.
  InterruptWatch watch;

  Input input;
  absl::StatusOr<std::unique_ptr<client::FloatSource>> source = client::OpenSource(flags.source);
  if (!source.ok()) return ReportUsageError(kCommand, std::string(source.status().message()));
  input.source = std::move(*source);
  RequestSettings& request = flags.request;
  request.dtype = input.source->dtype();
  input.element_size = DTypeSize(request.dtype);
  absl::StatusOr<size_t> piece_elements = ElementsPerChunk(flags.piece_bytes, request.dtype);
  if (!piece_elements.ok()) {
    return ReportUsageError(kCommand, std::string(piece_elements.status().message()));
  }
  input.piece_elements = *piece_elements;
  absl::StatusOr<client::ArrayLayout> layout =
      ResolveArrayLayout(flags.array, *input.source, request.ops);
  if (!layout.ok()) return ReportUsageError(kCommand, std::string(layout.status().message()));
  if (absl::Status fits =
          CheckArrayVerify(flags.verify, *layout, input.source->total_count(), request.dtype);
      !fits.ok()) {
    return ReportUsageError(kCommand, std::string(fits.message()));
  }
  request.layout = *std::move(layout);
  input.references = References(flags.verify, request);
  std::optional<uint64_t> total = input.source->total_count();
  std::vector<char> buffered;
  if (!total.has_value()) {
    absl::StatusOr<std::vector<char>> whole = ReadWhole(input);
    if (!whole.ok()) {
      return ReportUsageError(
          kCommand, absl::StrCat(input.source->Describe(), ": ", whole.status().message()));
    }
    buffered = std::move(*whole);
    total = buffered.size() / input.element_size;
  }
  const uint64_t bytes = *total * input.element_size;

  absl::StatusOr<std::unique_ptr<client::ReducerClient>> connected =
      Connect(flags.connection, /*own_connection=*/false, client::Balancing::kInOrder);
  if (!connected.ok()) return ReportUsageError(kCommand, std::string(connected.status().message()));
  // Shared with the last resort of a second Ctrl-C, which may run while this thread is in a call.
  std::shared_ptr<client::ReducerClient> reducer = std::move(*connected);
  client::CallOptions options;
  options.timeout = CallTimeout(flags.connection);

  // From here a signal must not end the process before the object is removed again.
  watch.SetLastResort([] {});
  // An empty input still needs an object to register: one element, of which none is reduced.
  absl::StatusOr<client::SharedMemoryObject> object =
      client::SharedMemoryObject::Create(std::max<uint64_t>(bytes, input.element_size));
  if (!object.ok()) return ReportUsageError(kCommand, std::string(object.status().message()));
  if (watch.interrupted()) return Interrupted(watch, "while creating the shared-memory object");
  watch.SetLastResort([reducer, key = object->key(), name = object->region_name()] {
    client::CallOptions last;
    last.timeout = kLastResortTimeout;
    reducer->UnregisterSharedMemory(name, last).IgnoreError();
    shm_unlink(key.c_str());
  });

  // Registered before the input is loaded, so that a server that refuses says so at once.
  absl::StatusOr<client::RegisteredRegion> region =
      client::RegisteredRegion::RegisterSystem(*reducer, *object, options);
  if (!region.ok()) return ReportServerError(kCommand, region.status());
  // The server has mapped it and removed its name (RegisterSystem asks it to), so that however
  // this process ends (even SIGKILL) nothing is left in /dev/shm; an older server did not.
  if (absl::Status unlinked = object->Unlink(); !unlinked.ok()) {
    std::fprintf(stderr, "gpureduce %s: warning: %s\n", kCommand, unlinked.ToString().c_str());
  }
  if (watch.interrupted()) return Interrupted(watch, "while registering");

  const absl::Time load_start = absl::Now();
  const absl::Span<char> mapping(static_cast<char*>(object->data()), bytes);
  if (!buffered.empty()) {
    std::memcpy(mapping.data(), buffered.data(), bytes);
    buffered = {};
  } else if (absl::Status loaded = LoadInto(mapping, input, watch); !loaded.ok()) {
    // A read the signal cut short is the interrupt, not a bad input.
    if (watch.interrupted()) return Interrupted(watch, "while loading the input");
    return ReportUsageError(kCommand,
                            absl::StrCat(input.source->Describe(), ": ", loaded.message()));
  }
  if (watch.interrupted()) return Interrupted(watch, "while loading the input");

  ClientSide client_side;
  client_side.input = input.source->Describe();
  client_side.array = client::DescribeLayout(request.layout);
  client_side.shared_memory = SharedMemoryUse{object->key(),
                                              region->name(),
                                              object->size(),
                                              absl::Now() - load_start,
                                              region->client_register_time(),
                                              region->region().register_us()};
  if (!flags.connection.json.on_stdout()) {
    // Shown before the request, which may take a while, even where stdout is a file or a pipe.
    std::fputs(FormatSharedMemoryText(*client_side.shared_memory).c_str(), stdout);
    std::fflush(stdout);
  }
  if (watch.interrupted()) return Interrupted(watch, "before reducing");
  // One request for every op, as the streamed path sends: the server reads the region once.
  const v1::ReduceSpec spec = MakeReduceSpec(request, *total);
  const absl::Time start = absl::Now();
  absl::StatusOr<v1::ReduceResponse> response =
      reducer->ReduceShared(spec, region->name(), 0, bytes, options);
  client_side.wall = absl::Now() - start;
  if (watch.interrupted()) return Interrupted(watch, "while reducing");
  if (!response.ok()) return ReportServerError(kCommand, response.status());
  const std::optional<Verification> verification = input.references.ClassicVerification();
  const std::vector<ResultCheck> checks = input.references.Checks(request.ops, *response);
  if (int exit = PrintReduceAnswer(kCommand, flags.connection, flags.output, request.ops.front(),
                                   *response, client_side, verification, checks);
      exit != kExitOk) {
    return exit;
  }
  std::fflush(stdout);

  // The destructors would do both; done here so that a failure is reported.
  if (absl::Status status = region->Unregister(); !status.ok()) {
    std::fprintf(stderr, "gpureduce %s: warning: could not unregister region %s: %s\n", kCommand,
                 region->name().c_str(), status.ToString().c_str());
  }
  if (absl::Status status = object->Close(); !status.ok()) {
    std::fprintf(stderr, "gpureduce %s: warning: %s\n", kCommand, status.ToString().c_str());
  }
  return kExitOk;
}

}  // namespace gpureduce::cli
