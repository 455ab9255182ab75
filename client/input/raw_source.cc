#include "client/input/raw_source.h"

#include <bit>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace gpureduce::client {

// Bytes are copied straight into floats, which is only right on a little-endian host.
static_assert(std::endian::native == std::endian::little, "gpureduce assumes a little-endian host");

absl::StatusOr<std::unique_ptr<RawSource>> RawSource::Open(std::unique_ptr<ByteReader> reader) {
  if (reader->size().has_value() && *reader->size() % sizeof(float) != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(reader->name(), " is ", *reader->size(),
                     " bytes, which is not a multiple of 4 bytes, so it is not raw float32 data (",
                     *reader->size() / sizeof(float), " values and ",
                     *reader->size() % sizeof(float), " bytes left over)"));
  }
  return std::unique_ptr<RawSource>(new RawSource(std::move(reader)));
}

RawSource::RawSource(std::unique_ptr<ByteReader> reader) : reader_(std::move(reader)) {}

absl::StatusOr<size_t> RawSource::Read(absl::Span<float> out) {
  ASSIGN_OR_RETURN(const size_t got,
                   reader_->Read(absl::MakeSpan(reinterpret_cast<char*>(out.data()),
                                                out.size() * sizeof(float))));
  if (got % sizeof(float) != 0) {
    // Read() comes up short only at the end of input, so these bytes are all that is left.
    return absl::InvalidArgumentError(absl::StrCat(
        reader_->name(), " ends with a partial float32 value: ", got % sizeof(float),
        got % sizeof(float) == 1 ? " stray byte" : " stray bytes", " after ",
        delivered_ + got / sizeof(float), " values (the input is not a multiple of 4 bytes)"));
  }
  delivered_ += got / sizeof(float);
  return got / sizeof(float);
}

absl::StatusOr<uint64_t> RawSource::Skip(uint64_t values) {
  ASSIGN_OR_RETURN(const uint64_t bytes, reader_->Skip(values * sizeof(float)));
  delivered_ += bytes / sizeof(float);  // a partial value left at the end: Read reports it
  return bytes / sizeof(float);
}

std::optional<uint64_t> RawSource::total_count() const {
  if (!reader_->size().has_value()) return std::nullopt;
  return *reader_->size() / sizeof(float);
}

std::string RawSource::Describe() const {
  const std::optional<uint64_t> count = total_count();
  return absl::StrCat(reader_->name(), " (raw little-endian float32",
                      count.has_value() ? absl::StrCat(", ", *count, " floats") : "", ")");
}

}  // namespace gpureduce::client
