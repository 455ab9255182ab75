#pragma once

// How `gpureduce reduce` reports a result: readable text, or one JSON object with --json.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "gpureduce/v1/reduce.pb.h"

namespace gpureduce::cli {

// How `reduce --shared-memory` delivered the input: a region registered once for every op.
struct SharedMemoryUse {
  std::string key;                 // the POSIX object, "/gpureduce-<pid>-<hex>"
  std::string region;              // the name it was registered under
  uint64_t bytes = 0;              // the object's size
  absl::Duration load;             // writing the input into it
  absl::Duration client_register;  // the registration call, as the client saw it
  double server_register_us = 0;   // the server's own time to map and pin it (register_us)
};

struct ClientSide {
  absl::Duration wall;
  bool streamed = false;
  std::string input;  // what was reduced, e.g. "random (100000000 floats, seed 1)"
  std::optional<SharedMemoryUse> shared_memory;  // set: reduced by reference, not sent
  // An array request's layout (client::DescribeLayout: "shape (31, 7) along axis 1"); "": a
  // full reduction.
  std::string array;
  std::vector<std::string> outputs;  // the .npy files --output wrote, one per op in order
};

// "shared memory: ..." (one line): the object, how long loading and registration took.
std::string FormatSharedMemoryText(const SharedMemoryUse& use);

struct Verification {
  double reference = 0;
  int64_t reference_index = -1;
  double scale = 0;  // |error| / scale is the relative error reported
};

// --verify of a typed result (any dtype, any op, several ops): the client's answer and what
// differs ("" when it agrees).
struct ResultCheck {
  v1::Op op = v1::SUM;
  std::string reference;  // as FormatResultValue writes it
  std::string problem;
};

// A typed result's value exactly as its dtype has it: integers exactly, float64 with 17
// significant digits, float32 9, float16 5, bfloat16 4 (each enough to read back the same
// value); "nan", "inf", "-inf".
std::string FormatTypedValue(v1::DType dtype, double value, int64_t int_value, bool integer);
std::string FormatResultValue(const v1::OpResult& result);

// "result: OP = VALUE (DTYPE...)" per typed result, one line each.
std::string FormatResultsText(const v1::ReduceResponse& response);

std::string FormatReduceText(v1::Op op, const v1::ReduceResponse& response,
                             const ClientSide& client,
                             const std::optional<Verification>& verification,
                             const std::vector<ResultCheck>& checks = {});

std::string FormatReduceJson(v1::Op op, const v1::ReduceResponse& response,
                             const ClientSide& client,
                             const std::optional<Verification>& verification,
                             const std::vector<ResultCheck>& checks = {});

}  // namespace gpureduce::cli
