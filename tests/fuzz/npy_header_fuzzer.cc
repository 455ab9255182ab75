// The .npy reader from raw bytes. An input that starts with the NPY magic is a whole file: it is
// opened with NpySource (ReadNpyHeader: preamble, versions 1.0-3.0, header length, then the dict)
// and read to the end twice, as a regular file (size known: Open checks the data length; a third
// is skipped with a seek first) and through a pipe with the smallest buffer (size unknown: Read
// finds truncation and trailing bytes). Both must accept the same files and deliver exactly the
// bytes after the header, byte swapped for '>f4'. Any other input is a header dict for
// ParseNpyHeaderDict (and the Python literal parser under it). Refusals must be INVALID_ARGUMENT.

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "client/input/npy_header.h"
#include "client/input/npy_source.h"
#include "tests/fuzz/fuzz_support.h"

namespace gpureduce::fuzzing {
namespace {

using absl::StatusCode;
using client::NpyHeader;

// The element count a shape declares, or nothing when it would not fit the reader's bound.
bool ShapeCount(const std::vector<uint64_t>& shape, uint64_t* count) {
  if (std::find(shape.begin(), shape.end(), 0) != shape.end()) {
    *count = 0;
    return true;
  }
  unsigned __int128 product = 1;
  for (uint64_t dim : shape) {
    product *= dim;
    if (product > std::numeric_limits<uint64_t>::max() / 8) return false;
  }
  *count = static_cast<uint64_t>(product);
  return true;
}

// What an accepted header must say, whichever way it was read.
void CheckHeader(const NpyHeader& header) {
  // One of the element types the reader takes (float32, float16, float64, int32, int64, and the
  // 16-bit integers bfloat16 is stored as), in any byte order.
  const std::string type = header.descr.substr(
      !header.descr.empty() &&
              (header.descr[0] == '<' || header.descr[0] == '>' || header.descr[0] == '=')
          ? 1
          : 0);
  GPUREDUCE_FUZZ_CHECK(type == "f4" || type == "f2" || type == "f8" || type == "i4" ||
                           type == "i8" || type == "u2" || type == "i2",
                       header.descr);
  GPUREDUCE_FUZZ_CHECK(header.big_endian == (header.descr[0] == '>'), header.descr);
  uint64_t count = 0;
  GPUREDUCE_FUZZ_CHECK(ShapeCount(header.shape, &count) && count == header.count,
                       absl::StrCat(client::FormatNpyShape(header.shape), " -> ", header.count));
  // The shape written back as numpy writes it parses to the same shape.
  NpyHeader again;
  const absl::Status status = client::ParseNpyHeaderDict(
      absl::StrCat("{'descr': '", header.descr, "', 'fortran_order': False, 'shape': ",
                   client::FormatNpyShape(header.shape), ", }"),
      "<again>", again);
  GPUREDUCE_FUZZ_CHECK(status.ok() && again.shape == header.shape && again.count == header.count,
                       status.ToString());
}

// Element `index` of the file's data as the reader must deliver it: in host (little-endian)
// order, its bytes reversed where the file is big-endian.
std::string Expected(absl::string_view data, uint64_t index, size_t size, bool big_endian) {
  std::string bytes(data.substr(index * size, size));
  if (big_endian) std::reverse(bytes.begin(), bytes.end());
  return bytes;
}

// Opens and reads `file` through `kind`; returns whether every declared value came back.
bool ReadThrough(absl::string_view file, ReaderKind kind, size_t buffer_size, size_t chunk,
                 NpyHeader* header_out) {
  std::unique_ptr<client::ByteReader> reader = MemoryReader(file, kind, buffer_size);
  if (reader == nullptr) Fail("the input does not fit in a pipe: lower -max_len");
  absl::StatusOr<std::unique_ptr<client::NpySource>> source =
      client::NpySource::Open(std::move(reader));
  CheckCode(source.status(), {StatusCode::kInvalidArgument}, "NpySource::Open");
  if (!source.ok()) return false;
  const NpyHeader& header = (*source)->header();
  CheckHeader(header);
  *header_out = header;
  (void)(*source)->Describe();
  GPUREDUCE_FUZZ_CHECK(header.data_offset <= file.size(), header.data_offset);
  const absl::string_view data = file.substr(header.data_offset);
  const size_t size = header.item_size;
  if (kind == ReaderKind::kFile) {
    GPUREDUCE_FUZZ_CHECK(data.size() == header.count * size,
                         "a file of the wrong length was opened");
  }
  // A file first skips a third, as reading one part of it for `--streams` does (a seek).
  const uint64_t skip = kind == ReaderKind::kFile ? header.count / 3 : 0;
  const absl::StatusOr<uint64_t> skipped = (*source)->Skip(skip);
  GPUREDUCE_FUZZ_CHECK(skipped.ok() && *skipped == skip, skipped.status().ToString());
  std::vector<char> buffer(chunk * size);
  uint64_t delivered = skip;
  while (true) {
    absl::StatusOr<size_t> got = (*source)->ReadBytes(absl::MakeSpan(buffer));
    CheckCode(got.status(), {StatusCode::kInvalidArgument}, "NpySource::Read");
    if (!got.ok()) {
      GPUREDUCE_FUZZ_CHECK(kind == ReaderKind::kPipe, "a checked file failed to read");
      GPUREDUCE_FUZZ_CHECK(data.size() != header.count * size, got.status().ToString());
      return false;
    }
    if (*got == 0) break;
    for (size_t i = 0; i < *got; ++i, ++delivered) {
      GPUREDUCE_FUZZ_CHECK(delivered < header.count, "more values than the header declares");
      GPUREDUCE_FUZZ_CHECK(absl::string_view(buffer.data() + i * size, size) ==
                               Expected(data, delivered, size, header.big_endian),
                           absl::StrCat("value ", delivered, " differs from the file's bytes"));
    }
  }
  GPUREDUCE_FUZZ_CHECK(
      delivered == header.count && data.size() == header.count * size,
      absl::StrCat(delivered, " of ", header.count, " values from ", data.size(), " bytes"));
  return true;
}

void File(absl::string_view file) {
  NpyHeader from_file;
  NpyHeader from_pipe;
  const bool file_ok = ReadThrough(file, ReaderKind::kFile, 4096, 1000, &from_file);
  const bool pipe_ok = ReadThrough(file, ReaderKind::kPipe, 1, 3, &from_pipe);
  GPUREDUCE_FUZZ_CHECK(file_ok == pipe_ok, absl::StrCat("file ", file_ok, ", pipe ", pipe_ok));
  if (file_ok) {
    GPUREDUCE_FUZZ_CHECK(from_file.shape == from_pipe.shape &&
                             from_file.data_offset == from_pipe.data_offset &&
                             from_file.descr == from_pipe.descr,
                         "the two readers parsed different headers");
  }
}

void Dict(absl::string_view dict) {
  NpyHeader header;
  const absl::Status status = client::ParseNpyHeaderDict(dict, "<fuzz dict>", header);
  CheckCode(status, {StatusCode::kInvalidArgument}, "ParseNpyHeaderDict");
  if (status.ok()) CheckHeader(header);
}

}  // namespace
}  // namespace gpureduce::fuzzing

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::string_view input(reinterpret_cast<const char*>(data), size);
  if (absl::StartsWith(input, gpureduce::client::kNpyMagic)) {
    gpureduce::fuzzing::File(input);
  } else {
    gpureduce::fuzzing::Dict(input);
  }
  return 0;
}
