#include "client/input/raw_source.h"

#include <bit>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/reduction/op_name.h"
#include "common/status_macros.h"

namespace gpureduce::client {

// Bytes are copied straight into elements, which is only right on a little-endian host.
static_assert(std::endian::native == std::endian::little, "gpureduce assumes a little-endian host");

absl::StatusOr<std::unique_ptr<RawSource>> RawSource::Open(std::unique_ptr<ByteReader> reader,
                                                           DType dtype) {
  const size_t size = DTypeSize(dtype);
  if (reader->size().has_value() && *reader->size() % size != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        reader->name(), " is ", *reader->size(), " bytes, which is not a multiple of ", size,
        " bytes, so it is not raw ", DTypeName(dtype), " data (", *reader->size() / size,
        " values and ", *reader->size() % size, " bytes left over)"));
  }
  return std::unique_ptr<RawSource>(new RawSource(std::move(reader), dtype));
}

absl::StatusOr<size_t> RawSource::Read(absl::Span<float> out) {
  if (dtype_ != DType::kFloat32) {
    return absl::FailedPreconditionError(
        absl::StrCat(reader_->name(), " holds ", DTypeName(dtype_), ", not float32"));
  }
  return ReadBytes(absl::MakeSpan(reinterpret_cast<char*>(out.data()), out.size() * sizeof(float)));
}

absl::StatusOr<size_t> RawSource::ReadBytes(absl::Span<char> out) {
  const size_t size = DTypeSize(dtype_);
  ASSIGN_OR_RETURN(const size_t got, reader_->Read(out.first(out.size() / size * size)));
  if (got % size != 0) {
    // Read() comes up short only at the end of input, so these bytes are all that is left.
    return absl::InvalidArgumentError(absl::StrCat(
        reader_->name(), " ends with a partial ", DTypeName(dtype_), " value: ", got % size,
        got % size == 1 ? " stray byte" : " stray bytes", " after ", delivered_ + got / size,
        " values (the input is not a multiple of ", size, " bytes)"));
  }
  delivered_ += got / size;
  return got / size;
}

absl::StatusOr<uint64_t> RawSource::Skip(uint64_t values) {
  const size_t size = DTypeSize(dtype_);
  ASSIGN_OR_RETURN(const uint64_t bytes, reader_->Skip(values * size));
  delivered_ += bytes / size;  // a partial value left at the end: Read reports it
  return bytes / size;
}

std::optional<uint64_t> RawSource::total_count() const {
  if (!reader_->size().has_value()) return std::nullopt;
  return *reader_->size() / DTypeSize(dtype_);
}

std::string RawSource::Describe() const {
  const std::optional<uint64_t> count = total_count();
  return absl::StrCat(
      reader_->name(), " (raw little-endian ", DTypeName(dtype_),
      count.has_value()
          ? absl::StrCat(", ", *count, " ", dtype_ == DType::kFloat32 ? "floats" : "values")
          : "",
      ")");
}

}  // namespace gpureduce::client
