#pragma once

// What gpureduce-load sends, and what it expects back. Every message is built before the clock
// starts: a few distinct unary requests, or the chunks one stream cycles through, each with the
// answer the client computed for it (RunningReference, independent of the server's code). A
// response that disagrees is a wrong answer, counted as an error.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "client/array_layout.h"
#include "client/array_reference.h"
#include "client/running_reference.h"
#include "client/typed_reference.h"
#include "common/reduction/dtype.h"
#include "gpureduce/v1/reduce.pb.h"

namespace gpureduce::client {

struct WorkloadOptions {
  v1::Op op = v1::SUM;
  // Several ops in one request (spec.ops; one typed result each), when it holds more than one.
  std::vector<v1::Op> ops;
  DType dtype = DType::kFloat32;  // the payload's elements (RandomSource's values of the dtype)
  double ddof = 0;                // VAR, STD and their NAN forms
  std::string kernel = "auto";
  uint64_t floats = 1024;     // unary: elements (of `dtype`) per request
  uint64_t stream_bytes = 0;  // > 0: each request is a stream of this many payload bytes
  uint64_t chunk_bytes = uint64_t{1} << 20;  // streams: payload bytes per message
  uint32_t payloads = 8;  // distinct unary requests, or distinct chunks a stream cycles
  uint64_t seed = 1;
  int64_t device = -1;  // >= 0: every request pins this device (spec.device)
  // An array request's shape and axes, or segments (issue 23): every request asks for one
  // result array per op, each element checked. Empty: full reductions.
  ArrayLayout layout;
  // Relative error allowed in sums, products and means, against sum(|x|), |product| and
  // mean(|x|), |var|; MIN, MAX, ARGMIN, ARGMAX, integer results and indexes must be exact (a
  // float result may also be off by one unit in the last place of its dtype). 0:
  // kFloat64Tolerance (gpureduce-load sets KernelTolerance's first).
  double tolerance = 0;
};

// What a kernel that accumulates in float64 answers within.
inline constexpr double kFloat64Tolerance = 1e-9;

// The tolerance for `kernel` ("" or "auto": the listing's default) by what the server lists
// about it (ListKernels): kFloat64Tolerance, or 1e-3 for a kernel with a lineage, which
// reproduces the seed documents' ladder, float32 accumulation included. A kernel the listing
// lacks (a sink lists none) gets kFloat64Tolerance.
double KernelTolerance(const std::string& kernel, const v1::ListKernelsResponse& listing);

// Where payloads go by reference: payload p in regions[p % regions.size()], at byte
// (p / regions.size()) * floats * the dtype's size; `write` puts its bytes there.
struct SharedPayloadTarget {
  std::vector<std::string> regions;
  std::function<absl::Status(size_t region, uint64_t offset, std::span<const std::byte> data)>
      write;
};

// The client's answer for one request.
struct Expected {
  double value = 0;
  int64_t index = -1;
  uint64_t count = 0;
  double scale = 0;  // what an error is judged against
  // Typed requests (another dtype, several ops or a new op): one answer per op, checked against
  // the response's `results` (TypedReference, CheckOpResult).
  std::vector<TypedReference::Answer> results;
  // Array requests: each op's answer per output, and the result shape every op's array has.
  ArrayAnswers arrays;
  std::vector<uint64_t> shape;
};

class Workload {
 public:
  // `shared`: unary requests by reference to shared memory (null: payloads in the messages).
  static absl::StatusOr<Workload> Make(const WorkloadOptions& options,
                                       const SharedPayloadTarget* shared = nullptr);

  bool streaming() const { return options_.stream_bytes > 0; }
  // Whether requests ask for typed results: another dtype than float32, several ops, a new op,
  // a ddof or an array layout.
  bool typed() const;
  // The ops each request asks for, in order.
  std::vector<v1::Op> ops() const;
  // Payload bytes one request carries.
  uint64_t request_bytes() const;

  // Unary: request `i` of payloads() (the caller cycles through them).
  const v1::ReduceRequest& unary(size_t i) const { return unary_[i % unary_.size()]; }
  const Expected& unary_expected(size_t i) const { return expected_[i % expected_.size()]; }

  // Streams: the spec alone, then stream_chunks() data messages, message k being chunk(k).
  const v1::ReduceChunk& stream_head() const { return head_; }
  size_t stream_chunks() const { return stream_chunks_; }
  const v1::ReduceChunk& chunk(size_t k) const;
  const Expected& stream_expected() const { return expected_.front(); }

  // "" when `response` carries the expected answer, else what differs.
  std::string Check(const v1::ReduceResponse& response, const Expected& expected) const;

  const WorkloadOptions& options() const { return options_; }
  double tolerance() const { return tolerance_; }

 private:
  // Make's typed requests.
  static absl::StatusOr<Workload> MakeTyped(Workload workload, v1::ReduceSpec spec,
                                            const SharedPayloadTarget* shared);

  WorkloadOptions options_;
  double tolerance_ = 0;
  std::vector<v1::ReduceRequest> unary_;
  v1::ReduceChunk head_;
  std::vector<v1::ReduceChunk> chunks_;
  std::optional<v1::ReduceChunk> last_chunk_;  // when the stream's last message is shorter
  size_t stream_chunks_ = 0;
  std::vector<Expected> expected_;  // per unary request, or the one of every stream
};

}  // namespace gpureduce::client
