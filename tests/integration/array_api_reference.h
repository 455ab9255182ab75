#pragma once

// An independent NumPy-semantics reference for the array API (issue 22; docs/array-api.md): every
// dtype x op, computed with sequential loops in long double (x87, 64-bit mantissa) or exact
// __int128 integers, with its own float16/bfloat16 decoding and rounding (array_api_arrays.h).
// Nothing here calls the project's kernels, Stats or op_result code, so a bug shared with them
// cannot hide.
//
// A float answer is checked as "the exact reduction rounded once to the result dtype": the
// reference brackets the exact value by [ref - slack, ref + slack] (slack: the accumulation error
// the contract allows, 0 where the service's float64 accumulation is exact by construction of the
// data), and the answer must lie between that bracket's two ends rounded to the result dtype.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gpureduce/v1/reduce.pb.h"
#include "tests/integration/array_api_arrays.h"

namespace gpureduce::testing::array_api {

// ---- The reference answer.

struct Expected {
  bool refused = false;  // INVALID_ARGUMENT (all-NaN NANARG, empty input without identity)
  v1::DType dtype = v1::FLOAT64;
  bool integer = false;  // an integer result (not an arg op): int_value, overflow
  bool arg = false;
  int64_t int_value = 0;
  bool overflow = false;
  int64_t index = -1;
  bool nan = false;
  double lo = 0, hi = 0;  // a float answer (or an arg op's element) lies in [lo, hi]
};

inline v1::Op BaseOf(v1::Op op) {
  switch (op) {
    case v1::NANSUM:
      return v1::SUM;
    case v1::NANPROD:
      return v1::PROD;
    case v1::NANMIN:
      return v1::MIN;
    case v1::NANMAX:
      return v1::MAX;
    case v1::NANMEAN:
      return v1::MEAN;
    case v1::NANARGMIN:
      return v1::ARGMIN;
    case v1::NANARGMAX:
      return v1::ARGMAX;
    case v1::NANVAR:
      return v1::VAR;
    case v1::NANSTD:
      return v1::STD;
    default:
      return op;
  }
}

inline bool Skips(v1::Op op) { return BaseOf(op) != op; }

inline v1::DType ResultDTypeOf(v1::Op op, v1::DType input) {
  const v1::Op base = BaseOf(op);
  if (base == v1::ARGMIN || base == v1::ARGMAX) return v1::INT64;
  if (!IsIntDType(input)) return input;
  if (base == v1::SUM || base == v1::PROD) return v1::INT64;
  if (base == v1::MIN || base == v1::MAX) return input;
  return v1::FLOAT64;
}

// Brackets `exact +- slack`, rounded to `dtype`.
inline void Bracket(Expected& e, LD exact, LD slack) {
  if (std::isnan(exact)) {
    e.nan = true;
    return;
  }
  if (std::isinf(exact)) slack = 0;
  e.lo = RoundTo(exact - slack, e.dtype);
  e.hi = RoundTo(exact + slack, e.dtype);
}

// Relative accuracy the contract allows VAR and STD (issue 22: 1e-10 of a two-pass reference).
constexpr LD kVarRelative = 1e-10L;

// `exact_small_floats`: the array's float16 or bfloat16 elements are such that a float64 sum of
// them is exact (RandomArray's, TiesArray's, a few values): their float answers must then be
// exactly rounded. Otherwise (any bits, as a fuzzer sends) they get float32's slack.
inline Expected Reference(v1::Op op, const Array& a, double ddof, bool exact_small_floats = true) {
  Expected e;
  const v1::Op base = BaseOf(op);
  const bool skips = Skips(op);
  e.dtype = ResultDTypeOf(op, a.dtype);
  e.arg = base == v1::ARGMIN || base == v1::ARGMAX;
  const size_t n = a.size();
  const bool ints = IsIntDType(a.dtype);
  e.integer = ints && !e.arg && e.dtype != v1::FLOAT64;
  const LD eps = std::ldexp(LD{1}, -53);
  std::vector<LD> decoded(n);
  for (size_t i = 0; i < n; ++i) decoded[i] = a.Float(i);
  auto x = [&decoded](size_t i) { return decoded[i]; };

  // Elements that count (NaN skipped by the NAN forms), and whether a NaN decides the answer.
  std::vector<size_t> valid;
  int64_t first_nan = -1;
  for (size_t i = 0; i < n; ++i) {
    if (!ints && std::isnan(x(i))) {
      if (first_nan < 0) first_nan = static_cast<int64_t>(i);
      continue;
    }
    valid.push_back(i);
  }
  const bool nan = first_nan >= 0 && !skips;
  const bool has_identity = base == v1::SUM || base == v1::PROD;
  if (n == 0 && !has_identity && op != v1::NANMEAN && base != v1::VAR && base != v1::STD) {
    e.refused = true;
    return e;
  }

  if (e.arg) {
    if (nan) {
      e.index = first_nan;
      e.int_value = first_nan;
      e.nan = true;
      return e;
    }
    if (valid.empty()) {
      e.refused = true;  // NANARGMIN/NANARGMAX of all NaN: NumPy raises
      return e;
    }
    size_t best = valid[0];
    for (size_t i : valid) {
      const bool better = base == v1::ARGMIN ? x(i) < x(best) : x(i) > x(best);
      if (better) best = i;
    }
    e.index = static_cast<int64_t>(best);
    e.int_value = e.index;
    e.lo = e.hi = static_cast<double>(x(best));
    return e;
  }

  if (ints) {
    Int128 sum = 0;
    for (size_t i = 0; i < n; ++i) sum += a.Int(i);
    if (base == v1::SUM) {
      e.int_value = static_cast<int64_t>(static_cast<uint64_t>(sum));
      e.overflow =
          sum > std::numeric_limits<int64_t>::max() || sum < std::numeric_limits<int64_t>::min();
      e.lo = e.hi = static_cast<double>(e.int_value);
      return e;
    }
    if (base == v1::PROD) {
      uint64_t wrapped = 1;
      bool zero = false, big = false;
      Int128 exact = 1;
      for (size_t i = 0; i < n; ++i) {
        const Int128 x = a.Int(i);
        wrapped *= static_cast<uint64_t>(static_cast<int64_t>(x));
        if (x == 0) zero = true;
        // |partial| never shrinks again unless an element is 0: past 2^63 it is out for good,
        // but +2^63 itself comes back to -2^63 with a -1 (so it is kept; 2^126 fits).
        if (!big) exact *= x;
        const Int128 least = std::numeric_limits<int64_t>::min();
        big = big || exact < least || exact > -least;
      }
      e.int_value = static_cast<int64_t>(wrapped);
      e.overflow = (big || exact > std::numeric_limits<int64_t>::max()) && !zero;
      e.lo = e.hi = static_cast<double>(e.int_value);
      return e;
    }
    if (base == v1::MIN || base == v1::MAX) {
      Int128 best = a.Int(0);
      for (size_t i = 1; i < n; ++i) {
        best = base == v1::MIN ? std::min(best, a.Int(i)) : std::max(best, a.Int(i));
      }
      e.int_value = static_cast<int64_t>(best);
      e.lo = e.hi = static_cast<double>(e.int_value);
      return e;
    }
    if (base == v1::MEAN) {  // the exact sum rounded to float64, divided: exact to the bit
      if (n == 0) return e.nan = true, e;  // NANMEAN of nothing
      const double m = static_cast<double>(sum) / static_cast<double>(n);
      e.lo = e.hi = m;
      return e;
    }
  }

  // Float reductions (and SUM_SQUARES, VAR, STD of integers) in long double.
  LD sum = 0, sum_abs = 0;
  for (size_t i : valid) {
    sum += x(i);
    sum_abs += std::fabs(x(i));
  }
  const LD count = static_cast<LD>(valid.size());
  const LD nl = static_cast<LD>(n);
  // The slack of a float64 sum of these elements: 0 where it is exact (float16 and bfloat16 data
  // of RandomArray, TiesArray), compensated for float64, plain float64 otherwise.
  LD sum_slack;
  if ((a.dtype == v1::FLOAT16 || a.dtype == v1::BFLOAT16) && exact_small_floats) {
    sum_slack = 0;
  } else if (a.dtype == v1::FLOAT64) {
    sum_slack = 2 * eps * std::fabs(sum) + nl * std::ldexp(LD{1}, -63) * sum_abs;
  } else {
    sum_slack = nl * eps * sum_abs;
  }
  switch (base) {
    case v1::SUM:
      if (nan) return e.nan = true, e;
      Bracket(e, sum, sum_slack);
      return e;
    case v1::PROD: {
      if (nan) return e.nan = true, e;
      // The exact product's sign, zeros and infinities, and its mantissa with the exponent kept
      // apart (no partial product overflows or underflows long double's range).
      bool negative = false, zero = false, infinite = false;
      LD mantissa = 1;
      int64_t exponent = 0;
      for (size_t i : valid) {
        const LD v = x(i);
        negative = negative != std::signbit(v);
        if (v == 0) zero = true;
        if (std::isinf(v)) infinite = true;
        if (v == 0 || std::isinf(v)) continue;
        int e2 = 0;
        mantissa = std::frexp(mantissa * std::fabs(v), &e2);
        exponent += e2;
      }
      if (zero && infinite) return e.nan = true, e;
      LD p;
      if (zero) {
        p = 0;
      } else if (infinite) {
        p = std::numeric_limits<LD>::infinity();
      } else {
        p = std::ldexp(mantissa, static_cast<int>(std::clamp<int64_t>(exponent, -20000, 20000)));
      }
      if (negative) p = -p;
      Bracket(e, p, std::fabs(p) * (nl + 1) * 2 * eps);
      return e;
    }
    case v1::MIN:
    case v1::MAX: {
      if (nan || valid.empty()) return e.nan = true, e;
      LD best = x(valid[0]);
      for (size_t i : valid) {
        const LD v = x(i);
        if (base == v1::MIN ? v < best : v > best) best = v;
      }
      e.lo = e.hi = static_cast<double>(best);
      return e;
    }
    case v1::MEAN: {
      if (nan || valid.empty()) return e.nan = true, e;
      const LD m = sum / count;
      Bracket(e, m, sum_slack / count + 2 * eps * std::fabs(m));
      return e;
    }
    case v1::SUM_SQUARES: {
      if (first_nan >= 0) return e.nan = true, e;  // no NAN form
      LD sq = 0;
      for (size_t i = 0; i < n; ++i) sq += x(i) * x(i);
      Bracket(e, sq, (nl + 1) * eps * sq);
      return e;
    }
    case v1::VAR:
    case v1::STD: {
      if (nan || valid.empty()) return e.nan = true, e;
      const LD mean = sum / count;
      LD m2 = 0;
      for (size_t i : valid) m2 += (x(i) - mean) * (x(i) - mean);
      const LD divisor = std::max(count - static_cast<LD>(ddof), LD{0});
      if (divisor == 0 && skips && !ints) return e.nan = true, e;  // np.nanvar's rule
      LD var = m2 / divisor;  // past the count: inf, or NaN where m2 is 0
      if (std::isnan(m2)) var = m2;
      // Any data (a fuzzer's): float64 moments lose about n * eps * mean^2 / (count - ddof) to
      // cancellation where the mean dwarfs the deviations; the contract's 1e-10 holds for
      // mean 1e6 with deviations of 1, what the tests send.
      LD slack = kVarRelative * std::fabs(var);
      if (!exact_small_floats && std::isfinite(var)) {
        slack += 8 * (nl + 1) * eps * (mean * mean + var) * count / std::max(divisor, LD{1});
      }
      if (base == v1::VAR) {
        Bracket(e, var, slack);
      } else if (std::isnan(var) || std::isinf(var)) {
        Bracket(e, std::sqrt(var), 0);
      } else {
        e.lo = RoundTo(std::sqrt(std::max(var - slack, LD{0})), e.dtype);
        e.hi = RoundTo(std::sqrt(var + slack), e.dtype);
      }
      return e;
    }
    default:
      break;
  }
  e.refused = true;
  return e;
}

inline std::string Exact(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%.17g", v);
  return text;
}

// "" when `got` is the answer `e` describes, else what differs.
inline std::string Check(const Expected& e, v1::Op op, const v1::OpResult& got) {
  std::string out;
  auto differ = [&out](auto what, auto want, auto have) {
    absl::StrAppend(&out, " ", what, ": want ", want, ", got ", have, ";");
  };
  if (got.op() != op) differ("op", v1::Op_Name(op), v1::Op_Name(got.op()));
  if (got.dtype() != e.dtype) differ("dtype", v1::DType_Name(e.dtype), v1::DType_Name(got.dtype()));
  if (e.arg) {
    if (got.index() != e.index) differ("index", e.index, got.index());
    if (got.int_value() != e.index) differ("int_value", e.index, got.int_value());
  } else if (got.index() != -1) {
    differ("index", -1, got.index());
  }
  if (e.integer) {
    if (got.int_value() != e.int_value) differ("int_value", e.int_value, got.int_value());
    if (got.overflow() != e.overflow) differ("overflow", int{e.overflow}, int{got.overflow()});
  } else if (got.overflow()) {
    differ("overflow", 0, 1);
  }
  if (e.nan) {
    if (!std::isnan(got.value())) differ("value", "NaN", Exact(got.value()));
  } else if (!(got.value() >= e.lo && got.value() <= e.hi)) {
    differ("value",
           e.lo == e.hi ? Exact(e.lo) : absl::StrCat("[", Exact(e.lo), ", ", Exact(e.hi), "]"),
           Exact(got.value()));
  }
  if (!out.empty()) out = absl::StrCat(v1::Op_Name(op), ":", out);
  return out;
}

}  // namespace gpureduce::testing::array_api
