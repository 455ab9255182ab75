#pragma once

#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"
#include "common/reduction/dtype.h"
#include "gpureduce/v1/reduce.pb.h"

namespace gpureduce::client {

// The client's typed answer to any op over elements of any dtype, as NumPy types it: float
// results in long double (Welford's moments, a product whose exponent is kept apart), integer
// results exactly (128-bit sums, products modulo 2^64). Written without the server's code (it
// reads the result dtypes from common/reduction/op_result.h's table only), so gpureduce-load
// and --verify catch the server's mistakes in every dtype and op.
class TypedReference {
 public:
  TypedReference(v1::Op op, DType dtype, double ddof = 0) : op_(op), dtype_(dtype), ddof_(ddof) {}

  // Whole little-endian elements of the dtype (bytes.size() a multiple of its size).
  void AddBytes(absl::string_view bytes);

  struct Answer {
    v1::DType dtype = v1::FLOAT32;  // the result's
    bool integer = false;           // an integer result: int_value exact, value its double
    double value = 0;               // float results unrounded; arg ops: the element
    int64_t int_value = 0;          // an integer result (wrapped as NumPy wraps); arg ops: index
    int64_t index = -1;             // arg ops; else -1 (-1 too for an all-NaN nanarg op)
    bool overflow = false;          // the exact integer result does not fit in int64
    double scale = 0;               // what a float result's error is judged against
  };
  Answer answer() const { return answer(op_); }
  // Any other op's answer over the same elements (one pass over the data serves every op).
  Answer answer(v1::Op op) const;

 private:
  void AddElement(double x, int64_t integer);

  v1::Op op_;
  DType dtype_;
  double ddof_;
  uint64_t count_ = 0;
  uint64_t nan_count_ = 0;
  int64_t first_nan_ = -1;
  long double sum_ = 0, abs_sum_ = 0, sum_squares_ = 0;
  __extension__ __int128 int_sum_ = 0;
  uint64_t int_prod_ = 1;                      // modulo 2^64
  __extension__ __int128 int_prod_exact_ = 1;  // until its magnitude passes 2^63
  bool int_prod_overflow_ = false, saw_zero_ = false;
  long double prod_mantissa_ = 1;
  int64_t prod_exponent_ = 0;
  uint64_t zeros_ = 0, infinities_ = 0;
  bool negative_ = false;
  long double mean_ = 0, m2_ = 0;  // Welford over the valid elements
  double min_ = 0, max_ = 0;
  int64_t int_min_ = 0, int_max_ = 0;
  int64_t min_index_ = -1, max_index_ = -1;
};

// "" when `result` is `expected` (integers exactly, the overflow flag included; extremes and
// indexes exactly; float results within `tolerance` x scale, or one unit in the last place of
// the result dtype), else what differs.
std::string CheckOpResult(const v1::OpResult& result, v1::Op op,
                          const TypedReference::Answer& expected, double tolerance);

}  // namespace gpureduce::client
