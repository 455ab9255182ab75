// gpureduce-soak: mixed traffic against a running server for a long time (scripts/soak.sh starts
// the server and runs this), every answer and every error checked, while the server's memory,
// open files, threads and GPU memory are sampled. Passes when every outcome was the expected one
// and those figures are flat from the first minute to the end.

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "client/reducer_client.h"
#include "common/flags.h"
#include "tests/soak/process_sampler.h"
#include "tests/soak/soak_traffic.h"

namespace gpureduce::testing::soak {
namespace {

using Clock = std::chrono::steady_clock;

struct SoakOptions {
  std::string target = "127.0.0.1:50051";
  int64_t server_pid = 0;
  absl::Duration duration = absl::Minutes(10);
  uint32_t workers = 6;
  absl::Duration sample_every = absl::Seconds(10);
  TrafficOptions traffic;
  bool gpu = false;
  uint64_t seed = 1;
  std::string report;
};

struct Tally {
  uint64_t expected = 0;
  uint64_t unexpected = 0;
};

class Soak {
 public:
  explicit Soak(const SoakOptions& options) : options_(options) {}

  // Runs the traffic and the sampler; returns the process exit code.
  int Run();

 private:
  void Work(uint32_t worker);
  void Record(const Outcome& outcome);
  std::string Verdict(bool* flat) const;
  std::string Report(bool passed, const std::string& verdict) const;

  const SoakOptions& options_;
  Clock::time_point start_;
  std::atomic<bool> stop_{false};
  mutable std::mutex mu_;
  std::map<std::string, Tally> tallies_;  // by scenario, under mu_
  std::vector<std::string> problems_;     // the first few unexpected outcomes, under mu_
  std::vector<ProcessSample> samples_;    // under mu_
};

void Soak::Work(uint32_t worker) {
  std::unique_ptr<client::ReducerClient> reducer =
      client::ReducerClient::Connect(options_.target, /*own_connection=*/true);
  Traffic traffic(*reducer, options_.seed * 1000003 + worker, options_.traffic);
  while (!stop_.load(std::memory_order_relaxed)) Record(traffic.Next());
}

void Soak::Record(const Outcome& outcome) {
  std::lock_guard<std::mutex> lock(mu_);
  Tally& tally = tallies_[outcome.scenario];
  if (outcome.problem.empty()) {
    ++tally.expected;
    return;
  }
  ++tally.unexpected;
  if (problems_.size() < 20) {
    problems_.push_back(
        absl::StrCat(outcome.scenario, " (", outcome.detail, "): ", outcome.problem));
  }
}

int Soak::Run() {
  start_ = Clock::now();
  std::vector<std::thread> workers;
  for (uint32_t i = 0; i < options_.workers; ++i) workers.emplace_back([this, i] { Work(i); });
  const Clock::time_point end = start_ + absl::ToChronoNanoseconds(options_.duration);
  Clock::time_point next_sample = start_;
  bool server_gone = false;
  while (Clock::now() < end && !server_gone) {
    std::this_thread::sleep_until(std::min(next_sample, end));
    next_sample += absl::ToChronoNanoseconds(options_.sample_every);
    absl::StatusOr<ProcessSample> sample = SampleProcess(pid_t(options_.server_pid), options_.gpu);
    if (!sample.ok()) {
      server_gone = true;
      break;
    }
    sample->seconds = std::chrono::duration<double>(Clock::now() - start_).count();
    std::lock_guard<std::mutex> lock(mu_);
    samples_.push_back(*sample);
    uint64_t done = 0, bad = 0;
    for (const auto& [name, tally] : tallies_) {
      done += tally.expected + tally.unexpected;
      bad += tally.unexpected;
    }
    std::fprintf(stderr,
                 "%7.0f s  %8llu calls  %llu unexpected  rss %.1f MiB  fds %llu  threads %llu%s\n",
                 sample->seconds, (unsigned long long)done, (unsigned long long)bad,
                 sample->rss_kib / 1024.0, (unsigned long long)sample->open_files,
                 (unsigned long long)sample->threads,
                 sample->gpu_mib ? absl::StrCat("  gpu ", *sample->gpu_mib, " MiB").c_str() : "");
  }
  stop_ = true;
  for (std::thread& worker : workers) worker.join();

  std::lock_guard<std::mutex> lock(mu_);
  bool flat = false;
  const std::string verdict = Verdict(&flat);
  bool all_expected = !server_gone;
  for (const auto& [name, tally] : tallies_) all_expected &= tally.unexpected == 0;
  const bool passed = all_expected && flat;
  const std::string report = Report(passed, server_gone ? "the server went away\n" : verdict);
  std::fputs(report.c_str(), stdout);
  if (!options_.report.empty()) std::ofstream(options_.report) << report;
  return passed ? 0 : 1;
}

// Flat: from the first sample after the warm-up to the last.
std::string Soak::Verdict(bool* flat) const {
  *flat = false;
  if (samples_.size() < 2) return "too few samples to judge\n";
  // Minute 1, or a third of a shorter soak: the start is warm-up (buffers, thread pools).
  const double warm = std::min(60.0, samples_.back().seconds / 3);
  auto first = std::find_if(samples_.begin(), samples_.end(),
                            [warm](const ProcessSample& s) { return s.seconds >= warm; });
  if (first == samples_.end() || first == samples_.end() - 1) first = samples_.begin();
  const ProcessSample& a = *first;
  const ProcessSample& b = samples_.back();
  const double rss_growth = (double(b.rss_kib) - double(a.rss_kib)) / 1024.0;
  const double rss_allowed = std::max(16.0, 0.1 * a.rss_kib / 1024.0);
  const bool rss_ok = rss_growth <= rss_allowed;
  const bool files_ok = b.open_files <= a.open_files + 8;
  // gRPC's executor grows to its cap (two threads per core) and stays; every other thread must
  // stay flat.
  const uint64_t executor_cap = GrpcExecutorCap(pid_t(options_.server_pid));
  const uint64_t others_a = a.threads - std::min(a.threads, a.grpc_executor_threads);
  const uint64_t others_b = b.threads - std::min(b.threads, b.grpc_executor_threads);
  const bool threads_ok = others_b <= others_a + 4 && b.grpc_executor_threads <= executor_cap;
  const bool gpu_ok = !a.gpu_mib || !b.gpu_mib || *b.gpu_mib <= *a.gpu_mib + 2;
  *flat = rss_ok && files_ok && threads_ok && gpu_ok;
  std::string out = absl::StrFormat(
      "from %.0f s to %.0f s: rss %.1f -> %.1f MiB (%+.1f, allowed %.1f) %s; open files %d -> "
      "%d %s; threads other than gRPC's executor %d -> %d, gRPC's executor %d -> %d (cap %d) %s",
      a.seconds, b.seconds, a.rss_kib / 1024.0, b.rss_kib / 1024.0, rss_growth, rss_allowed,
      rss_ok ? "flat" : "GROWS", a.open_files, b.open_files, files_ok ? "flat" : "GROW", others_a,
      others_b, a.grpc_executor_threads, b.grpc_executor_threads, executor_cap,
      threads_ok ? "bounded" : "GROW");
  if (a.gpu_mib && b.gpu_mib) {
    absl::StrAppendFormat(&out, "; GPU memory %d -> %d MiB %s", *a.gpu_mib, *b.gpu_mib,
                          gpu_ok ? "flat" : "GROWS");
  }
  return out + "\n";
}

std::string Soak::Report(bool passed, const std::string& verdict) const {
  const double seconds = samples_.empty() ? 0 : samples_.back().seconds;
  std::string out = absl::StrFormat(
      "# gpureduce-soak against %s: %s\n\n%.0f s, %d workers, server pid %d\n\n"
      "| scenario | expected outcome | unexpected |\n|---|---:|---:|\n",
      options_.target, passed ? "PASSED" : "FAILED", seconds, options_.workers,
      options_.server_pid);
  uint64_t total = 0;
  for (const auto& [name, tally] : tallies_) {
    absl::StrAppendFormat(&out, "| %s | %d | %d |\n", name, tally.expected, tally.unexpected);
    total += tally.expected + tally.unexpected;
  }
  absl::StrAppendFormat(&out, "\n%d calls, %.1f per second\n\n", total,
                        seconds > 0 ? total / seconds : 0.0);
  absl::StrAppend(&out,
                  "| s | rss MiB | open files | threads | of them gRPC's executor | GPU MiB |\n"
                  "|---:|---:|---:|---:|---:|---:|\n");
  for (const ProcessSample& s : samples_) {
    absl::StrAppendFormat(&out, "| %.0f | %.1f | %d | %d | %d | %s |\n", s.seconds,
                          s.rss_kib / 1024.0, s.open_files, s.threads, s.grpc_executor_threads,
                          s.gpu_mib ? absl::StrCat(*s.gpu_mib) : std::string("-"));
  }
  absl::StrAppend(&out, "\n", verdict);
  for (const std::string& problem : problems_) absl::StrAppend(&out, "unexpected: ", problem, "\n");
  return out;
}

}  // namespace
}  // namespace gpureduce::testing::soak

