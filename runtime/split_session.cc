#include "runtime/split_session.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <utility>

#include "absl/strings/str_cat.h"

namespace gpureduce::runtime {
namespace {

// Waits for `count` callbacks, each with its part's result, then hands them, in part order, to
// `done` on the thread of the last one.
template <typename ResultT>
class Join {
 public:
  using Done = absl::AnyInvocable<void(std::vector<ResultT>) &&>;
  Join(size_t count, Done done)
      : results_(count, ResultT(absl::UnknownError("not run"))),
        remaining_(count),
        done_(std::move(done)) {}

  // The callback for part `part`; the Join deletes itself after the last one.
  absl::AnyInvocable<void(ResultT) &&> For(size_t part) {
    return [this, part](ResultT result) {
      results_[part] = std::move(result);
      if (remaining_.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
      Done done = std::move(done_);
      std::vector<ResultT> results = std::move(results_);
      delete this;
      std::move(done)(std::move(results));
    };
  }

 private:
  std::vector<ResultT> results_;
  std::atomic<size_t> remaining_;
  Done done_;
};

// `done` with the first error of the parts (in part order), else OK.
absl::AnyInvocable<void(std::vector<absl::Status>) &&> FirstError(ConsumeDone done) {
  return [done = std::move(done)](std::vector<absl::Status> statuses) mutable {
    for (absl::Status& status : statuses) {
      if (!status.ok()) {
        std::move(done)(std::move(status));
        return;
      }
    }
    std::move(done)(absl::OkStatus());
  };
}

// Where each of `n` ranges of `count` elements ends: at the fractions `ends` (the last 1), or
// with none as even as can be, the first count % n ranges one longer.
std::vector<uint64_t> RangeEnds(uint64_t count, size_t n, const std::vector<double>& ends) {
  std::vector<uint64_t> out(n);
  uint64_t end = 0;
  for (size_t i = 0; i < n; ++i) {
    if (ends.empty()) {
      end += count / n + (i < count % n ? 1 : 0);
    } else {
      const auto at = static_cast<uint64_t>(static_cast<long double>(count) * ends[i]);
      end = std::clamp(at, end, count);
    }
    out[i] = i + 1 == n ? count : end;
  }
  return out;
}

}  // namespace

SplitSession::SplitSession(std::vector<std::unique_ptr<ReduceSession>> parts,
                           std::vector<double> shares)
    : parts_(std::move(parts)) {
  if (shares.size() != parts_.size()) return;  // equal shares
  double total = 0;
  for (double share : shares) total += share;
  double end = 0;
  for (double share : shares) {
    end += share / total;
    ends_.push_back(end);
  }
}

void SplitSession::ConsumePieces(PayloadPieces data, ConsumeDone done) {
  const size_t n = parts_.size();
  if (data.count() < n * kLeastRangeFloats) {  // a chunk of a stream: the next part's turn
    ReduceSession& part = *parts_[next_part_];
    next_part_ = (next_part_ + 1) % n;
    part.StartAt(next_index_);
    next_index_ += data.count();
    part.ConsumePieces(std::move(data), std::move(done));
    return;
  }
  // A large message (a unary request's): a contiguous range for every part, all at once.
  const uint64_t first = next_index_;
  next_index_ += data.count();
  auto* join = new Join<absl::Status>(n, FirstError(std::move(done)));
  ForEachRange(data.count(), [&](size_t i, uint64_t begin, uint64_t count) {
    parts_[i]->StartAt(first + begin);
    parts_[i]->ConsumePieces(data.Elements(begin, count), join->For(i));
  });
}

void SplitSession::ConsumeShared(const SharedSource& source, ConsumeDone done) {
  if (source.kind != SharedSource::Kind::kHost) {
    std::move(done)(absl::FailedPreconditionError(
        "device memory is on one GPU: a request reading it cannot be spread over several"));
    return;
  }
  const uint64_t first = next_index_;
  next_index_ += source.count;
  const auto start = std::chrono::steady_clock::now();
  auto times = std::make_shared<std::vector<RangeTime>>(parts_.size());
  if (on_ranges_timed_) {
    done = [times, timed = on_ranges_timed_, done = std::move(done)](absl::Status status) mutable {
      if (status.ok()) timed(*times);
      std::move(done)(std::move(status));
    };
  }
  auto* join = new Join<absl::Status>(parts_.size(), FirstError(std::move(done)));
  ForEachRange(source.count, [&](size_t i, uint64_t begin, uint64_t count) {
    SharedSource range = source;
    range.count = count;
    range.file_offset = source.file_offset + begin * source.element_bytes;
    if (source.pinned != nullptr) range.pinned = source.pinned + begin * source.element_bytes;
    (*times)[i].bytes = count * source.element_bytes;
    parts_[i]->StartAt(first + begin);
    parts_[i]->ConsumeShared(range, [times, i, start, part = join->For(i)](absl::Status s) mutable {
      (*times)[i].seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      std::move(part)(std::move(s));
    });
  });
}

template <typename F>
void SplitSession::ForEachRange(uint64_t count, F&& consume) {
  // Each part's share, its range ending where its fraction of the whole does (equal shares: as
  // even as can be, the first count % n ranges one float longer). An empty range is still
  // consumed, so that every part's callback runs. The loop reads only locals: the last part's
  // callback may end the request, and this session with it.
  const size_t n = parts_.size();
  const std::vector<uint64_t> ends = RangeEnds(count, n, ends_);
  uint64_t begin = 0;
  for (size_t i = 0; i < n; ++i) {
    consume(i, begin, ends[i] - begin);
    begin = ends[i];
  }
}

void SplitSession::Finish(FinishDone done) {
  auto* join = new Join<absl::StatusOr<gpureduce::Stats>>(
      parts_.size(),
      [done = std::move(done)](std::vector<absl::StatusOr<gpureduce::Stats>> parts) mutable {
        gpureduce::Stats total;
        for (absl::StatusOr<gpureduce::Stats>& part : parts) {
          if (!part.ok()) {
            std::move(done)(std::move(part).status());
            return;
          }
          // Disjoint parts in request order whose indices are the request's: the merge keeps
          // the first occurrence, and the sums add in part order.
          total = gpureduce::MergeStats(total, *part);
        }
        std::move(done)(total);
      });
  // Every part is finished, also after an error: each may hold its device's resources until then.
  // The last part's answer may end the request and delete this session: locals only.
  std::vector<ReduceSession*> parts;
  for (const auto& part : parts_) parts.push_back(part.get());
  for (size_t i = 0; i < parts.size(); ++i) parts[i]->Finish(join->For(i));
}

// The parts run side by side, so their times overlap: a sum would exceed the request's own time
// (a kernel_us over server_us). Each stage reports its slowest part's, the one the request waited
// for.
BackendTiming SplitSession::timing() const {
  BackendTiming slowest;
  for (const auto& part : parts_) {
    const BackendTiming t = part->timing();
    slowest.queue = std::max(slowest.queue, t.queue);
    slowest.h2d = std::max(slowest.h2d, t.h2d);
    slowest.kernel = std::max(slowest.kernel, t.kernel);
    slowest.d2h = std::max(slowest.d2h, t.d2h);
  }
  return slowest;
}

std::string SplitSession::device_name() const {
  const std::string first = parts_.front()->device_name();
  const bool alike = std::all_of(parts_.begin(), parts_.end(),
                                 [&](const auto& part) { return part->device_name() == first; });
  if (alike) return absl::StrCat(first, " x ", parts_.size());
  std::string names;
  for (const auto& part : parts_)
    absl::StrAppend(&names, names.empty() ? "" : " + ", part->device_name());
  return names;
}

std::vector<int> SplitSession::devices() const {
  std::vector<int> out;
  for (const auto& part : parts_) {
    for (int device : part->devices()) out.push_back(device);
  }
  return out;
}

void SplitSession::Cancel() {
  for (const auto& part : parts_) part->Cancel();
}

}  // namespace gpureduce::runtime
