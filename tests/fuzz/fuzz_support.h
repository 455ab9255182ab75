#pragma once

// What the fuzz targets share: failing loudly (so libFuzzer records the input), checking that an
// error is one of the documented codes, and feeding bytes from memory to a ByteReader.

#include <cstddef>
#include <initializer_list>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "client/input/byte_reader.h"

namespace gpureduce::fuzzing {

// Prints `what` and aborts: libFuzzer reports a crash and saves the input that caused it.
[[noreturn]] void Fail(absl::string_view what);

// Fails with `where` and the status unless `status` is OK or has one of the `allowed` codes: a
// parser may refuse an input only with the error its contract documents.
void CheckCode(const absl::Status& status, std::initializer_list<absl::StatusCode> allowed,
               absl::string_view where);

// Whether two floats have the same bits (NaN payloads and the sign of zero included).
bool SameBits(float a, float b);

enum class ReaderKind {
  kFile,  // a memfd: a regular file, so the reader knows its size and seeks
  kPipe,  // a pipe holding all of the bytes: no size, as a shell pipe or stdin gives
};

// A ByteReader with a buffer of `buffer_size` bytes over `bytes`. nullptr for a pipe when the
// bytes do not fit in one (the fuzz inputs are far smaller than the 64 KiB a pipe holds).
std::unique_ptr<client::ByteReader> MemoryReader(absl::string_view bytes, ReaderKind kind,
                                                 size_t buffer_size);

}  // namespace gpureduce::fuzzing

// Fails with `message` (evaluated only then) when `condition` is false.
#define GPUREDUCE_FUZZ_CHECK(condition, message)                                           \
  do {                                                                                     \
    if (!(condition)) {                                                                    \
      ::gpureduce::fuzzing::Fail(absl::StrCat("check failed: " #condition ": ", message)); \
    }                                                                                      \
  } while (false)
