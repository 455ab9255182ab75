#include "client/load/workload.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "client/input/random_source.h"
#include "client/reducer_client.h"
#include "client/running_reference.h"
#include "client/typed_spec.h"
#include "common/reduction/op_name.h"

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

// The typed payload: RandomSource's values of `dtype` (near one where a product is asked of a
// float dtype, as above), as little-endian bytes.
std::string MakeTypedPayload(const std::vector<v1::Op>& ops, DType dtype, uint64_t seed,
                             size_t elements) {
  std::vector<float> data(elements);
  RandomSource source(elements, seed);
  (void)source.Read(absl::MakeSpan(data));
  const bool product = std::find(ops.begin(), ops.end(), v1::PROD) != ops.end() ||
                       std::find(ops.begin(), ops.end(), v1::NANPROD) != ops.end();
  if (product && !IsInteger(dtype)) {
    for (float& x : data) x = static_cast<float>(1.0 + x / 1024.0);
  }
  std::string bytes(elements * DTypeSize(dtype), '\0');
  RandomSource::Convert(data, dtype, bytes.data());
  return bytes;
}

// The typed answers of `ops` over `bytes`, added in `pieces` (the stream's chunks).
std::vector<TypedReference::Answer> TypedAnswers(const std::vector<v1::Op>& ops, DType dtype,
                                                 double ddof,
                                                 const std::vector<absl::string_view>& pieces) {
  if (ops.empty()) return {};
  TypedReference reference(ops.front(), dtype, ddof);  // one pass serves every op
  for (const absl::string_view piece : pieces) reference.AddBytes(piece);
  std::vector<TypedReference::Answer> answers;
  for (const v1::Op op : ops) answers.push_back(reference.answer(op));
  return answers;
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
  if (workload.typed()) return MakeTyped(std::move(workload), std::move(spec), shared);

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
        if (absl::Status written = shared->write(region, offset, std::as_bytes(std::span(data)));
            !written.ok()) {
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

bool Workload::typed() const {
  if (options_.dtype != DType::kFloat32 || options_.ops.size() > 1 || options_.ddof != 0 ||
      options_.layout.array()) {
    return true;
  }
  return static_cast<int>(ops().front()) > static_cast<int>(v1::ARGMAX);
}

std::vector<v1::Op> Workload::ops() const {
  return options_.ops.empty() ? std::vector<v1::Op>{options_.op} : options_.ops;
}

absl::StatusOr<Workload> Workload::MakeTyped(Workload workload, v1::ReduceSpec spec,
                                             const SharedPayloadTarget* shared) {
  const WorkloadOptions& options = workload.options_;
  const std::vector<v1::Op> ops = workload.ops();
  SetOpsAndDType(ops, options.dtype, options.ddof, spec);
  const size_t size = DTypeSize(options.dtype);
  const ArrayLayout& layout = options.layout;
  if (layout.array()) {
    const uint64_t elements =
        options.stream_bytes == 0 ? options.floats : options.stream_bytes / size;
    if (absl::Status checked = CheckArrayLayout(
            layout, ops, elements,
            absl::StrCat("each request (", elements, " ", DTypeName(options.dtype), " elements)"));
        !checked.ok()) {
      return checked;
    }
    SetArrayLayout(layout, spec);
  }
  // The client's answers to one request's payload, in the pieces it is sent in.
  const auto expect = [&](const std::vector<absl::string_view>& pieces, uint64_t count) {
    Expected expected;
    expected.count = count;
    if (layout.array()) {
      expected.arrays = ComputeArrayAnswers(layout, ops, options.dtype, options.ddof, pieces);
      expected.shape = ResultShape(layout);
    } else {
      expected.results = TypedAnswers(ops, options.dtype, options.ddof, pieces);
    }
    return expected;
  };
  if (options.stream_bytes == 0) {
    if (options.floats == 0) return absl::InvalidArgumentError("--floats must be at least 1");
    spec.set_expected_count(options.floats);
    for (uint32_t p = 0; p < options.payloads; ++p) {
      const std::string data =
          MakeTypedPayload(ops, options.dtype, options.seed + p, options.floats);
      v1::ReduceRequest request;
      *request.mutable_spec() = spec;
      if (shared != nullptr) {
        const size_t region = p % shared->regions.size();
        const uint64_t offset = uint64_t{p / shared->regions.size()} * options.floats * size;
        if (absl::Status written = shared->write(region, offset, std::as_bytes(std::span(data)));
            !written.ok()) {
          return written;
        }
        v1::SharedMemoryRef* ref = request.mutable_shared_memory();
        ref->set_region(shared->regions[region]);
        ref->set_offset(offset);
        ref->set_byte_size(data.size());
      } else {
        request.set_data(data);
      }
      workload.unary_.push_back(std::move(request));
      workload.expected_.push_back(expect({data}, options.floats));
    }
    return workload;
  }
  if (options.stream_bytes % size != 0 || options.chunk_bytes % size != 0 ||
      options.chunk_bytes == 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--bytes (", options.stream_bytes, ") and --chunk-size (", options.chunk_bytes,
        ") must be positive multiples of ", size, ": the payload is ", DTypeName(options.dtype)));
  }
  const uint64_t elements = options.stream_bytes / size;
  const size_t chunk_elements = options.chunk_bytes / size;
  workload.stream_chunks_ = (elements + chunk_elements - 1) / chunk_elements;
  spec.set_expected_count(elements);
  *workload.head_.mutable_spec() = spec;
  for (uint32_t p = 0; p < options.payloads && p < workload.stream_chunks_; ++p) {
    v1::ReduceChunk chunk;
    chunk.set_data(MakeTypedPayload(ops, options.dtype, options.seed + p, chunk_elements));
    workload.chunks_.push_back(std::move(chunk));
  }
  const size_t last_elements = elements - (workload.stream_chunks_ - 1) * chunk_elements;
  std::vector<absl::string_view> pieces;
  for (size_t k = 0; k < workload.stream_chunks_; ++k) {
    const std::string& data = workload.chunks_[k % workload.chunks_.size()].data();
    const bool last = k + 1 == workload.stream_chunks_;
    pieces.push_back(
        absl::string_view(data).substr(0, (last ? last_elements : chunk_elements) * size));
  }
  if (last_elements != chunk_elements) {
    v1::ReduceChunk last;
    last.set_data(std::string(pieces.back()));
    workload.last_chunk_ = std::move(last);
  }
  workload.expected_.push_back(expect(pieces, elements));
  return workload;
}

const v1::ReduceChunk& Workload::chunk(size_t k) const {
  if (last_chunk_.has_value() && k + 1 == stream_chunks_) return *last_chunk_;
  return chunks_[k % chunks_.size()];
}

uint64_t Workload::request_bytes() const {
  return streaming() ? options_.stream_bytes : options_.floats * DTypeSize(options_.dtype);
}

std::string Workload::Check(const v1::ReduceResponse& response, const Expected& expected) const {
  if (response.count() != expected.count) {
    return absl::StrCat("count ", response.count(), ", expected ", expected.count);
  }
  if (options_.layout.array()) {
    const std::vector<v1::Op> ops = this->ops();
    if (response.results_size() != static_cast<int>(ops.size())) {
      return absl::StrCat(response.results_size(), " results for ", ops.size(), " ops");
    }
    for (size_t i = 0; i < ops.size(); ++i) {
      std::string problem = CheckArrayResult(response.results(static_cast<int>(i)), ops[i],
                                             expected.shape, expected.arrays[i], tolerance_);
      if (!problem.empty()) return problem;
    }
    return "";
  }
  if (!expected.results.empty()) {
    const std::vector<v1::Op> ops = this->ops();
    if (response.results_size() != static_cast<int>(ops.size())) {
      return absl::StrCat(response.results_size(), " typed results for ", ops.size(),
                          " ops (a server older than dtypes sends none)");
    }
    for (size_t i = 0; i < ops.size(); ++i) {
      std::string problem = CheckOpResult(response.results(static_cast<int>(i)), ops[i],
                                          expected.results[i], tolerance_);
      if (!problem.empty()) return problem;
    }
    return "";
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
