// gpureduce-cpu-bench: the `cpu` kernel measured directly (no server, no GPU): every dtype times
// SUM, MIN, VAR and a five-op request (sum, min, max, mean, std in one read) through the real
// parallel entry (kernels::cpu::Reduce on a pool of --threads), median of --runs, as bytes/s and
// as a fraction of float32 SUM's (issue 22's goal: SUM >= 90%, VAR and five ops >= 85%).
// Each row's digest is a hash of the result's bits, so two builds' answers can be compared; with
// --check every case is also reduced with each copy of the passes (baseline, AVX2, AVX-512) that
// the CPU runs, and all must give the same bits.

#include <algorithm>
#include <atomic>
#include <bit>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <future>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "common/flags.h"
#include "common/reduction/answer_encoding.h"
#include "common/reduction/op_name.h"
#include "common/reduction/op_result.h"
#include "common/thread_pool.h"
#include "kernels/cpu/block_reduce.h"
#include "kernels/reduce.h"

namespace gpureduce::bench {
namespace {

// Segments per kernels::cpu::ReduceSegmentsAsync call, as the service's reducer hands them over
// to the CPU's kernels (CpuBlockKernels::max_sunk_segments).
constexpr uint64_t kSegmentBatch = uint64_t{1} << 22;

struct Case {
  const char* name;
  std::vector<Op> ops;
};

// "sumsq" and "prod" are opt-in: every op of issue 17 can be timed, the default stays the four
// the tables cite.
const Case kCases[] = {
    {"sum", {Op::kSum}},          {"min", {Op::kMin}},
    {"var", {Op::kVar}},          {"five", {Op::kSum, Op::kMin, Op::kMax, Op::kMean, Op::kStd}},
    {"sumsq", {Op::kSumSquares}}, {"prod", {Op::kProd}}};

uint64_t Next(uint64_t& state) {  // xorshift64*: fast, and the same data every run
  state ^= state >> 12;
  state ^= state << 25;
  state ^= state >> 27;
  return state * 0x2545f4914f6cdd1dull;
}

// Finite values of each dtype, roughly uniform in sign and spread over a few octaves (float16
// exponents 10..20: values 2^-5..2^5), so the extremes settle early as on real data. With
// `specials`, about one float in 100,000 is NaN (the passes' slow paths; an infinity would make
// every sum infinite or NaN and the digests blind).
void Fill(DType dtype, bool specials, std::vector<std::byte>& bytes) {
  uint64_t state = 0x9e3779b97f4a7c15ull;
  const size_t size = bytes.size() / DTypeSize(dtype);
  std::byte* out = bytes.data();
  for (size_t i = 0; i < size; ++i) {
    const uint64_t r = Next(state);
    float f = static_cast<float>(static_cast<int64_t>(r) >> 32) * 0x1p-26f;  // +-32
    const uint64_t pick = specials && !IsInteger(dtype) ? r % 100'000 : 100'000;
    if (pick == 0) f = NAN;
    switch (dtype) {
      case DType::kFloat16: {
        uint16_t h = static_cast<uint16_t>(((r >> 16) & 0x83ffu) | ((10 + r % 11) << 10));
        if (pick == 0) h = 0x7e00;
        std::memcpy(out + 2 * i, &h, 2);
        break;
      }
      case DType::kBFloat16: {
        uint32_t bits;
        std::memcpy(&bits, &f, 4);
        const uint16_t h = static_cast<uint16_t>(bits >> 16);
        std::memcpy(out + 2 * i, &h, 2);
        break;
      }
      case DType::kFloat32:
        std::memcpy(out + 4 * i, &f, 4);
        break;
      case DType::kFloat64: {
        const double d = f + static_cast<double>(r & 0xffff) * 0x1p-40;
        std::memcpy(out + 8 * i, &d, 8);
        break;
      }
      case DType::kInt32: {
        const int32_t v = static_cast<int32_t>(r >> 40);
        std::memcpy(out + 4 * i, &v, 4);
        break;
      }
      case DType::kInt64: {
        const int64_t v = static_cast<int64_t>(r >> 8);
        std::memcpy(out + 8 * i, &v, 8);
        break;
      }
    }
  }
}

uint64_t Digest(const Stats& s) {
  uint64_t h = 1469598103934665603ull;
  const auto mix = [&h](const void* p, size_t n) {
    for (size_t i = 0; i < n; ++i)
      h = (h ^ static_cast<const unsigned char*>(p)[i]) * 1099511628211ull;
  };
  const double doubles[] = {s.sum, s.sum_lo, s.sum_squares, s.mean, s.m2, s.min, s.max};
  const int64_t ints[] = {static_cast<int64_t>(s.count),
                          static_cast<int64_t>(s.nan_count),
                          s.first_nan,
                          s.int_sum,
                          s.int_sum_wraps,
                          s.min_index,
                          s.max_index,
                          s.int_min,
                          s.int_max};
  mix(doubles, sizeof(doubles));
  mix(ints, sizeof(ints));
  return h;
}

// `passes` block by block, merged in order: what Reduce gives with that copy of the passes.
Stats ReduceWith(const kernels::cpu::Passes& passes, const kernels::cpu::StatsRequest& request,
                 std::span<const std::byte> bytes) {
  const size_t element = DTypeSize(request.dtype);
  Stats total = kernels::cpu::EmptyStats(request.dtype);
  const size_t task = kernels::cpu::TaskElements(request.dtype) * element;
  for (size_t begin = 0; begin < bytes.size(); begin += task) {
    const size_t size = std::min(task, bytes.size() - begin);
    total = MergeStats(total, kernels::cpu::ReduceBlockWith(
                                  passes, request, bytes.subspan(begin, size), begin / element));
  }
  return total;
}

}  // namespace
}  // namespace gpureduce::bench

