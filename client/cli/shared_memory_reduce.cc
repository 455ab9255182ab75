#include "client/cli/shared_memory_reduce.h"

#include <sys/mman.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "client/cli/interrupt_watch.h"
#include "client/cli/progress_bar.h"
#include "client/cli/reduce_output.h"
#include "client/reducer_client.h"
#include "client/running_reference.h"
#include "client/shared_memory/registered_region.h"
#include "client/shared_memory/shared_memory_object.h"

namespace gpureduce::cli {
namespace {

constexpr char kCommand[] = "reduce";
constexpr absl::Duration kLastResortTimeout = absl::Seconds(2);

// The input read so far, what it is, and the client's references (--verify), one per op.
struct Input {
  std::unique_ptr<client::FloatSource> source;
  std::vector<client::RunningReference> references;

  void Account(absl::Span<const float> piece) {
    for (client::RunningReference& reference : references) reference.Add(piece);
  }
};

int Interrupted(const InterruptWatch& watch, const char* when) {
  std::fprintf(stderr, "gpureduce %s: interrupted %s\n", kCommand, when);
  return watch.exit_code();
}

// An input of unknown length (text, a pipe) is read into memory first: the object is sized once.
absl::StatusOr<std::vector<float>> ReadWhole(Input& input, size_t piece_elements) {
  std::vector<float> values;
  while (true) {
    const size_t before = values.size();
    values.resize(before + piece_elements);
    absl::StatusOr<size_t> filled =
        input.source->Read(absl::MakeSpan(values.data() + before, piece_elements));
    if (!filled.ok()) return filled.status();
    values.resize(before + *filled);
    input.Account(absl::MakeConstSpan(values.data() + before, *filled));
    if (*filled == 0) break;
  }
  return values;
}

// Reads the input straight into the mapping, a piece at a time, drawing the progress bar.
absl::Status LoadInto(absl::Span<float> mapping, Input& input, size_t piece_elements,
                      const InterruptWatch& watch) {
  ProgressBar progress(mapping.size() * sizeof(float));
  size_t loaded = 0;
  while (loaded < mapping.size() && !watch.interrupted()) {
    const absl::Span<float> piece =
        mapping.subspan(loaded, std::min(piece_elements, mapping.size() - loaded));
    absl::StatusOr<size_t> filled = input.source->Read(piece);
    if (!filled.ok()) return filled.status();
    if (*filled == 0) {
      return absl::DataLossError(
          absl::StrCat("the input ended after ", loaded, " of ", mapping.size(), " floats"));
    }
    input.Account(piece.first(*filled));
    loaded += *filled;
    progress.Update(loaded * sizeof(float));
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
  if (flags.verify) {
    for (v1::Op op : flags.ops) input.references.emplace_back(op);
  }
  std::optional<uint64_t> total = input.source->total_count();
  std::vector<float> buffered;
  if (!total.has_value()) {
    absl::StatusOr<std::vector<float>> whole = ReadWhole(input, flags.piece_elements);
    if (!whole.ok()) {
      return ReportUsageError(
          kCommand, absl::StrCat(input.source->Describe(), ": ", whole.status().message()));
    }
    buffered = std::move(*whole);
    total = buffered.size();
  }
  const uint64_t bytes = *total * sizeof(float);

  absl::StatusOr<std::unique_ptr<client::ReducerClient>> connected =
      Connect(flags.connection, /*own_connection=*/false, client::Balancing::kInOrder);
  if (!connected.ok()) return ReportUsageError(kCommand, std::string(connected.status().message()));
  // Shared with the last resort of a second Ctrl-C, which may run while this thread is in a call.
  std::shared_ptr<client::ReducerClient> reducer = std::move(*connected);
  client::CallOptions options;
  options.timeout = CallTimeout(flags.connection);

  // From here a signal must not end the process before the object is removed again.
  watch.SetLastResort([] {});
  // An empty input still needs an object to register: one float, of which none is reduced.
  absl::StatusOr<client::SharedMemoryObject> object =
      client::SharedMemoryObject::Create(std::max<uint64_t>(bytes, sizeof(float)));
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
  absl::Span<float> mapping = object->floats().first(*total);
  if (!buffered.empty()) {
    std::memcpy(mapping.data(), buffered.data(), bytes);
    buffered = {};
  } else if (absl::Status loaded = LoadInto(mapping, input, flags.piece_elements, watch);
             !loaded.ok()) {
    // A read the signal cut short is the interrupt, not a bad input.
    if (watch.interrupted()) return Interrupted(watch, "while loading the input");
    return ReportUsageError(kCommand,
                            absl::StrCat(input.source->Describe(), ": ", loaded.message()));
  }
  if (watch.interrupted()) return Interrupted(watch, "while loading the input");

  ClientSide client_side;
  client_side.input = input.source->Describe();
  client_side.shared_memory = SharedMemoryUse{object->key(),
                                              region->name(),
                                              object->size(),
                                              absl::Now() - load_start,
                                              region->client_register_time(),
                                              region->region().register_us()};
  if (!flags.connection.json.on_stdout()) {
    std::fputs(FormatSharedMemoryText(*client_side.shared_memory).c_str(), stdout);
  }
  for (size_t i = 0; i < flags.ops.size(); ++i) {
    if (watch.interrupted()) return Interrupted(watch, "between ops");
    v1::ReduceSpec spec;
    spec.set_op(flags.ops[i]);
    spec.set_kernel(flags.kernel);
    spec.set_block_size(flags.block_size);
    if (flags.device >= 0) spec.set_device(static_cast<int32_t>(flags.device));
    spec.set_expected_count(*total);
    const absl::Time start = absl::Now();
    absl::StatusOr<v1::ReduceResponse> response =
        reducer->ReduceShared(spec, region->name(), 0, bytes, options);
    client_side.wall = absl::Now() - start;
    if (!response.ok()) return ReportServerError(kCommand, response.status());
    std::optional<Verification> verification;
    if (flags.verify) {
      const client::RunningReference& reference = input.references[i];
      verification = Verification{reference.value(), reference.index(), reference.scale()};
    }
    if (int exit =
            PrintAnswer(kCommand, flags.connection,
                        FormatReduceText(flags.ops[i], *response, client_side, verification),
                        FormatReduceJson(flags.ops[i], *response, client_side, verification));
        exit != kExitOk) {
      return exit;
    }
    std::fflush(stdout);
  }

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
