// A probe, not the product: where the columns pass's time goes between the strip kernel alone
// (probe.cc's) and kernels::cpu::ReduceColumns, float16 columns on N threads, in one process:
//   strip:    probe.cc's strip kernel, tasks of a 2,048-row block of a tile;
//   call:     the same tasks, each one add_columns call of the chosen copy (AVX-512: strips);
//   calls:    each two calls, 512 rows then 1,536, as columns_reduce.cc's ReduceTile makes them;
//   loops:    one call of the AVX2 copy (a row at a time);
//   reduce:   kernels::cpu::ReduceColumns on a pool of N threads, the whole table.
// Build (in the repository, after the package's build): see run.sh.
#include <immintrin.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <thread>
#include <vector>

#include "common/reduction/stats.h"
#include "common/thread_pool.h"
#include "kernels/cpu/block_reduce.h"
#include "kernels/reduce.h"

namespace cpu = gpureduce::kernels::cpu;
using gpureduce::DType;
using gpureduce::Op;
using gpureduce::Stats;

namespace {

constexpr size_t kBlockRows = 2048;

void SumStrip(const uint16_t* data, size_t stride, size_t rows, size_t width, double* sum) {
  for (size_t c0 = 0; c0 < width; c0 += 128) {
    __m512d acc[16];
#pragma GCC unroll 16
    for (int k = 0; k < 16; ++k) acc[k] = _mm512_setzero_pd();
    for (size_t r = 0; r < rows; ++r) {
      const uint16_t* row = data + c0 + r * stride;
      const char* ahead = reinterpret_cast<const char*>(row + 8 * stride);
#pragma GCC unroll 4
      for (int b = 0; b < 256; b += 64) __builtin_prefetch(ahead + b, 0, 3);
#pragma GCC unroll 16
      for (int k = 0; k < 16; ++k) {
        const __m256 f = _mm256_cvtph_ps(_mm_loadu_si128((const __m128i*)(row + 8 * k)));
        acc[k] = _mm512_add_pd(acc[k], _mm512_maskz_cvtps_pd(0xff, f));
      }
    }
#pragma GCC unroll 16
    for (int k = 0; k < 16; ++k) _mm512_storeu_pd(sum + c0 + 8 * k, acc[k]);
  }
}

template <typename F>
double Seconds(F f) {
  const auto t0 = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

template <typename F>
double MedianGBs(size_t bytes, int runs, F f) {
  f();
  std::vector<double> s;
  for (int i = 0; i < runs; ++i) s.push_back(Seconds(f));
  std::sort(s.begin(), s.end());
  return bytes / s[s.size() / 2] / 1e9;
}

// Tasks shared from a counter among `threads` threads started for the run.
template <typename TaskF>
void OnThreads(int threads, size_t tasks, TaskF task) {
  std::atomic<size_t> next{0};
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      for (size_t i; (i = next.fetch_add(1)) < tasks;) task(t, i);
    });
  }
  for (auto& p : pool) p.join();
}

}  // namespace

int main(int argc, char** argv) {
  const int threads = argc > 1 ? atoi(argv[1]) : 16;
  const size_t bytes = size_t{128} << 20, n = bytes / 2;
  const int runs = 9;
  auto* h = static_cast<uint16_t*>(aligned_alloc(4096, bytes));
  std::mt19937 gen(7);
  std::uniform_real_distribution<float> u(-100.f, 100.f);
  for (size_t i = 0; i < n; ++i) h[i] = _cvtss_sh(u(gen), 0);
  const auto* data = reinterpret_cast<const std::byte*>(h);
  gpureduce::ThreadPool pool(threads);
  const std::vector<const cpu::Passes*> copies = cpu::RunnablePasses();
  const cpu::Passes& chosen = cpu::ChosenPasses();
  const cpu::Passes& avx2 = *copies[copies.size() - 2];
  printf("threads %d, %zu copies; GB/s of float16, median of %d\n", threads, copies.size(), runs);
  printf("%8s %5s %8s %8s %8s %8s %8s\n", "columns", "op", "strip", "call", "calls", "loops",
         "reduce");
  for (const size_t width : {size_t{1024}, size_t{4096}}) {
    const size_t rows = n / width, tile = width * 2 >= 4096 ? 256 : width;
    const size_t tiles = width / tile, blocks = rows / kBlockRows, tasks = tiles * blocks;
    for (const Op op : {Op::kSum, Op::kMin, Op::kVar}) {
      const Op ops[] = {op};
      const cpu::StatsRequest request{DType::kFloat16, gpureduce::NeedsOf(ops)};
      std::vector<std::vector<Stats>> out(threads, std::vector<Stats>(tile));
      std::vector<std::vector<double>> sums(threads, std::vector<double>(tile));
      const auto task_run = [&](auto body) {
        return [&, body] {
          OnThreads(threads, tasks, [&](int t, size_t i) {
            const size_t c0 = (i % tiles) * tile, r0 = (i / tiles) * kBlockRows;
            std::fill(out[t].begin(), out[t].end(), cpu::EmptyStats(DType::kFloat16));
            body(t, data + (r0 * width + c0) * 2, r0);
          });
        };
      };
      const double strip = MedianGBs(bytes, runs, task_run([&](int t, const std::byte* d, size_t) {
                                       SumStrip(reinterpret_cast<const uint16_t*>(d), width,
                                                kBlockRows, tile, sums[t].data());
                                     }));
      const auto one_call = [&](const cpu::Passes& p) {
        return task_run([&](int t, const std::byte* d, size_t r0) {
          p.add_columns(DType::kFloat16, request.needs, d, width, kBlockRows, tile, r0,
                        out[t].data());
        });
      };
      const double call = MedianGBs(bytes, runs, one_call(chosen));
      const double calls =
          MedianGBs(bytes, runs, task_run([&](int t, const std::byte* d, size_t r0) {
                      chosen.add_columns(DType::kFloat16, request.needs, d, width, 512, tile, r0,
                                         out[t].data());
                      chosen.add_columns(DType::kFloat16, request.needs, d + 512 * width * 2, width,
                                         1536, tile, r0 + 512, out[t].data());
                    }));
      const double loops = MedianGBs(bytes, runs, one_call(avx2));
      std::vector<Stats> columns(width);
      const double reduce = MedianGBs(bytes, runs, [&] {
        std::fill(columns.begin(), columns.end(), cpu::EmptyStats(DType::kFloat16));
        cpu::ReduceColumns(pool, request, std::span(data, bytes), rows, columns);
      });
      printf("%8zu %5s %8.1f %8.1f %8.1f %8.1f %8.1f\n", width,
             op == Op::kSum   ? "sum"
             : op == Op::kMin ? "min"
                              : "var",
             strip, call, calls, loops, reduce);
    }
  }
  return 0;
}
