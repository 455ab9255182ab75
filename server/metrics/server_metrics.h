#pragma once

// The server's Prometheus metrics, named in Triton's style gpureduce_<area>_<what>_<unit>:
// requests by method, op, kernel and gRPC code; request, queue, copy and kernel durations as
// histograms (seconds); bytes reduced; requests in flight; admission refusals; streams ended as
// idle; and, read from the backend at scrape time (usage_collector.h), staging-buffer use and
// waits and GPU memory per device. Counting is always on (a lock and a lookup per request);
// --metrics-listen decides whether anyone can scrape it (metrics_exposer.h).

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <utility>

#include "absl/container/node_hash_map.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "kernels/reduce.h"
#include "prometheus/counter.h"
#include "prometheus/family.h"
#include "prometheus/gauge.h"
#include "prometheus/histogram.h"
#include "prometheus/registry.h"
#include "runtime/backend.h"

namespace gpureduce::server {

enum class Method { kReduce = 0, kReduceStream = 1 };
// "Reduce" or "ReduceStream", as the service names its methods.
inline const char* MethodName(Method method) {
  return method == Method::kReduce ? "Reduce" : "ReduceStream";
}
enum class Refusal { kNotReady, kServerFull, kClientFull };

// A finished call, as the metrics count it.
struct CallRecord {
  Method method = Method::kReduce;
  std::optional<gpureduce::Op> op;          // unset when the call ended before its spec
  std::optional<kernels::KernelId> kernel;  // what ran (or was asked for)
  absl::StatusCode code = absl::StatusCode::kOk;
  std::chrono::nanoseconds server{0};  // the whole call in the server
  runtime::BackendTiming timing;       // of an OK call
  uint64_t bytes = 0;                  // payload bytes of an OK call
};

class ServerMetrics {
 public:
  ServerMetrics();
  ServerMetrics(const ServerMetrics&) = delete;
  ServerMetrics& operator=(const ServerMetrics&) = delete;

  const std::shared_ptr<prometheus::Registry>& registry() const { return registry_; }

  void CallStarted(Method method);
  // Every started call ends here exactly once, refused ones included.
  void CallFinished(const CallRecord& call);
  void Refused(Refusal reason);
  void StreamIdleEnded();

 private:
  // A call's labels: op and kernel are -1 when the call ended before it had them.
  struct CallKey {
    int method, op, kernel, code;
    bool operator==(const CallKey&) const = default;
    template <typename H>
    friend H AbslHashValue(H h, const CallKey& k) {
      return H::combine(std::move(h), k.method, k.op, k.kernel, k.code);
    }
  };
  // Every series a call with those labels touches; those of OK calls only for code OK.
  struct CallSeries {
    prometheus::Counter* requests = nullptr;
    prometheus::Counter* bytes = nullptr;
    prometheus::Histogram* request = nullptr;
    prometheus::Histogram* queue = nullptr;
    prometheus::Histogram* kernel = nullptr;
    prometheus::Histogram* h2d = nullptr;
    prometheus::Histogram* d2h = nullptr;
  };
  // The series of `call`'s labels, found (with the labels built) only the first time.
  const CallSeries& Series(const CallRecord& call);

  std::shared_ptr<prometheus::Registry> registry_;
  prometheus::Family<prometheus::Counter>& requests_;
  prometheus::Family<prometheus::Histogram>& request_seconds_;
  prometheus::Family<prometheus::Histogram>& queue_seconds_;
  prometheus::Family<prometheus::Histogram>& copy_seconds_;
  prometheus::Family<prometheus::Histogram>& kernel_seconds_;
  prometheus::Family<prometheus::Counter>& bytes_;
  prometheus::Family<prometheus::Gauge>& in_flight_;
  prometheus::Family<prometheus::Counter>& refusals_;
  prometheus::Counter& idle_ended_;
  prometheus::Gauge* in_flight_by_method_[2];
  prometheus::Counter* refusals_by_reason_[3];  // by Refusal

  // prometheus-cpp finds a labelled child by building and hashing its labels under a lock; a
  // call's series are found once per label set and kept here, so a call costs one lock and one
  // hash lookup, with no strings built.
  absl::Mutex mu_;
  absl::node_hash_map<CallKey, CallSeries> series_ ABSL_GUARDED_BY(mu_);  // stable addresses
};

}  // namespace gpureduce::server
