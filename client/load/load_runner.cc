#include "client/load/load_runner.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "client/channel_factory.h"
#include "client/reducer_client.h"
#include "gpureduce/v1/reduce.grpc.pb.h"
#include "grpcpp/support/client_callback.h"

namespace gpureduce::client {
namespace {

using Clock = std::chrono::steady_clock;

uint64_t Nanos(Clock::duration duration) {
  return uint64_t(
      std::max<int64_t>(0, std::chrono::duration_cast<std::chrono::nanoseconds>(duration).count()));
}

uint64_t MicrosToNanos(double us) { return us > 0 ? uint64_t(us * 1e3) : 0; }

class Runner {
 public:
  Runner(const LoadOptions& options, const Workload& workload)
      : options_(options), workload_(workload) {}

  absl::StatusOr<LoadResult> Run();

  // Called by a call when its answer arrives, on a gRPC thread.
  void Answered(uint64_t index, Clock::time_point intended, bool measured,
                const grpc::Status& status, const v1::ReduceResponse& response);
  // Called once the call's objects are destroyed: its ClientContext holds a reference to the
  // channel, and the runner may drop the channels once nothing is in flight. The last reference
  // must not drop on a gRPC thread: the channel's destructor would shut its completion queue
  // down from inside that queue's own callback (a double free in gRPC 1.51).
  void CallEnded();

  v1::Reducer::Stub& stub(uint64_t index) { return *stubs_[index % stubs_.size()]; }
  const Workload& workload() const { return workload_; }
  const std::string& token() const { return token_; }
  std::chrono::system_clock::time_point deadline() const {
    return std::chrono::system_clock::now() +
           std::chrono::duration_cast<std::chrono::system_clock::duration>(
               absl::ToChronoNanoseconds(options_.timeout));
  }

 private:
  // Starts request number `next_`, meant to go at `intended`; false once the load is over.
  bool Issue(Clock::time_point intended);
  void OpenLoop();
  void Progress();
  void Record(uint64_t index, Clock::duration latency, const grpc::Status& status,
              const v1::ReduceResponse& response);

  const LoadOptions& options_;
  const Workload& workload_;
  std::vector<std::unique_ptr<v1::Reducer::Stub>> stubs_;
  std::string token_;  // the bearer token every call carries ("" none)
  Clock::time_point start_, measure_from_, stop_at_;

  std::atomic<uint64_t> next_{0};      // requests issued
  std::atomic<uint64_t> measured_{0};  // of them, measured
  std::atomic<bool> stopping_{false};
  std::mutex mu_;
  std::condition_variable idle_;
  uint64_t in_flight_ = 0;                                                     // under mu_
  LoadResult result_;                                                          // under mu_
  Clock::time_point first_measured_ = Clock::time_point::max(), last_answer_;  // under mu_
};

// What every call keeps: which request it is, when it was meant to go, whether it is measured,
// and its context and response.
struct CallState {
  CallState(Runner& runner, uint64_t index, Clock::time_point intended, bool measured)
      : runner(runner), index(index), intended(intended), measured(measured) {
    context.set_deadline(runner.deadline());
    AddToken(runner.token(), &context);
  }
  void Answered(const grpc::Status& status) {
    runner.Answered(index, intended, measured, status, response);
  }

  Runner& runner;
  const uint64_t index;
  const Clock::time_point intended;
  const bool measured;
  grpc::ClientContext context;
  v1::ReduceResponse response;
};

class UnaryCall {
 public:
  UnaryCall(Runner& runner, uint64_t index, Clock::time_point intended, bool measured)
      : call_(runner, index, intended, measured) {}
  void Start() {
    call_.runner.stub(call_.index)
        .async()
        ->Reduce(&call_.context, &call_.runner.workload().unary(call_.index), &call_.response,
                 [this](grpc::Status status) {
                   Runner& runner = call_.runner;
                   call_.Answered(status);
                   delete this;
                   runner.CallEnded();
                 });
  }

