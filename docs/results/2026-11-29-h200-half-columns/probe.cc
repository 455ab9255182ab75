// A probe, not the product: float16 columns' SUM and MIN (NumPy's axis=0 of a row-major table)
// by three ways of reading the rows, beside the whole array's float32 and float16 SUM (float64
// lanes throughout, as the cpu kernel adds), on N threads. Each task takes a block of rows of a
// tile of columns, as the columns pass does.
//   tile:  a row at a time, widened to float32 first, added into accumulators in memory (L1),
//          the row 4 ahead prefetched into L2 (what column_pass.cc does below a page);
//   fused: a row at a time, converted in the loop, accumulators in memory;
//   strip: 128 columns at a time (64 for MIN's keys), their accumulators in registers down the
//          block's rows, the strip of the row 8 ahead prefetched.
// Build: c++ -O3 -std=c++20 -mavx512f -mavx512bw -mavx512vl -mf16c -mfma -pthread probe.cc
#include <immintrin.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <thread>
#include <vector>

namespace {

constexpr size_t kBlockRows = 2048;
constexpr size_t kMaxTile = 1024;

struct Table {
  const uint16_t* data;
  size_t rows, width, tile;
};

// ---- SUM ----
void SumTile(const uint16_t* data, size_t stride, size_t rows, size_t width, double* sum) {
  alignas(64) float w[kMaxTile];
  for (size_t r = 0; r < rows; ++r) {
    const uint16_t* row = data + r * stride;
    if (r + 4 < rows) {
      const char* ahead = reinterpret_cast<const char*>(row + 4 * stride);
      for (size_t b = 0; b < width * 2; b += 64) __builtin_prefetch(ahead + b, 0, 2);
    }
    for (size_t c = 0; c < width; c += 16) {
      _mm512_store_ps(w + c, _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i*)(row + c))));
    }
    for (size_t c = 0; c < width; ++c) sum[c] += static_cast<double>(w[c]);
  }
}

void SumFused(const uint16_t* data, size_t stride, size_t rows, size_t width, double* sum) {
  for (size_t r = 0; r < rows; ++r) {
    const uint16_t* row = data + r * stride;
    if (r + 4 < rows) {
      const char* ahead = reinterpret_cast<const char*>(row + 4 * stride);
      for (size_t b = 0; b < width * 2; b += 64) __builtin_prefetch(ahead + b, 0, 2);
    }
    for (size_t c = 0; c < width; c += 8) {
      const __m256 f = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i*)(row + c)));
      _mm512_storeu_pd(sum + c, _mm512_add_pd(_mm512_loadu_pd(sum + c), _mm512_cvtps_pd(f)));
    }
  }
}

template <int kAhead, int kAcc>
void SumStripOf(const uint16_t* data, size_t stride, size_t rows, size_t width, double* sum) {
  for (size_t c0 = 0; c0 < width; c0 += 8 * kAcc) {
    __m512d acc[kAcc];
#pragma GCC unroll 16
    for (int k = 0; k < kAcc; ++k) acc[k] = _mm512_setzero_pd();
    const uint16_t* col = data + c0;
    for (size_t r = 0; r < rows; ++r) {
      const uint16_t* row = col + r * stride;
      if (kAhead > 0) {
        const char* ahead = reinterpret_cast<const char*>(row + kAhead * stride);
#pragma GCC unroll 4
        for (int b = 0; b < 16 * kAcc; b += 64) __builtin_prefetch(ahead + b, 0, 3);
      }
#pragma GCC unroll 16
      for (int k = 0; k < kAcc; ++k) {
        const __m256 f = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i*)(row + 8 * k)));
        acc[k] = _mm512_add_pd(acc[k], _mm512_cvtps_pd(f));
      }
    }
#pragma GCC unroll 16
    for (int k = 0; k < kAcc; ++k) _mm512_storeu_pd(sum + c0 + 8 * k, acc[k]);
  }
}

template <int kAhead>
void SumStrip(const uint16_t* data, size_t stride, size_t rows, size_t width, double* sum) {
  if (width % 128 == 0) return SumStripOf<kAhead, 16>(data, stride, rows, width, sum);
  SumStripOf<kAhead, 8>(data, stride, rows, width, sum);
}

