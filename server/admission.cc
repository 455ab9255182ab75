#include "server/admission.h"

#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace gpureduce::server {

Admission::Slot::Slot(Slot&& other) noexcept
    : owner_(std::exchange(other.owner_, nullptr)), client_(std::move(other.client_)) {}

Admission::Slot& Admission::Slot::operator=(Slot&& other) noexcept {
  if (this != &other) {
    Release();
    owner_ = std::exchange(other.owner_, nullptr);
    client_ = std::move(other.client_);
  }
  return *this;
}

Admission::Slot::~Slot() { Release(); }

void Admission::Slot::Release() {
  if (owner_ == nullptr) return;
  absl::MutexLock lock(&owner_->mu_);
  --owner_->in_use_;
  auto it = owner_->by_client_.find(client_);
  if (--it->second == 0) owner_->by_client_.erase(it);
  owner_ = nullptr;
}

Admission::Admission(uint32_t limit, uint32_t per_client_limit)
    : limit_(limit), per_client_limit_(per_client_limit == 0 ? limit : per_client_limit) {}

absl::StatusOr<Admission::Slot> Admission::TryAcquire(absl::string_view client, Bound* reached) {
  absl::MutexLock lock(&mu_);
  if (in_use_ >= limit_) {
    if (reached != nullptr) *reached = Bound::kServer;
    return absl::ResourceExhaustedError(
        absl::StrCat("the server is full: ", limit_,
                     " requests are in progress (--max-concurrent-requests); retry with backoff"));
  }
  uint32_t& mine = by_client_[client];
  if (mine >= per_client_limit_) {
    if (reached != nullptr) *reached = Bound::kClient;
    return absl::ResourceExhaustedError(absl::StrCat(
        "this client (", client, ") already has ", mine,
        " requests in progress, the most one client may have (--max-requests-per-client); "
        "retry with backoff once some finish"));
  }
  ++mine;
  ++in_use_;
  return Slot(this, std::string(client));
}

std::string Admission::ClientOf(absl::string_view peer) {
  if (!absl::StartsWith(peer, "ipv4:") && !absl::StartsWith(peer, "ipv6:")) {
    return std::string(peer);
  }
  const size_t colon = peer.rfind(':');
  // "ipv6:[::1]" has no port; an address alone ends with ']' or holds no ':' after the scheme.
  if (colon <= 4 || peer.back() == ']') return std::string(peer);
  return std::string(peer.substr(0, colon));
}

uint32_t Admission::in_use() const {
  absl::MutexLock lock(&mu_);
  return in_use_;
}

uint32_t Admission::in_use_by(absl::string_view client) const {
  absl::MutexLock lock(&mu_);
  auto it = by_client_.find(client);
  return it == by_client_.end() ? 0 : it->second;
}

}  // namespace gpureduce::server
