#pragma once

// How `gpureduce reduce` reports a result: readable text, or one JSON object with --json.

#include <optional>
#include <string>

#include "absl/time/time.h"
#include "gpureduce/v1/reduce.pb.h"

namespace gpureduce::cli {

struct ClientSide {
  absl::Duration wall;
  bool streamed = false;
  std::string input;  // what was reduced, e.g. "random (100000000 floats, seed 1)"
};

struct Verification {
  double reference = 0;
  int64_t reference_index = -1;
  double scale = 0;  // |error| / scale is the relative error reported
};

std::string FormatReduceText(v1::Op op, const v1::ReduceResponse& response,
                             const ClientSide& client,
                             const std::optional<Verification>& verification);

std::string FormatReduceJson(v1::Op op, const v1::ReduceResponse& response,
                             const ClientSide& client,
                             const std::optional<Verification>& verification);

}  // namespace gpureduce::cli
