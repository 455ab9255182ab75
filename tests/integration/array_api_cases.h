#pragma once

// The array-API matrix (issue 22) as functions over a raw stub, shared by the CPU suite
// (tests/integration/array_api*_test.cc) and the GPU suite (tests/gpu/array_api_gpu_test.cc):
// every dtype x op against array_api_reference.h, NaN and inf, ties, streams cut inside elements.

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gpureduce/v1/reduce.grpc.pb.h"
#include "grpcpp/client_context.h"
#include "gtest/gtest.h"
#include "tests/integration/array_api_reference.h"

namespace gpureduce::testing::array_api {

struct Outcome {
  grpc::Status status;
  v1::ReduceResponse response;
};

inline std::string OpsText(const std::vector<v1::Op>& ops) {
  std::vector<std::string> names;
  for (v1::Op op : ops) names.push_back(v1::Op_Name(op));
  return absl::StrJoin(names, ",");
}

inline v1::ReduceSpec MakeSpec(v1::DType dtype, const std::vector<v1::Op>& ops, double ddof = 0,
                               const std::string& kernel = "") {
  v1::ReduceSpec spec;
  spec.set_dtype(dtype);
  if (ops.size() == 1) {
    spec.set_op(ops[0]);
  } else {
    for (v1::Op op : ops) spec.add_ops(op);
  }
  spec.set_ddof(ddof);
  spec.set_kernel(kernel);
  return spec;
}

inline v1::ReduceRequest MakeRequest(const v1::ReduceSpec& spec, const Array& a) {
  v1::ReduceRequest request;
  *request.mutable_spec() = spec;
  request.set_data(a.bytes);
  return request;
}

// The array's bytes as a stream: the spec in the first chunk, chunk sizes taken in turn from
// `cuts` (bytes; any of them may end inside an element).
inline std::vector<v1::ReduceChunk> Chunks(const v1::ReduceSpec& spec, const std::string& bytes,
                                           const std::vector<size_t>& cuts) {
  std::vector<v1::ReduceChunk> chunks;
  size_t at = 0;
  for (size_t i = 0; at < bytes.size() || chunks.empty(); ++i) {
    const size_t take = std::min(cuts[i % cuts.size()], bytes.size() - at);
    v1::ReduceChunk chunk;
    if (chunks.empty()) *chunk.mutable_spec() = spec;
    chunk.set_data(bytes.substr(at, take));
    at += take;
    chunks.push_back(std::move(chunk));
  }
  return chunks;
}

class Harness {
 public:
  explicit Harness(v1::Reducer::Stub& stub, std::string kernel = "")
      : stub_(stub), kernel_(std::move(kernel)) {}
  const std::string& kernel() const { return kernel_; }

  Outcome Unary(const v1::ReduceRequest& request) {
    grpc::ClientContext context;
    Outcome out;
    out.status = stub_.Reduce(&context, request, &out.response);
    return out;
  }

  Outcome Stream(const std::vector<v1::ReduceChunk>& chunks) {
    grpc::ClientContext context;
    Outcome out;
    auto writer = stub_.ReduceStream(&context, &out.response);
    for (const v1::ReduceChunk& chunk : chunks) {
      if (!writer->Write(chunk)) break;
    }
    writer->WritesDone();
    out.status = writer->Finish();
    return out;
  }

  Outcome Reduce(const Array& a, const std::vector<v1::Op>& ops, double ddof = 0) {
    return Unary(MakeRequest(MakeSpec(a.dtype, ops, ddof, kernel_), a));
  }

