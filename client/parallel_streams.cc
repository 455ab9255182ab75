#include "client/parallel_streams.h"

#include <algorithm>
#include <atomic>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "common/reduction/finalize.h"
#include "common/reduction/op.h"
#include "common/reduction/partial.h"
#include "wire/op_mapping.h"

namespace gpureduce::client {
namespace {

// Both timing sums and the whole: the parts ran at once, so the request took the longest.
void CombineTiming(const v1::Timing& part, v1::Timing* total) {
  total->set_queue_us(total->queue_us() + part.queue_us());
  total->set_h2d_us(total->h2d_us() + part.h2d_us());
  total->set_kernel_us(total->kernel_us() + part.kernel_us());
  total->set_d2h_us(total->d2h_us() + part.d2h_us());
  total->set_server_us(std::max(total->server_us(), part.server_us()));
  total->set_bytes(total->bytes() + part.bytes());
  total->set_chunks(total->chunks() + part.chunks());
}

}  // namespace

bool ListsServers(absl::string_view target) {
  return (absl::StartsWith(target, "ipv4:") || absl::StartsWith(target, "ipv6:")) &&
         absl::StrContains(target, ',');
}

std::vector<std::string> PartTargets(absl::string_view target, size_t parts) {
  if (!ListsServers(target)) return std::vector<std::string>(parts, std::string(target));
  const size_t colon = target.find(':');
  const std::vector<absl::string_view> servers =
      absl::StrSplit(target.substr(colon + 1), ',', absl::SkipEmpty());
  std::vector<std::string> out;
  for (size_t i = 0; i < parts; ++i) {
    std::vector<absl::string_view> rotated;
    for (size_t k = 0; k < servers.size(); ++k)
      rotated.push_back(servers[(i + k) % servers.size()]);
    out.push_back(absl::StrCat(target.substr(0, colon + 1), absl::StrJoin(rotated, ",")));
  }
  return out;
}

std::vector<std::pair<uint64_t, uint64_t>> SplitIntoParts(uint64_t n, uint32_t streams) {
  std::vector<std::pair<uint64_t, uint64_t>> parts;
  const uint64_t count = std::min<uint64_t>(std::max<uint32_t>(streams, 1), n);
  uint64_t begin = 0;
  for (uint64_t i = 0; i < count; ++i) {
    const uint64_t size = n / count + (i < n % count ? 1 : 0);
    parts.emplace_back(begin, size);
    begin += size;
  }
  return parts;
}

v1::ReduceResponse CombineParts(v1::Op op, const std::vector<uint64_t>& begins,
                                const std::vector<v1::ReduceResponse>& responses) {
  v1::ReduceResponse out = responses.front();
  const std::optional<Op> domain_op = wire::FromProto(op);
  Partial total;
  for (size_t i = 0; i < responses.size(); ++i) {
    const v1::ReduceResponse& part = responses[i];
    if (i > 0) CombineTiming(part.timing(), out.mutable_timing());
    // A part's index counts from its own start; MEAN's parts were asked as SUM, so each holds a
    // sum, as a Partial of MEAN does.
    const int64_t index = part.index() < 0 ? -1 : static_cast<int64_t>(begins[i]) + part.index();
    if (domain_op) total = Combine(*domain_op, total, Partial{part.value(), index, part.count()});
  }
  // Each device that took a part, once, in order.
  std::vector<int32_t> devices;
  for (const v1::ReduceResponse& part : responses) {
    devices.insert(devices.end(), part.device_indices().begin(), part.device_indices().end());
  }
  std::sort(devices.begin(), devices.end());
  devices.erase(std::unique(devices.begin(), devices.end()), devices.end());
  out.mutable_device_indices()->Assign(devices.begin(), devices.end());
  // The parts answered, so the op is valid and none of them was empty.
  const absl::StatusOr<ReduceResult> result =
      domain_op ? Finalize(*domain_op, total) : absl::StatusOr<ReduceResult>(ReduceResult{});
  out.set_value(result.ok() ? result->value : 0.0);
  out.set_index(result.ok() ? result->index : -1);
  out.set_count(total.count);
  out.set_streams(static_cast<uint32_t>(responses.size()));
  // The typed result (a server that sends them: the parts are float32, one classic op each): the
  // combined float64 answer rounded once to float32, an arg op's index as its int64.
  if (!out.results().empty() && result.ok()) {
    out.clear_results();
    v1::OpResult* typed = out.add_results();
    typed->set_op(op);
    const bool indexed = domain_op.has_value() && OpReturnsIndex(*domain_op);
    typed->set_dtype(indexed ? v1::INT64 : v1::FLOAT32);
    typed->set_value(indexed ? result->value
                             : static_cast<double>(static_cast<float>(result->value)));
    typed->set_int_value(indexed ? result->index : 0);
    typed->set_index(indexed ? result->index : -1);
  }
  v1::Timing* timing = out.mutable_timing();
  const double bytes = static_cast<double>(timing->bytes());
  timing->set_kernel_gbps(timing->kernel_us() > 0 ? bytes / timing->kernel_us() / 1e3 : 0);
  timing->set_server_gbps(timing->server_us() > 0 ? bytes / timing->server_us() / 1e3 : 0);
  return out;
}

absl::StatusOr<v1::ReduceResponse> ReduceInParts(const std::vector<ReducerClient*>& clients,
                                                 const v1::ReduceSpec& spec,
                                                 std::vector<StreamPart> parts,
                                                 const StreamOptions& options) {
  if (parts.empty() || clients.size() != parts.size()) {
    return absl::InvalidArgumentError("ReduceInParts needs one client per part, and a part");
  }
  uint64_t total = 0;
  for (const StreamPart& part : parts) total += part.count;
  if (spec.expected_count() != 0 && spec.expected_count() != total) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the parts hold ", total, " elements but the spec expects ", spec.expected_count()));
  }
  const size_t n = parts.size();
  // Every channel connects before any stream starts: a connection attempt that fails once (seen
  // on the H100 host with 8 fresh channels) is retried with gRPC's backoff instead of failing
  // its stream and, with it, the whole reduction.
  const absl::Duration connect_within = std::min(options.timeout, absl::Seconds(20));
  const absl::Time connect_started = absl::Now();
  const absl::Time connected_by = connect_started + connect_within;  // all channels together
  for (size_t i = 0; i < n; ++i) {
    if (!clients[i]->channel()->WaitForConnected(absl::ToChronoTime(connected_by))) {
      return absl::UnavailableError(absl::StrCat("stream ", i + 1, " of ", n,
                                                 ": could not connect within ",
                                                 absl::FormatDuration(connect_within)));
    }
  }
  // The time spent connecting counts against the caller's timeout.
  const absl::Duration stream_timeout =
      options.timeout == absl::InfiniteDuration()
          ? options.timeout
          : std::max(absl::ZeroDuration(), options.timeout - (absl::Now() - connect_started));
  // Every attempt of a part counts against the same deadline.
  const absl::Time deadline = stream_timeout == absl::InfiniteDuration()
                                  ? absl::InfiniteFuture()
                                  : absl::Now() + stream_timeout;
  std::vector<absl::StatusOr<v1::ReduceResponse>> answers(n, absl::UnknownError("not run"));
  std::atomic<bool> failed{false};
  std::atomic<uint32_t> retries{0};
  std::mutex progress_mu;
  std::vector<uint64_t> sent(n, 0);
  std::vector<std::thread> threads;
  for (size_t i = 0; i < n; ++i) {
    threads.emplace_back([&, i] {
      v1::ReduceSpec part_spec = spec;
      if (spec.op() == v1::MEAN) part_spec.set_op(v1::SUM);
      part_spec.set_expected_count(parts[i].count);
      StreamOptions part_options = options;
      part_options.timeout = stream_timeout;
      if (options.on_progress) {
        part_options.on_progress = [&, i](uint64_t bytes) {
          std::lock_guard<std::mutex> lock(progress_mu);
          sent[i] = bytes;
          uint64_t all = 0;
          for (uint64_t part_bytes : sent) all += part_bytes;
          options.on_progress(all);
        };
      }
      for (int attempt = 1;; ++attempt) {
        if (deadline != absl::InfiniteFuture()) part_options.timeout = deadline - absl::Now();
        answers[i] = clients[i]->ReduceStream(
            part_spec,
            [&, i](absl::Span<float> out) -> absl::StatusOr<size_t> {
              if (failed.load(std::memory_order_relaxed)) {
                return absl::CancelledError("another stream of this reduction failed");
              }
              return parts[i].fill(out);
            },
            part_options);
        // Only a server that went away is worth another try: any other error would recur.
        if (answers[i].ok() || !absl::IsUnavailable(answers[i].status()) || !parts[i].rewind ||
            attempt == kPartAttempts || failed.load(std::memory_order_relaxed)) {
          break;
        }
        if (absl::Status rewound = parts[i].rewind(); !rewound.ok()) {
          answers[i] = rewound;
          break;
        }
        retries.fetch_add(1, std::memory_order_relaxed);
        if (options.on_progress) part_options.on_progress(0);  // its bytes count from 0 again
        // A moment for the channel to see the server gone (a dead host, unlike a killed local
        // process, does not refuse at once), jittered so parts do not retry in step.
        absl::SleepFor(absl::Milliseconds(20 + 30 * attempt + 7 * static_cast<int>(i % 8)));
        if (absl::Now() >= deadline) break;
      }
      if (!answers[i].ok()) failed.store(true, std::memory_order_relaxed);
    });
  }
  for (std::thread& thread : threads) thread.join();

  std::vector<v1::ReduceResponse> responses;
  for (size_t i = 0; i < n; ++i) {
    if (answers[i].ok()) {
      responses.push_back(*answers[i]);
      continue;
    }
    // The root cause, not a part cancelled because of it.
    const bool cancelled_by_another =
        answers[i].status().message().find("another stream of this reduction failed") !=
        std::string::npos;
    if (cancelled_by_another) continue;
    return absl::Status(
        answers[i].status().code(),
        absl::StrCat("stream ", i + 1, " of ", n, " (values ", parts[i].begin, " to ",
                     parts[i].begin + parts[i].count - 1, "): ", answers[i].status().message()));
  }
  if (responses.size() != n) return absl::InternalError("a part was cancelled for no reason");
  std::vector<uint64_t> begins;
  for (const StreamPart& part : parts) begins.push_back(part.begin);
  v1::ReduceResponse combined = CombineParts(spec.op(), begins, responses);
  combined.set_stream_retries(retries.load());
  return combined;
}

}  // namespace gpureduce::client
