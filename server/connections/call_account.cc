#include "server/connections/call_account.h"

#include <utility>

#include "absl/strings/str_cat.h"

namespace gpureduce::server {
namespace {

// What a call's client may send beyond its headers that nothing else accounts for: the HTTP/2
// frames around them (a RST_STREAM, WINDOW_UPDATEs for the answer) and the small messages of
// the methods other than the Reducer's (health checks, ListKernels, reflection), generously.
constexpr uint64_t kCallBytes = 1024;

}  // namespace

// gRPC's default initial window: what a call that ended without receiving a message may have
// been sent, which gRPC received and dropped.
const uint64_t kUnreadCallBytes = 65535;

uint64_t MetadataBytes(const std::multimap<grpc::string_ref, grpc::string_ref>& metadata) {
  uint64_t bytes = 0;
  for (const auto& [key, value] : metadata) bytes += key.size() + value.size() + 32;
  return bytes;
}

CallAccount::CallAccount(ConnectionGate& gate, std::shared_ptr<Connection> connection,
                         uint64_t metadata_bytes)
    : gate_(gate), connection_(std::move(connection)) {
  connection_->live_calls.fetch_add(1, std::memory_order_relaxed);
  connection_->unread_calls.fetch_add(1, std::memory_order_relaxed);
  Credit(kCallBytes + metadata_bytes);
}

CallAccount::~CallAccount() {
  if (!received_.load(std::memory_order_relaxed)) {
    Credit(kUnreadCallBytes);
    connection_->unread_calls.fetch_sub(1, std::memory_order_release);
  }
  connection_->live_calls.fetch_sub(1, std::memory_order_relaxed);
}

void CallAccount::MessageReceived() {
  if (received_.exchange(true, std::memory_order_relaxed)) return;
  connection_->unread_calls.fetch_sub(1, std::memory_order_release);
}

void CallAccount::Cancelled() {
  if (cancelled_.exchange(true, std::memory_order_relaxed)) return;
  const ConnectionLimits& limits = gate_.limits();
  if (limits.cancelled_calls_per_second <= 0 || connection_->evicted()) return;
  if (connection_->TakeCancelToken(limits.cancelled_calls_per_second,
                                   limits.CancelledCallsBurst())) {
    return;
  }
  gate_.Evict(*connection_, Eviction::kCancelledCalls,
              absl::StrCat("rapid reset: this connection's calls were cancelled faster than ",
                           limits.cancelled_calls_per_second,
                           " a second (--max-cancelled-calls-per-second) for longer than its "
                           "burst of ",
                           limits.CancelledCallsBurst()));
}

void CallAccount::Credit(uint64_t bytes) {
  connection_->credited_bytes.fetch_add(bytes, std::memory_order_relaxed);
}

}  // namespace gpureduce::server
