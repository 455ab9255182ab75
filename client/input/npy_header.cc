#include "client/input/npy_header.h"

#include <algorithm>
#include <cstddef>
#include <limits>
#include <optional>
#include <utility>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "client/input/py_literal.h"
#include "common/status_macros.h"

namespace gpureduce::client {
namespace {

// numpy itself refuses headers over 10000 bytes by default; 1 MiB is generous and still bounded.
constexpr uint64_t kMaxHeaderLength = uint64_t{1} << 20;

// "float64", "int32", ... for the dtype named in a rejection message.
std::string DtypeName(char kind, absl::string_view size_text) {
  uint64_t bytes = 0;
  for (char c : size_text) {
    if (c < '0' || c > '9' || bytes > 1024) break;
    bytes = bytes * 10 + static_cast<uint64_t>(c - '0');
  }
  const std::string bits = absl::StrCat(bytes * 8);
  switch (kind) {
    case 'f':
      return absl::StrCat("float", bits);
    case 'i':
      return absl::StrCat("int", bits);
    case 'u':
      return absl::StrCat("uint", bits);
    case 'c':
      return absl::StrCat("complex", bits);
    case 'b':
    case '?':
      return "bool";
    case 'U':
      return "unicode strings";
    case 'S':
    case 'a':
      return "byte strings";
    case 'O':
      return "Python objects";
    case 'M':
      return "datetime64";
    case 'm':
      return "timedelta64";
    case 'V':
      return "raw records";
    default:
      return "an unknown dtype";
  }
}

// Sets header.dtype, item_size and big_endian for the supported descrs, rejects everything else.
absl::Status CheckDescr(absl::string_view descr, absl::string_view name, NpyHeader& header) {
  absl::string_view rest = descr;
  char order = '=';
  if (!rest.empty() && (rest[0] == '<' || rest[0] == '>' || rest[0] == '=' || rest[0] == '|')) {
    order = rest[0];
    rest.remove_prefix(1);
  }
  struct Supported {
    absl::string_view code;
    std::optional<DType> dtype;
    size_t size;
  };
  static constexpr Supported kSupported[] = {{"f4", DType::kFloat32, 4}, {"f2", DType::kFloat16, 2},
                                             {"f8", DType::kFloat64, 8}, {"i4", DType::kInt32, 4},
                                             {"i8", DType::kInt64, 8},   {"u2", std::nullopt, 2},
                                             {"i2", std::nullopt, 2}};
  for (const Supported& supported : kSupported) {
    if (rest != supported.code) continue;
    if (order == '|') {
      return absl::InvalidArgumentError(absl::StrCat(
          name, " has dtype '", descr, "', but '|' (no byte order) is not valid for a ",
          supported.size, "-byte type; expected '<", rest, "' or '>", rest, "'"));
    }
    // '=' means the writer's native order; little-endian is the only one numpy ships widely.
    header.big_endian = order == '>';
    header.dtype = supported.dtype;
    header.item_size = supported.size;
    return absl::OkStatus();
  }
  const std::string type = rest.empty() ? "an unknown dtype" : DtypeName(rest[0], rest.substr(1));
  return absl::InvalidArgumentError(absl::StrCat(
      name, " holds ", descr, " (", type,
      "); gpureduce reduces float32 (<f4), float16 (<f2), float64 (<f8), int32 (<i4), int64 "
      "(<i8), and bfloat16 stored as uint16 or int16 (<u2, <i2) with --dtype bfloat16: convert "
      "with arr.astype(np.float32)"));
}

}  // namespace

std::string FormatNpyShape(const std::vector<uint64_t>& shape) {
  if (shape.size() == 1) return absl::StrCat("(", shape[0], ",)");
  return absl::StrCat("(", absl::StrJoin(shape, ", "), ")");
}

absl::Status ParseNpyHeaderDict(absl::string_view dict, absl::string_view name, NpyHeader& header) {
  const auto malformed = [&](absl::string_view why) {
    constexpr size_t kShown = 200;
    return absl::InvalidArgumentError(absl::StrCat(name, " has a malformed NPY header (", why,
                                                   "): ", absl::CHexEscape(dict.substr(0, kShown)),
                                                   dict.size() > kShown ? "..." : ""));
  };
  absl::StatusOr<std::vector<std::pair<std::string, PyLiteral>>> entries = ParsePyDict(dict);
  if (!entries.ok()) return malformed(entries.status().message());

  const PyLiteral* descr = nullptr;
  const PyLiteral* fortran_order = nullptr;
  const PyLiteral* shape = nullptr;
  for (const auto& [key, value] : *entries) {
    const PyLiteral** slot = key == "descr"           ? &descr
                             : key == "fortran_order" ? &fortran_order
                             : key == "shape"         ? &shape
                                                      : nullptr;
    if (slot == nullptr) return malformed(absl::StrCat("unexpected key '", key, "'"));
    if (*slot != nullptr) return malformed(absl::StrCat("duplicate key '", key, "'"));
    *slot = &value;
  }
  if (descr == nullptr || fortran_order == nullptr || shape == nullptr) {
    return malformed("it needs the keys 'descr', 'fortran_order' and 'shape'");
  }

  if (descr->kind == PyLiteral::Kind::kList) {
    return absl::InvalidArgumentError(absl::StrCat(
        name,
        " holds a structured dtype (record fields); gpureduce reduces plain arrays of one "
        "number type: extract one field with arr['field']"));
  }
  if (descr->kind != PyLiteral::Kind::kString) return malformed("'descr' is not a string");
  header.descr = descr->text;
  RETURN_IF_ERROR(CheckDescr(header.descr, name, header));

  if (fortran_order->kind != PyLiteral::Kind::kBool) {
    return malformed("'fortran_order' is not True or False");
  }
  header.fortran_order = fortran_order->boolean;

  if (shape->kind != PyLiteral::Kind::kTuple) {
    return malformed("'shape' is not a tuple");
  }
  header.shape.clear();
  for (const PyLiteral& dim : shape->items) {
    if (dim.kind != PyLiteral::Kind::kInt) {
      return malformed("'shape' holds something other than non-negative integers");
    }
    header.shape.push_back(dim.integer);
  }
  // Any zero dimension empties the array however large the others are.
  const bool empty = std::find(header.shape.begin(), header.shape.end(), 0) != header.shape.end();
  header.count = empty ? 0 : 1;
  for (uint64_t dim : empty ? std::vector<uint64_t>{} : header.shape) {
    // Bounded so that count * sizeof(float) plus the header cannot overflow either.
    if (header.count > (std::numeric_limits<uint64_t>::max() / 8) / dim) {
      return malformed(absl::StrCat("shape ", FormatNpyShape(header.shape), " is too large"));
    }
    header.count *= dim;
  }
  return absl::OkStatus();
}

absl::StatusOr<NpyHeader> ReadNpyHeader(ByteReader& reader) {
  NpyHeader header;
  const absl::string_view name = reader.name();
  char preamble[8];
  ASSIGN_OR_RETURN(const size_t got, reader.Read(absl::MakeSpan(preamble)));
  const absl::string_view start(preamble, got);
  if (!absl::StartsWith(start, kNpyMagic)) {
    return absl::InvalidArgumentError(absl::StrCat(
        name, " is not an NPY file: it does not start with the magic \\x93NUMPY (it starts with \"",
        absl::CHexEscape(start), "\")"));
  }
  if (got < 8) {
    return absl::InvalidArgumentError(absl::StrCat(name, " is truncated inside its NPY preamble"));
  }
  header.major_version = static_cast<unsigned char>(preamble[6]);
  header.minor_version = static_cast<unsigned char>(preamble[7]);
  if (header.major_version < 1 || header.major_version > 3 || header.minor_version != 0) {
    return absl::InvalidArgumentError(absl::StrCat(name, " uses NPY format version ",
                                                   header.major_version, ".", header.minor_version,
                                                   "; only 1.0, 2.0 and 3.0 exist"));
  }

  // The header length is little-endian: 2 bytes in version 1.0, 4 bytes afterwards.
  const size_t length_bytes = header.major_version == 1 ? 2 : 4;
  unsigned char length_le[4] = {};
  ASSIGN_OR_RETURN(const size_t length_got,
                   reader.Read(absl::MakeSpan(reinterpret_cast<char*>(length_le), length_bytes)));
  if (length_got < length_bytes) {
    return absl::InvalidArgumentError(absl::StrCat(name, " is truncated inside its NPY preamble"));
  }
  uint64_t header_length = 0;
  for (size_t i = length_bytes; i-- > 0;) header_length = (header_length << 8) | length_le[i];
  if (header_length > kMaxHeaderLength) {
    return absl::InvalidArgumentError(absl::StrCat(name, " claims an NPY header of ", header_length,
                                                   " bytes; at most ", kMaxHeaderLength,
                                                   " is accepted"));
  }

  std::string dict(header_length, '\0');
  ASSIGN_OR_RETURN(const size_t dict_got, reader.Read(absl::MakeSpan(dict)));
  if (dict_got < header_length) {
    return absl::InvalidArgumentError(absl::StrCat(name, " is truncated inside its NPY header (",
                                                   dict_got, " of ", header_length, " bytes)"));
  }
  // Version 3.0 only changes the header's encoding to UTF-8; the keys and values are ASCII.
  RETURN_IF_ERROR(ParseNpyHeaderDict(dict, name, header));
  header.data_offset = 6 + 2 + length_bytes + header_length;
  return header;
}

}  // namespace gpureduce::client
