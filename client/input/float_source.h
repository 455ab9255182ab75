#pragma once

// The CLI's view of an input: a stream of elements delivered in caller-sized chunks, so inputs
// of any size are reduced in fixed memory. Float32 sources deliver floats (Read); every source
// delivers its elements' little-endian bytes (ReadBytes), whatever its dtype.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "common/reduction/dtype.h"

namespace gpureduce::client {

class FloatSource {
 public:
  virtual ~FloatSource() = default;

  // The elements' type: float32 unless the source says otherwise.
  virtual DType dtype() const { return DType::kFloat32; }

  // Fills `out` with up to out.size() / DTypeSize(dtype()) whole elements as little-endian bytes
  // and returns how many elements it wrote, with Read's rules for the end and for errors. The
  // default (for float32 sources) reads floats.
  virtual absl::StatusOr<size_t> ReadBytes(absl::Span<char> out);

  // Fills up to out.size() floats and returns how many it wrote. Returns fewer than out.size()
  // only when the input ends, and 0 only at the end of the input (or for an empty `out`).
  // Malformed input (a truncated file, an invalid text token) is an error, never a short count.
  // A source of another dtype refuses (FailedPrecondition): read its bytes.
  virtual absl::StatusOr<size_t> Read(absl::Span<float> out) = 0;

  // The number of values the source will deliver, when known before reading (file size, npy
  // shape, random count); std::nullopt for text and for streams of unknown length.
  virtual std::optional<uint64_t> total_count() const = 0;

  // Skips the next `values` values, as reading them would (fewer only at the end of the input:
  // the number skipped is returned). Sources that can seek do; the default reads and drops.
  virtual absl::StatusOr<uint64_t> Skip(uint64_t values);

  // One line for logs and errors, e.g. "data.npy (npy v1.0 <f4, shape (1000003,), 1000003 floats)".
  virtual std::string Describe() const = 0;
};

}  // namespace gpureduce::client
