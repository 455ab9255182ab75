#pragma once

// Streams the values of a .npy file (format 1.0, 2.0 or 3.0) of a supported dtype (float32,
// float16, float64, int32, int64; bfloat16 stored as uint16 or int16 when asked for), any shape,
// either byte order, in caller-sized chunks.

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
  // header plus count * item size bytes (naming both numbers when it does not). `requested`
  // (the CLI's --dtype, when given) must be the file's dtype, except that bfloat16 reads a
  // uint16 or int16 file's bits (and is the only way to read one).
  static absl::StatusOr<std::unique_ptr<NpySource>> Open(
      std::unique_ptr<ByteReader> reader, std::optional<DType> requested = std::nullopt);

  DType dtype() const override { return dtype_; }
  // Reads in storage order (C or Fortran: a reduction visits every element once either way).
  absl::StatusOr<size_t> ReadBytes(absl::Span<char> out) override;
  // Float32 files only.
  absl::StatusOr<size_t> Read(absl::Span<float> out) override;
  absl::StatusOr<uint64_t> Skip(uint64_t values) override;  // a seek for a regular file
  std::optional<uint64_t> total_count() const override { return header_.count; }
  std::string Describe() const override;

  const NpyHeader& header() const { return header_; }

 private:
  NpySource(std::unique_ptr<ByteReader> reader, NpyHeader header, DType dtype);
  // A stream's length is unknown up front: at its end, makes sure no bytes follow the declared
  // data (Open checked a file's length already).
  absl::Status CheckNothingFollows();

  std::unique_ptr<ByteReader> reader_;
  NpyHeader header_;
  DType dtype_;
  uint64_t remaining_;  // Values not yet delivered.
};

}  // namespace gpureduce::client