 private:
  CallState call_;
};

// One stream: the spec, then the workload's chunks one write at a time (gRPC's flow control
// paces them), then the half-close.
class StreamCall final : public grpc::ClientWriteReactor<v1::ReduceChunk> {
 public:
  StreamCall(Runner& runner, uint64_t index, Clock::time_point intended, bool measured)
      : call_(runner, index, intended, measured) {}
  void Start() {
    call_.runner.stub(call_.index).async()->ReduceStream(&call_.context, &call_.response, this);
    StartWrite(&call_.runner.workload().stream_head());
    StartCall();
  }
  void OnWriteDone(bool ok) override {
    if (!ok) return;  // the call is over; OnDone says why
    const Workload& workload = call_.runner.workload();
    if (next_chunk_ < workload.stream_chunks()) {
      StartWrite(&workload.chunk(next_chunk_++));
    } else {
      StartWritesDone();
    }
  }
  void OnDone(const grpc::Status& status) override {
    Runner& runner = call_.runner;
    call_.Answered(status);
    delete this;
    runner.CallEnded();
  }

 private:
  CallState call_;
  size_t next_chunk_ = 0;
};

bool Runner::Issue(Clock::time_point intended) {
  if (stopping_.load(std::memory_order_acquire)) return false;
  const bool measured = intended >= measure_from_;
  if (measured) {
    const bool over_time = options_.duration > absl::ZeroDuration() && intended >= stop_at_;
    const bool enough = options_.requests > 0 &&
                        measured_.fetch_add(1, std::memory_order_relaxed) >= options_.requests;
    if (over_time || enough) {
      stopping_.store(true, std::memory_order_release);
      return false;
    }
  }
  const uint64_t index = next_.fetch_add(1, std::memory_order_relaxed);
  {
    std::lock_guard<std::mutex> lock(mu_);
    ++in_flight_;
    if (measured) first_measured_ = std::min(first_measured_, intended);
  }
  if (workload_.streaming()) {
    (new StreamCall(*this, index, intended, measured))->Start();
  } else {
    (new UnaryCall(*this, index, intended, measured))->Start();
  }
  return true;
}

void Runner::Answered(uint64_t index, Clock::time_point intended, bool measured,
                      const grpc::Status& status, const v1::ReduceResponse& response) {
  if (!measured) return;
  const Clock::time_point now = Clock::now();
  std::lock_guard<std::mutex> lock(mu_);
  Record(index, now - intended, status, response);
  last_answer_ = std::max(last_answer_, now);
}

void Runner::CallEnded() {
  // Closed loop: the answer starts the next request, on this thread.
  if (options_.rate <= 0) Issue(Clock::now());
  std::lock_guard<std::mutex> lock(mu_);
  if (--in_flight_ == 0) idle_.notify_all();
}

void Runner::Record(uint64_t index, Clock::duration latency, const grpc::Status& status,
                    const v1::ReduceResponse& response) {
  LoadResult& r = result_;
  r.latency.Record(Nanos(latency));
  if (!status.ok()) {
    r.error_latency.Record(Nanos(latency));
    ++r.failed;
    ++r.codes[absl::StatusCodeToString(static_cast<absl::StatusCode>(status.error_code()))];
    if (r.first_error.empty()) r.first_error = status.error_message();
    return;
  }
  if (response.backend() == "sink") {
    ++r.unchecked;
  } else {
    const Expected& expected =
        workload_.streaming() ? workload_.stream_expected() : workload_.unary_expected(index);
    if (std::string why = workload_.Check(response, expected); !why.empty()) {
      ++r.wrong;
      ++r.codes["WRONG_ANSWER"];
      if (r.first_wrong.empty()) r.first_wrong = why;
      return;
    }
  }
  ++r.ok;
  ++r.codes["OK"];
  r.ok_latency.Record(Nanos(latency));
  r.bytes += workload_.request_bytes();
  if (r.backend.empty()) {
    r.backend = response.backend();
    r.kernel = response.kernel();
    r.device = response.device();
  }
  if (!response.device_indices().empty())
    ++r.devices[absl::StrJoin(response.device_indices(), "+")];
  const v1::Timing& t = response.timing();
  r.breakdown.server.Record(MicrosToNanos(t.server_us()));
  r.breakdown.queue.Record(MicrosToNanos(t.queue_us()));
  r.breakdown.h2d.Record(MicrosToNanos(t.h2d_us()));
  r.breakdown.kernel.Record(MicrosToNanos(t.kernel_us()));
  r.breakdown.d2h.Record(MicrosToNanos(t.d2h_us()));
}

void Runner::OpenLoop() {
  const auto period = std::chrono::duration_cast<Clock::duration>(
      std::chrono::duration<double>(1.0 / options_.rate));
  uint64_t due = 0;
  while (!stopping_.load(std::memory_order_acquire)) {
    const Clock::time_point intended = start_ + due * period;
    std::this_thread::sleep_until(intended);  // late wake-ups still count from `intended`
    bool full;
    {
      std::lock_guard<std::mutex> lock(mu_);
      full = in_flight_ >= options_.max_outstanding;
      if (full && intended >= measure_from_) ++result_.not_sent;
    }
    if (!full && !Issue(intended)) break;
    ++due;
  }
}

void Runner::Progress() {
  while (!stopping_.load(std::memory_order_acquire)) {
    std::unique_lock<std::mutex> lock(mu_);
    idle_.wait_for(lock, std::chrono::seconds(1));
    if (stopping_.load(std::memory_order_acquire)) return;
    const double seconds =
        first_measured_ == Clock::time_point::max()
            ? 0
            : std::chrono::duration<double>(Clock::now() - first_measured_).count();
    const uint64_t done = result_.latency.count();
    options_.progress(absl::StrFormat(
        "%6.1f s  %9d answers  %9.0f rps  p50 %8.3f ms  p99 %8.3f ms  errors %d", seconds, done,
        seconds > 0 ? done / seconds : 0.0, result_.latency.ValueAtPercentile(50) / 1e6,
        result_.latency.ValueAtPercentile(99) / 1e6, result_.failed + result_.wrong));
  }
}

absl::StatusOr<LoadResult> Runner::Run() {
  if (options_.connections == 0) return absl::InvalidArgumentError("--connections must be >= 1");
  if (options_.rate <= 0 && options_.concurrency == 0) {
    return absl::InvalidArgumentError("--concurrency must be >= 1");
  }
  if (options_.duration <= absl::ZeroDuration() && options_.requests == 0) {
    return absl::InvalidArgumentError("give a --duration or a number of --requests");
  }
  absl::StatusOr<std::string> token = ReadToken(options_.security);
  if (!token.ok()) return token.status();
  token_ = *token;
  // One channel per connection, each of its own TCP connection; calls go round robin over every
  // server the target names.
  for (uint32_t i = 0; i < options_.connections; ++i) {
    absl::StatusOr<std::shared_ptr<grpc::Channel>> channel =
        OpenChannel(options_.target, options_.security,
                    {.own_connection = true, .connection_number = static_cast<int>(i)});
    if (!channel.ok()) return channel.status();
    stubs_.push_back(v1::Reducer::NewStub(*channel));
  }
  start_ = Clock::now();
  measure_from_ = start_ + absl::ToChronoNanoseconds(options_.warmup);
  stop_at_ = measure_from_ + absl::ToChronoNanoseconds(options_.duration);

  std::thread progress;
  if (options_.progress) progress = std::thread([this] { Progress(); });
  if (options_.rate > 0) {
    OpenLoop();
  } else {
    for (uint32_t i = 0; i < options_.concurrency && Issue(Clock::now()); ++i) {
    }
  }
  std::unique_lock<std::mutex> lock(mu_);
  idle_.wait(lock, [this] { return in_flight_ == 0 && stopping_.load(); });
  lock.unlock();
  idle_.notify_all();  // wakes the progress thread to end
  if (progress.joinable()) progress.join();
  lock.lock();
  if (first_measured_ != Clock::time_point::max() && last_answer_ > first_measured_) {
    result_.seconds = std::chrono::duration<double>(last_answer_ - first_measured_).count();
  }
  return result_;
}

}  // namespace

absl::StatusOr<LoadResult> RunLoad(const LoadOptions& options, const Workload& workload) {
  Runner runner(options, workload);
  return runner.Run();
}

}  // namespace gpureduce::client
