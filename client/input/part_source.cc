#include "client/input/part_source.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace gpureduce::client {

absl::StatusOr<std::unique_ptr<PartSource>> PartSource::Open(std::unique_ptr<FloatSource> inner,
                                                             uint64_t begin, uint64_t count) {
  absl::StatusOr<uint64_t> skipped = inner->Skip(begin);
  if (!skipped.ok()) return skipped.status();
  if (*skipped != begin) {
    return absl::InvalidArgumentError(absl::StrCat(inner->Describe(), " ends after ", *skipped,
                                                   " values, before the part that starts at ",
                                                   begin));
  }
  return std::unique_ptr<PartSource>(new PartSource(std::move(inner), begin, count));
}

absl::StatusOr<size_t> PartSource::Read(absl::Span<float> out) {
  const size_t want = static_cast<size_t>(std::min<uint64_t>(out.size(), count_ - delivered_));
  size_t done = 0;
  while (done < want) {
    absl::StatusOr<size_t> got = inner_->Read(out.subspan(done, want - done));
    if (!got.ok()) return got.status();
    if (*got == 0) {
      return absl::InvalidArgumentError(
          absl::StrCat(inner_->Describe(), " ends after ", begin_ + delivered_ + done,
                       " values, inside the part of values ", begin_, " to ", begin_ + count_ - 1));
    }
    done += *got;
  }
  delivered_ += done;
  return done;
}

std::string PartSource::Describe() const {
  return absl::StrCat(inner_->Describe(), ", values ", begin_, " to ", begin_ + count_ - 1);
}

}  // namespace gpureduce::client
