#include "client/input/npy_source.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/status_macros.h"

namespace gpureduce::client {
namespace {

// Values are copied byte for byte into floats; "<f4" needs no conversion only on such a host.
static_assert(std::endian::native == std::endian::little, "gpureduce assumes a little-endian host");

void ByteSwap(absl::Span<float> values) {
  for (float& value : values) {
    value = std::bit_cast<float>(__builtin_bswap32(std::bit_cast<uint32_t>(value)));
  }
}

}  // namespace

absl::StatusOr<std::unique_ptr<NpySource>> NpySource::Open(std::unique_ptr<ByteReader> reader) {
  ASSIGN_OR_RETURN(NpyHeader header, ReadNpyHeader(*reader));
  if (reader->size().has_value()) {
    const uint64_t data_bytes = header.count * sizeof(float);
    const uint64_t present = *reader->size() - std::min(*reader->size(), reader->position());
    if (present != data_bytes) {
      const std::string promise =
          absl::StrCat("its header (", header.data_offset, " bytes) declares shape ",
                       FormatNpyShape(header.shape), " = ", header.count,
                       " float32 values = ", data_bytes, " bytes of data");
      if (present < data_bytes) {
        return absl::InvalidArgumentError(absl::StrCat(reader->name(), " is truncated: ", promise,
                                                       ", but only ", present,
                                                       " bytes follow the header"));
      }
      return absl::InvalidArgumentError(absl::StrCat(
          reader->name(), " has ", present - data_bytes, " unexpected trailing bytes: ", promise,
          ", but ", present, " bytes follow the header"));
    }
  }
  return std::unique_ptr<NpySource>(new NpySource(std::move(reader), std::move(header)));
}

NpySource::NpySource(std::unique_ptr<ByteReader> reader, NpyHeader header)
    : reader_(std::move(reader)), header_(std::move(header)), remaining_(header_.count) {}

absl::StatusOr<uint64_t> NpySource::Skip(uint64_t values) {
  const uint64_t n = std::min<uint64_t>(values, remaining_);
  ASSIGN_OR_RETURN(const uint64_t bytes, reader_->Skip(n * sizeof(float)));
  if (bytes != n * sizeof(float)) {
    return absl::InvalidArgumentError(
        absl::StrCat(reader_->name(), " is truncated: its header declares ", header_.count,
                     " float32 values, but the data ends after ",
                     header_.count - remaining_ + bytes / sizeof(float), " values"));
  }
  remaining_ -= n;
  return n;
}

absl::Status NpySource::CheckNothingFollows() {
  if (reader_->size().has_value()) return absl::OkStatus();  // Open checked a file's length
  ASSIGN_OR_RETURN(const absl::string_view extra, reader_->Peek(1));
  if (!extra.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(reader_->name(), " has unexpected bytes after the ", header_.count,
                     " float32 values its NPY header declares"));
  }
  return absl::OkStatus();
}

absl::StatusOr<size_t> NpySource::Read(absl::Span<float> out) {
  const size_t n = static_cast<size_t>(std::min<uint64_t>(out.size(), remaining_));
  if (n == 0) {
    // The end, also of an empty array (a 0 in its shape), whose data no Read below reached.
    if (remaining_ == 0) RETURN_IF_ERROR(CheckNothingFollows());
    return 0;
  }
  out = out.first(n);
  ASSIGN_OR_RETURN(const size_t got, reader_->Read(absl::MakeSpan(
                                         reinterpret_cast<char*>(out.data()), n * sizeof(float))));
  if (got != n * sizeof(float)) {
    // Only a stream (or a file shrinking under us) gets here: a file's size was checked in Open.
    const uint64_t have = header_.count - remaining_ + got / sizeof(float);
    return absl::InvalidArgumentError(absl::StrCat(
        reader_->name(), " is truncated: its header declares shape ", FormatNpyShape(header_.shape),
        " = ", header_.count, " float32 values, but the data ends after ", have,
        got % sizeof(float) != 0 ? " values and a partial one" : " values"));
  }
  if (header_.big_endian) ByteSwap(out);
  remaining_ -= n;
  if (remaining_ == 0) RETURN_IF_ERROR(CheckNothingFollows());
  return n;
}

std::string NpySource::Describe() const {
  return absl::StrCat(reader_->name(), " (npy v", header_.major_version, ".", header_.minor_version,
                      " ", header_.descr, header_.fortran_order ? " fortran_order" : "", ", shape ",
                      FormatNpyShape(header_.shape), ", ", header_.count, " floats)");
}

}  // namespace gpureduce::client
