#pragma once

// What the service needs from a compute backend (the CPU, or CUDA GPUs): the kernels it runs,
// the devices it owns, and per-request sessions that reduce a stream of chunks without blocking.
// The runtime's public API, with backend_factory.h; it knows nothing of gRPC or protobuf.

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "absl/functional/any_invocable.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "common/reduction/reduce_layout.h"
#include "kernels/reduce.h"
#include "runtime/payload_pieces.h"
#include "runtime/shared_memory.h"

namespace gpureduce::runtime {

// A request after validation: everything a backend needs to start it.
struct RequestSpec {
  gpureduce::Op op;          // the request's op (the first, where it has several)
  kernels::KernelId kernel;  // resolved ("auto" is the backend's default_kernel())
  uint32_t block_size;       // 0: the kernel's default
  uint64_t expected_count;   // 0: not declared
  bool auto_kernel = false;  // the client left the choice to the server: a backend may pick
  uint64_t size_hint = 0;    // elements the request will carry, when known (0: not known)
  int device = -1;           // the GPU the request must run on (its data is there); -1: any
  // The whole request is one Consume (or ConsumeShared) of size_hint elements, followed at once
  // by Finish (a unary call): a backend may wait for its work on the caller's thread. Else (the
  // default) a stream, whose chunks of up to 1 MiB the CPU reduces on the caller's thread (an
  // array request's chunks, runtime/shaped/, keep the pool).
  bool one_message = false;
  // The payload is in GPU memory (a CUDA shared-memory region on `device`).
  bool data_on_device = false;
  // The payload is a region of system shared memory: the CPU and every GPU can read it in place.
  bool data_in_host_region = false;
  // The ops of a request that names several (read in one pass; `op` is the first); empty: `op`
  // alone.
  std::vector<gpureduce::Op> op_list;
  gpureduce::DType dtype = gpureduce::DType::kFloat32;  // the payload's element type
  double ddof = 0;                                      // VAR and STD divide by count - ddof
  // An array request's axes or segments (issue 23): one result per output, FinishArrays hands
  // them over. Null: a full reduction (Finish).
  std::shared_ptr<const gpureduce::ReduceLayout> layout;

  std::span<const gpureduce::Op> ops() const {
    return op_list.empty() ? std::span<const gpureduce::Op>(&op, 1) : op_list;
  }
  // A float32 request of one of the first eight ops: what every GPU kernel reduces.
  bool classic() const {
    return dtype == gpureduce::DType::kFloat32 && op_list.empty() && gpureduce::IsClassicOp(op);
  }
  // The GPU gathers Stats for it with single_pass's stats kernels: every request that is not
  // classic, and single_pass's PROD, whose product keeps its exponent apart there (cub's and the
  // ladder's float64 or float32 products may overflow on the way, as they always did).
  bool gathers_stats() const {
    return !classic() || (kernel == kernels::KernelId::kSinglePass && op == gpureduce::Op::kProd);
  }
};

// Where the time of a request went, summed over its chunks.
struct BackendTiming {
  std::chrono::nanoseconds queue{0};
  std::chrono::nanoseconds h2d{0};
  std::chrono::nanoseconds kernel{0};
  std::chrono::nanoseconds d2h{0};
};

struct DeviceDescription {
  int index = 0;
  std::string name;
  uint64_t memory_bytes = 0;
  int multiprocessors = 0;
  double peak_bandwidth_gbps = 0;
  uint64_t l2_bytes = 0;
};

// What a device's shared resources are doing now, for the server's metrics.
struct DeviceUsage {
  int device = 0;
  uint64_t staging_buffers = 0;      // the staging pool's size
  uint64_t staging_in_use = 0;       // taken now
  uint64_t staging_waiting = 0;      // requests waiting for one now
  uint64_t staging_waits_total = 0;  // requests that had to wait, since start
  uint64_t memory_used_bytes = 0;    // the whole device's, as the driver reports it
  uint64_t memory_total_bytes = 0;
  uint32_t requests = 0;           // running on it now
  uint64_t outstanding_bytes = 0;  // their declared or expected bytes
  bool lost = false;               // failed for good: out of rotation
  uint64_t batches = 0;            // small requests' batches launched, since start
  uint64_t batched_requests = 0;   // the requests they answered
};

using ConsumeDone = absl::AnyInvocable<void(absl::Status) &&>;
using FinishDone = absl::AnyInvocable<void(absl::StatusOr<gpureduce::Stats>) &&>;

// One op's answer to an array request: an element of `dtype` per output of the layout, in C
// order of its result shape.
struct ArrayResult {
  gpureduce::Op op = gpureduce::Op::kSum;
  gpureduce::DType dtype = gpureduce::DType::kFloat32;  // ResultDType(op, the payload's)
  std::string data;                                     // little-endian elements
  uint64_t overflow_count = 0;                          // integer results that wrapped
  std::optional<gpureduce::OpResult> only;              // the answer, where there is one output
};
using ArraysDone = absl::AnyInvocable<void(absl::StatusOr<std::vector<ArrayResult>>) &&>;

// One request's running reduction. Chunks arrive in order; at most one Consume is in flight.
class ReduceSession {
 public:
  virtual ~ReduceSession() = default;

