#pragma once

// One contiguous part of another source, for a reduction sent as several streams at once
// (`gpureduce reduce --streams N`): values [begin, begin + count) of it, and an error if it
// holds fewer.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "client/input/float_source.h"

namespace gpureduce::client {

class PartSource final : public FloatSource {
 public:
  // Skips `begin` values of `inner` (a seek where it can).
  static absl::StatusOr<std::unique_ptr<PartSource>> Open(std::unique_ptr<FloatSource> inner,
                                                          uint64_t begin, uint64_t count);

  absl::StatusOr<size_t> Read(absl::Span<float> out) override;
  std::optional<uint64_t> total_count() const override { return count_; }
  std::string Describe() const override;

 private:
  PartSource(std::unique_ptr<FloatSource> inner, uint64_t begin, uint64_t count)
      : inner_(std::move(inner)), begin_(begin), count_(count) {}

  std::unique_ptr<FloatSource> inner_;
  uint64_t begin_;
  uint64_t count_;
  uint64_t delivered_ = 0;
};

}  // namespace gpureduce::client