// The strips over bands of rows of about kBand bytes, each band's strips in turn (the
// accumulators stored between bands).
template <size_t kBand>
void SumStripBanded(const uint16_t* data, size_t stride, size_t rows, size_t width, double* sum) {
  const size_t band = std::max<size_t>(32, kBand / (2 * width));
  for (size_t r0 = 0; r0 < rows; r0 += band) {
    const size_t n = std::min(band, rows - r0);
    std::vector<double> part(width);
    SumStrip<8>(data + r0 * stride, stride, n, width, part.data());
    for (size_t c = 0; c < width; ++c) sum[c] += part[c];
  }
}

// VAR's one-pass moments about the first row: sum, s1, s2 (kSum) or s1, s2 alone.
template <int kAcc, bool kSum, int kAhead>
void VarStrip(const uint16_t* data, size_t stride, size_t rows, size_t width, double* out) {
  for (size_t c0 = 0; c0 < width; c0 += 8 * kAcc) {
    __m512d sum[kAcc], s1[kAcc], s2[kAcc], shift[kAcc];
#pragma GCC unroll 16
    for (int k = 0; k < kAcc; ++k) {
      sum[k] = s1[k] = s2[k] = _mm512_setzero_pd();
      shift[k] =
          _mm512_cvtps_pd(_mm256_cvtph_ps(_mm_loadu_si128((const __m128i*)(data + c0 + 8 * k))));
    }
    const uint16_t* col = data + c0;
    for (size_t r = 0; r < rows; ++r) {
      const uint16_t* row = col + r * stride;
      const char* ahead = reinterpret_cast<const char*>(row + kAhead * stride);
#pragma GCC unroll 4
      for (int b = 0; b < 16 * kAcc; b += 64) __builtin_prefetch(ahead + b, 0, 3);
#pragma GCC unroll 16
      for (int k = 0; k < kAcc; ++k) {
        const __m512d v =
            _mm512_cvtps_pd(_mm256_cvtph_ps(_mm_loadu_si128((const __m128i*)(row + 8 * k))));
        if (kSum) sum[k] = _mm512_add_pd(sum[k], v);
        const __m512d d = _mm512_sub_pd(v, shift[k]);
        s1[k] = _mm512_add_pd(s1[k], d);
        s2[k] = _mm512_add_pd(s2[k], _mm512_mul_pd(d, d));
      }
    }
#pragma GCC unroll 16
    for (int k = 0; k < kAcc; ++k) {
      _mm512_storeu_pd(out + c0 + 8 * k, _mm512_add_pd(_mm512_add_pd(sum[k], s1[k]), s2[k]));
    }
  }
}

// ---- MIN (value and first row), NaN-free ----
void MinTile(const uint16_t* data, size_t stride, size_t rows, size_t width, float* least,
             int32_t* at) {
  alignas(64) float w[kMaxTile];
  for (size_t c = 0; c < width; ++c) least[c] = INFINITY, at[c] = -1;
  for (size_t r = 0; r < rows; ++r) {
    const uint16_t* row = data + r * stride;
    if (r + 4 < rows) {
      const char* ahead = reinterpret_cast<const char*>(row + 4 * stride);
      for (size_t b = 0; b < width * 2; b += 64) __builtin_prefetch(ahead + b, 0, 2);
    }
    for (size_t c = 0; c < width; c += 16) {
      _mm512_store_ps(w + c, _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i*)(row + c))));
    }
    const auto ri = static_cast<int32_t>(r);
    for (size_t c = 0; c < width; ++c) {
      const bool lt = w[c] < least[c];
      least[c] = lt ? w[c] : least[c];
      at[c] = lt ? ri : at[c];
    }
  }
}

// Keys: int16 that order as the values (magnitude bits flipped where the sign is set).
inline __m512i Keys(__m512i x) {
  return _mm512_xor_si512(x, _mm512_srli_epi16(_mm512_srai_epi16(x, 15), 1));
}

