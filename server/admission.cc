#include "server/admission.h"

namespace gpureduce::server {

Admission::Slot& Admission::Slot::operator=(Slot&& other) noexcept {
  if (this != &other) {
    if (owner_ != nullptr) owner_->in_use_.fetch_sub(1, std::memory_order_acq_rel);
    owner_ = other.owner_;
    other.owner_ = nullptr;
  }
  return *this;
}

Admission::Slot::~Slot() {
  if (owner_ != nullptr) owner_->in_use_.fetch_sub(1, std::memory_order_acq_rel);
}

std::optional<Admission::Slot> Admission::TryAcquire() {
  uint32_t current = in_use_.load(std::memory_order_relaxed);
  while (current < limit_) {
    if (in_use_.compare_exchange_weak(current, current + 1, std::memory_order_acq_rel)) {
      return Slot(this);
    }
  }
  return std::nullopt;
}

}  // namespace gpureduce::server