 private:
  v1::Reducer::Stub& stub_;
  std::string kernel_;
};

// Checks `got` against the reference for each of `ops`: one typed result per op in order, or,
// where the reference refuses any of them, INVALID_ARGUMENT for the whole request.
inline void ExpectAnswers(const Outcome& got, const std::vector<v1::Op>& ops, const Array& a,
                          double ddof, const std::string& what) {
  SCOPED_TRACE(absl::StrCat(what, ": ", DTypeText(a.dtype), " x ", a.size(), ", ops ", OpsText(ops),
                            ", ddof ", ddof));
  std::vector<Expected> want;
  bool refused = false;
  for (v1::Op op : ops) {
    want.push_back(Reference(op, a, ddof));
    refused = refused || want.back().refused;
  }
  if (refused) {
    EXPECT_EQ(got.status.error_code(), grpc::StatusCode::INVALID_ARGUMENT)
        << got.status.error_message();
    return;
  }
  ASSERT_TRUE(got.status.ok()) << got.status.error_code() << ": " << got.status.error_message();
  const v1::ReduceResponse& r = got.response;
  EXPECT_EQ(r.count(), a.size());
  EXPECT_EQ(r.dtype(), a.dtype);
  ASSERT_EQ(r.results_size(), static_cast<int>(ops.size()));
  for (size_t i = 0; i < ops.size(); ++i) {
    EXPECT_EQ(Check(want[i], ops[i], r.results(static_cast<int>(i))), "");
  }
  // The response's legacy fields answer the first op.
  EXPECT_EQ(r.index(), r.results(0).index());
}

// One request per op (when `each`), VAR and STD with ddof 1 too, and all 19 ops in one request.
inline void RunMatrix(Harness& h, const Array& a, bool each, const std::string& what) {
  if (each) {
    for (v1::Op op : AllOps()) ExpectAnswers(h.Reduce(a, {op}), {op}, a, 0, what);
    for (v1::Op op : {v1::VAR, v1::STD, v1::NANVAR, v1::NANSTD}) {
      ExpectAnswers(h.Reduce(a, {op}, 1), {op}, a, 1, what);
    }
  }
  ExpectAnswers(h.Reduce(a, AllOps()), AllOps(), a, 0, what);
}

// The 19 ops in one request, or, where the reference refuses some (all-NaN NANARG), that
// request refused and the others in one request.
inline void RunAllOps(Harness& h, const Array& a, const std::string& what, double ddof = 0) {
  ExpectAnswers(h.Reduce(a, AllOps(), ddof), AllOps(), a, ddof, what);
  std::vector<v1::Op> answerable;
  for (v1::Op op : AllOps()) {
    if (!Reference(op, a, ddof).refused) answerable.push_back(op);
  }
  if (answerable.size() != AllOps().size() && !answerable.empty()) {
    ExpectAnswers(h.Reduce(a, answerable, ddof), answerable, a, ddof, what);
  }
}

// NaN, +inf, -inf and both infinities at the start, the middle and the end of random data.
inline void RunSpecials(Harness& h, v1::DType dtype, size_t n, uint64_t seed) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  for (size_t at : {size_t{0}, n / 2, n - 1}) {
    Array a = RandomArray(dtype, n, seed + at);
    Set(a, at, nan);
    RunAllOps(h, a, absl::StrCat("NaN at ", at));
    if (n > 2) {  // two NaNs: the first one's index
      Set(a, n - 1 - at / 2, nan);
      RunAllOps(h, a, absl::StrCat("NaNs at ", at, " and ", n - 1 - at / 2));
    }
    a = RandomArray(dtype, n, seed + at + 1);
    Set(a, at, inf);
    RunAllOps(h, a, absl::StrCat("+inf at ", at));
    Set(a, at, -inf);
    RunAllOps(h, a, absl::StrCat("-inf at ", at));
    if (n > 1) {
      Set(a, (at + 1) % n, inf);
      RunAllOps(h, a, absl::StrCat("-inf at ", at, ", +inf at ", (at + 1) % n));
      Set(a, (at + n / 3 + 1) % n, nan);
      RunAllOps(h, a, absl::StrCat("-inf, +inf and NaN, NaN at ", (at + n / 3 + 1) % n));
    }
  }
  Array all_nan = FromValues(dtype, std::vector<double>(n, nan));
  RunAllOps(h, all_nan, "all NaN");
}

// The same array as a stream cut at `cuts` bytes answers exactly as the unary request does.
inline void ExpectStreamMatchesUnary(Harness& h, const Array& a, const std::vector<v1::Op>& ops,
                                     const std::vector<size_t>& cuts, const std::string& what) {
  SCOPED_TRACE(absl::StrCat(what, ": ", DTypeText(a.dtype), " x ", a.size(), " streamed in cuts ",
                            absl::StrJoin(cuts, ",")));
  const v1::ReduceSpec spec = MakeSpec(a.dtype, ops, 0, h.kernel());
  const Outcome unary = h.Unary(MakeRequest(spec, a));
  const std::vector<v1::ReduceChunk> chunks = Chunks(spec, a.bytes, cuts);
  const Outcome streamed = h.Stream(chunks);
  ASSERT_TRUE(unary.status.ok()) << unary.status.error_message();
  ASSERT_TRUE(streamed.status.ok()) << streamed.status.error_message();
  EXPECT_EQ(streamed.response.count(), a.size());
  EXPECT_EQ(streamed.response.timing().chunks(), chunks.size());
  ASSERT_EQ(streamed.response.results_size(), unary.response.results_size());
  // A chunk boundary is a merge point: the float64 sums of squares, moments and products (the
  // float64 results of SUM_SQUARES, VAR, STD, PROD) may differ in their last bits between
  // chunkings (the GPU's launches merge where the chunks end), as the
  // README says of sums; every other answer, and every index, is the same bit for bit. The
  // unrounded float64 values are compared as those results are.
  auto close = [](double a, double b) {
    return a == b || (std::isnan(a) && std::isnan(b)) ||
           std::fabs(a - b) <= 1e-13 * std::fmax(std::fabs(a), std::fabs(b));
  };
  for (int i = 0; i < unary.response.results_size(); ++i) {
    v1::OpResult got = streamed.response.results(i), want = unary.response.results(i);
    const bool moment = got.dtype() == v1::FLOAT64 &&
                        (got.op() == v1::SUM_SQUARES || got.op() == v1::VAR ||
                         got.op() == v1::STD || got.op() == v1::NANVAR || got.op() == v1::NANSTD ||
                         got.op() == v1::PROD || got.op() == v1::NANPROD);
    EXPECT_TRUE(close(got.unrounded(), want.unrounded()))
        << got.unrounded() << " vs " << want.unrounded();
    got.clear_unrounded();
    want.clear_unrounded();
    if (moment) {
      EXPECT_TRUE(close(got.value(), want.value())) << got.value() << " vs " << want.value();
      got.clear_value();
      want.clear_value();
    }
    EXPECT_EQ(got.SerializeAsString(), want.SerializeAsString())
        << "streamed: " << streamed.response.results(i).ShortDebugString()
        << "\nunary: " << unary.response.results(i).ShortDebugString();
  }
  EXPECT_TRUE(close(streamed.response.value(), unary.response.value()));
  ExpectAnswers(streamed, ops, a, 0, what);
}

}  // namespace gpureduce::testing::array_api
