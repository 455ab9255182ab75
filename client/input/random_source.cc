#include "client/input/random_source.h"

#include <algorithm>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "client/input/element_codec.h"
#include "common/reduction/op_name.h"

namespace gpureduce::client {
namespace {

// SplitMix64 (Steele, Lea, Flood 2014): a Weyl sequence through a 64-bit finalizer.
constexpr uint64_t kGamma = 0x9E3779B97F4A7C15ull;

inline uint64_t Mix(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

inline uint64_t Word(uint64_t key, uint64_t word_index) {
  return Mix(key + (word_index + 1) * kGamma);
}

// The top 24 bits of a 32-bit half, centred: exact in float, uniform over [-1, 1).
inline float ToFloat(uint32_t bits) {
  return static_cast<float>(static_cast<int32_t>(bits >> 8) - (int32_t{1} << 23)) * 0x1p-23f;
}

}  // namespace

RandomSource::RandomSource(uint64_t count, uint64_t seed, DType dtype)
    : count_(count), seed_(seed), key_(Mix(seed)), dtype_(dtype) {}

float RandomSource::ValueAt(uint64_t seed, uint64_t index) {
  const uint64_t word = Word(Mix(seed), index / 2);
  return ToFloat(static_cast<uint32_t>(index % 2 == 0 ? word : word >> 32));
}

absl::StatusOr<size_t> RandomSource::Read(absl::Span<float> out) {
  if (dtype_ != DType::kFloat32) {
    return absl::FailedPreconditionError(
        absl::StrCat("random input of ", DTypeName(dtype_), " is not float32"));
  }
  return Generate(out);
}

void RandomSource::Convert(absl::Span<const float> floats, DType dtype, char* out) {
  const auto store = [out](size_t i, auto value) {
    std::memcpy(out + i * sizeof(value), &value, sizeof(value));
  };
  for (size_t i = 0; i < floats.size(); ++i) {
    const float x = floats[i];
    switch (dtype) {
      case DType::kFloat32:
        store(i, x);
        break;
      case DType::kFloat16:
        store(i, DoubleToHalf(x));
        break;
      case DType::kBFloat16:
        store(i, FloatToBFloat16(x));
        break;
      case DType::kFloat64:
        store(i, static_cast<double>(x));
        break;
      case DType::kInt32:
        store(i, static_cast<int32_t>(x * 0x1p23f) * 256);
        break;
      case DType::kInt64:
        store(i, static_cast<int64_t>(x * 0x1p23f) * 256);
        break;
    }
  }
}

absl::StatusOr<size_t> RandomSource::ReadBytes(absl::Span<char> out) {
  const size_t n = out.size() / DTypeSize(dtype_);
  if (dtype_ == DType::kFloat32) return FloatSource::ReadBytes(out);
  constexpr size_t kPiece = 1 << 14;
  scratch_.resize(std::min(n, kPiece));
  size_t done = 0;
  while (done < n) {
    const size_t want = std::min(n - done, scratch_.size());
    absl::StatusOr<size_t> got = Generate(absl::MakeSpan(scratch_.data(), want));
    if (!got.ok()) return got.status();
    if (*got == 0) break;
    Convert(absl::MakeConstSpan(scratch_.data(), *got), dtype_,
            out.data() + done * DTypeSize(dtype_));
    done += *got;
  }
  return done;
}

absl::StatusOr<size_t> RandomSource::Generate(absl::Span<float> out) {
  const size_t n = static_cast<size_t>(std::min<uint64_t>(out.size(), count_ - position_));
  float* dst = out.data();
  size_t i = 0;
  uint64_t index = position_;
  if (n > 0 && index % 2 == 1) {
    // Finish the word the previous Read() started.
    dst[i++] = ToFloat(static_cast<uint32_t>(Word(key_, index / 2) >> 32));
    ++index;
  }
  const uint64_t first_word = index / 2;
  const size_t pairs = (n - i) / 2;
  float* pair_dst = dst + i;
  for (size_t p = 0; p < pairs; ++p) {
    const uint64_t word = Word(key_, first_word + p);
    pair_dst[2 * p] = ToFloat(static_cast<uint32_t>(word));
    pair_dst[2 * p + 1] = ToFloat(static_cast<uint32_t>(word >> 32));
  }
  i += 2 * pairs;
  if (i < n) dst[i] = ToFloat(static_cast<uint32_t>(Word(key_, first_word + pairs)));
  position_ += n;
  return n;
}

absl::StatusOr<uint64_t> RandomSource::Skip(uint64_t values) {
  const uint64_t n = std::min<uint64_t>(values, count_ - position_);
  position_ += n;
  return n;
}

std::string RandomSource::Describe() const {
  switch (dtype_) {
    case DType::kFloat32:
      return absl::StrCat("random (", count_, " floats uniform in [-1, 1), seed ", seed_, ")");
    case DType::kInt32:
    case DType::kInt64:
      return absl::StrCat("random (", count_, " ", DTypeName(dtype_),
                          " multiples of 256 uniform in [-2^31, 2^31), seed ", seed_, ")");
    default:
      return absl::StrCat("random (", count_, " ", DTypeName(dtype_),
                          " values uniform in [-1, 1), seed ", seed_, ")");
  }
}

}  // namespace gpureduce::client