void MinStrip(const uint16_t* data, size_t stride, size_t rows, size_t width, int16_t* least,
              int16_t* at) {
  for (size_t c0 = 0; c0 < width; c0 += 64) {
    __m512i key[2], row_of[2];
    for (int k = 0; k < 2; ++k)
      key[k] = _mm512_set1_epi16(0x7fff), row_of[k] = _mm512_set1_epi16(-1);
    const uint16_t* col = data + c0;
    for (size_t r = 0; r < rows; ++r) {
      const uint16_t* row = col + r * stride;
      const char* ahead = reinterpret_cast<const char*>(row + 8 * stride);
      __builtin_prefetch(ahead, 0, 3);
      __builtin_prefetch(ahead + 64, 0, 3);
      const __m512i ri = _mm512_set1_epi16(static_cast<int16_t>(r));
      for (int k = 0; k < 2; ++k) {
        const __m512i x = Keys(_mm512_loadu_si512(row + 32 * k));
        const __mmask32 lt = _mm512_cmplt_epi16_mask(x, key[k]);
        key[k] = _mm512_mask_mov_epi16(key[k], lt, x);
        row_of[k] = _mm512_mask_mov_epi16(row_of[k], lt, ri);
      }
    }
    for (int k = 0; k < 2; ++k) {
      _mm512_storeu_si512(least + c0 + 32 * k, key[k]);
      _mm512_storeu_si512(at + c0 + 32 * k, row_of[k]);
    }
  }
}

// ---- the whole array ----
double WholeF32(const float* x, size_t n) {
  __m512d a[4] = {};
  for (size_t i = 0; i < n; i += 32) {
    for (int k = 0; k < 4; ++k)
      a[k] = _mm512_add_pd(a[k], _mm512_cvtps_pd(_mm256_loadu_ps(x + i + 8 * k)));
  }
  return _mm512_reduce_add_pd(_mm512_add_pd(_mm512_add_pd(a[0], a[1]), _mm512_add_pd(a[2], a[3])));
}

double WholeF16(const uint16_t* x, size_t n) {
  __m512d a[4] = {};
  for (size_t i = 0; i < n; i += 32) {
    for (int k = 0; k < 4; ++k) {
      const __m256 f = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i*)(x + i + 8 * k)));
      a[k] = _mm512_add_pd(a[k], _mm512_cvtps_pd(f));
    }
  }
  return _mm512_reduce_add_pd(_mm512_add_pd(_mm512_add_pd(a[0], a[1]), _mm512_add_pd(a[2], a[3])));
}

// Tasks (a tile of columns by a block of rows) shared among the threads from a counter.
template <typename TaskF>
double Timed(int threads, size_t tasks, TaskF task) {
  std::atomic<size_t> next{0};
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      for (size_t i; (i = next.fetch_add(1)) < tasks;) task(t, i);
    });
  }
  for (auto& p : pool) p.join();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

template <typename TaskF>
double MedianGBs(int threads, size_t tasks, size_t bytes, int runs, TaskF task) {
  Timed(threads, tasks, task);
  std::vector<double> s;
  for (int i = 0; i < runs; ++i) s.push_back(Timed(threads, tasks, task));
  std::sort(s.begin(), s.end());
  return bytes / s[s.size() / 2] / 1e9;
}

}  // namespace

