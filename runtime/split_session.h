#pragma once

// One request spread over several sessions, one per GPU (or the CPU and a GPU, for a region of
// system memory both read), all reducing at once: a stream's chunks are dealt to them in turn, a
// shared-memory region's floats are cut into one contiguous range each, of each part's share. Every
// session is told where its elements start (ReduceSession::StartAt), so their partials carry the
// request's own indices, and Finish combines them as one session's would (gpureduce::Combine:
// float64 sums, the first occurrence and the first NaN by index). Generic over the sessions, so it
// is tested on the CPU backend's.

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "runtime/backend.h"

namespace gpureduce::runtime {

class SplitSession final : public ReduceSession {
 public:
  // `parts`: at least one. `shares`: the fraction of a range split each part takes (as many as
  // the parts, positive, summing to 1 or so); empty: equal shares.
  explicit SplitSession(std::vector<std::unique_ptr<ReduceSession>> parts,
                        std::vector<double> shares = {});

  // A chunk goes to the next part in turn; a message large enough to give every part at least
  // kLeastRangeFloats (a unary request's) is cut into a range per part, all reduced at once.
  void ConsumePieces(PayloadPieces data, ConsumeDone done) override;
  // A system region is cut into one range per part, all reduced at once; `done` runs once every
  // part's has (the first error in part order, if any). Device memory is on one GPU: refused.
  void ConsumeShared(const SharedSource& source, ConsumeDone done) override;
  void Finish(FinishDone done) override;
  // Each stage's time in its slowest part (the parts overlap).
  BackendTiming timing() const override;
  std::string device_name() const override;
  std::vector<int> devices() const override;
  kernels::KernelId kernel() const override { return parts_.front()->kernel(); }
  void StartAt(uint64_t index) override { next_index_ = index; }
  void Cancel() override;

  size_t parts() const { return parts_.size(); }

  // A part's range of a region: its bytes, and the seconds from the region's start until the
  // part had reduced them.
  struct RangeTime {
    uint64_t bytes = 0;
    double seconds = 0;
  };
  using RangesTimed = std::function<void(const std::vector<RangeTime>&)>;
  // Called, in part order, once a region's ranges are all reduced without error, before the
  // request hears of it: a router sizes later shares by them.
  void set_on_ranges_timed(RangesTimed timed) { on_ranges_timed_ = std::move(timed); }

 private:
  // 1 MiB of floats: smaller ranges would cost more in launches and hand-overs than they save.
  static constexpr uint64_t kLeastRangeFloats = uint64_t{1} << 18;

  // consume(part, begin, count) for the parts' contiguous ranges of `count` floats.
  template <typename F>
  void ForEachRange(uint64_t count, F&& consume);

  std::vector<std::unique_ptr<ReduceSession>> parts_;
  std::vector<double> ends_;  // where each part's range ends, as a fraction; empty: even
  RangesTimed on_ranges_timed_;
  uint64_t next_index_ = 0;  // of the next element consumed
  size_t next_part_ = 0;     // that takes the next chunk
};

}  // namespace gpureduce::runtime
