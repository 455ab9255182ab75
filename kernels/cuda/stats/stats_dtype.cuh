#pragma once

// Each dtype as the stats kernel reads it: its storage type, the value type it is computed in
// (float for float32, float16 and bfloat16, whose values float holds exactly; double; int32;
// int64), how a 16-byte load splits into lanes, and how one element is read alone.

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "common/reduction/dtype.h"

namespace gpureduce::kernels::cuda {

template <DType kDTypeT>
struct StatsDType;

template <>
struct StatsDType<DType::kFloat32> {
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
struct StatsDType<DType::kFloat16> {
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
struct StatsDType<DType::kBFloat16> {
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
