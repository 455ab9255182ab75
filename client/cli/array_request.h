#pragma once

// `gpureduce reduce`'s array requests (issue 23): --shape, --axis, --keepdims and --segments,
// parsed before the input is opened and resolved against it once it is (a .npy file's own shape,
// the input's element count), the same for a message, a stream and shared memory.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "client/array_layout.h"
#include "client/input/float_source.h"
#include "common/flags.h"
#include "common/reduction/dtype.h"
#include "gpureduce/v1/reduce.pb.h"

namespace gpureduce::cli {

// The flags as given.
struct ArrayFlags {
  std::string shape;  // "31,1000003"; "": a .npy file's own where --axis or --keepdims asks
  std::string axis;   // "1", "0,-1"; "": every axis
  bool keepdims = false;
  std::string segments;  // "5,0,17", or "@FILE" (lengths separated by whitespace or commas)
  std::string output;    // --output FILE: the results as .npy
};

void RegisterArrayFlags(FlagSet& flags, ArrayFlags* f);

// The flags parsed (a --segments file read), before the input is known.
struct ArrayRequest {
  std::optional<std::vector<uint64_t>> shape;
  std::vector<int32_t> axes;
  bool keepdims = false;
  std::vector<uint64_t> segments;

  // Whether any of --shape, --axis, --keepdims, --segments was given: an array request.
  bool wanted() const {
    return shape.has_value() || !axes.empty() || keepdims || !segments.empty();
  }
};

// Syntax errors, an unreadable --segments file, and combinations refused whatever the input:
// --shape or --axis or --keepdims with --segments.
absl::StatusOr<ArrayRequest> ParseArrayFlags(const ArrayFlags& flags);

// The request's layout once its input is open: --shape, or for --axis and --keepdims without it a
// .npy file's own shape (a raw, text or random input has none; a Fortran-order file is refused,
// its elements arriving in the reverse axis order), checked against the ops and the input's
// element count where that is known. An empty layout when no array was asked for.
absl::StatusOr<client::ArrayLayout> ResolveArrayLayout(const ArrayRequest& request,
                                                       const client::FloatSource& source,
                                                       const std::vector<v1::Op>& ops);

// --verify of an array request keeps the input in memory (each output's reference is computed
// from it at the end): refused, before anything is read, over this many bytes.
inline constexpr uint64_t kArrayVerifyBytes = uint64_t{2} << 30;

// InvalidArgument when --verify of `layout` would keep more than kArrayVerifyBytes of an input of
// `count` elements (when known) of `dtype`.
absl::Status CheckArrayVerify(bool verify, const client::ArrayLayout& layout,
                              std::optional<uint64_t> count, DType dtype);

}  // namespace gpureduce::cli
