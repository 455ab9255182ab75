#pragma once

// Streams the values of a float32 .npy file (format 1.0, 2.0 or 3.0), any shape, either byte
// order, in caller-sized chunks.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "client/input/byte_reader.h"
#include "client/input/float_source.h"
#include "client/input/npy_header.h"

namespace gpureduce::client {

class NpySource final : public FloatSource {
 public:
  // Parses the header and, when the input's size is known, checks that it holds exactly the
  // header plus count * 4 bytes (naming both numbers when it does not).
  static absl::StatusOr<std::unique_ptr<NpySource>> Open(std::unique_ptr<ByteReader> reader);

  // Reads in storage order (C or Fortran: a reduction visits every element once either way).
  absl::StatusOr<size_t> Read(absl::Span<float> out) override;
  absl::StatusOr<uint64_t> Skip(uint64_t values) override;  // a seek for a regular file
  std::optional<uint64_t> total_count() const override { return header_.count; }
  std::string Describe() const override;

  const NpyHeader& header() const { return header_; }

 private:
  NpySource(std::unique_ptr<ByteReader> reader, NpyHeader header);
  // A stream's length is unknown up front: at its end, makes sure no bytes follow the declared
  // data (Open checked a file's length already).
  absl::Status CheckNothingFollows();

  std::unique_ptr<ByteReader> reader_;
  NpyHeader header_;
  uint64_t remaining_;  // Values not yet delivered.
};

}  // namespace gpureduce::client
