#include "client/cli/reduce_command.h"

#include <cmath>
#include <cstdio>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "client/array_layout.h"
#include "client/cli/array_request.h"
#include "client/cli/command.h"
#include "client/cli/op_list.h"
#include "client/cli/progress_bar.h"
#include "client/cli/reduce_flags.h"
#include "client/cli/reduce_in_parts.h"
#include "client/cli/reduce_output.h"
#include "client/cli/reduce_request.h"
#include "client/cli/shared_memory_reduce.h"
#include "client/input/open_source.h"
#include "client/reducer_client.h"
#include "client/running_reference.h"
#include "common/reduction/dtype.h"
#include "common/reduction/op_name.h"
#include "common/shared_memory_flag.h"

namespace gpureduce::cli {
namespace {

constexpr char kCommand[] = "reduce";

// The ops over the input `source` (freshly opened) in one request, printed as one result.
int ReduceOnce(ReduceFlags& f, const client::SourceOptions& source_options,
               const std::vector<v1::Op>& ops, const ArrayRequest& array,
               std::unique_ptr<client::FloatSource> source, client::ReducerClient& reducer) {
  const DType dtype = source->dtype();
  const size_t element_size = DTypeSize(dtype);
  absl::StatusOr<size_t> elements = ElementsPerChunk(f.chunk_bytes, dtype);
  if (!elements.ok()) return ReportUsageError(kCommand, std::string(elements.status().message()));
  const size_t chunk_elements = *elements;
  const bool typed = IsTyped(dtype, ops, f.ddof);
  if (f.values && dtype != DType::kFloat32) {
    return ReportUsageError(
        kCommand, absl::StrCat("--values sends float32 only; ", source->Describe(), " holds ",
                               DTypeName(dtype), ": leave --values out"));
  }
  absl::StatusOr<client::ArrayLayout> layout = ResolveArrayLayout(array, *source, ops);
  if (!layout.ok()) return ReportUsageError(kCommand, std::string(layout.status().message()));
  if (absl::Status fits = CheckArrayVerify(f.verify, *layout, source->total_count(), dtype);
      !fits.ok()) {
    return ReportUsageError(kCommand, std::string(fits.message()));
  }
  RequestSettings settings{ops, dtype, f.ddof, f.kernel, f.block_size, f.device, *layout};
  const v1::ReduceSpec spec = MakeReduceSpec(settings, source->total_count());
  References references(f.verify, settings);
  References* refs = f.verify ? &references : nullptr;

  client::StreamOptions options;
  options.timeout = CallTimeout(f.connection);
  options.use_values_field = f.values;
  options.chunk_elements = chunk_elements;

  const std::optional<uint64_t> total = source->total_count();
  if (f.streams > 1 && typed) {
    return ReportUsageError(
        kCommand,
        absl::StrCat("--streams ", f.streams,
                     " combines the parts' answers on the client, which "
                     "it does for one of sum, prod, min, max, mean, sum_squares, argmin, argmax "
                     "over float32 only; this request (",
                     DTypeName(dtype), ", --op ", f.op, f.ddof != 0 ? ", --ddof" : "",
                     ") needs one stream: leave --streams out"));
  }
  if (f.streams > 1 && !total.has_value()) {
    return ReportUsageError(kCommand,
                            absl::StrCat("--streams ", f.streams,
                                         " needs an input of known length (a .npy "
                                         "or raw file, or --random); ",
                                         source->Describe(), " can only be read in order"));
  }
  const bool in_parts = f.streams > 1 && *total > chunk_elements;

  // Otherwise the first chunk decides: an input that fits in it goes in one unary message.
  std::vector<char> first;
  absl::StatusOr<size_t> first_filled = 0;
  const auto read = [&](absl::Span<char> out) -> absl::StatusOr<size_t> {
    absl::StatusOr<size_t> filled = source->ReadBytes(out);
    if (filled.ok() && refs != nullptr) refs->Add(out.first(*filled * element_size));
    return filled;
  };
  if (!in_parts) {
    first.resize(chunk_elements * element_size);
    first_filled = read(absl::MakeSpan(first));
    if (!first_filled.ok()) {
      return ReportUsageError(kCommand, std::string(first_filled.status().message()));
    }
  }
  const bool streamed = in_parts || *first_filled == chunk_elements;

  const absl::Time start = absl::Now();
  absl::StatusOr<v1::ReduceResponse> response;
  if (!streamed) {
    response = reducer.ReduceBytes(
        spec, absl::string_view(first.data(), *first_filled * element_size), options);
  } else {
    const uint64_t total_bytes = total.value_or(0) * element_size;
    ProgressBar progress(total_bytes);
    options.on_progress = [&progress](uint64_t bytes) { progress.Update(bytes); };
    absl::Status input_error;
    if (in_parts) {
      response = SendInParts(f, source_options, *total, spec, options, &input_error);
    } else {
      bool first_sent = false;
      const auto fill = [&](absl::Span<char> out) -> absl::StatusOr<size_t> {
        if (!first_sent) {
          first_sent = true;
          std::copy(first.begin(), first.end(), out.begin());
          return chunk_elements;
        }
        absl::StatusOr<size_t> filled = read(out);
        if (!filled.ok()) input_error = filled.status();
        return filled;
      };
      if (f.values) {  // float32 only: the floats go as `values`
        response = reducer.ReduceStream(
            spec,
            [&](absl::Span<float> out) {
              return fill(
                  absl::MakeSpan(reinterpret_cast<char*>(out.data()), out.size() * sizeof(float)));
            },
            options);
      } else {
        response = reducer.ReduceStreamBytes(spec, fill, options);
      }
    }
    progress.Finish();
    if (!input_error.ok()) {
      return ReportUsageError(kCommand,
                              absl::StrCat(source->Describe(), ": ", input_error.message()));
    }
  }
  const absl::Duration wall = absl::Now() - start;
  if (!response.ok()) return ReportServerError(kCommand, response.status());
  if (in_parts && references.classic.has_value()) {
    if (absl::Status pass = ReferencePass(source_options, chunk_elements, *references.classic);
        !pass.ok()) {
      return ReportUsageError(kCommand, std::string(pass.message()));
    }
  }

  ClientSide client_side{wall, streamed, source->Describe()};
  client_side.array = client::DescribeLayout(settings.layout);
  const std::optional<Verification> verification = references.ClassicVerification();
  const std::vector<ResultCheck> checks = references.Checks(ops, *response);
  const int exit = PrintReduceAnswer(kCommand, f.connection, f.array.output, ops.front(), *response,
                                     client_side, verification, checks);
  std::fflush(stdout);
  return exit;
}

}  // namespace

int RunReduce(int argc, char** argv) {
  ReduceFlags f;
  FlagSet flags(
      "gpureduce reduce", "gpureduce reduce [flags] [FILE|-]",
      "Reduces an array on the server and prints the result with its timing: one "
      "line per op ('result: OP = VALUE (DTYPE)', the value exactly as its dtype "
      "holds it: integers exactly, floats with enough digits to read back). FILE is "
      "a .npy array (float32, float16, float64, int32, int64; bfloat16 bits as uint16 "
      "with --dtype bfloat16), a raw little-endian file (float32, or --dtype) or a "
      "text file of numbers; '-' reads stdin. Inputs larger than one chunk are streamed, so any "
      "size runs in fixed memory on both sides. With --shared-memory a server on this "
      "host (started with --allow-shared-memory) reads the input where it lies instead: "
      "registered once and reduced by reference, every --op in one request. With --axis "
      "(and --shape, or a .npy file's own shape) or --segments the answer is an array per op, "
      "NumPy's reduction along those axes: printed with its dtype and shape, and written as "
      ".npy with --output.");
  RegisterReduceFlags(flags, &f);
  if (int exit = ParseFlags(flags, argc, argv, 1); exit >= 0) return exit;
  if (f.device < -1 || f.device > std::numeric_limits<int32_t>::max()) {
    return ReportUsageError(
        kCommand, absl::StrCat("--device ", f.device, " is not a device index (or -1: any)"));
  }
  absl::StatusOr<std::vector<v1::Op>> ops = ParseOpList(f.op);
  if (!ops.ok()) return ReportUsageError(kCommand, std::string(ops.status().message()));
  std::optional<DType> dtype;
  if (!f.dtype.empty()) {
    absl::StatusOr<DType> parsed = ParseDTypeFlag(f.dtype);
    if (!parsed.ok()) return ReportUsageError(kCommand, std::string(parsed.status().message()));
    dtype = *parsed;
  }
  if (!std::isfinite(f.ddof) || f.ddof < 0) {
    return ReportUsageError(kCommand, absl::StrCat("--ddof ", f.ddof,
                                                   " is not a non-negative number (NumPy's "
                                                   "ddof: 0 for the population, 1 the sample)"));
  }

  client::SourceOptions source_options;
  source_options.format = f.format;
  source_options.dtype = dtype;
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
  if (f.streams == 0) return ReportUsageError(kCommand, "--streams must be at least 1");
  absl::StatusOr<ArrayRequest> array = ParseArrayFlags(f.array);
  if (!array.ok()) return ReportUsageError(kCommand, std::string(array.status().message()));
  if (array->wanted() && f.streams > 1) {
    return ReportUsageError(
        kCommand, absl::StrCat("--streams ", f.streams,
                               " combines full reductions of the parts on the client; an array "
                               "request (--shape, --axis, --keepdims, --segments) goes in one "
                               "stream: leave --streams out"));
  }

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
    shared.request =
        RequestSettings{*std::move(ops), DType::kFloat32, f.ddof, f.kernel, f.block_size, f.device};
    shared.piece_bytes = f.chunk_bytes;
    shared.verify = f.verify;
    shared.array = *std::move(array);
    shared.output = f.array.output;
    return RunSharedMemoryReduce(shared);
  }
  absl::StatusOr<std::unique_ptr<client::FloatSource>> source = client::OpenSource(source_options);
  if (!source.ok()) return ReportUsageError(kCommand, std::string(source.status().message()));
  absl::StatusOr<std::unique_ptr<client::ReducerClient>> connected = Connect(f.connection);
  if (!connected.ok()) return ReportUsageError(kCommand, std::string(connected.status().message()));
  const int exit = ReduceOnce(f, source_options, *ops, *array, std::move(*source), **connected);
  if (exit != kExitOk) return exit;
  return kExitOk;
}

}  // namespace gpureduce::cli
