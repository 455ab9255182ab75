#pragma once

// What every way `gpureduce reduce` delivers its input (one message, a stream, a shared-memory
// region) shares: the request's spec and the client's references for --verify with their report.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "client/array_layout.h"
#include "client/cli/command.h"
#include "client/cli/reduce_output.h"
#include "client/running_reference.h"
#include "client/typed_reference.h"
#include "common/reduction/dtype.h"
#include "gpureduce/v1/reduce.pb.h"

namespace gpureduce::cli {

// How many whole elements of `dtype` a piece of `chunk_bytes` holds; InvalidArgument (saying the
// least --chunk-size takes) when not one.
absl::StatusOr<size_t> ElementsPerChunk(uint64_t chunk_bytes, DType dtype);

// Whether a request needs the typed results (anything but one classic op over float32).
bool IsTyped(DType dtype, const std::vector<v1::Op>& ops, double ddof);

struct RequestSettings {
  std::vector<v1::Op> ops;  // in order, at least one
  DType dtype = DType::kFloat32;
  double ddof = 0;
  std::string kernel = "auto";
  uint32_t block_size = 0;
  int64_t device = -1;  // -1: the server picks
  // An array request's shape and axes, or segments (issue 23); empty: a full reduction.
  client::ArrayLayout layout;
};

// The spec of one request for every op: a single classic float32 op as every earlier client
// sent it (no dtype, no ops list), anything else typed, with the array request's layout.
// `expected_count` lets the server refuse an input cut short on the way.
v1::ReduceSpec MakeReduceSpec(const RequestSettings& settings,
                              std::optional<uint64_t> expected_count);

// The client's references for --verify: the float64 one of a single classic float32 op, or a
// typed one (one pass answering every op) for every other request, or for an array request the
// input itself, kept to answer each output at the end (ComputeArrayAnswers). None without
// --verify.
struct References {
  std::optional<client::RunningReference> classic;
  std::optional<client::TypedReference> typed;
  std::optional<std::string> array_input;
  RequestSettings settings;

  References() = default;
  References(bool verify, const RequestSettings& settings);

  // Whole little-endian elements of the request's dtype, in the input's order.
  void Add(absl::Span<const char> bytes);

  // The classic reference's report, if that is the one kept.
  std::optional<Verification> ClassicVerification() const;
  // The typed reference's check of each op's result, if that is the one kept.
  std::vector<ResultCheck> Checks(const std::vector<v1::Op>& ops,
                                  const v1::ReduceResponse& response) const;

 private:
  // Each op's array checked element by element against the kept input.
  std::vector<ResultCheck> ArrayChecks(const std::vector<v1::Op>& ops,
                                       const v1::ReduceResponse& response) const;
};

// Writes each op's result to --output's .npy files when `output` names one (listing them in
// `client`), then prints the answer as --json asks. The exit code: 0, 2 when a file could not
// be written (the answer is printed first), or 1 when an array request (client.array) was
// answered without arrays (a server older than them reduced the whole input).
int PrintReduceAnswer(const char* command, ConnectionOptions& connection, const std::string& output,
                      v1::Op first, const v1::ReduceResponse& response, ClientSide& client,
                      const std::optional<Verification>& verification,
                      const std::vector<ResultCheck>& checks);

}  // namespace gpureduce::cli