int main(int argc, char** argv) {
  const int threads = argc > 1 ? atoi(argv[1]) : 16;
  const size_t bytes = (argc > 2 ? atoll(argv[2]) : 128) << 20;
  const int runs = 7;
  const size_t n16 = bytes / 2, n32 = bytes / 4;
  uint16_t* h = static_cast<uint16_t*>(aligned_alloc(4096, bytes));
  float* f = static_cast<float*>(aligned_alloc(4096, bytes));
  std::mt19937 gen(7);
  std::uniform_real_distribution<float> u(-100.f, 100.f);
  for (size_t i = 0; i < n32; ++i) f[i] = u(gen);
  for (size_t i = 0; i < n16; ++i) h[i] = _cvtss_sh(u(gen), 0);
  const size_t kChunk = 1 << 20;  // whole-array tasks: 1 Mi elements
  std::vector<double> part(threads);
  const double w32 = MedianGBs(threads, n32 / kChunk, bytes, runs, [&](int t, size_t i) {
    part[t] += WholeF32(f + i * kChunk, kChunk);
  });
  const double w16 = MedianGBs(threads, n16 / kChunk, bytes, runs, [&](int t, size_t i) {
    part[t] += WholeF16(h + i * kChunk, kChunk);
  });
  printf("threads %d, %zu MiB: whole float32 SUM %.1f GB/s, whole float16 SUM %.1f (%.2f)\n",
         threads, bytes >> 20, w32, w16, w16 / w32);
  printf("%8s %8s %8s %8s %8s %8s %8s %8s %8s %8s %8s %6s\n", "columns", "sum-tile", "fused",
         "strip8", "band256K", "band1M", "min-tile", "min-key", "var32", "var64", "var32a64",
         "check");
  for (size_t width : {64, 256, 1024, 4096, 16384}) {
    const size_t rows = n16 / width, tile = width * 2 >= 4096 ? 256 : std::min(width, kMaxTile);
    const size_t tiles = width / tile, blocks = (rows + kBlockRows - 1) / kBlockRows;
    const size_t tasks = tiles * blocks;
    std::vector<std::vector<double>> sums(threads, std::vector<double>(kMaxTile));
    std::vector<std::vector<float>> least(threads, std::vector<float>(kMaxTile));
    std::vector<std::vector<int16_t>> keys(threads, std::vector<int16_t>(kMaxTile));
    std::vector<std::vector<int32_t>> at(threads, std::vector<int32_t>(kMaxTile));
    std::vector<std::vector<int16_t>> at16(threads, std::vector<int16_t>(kMaxTile));
    auto on = [&](auto kernel) {
      return [&, kernel](int t, size_t i) {
        const size_t c0 = (i % tiles) * tile, r0 = (i / tiles) * kBlockRows;
        const size_t count = std::min(kBlockRows, rows - r0);
        std::fill(sums[t].begin(), sums[t].end(), 0.0);
        kernel(t, h + r0 * width + c0, width, count, tile);
      };
    };
    auto sum_with = [&](auto fn) {
      return on([&, fn](int t, const uint16_t* d, size_t s, size_t n, size_t w) {
        fn(d, s, n, w, sums[t].data());
      });
    };
    const double a = MedianGBs(threads, tasks, bytes, runs, sum_with(SumTile));
    const double b = MedianGBs(threads, tasks, bytes, runs, sum_with(SumFused));
    const double c = MedianGBs(threads, tasks, bytes, runs, sum_with(SumStrip<8>));
    const double c0 = MedianGBs(threads, tasks, bytes, runs, sum_with(SumStripBanded<256 << 10>));
    const double c16 = MedianGBs(threads, tasks, bytes, runs, sum_with(SumStripBanded<1 << 20>));
    const double v32 = MedianGBs(threads, tasks, bytes, runs, sum_with(VarStrip<4, true, 32>));
    const double v64 = MedianGBs(threads, tasks, bytes, runs, sum_with(VarStrip<8, false, 16>));
    const double v32a = MedianGBs(threads, tasks, bytes, runs, sum_with(VarStrip<4, true, 64>));
    const double m = MedianGBs(threads, tasks, bytes, runs,
                               on([&](int t, const uint16_t* d, size_t s, size_t n, size_t w) {
                                 MinTile(d, s, n, w, least[t].data(), at[t].data());
                               }));
    const double k = MedianGBs(threads, tasks, bytes, runs,
                               on([&](int t, const uint16_t* d, size_t s, size_t n, size_t w) {
                                 MinStrip(d, s, n, w, keys[t].data(), at16[t].data());
                               }));
    // The last task's block, checked: the three sums agree, and so do both minima and rows.
    std::vector<double> s1(tile, 0), s2(tile, 0), s3(tile, 0);
    const size_t n = std::min(kBlockRows, rows);
    SumTile(h, width, n, tile, s1.data());
    SumFused(h, width, n, tile, s2.data());
    SumStrip<8>(h, width, n, tile, s3.data());
    std::vector<float> l(tile);
    std::vector<int32_t> la(tile);
    std::vector<int16_t> kl(tile), ka(tile);
    MinTile(h, width, n, tile, l.data(), la.data());
    MinStrip(h, width, n, tile, kl.data(), ka.data());
    bool ok = s1 == s2 && s1 == s3;
    for (size_t col = 0; col < tile; ++col) {
      const uint16_t bits = kl[col] < 0 ? uint16_t(kl[col] ^ 0x7fff) : uint16_t(kl[col]);
      ok &= _cvtsh_ss(bits) == l[col] && ka[col] == la[col];
    }
    printf("%8zu %8.1f %8.1f %8.1f %8.1f %8.1f %8.1f %8.1f %8.1f %8.1f %8.1f %6s\n", width, a, b, c,
           c0, c16, m, k, v32, v64, v32a, ok ? "ok" : "DIFFER");
  }
  printf("(GB/s of float16; ratios to the whole float32 SUM: divide by %.1f)\n", w32);
  return 0;
}
