#pragma once

// Parses decimal float32 values from text, streaming: the input is scanned one buffer at a time
// (ByteReader's block, 1 MiB by default), so memory stays bounded whatever the input's size.
//
// Syntax: values are separated by any run of whitespace, commas and semicolons (so CSV, TSV and
// one-per-line all work). A '#' where a value could start begins a comment that runs to the end
// of the line. Values follow std::from_chars: decimal or scientific notation ("1.5e-3", ".5"),
// an optional leading '+', and nan / inf / infinity in any case with an optional sign.
// A finite value beyond float32's range (e.g. 1e39) is an error rather than a silent infinity;
// values too small for float32 round to zero (or the nearest subnormal) as IEEE rounding does.
// Errors name the line and the token.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "client/input/byte_reader.h"
#include "client/input/float_source.h"

namespace gpureduce::client {

class TextSource final : public FloatSource {
 public:
  // The longest token accepted: bounds the memory used for a token split across buffers.
  static constexpr size_t kMaxTokenLength = 1024;

  explicit TextSource(std::unique_ptr<ByteReader> reader);

  absl::StatusOr<size_t> Read(absl::Span<float> out) override;
  std::optional<uint64_t> total_count() const override { return std::nullopt; }
  std::string Describe() const override;

 private:
  // Produces the next value; false at end of input.
  absl::StatusOr<bool> NextValue(float& value);
  // Parses one complete token that started on line `line`.
  absl::StatusOr<float> ParseToken(absl::string_view token, uint64_t line) const;
  absl::Status TokenTooLong(uint64_t line) const;

  std::unique_ptr<ByteReader> reader_;
  absl::string_view pending_;  // Unscanned rest of the reader's current chunk.
  std::string partial_;        // A token cut by the end of a chunk, awaiting its rest.
  uint64_t partial_line_ = 0;
  uint64_t line_ = 1;  // Line of the next unscanned byte.
  bool started_ = false;
  bool in_comment_ = false;
  bool at_end_ = false;
};

}  // namespace gpureduce::client
