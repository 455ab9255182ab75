#include "server/metrics/server_metrics.h"

#include <string>
#include <utility>

#include "absl/strings/str_cat.h"

namespace gpureduce::server {
namespace {

// 10 us to 100 s: a 1024-float call on the CPU to a stream of many GiB.
const prometheus::Histogram::BucketBoundaries& Buckets() {
  static const prometheus::Histogram::BucketBoundaries buckets = {
      1e-5, 2.5e-5, 5e-5, 1e-4, 2.5e-4, 5e-4, 1e-3, 2.5e-3, 5e-3, 1e-2, 2.5e-2,
      5e-2, 0.1,    0.25, 0.5,  1,      2.5,  5,    10,     30,   100};
  return buckets;
}

std::string OpLabel(const std::optional<gpureduce::Op>& op) {
  return op.has_value() ? std::string(gpureduce::OpName(*op)) : "none";
}

std::string KernelLabel(const std::optional<kernels::KernelId>& kernel) {
  return kernel.has_value() ? std::string(kernels::GetKernel(*kernel).name) : "none";
}

double Seconds(std::chrono::nanoseconds duration) { return duration.count() / 1e9; }

}  // namespace

ServerMetrics::ServerMetrics()
    : registry_(std::make_shared<prometheus::Registry>()),
      requests_(prometheus::BuildCounter()
                    .Name("gpureduce_requests_total")
                    .Help("Reduce calls by method, op, kernel and gRPC status code")
                    .Register(*registry_)),
      request_seconds_(prometheus::BuildHistogram()
                           .Name("gpureduce_request_duration_seconds")
                           .Help("Whole calls in the server, by method and kernel (OK calls)")
                           .Register(*registry_)),
      queue_seconds_(prometheus::BuildHistogram()
                         .Name("gpureduce_request_queue_duration_seconds")
                         .Help("Time calls waited for backend resources, by kernel")
                         .Register(*registry_)),
      copy_seconds_(prometheus::BuildHistogram()
                        .Name("gpureduce_request_copy_duration_seconds")
                        .Help("Host-to-device and device-to-host copies, by direction and kernel")
                        .Register(*registry_)),
      kernel_seconds_(prometheus::BuildHistogram()
                          .Name("gpureduce_request_kernel_duration_seconds")
                          .Help("Compute time of calls (GPU kernels or CPU tasks), by kernel")
                          .Register(*registry_)),
      bytes_(prometheus::BuildCounter()
                 .Name("gpureduce_reduced_bytes_total")
                 .Help("Payload bytes of OK calls, by method and kernel")
                 .Register(*registry_)),
      in_flight_(prometheus::BuildGauge()
                     .Name("gpureduce_requests_in_flight")
                     .Help("Calls in progress (ReduceStream: open streams), by method")
                     .Register(*registry_)),
      refusals_(prometheus::BuildCounter()
                    .Name("gpureduce_admission_refusals_total")
                    .Help("Calls refused before any work: not_ready (self-check pending), "
                          "server_full, client_full")
                    .Register(*registry_)),
      idle_ended_(prometheus::BuildCounter()
                      .Name("gpureduce_streams_idle_ended_total")
                      .Help("Streams ended after --stream-idle-timeout without a message")
                      .Register(*registry_)
                      .Add({})),
      in_flight_by_method_{&in_flight_.Add({{"method", "Reduce"}}),
                           &in_flight_.Add({{"method", "ReduceStream"}})},
      refusals_by_reason_{&refusals_.Add({{"reason", "not_ready"}}),
                          &refusals_.Add({{"reason", "server_full"}}),
                          &refusals_.Add({{"reason", "client_full"}})} {}

void ServerMetrics::CallStarted(Method method) { in_flight_by_method_[int(method)]->Increment(); }

const ServerMetrics::CallSeries& ServerMetrics::Series(const CallRecord& call) {
  const CallKey key{int(call.method), call.op.has_value() ? int(*call.op) : -1,
                    call.kernel.has_value() ? int(*call.kernel) : -1, int(call.code)};
  absl::MutexLock lock(&mu_);
  auto [it, inserted] = series_.try_emplace(key);
  CallSeries& series = it->second;
  if (!inserted) return series;
  const std::string method = MethodName(call.method);
  const std::string kernel = KernelLabel(call.kernel);
  series.requests = &requests_.Add({{"method", method},
                                    {"op", OpLabel(call.op)},
                                    {"kernel", kernel},
                                    {"code", absl::StatusCodeToString(call.code)}});
  // Only OK calls are timed and counted in bytes: other codes add no empty series.
  if (call.code == absl::StatusCode::kOk) {
    series.bytes = &bytes_.Add({{"method", method}, {"kernel", kernel}});
    series.request = &request_seconds_.Add({{"method", method}, {"kernel", kernel}}, Buckets());
    series.queue = &queue_seconds_.Add({{"kernel", kernel}}, Buckets());
    series.kernel = &kernel_seconds_.Add({{"kernel", kernel}}, Buckets());
    // The CPU copies nothing: only GPU kernels get copy series.
    if (call.kernel.has_value() &&
        kernels::GetKernel(*call.kernel).backend == kernels::BackendKind::kCuda) {
      series.h2d = &copy_seconds_.Add({{"direction", "h2d"}, {"kernel", kernel}}, Buckets());
      series.d2h = &copy_seconds_.Add({{"direction", "d2h"}, {"kernel", kernel}}, Buckets());
    }
  }
  return series;
}

void ServerMetrics::CallFinished(const CallRecord& call) {
  in_flight_by_method_[int(call.method)]->Decrement();
  const CallSeries& series = Series(call);
  series.requests->Increment();
  if (call.code != absl::StatusCode::kOk) return;
  series.bytes->Increment(double(call.bytes));
  series.request->Observe(Seconds(call.server));
  series.queue->Observe(Seconds(call.timing.queue));
  series.kernel->Observe(Seconds(call.timing.kernel));
  // Only calls that moved data to or from a GPU are timed as copies.
  if (series.h2d != nullptr && call.timing.h2d.count() > 0) {
    series.h2d->Observe(Seconds(call.timing.h2d));
  }
  if (series.d2h != nullptr && call.timing.d2h.count() > 0) {
    series.d2h->Observe(Seconds(call.timing.d2h));
  }
}

void ServerMetrics::Refused(Refusal reason) { refusals_by_reason_[int(reason)]->Increment(); }

void ServerMetrics::StreamIdleEnded() { idle_ended_.Increment(); }

}  // namespace gpureduce::server
