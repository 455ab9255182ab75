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

const char* MethodName(Method method) {
  return method == Method::kReduce ? "Reduce" : "ReduceStream";
}

std::string OpLabel(const std::optional<kernels::Op>& op) {
  return op.has_value() ? std::string(kernels::OpName(*op)) : "none";
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
                           &in_flight_.Add({{"method", "ReduceStream"}})} {
  for (const char* reason : {"not_ready", "server_full", "client_full"}) {
    refusals_.Add({{"reason", reason}});
  }
}

void ServerMetrics::CallStarted(Method method) { in_flight_by_method_[int(method)]->Increment(); }

template <typename MetricT, typename... ArgsT>
MetricT& ServerMetrics::Child(prometheus::Family<MetricT>& family, const ChildKey& key,
                              const prometheus::Labels& labels, ArgsT&&... args) {
  absl::MutexLock lock(&mu_);
  void*& child = children_[key];
  if (child == nullptr) child = &family.Add(labels, std::forward<ArgsT>(args)...);
  return *static_cast<MetricT*>(child);
}

void ServerMetrics::CallFinished(const CallRecord& call) {
  in_flight_by_method_[int(call.method)]->Decrement();
  const int method = int(call.method);
  const int op = call.op.has_value() ? int(*call.op) : -1;
  const int kernel_id = call.kernel.has_value() ? int(*call.kernel) : -1;
  const std::string method_name = MethodName(call.method);
  const std::string kernel = KernelLabel(call.kernel);
  Child(requests_, {0, method, op, kernel_id, int(call.code)},
        {{"method", method_name},
         {"op", OpLabel(call.op)},
         {"kernel", kernel},
         {"code", absl::StatusCodeToString(call.code)}})
      .Increment();
  if (call.code != absl::StatusCode::kOk) return;
  Child(bytes_, {1, method, -1, kernel_id, 0}, {{"method", method_name}, {"kernel", kernel}})
      .Increment(double(call.bytes));
  Child(request_seconds_, {2, method, -1, kernel_id, 0},
        {{"method", method_name}, {"kernel", kernel}}, Buckets())
      .Observe(Seconds(call.server));
  Child(queue_seconds_, {3, 0, -1, kernel_id, 0}, {{"kernel", kernel}}, Buckets())
      .Observe(Seconds(call.timing.queue));
  Child(kernel_seconds_, {4, 0, -1, kernel_id, 0}, {{"kernel", kernel}}, Buckets())
      .Observe(Seconds(call.timing.kernel));
  // The CPU copies nothing: only calls that moved data to or from a GPU are timed as copies.
  if (call.timing.h2d.count() > 0) {
    Child(copy_seconds_, {5, 0, -1, kernel_id, 0}, {{"direction", "h2d"}, {"kernel", kernel}},
          Buckets())
        .Observe(Seconds(call.timing.h2d));
  }
  if (call.timing.d2h.count() > 0) {
    Child(copy_seconds_, {6, 0, -1, kernel_id, 0}, {{"direction", "d2h"}, {"kernel", kernel}},
          Buckets())
        .Observe(Seconds(call.timing.d2h));
  }
}

void ServerMetrics::Refused(Refusal reason) {
  static constexpr const char* kReasons[] = {"not_ready", "server_full", "client_full"};
  // Registered at construction: Add of existing labels returns the same child.
  refusals_.Add({{"reason", kReasons[int(reason)]}}).Increment();
}

void ServerMetrics::StreamIdleEnded() { idle_ended_.Increment(); }

}  // namespace gpureduce::server