  // Takes `data`, the elements following everything consumed so far, where the transport left
  // them. `done` runs once the bytes may be released: after the CPU has reduced them, or after
  // the GPU backend has copied them into pinned staging memory (the reduction goes on). It runs
  // on a backend thread, or on the caller's before ConsumePieces returns when that is quicker
  // than a hand-over (a small chunk; the CPU's chunk of up to 1 MiB of a stream, or of a unary
  // request while its pool is busy), so
  // a caller must not hold a lock that `done` takes, nor count on `done` coming later.
  virtual void ConsumePieces(PayloadPieces data, ConsumeDone done) = 0;
  // The same for floats in one span (a float32 request's).
  void Consume(std::span<const float> data, ConsumeDone done) {
    ConsumePieces(PayloadPieces(data), std::move(done));
  }

  // Waits (asynchronously) for all work of the request, then hands over its merged stats.
  // Call after the last Consume's `done` (or ConsumeShared's), also when the request failed: the
  // backend may not release the session's resources before its work is over.
  virtual void Finish(FinishDone done) = 0;
  // Finish for an array request (RequestSpec::layout): one ArrayResult per op of the request.
  // FAILED_PRECONDITION from a session that reduces no layout.
  virtual void FinishArrays(ArraysDone done) {
    std::move(done)(absl::FailedPreconditionError("this backend reduces no axes or segments"));
  }

  // Reads `source` where it is, as the elements following everything consumed so far; `done`
  // runs once the work is queued (the GPU) or done (the CPU), as for Consume. A kDevice source
  // needs a session opened on its device.
  virtual void ConsumeShared(const SharedSource& source, ConsumeDone done) = 0;

  // Where the time went; valid once Finish's `done` ran.
  virtual BackendTiming timing() const = 0;

  // The device the request runs on, as the response names it.
  virtual std::string device_name() const = 0;
  // The indices (DeviceDescription::index) of the devices it runs on: one, or several for a
  // request spread over every GPU.
  virtual std::vector<int> devices() const { return {0}; }

  // The next Consume's (or ConsumeShared's) first element is element `index` of the request, at
  // or after everything consumed so far: a session that reduces only some parts of a request
  // (SplitSession's) is told where each part starts. Indices count from 0 otherwise.
  virtual void StartAt(uint64_t index) = 0;
  // What runs the request, as the response names it: with `auto` a backend may hand a small
  // request to another backend (the routing backend sends it to the CPU below its crossover).
  virtual kernels::KernelId kernel() const = 0;
  kernels::BackendKind backend() const { return kernels::GetKernel(kernel()).backend; }

  // The call was cancelled: a Consume waiting for resources ends with CANCELLED. Thread-safe.
  virtual void Cancel() {}
};

class Backend {
 public:
  virtual ~Backend() = default;

  virtual kernels::BackendKind kind() const = 0;
  virtual std::vector<DeviceDescription> devices() const = 0;
  // What "auto" resolves to.
  kernels::KernelId default_kernel() const { return kernels::DefaultKernel(kind()); }
  // Threads (CPU) or streams (GPU) that compute requests.
  virtual uint32_t workers() const = 0;

  // Reduces a known input and compares with the known answer; the server reports SERVING only
  // after this passes.
  virtual absl::Status SelfCheck() = 0;

  virtual absl::StatusOr<std::unique_ptr<ReduceSession>> Open(const RequestSpec& spec) = 0;

  // Pins `bytes` of host memory at `base` (page-aligned, mapped read only) for the GPUs' DMA,
  // until the hold is destroyed. Null where nothing needs pinning (the CPU backend).
  virtual absl::StatusOr<std::unique_ptr<MemoryHold>> PinHost(const void* base, size_t bytes) {
    (void)base;
    (void)bytes;
    return nullptr;
  }

  // Opens another process's device allocation by its 64-byte CUDA IPC handle on GPU `device`.
  // FAILED_PRECONDITION where the backend has no such GPU (the CPU backend has none).
  virtual absl::StatusOr<OpenedDeviceMemory> OpenIpcHandle(std::span<const std::byte> handle,
                                                           int device);

  // Called (once, from any thread) when the last usable device fails for good; the server then
  // reports NOT_SERVING. Until then a lost device is only out of rotation (Usage() says which).
  // Backends that cannot lose a device ignore it.
  virtual void set_on_lost(std::function<void()> on_lost) { (void)on_lost; }

  // Per device, what its shared resources are doing now; empty for backends without any (the
  // CPU). Thread-safe; cheap enough for a metrics scrape.
  virtual std::vector<DeviceUsage> Usage() const { return {}; }

  // Whether Open runs `kernel`: by default the kernels of kind().
  virtual bool Runs(const kernels::KernelInfo& kernel) const { return kernel.backend == kind(); }
  // The catalogue entries this backend runs: those of kind() first (the default among them), then
  // any other backend's it also runs.
  std::vector<const kernels::KernelInfo*> Kernels() const;
};

}  // namespace gpureduce::runtime