int main(int argc, char** argv) {
  using namespace gpureduce;
  using namespace gpureduce::bench;
  uint64_t bytes_size = uint64_t{256} << 20;
  uint32_t threads = 1, runs = 7;
  bool check = false, specials = false;
  uint64_t segment = 0;
  uint64_t columns = 0;
  uint64_t rows_of = 0;
  std::string dtypes_text = "float32,float16,bfloat16,float64,int32,int64";
  std::string cases_text = "sum,min,var,five";
  FlagSet flags(
      "gpureduce-cpu-bench", "gpureduce-cpu-bench [flags]",
      "Times the cpu kernel (kernels::cpu::Reduce on a pool of --threads) per dtype "
      "for SUM, MIN, VAR and five ops in one read (sum,min,max,mean,std): median of "
      "--runs after one warm-up, as GB/s and as a fraction of float32 SUM. Needs no GPU.");
  flags.AddByteSize("bytes", &bytes_size, "payload bytes per dtype");
  flags.AddUint32(
      "threads", &threads,
      "pool threads (the array is cut into 64Ki-element tasks, 128Ki of 16-bit floats)");
  flags.AddUint32("runs", &runs, "timed runs per case");
  flags.AddString("dtypes", &dtypes_text, "comma-separated dtypes", "LIST");
  flags.AddString("ops", &cases_text,
                  "comma-separated cases: sum, min, var, five (sum,min,max,mean,std in one "
                  "read), sumsq (SUM_SQUARES), prod",
                  "LIST");
  flags.AddBool("check", &check, "also reduce with every copy of the passes; the bits must match");
  flags.AddBool("specials", &specials, "sprinkle NaN into the float inputs");
  flags.AddUint64("segment", &segment,
                  "reduce segments of this many elements, each to its own answer "
                  "(kernels::cpu::ReduceSegmentsAsync in batches of 4Mi, each segment's ops "
                  "finalized by the task that reduced it, as the service does; the digest folds "
                  "them); 0: the whole array");
  flags.AddUint64("columns", &columns,
                  "reduce the array as a row-major table of this many columns down each column "
                  "(kernels::cpu::ReduceColumns, NumPy's axis=0; the digest folds their answers)");
  flags.AddUint64(
      "rows", &rows_of,
      "reduce the array as a row-major table of rows this long, each to its own "
      "answer (kernels::cpu::ReduceRowsAsync, NumPy's axis=-1; the digest folds theirs)");
  if (absl::Status parsed = flags.Parse(argc, argv); !parsed.ok()) {
    std::fprintf(stderr, "gpureduce-cpu-bench: %s\n", std::string(parsed.message()).c_str());
    return 2;
  }
  if (flags.help_requested()) {
    std::fputs(flags.Help().c_str(), stdout);
    return 0;
  }
  std::vector<DType> dtypes;
  for (absl::string_view name : absl::StrSplit(dtypes_text, ',')) {
    const std::optional<DType> dtype = ParseDType(name);
    if (!dtype) {
      std::fprintf(stderr, "gpureduce-cpu-bench: unknown dtype '%s'\n", std::string(name).c_str());
      return 2;
    }
    dtypes.push_back(*dtype);
  }
  for (absl::string_view name : absl::StrSplit(cases_text, ',')) {
    if (std::none_of(std::begin(kCases), std::end(kCases),
                     [&](const Case& c) { return name == c.name; })) {
      std::fprintf(stderr,
                   "gpureduce-cpu-bench: unknown op case '%s' (sum, min, var, five, "
                   "sumsq, prod)\n",
                   std::string(name).c_str());
      return 2;
    }
  }
  if (threads == 0 || runs == 0) {
    std::fprintf(stderr, "gpureduce-cpu-bench: --threads and --runs must be at least 1\n");
    return 2;
  }

  ThreadPool pool(threads);
  std::vector<std::byte> bytes(bytes_size / 8 * 8);
  double float32_sum = 0;  // bytes/s; the first dtype's if float32 is not measured
  int failures = 0;
  std::printf("%u thread(s), %.0f MiB per dtype, median of %u runs\n", threads,
              static_cast<double>(bytes.size()) / (1 << 20), runs);
  std::printf("%-9s %-5s %8s %7s  %s\n", "dtype", "op", "GB/s", "of f32", "digest");
  if ((segment > 0 || columns > 0 || rows_of > 0) && check) {
    std::fprintf(stderr, "gpureduce-cpu-bench: --check compares whole-array runs only\n");
    return 2;
  }
  std::vector<uint64_t> bounds;
  for (DType dtype : dtypes) {
    Fill(dtype, specials, bytes);
    const uint64_t count = bytes.size() / DTypeSize(dtype);
    bounds.clear();
    for (uint64_t at = 0; segment > 0; at += segment) {
      bounds.push_back(std::min(at, count));
      if (at >= count) break;
    }
    for (const Case& c : kCases) {
      if (!absl::StrContains(absl::StrCat(",", cases_text, ","), absl::StrCat(",", c.name, ","))) {
        continue;
      }
      const kernels::cpu::StatsRequest request{dtype, NeedsOf(c.ops)};
      std::vector<double> seconds;
      Stats stats;
      // --rows and --segment: each op's result array, as the service writes it (EncodeAnswers),
      // and its answers that left int64 counted (ArrayResults).
      std::vector<std::vector<std::byte>> answers(c.ops.size());
      std::vector<std::atomic<uint64_t>> overflows(c.ops.size());
      const auto sink_into = [&answers, &overflows, &c, dtype](uint64_t base) {
        return [&answers, &overflows, &c, dtype, base](uint64_t first,
                                                       std::span<const Stats> stats) {
          for (size_t k = 0; k < c.ops.size(); ++k) {
            const size_t size = DTypeSize(ResultDType(c.ops[k], dtype));
            overflows[k] +=
                EncodeAnswers(c.ops[k], dtype, 0, stats, answers[k].data() + (base + first) * size)
                    .overflows;
          }
        };
      };
      // The short runs pass writes what answers it can itself, and counts those that left int64,
      // as the service lets it (ArrayResults::Direct).
      const auto direct_into = [&answers, &overflows, &c, dtype](uint64_t base) {
        kernels::cpu::DirectAnswers direct;
        for (size_t k = 0; k < c.ops.size(); ++k) {
          const size_t size = DTypeSize(ResultDType(c.ops[k], dtype));
          direct.Add(c.ops[k], answers[k].data() + base * size, &overflows[k]);
        }
        return direct;
      };
      const auto size_answers = [&answers, &c, dtype](uint64_t outputs) {
        for (size_t k = 0; k < c.ops.size(); ++k) {
          answers[k].resize(outputs * DTypeSize(ResultDType(c.ops[k], dtype)));
        }
      };
      for (uint32_t run = 0; run <= runs; ++run) {
        for (std::atomic<uint64_t>& count : overflows) count = 0;
        const auto start = std::chrono::steady_clock::now();
        std::vector<Stats> segments;
        if (segment > 0) {
          // As the service answers segments: batches of ShapedReducer's 4Mi over the
          // request's own bounds, each segment's ops answered by the task that reduced it (the
          // CPU's SegmentsTo).
          const size_t size = DTypeSize(dtype);
          const uint64_t total = bounds.size() - 1;
          size_answers(total);
          for (uint64_t first = 0; first < total; first += kSegmentBatch) {
            const uint64_t last = std::min(total, first + kSegmentBatch);
            std::promise<void> finished;
            kernels::cpu::ReduceSegmentsAsync(
                pool, request,
                std::span(bytes).subspan(bounds[first] * size,
                                         (bounds[last] - bounds[first]) * size),
                std::span(bounds).subspan(first, last - first + 1), bounds[first], sink_into(first),
                [&finished](std::vector<Stats>, kernels::cpu::ReduceTiming) {
                  finished.set_value();
                },
                direct_into(first));
            finished.get_future().get();
          }
        } else if (rows_of > 0) {
          // As the service answers rows: each row's ops answered by the task that reduced it,
          // into result arrays allocated once.
          size_answers(count / rows_of);
          std::promise<void> finished;
          kernels::cpu::ReduceRowsAsync(
              pool, request, std::span(bytes).first(count / rows_of * rows_of * DTypeSize(dtype)),
              rows_of, sink_into(0),
              [&finished](kernels::cpu::ReduceTiming) { finished.set_value(); }, direct_into(0));
          finished.get_future().get();
        } else if (columns > 0) {
          segments.assign(columns, kernels::cpu::EmptyStats(dtype));
          kernels::cpu::ReduceColumns(
              pool, request, std::span(bytes).first(count / columns * columns * DTypeSize(dtype)),
              count / columns, segments);
        } else {
          stats = kernels::cpu::Reduce(pool, request, bytes);
        }
        const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
        if (columns > 0) {  // the columns' answers, as the service encodes them (not timed)
          size_answers(segments.size());
          for (size_t k = 0; k < c.ops.size(); ++k) {
            overflows[k] +=
                EncodeAnswers(c.ops[k], dtype, 0, segments, answers[k].data()).overflows;
          }
          segments.clear();
        }
        if (rows_of > 0 || segment > 0 || columns > 0) {  // the digest folds every answer's bytes
          stats = Stats{};
          stats.count = answers[0].size();
          uint64_t folded = 1469598103934665603ull;
          for (const std::vector<std::byte>& array : answers) {
            for (std::byte b : array) folded = (folded ^ uint64_t(b)) * 1099511628211ull;
          }
          for (const std::atomic<uint64_t>& count : overflows) {
            folded = (folded ^ count.load()) * 1099511628211ull;
          }
          stats.first_nan = static_cast<int64_t>(folded);
        }
        if (!segments.empty()) {  // the digest below folds every segment's
          stats = segments.back();
          stats.count = segments.size();
          for (const Stats& one : segments) stats.first_nan ^= static_cast<int64_t>(Digest(one));
        }
        if (run > 0) seconds.push_back(took.count());
      }
      std::nth_element(seconds.begin(), seconds.begin() + seconds.size() / 2, seconds.end());
      const double rate = static_cast<double>(bytes.size()) / seconds[seconds.size() / 2];
      if (float32_sum == 0) float32_sum = rate;
      const uint64_t digest = Digest(stats);
      bool same = true;  // every copy of the passes this CPU runs, the baseline first
      for (const kernels::cpu::Passes* passes :
           check ? kernels::cpu::RunnablePasses() : std::vector<const kernels::cpu::Passes*>{}) {
        same = same && Digest(ReduceWith(*passes, request, bytes)) == digest;
      }
      failures += same ? 0 : 1;
      std::printf("%-9s %-5s %8.2f %6.0f%%  %016llx%s\n", std::string(DTypeName(dtype)).c_str(),
                  c.name, rate / 1e9, 100 * rate / float32_sum,
                  static_cast<unsigned long long>(digest), same ? "" : "  BASELINE DIFFERS");
    }
  }
  return failures == 0 ? 0 : 1;
}
