#include "client/load/workload.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "client/input/random_source.h"
#include "client/reducer_client.h"
#include "client/running_reference.h"

namespace gpureduce::client {
namespace {

// Mixed sign, exactly representable values (k x 2^-23, |k| < 2^23): float64 sums of them are
// exact, so the check of a sum can be strict. PROD gets values near one, so that long products
// stay finite and meaningful.
std::vector<float> MakePayload(v1::Op op, uint64_t seed, size_t floats) {
  std::vector<float> data(floats);
  RandomSource source(floats, seed);  // RandomSource::ValueAt(seed, i), a pair at a time
  (void)source.Read(absl::MakeSpan(data));
  if (op == v1::PROD) {
    for (float& x : data) x = static_cast<float>(1.0 + x / 1024.0);
  }
  return data;
}

// The index only where the op reports one, as the server does (-1 otherwise).
Expected Answer(v1::Op op, const RunningReference& reference, uint64_t count) {
  const bool indexed = op == v1::ARGMIN || op == v1::ARGMAX;
  return Expected{reference.value(), indexed ? reference.index() : -1, count, reference.scale()};
}

}  // namespace

double KernelTolerance(const std::string& kernel, const v1::ListKernelsResponse& listing) {
  const std::string& name = kernel.empty() || kernel == "auto" ? listing.default_kernel() : kernel;
  for (const v1::KernelInfo& listed : listing.kernels()) {
    if (listed.name() == name) return listed.lineage().empty() ? kFloat64Tolerance : 1e-3;
  }
  return kFloat64Tolerance;
}

absl::StatusOr<Workload> Workload::Make(const WorkloadOptions& options,
                                        const SharedPayloadTarget* shared) {
  if (options.payloads == 0) return absl::InvalidArgumentError("--payloads must be at least 1");
  Workload workload;
  workload.options_ = options;
  workload.tolerance_ = options.tolerance > 0 ? options.tolerance : kFloat64Tolerance;
  v1::ReduceSpec spec;
  spec.set_op(options.op);
  spec.set_kernel(options.kernel);
  if (options.device >= 0) spec.set_device(static_cast<int32_t>(options.device));

  if (options.stream_bytes == 0) {
    if (options.floats == 0) return absl::InvalidArgumentError("--floats must be at least 1");
    spec.set_expected_count(options.floats);
    for (uint32_t p = 0; p < options.payloads; ++p) {
      const std::vector<float> data = MakePayload(options.op, options.seed + p, options.floats);
      v1::ReduceRequest request;
      *request.mutable_spec() = spec;
      if (shared != nullptr) {
        const size_t region = p % shared->regions.size();
        const uint64_t offset = uint64_t{p / shared->regions.size()} * options.floats * 4;
        if (absl::Status written = shared->write(region, offset, data); !written.ok()) {
          return written;
        }
        v1::SharedMemoryRef* ref = request.mutable_shared_memory();
        ref->set_region(shared->regions[region]);
        ref->set_offset(offset);
        ref->set_byte_size(options.floats * sizeof(float));
      } else {
        SetPayload(data, false, request.mutable_data(), request.mutable_values());
      }
      workload.unary_.push_back(std::move(request));
      RunningReference reference(options.op);
      reference.Add(data);
      workload.expected_.push_back(Answer(options.op, reference, options.floats));
    }
    return workload;
  }

  if (options.stream_bytes % sizeof(float) != 0 || options.chunk_bytes % sizeof(float) != 0 ||
      options.chunk_bytes == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("--bytes (", options.stream_bytes, ") and --chunk-size (", options.chunk_bytes,
                     ") must be positive multiples of 4: the payload is float32"));
  }
  const uint64_t floats = options.stream_bytes / sizeof(float);
  const size_t chunk_floats = options.chunk_bytes / sizeof(float);
  workload.stream_chunks_ = (floats + chunk_floats - 1) / chunk_floats;
  spec.set_expected_count(floats);
  *workload.head_.mutable_spec() = spec;
  std::vector<std::vector<float>> payloads;
  for (uint32_t p = 0; p < options.payloads && p < workload.stream_chunks_; ++p) {
    payloads.push_back(MakePayload(options.op, options.seed + p, chunk_floats));
    v1::ReduceChunk chunk;
    SetPayload(payloads.back(), false, chunk.mutable_data(), chunk.mutable_values());
    workload.chunks_.push_back(std::move(chunk));
  }
  // The client's answer for the whole stream, chunk by chunk as the server will see it.
  RunningReference reference(options.op);
  const size_t last_floats = floats - (workload.stream_chunks_ - 1) * chunk_floats;
  for (size_t k = 0; k < workload.stream_chunks_; ++k) {
    const std::vector<float>& data = payloads[k % payloads.size()];
    const bool last = k + 1 == workload.stream_chunks_;
    reference.Add(absl::MakeConstSpan(data.data(), last ? last_floats : chunk_floats));
  }
  if (last_floats != chunk_floats) {
    // The last message is shorter: it gets a message of its own, after the cycle.
    v1::ReduceChunk last;
    const std::vector<float>& data = payloads[(workload.stream_chunks_ - 1) % payloads.size()];
    SetPayload(absl::MakeConstSpan(data.data(), last_floats), false, last.mutable_data(),
               last.mutable_values());
    workload.last_chunk_ = std::move(last);
  }
  workload.expected_.push_back(Answer(options.op, reference, floats));
  return workload;
}

const v1::ReduceChunk& Workload::chunk(size_t k) const {
  if (last_chunk_.has_value() && k + 1 == stream_chunks_) return *last_chunk_;
  return chunks_[k % chunks_.size()];
}

uint64_t Workload::request_bytes() const {
  return streaming() ? options_.stream_bytes : options_.floats * sizeof(float);
}

std::string Workload::Check(const v1::ReduceResponse& response, const Expected& expected) const {
  if (response.count() != expected.count) {
    return absl::StrCat("count ", response.count(), ", expected ", expected.count);
  }
  const v1::Op op = options_.op;
  if (op == v1::MIN || op == v1::MAX || op == v1::ARGMIN || op == v1::ARGMAX) {
    const bool indexed = op == v1::ARGMIN || op == v1::ARGMAX;
    if (response.value() != expected.value || (indexed && response.index() != expected.index)) {
      return absl::StrFormat("got %.9g at %d, expected %.9g at %d", response.value(),
                             response.index(), expected.value, expected.index);
    }
    return "";
  }
  const double error = std::fabs(response.value() - expected.value);
  if (!(error <= tolerance_ * expected.scale)) {
    return absl::StrFormat("got %.17g, expected %.17g: error %.3g of a scale %.3g (tolerance %g)",
                           response.value(), expected.value, error, expected.scale, tolerance_);
  }
  return "";
}

}  // namespace gpureduce::client
