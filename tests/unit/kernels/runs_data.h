#pragma once

// The short runs pass's test inputs (runs_pass_test, runs_answers_test): runs of every length the
// pass takes, with NaN, infinities, ties and -0 beside 0 (and alone) placed in them.

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "common/reduction/op.h"
#include "kernels/cpu/block_reduce.h"
#include "tests/support/random_data.h"
#include "tests/unit/kernels/typed_array.h"

namespace gpureduce::kernels::cpu {

using testing::TypedArray;

// (int64: no SUM_SQUARES, RunsPassTakes; answer_runs takes one op, AnsweredByVectors.)
inline constexpr DType kRunsDTypes[] = {DType::kFloat32, DType::kFloat16, DType::kBFloat16,
                                        DType::kFloat64, DType::kInt32,   DType::kInt64};

// Whether the short runs pass's AVX-512 copy answers `ops` over `dtype`'s runs itself
// (answer_runs): products alone (product_answers.h, int_product_answers.h; else by their Stats),
// and every dtype but int64, whose runs it answers for one op but SUM_SQUARES (else by their
// Stats; its SUM up to eight runs one of which wraps, which the tests' data have).
inline bool AnsweredByVectors(DType dtype, const std::vector<Op>& ops) {
  for (Op op : ops) {
    if (NanFormOf(op) == Op::kProd) return ops.size() == 1;
  }
  if (dtype != DType::kInt64) return true;
  return ops.size() == 1 && NanFormOf(ops.front()) != Op::kSumSquares;
}

// Whether that copy answers them by their keys (key_runs.h): one extreme op (MIN, MAX, an arg or
// NaN form) over 16-bit floats, 32 runs at a time up to the first group that holds a NaN.
inline bool AnsweredByKeys(DType dtype, const std::vector<Op>& ops) {
  if (dtype != DType::kFloat16 && dtype != DType::kBFloat16) return false;
  if (ops.size() != 1) return false;
  const Op op = NanFormOf(ops.front());
  return op == Op::kMin || op == Op::kMax || op == Op::kArgMin || op == Op::kArgMax;
}

// Runs 0 to 47: eight runs of each length the AVX-512 copy unrolls (whole groups: SharedGroups;
// the first call of 50 runs' runs 0-7, 8-15, ...), which Runs() leaves without NaN but in one run,
// so the NaN-free first pass is compared too; two runs of 5 and 7; the same again from run 50
// (the second call's start), with NaN; then runs of 1 to kLongestRun elements (each length once)
// and random lengths.
inline constexpr size_t kNanFreeRuns = 48;
inline std::vector<uint64_t> Bounds(std::mt19937_64& random) {
  std::vector<uint64_t> bounds = {0};
  for (int pass = 0; pass < 2; ++pass) {
    for (const uint64_t groups : {1, 2, 3, 4, 8, 16}) {
      for (int r = 0; r < 8; ++r) bounds.push_back(bounds.back() + groups * 8);
    }
    if (pass == 0) {
      bounds.push_back(bounds.back() + 5);
      bounds.push_back(bounds.back() + 7);
    }
  }
  for (uint64_t length = 1; length <= kLongestRun; ++length)
    bounds.push_back(bounds.back() + length);
  for (int i = 0; i < 200; ++i) bounds.push_back(bounds.back() + 1 + random() % kLongestRun);
  return bounds;
}

inline TypedArray Runs(DType dtype, const std::vector<uint64_t>& bounds, std::mt19937_64& random) {
  TypedArray data = testing::RandomArray(dtype, bounds.back(), random());
  const auto start = [&](size_t r) { return bounds[r]; };
  const auto length = [&](size_t r) { return bounds[r + 1] - bounds[r]; };
  if (IsInteger(
          dtype)) {  // the extremes at the ends of runs (int64's sums wrap), ties across lanes
    const bool narrow = dtype == DType::kInt32;
    for (size_t r = 0; r + 1 < bounds.size(); r += 3) {
      data.SetInt(start(r) + length(r) - 1,
                  r % 2 ? (narrow ? INT32_MIN : INT64_MIN) : (narrow ? INT32_MAX : INT64_MAX));
      // int64: first (and tied below) a value one short of that extreme, the same in float64,
      // and the extreme itself halfway too (its first index there, not at the end).
      if (!narrow && length(r) > 1) data.SetInt(start(r), r % 2 ? INT64_MIN + 1 : INT64_MAX - 1);
      if (!narrow && length(r) > 4 && r % 2 == 0) data.SetInt(start(r) + length(r) / 2, INT64_MAX);
      for (uint64_t e = 1; e < length(r); e += 5) data.SetInt(start(r) + e, data.ints[start(r)]);
    }
    return data;
  }
  for (size_t r = 0; r < kNanFreeRuns; ++r) {  // no NaN: ties, -0 beside 0, infinities
    if (r % 8 == 4) {  // -0 alone: its sums +0 (the NaN-free pass's lanes start at -0, not 0)
      for (uint64_t e = 0; e < length(r); ++e) data.Set(start(r) + e, -0.0);
      continue;
    }
    switch (r % 4) {
      case 1:
        for (uint64_t e = 1; e < length(r); e += 3) data.Set(start(r) + e, data.values[start(r)]);
        break;
      case 2:
        for (uint64_t e = 0; e < length(r); ++e) data.Set(start(r) + e, 1.0 + e % 3);
        data.Set(start(r) + length(r) / 3, 0.0);
        data.Set(start(r) + length(r) - 1, -0.0);
        break;
      case 3:  // infinities of both signs (the probe's sum NaN: the masked pass again), or one
        data.Set(start(r) + length(r) / 2, r % 8 == 3 ? INFINITY : -INFINITY);
        if (r == 43) data.Set(start(r), -INFINITY);
        break;
      default:
        break;
    }
  }
  data.Set(start(45) + 1, NAN);  // one NaN in one run of the last block
  for (size_t r = kNanFreeRuns; r + 1 < bounds.size(); ++r) {
    switch (r % 9) {
      case 1:  // NaN last, where a run's last group is padded
        data.Set(start(r) + length(r) - 1, NAN);
        break;
      case 2:  // all NaN
        for (uint64_t e = 0; e < length(r); ++e) data.Set(start(r) + e, NAN);
        break;
      case 3:  // infinities, and a NaN first
        data.Set(start(r), NAN);
        data.Set(start(r) + length(r) / 2, INFINITY);
        data.Set(start(r) + length(r) - 1, -INFINITY);
        break;
      case 4:  // the extremes tied across lanes
        for (uint64_t e = 1; e < length(r); e += 3) data.Set(start(r) + e, data.values[start(r)]);
        break;
      case 5:  // 0 and -0 the least: the first one's is the answer
        for (uint64_t e = 0; e < length(r); ++e) data.Set(start(r) + e, 1.0 + e % 3);
        data.Set(start(r) + length(r) / 3, 0.0);
        data.Set(start(r) + length(r) - 1, -0.0);
        break;
      default:
        break;
    }
  }
  return data;
}

inline std::vector<Op> OpsWithoutProducts() {
  std::vector<Op> ops;
  for (Op op : kAllOps) {
    if (NanFormOf(op) != Op::kProd) ops.push_back(op);
  }
  return ops;
}

}  // namespace gpureduce::kernels::cpu
