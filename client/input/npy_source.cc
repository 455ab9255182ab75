#include "client/input/npy_source.h"

#include <algorithm>
#include <bit>
#include <cstring>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "common/reduction/op_name.h"
#include "common/status_macros.h"

namespace gpureduce::client {
namespace {

// Values are copied byte for byte into elements; "<f4" needs no conversion only on such a host.
static_assert(std::endian::native == std::endian::little, "gpureduce assumes a little-endian host");

void ByteSwap(char* bytes, size_t count, size_t item_size) {
  for (size_t i = 0; i < count; ++i)
    std::reverse(bytes + i * item_size, bytes + (i + 1) * item_size);
}

// The dtype a file of `header` is read as, given the user's --dtype (nullopt: not given).
absl::StatusOr<DType> EffectiveDType(const NpyHeader& header, std::optional<DType> requested,
                                     absl::string_view name) {
  if (!header.dtype.has_value()) {  // u2 or i2
    if (requested == DType::kBFloat16) return DType::kBFloat16;
    return absl::InvalidArgumentError(absl::StrCat(
        name, " holds ", header.descr,
        " (16-bit integers): gpureduce reads such a file only as "
        "bfloat16 bits, with --dtype bfloat16",
        requested.has_value() ? absl::StrCat(", not --dtype ", DTypeName(*requested)) : ""));
  }
  if (requested.has_value() && *requested != *header.dtype) {
    return absl::InvalidArgumentError(absl::StrCat(
        name, " holds ", header.descr, " (", DTypeName(*header.dtype), "), but --dtype asks for ",
        DTypeName(*requested), ": a .npy file says its dtype; leave --dtype out or give ",
        DTypeName(*header.dtype),
        *requested == DType::kBFloat16 ? " (bfloat16 reads only uint16 or int16 files)" : ""));
  }
  return *header.dtype;
}

}  // namespace

absl::StatusOr<std::unique_ptr<NpySource>> NpySource::Open(std::unique_ptr<ByteReader> reader,
                                                           std::optional<DType> requested) {
  ASSIGN_OR_RETURN(NpyHeader header, ReadNpyHeader(*reader));
  ASSIGN_OR_RETURN(const DType dtype, EffectiveDType(header, requested, reader->name()));
  if (reader->size().has_value()) {
    const uint64_t data_bytes = header.count * header.item_size;
    const uint64_t present = *reader->size() - std::min(*reader->size(), reader->position());
    if (present != data_bytes) {
      const std::string promise =
          absl::StrCat("its header (", header.data_offset, " bytes) declares shape ",
                       FormatNpyShape(header.shape), " = ", header.count, " ", DTypeName(dtype),
                       " values = ", data_bytes, " bytes of data");
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
  return std::unique_ptr<NpySource>(new NpySource(std::move(reader), std::move(header), dtype));
}

NpySource::NpySource(std::unique_ptr<ByteReader> reader, NpyHeader header, DType dtype)
    : reader_(std::move(reader)),
      header_(std::move(header)),
      dtype_(dtype),
      remaining_(header_.count) {}

absl::StatusOr<uint64_t> NpySource::Skip(uint64_t values) {
  const uint64_t n = std::min<uint64_t>(values, remaining_);
  const size_t size = header_.item_size;
  ASSIGN_OR_RETURN(const uint64_t bytes, reader_->Skip(n * size));
  if (bytes != n * size) {
    return absl::InvalidArgumentError(
        absl::StrCat(reader_->name(), " is truncated: its header declares ", header_.count, " ",
                     DTypeName(dtype_), " values, but the data ends after ",
                     header_.count - remaining_ + bytes / size, " values"));
  }
  remaining_ -= n;
  return n;
}

absl::Status NpySource::CheckNothingFollows() {
  if (reader_->size().has_value()) return absl::OkStatus();  // Open checked a file's length
  ASSIGN_OR_RETURN(const absl::string_view extra, reader_->Peek(1));
  if (!extra.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(reader_->name(), " has unexpected bytes after the ", header_.count, " ",
                     DTypeName(dtype_), " values its NPY header declares"));
  }
  return absl::OkStatus();
}

absl::StatusOr<size_t> NpySource::Read(absl::Span<float> out) {
  if (dtype_ != DType::kFloat32) {
    return absl::FailedPreconditionError(
        absl::StrCat(reader_->name(), " holds ", DTypeName(dtype_), ", not float32"));
  }
  return ReadBytes(absl::MakeSpan(reinterpret_cast<char*>(out.data()), out.size() * sizeof(float)));
}

absl::StatusOr<size_t> NpySource::ReadBytes(absl::Span<char> out) {
  const size_t size = header_.item_size;
  const size_t n = static_cast<size_t>(std::min<uint64_t>(out.size() / size, remaining_));
  if (n == 0) {
    // The end, also of an empty array (a 0 in its shape), whose data no Read below reached.
    if (remaining_ == 0) RETURN_IF_ERROR(CheckNothingFollows());
    return 0;
  }
  ASSIGN_OR_RETURN(const size_t got, reader_->Read(out.first(n * size)));
  if (got != n * size) {
    // Only a stream (or a file shrinking under us) gets here: a file's size was checked in Open.
    const uint64_t have = header_.count - remaining_ + got / size;
    return absl::InvalidArgumentError(absl::StrCat(
        reader_->name(), " is truncated: its header declares shape ", FormatNpyShape(header_.shape),
        " = ", header_.count, " ", DTypeName(dtype_), " values, but the data ends after ", have,
        got % size != 0 ? " values and a partial one" : " values"));
  }
  if (header_.big_endian) ByteSwap(out.data(), n, size);
  remaining_ -= n;
  if (remaining_ == 0) RETURN_IF_ERROR(CheckNothingFollows());
  return n;
}

std::string NpySource::Describe() const {
  return absl::StrCat(reader_->name(), " (npy v", header_.major_version, ".", header_.minor_version,
                      " ", header_.descr, header_.fortran_order ? " fortran_order" : "", ", shape ",
                      FormatNpyShape(header_.shape), ", ", header_.count, " ",
                      dtype_ == DType::kFloat32 ? "floats" : DTypeName(dtype_), ")");
}

}  // namespace gpureduce::client
