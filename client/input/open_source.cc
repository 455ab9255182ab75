#include "client/input/open_source.h"

#include <utility>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "client/input/byte_reader.h"
#include "client/input/npy_header.h"
#include "client/input/npy_source.h"
#include "client/input/random_source.h"
#include "client/input/raw_source.h"
#include "client/input/text_source.h"
#include "common/reduction/op_name.h"
#include "common/status_macros.h"

namespace gpureduce::client {
namespace {

enum class Format { kAuto, kNpy, kRaw, kText };

absl::StatusOr<Format> ParseFormat(absl::string_view format) {
  if (format.empty() || format == "auto") return Format::kAuto;
  if (format == "npy") return Format::kNpy;
  if (format == "raw") return Format::kRaw;
  if (format == "text") return Format::kText;
  return absl::InvalidArgumentError(
      absl::StrCat("unknown input format '", format, "'; expected auto, npy, raw or text"));
}

// The lower-cased extension including the dot ("data.CSV" -> ".csv"), or empty.
std::string Extension(absl::string_view path) {
  const size_t slash = path.find_last_of('/');
  const absl::string_view base = slash == absl::string_view::npos ? path : path.substr(slash + 1);
  const size_t dot = base.find_last_of('.');
  if (dot == absl::string_view::npos || dot == 0) return "";
  return absl::AsciiStrToLower(base.substr(dot));
}

absl::StatusOr<Format> DetectFormat(ByteReader& reader, bool is_stdin) {
  ASSIGN_OR_RETURN(const absl::string_view head, reader.Peek(kNpyMagic.size()));
  if (head == kNpyMagic) return Format::kNpy;
  // Text is the one format a person types or pipes from another tool.
  if (is_stdin) return Format::kText;
  const std::string extension = Extension(reader.name());
  // A .npy without the magic goes to the npy reader, whose error says what is wrong.
  if (extension == ".npy") return Format::kNpy;
  if (extension == ".raw" || extension == ".bin" || extension == ".f32") return Format::kRaw;
  if (extension == ".txt" || extension == ".csv" || extension == ".tsv") return Format::kText;
  return absl::InvalidArgumentError(absl::StrCat(
      "cannot tell the format of ", reader.name(),
      ": it is not an NPY file and its extension is not one of .npy, .raw, .bin, .f32, .txt, "
      ".csv, .tsv; pass --format npy, raw or text"));
}

}  // namespace

absl::StatusOr<std::unique_ptr<FloatSource>> OpenSource(const SourceOptions& options) {
  const bool random = options.random || (options.path.empty() && options.random_count > 0);
  if (random) {
    if (!options.path.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("choose one input: random values or ", options.path, ", not both"));
    }
    return std::make_unique<RandomSource>(options.random_count, options.random_seed,
                                          options.dtype.value_or(DType::kFloat32));
  }
  if (options.path.empty()) {
    return absl::InvalidArgumentError(
        "no input: give a file path, '-' for standard input, or a random count");
  }
  ASSIGN_OR_RETURN(Format format, ParseFormat(options.format));

  const bool is_stdin = options.path == "-";
  std::unique_ptr<ByteReader> reader;
  if (is_stdin) {
    reader = ByteReader::FromStdin();
  } else {
    ASSIGN_OR_RETURN(reader, ByteReader::OpenFile(options.path));
  }
  if (format == Format::kAuto) {
    ASSIGN_OR_RETURN(format, DetectFormat(*reader, is_stdin));
  }
  switch (format) {
    case Format::kNpy: {
      ASSIGN_OR_RETURN(std::unique_ptr<NpySource> source,
                       NpySource::Open(std::move(reader), options.dtype));
      return source;
    }
    case Format::kRaw: {
      ASSIGN_OR_RETURN(std::unique_ptr<RawSource> source,
                       RawSource::Open(std::move(reader), options.dtype.value_or(DType::kFloat32)));
      return source;
    }
    case Format::kText:
    case Format::kAuto:
      break;
  }
  if (options.dtype.has_value() && *options.dtype != DType::kFloat32) {
    return absl::InvalidArgumentError(absl::StrCat(
        reader->name(), " is read as text, which gpureduce parses as float32 only; --dtype ",
        DTypeName(*options.dtype), " needs a .npy file, a raw file (--format raw) or --random"));
  }
  return std::make_unique<TextSource>(std::move(reader));
}

}  // namespace gpureduce::client
