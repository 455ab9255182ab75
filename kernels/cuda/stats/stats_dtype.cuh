#pragma once

// Each dtype as the stats kernel reads it: its storage type, the value type it is computed in
// (float for float32, float16 and bfloat16, whose values float holds exactly; double; int32;
// int64), how a 16-byte load splits into lanes, and how one element is read alone. float16 and
// bfloat16 (kPacked) also answer on the loaded pairs themselves: whether all eight are finite,
// their float64 values, and their least and greatest (PackedPairs), so that the reading loop
// spends no instruction on unpacking them to float.

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "common/reduction/dtype.h"

namespace gpureduce::kernels::cuda {

template <DType kDTypeT>
struct StatsDType;

// The packed-pair answers of a 16-bit float type, Pair its two-lane vector (__half2 or
// __nv_bfloat162): one multiply-add a pair tests finiteness (x * 0 is NaN only for an infinity
// or a NaN), one min and one max a pair find the extremes, one conversion an element widens.
template <typename PairT, bool kBFloat16T>
struct PackedPairs {
  static constexpr bool kPacked = true;
  __device__ static PairT AsPair(unsigned word) {
    PairT pair;
    static_assert(sizeof(pair) == sizeof(word));
    memcpy(&pair, &word, sizeof(word));
    return pair;
  }
  __device__ static bool AllFinite(uint4 raw) {
    const PairT zero = AsPair(0u);
    const PairT low = __hfma2(AsPair(raw.y), zero, __hmul2(AsPair(raw.x), zero));
    const PairT high = __hfma2(AsPair(raw.w), zero, __hmul2(AsPair(raw.z), zero));
    const PairT both = __hadd2(low, high);  // each lane +-0, or NaN
    return !__hisnan(__hadd(Low(both), High(both)));
  }
  __device__ static void Widen(uint4 raw, double (&out)[8]) {
    const unsigned words[4] = {raw.x, raw.y, raw.z, raw.w};
#pragma unroll
    for (unsigned w = 0; w < 4; ++w) {
      if constexpr (kBFloat16T) {
        asm("{.reg .b16 lo, hi; mov.b32 {lo, hi}, %2; cvt.f64.bf16 %0, lo; cvt.f64.bf16 %1, hi;}"
            : "=d"(out[2 * w]), "=d"(out[2 * w + 1])
            : "r"(words[w]));
      } else {
        asm("{.reg .b16 lo, hi; mov.b32 {lo, hi}, %2; cvt.f64.f16 %0, lo; cvt.f64.f16 %1, hi;}"
            : "=d"(out[2 * w]), "=d"(out[2 * w + 1])
            : "r"(words[w]));
      }
    }
  }
  // Of eight finite values.
  __device__ static void Extremes(uint4 raw, float& lo, float& hi) {
    const PairT a = AsPair(raw.x), b = AsPair(raw.y), c = AsPair(raw.z), d = AsPair(raw.w);
    const PairT least = __hmin2(__hmin2(a, b), __hmin2(c, d));
    const PairT most = __hmax2(__hmax2(a, b), __hmax2(c, d));
    lo = ToFloat(__hmin(Low(least), High(least)));
    hi = ToFloat(__hmax(Low(most), High(most)));
  }
  __device__ static auto Low(PairT pair) {
    if constexpr (kBFloat16T) {
      return __low2bfloat16(pair);
    } else {
      return __low2half(pair);
    }
  }
  __device__ static auto High(PairT pair) {
    if constexpr (kBFloat16T) {
      return __high2bfloat16(pair);
    } else {
      return __high2half(pair);
    }
  }
  template <typename HalfT>
  __device__ static float ToFloat(HalfT h) {
    if constexpr (kBFloat16T) {
      return __bfloat162float(h);
    } else {
      return __half2float(h);
    }
  }
};

template <>
struct StatsDType<DType::kFloat32> {
  static constexpr bool kPacked = false;
  using Storage = float;
  using Value = float;
  static constexpr bool kFloat = true;
  static constexpr unsigned kLanes = 4;
  __device__ static void Unpack(uint4 raw, Value (&out)[kLanes]) {
    out[0] = __uint_as_float(raw.x);
    out[1] = __uint_as_float(raw.y);
    out[2] = __uint_as_float(raw.z);
    out[3] = __uint_as_float(raw.w);
  }
  __device__ static Value Load(const Storage* p) { return *p; }
};

template <>
struct StatsDType<DType::kFloat16> : PackedPairs<__half2, false> {
  using Storage = __half;
  using Value = float;
  static constexpr bool kFloat = true;
  static constexpr unsigned kLanes = 8;
  __device__ static float2 Pair(unsigned word) {
    __half2 h;
    static_assert(sizeof(h) == sizeof(word));
    memcpy(&h, &word, sizeof(word));
    return __half22float2(h);
  }
  __device__ static void Unpack(uint4 raw, Value (&out)[kLanes]) {
    const unsigned words[4] = {raw.x, raw.y, raw.z, raw.w};
#pragma unroll
    for (unsigned w = 0; w < 4; ++w) {
      const float2 pair = Pair(words[w]);
      out[2 * w] = pair.x;
      out[2 * w + 1] = pair.y;
    }
  }
  __device__ static Value Load(const Storage* p) { return __half2float(*p); }
};

template <>
struct StatsDType<DType::kBFloat16> : PackedPairs<__nv_bfloat162, true> {
  using Storage = __nv_bfloat16;
  using Value = float;
  static constexpr bool kFloat = true;
  static constexpr unsigned kLanes = 8;
  // A bfloat16 is the upper half of a float32: exact by a shift.
  __device__ static void Unpack(uint4 raw, Value (&out)[kLanes]) {
    const unsigned words[4] = {raw.x, raw.y, raw.z, raw.w};
#pragma unroll
    for (unsigned w = 0; w < 4; ++w) {
      out[2 * w] = __uint_as_float(words[w] << 16);
      out[2 * w + 1] = __uint_as_float(words[w] & 0xffff0000u);
    }
  }
  __device__ static Value Load(const Storage* p) {
    return __uint_as_float(unsigned{*reinterpret_cast<const unsigned short*>(p)} << 16);
  }
};

template <>
struct StatsDType<DType::kFloat64> {
  static constexpr bool kPacked = false;
  using Storage = double;
  using Value = double;
  static constexpr bool kFloat = true;
  static constexpr unsigned kLanes = 2;
  __device__ static void Unpack(uint4 raw, Value (&out)[kLanes]) {
    out[0] = __hiloint2double(static_cast<int>(raw.y), static_cast<int>(raw.x));
    out[1] = __hiloint2double(static_cast<int>(raw.w), static_cast<int>(raw.z));
  }
  __device__ static Value Load(const Storage* p) { return *p; }
};

template <>
struct StatsDType<DType::kInt32> {
  static constexpr bool kPacked = false;
  using Storage = int32_t;
  using Value = int32_t;
  static constexpr bool kFloat = false;
  static constexpr unsigned kLanes = 4;
  __device__ static void Unpack(uint4 raw, Value (&out)[kLanes]) {
    out[0] = static_cast<int32_t>(raw.x);
    out[1] = static_cast<int32_t>(raw.y);
    out[2] = static_cast<int32_t>(raw.z);
    out[3] = static_cast<int32_t>(raw.w);
  }
  __device__ static Value Load(const Storage* p) { return *p; }
};

template <>
struct StatsDType<DType::kInt64> {
  static constexpr bool kPacked = false;
  using Storage = int64_t;
  using Value = int64_t;
  static constexpr bool kFloat = false;
  static constexpr unsigned kLanes = 2;
  __device__ static void Unpack(uint4 raw, Value (&out)[kLanes]) {
    out[0] = static_cast<int64_t>((uint64_t{raw.y} << 32) | raw.x);
    out[1] = static_cast<int64_t>((uint64_t{raw.w} << 32) | raw.z);
  }
  __device__ static Value Load(const Storage* p) { return *p; }
};

}  // namespace gpureduce::kernels::cuda
