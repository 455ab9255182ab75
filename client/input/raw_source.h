#pragma once

// Streams a headerless file or pipe of little-endian values of one dtype (float32 unless told:
// what numpy's arr.astype('<f4').tofile() writes) in caller-sized chunks.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "client/input/byte_reader.h"
#include "client/input/float_source.h"

namespace gpureduce::client {

class RawSource final : public FloatSource {
 public:
  // Rejects an input of known size that is not a multiple of the dtype's size. For streams the
  // same check happens at the end: a trailing partial value is an error, never silently dropped.
  static absl::StatusOr<std::unique_ptr<RawSource>> Open(std::unique_ptr<ByteReader> reader,
                                                         DType dtype = DType::kFloat32);

  DType dtype() const override { return dtype_; }
  absl::StatusOr<size_t> ReadBytes(absl::Span<char> out) override;
  // Float32 input only.
  absl::StatusOr<size_t> Read(absl::Span<float> out) override;
  absl::StatusOr<uint64_t> Skip(uint64_t values) override;  // a seek for a regular file
  // Known for regular files (including a file redirected to stdin); std::nullopt for pipes.
  std::optional<uint64_t> total_count() const override;
  std::string Describe() const override;

 private:
  RawSource(std::unique_ptr<ByteReader> reader, DType dtype)
      : reader_(std::move(reader)), dtype_(dtype) {}

  std::unique_ptr<ByteReader> reader_;
  DType dtype_;
  uint64_t delivered_ = 0;
};

}  // namespace gpureduce::client