int main(int argc, char** argv) {
  gpureduce::testing::soak::SoakOptions options;
  gpureduce::FlagSet flags(
      "gpureduce-soak", "gpureduce-soak --server-pid=PID [flags]",
      "Sends mixed traffic to a running gpureduce server (every op, unary and streams at awkward "
      "sizes and chunkings, bad requests, cancellations, deadlines, stalled streams) and checks "
      "every outcome, while sampling the server's memory, open files, threads and GPU memory. "
      "Exit 0 when every outcome was the expected one and the samples are flat from minute 1 "
      "to the end. scripts/soak.sh starts a server and runs this.");
  flags.AddString("target", &options.target, "the server", "HOST:PORT");
  flags.AddInt64("server-pid", &options.server_pid, "the server's process, to sample", "PID");
  flags.AddDuration("duration", &options.duration, "how long to soak");
  flags.AddUint32("workers", &options.workers, "client threads, each on its own connection");
  flags.AddDuration("sample-every", &options.sample_every, "how often to sample the server");
  flags.AddDuration("idle-timeout", &options.traffic.idle_timeout,
                    "the server's --stream-idle-timeout; stalled streams join the mix when set");
  flags.AddByteSize("max-request-bytes", &options.traffic.max_request_bytes,
                    "the server's --max-request-bytes; requests over it join the mix when set");
  flags.AddDouble("tolerance", &options.traffic.tolerance,
                  "relative error allowed in sums, products and means");
  flags.AddBool("gpu", &options.gpu, "sample the server's GPU memory with nvidia-smi");
  flags.AddUint64("seed", &options.seed, "seed of the traffic");
  flags.AddString("report", &options.report, "also write the Markdown report here", "FILE");
  if (absl::Status parsed = flags.Parse(argc, argv); !parsed.ok()) {
    std::fprintf(stderr, "gpureduce-soak: %s\n", std::string(parsed.message()).c_str());
    return 2;
  }
  if (flags.help_requested()) {
    std::fputs(flags.Help().c_str(), stdout);
    return 0;
  }
  if (options.server_pid <= 0 || options.workers == 0) {
    std::fprintf(stderr, "gpureduce-soak: --server-pid and at least one worker are required\n");
    return 2;
  }
  gpureduce::testing::soak::Soak soak(options);
  return soak.Run();
}
